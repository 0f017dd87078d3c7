/* The advisor's inputs from the evidence (precedence in
 * cloudfit/advisor/inputs.h). What a profile can honestly tell a GPU
 * recommendation:
 *  - the gradient noise scale, always: it is a property of the model, the
 *    data and the training state, not of the hardware, so a CPU run
 *    measures the same B_noise a GPU run would (same model, data, seed);
 *  - throughput only when the device was a GPU of the table (device name →
 *    GPU model): then t_c(m) = α + β·m and the memory ceiling are that
 *    GPU's measured figures, and other GPU types are carried over from it.
 *    A CPU's step times say nothing about a GPU's and are not used. */
#include "cloudfit/advisor/inputs.h"
#include "cloudfit/advisor/carry.h"
#include "cloudfit/common/buf.h"

#include "cloudfit/common/number.h"
#include "cloudfit/common/escape.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "../advisor_internal.h"
#include "carry_internal.h"
#include "inputs_internal.h"
#include "perf_internal.h"
#include "stateff_internal.h"

static void add_note(cf_inputs *in, const char *fmt, ...) CF_PRINTF(2, 3);
static void add_note(cf_inputs *in, const char *fmt, ...)
{
    if (in->n_notes == CF_INPUTS_MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(in->notes[in->n_notes++], sizeof in->notes[0], fmt, ap);
    va_end(ap);
}

static const char *source_name(const cf_job *job) { return job->source[0] ? job->source : "<spec>"; }

const cf_gpu_perf *cf_inputs_perf(const cf_inputs *in, const char *gpu_model)
{
    for (size_t k = 0; k < in->n_perf; k++)
        if (strcasecmp(in->perf[k].gpu, gpu_model) == 0)
            return &in->perf[k];
    return NULL;
}

static size_t perf_index(const cf_inputs *in, const char *gpu_model)
{
    const cf_gpu_perf *p = cf_inputs_perf(in, gpu_model);
    return p ? (size_t)(p - in->perf) : in->n_perf;
}

/* Nominal NIC of the offer that carries `gpus` GPUs of this model. */
static double offer_network_gbps(const cf_inputs_request *rq, const char *gpu, int gpus)
{
    for (size_t i = 0; i < rq->n_vms; i++) {
        const cf_vm *vm = &rq->vms[i];
        if (strcasecmp(vm->gpu_model, gpu) == 0 && vm->gpu_count == gpus && vm->network_gbps > 0)
            return vm->network_gbps;
    }
    return 0;
}

/* ---- fitting measured rows ------------------------------------------------------------ */

cf_status cf_inputs_fit_rows(const cf_job *job, const cf_gpu *gpu, const cf_measurement *rows, size_t n,
                             double reference_network_gbps, cf_gpu_perf *perf, cf_perf_fit_report *rep)
{
    int largest_batch = 0;
    for (size_t i = 0; i < n; i++)
        if (rows[i].local_bsz > largest_batch)
            largest_batch = rows[i].local_bsz;
    perf->reference_network_gbps = reference_network_gbps;
    cf_perf_params start = cf_perf_defaults(gpu);
    cf_status st = cf_perf_fit(rows, n, job->parameters * job->gradient_bytes, reference_network_gbps, &start,
                               &perf->params, rep);
    if (st != CF_OK)
        return st;
    perf->params.max_local_batch = largest_batch;
    perf->params.memory_provenance = CF_PROV_MEASURED;
    snprintf(perf->note, sizeof perf->note,
             "fitted to %zu measured step times (%zu single-GPU, %zu multi-GPU, %zu multi-node), rms error %.1f%%", n,
             rep->n_single_gpu, rep->n_multi_gpu_node, rep->n_multi_node, 100 * rep->rel_rmse);
    if (rep->fitted_inter)
        snprintf(perf->network_note, sizeof perf->network_note,
                 "%zu multi-node measurement(s): %.2g Gbit/s effective%s, %.0f%% of the step can hide it",
                 rep->n_multi_node, perf->params.inter_gbps,
                 !rep->bound_hit                ? ""
                 : perf->params.nic_gbps > 0    ? " (the NIC's nominal rate: the measurements show no cost beyond it)"
                                                : " (the fastest NIC any catalog VM has: the measurements show no cost)",
                 100 * perf->params.hide);
    return st;
}

/* ---- step 3: the spec's profile.gpus ------------------------------------------------- */

/* Rows of a measurements file for this GPU and this job: the rows whose
 * model column is the job's name, or all rows when the file holds a single
 * model. *out is malloc'd. */
/* A row is the key's when its gpu column names the same GPU of the table
 * (docs/profiler.md: the column is the GPU "as the catalog or a tool names
 * it"; the key may be either too): a key "T4" takes rows written "Tesla
 * T4", which a literal match refused. A name the table does not know
 * matches only itself. */
static int row_is_gpu(const cf_inputs_request *rq, const cf_gpu *gpu, const cf_gpu_profile_given *gp,
                      const char *row_gpu)
{
    if (strcasecmp(row_gpu, gp->gpu) == 0)
        return 1;
    return gpu && cf_gpu_resolve(rq->gpus, rq->n_gpus, row_gpu) == gpu;
}

/* The first four distinct values of the file's model (by_gpu 0) or gpu
 * column, quoted, for a hint; 0 when there are none or the text failed. */
static int distinct_names(const cf_measurement_set *set, int by_gpu, cf_buf *out)
{
    int listed = 0;
    for (size_t i = 0; i < set->n_rows && listed < 4; i++) {
        const char *name = by_gpu ? set->rows[i].gpu : set->rows[i].model;
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = by_gpu ? strcasecmp(set->rows[j].gpu, name) == 0 : strcmp(set->rows[j].model, name) == 0;
        if (!seen)
            cf_buf_printf(out, "%s'%s'", listed++ ? ", " : "", name);
    }
    return listed && !cf_buf_failed(out);
}

static cf_status select_rows(const cf_inputs_request *rq, const cf_gpu *gpu, const cf_gpu_profile_given *gp,
                             const cf_measurement_set *set, cf_measurement **out, size_t *n_out)
{
    const cf_job *job = rq->job;
    int single_model = 1, named = 0;
    for (size_t i = 0; i < set->n_rows; i++) {
        if (strcmp(set->rows[i].model, set->rows[0].model) != 0)
            single_model = 0;
        if (strcmp(set->rows[i].model, job->name) == 0)
            named = 1;
    }
    if (!single_model && !named) {
        /* named as every other error of the file is: the spec and the key */
        cf_error_set(CF_ERR_INVALID, "%s: profile.gpus.%s: %s: holds several models and none is named '%s'",
                     source_name(job), gp->gpu, gp->measurements_path, job->name);
        cf_buf models = CF_BUF_INIT;
        if (distinct_names(set, 0, &models))
            cf_error_hint("the file's model column holds %s: keep one model per file, or name the spec after "
                          "one of them", cf_buf_cstr(&models));
        else
            cf_error_hint("keep one model per file, or name the spec after the CSV's model column");
        cf_buf_free(&models);
        return CF_ERR_INVALID;
    }
    *out = malloc((set->n_rows ? set->n_rows : 1) * sizeof **out);
    if (!*out)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < set->n_rows; i++) {
        const cf_measurement *r = &set->rows[i];
        if (!row_is_gpu(rq, gpu, gp, r->gpu) || (named && strcmp(r->model, job->name) != 0))
            continue;
        (*out)[n++] = *r;
    }
    if (n == 0) {
        free(*out);
        *out = NULL;
        /* which GPUs the file does hold, for the hint (the first four) */
        cf_buf have = CF_BUF_INIT;
        int listed = distinct_names(set, 1, &have);
        cf_error_set(CF_ERR_INVALID, "%s: profile.gpus.%s: %s: no rows for GPU '%s'", source_name(job), gp->gpu,
                     gp->measurements_path, gp->gpu);
        if (listed)
            cf_error_hint("the file's gpu column holds %s; name the key after it, or point it at that GPU's measurements",
                          cf_buf_cstr(&have));
        cf_buf_free(&have);
        return CF_ERR_INVALID;
    }
    *n_out = n;
    return CF_OK;
}

