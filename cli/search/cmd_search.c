/* cloudfit search MODEL.json --runner RUNNER (docs/search.md): online
 * black-box search with probe runs; prints every probe, the accounting and
 * the final recommendation in the `recommend` formats, and stores the run
 * and its probes in the history database. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exit_codes.h"
#include "cloudfit/common/fileio.h"
#include "log.h"
#include "cloudfit/db/search_runs.h"
#include "cloudfit/version.h"
#include "cloudfit/common/clock.h"
#include "commands.h"
#include "term/output.h"
#include "io/catalog_source.h"
#include "cloudfit/usecase/recommend.h"
#include "cloudfit/pricing/regions.h"
#include "io/evidence.h"
#include "io/spec_load.h"
#include "io/db_open.h"
#include "term/progress.h"
#include "cloudfit/render/search_report.h"
#include "cloudfit/profiler/runners.h"
#include "cloudfit/common/number.h"
#include "term/output.h"

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

static int check_format(const cf_cli_options *o)
{
    if (o->format && strcmp(o->format, "table") && strcmp(o->format, "json"))
        return usage("option '--format' does not accept '%s' (table or json)", o->format);
    return 0;
}

static int parse_prices(const cf_cli_options *o, cf_search_price *prices, size_t *n)
{
    *n = 0;
    for (int i = 0; i < o->prices.n; i++) {
        const char *eq = strchr(o->prices.items[i], '=');
        double v = 0;
        if (!eq || eq == o->prices.items[i] || (size_t)(eq - o->prices.items[i]) >= sizeof prices[0].gpu ||
            cf_number_double(eq + 1, 0, HUGE_VAL, &v) != CF_NUMBER_OK || !(v > 0))
            return usage("option '--price' expects GPU=USD_PER_GPU_HR (e.g. T4=0.53), got '%s'", o->prices.items[i]);
        snprintf(prices[*n].gpu, sizeof prices[0].gpu, "%.*s", (int)(eq - o->prices.items[i]), o->prices.items[i]);
        prices[(*n)++].usd_per_gpu_hr = v;
    }
    return 0;
}

/* Stores the search run and delivers its result in one transaction: a
 * result that could not be written is not stored (term/output.h). */
static int store_history(const cf_cli_options *o, const cf_spec *spec, const cf_search_report *sr, const char *json,
                         const char *created_at, cf_cli_result *result)
{
    cf_db *db = NULL;
    char path[1024];
    if (cf_cli_db_open(o, 1, &db, path, sizeof path) != CF_OK)
        return cf_report_error();
    const cf_search_options *so = sr->options;
    const cf_search_result *r = sr->result;
    cf_search_probe_record *probes = calloc(r->n_runs ? r->n_runs : 1, sizeof *probes);
    if (!probes) {
        cf_db_close(db);
        cf_error_set(CF_ERR_NOMEM, "out of memory");
        return cf_report_error();
    }
    for (size_t i = 0; i < r->n_runs; i++) {
        const cf_search_step *s = &r->runs[i];
        const cf_search_candidate *c = &so->candidates[s->candidate];
        probes[i] = (cf_search_probe_record){
            .kind = s->kind == CF_RUN_PROFILE ? "profile" : "probe", .cloud = c->vm ? c->vm->cloud : "",
            .region = c->vm ? c->vm->region : "", .instance_type = c->vm ? c->vm->instance_type : "", .gpu = c->gpu,
            .gpus_per_node = c->gpus_per_node, .nodes = c->nodes, .local_batch = c->local_batch, .steps = s->steps,
            .attempts = s->attempts, .measured_step_time_s = s->measured_step_s,
            .predicted_step_time_s = s->predicted_step_s, .cost_usd = s->cost_usd, .error = s->error};
    }
    cf_search_record rec = {.created_at = created_at, .tool_version = CF_VERSION, .spec_hash = spec->hash,
                            .spec_name = spec->job.name, .runner = sr->runner, .method = cf_search_method_name(so->method),
                            .objective = cf_objective_name(spec->search.objective), .seed = (long)so->seed,
                            .probe_count = (int)r->n_probes, .profile_cost_usd = r->profile_cost_usd,
                            .probe_cost_usd = r->probe_cost_usd, .overhead_usd = r->overhead_usd,
                            .regret_pct = sr->score && isfinite(sr->score->regret) ? 100 * sr->score->regret : NAN,
                            .result_json = json};
    if (r->chosen >= 0) {
        const cf_search_candidate *c = &so->candidates[r->chosen];
        rec.has_chosen = 1;
        rec.cloud = c->vm ? c->vm->cloud : "";
        rec.instance_type = c->vm ? c->vm->instance_type : "";
        rec.gpu = c->gpu;
        rec.gpus_per_node = c->gpus_per_node;
        rec.nodes = c->nodes;
        rec.local_batch = c->local_batch;
        rec.step_time_s = r->est_step_s[r->chosen];
        rec.hours = r->chosen_hours;
        rec.total_usd = r->chosen_usd;
    }
    long long id = 0;
    int rc = cf_db_hold(db) == CF_OK ? 0 : cf_report_error();
    if (rc == 0 && cf_search_history_insert(db, &rec, probes, r->n_runs, &id) != CF_OK)
        rc = cf_report_error();
    free(probes);
    if (rc == 0)
        rc = cf_cli_result_deliver(result);
    rc = cf_cli_result_release(db, rc);
    cf_db_close(db);
    if (rc == 0)
        cf_log_info("stored search %lld (%zu runs) in %s", id, r->n_runs, path);
    return rc;
}

