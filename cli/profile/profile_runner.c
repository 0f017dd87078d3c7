/* cloudfit profile MODEL.json --runner RUNNER --gpu GPU [--instance-type T]
 * (docs/profiler.md "Profiling through a runner"): the light profile of one
 * GPU type through the runners of `cloudfit search` (cli/search_runners.h:
 * trace:CSV answers from measurements, exec:'TEMPLATE' starts the VMs) —
 * three per-GPU batches on one GPU and two on a full VM, chosen by
 * cf_search_light_profile exactly as the search chooses them — plus, when
 * the runner can start two nodes, the 2-node × 1-GPU probe (placement 11)
 * at the smallest and largest batch (cf_search_two_node_probe): the one
 * measurement that tells the effective inter-node bandwidth.
 *
 * A failed light-profile run (after one retry) fails the command and
 * nothing is stored. A probe that cannot run (the runner cannot start two
 * nodes, the trace has no placement-11 rows) or fails is not fatal: the
 * single-node profile is complete without it, so it is kept, the probe
 * status says why, and `recommend` falls back to the default bandwidth. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "io/catalog_source.h"
#include "cloudfit/common/clock.h"
#include "exit_codes.h"
#include "log.h"
#include "cloudfit/profiler/measurements.h"
#include "cloudfit/profiler.h"
#include "commands.h"
#include "profile/profile_runner.h"
#include "io/spec_load.h"
#include "search/search_runners.h"

typedef struct {
    const cf_cli_options *o;
    const cf_spec *spec;
    const cf_gpu *gpu;
    cf_search_candidate *cands;   /* trace: the runner's own; exec: owned, grown by the probe shapes */
    size_t n_cands;
    unsigned char *excluded;
    int can_two_nodes;            /* the runner can start 2 VMs at all */
    char cannot_why[200];         /* when it cannot */
    int is_trace;
} plan_ctx;

static int usage(const char *message, const char *hint)
{
    cf_log_error("%s", message);
    cf_log_hint("%s", hint);
    return CF_EXIT_USAGE;
}

/* Out of the plan: other GPU types, and with --instance-type the multi-GPU
 * shapes of other VMs (1-GPU runs may use a 1-GPU VM of the same GPU). */
static int mark_excluded(plan_ctx *x)
{
    const char *want = x->o->instance_type;
    size_t n_type = 0, n_instance = 0;
    for (size_t c = 0; c < x->n_cands; c++) {
        const cf_search_candidate *k = &x->cands[c];
        int other_type = strcasecmp(k->gpu, x->gpu->model) != 0;
        int other_vm = want && k->gpus_per_node > 1 && (!k->vm || strcmp(k->vm->instance_type, want) != 0);
        x->excluded[c] = (unsigned char)(other_type || other_vm);
        n_type += !other_type;
        n_instance += !other_type && want && k->vm && strcmp(k->vm->instance_type, want) == 0;
    }
    if (n_type == 0) {
        cf_error_set(CF_ERR_INVALID, "%s: no configuration of GPU '%s'", x->o->runner, x->gpu->model);
        cf_error_hint(x->is_trace ? "the trace has no priced rows of this GPU for this model (see --trace-model)"
                                  : "the catalog has no on-demand VM of this GPU within the spec's clouds/regions");
        return cf_report_error();
    }
    if (want && n_instance == 0) {
        cf_error_set(CF_ERR_INVALID, "%s: no configuration of GPU '%s' on instance type '%s'", x->o->runner,
                     x->gpu->model, want);
        cf_error_hint("'cloudfit prices --gpu %s' lists the instance types of this GPU", x->gpu->model);
        return cf_report_error();
    }
    return 0;
}

/* The exec runner starts whatever its template says: it can start two
 * nodes when the template passes {nodes} and the spec allows 2 nodes. The
 * catalog candidates have 2 × 1 GPU only for 1-GPU VMs: on a multi-GPU VM
 * the probe runs one GPU on each of two such VMs (placement 11, as in the
 * Pollux data), so add those shapes. */