/* A step time can only grow with the per-GPU batch (more work per step);
 * measured noise moves it a little (the shipped T4 files: at most 11 %
 * shorter at the next batch). A step less than half as long as one at a
 * smaller batch of the same shape (nodes, GPUs, VM, placement) is a file
 * whose step_time_s or local_bsz column says something else (per-sample
 * times, swapped columns, a first run that included compilation): the
 * fit takes it as measured, so say so. Sorted, O(n log n): a file holds
 * up to 200,000 rows. */
#define FALLING_STEP_RATIO 0.5

static int shape_then_batch(const void *a, const void *b)
{
    const cf_measurement *x = *(const cf_measurement *const *)a, *y = *(const cf_measurement *const *)b;
    int d = x->num_nodes != y->num_nodes           ? (x->num_nodes < y->num_nodes ? -1 : 1)
            : x->num_gpus != y->num_gpus           ? (x->num_gpus < y->num_gpus ? -1 : 1)
            : x->hw_gpus_per_node != y->hw_gpus_per_node ? (x->hw_gpus_per_node < y->hw_gpus_per_node ? -1 : 1)
                                                   : strcmp(x->placement, y->placement);
    if (d == 0 && x->local_bsz != y->local_bsz)
        d = x->local_bsz < y->local_bsz ? -1 : 1;
    return d;
}

static void note_falling_steps(cf_inputs *in, const char *gpu_model, const char *source, int with_lines,
                               const cf_measurement *rows, size_t n)
{
    const cf_measurement **by = malloc((n ? n : 1) * sizeof *by);
    if (!by)
        return; /* a note, not the result */
    for (size_t i = 0; i < n; i++)
        by[i] = &rows[i];
    qsort(by, n, sizeof *by, shape_then_batch);
    const cf_measurement *slow = NULL, *worst_slow = NULL, *worst_fast = NULL;
    double worst = FALLING_STEP_RATIO;
    for (size_t i = 0; i < n; i++) {
        const cf_measurement *r = by[i];
        int same_shape = slow && r->num_nodes == slow->num_nodes && r->num_gpus == slow->num_gpus &&
                         r->hw_gpus_per_node == slow->hw_gpus_per_node && !strcmp(r->placement, slow->placement);
        if (same_shape && r->local_bsz > slow->local_bsz && r->step_time_s < worst * slow->step_time_s) {
            worst = r->step_time_s / slow->step_time_s;
            worst_slow = slow;
            worst_fast = r;
        }
        if (!same_shape || r->step_time_s > slow->step_time_s) /* the slowest of the smaller batches so far */
            slow = r;
    }
    free(by);
    if (!worst_fast)
        return;
    char where_slow[24] = "", where_fast[24] = "";
    if (with_lines) { /* a file's rows; a profile's runs have no line to name */
        snprintf(where_slow, sizeof where_slow, " (line %ld)", worst_slow->line);
        snprintf(where_fast, sizeof where_fast, " (line %ld)", worst_fast->line);
    }
    add_note(in, "%s: %s's step falls as the batch grows: %.3g s at batch %d%s, %.3g s at %d%s; a larger batch is "
                 "more work per step: check step_time_s and local_bsz (used as measured)",
             source, gpu_model, worst_slow->step_time_s, worst_slow->local_bsz, where_slow, worst_fast->step_time_s,
             worst_fast->local_bsz, where_fast);
}

static cf_status perf_from_rows(const cf_inputs_request *rq, const cf_gpu *gpu, const cf_gpu_profile_given *gp,
                                const cf_measurement_set *set, cf_gpu_perf *perf, cf_perf_fit_report *rep,
                                cf_inputs *in)
{
    cf_measurement *rows = NULL;
    size_t n = 0;
    cf_status st = select_rows(rq, gpu, gp, set, &rows, &n);
    if (st != CF_OK)
        return st;
    note_falling_steps(in, gpu->model, gp->measurements_path, 1, rows, n);
    st = cf_inputs_fit_rows(rq->job, gpu, rows, n, offer_network_gbps(rq, gpu->model, rows[0].hw_gpus_per_node), perf,
                            rep);
    if (st != CF_OK)
        cf_error_prefix("%s: GPU '%s'", gp->measurements_path, gp->gpu);
    /* Rows measured at another precision than the job trains in (the
     * file's precision column; rows without one are the spec's): the
     * single-node step moves by the GPU's peak ratio between the two
     * (the carry rule's peak term; the bandwidth term cancels). */
    if (st == CF_OK && rows[0].has_precision && rows[0].precision != rq->job->precision) {
        int same = 1;
        for (size_t i = 1; i < n; i++)
            same &= rows[i].has_precision && rows[i].precision == rows[0].precision;
        if (same) {
            double r = cf_gpu_time_ratio_between(gpu, rows[0].precision, gpu, rq->job->precision);
            perf->params.compute_scale = (perf->params.compute_scale > 0 ? perf->params.compute_scale : 1.0) * r;
            perf->params.sigma_compute = hypot(perf->params.sigma_compute,
                                               cf_carry_sigma(gpu, rows[0].precision, gpu, rq->job->precision, NULL));
            add_note(in, "%s: measured in %s, the job trains in %s: %s step times × %.3g (peak-rate ratio)",
                     gp->measurements_path, cf_precision_name(rows[0].precision),
                     cf_precision_name(rq->job->precision), gpu->model, r);
        } else {
            add_note(in, "%s: rows at several precisions; fitted as they are (the job trains in %s)",
                     gp->measurements_path, cf_precision_name(rq->job->precision));
        }
    }
    free(rows);
    return st;
}

