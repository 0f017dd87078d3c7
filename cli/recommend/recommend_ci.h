/* The CI options of `recommend` (issue 5, docs/ci.md): the gate limits
 * and launch specs asked for, the CI run detected, the history database
 * the run reads and records in (opened once: evidence, baseline and the
 * new row go through it), the launch specs written and the gate exit
 * code. The baseline and the gates are the library's (cf_recommend). */
#ifndef CLOUDFIT_CLI_RECOMMEND_CI_H
#define CLOUDFIT_CLI_RECOMMEND_CI_H
#include "cloudfit/common/fileio.h"
#include "cloudfit/usecase/recommend.h"
#include "options.h"

typedef struct {
    cf_ci_info ci;
    cf_db *db;                   /* NULL with --no-history and no database yet */
    char db_path[1024];          /* as shown: a URL's password redacted */
    char db_shareable[1024];     /* as a printed command names it: a URL's password dropped (cf_db_shareable) */
    cf_gate_limits limits;
    long long recorded_id;       /* the row written, 0 before */
} cf_recommend_ci;

/* Checks the CI options (--emit kinds, gate values, --baseline-key).
 * 0 or a usage exit code (message printed). */
int cf_recommend_ci_check_options(const cf_cli_options *o, cf_recommend_ci *ctx);
/* 0, or exit 2 (message printed) when a launch spec --emit asks for
 * (DIR/SPEC_NAME.sky.yaml, ...) is one of the command's inputs (the
 * history database, the spec or a file it names, --compare-to,
 * --price-overrides) or another output's file: checked before the
 * database is opened or anything is computed, as cf_cli_check_outputs
 * checks --out-file (the launch spec was renamed over the history
 * database after the commit, destroying it). */
int cf_recommend_ci_check_emit_paths(const cf_cli_options *o, const cf_spec *spec, char **positional,
                                     int n_positional);
/* Detects CI and opens the database (created unless --no-history; with
 * --no-history an existing one is only read). 0 or an exit code (message
 * printed). */
int cf_recommend_ci_open(const cf_cli_options *o, cf_recommend_ci *ctx);
/* Stages the --emit launch specs in `side` (renamed into place after the
 * history commit; --emit-dir is created now and removed again if empty
 * when the run fails) and appends a "wrote ..." line per file to `wrote`,
 * to be said once they are in place. 0 or an exit code. */
int cf_recommend_ci_emit(const cf_cli_options *o, const cf_report *report, cf_staged_set *side, cf_buf *wrote);
/* Says where the recommendation was recorded (after the commit). */
void cf_recommend_ci_recorded(const cf_recommend_ci *ctx);
/* CF_EXIT_GATE (after a message per failed gate) when a gate of `report`
 * failed, else 0. */
int cf_recommend_ci_gate_exit(const cf_report *report);
void cf_recommend_ci_close(cf_recommend_ci *ctx);

#endif
