/* The spec on the command line. Overrides of its search section (--objective,
 * --spot, --deadline-hours, --budget-usd, --max-nodes, --max-gpus, --cloud,
 * --region, --gpu). Returns 0 or a usage exit code (message printed). */
#ifndef CLOUDFIT_CLI_SPEC_OVERRIDES_H
#define CLOUDFIT_CLI_SPEC_OVERRIDES_H
#include "cloudfit/spec.h"
#include "options.h"

int cf_cli_apply_search_overrides(const cf_cli_options *o, cf_spec *spec);
/* Reads and validates the spec file into a new heap struct (*out; free with
 * cf_spec_free + free). Returns 0 or the exit code after printing the error. */
int cf_cli_load_spec(const char *path, cf_spec **out);
/* "3%" → 0.03, "0.03" → 0.03; −1 when malformed or outside [0, 1). */
double cf_cli_parse_fraction(const char *text);

#endif