/* A profile.gpus entry's sync_s.inter_node_gbps: the all-reduce rate of the
 * 2-node × 1-GPU probe (docs/spec.md), so the network is measured on 2
 * nodes of 1 GPU, and a plan beyond that is extrapolated like one beyond a
 * fitted probe (the note "measured on at most 2", JSON
 * network_measured_max_nodes). Without the shape it read as a network
 * measured nowhere: no note at 16 nodes, and "fitted from multi-node
 * measurements" there were none of. */
static void given_network(const cf_gpu_profile_given *gp, cf_gpu_perf *perf)
{
    if (!(gp->inter_node_gbps > 0))
        return;
    perf->params.inter_gbps = gp->inter_node_gbps;
    perf->params.network_provenance = CF_PROV_FITTED;
    perf->params.max_nodes_measured = 2;
    perf->params.max_node_gpus_measured = 1;
    snprintf(perf->network_note, sizeof perf->network_note,
             "spec's profile.gpus.%s.sync_s.inter_node_gbps (%g Gbit/s, the rate of a 2-node × 1-GPU probe)", gp->gpu,
             gp->inter_node_gbps);
}

static void perf_from_numbers(const cf_job *job, const cf_gpu *gpu, const cf_gpu_profile_given *gp,
                              cf_gpu_perf *perf)
{
    cf_perf_params *p = &perf->params;
    *p = cf_perf_defaults(gpu);
    p->gradient_bytes = job->parameters * job->gradient_bytes;
    p->alpha_s = gp->alpha_s;
    p->beta_s = gp->beta_s;
    p->compute_provenance = CF_PROV_FITTED;
    if (gp->intra_node_gbps > 0) /* an effective rate: the nominal one the model scales */
        p->intra_gbps = gp->intra_node_gbps / p->k.intra_efficiency;
    p->inter_gbps = 0;
    p->network_provenance = CF_PROV_DEFAULT;
    given_network(gp, perf);
    snprintf(perf->note, sizeof perf->note, "profile in the spec: t_c(m) = %.4g + %.4g·m s", gp->alpha_s, gp->beta_s);
}

static cf_status add_given(const cf_inputs_request *rq, cf_inputs *in)
{
    for (size_t i = 0; i < rq->n_given; i++) {
        const cf_gpu_profile_given *gp = &rq->given[i];
        const cf_gpu *gpu = cf_gpu_resolve(rq->gpus, rq->n_gpus, gp->gpu);
        if (!gpu) {
            cf_error_set(CF_ERR_INVALID, "%s: profile.gpus.%s: unknown GPU model", source_name(rq->job), gp->gpu);
            cf_error_hint("use a GPU name from the catalog (see docs/catalog.md), e.g. T4, A100-80GB, H100");
            return CF_ERR_INVALID;
        }
        /* one entry per GPU, whatever the spelling: "t4" beside "T4" was
         * listed twice and the second silently unused */
        for (size_t j = 0; j < i; j++)
            if (cf_gpu_resolve(rq->gpus, rq->n_gpus, rq->given[j].gpu) == gpu) {
                cf_error_set(CF_ERR_INVALID, "%s: profile.gpus.%s: the same GPU as profile.gpus.%s (%s)",
                             source_name(rq->job), gp->gpu, rq->given[j].gpu, gpu->model);
                cf_error_hint("give each GPU once: merge the two entries");
                return CF_ERR_INVALID;
            }
        cf_gpu_perf *perf = &in->perf[in->n_perf];
        cf_perf_fit_report *rep = &in->fits[in->n_perf];
        memset(perf, 0, sizeof *perf);
        snprintf(perf->gpu, sizeof perf->gpu, "%s", gpu->model);
        if (gp->measurements_path[0]) {
            if (!rq->given_rows)
                return cf_error_set(CF_ERR_INTERNAL, "%s: the rows of %s were not read", source_name(rq->job),
                                    gp->measurements_path);
            cf_status st = perf_from_rows(rq, gpu, gp, &rq->given_rows[i], perf, rep, in);
            if (st != CF_OK)
                return st;
        } else if (gp->has_compute) {
            perf_from_numbers(rq->job, gpu, gp, perf);
        } else {
            continue; /* only a ceiling or network figures: applied to the estimate (apply_partial) */
        }
        if (gp->max_local_batch > 0) {
            perf->params.max_local_batch = gp->max_local_batch;
            perf->params.memory_provenance = CF_PROV_MEASURED;
        } else if (!gp->measurements_path[0]) {
            perf->params.max_local_batch = cf_estimate_max_local_batch(rq->job, gpu->memory_gib, NULL, 0);
            perf->params.memory_provenance = perf->params.max_local_batch ? CF_PROV_ESTIMATED : CF_PROV_DEFAULT;
        }
        in->n_perf++;
    }
    return CF_OK;
}

/* ---- step 2: cached profiles --------------------------------------------------------- */

void cf_profile_probe_name(const cf_profile *p, char *out, size_t n)
{
    for (int i = 0; i < p->n_runs; i++)
        if (p->runs[i].nodes > 1) {
            snprintf(out, n, "%d-node × %d-GPU probe", p->runs[i].nodes, p->runs[i].gpus_per_node);
            return;
        }
    snprintf(out, n, "network probe");
}

/* A runner profile (`cloudfit profile --runner`): its runs as measurement
 * rows — 1 GPU, a full VM and the 2-node × 1-GPU probe — fitted like a
 * measurements CSV, so the probe's two rows identify the effective
 * inter-node bandwidth (provenance "fitted"). 0 when the fit failed (the
 * caller falls back to α + β·m). */
