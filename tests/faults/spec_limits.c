/* Prints the validator's own table of numeric ranges (cf_spec_limits) as
 * JSON, for tests/faults/test_extremes.py: the test takes its extreme
 * values from here, so a range changed in spec/spec_limits.c is what the
 * test runs. */
#include <math.h>
#include <stdio.h>

#include "cloudfit/spec.h"

int main(void)
{
    cf_spec_limit limits[128];
    size_t n = cf_spec_limits(limits, sizeof limits / sizeof *limits);
    if (n > sizeof limits / sizeof *limits)
        return 1;
    printf("[\n");
    for (size_t i = 0; i < n; i++)
        printf("  {\"key\": \"%s\", \"lo\": %.17g, \"hi\": %.17g, \"lo_exclusive\": %s, \"integer\": %s}%s\n",
               limits[i].key, limits[i].lo, limits[i].hi, limits[i].lo_exclusive ? "true" : "false",
               limits[i].integer ? "true" : "false", i + 1 < n ? "," : "");
    printf("]\n");
    return 0;
}