static int exec_probe_shapes(plan_ctx *x, const cf_exec_runner *e)
{
    int has_nodes = 0;
    for (int i = 0; i < e->n_words; i++)
        has_nodes |= strstr(e->words[i], "{nodes}") != NULL;
    if (!has_nodes) {
        snprintf(x->cannot_why, sizeof x->cannot_why,
                 "the exec template has no {nodes} placeholder, so it cannot start two nodes");
        return 0;
    }
    if (x->spec->search.max_nodes < 2 || x->spec->search.max_gpus < 2) {
        snprintf(x->cannot_why, sizeof x->cannot_why, "the spec allows %s (search.max_nodes / max_gpus)",
                 x->spec->search.max_nodes < 2 ? "one node" : "one GPU");
        return 0;
    }
    x->can_two_nodes = 1;
    size_t extra = 0;
    for (size_t c = 0; c < x->n_cands; c++)
        extra += x->cands[c].nodes == 1 && x->cands[c].gpus_per_node == 1 && !x->excluded[c];
    cf_search_candidate *grown = realloc(x->cands, (x->n_cands + extra + 1) * sizeof *grown);
    unsigned char *ex = realloc(x->excluded, x->n_cands + extra + 1);
    if (grown)
        x->cands = grown;
    if (ex)
        x->excluded = ex;
    if (!grown || !ex) {
        cf_error_set(CF_ERR_NOMEM, "out of memory");
        return cf_report_error();
    }
    size_t n = x->n_cands;
    for (size_t c = 0; c < n; c++) {
        const cf_search_candidate *k = &x->cands[c];
        if (k->nodes != 1 || k->gpus_per_node != 1 || x->excluded[c])
            continue;
        int have = 0;
        for (size_t q = 0; q < x->n_cands && !have; q++)
            have = x->cands[q].nodes == 2 && x->cands[q].gpus_per_node == 1 && x->cands[q].vm == k->vm &&
                   x->cands[q].local_batch == k->local_batch;
        if (have)
            continue;
        x->cands[x->n_cands] = *k;
        x->cands[x->n_cands].nodes = 2;
        x->excluded[x->n_cands++] = 0;
    }
    return 0;
}

static int trace_probe_shapes(plan_ctx *x)
{
    for (size_t c = 0; c < x->n_cands; c++)
        if (!x->excluded[c] && x->cands[c].nodes == 2 && x->cands[c].gpus_per_node == 1) {
            x->can_two_nodes = 1;
            return 0;
        }
    snprintf(x->cannot_why, sizeof x->cannot_why,
             "the trace has no 2-node × 1-GPU rows (placement 11) of %s for this model", x->gpu->model);
    return 0;
}

/* One run with one retry, as the search does. */
static cf_status run_once_or_twice(const cf_search_runner *r, const cf_search_candidate *c, int steps, double *out)
{
    cf_status st = r->probe(r->ctx, c, steps, out);
    if (st != CF_OK) {
        cf_log_warning("run failed (%s); retrying once", cf_error_message());
        cf_error_clear();
        st = r->probe(r->ctx, c, steps, out);
    }
    if (st == CF_OK && !(*out > 0 && isfinite(*out)))
        st = cf_error_set(CF_ERR_UNAVAILABLE, "the runner reported step time %g s", *out);
    return st;
}

static void add_run(cf_profile *p, const cf_search_candidate *c, double step_s, const char *kind)
{
    cf_profile_run_row *r = &p->runs[p->n_runs++];
    r->nodes = c->nodes;
    r->gpus_per_node = c->gpus_per_node;
    r->hw_gpus_per_node = c->vm && c->vm->gpu_count > 0 ? c->vm->gpu_count : c->gpus_per_node;
    r->local_batch = c->local_batch;
    r->step_time_s = step_s;
    r->network_gbps = c->network_gbps;
    snprintf(r->cloud, sizeof r->cloud, "%s", c->vm ? c->vm->cloud : "");
    snprintf(r->instance_type, sizeof r->instance_type, "%s", c->vm ? c->vm->instance_type : "");
    snprintf(r->kind, sizeof r->kind, "%s", kind);
}

static const char *shape_text(const cf_search_candidate *c, char *buf, size_t n)
{
    snprintf(buf, n, "%d node%s × %d GPU%s, batch %d%s%s", c->nodes, c->nodes == 1 ? "" : "s", c->gpus_per_node,
             c->gpus_per_node == 1 ? "" : "s", c->local_batch, c->vm ? " on " : "", c->vm ? c->vm->instance_type : "");
    return buf;
}

/* The trace runner prices each configuration on the cheapest catalog VM
 * with that many GPUs (a 2 × 1 probe on 1-GPU VMs), but the trace rows say
 * which VM they were measured on (hw_gpus_per_node: Pollux ran placement
 * 11 on 4-GPU g4dn.12xlarge VMs). The NIC the probe measured is that VM's,
 * so the profile records the trace's hardware: the VM of the same cloud
 * with hw_gpus_per_node GPUs of this type. */