static int use_runner_runs(const cf_job *job, const cf_gpu *gpu, const cf_profile *p, cf_gpu_perf *perf,
                           cf_perf_fit_report *rep, cf_inputs *in)
{
    cf_measurement rows[CF_PROFILE_MAX_RUNS];
    double probe_nic_gbps = 0;
    const char *probe_vm = "";
    int probe_nodes = 0, probe_gpus = 0; /* the probe's shape: 2 × 1, or what --probe-nodes/--probe-gpus named */
    char batches[64] = "";
    size_t len = 0;
    for (int i = 0; i < p->n_runs; i++) {
        const cf_profile_run_row *r = &p->runs[i];
        cf_measurement *m = &rows[i];
        memset(m, 0, sizeof *m);
        snprintf(m->model, sizeof m->model, "%.*s", (int)cf_utf8_prefix(p->spec_name, 63), p->spec_name);
        snprintf(m->gpu, sizeof m->gpu, "%s", gpu->model);
        /* one digit per node; none (the counts say it) for 10 or more GPUs per node, which a digit
         * cannot hold (16 was "6": a 16-GPU VM's runs predicted as 6 GPUs per node), or too many nodes */
        if (r->gpus_per_node >= 1 && r->gpus_per_node <= 9 && r->nodes < (int)sizeof m->placement)
            for (int n = 0; n < r->nodes; n++)
                m->placement[n] = (char)('0' + r->gpus_per_node);
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
            probe_nodes = r->nodes;
            probe_gpus = r->gpus_per_node;
            if (len < sizeof batches)
                len += (size_t)snprintf(batches + len, sizeof batches - len, "%s%d", len ? ", " : "", r->local_batch);
        }
    }
    char source[64];
    snprintf(source, sizeof source, "the cached %s profile", p->backend);
    note_falling_steps(in, gpu->model, source, 0, rows, (size_t)p->n_runs);
    if (cf_inputs_fit_rows(job, gpu, rows, (size_t)p->n_runs, probe_nic_gbps, perf, rep) != CF_OK) {
        add_note(in, "the %s profile's runs on %s could not be fitted (%s): only t_c(m) = α + β·m is used", p->backend,
                 gpu->model, cf_error_message());
        cf_error_clear();
        return 0;
    }
    snprintf(perf->note, sizeof perf->note,
             "measured by 'cloudfit profile --runner' (%s, %s): %zu runs (%zu single-GPU, %zu multi-GPU, %zu "
             "multi-node), rms error %.1f%%",
             p->backend, p->created_at, rep->n_rows, rep->n_single_gpu, rep->n_multi_gpu_node, rep->n_multi_node,
             100 * rep->rel_rmse);
    if (rep->fitted_inter) {
        char nic[40] = "";
        if (probe_nic_gbps > 0)
            snprintf(nic, sizeof nic, ", %g Gbit/s NIC", probe_nic_gbps);
        snprintf(perf->network_note, sizeof perf->network_note,
                 "measured probe: %d nodes × %d GPU%s at per-GPU batch %s on %s%s ('cloudfit profile --runner', %s)",
                 probe_nodes, probe_gpus, probe_gpus == 1 ? "" : "s", batches,
                 probe_vm[0] ? probe_vm : "the runner's VMs", nic, p->created_at);
    } else {
        char probe[64];
        cf_profile_probe_name(p, probe, sizeof probe);
        add_note(in,
                 "the cached %s profile of %s has no measured %s (%s%s%s): the inter-node bandwidth is not measured",
                 p->backend, gpu->model, probe, p->probe_status[0] ? p->probe_status : "not run",
                 p->probe_note[0] ? ": " : "", p->probe_note);
    }
    return 1;
}

/* The memory ceiling of a profile that saw no out-of-memory answer: the
 * largest batch that ran is a lower bound, so an estimate above it wins. */
static void ceiling_lower_bound(const cf_job *job, const cf_gpu *gpu, int largest_run, cf_perf_params *q)
{
    int estimate = cf_estimate_max_local_batch(job, gpu->memory_gib, NULL, 0);
    q->max_local_batch = estimate > largest_run ? estimate : largest_run;
    q->memory_provenance = estimate > largest_run ? CF_PROV_ESTIMATED : CF_PROV_MEASURED;
}

/* A profile measured in another precision than the job trains in (the
 * spec's model.precision): the step moves by the GPU's peak ratio between
 * the two, as for a measurements CSV's precision column, and the carry-over
 * to other GPU types then starts from the job's precision. */
static void profile_precision(const cf_inputs_request *rq, const cf_gpu *gpu, const cf_profile *p, cf_perf_params *q,
                              cf_inputs *in)
{
    cf_precision measured;
    if (!p->precision[0] || !cf_precision_parse(p->precision, &measured) || measured == rq->job->precision)
        return;
    double r = cf_gpu_time_ratio_between(gpu, measured, gpu, rq->job->precision);
    q->compute_scale = (q->compute_scale > 0 ? q->compute_scale : 1.0) * r;
    q->sigma_compute = hypot(q->sigma_compute, cf_carry_sigma(gpu, measured, gpu, rq->job->precision, NULL));
    add_note(in, "the %s profile on %s trained in %s, the job in %s (model.precision): step times × %.3g (peak-rate "
                 "ratio); set model.precision to %s if the job trains as profiled",
             p->backend, gpu->model, p->precision, cf_precision_name(rq->job->precision), r, p->precision);
}

/* A profile run in another memory format than the job trains in (the
 * spec's model.memory_format; either one unsaid: nothing to compare, and
 * nothing changes). No peak ratio moves the step as for the precision:
 * the point stays and the compute's log sd widens by
 * CF_CARRY_SIGMA_MEMORY_FORMAT in quadrature (declared from one
 * measurement, cloudfit/advisor/carry.h); the GPU types carried over from
 * this one inherit both. */
