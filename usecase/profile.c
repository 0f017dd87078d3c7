#include "cloudfit/usecase/profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cloudfit/advisor/search.h"
#include "cloudfit/common/parallel.h"
#include "cloudfit/db/profiles.h"
#include "cloudfit/pricing/offer_pick.h"
#include "cloudfit/profiler/runners.h"

/* ---- through a runner ------------------------------------------------------------ */

/* The VM a trace row of this shape really ran on (the trace says how many
 * GPUs it had): the NIC the probe measured is that VM's. */
static void trace_hardware(const cf_trace_runner *t, const cf_catalog *catalog, const cf_gpu *gpu, double nic_gbps,
                           cf_profile *p)
{
    for (int i = 0; i < p->n_runs; i++) {
        cf_profile_run_row *r = &p->runs[i];
        const char *row_cloud = "";
        int hw = cf_trace_runner_hw_gpus(t, gpu->model, r->nodes, r->gpus_per_node, r->local_batch, &row_cloud);
        if (hw <= 0 || hw == r->hw_gpus_per_node)
            continue;
        /* the VM the row ran on, in the row's own cluster first (a 2-GPU shape
         * priced on GCP but measured on AWS 4-GPU VMs ran on AWS) */
        const cf_vm *best = row_cloud[0] ? cf_offer_for_hardware(catalog, gpu->model, hw, row_cloud) : NULL;
        if (!best || strcmp(best->cloud, row_cloud) != 0)
            best = cf_offer_for_hardware(catalog, gpu->model, hw, r->cloud);
        r->hw_gpus_per_node = hw;
        if (best) {
            snprintf(r->cloud, sizeof r->cloud, "%s", best->cloud);
            r->network_gbps = nic_gbps > 0 ? nic_gbps : best->network_gbps; /* --trace-nic-gbps: the trace's own */
            snprintf(r->instance_type, sizeof r->instance_type, "%s", best->instance_type);
        }
    }
}

/* The exec runner's candidates: the catalog's offers of the GPU, on the
 * instance type when one is given. */
static cf_status catalog_candidates(const cf_profile_request *req, cf_search_candidate **cands, size_t *n)
{
    const cf_spec *spec = req->spec;
    cf_catalog_filter_storage fs;
    cf_catalog_filter_from(&spec->search, CF_SPOT_NEVER, &fs);
    const char *gpu_name = req->gpu->model;
    fs.filter.gpus = &gpu_name;
    fs.filter.n_gpus = 1;
    const cf_vm **rows = malloc((req->catalog->n_vms ? req->catalog->n_vms : 1) * sizeof *rows);
    if (!rows)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    size_t n_rows = cf_catalog_filter_rows(req->catalog, &fs.filter, rows), kept = 0;
    for (size_t i = 0; i < n_rows; i++)
        if (!req->instance_type || !strcmp(rows[i]->instance_type, req->instance_type))
            rows[kept++] = rows[i];
    cf_status st = cf_search_catalog_candidates(&spec->search, spec->probe.local_batches, spec->probe.n_local_batches,
                                                rows, kept, cands, n);
    free(rows);
    return st;
}

/* The light profile of one GPU type plus the 2-node × 1-GPU probe through
 * the runners of `cloudfit search` (docs/profiler.md "Profiling through a
 * runner"): backend "trace" or "runner", device = the catalog GPU model. */
