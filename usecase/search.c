#include "cloudfit/usecase/search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/clock.h"
#include "cloudfit/render/search_report.h"
#include "cloudfit/usecase/recommend.h"
#include "cloudfit/version.h"

static unsigned long runner_seed(const cf_search_session_request *req)
{
    return req->seed > 0 ? req->seed : 1;
}

/* The trace runner: its candidates and the truth it answers from. */
static cf_status open_trace(const cf_search_session_request *req, cf_search_session *s)
{
    double noise = req->trace_noise_sd >= 0 ? req->trace_noise_sd : 0.02;
    const char *model = req->trace_model ? req->trace_model : req->spec->job.name;
    const cf_catalog *catalog = &req->catalog_source->catalog;
    /* search.gpus as the models they name ("Tesla T4" is T4), as recommend filters */
    char gpus[CF_SPEC_MAX_GPUS][CF_GPU_NAME_MAX];
    for (int i = 0; i < req->spec->search.n_gpus; i++)
        snprintf(gpus[i], sizeof gpus[i], "%s", cf_catalog_gpu_filter_model(catalog, req->spec->search.gpus[i]));
    cf_trace_runner_config cfg = {.path = req->runner + 6, .model = model, .vms = catalog->vms,
                                  .n_vms = catalog->n_vms, .clouds = req->spec->search.clouds,
                                  .n_clouds = req->spec->search.n_clouds, .regions = req->spec->search.regions,
                                  .n_regions = req->spec->search.n_regions, .gpus = gpus,
                                  .n_gpus = req->spec->search.n_gpus, .prices = req->prices,
                                  .n_prices = req->n_prices, .noise_sd = noise, .seed = runner_seed(req),
                                  .nic_gbps = req->trace_nic_gbps > 0 ? req->trace_nic_gbps : 0,
                                  .gpu_table = catalog->gpus, .n_gpu_table = catalog->n_gpus};
    cf_status st = cf_trace_runner_open(&cfg, &s->trace);
    if (st != CF_OK)
        return st;
    s->runner_open = 1;
    const cf_trace_runner *t = &s->trace;
    /* rows and configurations counted apart: the rows of the model are the rows used, the asymmetric ones
     * and those of configurations without a price or outside the filters */
    snprintf(s->runner_note, sizeof s->runner_note,
             "trace: model '%s', %zu rows: %zu symmetric configurations from %zu rows (%zu rows asymmetric; %zu "
             "configurations without a price, %zu left out by the filters), noise %.1f%%",
             model, t->rows.n_rows, t->n, t->n_rows_used, t->n_asymmetric, t->n_unpriced, t->n_filtered,
             100 * noise);
    return CF_OK;
}

/* The exec runner over the catalog's offers that pass the spec's filter
 * (on demand), preferred region first. */
static cf_status open_exec(const cf_search_session_request *req, cf_search_session *s)
{
    const cf_spec *spec = req->spec;
    cf_catalog_filter_storage fs;
    size_t n_rows = 0, n_cands = 0;
    cf_status st = cf_spec_offers(spec, &req->catalog_source->catalog, CF_SPOT_NEVER, req->include_restricted_regions,
                                  req->prefer_regions, req->n_prefer_regions, &fs, &s->rows, &n_rows);
    if (st == CF_OK)
        st = cf_search_catalog_candidates(&spec->search, spec->probe.local_batches, spec->probe.n_local_batches,
                                          s->rows, n_rows, &s->owned_cands, &n_cands);
    if (st == CF_OK)
        st = cf_search_check_gpu_types(s->owned_cands, n_cands);
    if (st == CF_OK)
        st = cf_exec_runner_open(req->runner + 5, req->timeout_s, runner_seed(req), &s->exec);
    if (st != CF_OK)
        return st;
    s->exec.gpus = req->catalog_source->catalog.gpus;
    s->exec.n_gpus = req->catalog_source->catalog.n_gpus;
    s->runner_open = 1;
    s->options.candidates = s->owned_cands;
    s->options.n_candidates = n_cands;
    snprintf(s->runner_note, sizeof s->runner_note, "exec: '%s …' per probe, %zu catalog offers, %zu configurations",
             s->exec.label, n_rows, n_cands);
    return CF_OK;
}

/* The search's options: the spec's defaults, the request's on top. */
static void options_for(const cf_search_session_request *req, cf_search_session *s)
{
    const cf_search_candidate *cands = s->options.candidates;
    size_t n_cands = s->options.n_candidates;
    cf_search_options *so = &s->options;
    cf_search_options_for(so, &req->spec->job, &req->spec->search, &s->inputs.noise);
    so->candidates = cands;
    so->n_candidates = n_cands;
    so->prior = s->prior;
    so->n_prior = s->n_prior;
    if (req->method)
        so->method = *req->method;
    if (req->margin)
        so->margin = *req->margin;
    if (req->max_probes > 0)
        so->max_probes = req->max_probes;
    if (req->safety_sds) /* sets the confidence's quantile directly */
        so->safety_sds = *req->safety_sds;
    if (req->probe_steps > 0)
        so->probe_steps = so->profile_steps = req->probe_steps;
    if (req->seed > 0)
        so->seed = req->seed;
    if (req->probe_startup_s > 0)
        so->probe_startup_s = req->probe_startup_s;
    so->progress = req->progress;
    so->progress_ctx = req->progress_ctx;
}