static void profile_memory_format(const cf_inputs_request *rq, const cf_gpu *gpu, const cf_profile *p,
                                  cf_gpu_perf *perf, cf_inputs *in)
{
    const char *job_format = rq->job->memory_format;
    if (!p->memory_format[0] || !job_format[0] || strcmp(p->memory_format, job_format) == 0)
        return;
    perf->params.sigma_compute = hypot(perf->params.sigma_compute, CF_CARRY_SIGMA_MEMORY_FORMAT);
    snprintf(perf->profile_memory_format, sizeof perf->profile_memory_format, "%s", p->memory_format);
    add_note(in,
             "the %s profile on %s ran in memory format %s, the job in %s (model.memory_format): step times kept, "
             "their interval widened (σ %.2f, declared from one measurement)",
             p->backend, gpu->model, p->memory_format, job_format, CF_CARRY_SIGMA_MEMORY_FORMAT);
    /* what the probe helper takes (docs/profiler.md); a 3-D layout it reads from the model's weights */
    const char *how = strcmp(job_format, "channels_last") == 0 ? "cloudfit_probe.run(..., channels_last=True)"
                      : strcmp(job_format, "contiguous") == 0  ? "cloudfit_probe.run(..., channels_last=False)"
                                                               : "cloudfit_probe.run(...) on a model moved to "
                                                                 "torch.channels_last_3d";
    char hint[sizeof in->notes[0]];
    snprintf(hint, sizeof hint,
             "hint: profile in %s to measure it (%s; docs/profiler.md), or set model.memory_format to %s if the job "
             "trains as profiled",
             job_format, how, p->memory_format);
    for (int i = 0; i < in->n_notes; i++) /* two profiles in the same format: one hint */
        if (strcmp(in->notes[i], hint) == 0)
            return;
    add_note(in, "%s", hint);
}

/* A measured GPU profile becomes that GPU type's parameters. Profiles come
 * newest first; `used_by[k]` is the profile that set in->perf[k], so an
 * older profile of the same GPU type is set aside (said in a note) rather
 * than overwriting the newer one's figures. */
static void use_throughput(const cf_inputs_request *rq, const cf_profile *p, size_t cap, cf_inputs *in,
                           size_t n_from_spec, const cf_profile **used_by)
{
    if (!p->device.is_gpu) {
        if (p->has_fit)
            add_note(in, "the %s profile's step times (t_c(m) = %.3g + %.3g·m s on %s) are CPU times and are not used "
                         "for GPU throughput",
                     p->backend, p->alpha_s, p->beta_s, p->device.name);
        return;
    }
    const cf_gpu *gpu = cf_gpu_resolve(rq->gpus, rq->n_gpus, p->device.name);
    if (!gpu) {
        add_note(in, "the %s profile ran on '%s', which is not a GPU model of the catalog: its throughput is not used",
                 p->backend, p->device.name);
        return;
    }
    if (!p->has_fit || p->device.gpus != 1) {
        add_note(in, "the %s profile on %s has %s: its throughput is not used", p->backend, gpu->model,
                 p->device.gpus != 1 ? "several GPUs per step" : "fewer than 2 batch sizes");
        return;
    }
    size_t k = perf_index(in, gpu->model);
    if (k < in->n_perf && used_by[k]) {
        /* two device names of one GPU type ('Tesla T4', 'T4'): name both, or the note names neither profile */
        const cf_profile *q = used_by[k];
        int named = strcmp(p->device.name, q->device.name) != 0;
        add_note(in,
                 "the %s profile on %s (%s%s%s%s) is not used for its throughput: the newest, the %s profile%s%s%s of "
                 "%s, is",
                 p->backend, gpu->model, named ? "'" : "", named ? p->device.name : "", named ? "', " : "",
                 p->created_at, q->backend, named ? " on '" : "", named ? q->device.name : "", named ? "'" : "",
                 q->created_at);
        return;
    }
    if (k < n_from_spec) { /* the spec's profile.gpus entry of this GPU type gives way: say so */
        const char *key = gpu->model;
        for (size_t i = 0; i < rq->n_given; i++)
            if (cf_gpu_resolve(rq->gpus, rq->n_gpus, rq->given[i].gpu) == gpu)
                key = rq->given[i].gpu;
        add_note(in, "the cached %s profile on %s (%s) replaces profile.gpus.%s of the spec (%s)", p->backend,
                 gpu->model, p->created_at, key, in->perf[k].note);
    }
    if (k == in->n_perf) {
        if (k >= cap)
            return;
        in->n_perf++;
    }
    used_by[k] = p;
    cf_gpu_perf *perf = &in->perf[k];
    memset(perf, 0, sizeof *perf);
    memset(&in->fits[k], 0, sizeof in->fits[k]);
    snprintf(perf->gpu, sizeof perf->gpu, "%s", gpu->model);
    if (p->n_runs > 0 && use_runner_runs(rq->job, gpu, p, perf, &in->fits[k], in)) {
        /* A runner sees no out-of-memory answer. */
        ceiling_lower_bound(rq->job, gpu, p->max_local_batch, &perf->params);
        profile_precision(rq, gpu, p, &perf->params, in);
        profile_memory_format(rq, gpu, p, perf, in);
        return;
    }
    memset(perf, 0, sizeof *perf);
    memset(&in->fits[k], 0, sizeof in->fits[k]);
    snprintf(perf->gpu, sizeof perf->gpu, "%s", gpu->model);
    cf_perf_params *q = &perf->params;
    /* The sweep's points are the 1-GPU curve T1(1, m). */
    cf_measurement rows[CF_PROFILE_MAX_POINTS];
    size_t n_rows = 0;
    for (int i = 0; i < p->n_points && i < CF_PROFILE_MAX_POINTS; i++) {
        cf_measurement *m = &rows[n_rows];
        memset(m, 0, sizeof *m);
        m->hw_gpus_per_node = 1;
        m->num_nodes = m->num_gpus = 1;
        m->local_bsz = p->points[i].local_batch;
        m->step_time_s = p->points[i].step_time_s;
        m->sync_time_s = -1;
        if (m->local_bsz > 0 && m->step_time_s > 0)
            n_rows++;
    }
    char source[64];
    snprintf(source, sizeof source, "the cached %s profile", p->backend);
    note_falling_steps(in, gpu->model, source, 0, rows, n_rows);
    cf_perf_params start = cf_perf_defaults(gpu);
    if (n_rows == 0 ||
        cf_perf_fit(rows, n_rows, rq->job->parameters * rq->job->gradient_bytes, 0, &start, q, NULL) != CF_OK) {
        cf_error_clear();
        *q = start;
        q->gradient_bytes = rq->job->parameters * rq->job->gradient_bytes;
        q->alpha_s = p->alpha_s > 0 ? p->alpha_s : 0;
        q->beta_s = p->beta_s;
    }
    q->compute_provenance = CF_PROV_MEASURED;
    if (p->ceiling_found) {
        q->max_local_batch = p->max_local_batch;
        q->memory_provenance = CF_PROV_MEASURED;
    } else {
        ceiling_lower_bound(rq->job, gpu, p->max_local_batch, q);
    }
    char how[48] = ""; /* how the probe trained, when it said */
    if (p->precision[0] || p->memory_format[0])
        snprintf(how, sizeof how, "%s%s%s, ", p->precision, p->precision[0] && p->memory_format[0] ? ", " : "",
                 p->memory_format);
    char r2[24] = "n/a (flat in the batch)"; /* a flat curve leaves R² nothing to explain */
    if (isfinite(p->r2))
        snprintf(r2, sizeof r2, "%.4f", p->r2);
    snprintf(perf->note, sizeof perf->note, "measured by 'cloudfit profile' (%s backend, %s%s): t_c(m) = %.3g + %.3g·m s, "
             "R² %s", p->backend, how, p->created_at, p->alpha_s, p->beta_s, r2);
    profile_precision(rq, gpu, p, q, in);
    profile_memory_format(rq, gpu, p, perf, in);
}

