/* cloudfit search MODEL.json --runner RUNNER (docs/search.md): online
 * black-box search with probe runs (the library's cf_search_session_run);
 * prints every probe, the accounting and the final recommendation in the
 * `recommend` formats, and stores the run and its probes in the history
 * database. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/number.h"
#include "cloudfit/usecase/search.h"
#include "commands.h"
#include "exit_codes.h"
#include "io/catalog_source.h"
#include "io/db_open.h"
#include "io/evidence.h"
#include "io/price_option.h"
#include "io/spec_load.h"
#include "log.h"
#include "term/output.h"
#include "term/progress.h"

static int usage(const char *fmt, ...) CF_PRINTF(1, 2);
static int usage(const char *fmt, ...)
{
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    cf_log_error("%s", message);
    cf_log_hint("see 'cloudfit search --help' and docs/search.md");
    return CF_EXIT_USAGE;
}

/* Stores the search run and delivers its result in one transaction: a
 * result that could not be written is not stored (term/output.h). */
static int store_history(const cf_cli_options *o, const cf_search_session *s, const char *json, cf_cli_result *result)
{
    cf_db *db = NULL;
    char path[1024];
    if (cf_cli_db_open(o, 1, &db, path, sizeof path) != CF_OK)
        return cf_report_error();
    cf_search_record rec;
    cf_search_session_record(s, json, &rec);
    long long id = 0;
    int rc = cf_db_hold(db) == CF_OK ? 0 : cf_report_error();
    if (rc == 0 && cf_search_history_insert(db, &rec, s->probes, s->result.n_runs, &id) != CF_OK)
        rc = cf_report_error();
    if (rc == 0)
        rc = cf_cli_result_deliver(result);
    rc = cf_cli_result_release(db, rc);
    cf_db_close_discard_new(db);
    if (rc == 0)
        cf_log_info("stored search %lld (%zu runs) in %s", id, s->result.n_runs, path);
    return rc;
}

static int emit(const cf_cli_options *o, const cf_search_session *s)
{
    int pick = cf_search_session_has_pick(s);
    cJSON *doc = cf_search_document(&s->search_report, s->spec, pick ? &s->report : NULL);
    char *compact = cJSON_PrintUnformatted(doc);
    cf_buf text = CF_BUF_INIT;
    cf_status st = compact ? CF_OK : cf_error_set(CF_ERR_NOMEM, "out of memory rendering the result");
    if (st == CF_OK && cf_cli_format_is(o, "json")) {
        st = cf_cli_json_text(doc, &text);
    } else if (st == CF_OK) {
        int width = cf_cli_output_width(o);
        cf_search_text(&s->search_report, &text);
        if (pick)
            cf_report_table_fit(&s->report, &text, cf_log_color_enabled(stdout), width);
        cf_cli_fit_text(width, &text);
    }
    cJSON_Delete(doc);
    cf_cli_result result;
    memset(&result, 0, sizeof result);
    int rc = st == CF_OK ? cf_cli_result_stage_buf(o, &text, &result) : cf_report_error();
    cf_buf_free(&text);
    if (rc == 0 && !o->no_history)
        rc = store_history(o, s, compact, &result);
    if (rc == 0)
        rc = cf_cli_result_publish(&result);
    cf_cli_result_discard(&result);
    free(compact);
    return rc;
}

/* The options as the library's request; 0 or the exit code of a usage error. */
static int request_of(const cf_cli_options *o, cf_search_session_request *req, cf_search_method *method,
                      double *margin, double *safety_sds)
{
    if (o->method) {
        *method = !strcmp(o->method, "model") ? CF_SEARCH_MODEL_ONLY
                  : !strcmp(o->method, "bo")  ? CF_SEARCH_PLAIN_BO : CF_SEARCH_CLOUDFIT;
        req->method = method;
    }
    if (o->margin) {
        *margin = cf_cli_parse_fraction(o->margin);
        req->margin = margin;
    }
    if (o->safety_sds) {
        cf_number_double(o->safety_sds, 0, 5, safety_sds); /* checked as the options were read */
        req->safety_sds = safety_sds;
    }
    req->max_probes = o->max_probes;
    req->probe_steps = o->probe_steps;
    req->seed = o->seed > 0 ? (unsigned long)o->seed : 0;
    req->probe_startup_s = o->probe_startup_s;
    req->top = o->top > 0 ? (size_t)o->top : 0;
    req->trace_model = o->trace_model;
    req->trace_nic_gbps = o->trace_nic_gbps;
    req->timeout_s = o->timeout_s;
    req->include_restricted_regions = o->include_restricted_regions;
    req->prefer_regions = (const char *const *)o->prefer_regions.items;
    req->n_prefer_regions = (size_t)o->prefer_regions.n;
    req->trace_noise_sd = o->trace_noise ? cf_cli_parse_fraction(o->trace_noise) : -1;
    if (o->prices.n && strncmp(o->runner, "exec:", 5) == 0)
        return usage("option '--price' is for the trace runner; %s", "the exec runner prices from the catalog");
    return 0;
}

