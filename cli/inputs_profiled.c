/* `cloudfit profile` → `recommend`: profiles cached in the database for
 * this spec's key (cf_profile_spec_key) feed the advisor's inputs.
 *
 * What a profile can honestly tell a GPU recommendation:
 *  - the gradient noise scale, always: it is a property of the model, the
 *    data and the training state, not of the hardware, so a CPU run
 *    measures the same B_noise a GPU run would (same model, data, seed);
 *  - throughput only when the device was a GPU that the catalog knows
 *    (device name → GPU model): then t_c(m) = α + β·m and the memory
 *    ceiling are that GPU's measured figures, and other GPU types are
 *    carried over from it by the roofline model. A CPU's step times say
 *    nothing about a GPU's and are not used (the output says so).
 * Measured numbers override the spec's inline ones and the estimates. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cloudfit/log.h"
#include "cloudfit/profile_cache.h"
#include "cloudfit/profiler.h"
#include "inputs.h"

static const char *profile_db_path; /* NULL = the default database */
static int profile_cache_enabled;

void cf_inputs_use_profile_cache(const char *db_path)
{
    profile_db_path = db_path;
    profile_cache_enabled = 1;
}

static void use_noise(const cf_spec *spec, const cf_profile *p, cf_inputs *in)
{
    double total = spec->total_samples > 0 ? spec->total_samples : spec->samples_per_epoch;
    double covered = total > 0 ? p->noise_samples / total : 0;
    if (spec->n_noise_trace > 0 && spec->noise_trace[spec->n_noise_trace - 1].progress > covered) {
        cf_inputs_add_note(in, "the cached %s profile measured a noise scale of %.0f ± %.0f over the first %.2g%% of training; the "
                 "spec's trace covers more of training and is kept", p->backend, p->b_noise, p->b_noise_stderr,
             100 * covered);
        return;
    }
    cf_noise_point trace[CF_PROFILE_MAX_TRACE];
    int n = 0;
    for (int i = 0; i < p->n_noise_trace && total > 0; i++) {
        double progress = p->noise_trace[i].progress / total;
        if (progress > 1)
            break;
        trace[n++] = (cf_noise_point){progress, p->noise_trace[i].b_noise};
    }
    if (n >= 2)
        cf_noise_model_init(&in->noise, spec->batch, 0, trace, n, CF_PROV_MEASURED);
    else
        cf_noise_model_init(&in->noise, spec->batch, p->b_noise, NULL, 0, CF_PROV_MEASURED);
    snprintf(in->noise_note, sizeof in->noise_note,
             "%.0f ± %.0f measured by 'cloudfit profile' (%s backend, %s; %d steps of %d micro-batches × %d, %.2g%% of "
             "training, held constant after)",
             p->b_noise, p->b_noise_stderr, p->backend, p->created_at, p->noise_steps, p->noise_micro_batches,
             p->noise_local_batch, 100 * covered);
    /* The note about a default noise scale no longer applies. */
    for (int i = 0; i < in->n_notes; i++)
        if (strstr(in->notes[i], "noise scale is a default")) {
            memmove(in->notes[i], in->notes[i + 1], (size_t)(in->n_notes - i - 1) * sizeof in->notes[0]);
            in->n_notes--;
            i--;
        }
}

/* A runner profile (`cloudfit profile --runner`): its runs as measurement
 * rows — 1 GPU, a full VM and the 2-node × 1-GPU probe — fitted like the
 * spec's measurements CSV (cf_inputs_fit_rows), so the probe's two rows
 * identify the effective inter-node bandwidth (provenance "fitted").
 * Returns 0 when the fit failed (the caller falls back to α + β·m). */