/* ---- the noise model -------------------------------------------------------------------- */

typedef enum { NOISE_DEFAULT, NOISE_SPEC, NOISE_PROFILE } noise_source;

/* A noise scale or its standard error as people read it: two significant
 * digits, whole numbers kept whole (1141, 27), a figure below 10 with its
 * decimals (0.13 ± 0.049, 27 ± 3.4): "%.0f" read a measured 0.13 as a
 * noise scale of 0 and a standard error of 0.16 as "± 0". */
static void noise_text(double v, char *out, size_t n)
{
    cf_number_plain_text(v, 2, out, n);
}

static noise_source noise_from_spec(const cf_inputs_request *rq, cf_inputs *in)
{
    const cf_job *job = rq->job;
    if (rq->n_noise_trace > 0) {
        cf_noise_model_init_trend(&in->noise, job->batch, rq->noise_trace, rq->n_noise_trace, CF_PROV_MEASURED);
        /* past its last point a trace follows its trend, held where that
         * is flat or falls (one point has none): say which */
        const char *after = in->noise.trace_end_progress >= 1          ? ""
                            : in->noise.trend_per_progress > 0 ? ", continued along its trend"
                                                               : ", held at its last value after";
        char start[32], end[32], effective[32];
        noise_text(in->noise.b_noise_start, start, sizeof start);
        noise_text(in->noise.b_noise_end, end, sizeof end);
        noise_text(in->noise.b_noise_effective, effective, sizeof effective);
        snprintf(in->noise_note, sizeof in->noise_note,
                 "noise-scale trace in the spec (%d point%s, %s → %s over training%s; effective %s)",
                 rq->n_noise_trace, rq->n_noise_trace == 1 ? "" : "s", start, end, after, effective);
        return NOISE_SPEC;
    }
    if (rq->noise_scale > 0) {
        cf_noise_model_init(&in->noise, job->batch, rq->noise_scale, NULL, 0, CF_PROV_MEASURED);
        char value[32];
        noise_text(rq->noise_scale, value, sizeof value);
        snprintf(in->noise_note, sizeof in->noise_note, "noise scale %s from the spec (constant over training)", value);
        return NOISE_SPEC;
    }
    cf_noise_model_init(&in->noise, job->batch, job->batch, NULL, 0, CF_PROV_DEFAULT);
    snprintf(in->noise_note, sizeof in->noise_note,
             "noise scale unknown: assumed equal to the recipe batch (%d), which penalises larger batches", job->batch);
    return NOISE_DEFAULT;
}

/* A profile's noise measurement replaces the spec's unless the spec's
 * trace covers more of training. Returns 1 when it was used. */
static int noise_from_profile(const cf_inputs_request *rq, const cf_profile *p, cf_inputs *in)
{
    const cf_job *job = rq->job;
    double total = job->total_samples > 0 ? job->total_samples : job->samples_per_epoch;
    double covered = total > 0 ? p->noise_samples / total : 0;
    char pm[48] = " (standard error not known)"; /* a run of fewer than 2 averaged steps (profiler/gns.c) */
    char value[24], error[24];
    noise_text(p->b_noise, value, sizeof value);
    if (isfinite(p->b_noise_stderr)) {
        noise_text(p->b_noise_stderr, error, sizeof error);
        snprintf(pm, sizeof pm, " ± %s", error);
    }
    if (rq->n_noise_trace > 0 && rq->noise_trace[rq->n_noise_trace - 1].progress_fraction > covered) {
        char share[32];
        cf_number_plain_text(100 * covered, 2, share, sizeof share);
        add_note(in,
                 "the cached %s profile measured a noise scale of %s%s over the first %s%% of training; the "
                 "spec's trace covers more of training and is kept",
                 p->backend, value, pm, share);
        return 0;
    }
    cf_noise_point trace[CF_PROFILE_MAX_TRACE];
    int n = 0;
    for (int i = 0; i < p->n_noise_trace && total > 0; i++) {
        double fraction = p->noise_trace[i].samples_seen / total;
        if (fraction > 1)
            break;
        trace[n++] = (cf_noise_point){fraction, p->noise_trace[i].b_noise};
    }
    if (n >= 2)
        cf_noise_model_init(&in->noise, job->batch, 0, trace, n, CF_PROV_MEASURED);
    else
        cf_noise_model_init(&in->noise, job->batch, p->b_noise, NULL, 0, CF_PROV_MEASURED);
    char share[32]; /* "160% of training", not "1.6e+02%" */
    cf_number_plain_text(100 * covered, 2, share, sizeof share);
    /* the figure first (at most 23 + 47 bytes), then what measured it, cut should it not fit */
    size_t len = (size_t)snprintf(in->noise_note, sizeof in->noise_note, "%s%s", value, pm);
    snprintf(in->noise_note + len, sizeof in->noise_note - len,
             " measured by 'cloudfit profile' (%s backend, %s; %d steps of %d micro-batches × %d, %s%% "
             "of training, held constant after)",
             p->backend, p->created_at, p->noise_steps, p->noise_micro_batches,
             p->noise_local_batch, share);
    return 1;
}

/* ---- steps 4 and 5: carried over or estimated ------------------------------------- */