static void trace_hardware(const plan_ctx *x, const cf_catalog *catalog, const char *path, const char *model,
                           cf_profile *p)
{
    cf_measurement_set set;
    if (cf_measurements_load(path, &set) != CF_OK) {
        cf_error_clear(); /* the runner read it already; keep the priced VMs */
        return;
    }
    for (int i = 0; i < p->n_runs; i++) {
        cf_profile_run_row *r = &p->runs[i];
        int hw = 0;
        for (size_t k = 0; k < set.n_rows && !hw; k++) {
            const cf_measurement *m = &set.rows[k];
            if (!strcmp(m->model, model) && !strcasecmp(m->gpu, x->gpu->model) && m->num_nodes == r->nodes &&
                m->num_gpus == r->nodes * r->gpus_per_node && m->local_bsz == r->local_batch)
                hw = m->hw_gpus_per_node;
        }
        if (hw <= 0 || hw == r->hw_gpus_per_node)
            continue;
        const cf_vm *best = NULL;
        for (size_t v = 0; v < catalog->n_vms; v++) {
            const cf_vm *vm = &catalog->vms[v];
            if (strcasecmp(vm->gpu_model, x->gpu->model) || vm->gpu_count != hw || !(vm->price_ondemand_usd_per_hr > 0))
                continue;
            int pref = !strcmp(vm->cloud, r->cloud), best_pref = best && !strcmp(best->cloud, r->cloud);
            if (!best || pref > best_pref ||
                (pref == best_pref && vm->price_ondemand_usd_per_hr < best->price_ondemand_usd_per_hr))
                best = vm;
        }
        r->hw_gpus_per_node = hw;
        if (best) {
            r->network_gbps = best->network_gbps;
            snprintf(r->instance_type, sizeof r->instance_type, "%s", best->instance_type);
        }
    }
    cf_measurements_free(&set);
}

/* Runs the plan and fills the profile. */
static int run_plan(plan_ctx *x, const cf_search_runner *runner, cf_profile *p)
{
    cf_search_options defaults;
    cf_search_options_init(&defaults);
    int profile_steps = x->o->probe_steps > 0 ? x->o->probe_steps : defaults.profile_steps;
    int probe_steps = x->o->probe_steps > 0 ? x->o->probe_steps : defaults.probe_steps;
    size_t light[CF_SEARCH_PROFILE_MAX_RUNS], n_light = 0, probe[2], n_probe = 0;
    if (cf_search_light_profile(x->cands, x->n_cands, x->gpu->model, x->excluded, light, &n_light) != CF_OK ||
        (x->can_two_nodes &&
         cf_search_two_node_probe(x->cands, x->n_cands, x->gpu->model, x->excluded, probe, &n_probe) != CF_OK))
        return cf_report_error();
    size_t n_single = 0;
    for (size_t i = 0; i < n_light; i++)
        n_single += x->cands[light[i]].gpus_per_node == 1;
    if (n_single < 2) {
        cf_error_set(CF_ERR_INVALID, "%s: fewer than 2 single-GPU batch sizes of %s to profile", x->o->runner,
                     x->gpu->model);
        cf_error_hint(x->is_trace ? "the trace needs 1-node × 1-GPU rows (placement 1) at two batches or more"
                                  : "give profile.local_batches at least two batch sizes");
        return cf_report_error();
    }
    size_t total = n_light + n_probe;
    char what[160];
    for (size_t i = 0; i < n_light; i++) {
        const cf_search_candidate *c = &x->cands[light[i]];
        double t = 0;
        if (!x->o->quiet)
            cf_log_info("profile: [%zu/%zu] %s", i + 1, total, shape_text(c, what, sizeof what));
        if (run_once_or_twice(runner, c, profile_steps, &t) != CF_OK) {
            cf_error_prefix("light profile run %s", shape_text(c, what, sizeof what));
            int rc = cf_report_error();
            cf_log_info("nothing was stored: the light profile is kept only when every run succeeded");
            return rc;
        }
        add_run(p, c, t, "profile");
        if (c->gpus_per_node == 1 && p->n_points < CF_PROFILE_MAX_POINTS) {
            cf_profile_point *pt = &p->points[p->n_points++];
            *pt = (cf_profile_point){.local_batch = c->local_batch, .step_time_s = t, .min_s = t, .max_s = t,
                                     .n_timed = profile_steps};
        }
    }
    if (!x->can_two_nodes) {
        snprintf(p->probe_status, sizeof p->probe_status, "skipped");
        snprintf(p->probe_note, sizeof p->probe_note, "%s", x->cannot_why);
    } else if (n_probe == 0) {
        snprintf(p->probe_status, sizeof p->probe_status, "skipped");
        snprintf(p->probe_note, sizeof p->probe_note, "no 2-node × 1-GPU configuration of %s within the spec's limits",
                 x->gpu->model);
    } else {
        snprintf(p->probe_status, sizeof p->probe_status, "measured");
        for (size_t i = 0; i < n_probe; i++) {
            const cf_search_candidate *c = &x->cands[probe[i]];
            double t = 0;
            if (!x->o->quiet)
                cf_log_info("profile: [%zu/%zu] 2-node probe: %s", n_light + i + 1, total,
                            shape_text(c, what, sizeof what));
            if (run_once_or_twice(runner, c, probe_steps, &t) != CF_OK) {
                snprintf(p->probe_status, sizeof p->probe_status, "failed");
                snprintf(p->probe_note, sizeof p->probe_note, "%s: %s", shape_text(c, what, sizeof what),
                         cf_error_message());
                cf_error_clear();
                break;
            }
            add_run(p, c, t, "probe");
        }
        if (!strcmp(p->probe_status, "measured")) {
            int len = snprintf(p->probe_note, sizeof p->probe_note, "2 nodes × 1 GPU (placement 11) at per-GPU batch");
            for (int i = 0; i < p->n_runs; i++)
                if (!strcmp(p->runs[i].kind, "probe") && len > 0 && (size_t)len < sizeof p->probe_note)
                    len += snprintf(p->probe_note + len, sizeof p->probe_note - (size_t)len, " %d",
                                    p->runs[i].local_batch);
        }
    }
    return 0;
}

