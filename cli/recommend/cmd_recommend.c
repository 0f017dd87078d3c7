#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exit_codes.h"
#include "cloudfit/common/fileio.h"
#include "cloudfit/common/proc.h"
#include "cloudfit/db/history.h"
#include "log.h"
#include "cloudfit/version.h"
#include "cloudfit/common/clock.h"
#include "commands.h"
#include "io/catalog_source.h"
#include "io/db_open.h"
#include "io/evidence.h"
#include "io/spec_load.h"
#include "recommend/recommend_ci.h"
#include "recommend/recommend_visual.h"
#include "term/output.h"
#include "cloudfit/render.h"
#include "cloudfit/usecase/recommend.h"

/* Renders the result in its format and stages it (term/output.h);
 * *out_json gets the compact document when the history will store it
 * (NULL otherwise: building it is a tenth of a recommend). --out-file is
 * written to a temporary file now and renamed into place only after the
 * history commit, so a failed commit or a kill in between never leaves a
 * result without its history row; standard output gets the text inside
 * the history's transaction, before its commit, so a result that could
 * not be written is never recorded. */
static int emit(const cf_cli_options *o, const cf_report *r, char **out_json, cf_cli_result *pending)
{
    int as_json = o->format && strcmp(o->format, "json") == 0, store = !o->no_history;
    cJSON *doc = as_json || store ? cf_report_json(r) : NULL;
    *out_json = store && doc ? cJSON_PrintUnformatted(doc) : NULL;
    char *pretty = as_json && doc ? cJSON_Print(doc) : NULL;
    cJSON_Delete(doc);
    if ((store && !*out_json) || (as_json && !pretty)) {
        free(pretty);
        cf_error_set(CF_ERR_NOMEM, "out of memory rendering the result");
        return cf_report_error();
    }
    cf_buf text = CF_BUF_INIT;
    if (as_json) {
        cf_buf_puts(&text, pretty);
        cf_buf_puts(&text, "\n");
    } else if (o->format && strcmp(o->format, "markdown") == 0) {
        cf_report_markdown(r, &text);
    } else {
        int color = !o->out_file && cf_log_color_enabled(stdout), width = cf_cli_output_width(o);
        cf_report_table_fit(r, &text, color, width);
        int rc = cf_recommend_chart(o, r, &text, color); /* on a terminal only */
        if (rc) {
            free(pretty);
            cf_buf_free(&text);
            return rc;
        }
        cf_gates_text(r->gates, r->n_gates, &text);
        cf_cli_fit_text(width, &text);
    }
    free(pretty);
    if (cf_buf_failed(&text)) {
        cf_buf_free(&text);
        cf_error_set(CF_ERR_NOMEM, "out of memory rendering the result");
        return cf_report_error();
    }
    /* every result passes the one sanitiser; the table's own colours stay */
    int color = !o->out_file && cf_log_color_enabled(stdout);
    int rc = cf_cli_result_stage(o, text.data ? text.data : "", text.len, color ? cf_report_color_codes : NULL, pending);
    cf_buf_free(&text);
    return rc;
}

/* The library's request of the options; the database the command opened
 * (ci->db) serves the evidence and the baseline. */
static int compute(const cf_cli_options *o, const cf_spec *spec, cf_catalog_source *src, const cf_recommend_ci *ci,
                   cf_recommend_result *res)
{
    cf_recommend_request req = {.spec = spec, .catalog_source = src, .db = ci->db, .db_name = ci->db_path,
                                .history = o->db_path && ci->db_path[0] ? ci->db_shareable : NULL,
                                .top = o->top > 0 ? (size_t)o->top : 0, .mix = o->mix,
                                .include_restricted_regions = o->include_restricted_regions,
                                .prefer_regions = (const char *const *)o->prefer_regions.items,
                                .n_prefer_regions = (size_t)o->prefer_regions.n,
                                .baseline_key = o->baseline_key, .ci = &ci->ci, .base_branch = o->base_branch,
                                .compare_to = o->compare_to, .gate_limits = &ci->limits,
                                .note = cf_cli_note, .note_ctx = src};
    return cf_recommend(&req, res) == CF_OK ? 0 : cf_report_error();
}

