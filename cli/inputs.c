#include "inputs.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cloudfit/measurement.h"

void cf_inputs_add_note(cf_inputs *in, const char *fmt, ...)
{
    if (in->n_notes == CF_INPUTS_MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(in->notes[in->n_notes++], sizeof in->notes[0], fmt, ap);
    va_end(ap);
}

/* Nominal NIC of the catalog VM that carries `gpus` GPUs of this model. */
static double catalog_network_gbps(const cf_catalog *catalog, const char *gpu, int gpus)
{
    for (size_t i = 0; i < catalog->n_vms; i++) {
        const cf_vm *vm = &catalog->vms[i];
        if (strcasecmp(vm->gpu_model, gpu) == 0 && vm->gpu_count == gpus && vm->network_gbps > 0)
            return vm->network_gbps;
    }
    return 0;
}

/* Rows of the CSV for this GPU and this model: the rows whose model column
 * is the spec's name, or all rows when the file holds a single model. */
static cf_status select_rows(const cf_spec *spec, const cf_spec_gpu_profile *gp, const cf_measurement_set *set,
                             cf_measurement **out, size_t *n_out)
{
    int single_model = 1, named = 0;
    for (size_t i = 0; i < set->n_rows; i++) {
        if (strcmp(set->rows[i].model, set->rows[0].model) != 0)
            single_model = 0;
        if (strcmp(set->rows[i].model, spec->name) == 0)
            named = 1;
    }
    if (!single_model && !named) {
        cf_error_set(CF_ERR_INVALID, "%s: holds several models and none is named '%s'", gp->measurements_path,
                     spec->name);
        cf_error_hint("keep one model per file, or name the spec after the CSV's model column");
        return CF_ERR_INVALID;
    }
    *out = malloc(set->n_rows * sizeof **out);
    if (!*out)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < set->n_rows; i++) {
        const cf_measurement *r = &set->rows[i];
        if (strcasecmp(r->gpu, gp->gpu) != 0 || (named && strcmp(r->model, spec->name) != 0))
            continue;
        (*out)[n++] = *r;
    }
    if (n == 0) {
        free(*out);
        *out = NULL;
        cf_error_set(CF_ERR_INVALID, "%s: no rows for GPU '%s'", gp->measurements_path, gp->gpu);
        return CF_ERR_INVALID;
    }
    *n_out = n;
    return CF_OK;
}

static cf_status perf_from_measurements(const cf_spec *spec, const cf_catalog *catalog, const cf_gpu *gpu,
                                        const cf_spec_gpu_profile *gp, cf_gpu_perf *perf, cf_perf_fit_report *rep)
{
    cf_measurement_set set;
    cf_status st = cf_measurements_load(gp->measurements_path, &set);
    if (st != CF_OK)
        return st;
    cf_measurement *rows = NULL;
    size_t n = 0;
    st = select_rows(spec, gp, &set, &rows, &n);
    if (st != CF_OK) {
        cf_measurements_free(&set);
        return st;
    }
    st = cf_inputs_fit_rows(spec, gpu, rows, n, catalog_network_gbps(catalog, gpu->model, rows[0].hw_gpus_per_node),
                            perf, rep);
    if (st != CF_OK)
        cf_error_prefix("%s: GPU '%s'", gp->measurements_path, gp->gpu);
    free(rows);
    cf_measurements_free(&set);
    return st;
}

cf_status cf_inputs_fit_rows(const cf_spec *spec, const cf_gpu *gpu, const cf_measurement *rows, size_t n,
                             double reference_network_gbps, cf_gpu_perf *perf, cf_perf_fit_report *rep)
{
    int largest_batch = 0;
    for (size_t i = 0; i < n; i++)
        if (rows[i].local_bsz > largest_batch)
            largest_batch = rows[i].local_bsz;
    perf->reference_network_gbps = reference_network_gbps;
    cf_perf_params start = {0};
    start.intra_gbps = gpu->interconnect_gbs_per_gpu * 8.0 * CF_DEFAULT_INTRA_EFFICIENCY;
    start.inter_gbps = 0; /* unidentified without multi-node rows: set per VM later */
    start.latency_s = 0.001;
    start.gamma = CF_DEFAULT_GAMMA;
    start.contention = 0.02;
    start.network_provenance = CF_PROV_DEFAULT;
    cf_status st = cf_perf_fit(rows, n, spec->parameters * spec->gradient_bytes, &start, &perf->params, rep);
    if (st == CF_OK && !rep->fitted_inter)
        perf->params.inter_gbps = 0;
    perf->params.max_local_batch = largest_batch;
    perf->params.memory_provenance = CF_PROV_MEASURED;
    snprintf(perf->note, sizeof perf->note, "fitted to %zu measured step times (%zu single-GPU, %zu multi-GPU, %zu multi-node), rms error %.1f%%",
             n, rep->n_single_gpu, rep->n_multi_gpu_node, rep->n_multi_node, 100 * rep->rel_rmse);
    return st;
}

