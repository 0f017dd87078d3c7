/* The CI side of `recommend` (issue 5), kept out of cmd_recommend.c:
 * CI detection, the history database for the run (recorded measurements,
 * the baseline, the new row with alternatives/CI/gates), gates, launch
 * specs and the gate exit code. */
#ifndef CLOUDFIT_CLI_RECOMMEND_CI_H
#define CLOUDFIT_CLI_RECOMMEND_CI_H
#include "cloudfit/common/fileio.h"
#include "recommend/gates.h"
#include "options.h"
#include "cloudfit/render.h"

typedef struct {
    cf_ci_info ci;
    cf_db *db;                   /* NULL with --no-history and no database yet */
    char db_path[1024];          /* as shown: a URL's password redacted */
    char identity[512];          /* the spec's identity: NAME@PATH or --baseline-key */
    cf_gate_limits limits;
    cf_baseline baseline;
    cf_history_gate gates[CF_MAX_GATES];
    size_t n_gates;
    long long recorded_id;       /* the row written by cf_recommend_ci_record, 0 before */
} cf_recommend_ci;

/* Checks the CI options (format markdown, --emit kinds, gate values).
 * 0 or a usage exit code (message printed). */
int cf_recommend_ci_check_options(const cf_cli_options *o, cf_recommend_ci *ctx);
/* Detects CI and opens the database (created unless --no-history; with
 * --no-history an existing one is only read). 0 or an exit code (message
 * printed). */
int cf_recommend_ci_open(const cf_cli_options *o, const cf_spec *spec, cf_recommend_ci *ctx);
/* Finds the baseline, evaluates the gates and points the report at the CI
 * fields. 0 or an exit code. */
int cf_recommend_ci_gates(const cf_cli_options *o, cf_recommend_ci *ctx, cf_report *report);
/* Stages the --emit launch specs in `side` (renamed into place after the
 * history commit; --emit-dir is created now and removed again if empty
 * when the run fails) and appends a "wrote ..." line per file to `wrote`,
 * to be said once they are in place. 0 or an exit code. */
int cf_recommend_ci_emit(const cf_cli_options *o, const cf_report *report, cf_staged_set *side, cf_buf *wrote);
/* Writes the recommendation (with alternatives, CI metadata and gates):
 * committed with the database's hold (cf_db_hold), after the result was
 * delivered. */
int cf_recommend_ci_record(cf_recommend_ci *ctx, const cf_report *report, const char *json_text);
/* Says where the recommendation was recorded (after the commit). */
void cf_recommend_ci_recorded(const cf_recommend_ci *ctx);
/* CF_EXIT_GATE (after a message per failed gate) when a gate failed, else 0. */
int cf_recommend_ci_gate_exit(const cf_recommend_ci *ctx);
void cf_recommend_ci_close(cf_recommend_ci *ctx);

#endif