/* Closes *db (read for the evidence) once the search ran: the history is
 * written through a handle of its own. */
static int run(const cf_cli_options *o, const cf_spec *spec, const cf_catalog_source *src, cf_db **db,
               const char *db_name)
{
    cf_search_method method;
    double margin, safety_sds;
    cf_search_session_request req = {.spec = spec, .catalog_source = src, .db = *db, .db_name = db_name,
                                      .runner = o->runner, .note = cf_cli_note};
    int rc = request_of(o, &req, &method, &margin, &safety_sds);
    cf_search_price *prices = NULL;
    if (rc == 0)
        rc = cf_cli_parse_prices(o, &prices, &req.n_prices);
    req.prices = prices;
    /* the probes are paid for: what the end writes is checked first */
    const char *const outputs[] = {o->out_file};
    if (rc == 0)
        rc = cf_cli_check_before_run(o, !o->no_history, outputs, 1);
    if (rc) {
        free(prices);
        return rc;
    }
    cf_cli_progress progress; /* a bar on a terminal, plain lines otherwise (term/progress.c) */
    cf_cli_progress_begin(&progress, o, "search");
    progress.at_most = 1;
    req.progress = cf_cli_progress_count_cb;
    req.progress_ctx = &progress;
    cf_search_session session;
    cf_status st = cf_search_session_run(&req, &session);
    cf_cli_progress_end(&progress);
    if (*db)
        cf_db_close(*db);
    *db = NULL;
    rc = st == CF_OK ? emit(o, &session) : cf_report_error();
    if (rc == 0 && cf_search_session_verdict(&session) != CF_OK) {
        rc = cf_report_error();
    } else if (rc == 0 && session.result.n_failed) {
        size_t n = session.result.n_failed;
        cf_log_warning("%zu configuration%s failed twice and %s left out (see the probes above)", n, n == 1 ? "" : "s",
                       n == 1 ? "was" : "were");
    }
    cf_search_session_free(&session);
    free(prices);
    return rc;
}

int cmd_search(int argc, char **argv, const cf_cli_options *o, int n_positional)
{
    (void)argc;
    if (n_positional != 1)
        return usage(n_positional ? "search takes one spec file%s" : "missing the spec file%s", "");
    if (!o->runner || (strncmp(o->runner, "trace:", 6) && strncmp(o->runner, "exec:", 5)) ||
        !o->runner[strncmp(o->runner, "trace:", 6) ? 5 : 6])
        return usage("option '--runner' expects trace:MEASUREMENTS.csv or exec:'COMMAND TEMPLATE', got '%s'",
                     o->runner ? o->runner : "(none)");
    /* --margin and --safety-sds were checked as the options were read (cf_cli_option_check_value) */
    cf_spec *spec = NULL;
    int rc = cf_cli_spec_open(o, argv[1], 1, &spec);
    /* one database handle (never created) for the prices and the evidence */
    char db_name[1024] = "";
    cf_db *db = NULL;
    if (rc == 0 && cf_cli_db_open_existing(o, &db, db_name, sizeof db_name) != CF_OK)
        rc = cf_report_error();
    cf_catalog_source source;
    if (rc == 0 && (rc = cf_cli_catalog_read(o, db, db_name, 0, &source)) == 0) {
        cf_cli_catalog_warn(&source);
        rc = cf_cli_check_search_options(o, &source.catalog);
        if (rc == 0)
            rc = run(o, spec, &source, &db, db_name);
        cf_catalog_source_close(&source);
    }
    if (db)
        cf_db_close(db);
    cf_cli_spec_close(spec);
    return rc;
}