static int by_batch(const void *a, const void *b)
{
    return ((const cf_profile_point *)a)->local_batch - ((const cf_profile_point *)b)->local_batch;
}

static void finish_profile(const plan_ctx *x, cf_profile *p)
{
    snprintf(p->spec_name, sizeof p->spec_name, "%s", x->spec->job.name);
    snprintf(p->backend, sizeof p->backend, "%s", x->is_trace ? "trace" : "runner");
    snprintf(p->device.name, sizeof p->device.name, "%s", x->gpu->model);
    p->device.memory_gib = x->gpu->memory_gib;
    p->device.gpus = 1;
    p->device.is_gpu = 1;
    cf_now_iso8601(p->created_at, sizeof p->created_at);
    cf_search_options defaults;
    cf_search_options_init(&defaults);
    p->steps = x->o->probe_steps > 0 ? x->o->probe_steps : defaults.profile_steps;
    p->warmup_steps = x->is_trace ? 0 : 3; /* cf_exec_runner_open's warm-up */
    qsort(p->points, (size_t)p->n_points, sizeof *p->points, by_batch);
    for (int i = 0; i < p->n_runs; i++)
        if (p->runs[i].local_batch > p->max_local_batch && p->runs[i].nodes == 1)
            p->max_local_batch = p->runs[i].local_batch;
    if (cf_profile_fit(p) != CF_OK)
        cf_error_clear(); /* has_fit stays 0; the table says so */
    snprintf(p->noise_error, sizeof p->noise_error,
             "a runner profile measures step times only; 'cloudfit profile --backend cpu|cuda|exec' measures it");
    const char *r = x->o->runner;
    snprintf(p->runner, sizeof p->runner, "%.150s%s", r, strlen(r) > 150 ? "…" : "");
}