typedef struct {
    const cf_cli_options *o;
    cf_spec *spec;
    const cf_catalog_source *src;
    const char *runner_text;
    cf_search_candidate *cands;  /* exec: owned */
    size_t n_cands;
    const double *true_step_s;   /* trace only */
    char runner_note[300];
} search_ctx;

static int emit(search_ctx *x, const cf_search_report *sr, const cf_inputs *inputs)
{
    const cf_cli_options *o = x->o;
    const cf_search_result *r = sr->result;
    char created_at[32];
    cf_now_iso8601(created_at, sizeof created_at);
    cf_advice advice;
    memset(&advice, 0, sizeof advice);
    if (r->chosen >= 0 && cf_search_advice(sr->options, sr->result, &inputs->noise, o->top > 0 ? (size_t)o->top : 10, &advice) != CF_OK)
        return cf_report_error();
    /* --spot allow|only: the measured step times as spot plans too (docs/spot.md) */
    if (r->chosen >= 0 && cf_search_spot(sr->options, sr->result, &inputs->noise, x->spec->search.spot, &advice) != CF_OK) {
        cf_advice_free(&advice);
        return cf_report_error();
    }
    cf_inputs rin = *inputs;
    rin.perf = r->fitted;
    rin.n_perf = r->n_fitted;
    cf_report report = {.spec = x->spec, .catalog = &x->src->catalog, .inputs = &rin, .advice = &advice,
                        .created_at = created_at, .n_offers = sr->options->n_candidates,
                        .catalog_age_days = x->src->age_days, .catalog_source = x->src};
    cJSON *doc = r->chosen >= 0 ? cf_report_json(&report) : cJSON_CreateObject();
    if (r->chosen < 0) {
        cJSON_AddStringToObject(doc, "version", CF_DOCUMENT_VERSION);
        cJSON_AddStringToObject(doc, "objective", cf_objective_name(x->spec->search.objective));
        cJSON_AddNullToObject(doc, "chosen");
    }
    cf_search_json(sr, doc);
    char *compact = cJSON_PrintUnformatted(doc);
    int as_json = o->format && !strcmp(o->format, "json");
    cf_buf text = CF_BUF_INIT;
    if (as_json) {
        char *pretty = cJSON_Print(doc);
        if (pretty) {
            cf_buf_puts(&text, pretty);
            cf_buf_puts(&text, "\n");
        }
        free(pretty);
    } else {
        int width = cf_cli_output_width(o);
        cf_search_text(sr, &text);
        if (r->chosen >= 0)
            cf_report_table_fit(&report, &text, cf_log_color_enabled(stdout), width);
        cf_cli_fit_text(width, &text);
    }
    cJSON_Delete(doc);
    cf_advice_free(&advice);
    if (!compact || cf_buf_failed(&text)) {
        free(compact);
        cf_buf_free(&text);
        cf_error_set(CF_ERR_NOMEM, "out of memory rendering the result");
        return cf_report_error();
    }
    cf_cli_result result;
    int rc = cf_cli_result_stage(o, text.data ? text.data : "", text.len, NULL, &result);
    cf_buf_free(&text);
    if (rc == 0 && !o->no_history)
        rc = store_history(o, x->spec, sr, compact, created_at, &result);
    if (rc == 0)
        rc = cf_cli_result_publish(&result);
    cf_cli_result_discard(&result);
    free(compact);
    return rc;
}