static cf_status through_runner(const cf_profile_request *req, cf_profile_result *res)
{
    const cf_spec *spec = req->spec;
    const cf_gpu *gpu = req->gpu;
    int is_trace = strncmp(req->runner, "trace:", 6) == 0;
    cf_trace_runner trace;
    cf_exec_runner exec;
    int have_trace = 0, have_exec = 0;
    cf_search_candidate *cands = NULL;
    size_t n_cands = 0;
    cf_search_runner runner = {0};
    cf_status st;
    if (is_trace) {
        cf_trace_runner_config cfg = {.path = req->runner + 6, .model = req->trace_model ? req->trace_model : spec->job.name,
                                      .vms = req->catalog->vms, .n_vms = req->catalog->n_vms,
                                      .clouds = spec->search.clouds, .n_clouds = spec->search.n_clouds,
                                      .regions = spec->search.regions, .n_regions = spec->search.n_regions,
                                      .prices = req->prices, .n_prices = req->n_prices,
                                      .noise_sd = req->trace_noise_sd, .seed = req->seed,
                                      .nic_gbps = req->trace_nic_gbps > 0 ? req->trace_nic_gbps : 0,
                                      .gpu_table = req->catalog->gpus, .n_gpu_table = req->catalog->n_gpus};
        st = cf_trace_runner_open(&cfg, &trace);
        if ((have_trace = st == CF_OK)) {
            /* Plan over a copy: planning may grow the list. */
            cands = malloc((trace.n ? trace.n : 1) * sizeof *cands);
            st = cands ? CF_OK : cf_error_set(CF_ERR_NOMEM, "out of memory");
            if (cands)
                memcpy(cands, trace.cands, trace.n * sizeof *cands);
            n_cands = trace.n;
            runner = cf_trace_runner_iface(&trace);
        }
    } else {
        st = catalog_candidates(req, &cands, &n_cands);
        if (st == CF_OK &&
            (have_exec = (st = cf_exec_runner_open(req->runner + 5, req->timeout_s, req->seed, &exec)) == CF_OK)) {
            exec.gpus = req->catalog->gpus;
            exec.n_gpus = req->catalog->n_gpus;
            runner = cf_exec_runner_iface(&exec);
        }
    }
    cf_search_profile_request rq = {.gpu = gpu->model, .instance_type = req->instance_type,
                                    .constraints = &spec->search, .from_trace = is_trace,
                                    .runner_multi_node = have_exec && cf_exec_runner_multi_node(&exec),
                                    .probe_nodes = req->probe_nodes > 0 ? req->probe_nodes : 0,
                                    .probe_gpus = req->probe_gpus > 0 ? req->probe_gpus : 0};
    cf_search_profile_plan plan;
    if (st == CF_OK && (st = cf_search_plan_profile(&rq, &cands, &n_cands, &plan)) != CF_OK)
        cf_error_prefix("%s", req->runner);
    if (st == CF_OK && plan.probe_skipped_why[0] && req->note) {
        char text[256];
        snprintf(text, sizeof text, "the 2-node × 1-GPU probe is skipped: %s", plan.probe_skipped_why);
        req->note(req->note_ctx, CF_NOTE_WARNING, text);
    }
    if (st == CF_OK && plan.probe_instead[0] && req->note) {
        char text[320];
        snprintf(text, sizeof text, "the 2-node × 1-GPU probe: %s", plan.probe_instead);
        req->note(req->note_ctx, CF_NOTE_INFO, text);
    }
    char key[65] = "";
    if (st == CF_OK)
        st = cf_spec_profile_key(spec, key);
    cf_search_candidate light[CF_SEARCH_PROFILE_MAX_RUNS], probe[2];
    if (st == CF_OK) {
        for (size_t i = 0; i < plan.n_light; i++)
            light[i] = cands[plan.light[i]];
        for (size_t i = 0; i < plan.n_probe; i++)
            probe[i] = cands[plan.probe[i]];
        res->n_light_planned = plan.n_light;
        cf_search_options defaults;
        cf_search_options_init(&defaults);
        cf_runner_profile_plan rp = {
            .light = light, .n_light = plan.n_light, .probe = probe, .n_probe = plan.n_probe,
            .probe_skipped_why = plan.probe_skipped_why[0] ? plan.probe_skipped_why : NULL,
            .profile_steps = req->probe_steps > 0 ? req->probe_steps : defaults.profile_steps,
            .probe_steps = req->probe_steps > 0 ? req->probe_steps : defaults.probe_steps,
            .warmup_steps = have_exec ? exec.warmup_steps : 0, .spec_name = spec->job.name, .spec_key = key,
            .backend = is_trace ? "trace" : "runner", .gpu = gpu, .runner_text = req->runner,
            .progress = req->progress, .progress_ctx = req->progress_ctx};
        st = cf_profile_through_runner(&rp, &runner, res->profile);
    }
    if (st == CF_OK && have_trace)
        trace_hardware(&trace, req->catalog, gpu, req->trace_nic_gbps, res->profile);
    free(cands);
    if (have_trace)
        cf_trace_runner_close(&trace);
    if (have_exec)
        cf_exec_runner_close(&exec);
    return st;
}

/* ---- on a local backend ----------------------------------------------------------- */

/* The newest stored profile of this spec key and backend, for resume:
 * CF_OK with *found = 0 when there is none. */
