/* `cloudfit simulate SPEC --calibrate DIR [--fit DIR2]`: the preemption
 * model scored on a folder of traces (advisor/spot_calibrate.c, rendered
 * by render/calibrate_report.c; docs/spot.md "Calibration"). */
#ifndef CLOUDFIT_CLI_SIMULATE_CALIBRATE_H
#define CLOUDFIT_CLI_SIMULATE_CALIBRATE_H
#include "cloudfit/pricing.h"
#include "cloudfit/spec.h"
#include "options.h"

/* Returns the exit code (errors printed). */
int cf_cli_simulate_calibrate(const cf_cli_options *o, const cf_spec *spec, const cf_catalog *catalog);

#endif