static int use_runner_runs(const cf_spec *spec, const cf_gpu *gpu, const cf_profile *p, cf_gpu_perf *perf,
                           cf_perf_fit_report *rep, cf_inputs *in)
{
    cf_measurement rows[CF_PROFILE_MAX_RUNS];
    double probe_nic_gbps = 0;
    const char *probe_vm = "";
    char batches[64] = "";
    size_t len = 0;
    for (int i = 0; i < p->n_runs; i++) {
        const cf_profile_run_row *r = &p->runs[i];
        cf_measurement *m = &rows[i];
        memset(m, 0, sizeof *m);
        snprintf(m->model, sizeof m->model, "%.63s", p->spec_name);
        snprintf(m->gpu, sizeof m->gpu, "%s", gpu->model);
        for (int n = 0; n < r->nodes && n < (int)sizeof m->placement - 1; n++)
            m->placement[n] = (char)('0' + r->gpus_per_node % 10);
        m->hw_gpus_per_node = r->hw_gpus_per_node;
        m->num_nodes = r->nodes;
        m->num_gpus = r->nodes * r->gpus_per_node;
        m->local_bsz = r->local_batch;
        m->step_time_s = r->step_time_s;
        m->sync_time_s = -1;
        m->line = i + 1;
        if (r->nodes > 1) {
            probe_nic_gbps = r->network_gbps;
            probe_vm = r->instance_type;
            if (len < sizeof batches)
                len += (size_t)snprintf(batches + len, sizeof batches - len, "%s%d", len ? ", " : "", r->local_batch);
        }
    }
    if (cf_inputs_fit_rows(spec, gpu, rows, (size_t)p->n_runs, probe_nic_gbps, perf, rep) != CF_OK) {
        cf_inputs_add_note(in, "the %s profile's runs on %s could not be fitted (%s): only t_c(m) = α + β·m is used",
                           p->backend, gpu->model, cf_error_message());
        cf_error_clear();
        return 0;
    }
    snprintf(perf->note, sizeof perf->note, "measured by 'cloudfit profile --runner' (%s, %s): %zu runs (%zu single-GPU, "
             "%zu multi-GPU, %zu multi-node), rms error %.1f%%", p->backend, p->created_at, rep->n_rows,
             rep->n_single_gpu, rep->n_multi_gpu_node, rep->n_multi_node, 100 * rep->rel_rmse);
    if (rep->fitted_inter) {
        char nic[40] = "";
        if (probe_nic_gbps > 0)
            snprintf(nic, sizeof nic, ", %g Gbit/s NIC", probe_nic_gbps);
        snprintf(perf->network_note, sizeof perf->network_note,
                 "measured probe: 2 nodes × 1 GPU at per-GPU batch %s on %s%s ('cloudfit profile --runner', %s)",
                 batches, probe_vm[0] ? probe_vm : "the runner's VMs", nic, p->created_at);
    } else {
        cf_inputs_add_note(in, "the cached %s profile of %s has no 2-node probe (%s%s%s): the inter-node bandwidth is "
                           "not measured", p->backend, gpu->model, p->probe_status[0] ? p->probe_status : "not run",
                           p->probe_note[0] ? ": " : "", p->probe_note);
    }
    return 1;
}

