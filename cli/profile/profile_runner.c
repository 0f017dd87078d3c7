/* cloudfit profile MODEL.json --runner RUNNER --gpu GPU [--instance-type T]
 * (docs/profiler.md "Profiling through a runner"): opens the runner
 * (profiler/runners.h), plans the light profile and the 2-node probe
 * (cf_search_plan_profile, as the search chooses them) and runs them
 * (cf_profile_through_runner). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/advisor/search.h"
#include "cloudfit/pricing/offer_pick.h"
#include "cloudfit/profiler/runners.h"
#include "commands.h"
#include "exit_codes.h"
#include "io/catalog_source.h"
#include "io/spec_load.h"
#include "log.h"
#include "profile/profile_runner.h"
#include "term/progress.h"

static int usage(const char *message, const char *hint)
{
    cf_log_error("%s", message);
    cf_log_hint("%s", hint);
    return CF_EXIT_USAGE;
}

/* The VM a trace row of this shape really ran on (the trace says how many
 * GPUs it had): the NIC the probe measured is that VM's. */
static void trace_hardware(const cf_trace_runner *t, const cf_catalog *catalog, const cf_gpu *gpu, cf_profile *p)
{
    for (int i = 0; i < p->n_runs; i++) {
        cf_profile_run_row *r = &p->runs[i];
        int hw = cf_trace_runner_hw_gpus(t, gpu->model, r->nodes, r->gpus_per_node, r->local_batch);
        if (hw <= 0 || hw == r->hw_gpus_per_node)
            continue;
        const cf_vm *best = cf_offer_for_hardware(catalog, gpu->model, hw, r->cloud);
        r->hw_gpus_per_node = hw;
        if (best) {
            r->network_gbps = best->network_gbps;
            snprintf(r->instance_type, sizeof r->instance_type, "%s", best->instance_type);
        }
    }
}

/* The exec runner's candidates: the catalog's offers of the GPU, on the
 * instance type when one is given. */
static cf_status catalog_candidates(const cf_cli_options *o, const cf_spec *spec, const cf_catalog *catalog,
                                    const cf_gpu *gpu, cf_search_candidate **cands, size_t *n)
{
    cf_catalog_filter_storage fs;
    cf_catalog_filter_from(&spec->search, CF_SPOT_NEVER, &fs);
    const char *gpu_name = gpu->model;
    fs.filter.gpus = &gpu_name;
    fs.filter.n_gpus = 1;
    const cf_vm **rows = malloc((catalog->n_vms ? catalog->n_vms : 1) * sizeof *rows);
    if (!rows)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    size_t n_rows = cf_catalog_filter_rows(catalog, &fs.filter, rows), kept = 0;
    for (size_t i = 0; i < n_rows; i++)
        if (!o->instance_type || !strcmp(rows[i]->instance_type, o->instance_type))
            rows[kept++] = rows[i];
    cf_status st = cf_search_catalog_candidates(&spec->search, spec->probe.local_batches, spec->probe.n_local_batches,
                                                rows, kept, cands, n);
    free(rows);
    return st;
}