/* The measured GPU whose memory bandwidth is closest to the target's: the
 * carry-over is most trustworthy between similar parts. */
static const cf_gpu_perf *closest_reference(const cf_inputs_request *rq, const cf_inputs *in, size_t n_measured,
                                            const cf_gpu *target, const cf_gpu **out_gpu)
{
    const cf_gpu_perf *best = NULL;
    double best_gap = 0;
    for (size_t i = 0; i < n_measured; i++) {
        const cf_gpu *g = cf_gpu_find(rq->gpus, rq->n_gpus, in->perf[i].gpu);
        if (!g)
            continue;
        double gap = g->memory_bandwidth_gbs / target->memory_bandwidth_gbs;
        if (gap < 1)
            gap = 1 / gap;
        if (!best || gap < best_gap) {
            best = &in->perf[i];
            best_gap = gap;
            *out_gpu = g;
        }
    }
    return best;
}

/* A profile.gpus entry with only a ceiling or network figures refines an
 * estimate. */
static void apply_partial(const cf_inputs_request *rq, const char *gpu, cf_gpu_perf *perf)
{
    const cf_gpu_profile_given *gp = NULL;
    for (size_t i = 0; i < rq->n_given && !gp; i++) {
        const cf_gpu *named = cf_gpu_resolve(rq->gpus, rq->n_gpus, rq->given[i].gpu); /* "Tesla T4" too */
        if (named && strcasecmp(named->model, gpu) == 0)
            gp = &rq->given[i];
    }
    if (!gp)
        return;
    if (gp->max_local_batch > 0) {
        perf->params.max_local_batch = gp->max_local_batch;
        perf->params.memory_provenance = CF_PROV_MEASURED;
    }
    given_network(gp, perf);
    if (gp->intra_node_gbps > 0)
        perf->params.intra_gbps = gp->intra_node_gbps / perf->params.k.intra_efficiency;
}

/* A measured ceiling is a memory figure for every GPU type, not only its
 * own: where the estimate left a ceiling unknown (no per-sample memory,
 * no reference profile with one), a profile.gpus entry's max_local_batch
 * is carried through the same formula as a reference profile's
 * (docs/model.md "Memory ceiling"), from the entry whose GPU memory is
 * closest. An entry with only a ceiling has no step times to be a
 * reference: before, its ceiling stayed on its own GPU. */
static void carry_given_ceiling(const cf_inputs_request *rq, const cf_gpu *target, cf_gpu_perf *perf)
{
    const cf_gpu *from = NULL;
    int ceiling = 0;
    double best_gap = 0;
    for (size_t i = 0; i < rq->n_given; i++) {
        const cf_gpu *g = cf_gpu_resolve(rq->gpus, rq->n_gpus, rq->given[i].gpu);
        if (!g || g == target || g->memory_gib <= 0 || rq->given[i].max_local_batch <= 0)
            continue;
        double gap = fabs(log(g->memory_gib / target->memory_gib));
        if (!from || gap < best_gap) {
            from = g;
            ceiling = rq->given[i].max_local_batch;
            best_gap = gap;
        }
    }
    if (!from)
        return;
    cf_gpu_perf ref;
    memset(&ref, 0, sizeof ref);
    ref.params.max_local_batch = ceiling;
    int m = cf_estimate_max_local_batch(rq->job, target->memory_gib, &ref, from->memory_gib);
    if (m != 0) {
        perf->params.max_local_batch = m;
        perf->params.memory_provenance = CF_PROV_ESTIMATED;
    }
}

static cf_status add_estimates(const cf_inputs_request *rq, size_t cap, cf_inputs *in)
{
    size_t n_measured = in->n_perf;
    for (size_t r = 0; r < rq->n_candidates; r++) {
        const char *model = rq->candidates[r]->gpu_model;
        if (cf_inputs_perf(in, model) || in->n_perf >= cap)
            continue;
        const cf_gpu *target = cf_gpu_find(rq->gpus, rq->n_gpus, model);
        if (!target)
            continue;
        const cf_gpu *ref_gpu = NULL;
        const cf_gpu_perf *ref = closest_reference(rq, in, n_measured, target, &ref_gpu);
        if (cf_gpu_peak_tflops(target, rq->job->precision) <= 0 && !ref)
            continue; /* no compute figures for this GPU (e.g. B300): cannot rank it */
        cf_gpu_perf *perf = &in->perf[in->n_perf];
        cf_status st = cf_gpu_perf_estimate(rq->job, target, ref, ref_gpu, perf);
        if (st != CF_OK)
            return st;
        if (perf->params.max_local_batch == 0 && target->memory_gib > 0)
            carry_given_ceiling(rq, target, perf);
        apply_partial(rq, model, perf);
        in->n_perf++;
    }
    return CF_OK;
}

/* ---- step 1: recorded runs --------------------------------------------------------------- */

/* Recorded step times correct the compute time of their GPU type: the
 * factor s on (α, β) that makes the model's step time for the recorded
 * configuration equal the measured one, geometric mean over the runs.
 * Only compute is corrected: the network and overlap stay, so single-node
 * records are exact and multi-node ones put the whole gap on compute. */
#define RECORD_SCALE_MIN (1.0 / CF_RECORD_SCALE_MAX)
#define RECORD_SCALE_MAX CF_RECORD_SCALE_MAX

static double recorded_nic_gbps(const cf_inputs_request *rq, const cf_recorded_run *m)
{
    for (size_t i = 0; i < rq->n_vms; i++)
        if (strcmp(rq->vms[i].cloud, m->cloud) == 0 && strcmp(rq->vms[i].instance_type, m->instance_type) == 0)
            return rq->vms[i].network_gbps;
    return 0;
}

static double scaled_step(const cf_perf_params *base, double scale, double bytes, const cf_recorded_run *m)
{
    cf_perf_params p = *base;
    p.compute_scale = (p.compute_scale > 0 ? p.compute_scale : 1.0) * scale;
    return cf_perf_step_s(&p, bytes, m->nodes, m->gpus_per_node, m->local_batch, m->accumulation);
}

/* The compute scale reproducing m's step time (bisection: the step time
 * grows with the compute time), clamped to the scale limits. */