static int run_search(search_ctx *x, cf_search_runner runner)
{
    const cf_cli_options *o = x->o;
    const cf_catalog *catalog = &x->src->catalog;
    /* The spec's own and cached profiles and the noise model; no carried-
     * over estimates for the other GPU types (the light profile measures
     * every type the search considers). */
    cf_evidence evidence;
    int rc = cf_cli_evidence_read(o, x->spec, 0, &evidence);
    if (rc)
        return rc;
    cf_inputs_request request;
    cf_evidence_request(&evidence, x->spec, catalog, NULL, 0, &request);
    cf_inputs inputs;
    cf_status st = cf_inputs_build(&request, &inputs);
    cf_evidence_free(&evidence);
    if (st != CF_OK)
        return cf_report_error();
    size_t n_prior = 0;
    cf_gpu_perf *prior = NULL;
    if (cf_search_prior(&inputs, catalog->gpus, catalog->n_gpus, x->cands, x->n_cands, &prior, &n_prior) != CF_OK) {
        cf_inputs_free(&inputs);
        return cf_report_error();
    }
    cf_search_options so;
    cf_search_options_for(&so, &x->spec->job, &x->spec->search, &inputs.noise);
    so.candidates = x->cands;
    so.n_candidates = x->n_cands;
    so.prior = prior;
    so.n_prior = n_prior;
    if (o->method && !strcmp(o->method, "model"))
        so.method = CF_SEARCH_MODEL_ONLY;
    else if (o->method && !strcmp(o->method, "bo"))
        so.method = CF_SEARCH_PLAIN_BO;
    if (o->margin)
        so.margin = cf_cli_parse_fraction(o->margin);
    if (o->max_probes > 0)
        so.max_probes = o->max_probes;
    if (o->safety_sds) /* sets the confidence's quantile directly */
        cf_number_double(o->safety_sds, 0, 5, &so.safety_sds); /* checked with the other options */
    if (o->probe_steps > 0)
        so.probe_steps = so.profile_steps = o->probe_steps;
    if (o->seed > 0)
        so.seed = (unsigned long)o->seed;
    if (o->probe_startup_s > 0)
        so.probe_startup_s = o->probe_startup_s;
    cf_search_result result;
    cf_cli_progress progress; /* a bar on a terminal, plain lines otherwise (term/progress.c) */
    cf_cli_progress_begin(&progress, o, "search");
    progress.at_most = 1;
    so.progress = cf_cli_progress_count_cb;
    so.progress_ctx = &progress;
    st = cf_search_run(&so, &runner, &result);
    cf_cli_progress_end(&progress);
    if (st != CF_OK && st != CF_ERR_INFEASIBLE) {
        rc = cf_report_error();
        cf_search_result_free(&result); /* what the search had gathered before it stopped */
    } else {
        cf_search_score score;
        cf_search_summary summary;
        cf_search_report sr = {.options = &so, .result = &result, .runner = x->runner_text,
                               .runner_note = x->runner_note, .summary = &summary};
        if (x->true_step_s && cf_search_score_against(&so, x->true_step_s, &result, &score) == CF_OK) {
            sr.score = &score;
            sr.true_step_s = x->true_step_s;
        }
        rc = cf_search_summarise(&x->spec->job, &so, &result, &summary) == CF_OK ? emit(x, &sr, &inputs)
                                                                                : cf_report_error();
        if (rc == 0 && st == CF_ERR_INFEASIBLE) {
            cf_infeasible_error(&x->spec->search, x->spec->job.source, NULL, NULL, " with the safety margin");
            rc = cf_report_error();
        } else if (rc == 0 && result.n_failed) {
            cf_log_warning("%zu configuration%s failed twice and %s left out (see the probes above)", result.n_failed,
                        result.n_failed == 1 ? "" : "s", result.n_failed == 1 ? "was" : "were");
        }
        cf_search_result_free(&result);
    }
    free(prior);
    cf_inputs_free(&inputs);
    return rc;
}

static int with_trace(search_ctx *x)
{
    const cf_cli_options *o = x->o;
    double noise = o->trace_noise ? cf_cli_parse_fraction(o->trace_noise) : 0.02;
    if (noise < 0)
        return usage("option '--trace-noise' expects a fraction or a percentage (e.g. 2%%), got '%s'", o->trace_noise);
    cf_search_price *prices = calloc(o->prices.n ? (size_t)o->prices.n : 1, sizeof *prices);
    size_t n_prices;
    if (!prices) {
        cf_error_set(CF_ERR_NOMEM, "out of memory");
        return cf_report_error();
    }
    int rc = parse_prices(o, prices, &n_prices);
    if (rc) {
        free(prices);
        return rc;
    }
    cf_trace_runner t;
    const char *model = o->trace_model ? o->trace_model : x->spec->job.name;
    cf_trace_runner_config cfg = {.path = x->runner_text + 6, .model = model, .vms = x->src->catalog.vms,
                                  .n_vms = x->src->catalog.n_vms, .clouds = x->spec->search.clouds,
                                  .n_clouds = x->spec->search.n_clouds, .prices = prices, .n_prices = n_prices,
                                  .noise_sd = noise, .seed = o->seed > 0 ? (unsigned long)o->seed : 1,
                                  .nic_gbps = o->trace_nic_gbps > 0 ? o->trace_nic_gbps : 0};
    if (cf_trace_runner_open(&cfg, &t) != CF_OK) {
        free(prices);
        return cf_report_error();
    }
    x->cands = t.cands;
    x->n_cands = t.n;
    x->true_step_s = t.true_step_s;
    snprintf(x->runner_note, sizeof x->runner_note,
             "trace: %zu rows of model '%s' → %zu symmetric configurations (%zu asymmetric rows, %zu unpriced skipped), "
             "noise %.1f%%", t.n_rows_used, model, t.n, t.n_asymmetric, t.n_unpriced, 100 * noise);
    rc = run_search(x, cf_trace_runner_iface(&t));
    cf_trace_runner_close(&t);
    free(prices);
    return rc;
}