int cf_profile_with_runner(const cf_cli_options *o, const cf_spec *spec, cf_profile *out)
{
    int is_trace = strncmp(o->runner, "trace:", 6) == 0;
    if (!is_trace && strncmp(o->runner, "exec:", 5))
        return usage("option '--runner' expects trace:MEASUREMENTS.csv or exec:'COMMAND TEMPLATE'",
                     "see 'cloudfit profile --help' and docs/profiler.md");
    if (o->backend)
        return usage("options '--runner' and '--backend' exclude each other",
                     "--backend profiles one local device; --runner starts VMs (or answers from a trace)");
    if (o->probe_nodes == 0 || o->probe_nodes == 1 || o->probe_gpus == 0)
        return usage(o->probe_gpus == 0 ? "option '--probe-gpus' expects a positive number of GPUs per VM"
                                        : "option '--probe-nodes' expects 2 or more VMs",
                     "e.g. --probe-nodes 4 --probe-gpus 8 (a probe runs across VMs)");
    if (o->gpus.n != 1)
        return usage("option '--runner' needs exactly one --gpu GPU (the GPU type to profile)",
                     "e.g. cloudfit profile model.json --runner trace:runs.csv --gpu T4");
    double noise = o->trace_noise ? cf_cli_parse_fraction(o->trace_noise) : 0.02;
    if (noise < 0)
        return usage("option '--trace-noise' expects a fraction or a percentage (e.g. 2%)", "e.g. --trace-noise 0");
    cf_catalog_source src;
    int rc = cf_cli_catalog_open(o, 0, &src);
    if (rc)
        return rc;
    const cf_gpu *gpu = cf_catalog_gpu(&src.catalog, o->gpus.items[0]);
    if (!gpu) {
        cf_catalog_source_close(&src);
        cf_log_error("option '--gpu': unknown GPU model '%s'", o->gpus.items[0]);
        cf_log_hint("use a GPU name from the catalog (see docs/catalog.md), e.g. T4, A100-80GB, H100");
        return CF_EXIT_USAGE;
    }
    unsigned long seed = o->seed > 0 ? (unsigned long)o->seed : 1;
    cf_trace_runner trace;
    cf_exec_runner exec;
    int have_trace = 0, have_exec = 0;
    cf_search_candidate *cands = NULL;
    size_t n_cands = 0;
    cf_search_runner runner = {0};
    cf_status st;
    if (is_trace) {
        cf_trace_runner_config cfg = {.path = o->runner + 6, .model = o->trace_model ? o->trace_model : spec->job.name,
                                      .vms = src.catalog.vms, .n_vms = src.catalog.n_vms,
                                      .clouds = spec->search.clouds, .n_clouds = spec->search.n_clouds,
                                      .noise_sd = noise, .seed = seed};
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
        st = catalog_candidates(o, spec, &src.catalog, gpu, &cands, &n_cands);
        if (st == CF_OK && (have_exec = (st = cf_exec_runner_open(o->runner + 5, o->timeout_s, seed, &exec)) == CF_OK))
            runner = cf_exec_runner_iface(&exec);
    }
    cf_search_profile_request rq = {.gpu = gpu->model, .instance_type = o->instance_type,
                                    .constraints = &spec->search, .from_trace = is_trace,
                                    .runner_multi_node = have_exec && cf_exec_runner_multi_node(&exec),
                                    .probe_nodes = o->probe_nodes > 0 ? o->probe_nodes : 0,
                                    .probe_gpus = o->probe_gpus > 0 ? o->probe_gpus : 0};
    cf_search_profile_plan plan;
    if (st == CF_OK && (st = cf_search_plan_profile(&rq, &cands, &n_cands, &plan)) != CF_OK)
        cf_error_prefix("%s", o->runner);
    if (st == CF_OK && plan.probe_skipped_why[0] && !o->quiet)
        cf_log_warning("the 2-node × 1-GPU probe is skipped: %s", plan.probe_skipped_why);
    char key[65] = "";
    if (st == CF_OK)
        st = cf_spec_profile_key(spec, key);
    cf_search_candidate light[CF_SEARCH_PROFILE_MAX_RUNS], probe[2];
    if (st == CF_OK) {
        for (size_t i = 0; i < plan.n_light; i++)
            light[i] = cands[plan.light[i]];
        for (size_t i = 0; i < plan.n_probe; i++)
            probe[i] = cands[plan.probe[i]];
        cf_search_options defaults;
        cf_search_options_init(&defaults);
        cf_cli_progress view; /* a bar on a terminal, plain lines otherwise (term/progress.c) */
        cf_cli_progress_begin(&view, o, "profile");
        cf_runner_profile_plan rp = {
            .light = light, .n_light = plan.n_light, .probe = probe, .n_probe = plan.n_probe,
            .probe_skipped_why = plan.probe_skipped_why[0] ? plan.probe_skipped_why : NULL,
            .profile_steps = o->probe_steps > 0 ? o->probe_steps : defaults.profile_steps,
            .probe_steps = o->probe_steps > 0 ? o->probe_steps : defaults.probe_steps,
            .warmup_steps = have_exec ? exec.warmup_steps : 0, .spec_name = spec->job.name, .spec_key = key,
            .backend = is_trace ? "trace" : "runner", .gpu = gpu, .runner_text = o->runner,
            .progress = cf_cli_progress_runs_cb, .progress_ctx = &view};
        st = cf_profile_through_runner(&rp, &runner, out);
        cf_cli_progress_end(&view);
        if (st != CF_OK && plan.n_light && !o->quiet)
            cf_log_info("nothing was stored: the light profile is kept only when every run succeeded");
    }
    if (st == CF_OK && have_trace)
        trace_hardware(&trace, &src.catalog, gpu, out);
    rc = st == CF_OK ? 0 : cf_report_error();
    free(cands);
    if (have_trace)
        cf_trace_runner_close(&trace);
    if (have_exec)
        cf_exec_runner_close(&exec);
    cf_catalog_source_close(&src);
    return rc;
}
