/* The spec on the command line: the file read and validated, then the
 * effective spec built from the search overrides (--objective, --spot,
 * --deadline-hours, --budget-usd, --max-nodes, --max-gpus, --cloud,
 * --region, --gpu) by the spec module (cf_spec_load_effective), so that what is
 * hashed and stored is what the command computed. */
#ifndef CLOUDFIT_CLI_SPEC_LOAD_H
#define CLOUDFIT_CLI_SPEC_LOAD_H
#include "cloudfit/spec.h"
#include "options.h"

/* Reads `path` into a new heap spec (*out; free with cf_spec_close). With
 * `with_overrides`, the search overrides of `o` are applied. Returns 0, or
 * prints the error and returns the exit code (a bad option value is a
 * usage error naming the option; so is an output option naming a file the
 * spec names: cf_cli_check_more_outputs, before the command runs). */
int cf_cli_spec_open(const cf_cli_options *o, const char *path, int with_overrides, cf_spec **out);
void cf_cli_spec_close(cf_spec *spec);
/* "3%" → 0.03, "0.03" → 0.03 (cf_number_fraction: decimal only); −1 when
 * malformed or outside [0, 1). */
double cf_cli_parse_fraction(const char *text);

#endif