/* The history row's runs. */
static cf_status probe_records(cf_search_session *s)
{
    const cf_search_result *r = &s->result;
    s->probes = calloc(r->n_runs ? r->n_runs : 1, sizeof *s->probes);
    if (!s->probes)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < r->n_runs; i++) {
        const cf_search_step *step = &r->runs[i];
        const cf_search_candidate *c = &s->options.candidates[step->candidate];
        s->probes[i] = (cf_search_probe_record){
            .kind = step->kind == CF_RUN_PROFILE ? "profile" : "probe", .cloud = c->vm ? c->vm->cloud : "",
            .region = c->vm ? c->vm->region : "", .instance_type = c->vm ? c->vm->instance_type : "", .gpu = c->gpu,
            .gpus_per_node = c->gpus_per_node, .nodes = c->nodes, .local_batch = c->local_batch, .steps = step->steps,
            .attempts = step->attempts, .measured_step_time_s = step->measured_step_s,
            .predicted_step_time_s = step->predicted_step_s, .cost_usd = step->cost_usd, .error = step->error};
    }
    return CF_OK;
}

/* The VM offers the candidates run on, for the table's "N offers × 1–M
 * nodes" (each offer has a candidate per node count and batch: counting
 * candidates overstated the space many times over). A candidate without a
 * catalog row (--price) is its GPU and GPUs per VM. */
static size_t distinct_offers(const cf_search_options *o)
{
    size_t n = 0;
    for (size_t i = 0; i < o->n_candidates; i++) {
        const cf_search_candidate *c = &o->candidates[i];
        int seen = 0;
        for (size_t k = 0; k < i && !seen; k++) {
            const cf_search_candidate *d = &o->candidates[k];
            seen = c->vm ? d->vm == c->vm
                         : !d->vm && d->gpus_per_node == c->gpus_per_node && strcmp(d->gpu, c->gpu) == 0;
        }
        n += !seen;
    }
    return n;
}

/* The final recommendation over the search's estimates: the pick, the
 * runners-up and, with --spot allow|only, the measured step times as spot
 * plans too (docs/spot.md). */
static cf_status recommendation(const cf_search_session_request *req, cf_search_session *s)
{
    const cf_search_result *r = &s->result;
    size_t top = req->top > 0 ? req->top : 10;
    cf_status st = CF_OK;
    if (r->chosen >= 0 && (st = cf_search_advice(&s->options, r, &s->inputs.noise, top, &s->advice)) == CF_OK)
        st = cf_search_spot(&s->options, r, &s->inputs.noise, req->spec->search.spot, &s->advice);
    if (st != CF_OK)
        return st;
    if (r->chosen >= 0 && req->spec->search.spot == CF_SPOT_ONLY && !s->advice.have_best_spot)
        s->no_spot_plan = s->infeasible = s->search_report.no_spot_plan = 1; /* it exited 0 with an on-demand plan */
    s->report_inputs = s->inputs;
    s->report_inputs.perf = r->fitted;
    s->report_inputs.n_perf = r->n_fitted;
    s->report = (cf_report){.spec = req->spec, .catalog = &req->catalog_source->catalog,
                            .inputs = &s->report_inputs, .advice = &s->advice, .created_at = s->created_at,
                            .n_offers = distinct_offers(&s->options), .catalog_age_days = req->catalog_source->age_days,
                            .catalog_source = req->catalog_source};
    return CF_OK;
}