static cf_status stored_profile(const cf_profile_request *req, const char *spec_key, const char *key_before,
                                cf_profile *out, int *found)
{
    *found = 0;
    if (!req->db)
        return CF_OK; /* no database yet: nothing stored */
    const char *backend = req->backend->name;
    cf_cached_profile_list list = {0};
    cf_status st = cf_profile_cache_get_either(req->db, spec_key, key_before, &list);
    for (size_t i = 0; st == CF_OK && i < list.n && !*found; i++) {
        if (strcmp(list.rows[i].backend, backend) != 0)
            continue;
        st = cf_profile_from_json(list.rows[i].profile_json, out);
        if (st != CF_OK)
            cf_error_prefix("%s: the stored %s profile on %s", req->db_name ? req->db_name : "",
                            backend, list.rows[i].device);
        *found = st == CF_OK;
    }
    cf_profile_cache_list_free(&list);
    return st;
}

cf_status cf_profile_check_mode_options(const char *runner, int (*given)(const void *ctx, const char *long_name),
                                        const void *ctx)
{
    /* what a runner starts or a trace answers, and how it is measured */
    static const char *const runner_only[] = {"gpu",         "instance-type", "probe-steps",  "probe-nodes",
                                              "probe-gpus",  "trace-model",   "trace-noise",  "price",
                                              "trace-nic-gbps", "max-catalog-age-days", "cloud",
                                              "region", "max-nodes", "max-gpus"};
    static const char *const trace_only[] = {"trace-model", "trace-noise", "price", "trace-nic-gbps"};
    /* the noise-scale run is a local profile's; a runner measures step times */
    static const char *const backend_only[] = {"noise-steps", "noise-micro-batches"};
    int is_trace = runner && strncmp(runner, "trace:", 6) == 0;
    for (size_t i = 0; !runner && i < sizeof runner_only / sizeof *runner_only; i++)
        if (given(ctx, runner_only[i])) {
            int trace = 0;
            for (size_t j = 0; j < sizeof trace_only / sizeof *trace_only; j++)
                trace |= strcmp(trace_only[j], runner_only[i]) == 0;
            cf_error_set(CF_ERR_USAGE, "option '--%s' needs '--runner%s'", runner_only[i],
                         trace ? " trace:MEASUREMENTS.csv" : "");
            cf_error_hint(trace ? "a local --backend profile measures the device it runs on; a trace runner answers "
                                  "from measurements"
                                : "a local --backend profile measures the device it runs on; --runner starts VMs (or "
                                  "answers from a trace): cloudfit profile --runner RUNNER --gpu GPU MODEL.json");
            return CF_ERR_USAGE;
        }
    for (size_t i = 0; runner && !is_trace && i < sizeof trace_only / sizeof *trace_only; i++)
        if (given(ctx, trace_only[i])) {
            cf_error_set(CF_ERR_USAGE, "option '--%s' needs '--runner trace:MEASUREMENTS.csv'", trace_only[i]);
            cf_error_hint("the exec runner prices from the catalog and measures the VMs it starts");
            return CF_ERR_USAGE;
        }
    for (size_t i = 0; runner && i < sizeof backend_only / sizeof *backend_only; i++)
        if (given(ctx, backend_only[i])) {
            cf_error_set(CF_ERR_USAGE, "option '--%s' does not apply with '--runner'", backend_only[i]);
            cf_error_hint("a runner profile measures step times (the light profile and the probe); the noise-scale "
                          "run is a local --backend profile's (docs/profiler.md)");
            return CF_ERR_USAGE;
        }
    return CF_OK;
}

static cf_status on_backend(const cf_profile_request *req, cf_profile_result *res)
{
    const cf_spec *spec = req->spec;
    cf_profile *profile = res->profile;
    cf_profile_options po;
    cf_profile_options_init(&po);
    if (req->timeout_s > 0)
        po.probe.timeout_s = req->timeout_s;
    if (req->noise_steps > 0)
        po.noise_steps = req->noise_steps;
    if (req->noise_micro_batches != -1)
        po.noise_micro_batches = req->noise_micro_batches;
    if (req->seed > 0)
        po.seed = req->seed; /* the probe's CLOUDFIT_SEED, the engine's initialisation and data */
    /* the advisor keeps BLAS at 1 thread; the probe uses every CPU it may run on */
    po.probe.threads = cf_usable_cpus();
    po.progress = req->progress;
    po.progress_ctx = req->progress_ctx;
    po.probe.settings = &spec->probe;
    cf_status st = cf_spec_profile_key(spec, po.spec_key);
    if (st != CF_OK || !req->resume)
        return st == CF_OK ? cf_profile_sweep(req->backend, &spec->job, &po, profile) : st;
    int found = 0;
    char key_before[65]; /* a profile stored by an older version, under model.precision too */
    if ((st = cf_spec_profile_key_before_precision(spec, key_before)) != CF_OK ||
        (st = stored_profile(req, po.spec_key, key_before, profile, &found)) != CF_OK)
        return st;
    if (!found) {
        res->none_stored = 1;
        cf_error_set(CF_ERR_INVALID, "%s: no stored %s profile of '%s' to resume", spec->job.source,
                     req->backend->name, spec->job.name);
        cf_error_hint("run 'cloudfit profile' without --resume first; a profile is stored once its sweep succeeded");
        return CF_ERR_INVALID;
    }
    if (!profile->noise_failed) {
        res->nothing_to_resume = 1;
        return CF_OK;
    }
    /* A resumed noise run is the one that failed unless told otherwise. */
    if (req->noise_micro_batches == -1 && profile->noise_micro_batches >= 2)
        po.noise_micro_batches = profile->noise_micro_batches;
    if (req->noise_steps <= 0 && profile->noise_steps > 0)
        po.noise_steps = profile->noise_steps;
    return cf_profile_resume(req->backend, &spec->job, &po, profile);
}

