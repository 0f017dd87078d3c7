#include "cloudfit/advisor/curves.h"

#include <math.h>
#include <string.h>
#include <strings.h>
#include "../advisor_internal.h"
#include "curves_internal.h"
#include "perf_internal.h"
#include "stateff_internal.h"

/* The GPU type's parameters on the chosen VM, exactly as the enumeration
 * sets them per VM shape (cf_gpu_perf_on_vm: the NIC, its bandwidth class,
 * the overlap and the measured node counts of that class), so the curve
 * passes through the chosen plan; only the inter-node bandwidth was moved
 * before, and on a VM of another network class the plot showed 3,337
 * samples/s at the chosen 4 nodes where the plan runs 4,765. */
static cf_perf_params params_on_vm(const cf_gpu_perf *perf, const cf_vm *vm)
{
    return cf_gpu_perf_on_vm(perf, vm->network_gbps);
}

cf_status cf_scaling_curve(const cf_job *job, const cf_constraints *limits, const cf_gpu_perf *perf,
                           const cf_noise_model *noise, const cf_config *chosen, cf_scaling_point *out,
                           size_t cap, size_t *n_out)
{
    *n_out = 0;
    if (!perf || !chosen || !chosen->vm || strcasecmp(perf->gpu, chosen->vm->gpu_model) != 0)
        return cf_error_set(CF_ERR_INVALID, "no performance parameters for the chosen GPU type");
    cf_perf_params p = params_on_vm(perf, chosen->vm);
    int g = chosen->gpus_per_node, m = chosen->local_batch, s = chosen->accumulation;
    int max_nodes = limits->max_nodes > 0 ? limits->max_nodes : chosen->nodes;
    if (limits->max_gpus > 0 && g > 0 && max_nodes * g > limits->max_gpus)
        max_nodes = limits->max_gpus / g;
    if (max_nodes < chosen->nodes)
        max_nodes = chosen->nodes;
    double bytes = job->parameters * job->gradient_bytes;
    double one_node = 0;
    for (int n = 1; n <= max_nodes && *n_out < cap; n++) {
        double step = cf_perf_step_s(&p, bytes, n, g, m, s);
        double global = (double)n * g * m * s;
        cf_scaling_point *pt = &out[(*n_out)++];
        pt->nodes = n;
        pt->step_time_s = step;
        pt->samples_per_s = step > 0 ? global / step : 0;
        if (n == 1)
            one_node = pt->samples_per_s;
        pt->ideal_samples_per_s = one_node * n;
        double steps = noise ? cf_samples_to_target(noise, job->total_samples, global) / global : 0;
        pt->hours = steps * step / 3600.0;
        pt->reason = cf_perf_scaling_reason(&p, bytes, n, g, m, s);
    }
    return CF_OK;
}

size_t cf_stateff_curve(const cf_noise_model *noise, double e0_samples, double lo, double hi, size_t n,
                        cf_stateff_point *out)
{
    if (!noise || n < 2 || !(lo > 0) || !(hi > lo))
        return 0;
    double a = log(lo), b = log(hi);
    for (size_t i = 0; i < n; i++) {
        double m = exp(a + (b - a) * (double)i / (double)(n - 1));
        out[i].global_batch = m;
        out[i].efficiency = cf_stat_efficiency(noise, m);
        out[i].samples_to_target = cf_samples_to_target(noise, e0_samples, m);
    }
    return n;
}