static int run(const cf_cli_options *o, const cf_spec *spec, cf_catalog_source *src, cf_recommend_ci *ci)
{
    int rc = cf_cli_check_search_options(o, &src->catalog);
    if (rc)
        return rc;
    cf_recommend_result result;
    memset(&result, 0, sizeof result);
    rc = compute(o, spec, src, ci, &result);
    if (rc == 0) {
        cf_report report = result.report;
        char *json_text = NULL;
        cf_cli_result pending;
        memset(&pending, 0, sizeof pending);
        cf_staged_set side; /* --report, --plot, --emit: in place only after the commit */
        memset(&side, 0, sizeof side);
        cf_buf wrote = CF_BUF_INIT; /* what to say once they are */
        /* The full result (baseline and gates are part of every format), pictures and launch specs (all staged), the
         * history row written, the result delivered to standard output,
         * the history commit (only when the result was delivered), and
         * only then --out-file and the side files published (a failure
         * before leaves none of them); a failed gate decides the exit
         * code last (issue 5). A stop signal before the commit keeps
         * nothing. */
        if (rc == 0)
            rc = emit(o, &report, &json_text, &pending);
        if (rc == 0)
            rc = cf_recommend_visual_files(o, &report, &side); /* --report, --plot */
        if (rc == 0)
            rc = cf_recommend_ci_emit(o, &report, &side, &wrote);
        if (rc == 0 && cf_interrupt_check() != CF_OK)
            rc = cf_report_error();
        cf_db *store = !o->no_history ? ci->db : NULL;
        if (rc == 0 && store && cf_db_hold(store) != CF_OK)
            rc = cf_report_error();
        if (rc == 0 && store)
            rc = cf_recommend_record(store, &report, json_text, &ci->recorded_id) == CF_OK ? 0 : cf_report_error();
        if (rc == 0)
            rc = cf_cli_result_deliver(&pending);
        if (store)
            rc = cf_cli_result_release(store, rc);
        if (rc == 0)
            cf_recommend_ci_recorded(ci);
        if (rc == 0)
            rc = cf_cli_result_publish(&pending);
        if (rc == 0 && cf_staged_set_commit(&side) != CF_OK)
            rc = cf_report_error();
        for (char *line = wrote.data, *end; rc == 0 && line && (end = strchr(line, '\n')); line = end + 1) {
            *end = '\0';
            cf_log_info("%s", line);
        }
        if (rc == 0)
            rc = cf_recommend_ci_gate_exit(&report);
        cf_staged_set_discard(&side);
        cf_buf_free(&wrote);
        cf_cli_result_discard(&pending);
        free(json_text);
    }
    cf_recommend_result_free(&result);
    return rc;
}

int cmd_recommend(int argc, char **argv, const cf_cli_options *o, int n_positional)
{
    (void)argc;
    if (n_positional != 1) {
        cf_log_error(n_positional ? "recommend takes one spec file, got %d arguments" : "missing the spec file%.0d",
                     n_positional);
        cf_log_hint("usage: cloudfit recommend [options] MODEL.json");
        return CF_EXIT_USAGE;
    }
    cf_spec *spec = NULL;
    int rc = cf_cli_spec_open(o, argv[1], 1, &spec);
    cf_recommend_ci ci; /* CI options, history database, gates (issue 5) */
    memset(&ci, 0, sizeof ci);
    if (rc == 0)
        rc = cf_recommend_ci_check_options(o, &ci);
    if (rc == 0)
        rc = cf_recommend_ci_check_emit_paths(o, spec, argv + 1, 1);
    if (rc == 0)
        rc = cf_recommend_ci_open(o, &ci); /* the one database handle of the run */
    /* Newest good price snapshot, else the embedded catalog (issue 4). */
    cf_catalog_source source;
    if (rc == 0 && (rc = cf_cli_catalog_read(o, ci.db, ci.db_path, 1, &source)) == 0) {
        rc = run(o, spec, &source, &ci);
        cf_catalog_source_close(&source);
    }
    cf_recommend_ci_close(&ci);
    cf_cli_spec_close(spec);
    return rc;
}
