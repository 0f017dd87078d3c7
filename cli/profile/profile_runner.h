/* `cloudfit profile --runner` (cli/profile_runner.c, docs/profiler.md): the
 * light profile of one GPU type plus the 2-node × 1-GPU probe through the
 * runners of `cloudfit search`. */
#ifndef CLOUDFIT_CLI_PROFILE_RUNNER_H
#define CLOUDFIT_CLI_PROFILE_RUNNER_H
#include "cloudfit/profiler.h"
#include "cloudfit/spec.h"
#include "options.h"

/* Runs the profile into *out (backend "trace" or "runner", device = the
 * catalog GPU model, runs[] and points[] filled). Returns 0, or prints the
 * error and returns the exit code (nothing is stored then). */
int cf_profile_with_runner(const cf_cli_options *o, const cf_spec *spec, cf_profile *out);

#endif
