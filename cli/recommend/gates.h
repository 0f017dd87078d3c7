/* CI gates (docs/ci.md): limits on the chosen configuration's cost and
 * time, and on its cost increase over a baseline — the newest earlier
 * recommendation for the same spec on the base branch, or a JSON document
 * from an earlier run (--compare-to). The full result is printed first;
 * a failed gate then turns the exit code into CF_EXIT_GATE (5). */
#ifndef CLOUDFIT_CLI_GATES_H
#define CLOUDFIT_CLI_GATES_H
#include <cjson/cJSON.h>

#include "cloudfit/common/buf.h"
#include "cloudfit/db/history.h"

#define CF_MAX_GATES 4

/* An earlier recommendation to compare with (also the markdown diff). */
typedef struct {
    int have;
    long long id;                /* history id, 0 when from a file */
    char source[400];            /* "recommendation 12 (main, 2026-…)" or the file name */
    char created_at[32];
    char catalog[96];            /* "embedded 2026-07-30" */
    cf_history_config chosen;
} cf_baseline;

typedef struct {
    double max_cost_usd;         /* <= 0: off */
    double max_hours;            /* <= 0: off */
    double max_increase;         /* < 0: off */
    int increase_is_pct;
} cf_gate_limits;

/* Parses "--max-cost-increase": "10%" is a percentage, "25" or "$25" US
 * dollars. 0 on success; else prints a usage error and returns the exit code. */
int cf_gate_parse_increase(const char *text, cf_gate_limits *limits);
/* Whether any gate is asked for. */
int cf_gates_any(const cf_gate_limits *limits);
/* Evaluates each gate asked for; returns how many were written to out
 * (at most CF_MAX_GATES). */
size_t cf_gates_evaluate(const cf_gate_limits *limits, double total_usd, double hours, const cf_baseline *base,
                         cf_history_gate *out);
/* Whether every gate in gates[0..n) passed. */
int cf_gates_passed(const cf_history_gate *gates, size_t n);
/* The "Gates" lines appended to the table output (nothing when n == 0). */
void cf_gates_text(const cf_history_gate *gates, size_t n, cf_buf *out);
/* JSON array of gates ({name, limit, value, passed, note}). */
cJSON *cf_gates_json(const cf_history_gate *gates, size_t n);

/* Loads a baseline from a recommendation document (--compare-to FILE). */
cf_status cf_baseline_from_file(const char *path, cf_baseline *out);
/* The same from text (`path` names it in messages); the fuzz target's door. */
cf_status cf_baseline_from_text(const char *text, size_t len, const char *path, cf_baseline *out);
/* A baseline from a history row. */
void cf_baseline_from_row(const cf_history_row *row, cf_baseline *out);

#endif
