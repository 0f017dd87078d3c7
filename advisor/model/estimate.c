#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cloudfit/advisor.h"
#include "cloudfit/advisor/carry.h"
#include "../advisor_internal.h"
#include "carry_internal.h"
#include "perf_internal.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
#define MIB (1024.0 * 1024.0)
/* CUDA context, framework workspace and allocator slack kept free, GiB. */
#define RUNTIME_RESERVE_GIB 1.5
/* Fraction of GPU memory a training job can count on. */
#define USABLE_MEMORY_FRACTION 0.92

static double optimizer_state_bytes_per_param(cf_optimizer optimizer)
{
    switch (optimizer) {
    case CF_OPT_SGD: return 0;
    case CF_OPT_MOMENTUM: return 4;
    case CF_OPT_ADAM:
    case CF_OPT_ADAMW:
    case CF_OPT_LAMB: return 8;
    }
    return 8;
}

/* Weights (fp32 master copy), gradients and optimizer state, bytes. */
static double static_memory_bytes(const cf_job *job)
{
    double per_param = 4.0 + job->gradient_bytes + optimizer_state_bytes_per_param(job->optimizer);
    if (job->gradient_bytes < 4)
        per_param += job->gradient_bytes; /* half-precision working copy of the weights */
    return job->parameters * per_param + RUNTIME_RESERVE_GIB * GIB;
}

int cf_estimate_max_local_batch(const cf_job *job, double gpu_memory_gib, const cf_gpu_perf *ref,
                                double ref_memory_gib)
{
    double per_sample_bytes = job->memory_per_sample_mib * MIB;
    if (per_sample_bytes <= 0 && ref && ref->params.max_local_batch > 0 && ref_memory_gib > 0) {
        /* Infer activation memory per sample from the reference ceiling. */
        double free_ref = ref_memory_gib * GIB * USABLE_MEMORY_FRACTION - static_memory_bytes(job);
        if (free_ref > 0)
            per_sample_bytes = free_ref / ref->params.max_local_batch;
    }
    double free_bytes = gpu_memory_gib * GIB * USABLE_MEMORY_FRACTION - static_memory_bytes(job);
    if (per_sample_bytes <= 0) {
        /* No activation figure: the ceiling is unknown (0), unless the
         * weights, gradients and optimizer state alone are more than the
         * GPU holds, which no batch changes. A reference profile that ran
         * where this says nothing fits (sharded state, say) keeps it
         * unknown on a GPU with at least the reference's memory: the
         * measurement wins over the formula there. It says nothing about a
         * smaller GPU, which the formula still rules out (a 20B AdamW job
         * that ran on an H200 offered a 16 GB T4, whose usable memory holds
         * not even the bf16 weights). */
        int ran_below_formula =
            ref && ref->params.max_local_batch > 0 && ref_memory_gib > 0 && gpu_memory_gib >= ref_memory_gib;
        return gpu_memory_gib > 0 && free_bytes <= 0 && !ran_below_formula ? -1 : 0;
    }
    if (free_bytes < per_sample_bytes)
        return 0 - 1; /* does not fit even one sample */
    double m = floor(free_bytes / per_sample_bytes);
    return m > 1e6 ? 1000000 : (int)m;
}

double cf_effective_inter_gbps(const cf_gpu_perf *perf, double vm_nominal_gbps, cf_provenance *out_prov)
{
    cf_perf_params p = cf_gpu_perf_on_vm(perf, vm_nominal_gbps);
    if (out_prov)
        *out_prov = p.network_provenance;
    return p.inter_gbps > 0 ? p.inter_gbps : cf_default_inter_gbps(vm_nominal_gbps);
}

cf_perf_params cf_gpu_perf_on_vm(const cf_gpu_perf *perf, double vm_nominal_gbps)
{
    return cf_perf_on_network(&perf->params, perf->reference_network_gbps, vm_nominal_gbps);
}