static void perf_from_inline(const cf_spec *spec, const cf_gpu *gpu, const cf_spec_gpu_profile *gp,
                             cf_gpu_perf *perf)
{
    cf_perf_params *p = &perf->params;
    p->alpha_s = gp->alpha_s;
    p->beta_s = gp->beta_s;
    p->compute_provenance = CF_PROV_FITTED;
    p->contention = 0.02;
    p->gamma = gp->overlap_gamma > 0 ? gp->overlap_gamma : CF_DEFAULT_GAMMA;
    p->intra_gbps = gp->intra_node_gbps > 0 ? gp->intra_node_gbps
                                            : gpu->interconnect_gbs_per_gpu * 8.0 * CF_DEFAULT_INTRA_EFFICIENCY;
    p->inter_gbps = gp->inter_node_gbps;
    p->latency_s = gp->latency_s > 0 ? gp->latency_s : 0.001;
    p->network_provenance = gp->inter_node_gbps > 0 ? CF_PROV_FITTED : CF_PROV_DEFAULT;
    (void)spec;
    snprintf(perf->note, sizeof perf->note, "profile in the spec: t_c(m) = %.4g + %.4g·m s", gp->alpha_s, gp->beta_s);
}

static const cf_spec_gpu_profile *spec_profile(const cf_spec *spec, const char *gpu)
{
    for (int i = 0; i < spec->n_gpus; i++)
        if (strcasecmp(spec->gpus[i].gpu, gpu) == 0)
            return &spec->gpus[i];
    return NULL;
}

/* The profiled GPU whose memory bandwidth is closest to the target's: the
 * carry-over is most trustworthy between similar parts. */