/* A measured GPU profile becomes that GPU type's parameters. */
static void use_throughput(const cf_spec *spec, const cf_catalog *catalog, const cf_profile *p, size_t cap,
                           cf_inputs *in)
{
    if (!p->device.is_gpu) {
        if (p->has_fit)
            cf_inputs_add_note(in, "the %s profile's step times (t_c(m) = %.3g + %.3g·m s on %s) are CPU times and are not used "
                     "for GPU throughput", p->backend, p->alpha_s, p->beta_s, p->device.name);
        return;
    }
    const cf_gpu *gpu = cf_catalog_gpu_resolve(catalog, p->device.name);
    if (!gpu) {
        cf_inputs_add_note(in, "the %s profile ran on '%s', which is not a GPU model of the catalog: its throughput is not used",
             p->backend, p->device.name);
        return;
    }
    if (!p->has_fit || p->device.gpus != 1) {
        cf_inputs_add_note(in, "the %s profile on %s has %s: its throughput is not used", p->backend, gpu->model,
             p->device.gpus != 1 ? "several GPUs per step" : "fewer than 2 batch sizes");
        return;
    }
    size_t k;
    for (k = 0; k < in->n_perf; k++)
        if (strcasecmp(in->perf[k].gpu, gpu->model) == 0)
            break;
    if (k == in->n_perf) {
        if (k >= cap)
            return;
        in->n_perf++;
    }
    cf_gpu_perf *perf = &in->perf[k];
    memset(perf, 0, sizeof *perf);
    memset(&in->fits[k], 0, sizeof in->fits[k]);
    snprintf(perf->gpu, sizeof perf->gpu, "%s", gpu->model);
    cf_perf_params *q = &perf->params;
    if (p->n_runs > 0 && use_runner_runs(spec, gpu, p, perf, &in->fits[k], in)) {
        /* A runner sees no out-of-memory answer: the largest batch run is a lower bound. */
        int estimate = cf_estimate_max_local_batch(spec, gpu->memory_gib, NULL, 0);
        q->max_local_batch = estimate > p->max_local_batch ? estimate : p->max_local_batch;
        q->memory_provenance = estimate > p->max_local_batch ? CF_PROV_ESTIMATED : CF_PROV_MEASURED;
        return;
    }
    memset(perf, 0, sizeof *perf);
    memset(&in->fits[k], 0, sizeof in->fits[k]);
    snprintf(perf->gpu, sizeof perf->gpu, "%s", gpu->model);
    q->alpha_s = p->alpha_s > 0 ? p->alpha_s : 0;
    q->beta_s = p->beta_s;
    q->compute_provenance = CF_PROV_MEASURED;
    q->contention = 0.02;
    q->gamma = CF_DEFAULT_GAMMA;
    q->intra_gbps = gpu->interconnect_gbs_per_gpu * 8.0 * CF_DEFAULT_INTRA_EFFICIENCY;
    q->inter_gbps = 0; /* set per VM from its NIC */
    q->latency_s = 0.001;
    q->network_provenance = CF_PROV_DEFAULT;
    if (p->ceiling_found) {
        q->max_local_batch = p->max_local_batch;
        q->memory_provenance = CF_PROV_MEASURED;
    } else {
        /* Nothing ran out of memory: the largest batch tried is a lower bound. */
        int estimate = cf_estimate_max_local_batch(spec, gpu->memory_gib, NULL, 0);
        q->max_local_batch = estimate > p->max_local_batch ? estimate : p->max_local_batch;
        q->memory_provenance = estimate > p->max_local_batch ? CF_PROV_ESTIMATED : CF_PROV_MEASURED;
    }
    snprintf(perf->note, sizeof perf->note, "measured by 'cloudfit profile' (%s backend, %s): t_c(m) = %.3g + %.3g·m s, "
             "R² %.4f", p->backend, p->created_at, p->alpha_s, p->beta_s, p->r2);
}

cf_status cf_inputs_add_profiled(const cf_spec *spec, const cf_catalog *catalog, size_t cap, cf_inputs *in)
{
    if (!profile_cache_enabled)
        return CF_OK;
    char path[1024];
    if (profile_db_path)
        snprintf(path, sizeof path, "%s", profile_db_path);
    else if (cf_db_default_path(path, sizeof path) != CF_OK)
        path[0] = '\0';
    if (!path[0] || access(path, F_OK) != 0) {
        cf_error_clear();
        return CF_OK; /* no database yet: nothing was profiled (and reading creates nothing) */
    }
    char key[65];
    cf_status st = cf_profile_spec_key(spec, key);
    cf_db *db = NULL;
    cf_cached_profile_list list = {0};
    if (st == CF_OK)
        st = cf_db_open(path, &db);
    if (st == CF_OK)
        st = cf_profile_cache_get(db, key, &list);
    cf_db_close(db);
    if (st != CF_OK) {
        cf_inputs_add_note(in, "the profile cache could not be read (%s); using the spec and estimates", cf_error_message());
        cf_error_clear();
        return CF_OK;
    }
    int noise_done = 0;
    for (size_t i = 0; i < list.n; i++) {
        cf_profile *p = malloc(sizeof *p);
        if (!p) {
            cf_profile_cache_list_free(&list);
            return cf_error_set(CF_ERR_NOMEM, "out of memory");
        }
        if (cf_profile_from_json(list.rows[i].profile_json, p) != CF_OK) {
            cf_inputs_add_note(in, "cached profile of %s (%s backend) is unreadable: %s", list.rows[i].device, list.rows[i].backend,
                 cf_error_message());
            cf_error_clear();
            free(p);
            continue;
        }
        cf_log_info("using the cached %s profile of '%s' on %s (%s)", p->backend, p->spec_name, p->device.name,
                    p->created_at);
        cf_inputs_add_note(in, "cached profile used: %s backend on %s, %s (from %s)", p->backend, p->device.name, p->created_at,
             path);
        if (p->has_noise && !noise_done) { /* newest first */
            use_noise(spec, p, in);
            noise_done = 1;
        }
        use_throughput(spec, catalog, p, cap, in);
        free(p);
    }
    cf_profile_cache_list_free(&list);
    return CF_OK;
}
