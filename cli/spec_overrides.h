/* Command-line overrides of the spec's search section (--objective,
 * --spot, --deadline-hours, --budget-usd, --max-nodes, --max-gpus, --cloud,
 * --region, --gpu). Returns 0 or a usage exit code (message printed). */
#ifndef CLOUDFIT_CLI_SPEC_OVERRIDES_H
#define CLOUDFIT_CLI_SPEC_OVERRIDES_H
#include "cloudfit/spec.h"
#include "options.h"

int cf_cli_apply_search_overrides(const cf_cli_options *o, cf_spec *spec);

#endif