static const cf_gpu_perf *closest_reference(const cf_catalog *catalog, const cf_inputs *in, size_t n_profiled,
                                            const cf_gpu *target, const cf_gpu **out_gpu)
{
    const cf_gpu_perf *best = NULL;
    double best_gap = 0;
    for (size_t i = 0; i < n_profiled; i++) {
        const cf_gpu *g = cf_catalog_gpu(catalog, in->perf[i].gpu);
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

static cf_status add_profiled(const cf_spec *spec, const cf_catalog *catalog, cf_inputs *in)
{
    for (int i = 0; i < spec->n_gpus; i++) {
        const cf_spec_gpu_profile *gp = &spec->gpus[i];
        const cf_gpu *gpu = cf_catalog_gpu(catalog, gp->gpu);
        if (!gpu) {
            cf_error_set(CF_ERR_INVALID, "%s: profile.gpus.%s: unknown GPU model", spec->path, gp->gpu);
            cf_error_hint("use a GPU name from the catalog (see docs/catalog.md), e.g. T4, A100-80GB, H100");
            return CF_ERR_INVALID;
        }
        cf_gpu_perf *perf = &in->perf[in->n_perf];
        cf_perf_fit_report *rep = &in->fits[in->n_perf];
        memset(perf, 0, sizeof *perf);
        snprintf(perf->gpu, sizeof perf->gpu, "%s", gpu->model);
        if (gp->measurements_path[0]) {
            cf_status st = perf_from_measurements(spec, catalog, gpu, gp, perf, rep);
            if (st != CF_OK)
                return st;
        } else if (gp->has_compute) {
            perf_from_inline(spec, gpu, gp, perf);
        } else {
            continue; /* only a ceiling or network figures: applied to the estimate below */
        }
        if (gp->max_local_batch > 0) {
            perf->params.max_local_batch = gp->max_local_batch;
            perf->params.memory_provenance = CF_PROV_MEASURED;
        } else if (!gp->measurements_path[0]) {
            perf->params.max_local_batch = cf_estimate_max_local_batch(spec, gpu->memory_gib, NULL, 0);
            perf->params.memory_provenance = perf->params.max_local_batch ? CF_PROV_ESTIMATED : CF_PROV_DEFAULT;
        }
        in->n_perf++;
    }
    return CF_OK;
}

static void apply_partial_profile(const cf_spec_gpu_profile *gp, cf_gpu_perf *perf)
{
    if (!gp)
        return;
    if (gp->max_local_batch > 0) {
        perf->params.max_local_batch = gp->max_local_batch;
        perf->params.memory_provenance = CF_PROV_MEASURED;
    }
    if (gp->inter_node_gbps > 0) {
        perf->params.inter_gbps = gp->inter_node_gbps;
        perf->params.network_provenance = CF_PROV_FITTED;
    }
    if (gp->intra_node_gbps > 0)
        perf->params.intra_gbps = gp->intra_node_gbps;
    if (gp->overlap_gamma > 0)
        perf->params.gamma = gp->overlap_gamma;
}

static void build_noise(const cf_spec *spec, cf_inputs *in)
{
    if (spec->n_noise_trace > 0) {
        cf_noise_model_init_trend(&in->noise, spec->batch, spec->noise_trace, spec->n_noise_trace, CF_PROV_MEASURED);
        snprintf(in->noise_note, sizeof in->noise_note,
                 "noise-scale trace in the spec (%d points, %.0f → %.0f over training%s; effective %.0f)",
                 spec->n_noise_trace, in->noise.b_noise_start, in->noise.b_noise_end,
                 in->noise.trace_end_progress < 1 ? ", continued along its trend" : "", in->noise.b_noise_effective);
    } else if (spec->has_noise_scale) {
        cf_noise_model_init(&in->noise, spec->batch, spec->noise_scale, NULL, 0, CF_PROV_MEASURED);
        snprintf(in->noise_note, sizeof in->noise_note, "noise scale %.0f from the spec (constant over training)",
                 spec->noise_scale);
    } else {
        cf_noise_model_init(&in->noise, spec->batch, spec->batch, NULL, 0, CF_PROV_DEFAULT);
        snprintf(in->noise_note, sizeof in->noise_note,
                 "noise scale unknown: assumed equal to the recipe batch (%d), which penalises larger batches",
                 spec->batch);
        cf_inputs_add_note(in, "the gradient noise scale is a default; measure it (profile.noise_scale) to allow larger batches safely");
    }
}

cf_status cf_inputs_build(const cf_spec *spec, const cf_catalog *catalog, const cf_vm *const *rows, size_t n_rows,
                          cf_inputs *out)
{
    memset(out, 0, sizeof *out);
    size_t cap = (size_t)spec->n_gpus + catalog->n_gpus + 1;
    out->perf = calloc(cap, sizeof *out->perf);
    out->fits = calloc(cap, sizeof *out->fits);
    if (!out->perf || !out->fits) {
        cf_inputs_free(out);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    cf_status st = add_profiled(spec, catalog, out);
    build_noise(spec, out);
    if (st == CF_OK) /* cached `cloudfit profile` results override the above (cli/inputs_profiled.c) */
        st = cf_inputs_add_profiled(spec, catalog, cap, out);
    if (st != CF_OK) {
        cf_inputs_free(out);
        return st;
    }
    size_t n_profiled = out->n_perf;
    /* Every other GPU type among the candidate rows: carried over or estimated. */
    for (size_t r = 0; r < n_rows; r++) {
        const char *model = rows[r]->gpu_model;
        size_t k;
        for (k = 0; k < out->n_perf; k++)
            if (strcasecmp(out->perf[k].gpu, model) == 0)
                break;
        if (k < out->n_perf)
            continue;
        const cf_gpu *target = cf_catalog_gpu(catalog, model);
        if (!target || k >= cap)
            continue;
        const cf_gpu *ref_gpu = NULL;
        const cf_gpu_perf *ref = closest_reference(catalog, out, n_profiled, target, &ref_gpu);
        cf_gpu_perf *perf = &out->perf[out->n_perf];
        if (cf_gpu_peak_tflops(target, spec->precision) <= 0 && !ref)
            continue; /* no compute figures for this GPU (e.g. B300): cannot rank it */
        st = cf_gpu_perf_estimate(spec, target, ref, ref_gpu, perf);
        if (st != CF_OK) {
            cf_inputs_free(out);
            return st;
        }
        apply_partial_profile(spec_profile(spec, model), perf);
        out->n_perf++;
    }
    return CF_OK;
}

void cf_inputs_free(cf_inputs *in)
{
    free(in->perf);
    free(in->fits);
    memset(in, 0, sizeof *in);
}
