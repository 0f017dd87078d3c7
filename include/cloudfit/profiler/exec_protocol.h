/* The exec probe protocol's reader (profiler/probe_exec.c,
 * docs/exec-protocol.md), reachable without running a process: the
 * fuzz target and the tests feed it a script's whole stdout. */
#ifndef CLOUDFIT_PROFILER_EXEC_PROTOCOL_H
#define CLOUDFIT_PROFILER_EXEC_PROTOCOL_H
#include <stddef.h>

#include "cloudfit/profiler.h"

/* Output beyond this is an error (a script flooding its stdout). */
#define CF_EXEC_MAX_STDOUT_BYTES (64 << 20)

/* Parses `len` bytes of stdout for `run` as exec_run does once the script
 * has exited 0: every line checked, then completeness (a 'done' event, the
 * number of steps). Errors name the line ("'stdout': stdout line 3: ..."). */
cf_status cf_probe_exec_parse_output(const char *text, size_t len, const cf_probe_run *run, cf_probe_result *out);

#endif