static double solve_scale(const cf_perf_params *p, double bytes, const cf_recorded_run *m)
{
    double lo = RECORD_SCALE_MIN, hi = RECORD_SCALE_MAX;
    if (scaled_step(p, lo, bytes, m) >= m->step_time_s)
        return lo;
    if (scaled_step(p, hi, bytes, m) <= m->step_time_s)
        return hi;
    for (int i = 0; i < 100 && hi / lo > 1 + 1e-9; i++) {
        double mid = sqrt(lo * hi);
        if (scaled_step(p, mid, bytes, m) < m->step_time_s)
            lo = mid;
        else
            hi = mid;
    }
    return sqrt(lo * hi);
}

static void apply_recorded(const cf_inputs_request *rq, cf_inputs *in)
{
    double bytes = rq->job->parameters * rq->job->gradient_bytes;
    for (size_t k = 0; k < in->n_perf; k++) {
        cf_gpu_perf *perf = &in->perf[k];
        double log_sum = 0, log_sq_sum = 0, measured_sum = 0, predicted_sum = 0, lo_scale = HUGE_VAL, hi_scale = 0;
        size_t used = 0, clamped = 0;
        for (size_t i = 0; i < rq->n_recorded; i++) {
            const cf_recorded_run *m = &rq->recorded[i];
            if (strcasecmp(m->gpu, perf->gpu) != 0 || !(m->step_time_s > 0) || m->nodes < 1 || m->gpus_per_node < 1 ||
                m->local_batch < 1 || m->accumulation < 1)
                continue;
            cf_perf_params p = cf_gpu_perf_on_vm(perf, recorded_nic_gbps(rq, m));
            double scale_i = solve_scale(&p, bytes, m);
            clamped += scale_i <= RECORD_SCALE_MIN * (1 + 1e-9) || scale_i >= RECORD_SCALE_MAX * (1 - 1e-9);
            log_sum += log(scale_i);
            log_sq_sum += log(scale_i) * log(scale_i);
            lo_scale = fmin(lo_scale, scale_i);
            hi_scale = fmax(hi_scale, scale_i);
            measured_sum += m->step_time_s;
            predicted_sum += scaled_step(&p, 1.0, bytes, m);
            used++;
        }
        if (!used)
            continue;
        double mean_log = log_sum / (double)used, scale = exp(mean_log);
        /* Runs that disagree leave that much doubt: the log sd of their
         * factors (sample sd; one run: none) is the compute's uncertainty,
         * never narrower than the runs themselves. */
        double var = used > 1 ? (log_sq_sum - (double)used * mean_log * mean_log) / (double)(used - 1) : 0.0;
        double spread = sqrt(fmax(0.0, var));
        const char *was = cf_provenance_name(perf->params.compute_provenance);
        perf->params.compute_scale = (perf->params.compute_scale > 0 ? perf->params.compute_scale : 1.0) * scale;
        if (!clamped) { /* measured on this GPU type; a clamped record is not that: uncertainty and provenance stay */
            perf->params.sigma_compute = spread;
            perf->params.compute_provenance = CF_PROV_MEASURED;
        }
        snprintf(perf->note, sizeof perf->note, "from %zu recorded run(s): measured step %.4g s vs %.4g s %s, compute time × %.3g",
                 used, measured_sum / (double)used, predicted_sum / (double)used, was, scale);
        add_note(in,
                 "%s throughput uses %zu measured run(s) recorded with 'cloudfit record' in place of the %s model "
                 "(compute time × %.3g)",
                 perf->gpu, used, was, scale);
        if (!clamped && hi_scale > 1.1 * lo_scale)
            add_note(in,
                     "the %zu recorded %s runs disagree (compute time × %.3g to × %.3g): that spread stays in the "
                     "interval",
                     used, perf->gpu, lo_scale, hi_scale);
        if (clamped)
            add_note(in,
                     "%zu recorded %s run(s) need the compute time moved more than %g× to be reproduced (a step "
                     "time in other units, or faster than the network allows?): each moved it by %g× at most, and "
                     "its uncertainty stays",
                     clamped, perf->gpu, RECORD_SCALE_MAX, RECORD_SCALE_MAX);
    }
}

/* ---- all together --------------------------------------------------------------------------- */

cf_status cf_inputs_build(const cf_inputs_request *rq, cf_inputs *out)
{
    memset(out, 0, sizeof *out);
    size_t cap = rq->n_given + rq->n_gpus + rq->n_profiles + 1;
    out->perf = calloc(cap, sizeof *out->perf);
    out->fits = calloc(cap, sizeof *out->fits);
    const cf_profile **used_by = calloc(cap, sizeof *used_by); /* the profile behind each perf entry */
    if (!out->perf || !out->fits || !used_by) {
        free(used_by);
        cf_inputs_free(out);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    cf_status st = add_given(rq, out);
    size_t n_from_spec = out->n_perf; /* the spec's profile.gpus entries come first */
    noise_source noise = noise_from_spec(rq, out);
    for (size_t i = 0; st == CF_OK && i < rq->n_profiles; i++) {
        const cf_profile *p = &rq->profiles[i];
        add_note(out, "cached profile used: %s backend on %s, %s (from %s)", p->backend, p->device.name, p->created_at,
                 rq->profiles_source ? rq->profiles_source : "the profile cache");
        if (p->has_noise && noise != NOISE_PROFILE && noise_from_profile(rq, p, out)) /* newest first */
            noise = NOISE_PROFILE;
        use_throughput(rq, p, cap, out, n_from_spec, used_by);
    }
    for (size_t i = 0; st == CF_OK && i < rq->n_profiles; i++) {
        const cf_profile *p = &rq->profiles[i];
        if (p->noise_failed)
            add_note(out, "the noise scale is %s: the cached %s profile on %s has none ('cloudfit profile --resume' "
                          "re-runs its noise run) because %s",
                     noise == NOISE_PROFILE ? "another cached profile's"
                     : noise == NOISE_SPEC  ? "the spec's"
                                            : "a default",
                     p->backend, p->device.name, p->noise_error);
    }
    if (st == CF_OK && noise == NOISE_DEFAULT)
        add_note(out, "the gradient noise scale is a default; measure it (profile.noise_scale) to allow larger batches "
                      "safely");
    if (st == CF_OK)
        st = add_estimates(rq, cap, out);
    if (st == CF_OK)
        apply_recorded(rq, out);
    free(used_by);
    if (st != CF_OK)
        cf_inputs_free(out);
    return st;
}

void cf_inputs_free(cf_inputs *in)
{
    free(in->perf);
    free(in->fits);
    memset(in, 0, sizeof *in);
}