int cf_profile_with_runner(const cf_cli_options *o, const cf_spec *spec, cf_profile *out)
{
    if (strncmp(o->runner, "trace:", 6) && strncmp(o->runner, "exec:", 5))
        return usage("option '--runner' expects trace:MEASUREMENTS.csv or exec:'COMMAND TEMPLATE'",
                     "see 'cloudfit profile --help' and docs/profiler.md");
    if (o->backend)
        return usage("options '--runner' and '--backend' exclude each other",
                     "--backend profiles one local device; --runner starts VMs (or answers from a trace)");
    if (o->gpus.n != 1)
        return usage("option '--runner' needs exactly one --gpu GPU (the GPU type to profile)",
                     "e.g. cloudfit profile model.json --runner trace:runs.csv --gpu T4");
    double noise = o->trace_noise ? cf_cli_parse_fraction(o->trace_noise) : 0.02;
    if (noise < 0)
        return usage("option '--trace-noise' expects a fraction or a percentage (e.g. 2%)", "e.g. --trace-noise 0");
    cf_catalog_source src;
    int rc = cf_catalog_source_open(o, 0, &src);
    if (rc)
        return rc;
    plan_ctx x = {.o = o, .spec = spec, .is_trace = strncmp(o->runner, "trace:", 6) == 0};
    x.gpu = cf_catalog_gpu(&src.catalog, o->gpus.items[0]);
    if (!x.gpu) {
        cf_log_error("option '--gpu': unknown GPU model '%s'", o->gpus.items[0]);
        cf_log_hint("use a GPU name from the catalog (see docs/catalog.md), e.g. T4, A100-80GB, H100");
        cf_catalog_source_close(&src);
        return CF_EXIT_USAGE;
    }
    cf_trace_runner t;
    cf_exec_runner e;
    int have_trace = 0, have_exec = 0;
    cf_search_runner runner = {0};
    if (x.is_trace) {
        const char *model = o->trace_model ? o->trace_model : spec->job.name;
        rc = cf_trace_runner_open(o->runner + 6, model, &src.catalog, spec, NULL, 0, noise,
                                  o->seed > 0 ? (unsigned long)o->seed : 1, &t);
        if (rc == 0) {
            have_trace = 1;
            x.n_cands = t.n;
            x.cands = t.cands; /* the trace runner finds a probe's answer by its address */
            runner = cf_trace_runner_iface(&t);
        }
    } else {
        const char *gpu_name = x.gpu->model;
        const char *clouds[CF_SPEC_MAX_LIST], *regions[CF_SPEC_MAX_LIST];
        for (int i = 0; i < spec->search.n_clouds; i++) clouds[i] = spec->search.clouds[i];
        for (int i = 0; i < spec->search.n_regions; i++) regions[i] = spec->search.regions[i];
        cf_catalog_filter filter = {clouds, (size_t)spec->search.n_clouds, regions, (size_t)spec->search.n_regions, &gpu_name, 1,
                                    CF_SPOT_NEVER};
        const cf_vm **rows = malloc((src.catalog.n_vms ? src.catalog.n_vms : 1) * sizeof *rows);
        size_t n_rows = rows ? cf_catalog_filter_rows(&src.catalog, &filter, rows) : 0, kept = 0;
        for (size_t i = 0; i < n_rows; i++) /* --instance-type: every run on that VM type */
            if (!o->instance_type || !strcmp(rows[i]->instance_type, o->instance_type))
                rows[kept++] = rows[i];
        if (!rows)
            cf_error_set(CF_ERR_NOMEM, "out of memory");
        if (!rows || cf_exec_candidates(spec, rows, kept, &x.cands, &x.n_cands) != CF_OK)
            rc = cf_report_error();
        free(rows);
        if (rc == 0 && !(rc = cf_exec_runner_open(o->runner + 5, o->timeout_s, o->seed > 0 ? (unsigned long)o->seed : 1,
                                                  &e))) {
            have_exec = 1;
            runner = cf_exec_runner_iface(&e);
        }
    }
    if (rc == 0) {
        x.excluded = calloc(x.n_cands ? x.n_cands : 1, 1);
        if (!x.cands || !x.excluded) {
            cf_error_set(CF_ERR_NOMEM, "out of memory");
            rc = cf_report_error();
        }
    }
    if (rc == 0)
        rc = mark_excluded(&x);
    if (rc == 0)
        rc = x.is_trace ? trace_probe_shapes(&x) : exec_probe_shapes(&x, &e);
    if (rc == 0 && !x.can_two_nodes && !o->quiet)
        cf_log_warning("the 2-node × 1-GPU probe is skipped: %s", x.cannot_why);
    memset(out, 0, sizeof *out);
    if (rc == 0 && cf_spec_profile_key(spec, out->spec_key) != CF_OK)
        rc = cf_report_error();
    if (rc == 0)
        rc = run_plan(&x, &runner, out);
    if (rc == 0 && x.is_trace)
        trace_hardware(&x, &src.catalog, o->runner + 6, o->trace_model ? o->trace_model : spec->job.name, out);
    if (rc == 0)
        finish_profile(&x, out);
    if (!x.is_trace)
        free(x.cands);
    free(x.excluded);
    if (have_trace)
        cf_trace_runner_close(&t);
    if (have_exec)
        cf_exec_runner_close(&e);
    cf_catalog_source_close(&src);
    return rc;
}
