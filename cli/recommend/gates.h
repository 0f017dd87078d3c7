/* The command-line side of the CI gates (docs/ci.md); the gates and the
 * baseline are the advisor's (cloudfit/advisor/gates.h). Here: the option
 * text, the baseline read from a file or a history row, and the gates
 * rendered as text and JSON. A failed gate turns the exit code into
 * CF_EXIT_GATE (5) after the full result is printed (recommend_ci.c). */
#ifndef CLOUDFIT_CLI_GATES_H
#define CLOUDFIT_CLI_GATES_H
#include <cjson/cJSON.h>

#include "cloudfit/advisor/gates.h"
#include "cloudfit/common/buf.h"
#include "cloudfit/db/history.h"

/* Parses "--max-cost-increase" into `limits`. 0 on success; else prints a
 * usage error and returns the exit code. */
int cf_gate_parse_increase(const char *text, cf_gate_limits *limits);
/* The "Gates" lines appended to the table output (nothing when n == 0). */
void cf_gates_text(const cf_history_gate *gates, size_t n, cf_buf *out);
/* JSON array of gates ({name, limit, value, passed, note}). */
cJSON *cf_gates_json(const cf_history_gate *gates, size_t n);

/* Loads a baseline from a recommendation document (--compare-to FILE). */
cf_status cf_baseline_from_file(const char *path, cf_baseline *out);
/* A baseline from a history row. */
void cf_baseline_from_row(const cf_history_row *row, cf_baseline *out);

#endif
