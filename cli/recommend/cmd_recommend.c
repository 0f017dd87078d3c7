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
#include "io/evidence.h"
#include "io/spec_load.h"
#include "recommend/recommend_ci.h"
#include "recommend/recommend_visual.h"
#include "term/output.h"
#include "cloudfit/render.h"
#include "cloudfit/pricing/regions.h"

/* The formats recommend renders. */
static int check_format(const cf_cli_options *o)
{
    if (o->format && strcmp(o->format, "table") && strcmp(o->format, "json") && strcmp(o->format, "markdown")) {
        cf_log_error("option '--format' does not accept '%s'", o->format);
        cf_log_hint("use one of: table, json, markdown");
        return CF_EXIT_USAGE;
    }
    return 0;
}

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

static int run(const cf_cli_options *o, const cf_spec *spec, cf_catalog_source *src, cf_recommend_ci *ci)
{
    const cf_catalog *catalog = &src->catalog;
    int rc = cf_cli_check_search_options(o, catalog);
    if (rc)
        return rc;
    cf_catalog_filter_storage fs;
    cf_catalog_filter_from(&spec->search, spec->search.spot, &fs);
    fs.filter.include_restricted = o->include_restricted_regions;
    cf_filter_field failed;
    if (cf_catalog_check_filter_field(catalog, &fs.filter, &failed) != CF_OK) {
        cf_cli_spec_filter_error(spec, failed);
        return cf_report_error();
    }
    const cf_vm **rows = malloc((catalog->n_vms ? catalog->n_vms : 1) * sizeof *rows);
    if (!rows) {
        cf_error_set(CF_ERR_NOMEM, "out of memory");
        return cf_report_error();
    }
    size_t n_rows = cf_catalog_filter_rows(catalog, &fs.filter, rows);
    /* Equal prices go to the preferred region (docs/pricing.md, "Regions"),
     * and the catalog's age is that of the prices these offers carry. */
    const char *prefer[2 * CF_SPEC_MAX_LIST];
    size_t n_prefer = cf_cli_region_preference(o, fs.filter.regions, fs.filter.n_regions, prefer,
                                               sizeof prefer / sizeof *prefer);
    if (cf_rows_order_by_region(rows, n_rows, prefer, n_prefer) != CF_OK) {
        free(rows);
        return cf_report_error();
    }
    cf_catalog_source_set_in_use(src, rows, n_rows, spec->search.spot, cf_catalog_filter_restricted(catalog, &fs.filter));
    cf_cli_catalog_warn(src);
    cf_cli_evidence evidence;
    rc = cf_cli_evidence_read(o, spec, 1, &evidence);
    if (rc) {
        free(rows);
        return rc;
    }
    cf_inputs_request request;
    cf_cli_evidence_request(&evidence, spec, catalog, rows, n_rows, &request);
    cf_inputs inputs;
    cf_status st = cf_inputs_build(&request, &inputs);
    cf_cli_evidence_free(&evidence);
    if (st != CF_OK) {
        free(rows);
        return cf_report_error();
    }
    cf_advisor_input in = {.job = &spec->job, .constraints = &spec->search, .vms = rows, .n_vms = n_rows,
                           .perf = inputs.perf, .n_perf = inputs.n_perf, .noise = &inputs.noise,
                           .top = o->top > 0 ? (size_t)o->top : 10};
    cf_advice advice;
    st = cf_advise(&in, &advice);
    if (st == CF_ERR_INFEASIBLE) {
        cf_infeasible_error(&spec->search, spec->job.source, advice.have_extremes ? &advice.fastest : NULL,
                            advice.have_extremes ? &advice.cheapest : NULL,
                            spec->search.spot == CF_SPOT_ONLY ? " on spot VMs alone (--spot only)" : NULL);
        rc = cf_report_error();
    } else if (st != CF_OK) {
        rc = cf_report_error();
    } else {
        char created_at[32];
        cf_now_iso8601(created_at, sizeof created_at);
        cf_hetero_advice hetero; /* --mix: two GPU types in one job (docs/spot.md) */
        if (o->mix && cf_hetero_search(&in, &advice, &hetero) != CF_OK)
            rc = cf_report_error();
        cf_report report = {.spec = spec, .catalog = catalog, .inputs = &inputs, .advice = &advice,
                            .created_at = created_at, .n_offers = n_rows,
                            .catalog_age_days = src->age_days, .catalog_source = src,
                            .hetero = o->mix ? &hetero : NULL};
        char *json_text = NULL;
        cf_cli_result pending;
        memset(&pending, 0, sizeof pending);
        cf_staged_set side; /* --report, --plot, --emit: in place only after the commit */
        memset(&side, 0, sizeof side);
        cf_buf wrote = CF_BUF_INIT; /* what to say once they are */
        /* Baseline and gates first (they are part of every format), then
         * the full result, pictures and launch specs (all staged), the
         * history row written, the result delivered to standard output,
         * the history commit (only when the result was delivered), and
         * only then --out-file and the side files published (a failure
         * before leaves none of them); a failed gate decides the exit
         * code last (issue 5). A stop signal before the commit keeps
         * nothing. */
        if (rc == 0)
            rc = cf_recommend_ci_gates(o, ci, &report);
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
            rc = cf_recommend_ci_record(ci, &report, json_text);
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
            rc = cf_recommend_ci_gate_exit(ci);
        cf_staged_set_discard(&side);
        cf_buf_free(&wrote);
        cf_cli_result_discard(&pending);
        free(json_text);
    }
    cf_advice_free(&advice);
    cf_inputs_free(&inputs);
    free(rows);
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
    int rc = check_format(o);
    cf_spec *spec = NULL;
    if (rc == 0)
        rc = cf_cli_spec_open(o, argv[1], 1, &spec);
    cf_recommend_ci ci; /* CI options, history database, gates (issue 5) */
    memset(&ci, 0, sizeof ci);
    if (rc == 0)
        rc = cf_recommend_ci_check_options(o, &ci);
    if (rc == 0)
        rc = cf_recommend_ci_open(o, spec, &ci);
    /* Newest good price snapshot, else the embedded catalog (issue 4). */
    cf_catalog_source source;
    if (rc == 0 && (rc = cf_cli_catalog_open(o, 1, &source)) == 0) {
        rc = run(o, spec, &source, &ci);
        cf_catalog_source_close(&source);
    }
    cf_recommend_ci_close(&ci);
    cf_cli_spec_close(spec);
    return rc;
}
