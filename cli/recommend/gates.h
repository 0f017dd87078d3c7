/* The command-line side of the CI gates (docs/ci.md); the gates and the
 * baseline are the advisor's (cloudfit/advisor/gates.h), their text and
 * JSON the renderers' (render/render_gates.c). Here: the option text and the
 * baseline read from a file or a history row. A failed gate turns the exit
 * code into CF_EXIT_GATE (5) after the full result is printed
 * (recommend_ci.c). */
#ifndef CLOUDFIT_CLI_GATES_H
#define CLOUDFIT_CLI_GATES_H
#include "cloudfit/advisor/gates.h"
#include "cloudfit/db/history.h"

/* Parses "--max-cost-increase" into `limits`. 0 on success; else prints a
 * usage error and returns the exit code. */
int cf_gate_parse_increase(const char *text, cf_gate_limits *limits);

/* Loads a baseline from a recommendation document (--compare-to FILE). */
cf_status cf_baseline_from_file(const char *path, cf_baseline *out);
/* A baseline from a history row. */
void cf_baseline_from_row(const cf_history_row *row, cf_baseline *out);

#endif