cf_status cf_search_session_run(const cf_search_session_request *req, cf_search_session *out)
{
    memset(out, 0, sizeof *out);
    const cf_spec *spec = req->spec;
    const cf_catalog *catalog = &req->catalog_source->catalog;
    out->spec = spec;
    out->runner_is_trace = strncmp(req->runner, "trace:", 6) == 0;
    if (!out->runner_is_trace && strncmp(req->runner, "exec:", 5) != 0)
        return cf_error_set(CF_ERR_INVALID, "unknown runner '%s' (trace:MEASUREMENTS.csv or exec:'COMMAND TEMPLATE')",
                            req->runner);
    cf_status st = cf_spec_check_current_gpu(spec, catalog);
    if (st == CF_OK)
        st = out->runner_is_trace ? open_trace(req, out) : open_exec(req, out);
    if (st != CF_OK)
        return st;
    if (out->runner_is_trace) {
        out->options.candidates = out->trace.cands;
        out->options.n_candidates = out->trace.n;
    }
    /* The spec's own and cached profiles and the noise model; no carried-
     * over estimates for the other GPU types (the light profile measures
     * every type the search considers). */
    cf_evidence evidence;
    if ((st = cf_evidence_read(req->db, req->db_name, spec, 0, req->note, req->note_ctx, &evidence)) != CF_OK)
        return st;
    cf_inputs_request request;
    cf_evidence_request(&evidence, spec, catalog, NULL, 0, &request);
    st = cf_inputs_build(&request, &out->inputs);
    cf_evidence_free(&evidence);
    if (st != CF_OK)
        return st;
    out->have_inputs = 1;
    if ((st = cf_search_prior(&out->inputs, catalog->gpus, catalog->n_gpus, out->options.candidates,
                              out->options.n_candidates, &out->prior, &out->n_prior)) != CF_OK)
        return st;
    options_for(req, out);
    cf_search_runner runner = out->runner_is_trace ? cf_trace_runner_iface(&out->trace)
                                                   : cf_exec_runner_iface(&out->exec);
    st = cf_search_run(&out->options, &runner, &out->result);
    out->have_result = 1; /* what the search had gathered, also when it stopped */
    if (st != CF_OK && st != CF_ERR_INFEASIBLE)
        return st;
    out->infeasible = st == CF_ERR_INFEASIBLE;
    out->search_report = (cf_search_report){.options = &out->options, .result = &out->result, .runner = req->runner,
                                            .runner_note = out->runner_note, .summary = &out->summary};
    const double *truth = out->runner_is_trace ? out->trace.true_step_s : NULL;
    if (truth && cf_search_score_against(&out->options, truth, &out->result, &out->score) == CF_OK) {
        out->search_report.score = &out->score;
        out->search_report.true_step_s = truth;
    }
    /* training.current.gpu as the spec spells it ("Tesla T4", "t4": docs/spec.md
     * takes a tool's name) against the candidates' table model: a tool's
     * spelling found no candidate and the savings were silently left out */
    cf_job job = spec->job;
    const cf_gpu *current = job.has_current ? cf_gpu_resolve(catalog->gpus, catalog->n_gpus, job.current_gpu) : NULL;
    if (current)
        snprintf(job.current_gpu, sizeof job.current_gpu, "%s", current->model);
    if ((st = cf_search_summarise(&job, &out->options, &out->result, &out->summary)) != CF_OK)
        return st;
    cf_now_iso8601(out->created_at, sizeof out->created_at);
    if ((st = recommendation(req, out)) != CF_OK)
        return st;
    return probe_records(out);
}

int cf_search_session_has_pick(const cf_search_session *s) { return s->result.chosen >= 0 && !s->no_spot_plan; }

cf_status cf_search_session_verdict(const cf_search_session *s)
{
    if (!s->infeasible)
        return CF_OK;
    if (s->no_spot_plan) {
        cf_error_set(CF_ERR_INFEASIBLE, "%s: no spot plan meets the constraints (--spot only): the search's pick runs "
                     "on demand, and on spot VMs it has no spot price or misses the limits at the confidence",
                     s->spec->job.source);
        cf_error_hint("allow on-demand VMs with --spot allow, or relax search.deadline_hours / search.budget_usd");
        return CF_ERR_INFEASIBLE;
    }
    /* how far the closest configuration misses, by the search's estimates,
     * as recommend says it (docs/exit-codes.md, exit 4) */
    return cf_search_infeasible_error(&s->options, &s->result, s->spec->job.source);
}

void cf_search_session_record(const cf_search_session *s, const char *result_json, cf_search_record *rec)
{
    const cf_spec *spec = s->spec;
    const cf_search_options *so = &s->options;
    const cf_search_result *r = &s->result;
    const cf_search_score *score = s->search_report.score;
    *rec = (cf_search_record){.created_at = s->created_at, .tool_version = CF_VERSION, .spec_hash = spec->hash,
                              .spec_name = spec->job.name, .runner = s->search_report.runner,
                              .method = cf_search_method_name(so->method),
                              .objective = cf_objective_name(spec->search.objective), .seed = (long)so->seed,
                              .probe_count = (int)r->n_probes, .profile_cost_usd = r->profile_cost_usd,
                              .probe_cost_usd = r->probe_cost_usd, .overhead_usd = r->overhead_usd,
                              .regret_pct = score && isfinite(score->regret) ? 100 * score->regret : NAN,
                              .result_json = result_json};
    if (!cf_search_session_has_pick(s))
        return;
    const cf_search_candidate *c = &so->candidates[r->chosen];
    rec->has_chosen = 1;
    rec->cloud = c->vm ? c->vm->cloud : "";
    rec->instance_type = c->vm ? c->vm->instance_type : "";
    rec->gpu = c->gpu;
    rec->gpus_per_node = c->gpus_per_node;
    rec->nodes = c->nodes;
    rec->local_batch = c->local_batch;
    rec->step_time_s = r->est_step_s[r->chosen];
    rec->hours = r->chosen_hours;
    rec->total_usd = r->chosen_usd;
}

void cf_search_session_free(cf_search_session *s)
{
    free(s->probes);
    cf_advice_free(&s->advice);
    if (s->have_result)
        cf_search_result_free(&s->result);
    if (s->have_inputs)
        cf_inputs_free(&s->inputs);
    free(s->prior);
    if (s->runner_open && s->runner_is_trace)
        cf_trace_runner_close(&s->trace);
    else if (s->runner_open)
        cf_exec_runner_close(&s->exec);
    free(s->owned_cands);
    free(s->rows);
    memset(s, 0, sizeof *s);
}