/* The catalog's model of a profiled GPU, for the table and the CSV. */
static void catalog_gpu_model(const cf_profile *p, char *out, size_t n)
{
    out[0] = '\0';
    cf_catalog catalog;
    if (!p->device.is_gpu || cf_catalog_load_embedded(&catalog) != CF_OK) {
        cf_error_clear();
        return;
    }
    const cf_gpu *gpu = cf_catalog_gpu_resolve(&catalog, p->device.name);
    if (gpu)
        snprintf(out, n, "%s", gpu->model);
    cf_catalog_free(&catalog);
    cf_error_clear();
}

cf_status cf_profile_run(const cf_profile_request *req, cf_profile_result *out)
{
    memset(out, 0, sizeof *out);
    if (!(out->profile = calloc(1, sizeof *out->profile)))
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    cf_status st = req->runner ? through_runner(req, out) : on_backend(req, out);
    if (st == CF_OK || out->profile->noise_failed) {
        /* keep the failure's message: looking the GPU up clears the error */
        char message[1024], hint[512];
        snprintf(message, sizeof message, "%s", cf_error_message());
        snprintf(hint, sizeof hint, "%s", cf_error_hint_text());
        catalog_gpu_model(out->profile, out->gpu_model, sizeof out->gpu_model);
        if (st != CF_OK) {
            cf_error_set(st, "%s", message);
            if (hint[0])
                cf_error_hint("%s", hint);
        }
    }
    return st;
}

void cf_profile_result_free(cf_profile_result *out)
{
    free(out->profile);
    memset(out, 0, sizeof *out);
}

cf_status cf_profile_complete_stored(cf_db *db, const cf_profile *p, char *created_at, size_t n)
{
    if (n)
        created_at[0] = '\0';
    cf_cached_profile_list list = {0};
    cf_status st = cf_profile_cache_get(db, p->spec_key, &list);
    for (size_t i = 0; st == CF_OK && i < list.n && n; i++)
        if (strcmp(list.rows[i].backend, p->backend) == 0 && strcmp(list.rows[i].device, p->device.name) == 0 &&
            list.rows[i].b_noise > 0)
            snprintf(created_at, n, "%s", list.rows[i].created_at);
    cf_profile_cache_list_free(&list);
    return st;
}

cf_status cf_profile_store(cf_db *db, const cf_profile *p, char *kept_at, size_t n)
{
    if (kept_at && n)
        kept_at[0] = '\0';
    if (!p->has_noise && kept_at && n) {
        /* a sweep without a noise scale (its noise run failed, or measured
         * none: too few steps, out of memory at every micro-batch) does not
         * replace a complete profile of the same spec, backend and device:
         * its measured noise scale would be lost (docs/profiler.md, "The
         * profile cache") */
        cf_status st = cf_profile_complete_stored(db, p, kept_at, n);
        if (st != CF_OK || kept_at[0])
            return st;
    }
    char *json_text = cf_profile_to_json(p, 0);
    if (!json_text)
        return cf_error_set(CF_ERR_NOMEM, "out of memory rendering the profile");
    cf_cached_profile row = {p->spec_key, p->backend, p->device.name, p->spec_name, p->created_at,
                             p->device.is_gpu, p->has_noise ? p->b_noise : 0, p->max_local_batch, json_text};
    cf_status st = cf_profile_cache_put(db, &row);
    free(json_text);
    return st;
}
