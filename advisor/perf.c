#include "cloudfit/advisor/perf.h"

#include <math.h>

double cf_perf_compute_s(const cf_perf_params *p, double local_batch, int gpus_in_node)
{
    double slowdown = 1.0 + p->contention * (gpus_in_node > 1 ? gpus_in_node - 1 : 0);
    return (p->alpha_s + p->beta_s * local_batch) * slowdown;
}

double cf_perf_sync_s(const cf_perf_params *p, double gradient_bytes, int nodes, int gpus_per_node)
{
    double bits = gradient_bytes * 8.0;
    double t = 0.0;
    if (gpus_per_node > 1 && p->intra_gbps > 0)
        t += 2.0 * (gpus_per_node - 1) / gpus_per_node * bits / (p->intra_gbps * 1e9);
    if (nodes > 1 && p->inter_gbps > 0) {
        /* NCCL's ring runs through all K GPUs; every node boundary it
         * crosses carries 2(K−1)/K·S, so the NIC is the bottleneck. */
        int gpus = nodes * gpus_per_node;
        t += 2.0 * (gpus - 1) / gpus * bits / (p->inter_gbps * 1e9) + p->latency_s;
    }
    return t;
}

/* (a^γ + b^γ)^(1/γ), computed as max·(1 + (min/max)^γ)^(1/γ) so that large γ
 * cannot overflow. */
static double overlap(double a, double b, double gamma)
{
    double hi = a > b ? a : b, lo = a > b ? b : a;
    if (hi <= 0)
        return 0;
    if (gamma == 1.0)
        return hi + lo;
    return hi * pow(1.0 + pow(lo / hi, gamma), 1.0 / gamma);
}

double cf_perf_step_s(const cf_perf_params *p, double gradient_bytes, int nodes, int gpus_per_node,
                      double local_batch, int accumulation)
{
    double t_c = cf_perf_compute_s(p, local_batch, gpus_per_node);
    if (nodes * gpus_per_node <= 1)
        return accumulation * t_c;
    double t_sync = cf_perf_sync_s(p, gradient_bytes, nodes, gpus_per_node);
    double last = gradient_bytes > 0 ? fmin(1.0, CF_DDP_BUCKET_BYTES / gradient_bytes) : 1.0;
    return (accumulation - 1) * t_c + overlap(t_c, (1.0 - last) * t_sync, p->gamma) + last * t_sync;
}

cf_perf_params cf_perf_defaults(const cf_gpu *gpu)
{
    double interconnect_gbs = gpu && gpu->interconnect_gbs_per_gpu > 0 ? gpu->interconnect_gbs_per_gpu
                                                                       : CF_DEFAULT_UNKNOWN_INTERCONNECT_GBS;
    return (cf_perf_params){.contention = CF_DEFAULT_CONTENTION,
                            .intra_gbps = interconnect_gbs * 8.0 * CF_DEFAULT_INTRA_EFFICIENCY,
                            .inter_gbps = 0,
                            .latency_s = CF_DEFAULT_LATENCY_S,
                            .gamma = CF_DEFAULT_GAMMA,
                            .compute_provenance = CF_PROV_DEFAULT,
                            .network_provenance = CF_PROV_DEFAULT,
                            .memory_provenance = CF_PROV_DEFAULT};
}
