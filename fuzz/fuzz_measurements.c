/* The measurement CSV reader (profiler/measurements.c over common/csvread.c). */
#include "fuzz.h"
#include "cloudfit/profiler/measurements.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cf_measurement_set set;
    cf_status st = cf_measurements_parse((const char *)data, size, "fuzz.csv", &set);
    fuzz_check_error(st);
    if (st == CF_OK)
        cf_measurements_free(&set);
    return 0;
}