static int with_exec(search_ctx *x)
{
    const cf_cli_options *o = x->o;
    const cf_spec *spec = x->spec;
    if (o->prices.n)
        return usage("option '--price' is for the trace runner; %s", "the exec runner prices from the catalog");
    cf_catalog_filter_storage fs;
    cf_catalog_filter_from(&spec->search, CF_SPOT_NEVER, &fs);
    fs.filter.include_restricted = o->include_restricted_regions;
    const cf_catalog_filter filter = fs.filter;
    const cf_catalog *catalog = &x->src->catalog;
    cf_filter_field failed;
    if (cf_catalog_check_filter_field(catalog, &filter, &failed) != CF_OK) {
        cf_spec_filter_error_prefix(spec, failed);
        return cf_report_error();
    }
    const cf_vm **rows = malloc((catalog->n_vms ? catalog->n_vms : 1) * sizeof *rows);
    if (!rows) {
        cf_error_set(CF_ERR_NOMEM, "out of memory");
        return cf_report_error();
    }
    size_t n_rows = cf_catalog_filter_rows(catalog, &filter, rows);
    const char *prefer[2 * CF_SPEC_MAX_LIST]; /* equal prices: the preferred region (docs/pricing.md) */
    size_t n_prefer = cf_cli_region_preference(o, filter.regions, filter.n_regions, prefer,
                                               sizeof prefer / sizeof *prefer);
    if (cf_rows_order_by_region(rows, n_rows, prefer, n_prefer) != CF_OK ||
        cf_search_catalog_candidates(&spec->search, spec->probe.local_batches, spec->probe.n_local_batches, rows, n_rows,
                                     &x->cands, &x->n_cands) != CF_OK) {
        free(rows);
        return cf_report_error();
    }
    int rc = 0;
    if (cf_search_check_gpu_types(x->cands, x->n_cands) != CF_OK)
        rc = cf_report_error();
    cf_exec_runner e;
    if (rc == 0 && cf_exec_runner_open(x->runner_text + 5, o->timeout_s, o->seed > 0 ? (unsigned long)o->seed : 1,
                                       &e) != CF_OK)
        rc = cf_report_error();
    else if (rc == 0) {
        snprintf(x->runner_note, sizeof x->runner_note, "exec: '%s …' per probe, %zu catalog offers, %zu configurations",
                 e.label, n_rows, x->n_cands);
        rc = run_search(x, cf_exec_runner_iface(&e));
        cf_exec_runner_close(&e);
    }
    free(x->cands);
    free(rows);
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
    if (o->margin && cf_cli_parse_fraction(o->margin) < 0)
        return usage("option '--margin' expects a fraction or a percentage (e.g. 3%%), got '%s'", o->margin);
    double z = 0;
    if (o->safety_sds && cf_number_double(o->safety_sds, 0, 5, &z) != CF_NUMBER_OK)
        return usage("option '--safety-sds' expects a number from 0 to 5, got '%s'", o->safety_sds);
    if (o->method && strcmp(o->method, "cloudfit") && strcmp(o->method, "model") && strcmp(o->method, "bo"))
        return usage("option '--method' expects cloudfit, model or bo, got '%s'", o->method);
    cf_spec *spec = NULL;
    int rc = check_format(o);
    if (rc == 0)
        rc = cf_cli_spec_open(o, argv[1], 1, &spec);
    cf_catalog_source source;
    if (rc == 0 && (rc = cf_cli_catalog_open(o, 0, &source)) == 0) {
        cf_cli_catalog_warn(&source);
        search_ctx x = {.o = o, .spec = spec, .src = &source, .runner_text = o->runner};
        rc = cf_cli_check_search_options(o, &source.catalog);
        if (rc == 0)
            rc = strncmp(o->runner, "trace:", 6) == 0 ? with_trace(&x) : with_exec(&x);
        cf_catalog_source_close(&source);
    }
    cf_cli_spec_close(spec);
    return rc;
}