cf_status cf_gpu_perf_estimate(const cf_job *job, const cf_gpu *target, const cf_gpu_perf *ref,
                               const cf_gpu *ref_gpu, cf_gpu_perf *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->gpu, sizeof out->gpu, "%s", target->model);
    cf_perf_params *p = &out->params;
    *p = cf_perf_defaults(target);
    double peak_t = cf_gpu_peak_tflops(target, job->precision) * 1e12;
    p->gradient_bytes = job->parameters * job->gradient_bytes;
    if (ref && ref_gpu) {
        /* Measured speed ratios between GPU types follow neither peak
         * FLOP/s nor memory bandwidth alone; a power law in both, fitted
         * on published training throughput, does better (docs/model.md).
         * The whole single-node step scales by it; the network and the
         * in-node contention stay the reference's, the in-node rate is the
         * target's. */
        double ratio = cf_gpu_time_ratio(ref_gpu, target, job->precision);
        cf_perf_params ref_p = ref->params;
        p->n_curves = ref_p.n_curves;
        memcpy(p->curves, ref_p.curves, sizeof p->curves);
        p->alpha_s = ref_p.alpha_s;
        p->beta_s = ref_p.beta_s;
        p->compute_scale = (ref_p.compute_scale > 0 ? ref_p.compute_scale : 1.0) * ratio;
        p->contention = ref_p.contention;
        p->sigma_profile = ref_p.sigma_profile;
        p->sigma_compute = hypot(ref_p.sigma_compute, cf_carry_sigma(ref_gpu, job->precision, target, job->precision, NULL));
        p->inter_gbps = ref_p.inter_gbps;
        p->hide = ref_p.hide;
        p->overhead_s = ref_p.overhead_s;
        p->two_vm_exponent = ref_p.two_vm_exponent;
        p->sigma_fit = ref_p.sigma_fit;
        p->max_nodes_measured = ref_p.max_nodes_measured;
        p->max_node_gpus_measured = ref_p.max_node_gpus_measured;
        p->network_provenance = ref_p.inter_gbps > 0 ? CF_PROV_ESTIMATED : CF_PROV_DEFAULT;
        out->reference_network_gbps = ref->reference_network_gbps;
        snprintf(out->carried_from, sizeof out->carried_from, "%s", ref_gpu->model);
        snprintf(out->profile_memory_format, sizeof out->profile_memory_format, "%s", ref->profile_memory_format);
        /* The same rule `validate --crossgpu` scores, with this profile's
         * own fixed per-step share and the memory-ceiling batch ratio. */
        int m_ref = ref_p.max_local_batch;
        int m_to = cf_estimate_max_local_batch(job, target->memory_gib, ref, ref_gpu->memory_gib);
        double t_ref = m_ref > 0 ? cf_perf_compute_s(&ref_p, m_ref, 1) : 0;
        double t_half = m_ref > 1 ? cf_perf_compute_s(&ref_p, m_ref / 2.0, 1) : 0;
        if (m_ref > 1 && m_to > 0 && t_ref > t_half && t_half > 0) {
            cf_carry_rule rule = cf_carry_rule_default();
            /* the fixed share at the largest batch, from the slope between m/2 and m */
            double beta = (t_ref - t_half) / (m_ref / 2.0);
            double phi = fmax(0.0, (t_ref - beta * m_ref) / (beta * m_ref));
            snprintf(out->note, sizeof out->note,
                     "carried over from the %s profile (×%.2f time per sample; ×%.2f throughput at the largest "
                     "batch, %d vs %d)",
                     ref_gpu->model, ratio,
                     cf_carry_throughput_ratio(ref_gpu, target, job->precision, &rule, phi, (double)m_to / m_ref),
                     m_to, m_ref);
        } else {
            snprintf(out->note, sizeof out->note,
                     "carried over from the %s profile (×%.2f time per sample: peak FLOP/s and memory bandwidth)",
                     ref_gpu->model, ratio);
        }
    } else if (job->flops_per_sample > 0 && peak_t > 0) {
        p->beta_s = job->flops_per_sample / (peak_t * CF_DEFAULT_ROOFLINE_EFFICIENCY);
        /* Optimizer step: read weights, gradients and state, write weights
         * and state, at memory bandwidth; plus launch overhead. */
        double bytes = job->parameters * (4.0 + job->gradient_bytes + 2 * optimizer_state_bytes_per_param(job->optimizer) + 4.0);
        p->alpha_s = 0.005 + bytes / (target->memory_bandwidth_gbs * 1e9);
        p->sigma_compute = CF_PERF_SIGMA_ROOFLINE;
        snprintf(out->note, sizeof out->note,
                 "estimated from %.3g FLOP/sample at %.0f%% of the %s peak %.0f TFLOP/s (%s)",
                 job->flops_per_sample, 100 * CF_DEFAULT_ROOFLINE_EFFICIENCY, target->model, peak_t / 1e12,
                 cf_precision_name(job->precision));
    } else {
        cf_error_set(CF_ERR_INVALID, "%s: model.flops_per_sample: needed to predict throughput on %s (the spec "
                     "has no profile of a GPU to carry over)", job->source[0] ? job->source : "<spec>", target->model);
        cf_error_hint("add profile.gpus with a measured GPU type, or model.flops_per_sample (training FLOPs per sample)");
        return CF_ERR_INVALID;
    }
    p->compute_provenance = CF_PROV_ESTIMATED;
    int m = cf_estimate_max_local_batch(job, target->memory_gib, ref, ref_gpu ? ref_gpu->memory_gib : 0);
    p->max_local_batch = m;
    p->memory_provenance = m != 0 ? CF_PROV_ESTIMATED : CF_PROV_DEFAULT;
    return CF_OK;
}
