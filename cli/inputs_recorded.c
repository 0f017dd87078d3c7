/* `cloudfit record` → `recommend`: measured step times of earlier runs of
 * the same spec correct the throughput model of their GPU type. For each
 * measurement, find the factor s on the compute time (α, β → s·α, s·β)
 * that makes the model's step time for the recorded configuration equal
 * the measured one; apply the geometric mean of those factors. Only the
 * compute scale is corrected: the network and overlap stay as they were,
 * so single-node records are exact and multi-node ones put the whole gap
 * on compute (docs/ci.md). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "inputs.h"

#define SCALE_MIN 0.05
#define SCALE_MAX 20.0

/* Effective inter-node bandwidth on the recorded VM, as the enumeration
 * sets it. */
static double inter_gbps_for(const cf_catalog *catalog, const cf_gpu_perf *perf, const cf_history_measurement *m)
{
    double nominal = 0;
    for (size_t i = 0; i < catalog->n_vms; i++)
        if (strcmp(catalog->vms[i].cloud, m->cloud) == 0 &&
            strcmp(catalog->vms[i].instance_type, m->instance_type) == 0) {
            nominal = catalog->vms[i].network_gbps;
            break;
        }
    return cf_effective_inter_gbps(perf, nominal, NULL);
}

static double model_step(const cf_perf_params *base, double scale, double bytes, const cf_history_measurement *m)
{
    cf_perf_params p = *base;
    p.alpha_s *= scale;
    p.beta_s *= scale;
    return cf_perf_step_s(&p, bytes, m->nodes, m->gpus_per_node, m->local_batch, m->accumulation);
}

/* The compute scale reproducing m's step time (bisection: the step time
 * grows with the compute time). Clamped to [SCALE_MIN, SCALE_MAX]. */
static double solve_scale(const cf_perf_params *p, double bytes, const cf_history_measurement *m)
{
    double lo = SCALE_MIN, hi = SCALE_MAX;
    if (model_step(p, lo, bytes, m) >= m->step_time_s)
        return lo;
    if (model_step(p, hi, bytes, m) <= m->step_time_s)
        return hi;
    for (int i = 0; i < 100 && hi / lo > 1 + 1e-9; i++) {
        double mid = sqrt(lo * hi);
        if (model_step(p, mid, bytes, m) < m->step_time_s)
            lo = mid;
        else
            hi = mid;
    }
    return sqrt(lo * hi);
}

void cf_inputs_apply_recorded(const cf_spec *spec, const cf_catalog *catalog, const cf_history_measurement *ms,
                              size_t n, cf_inputs *in)
{
    double bytes = spec->parameters * spec->gradient_bytes;
    for (size_t k = 0; k < in->n_perf; k++) {
        cf_gpu_perf *perf = &in->perf[k];
        double log_sum = 0, measured_sum = 0, predicted_sum = 0;
        size_t used = 0;
        for (size_t i = 0; i < n; i++) {
            const cf_history_measurement *m = &ms[i];
            if (strcasecmp(m->gpu, perf->gpu) != 0 || !(m->step_time_s > 0) || m->nodes < 1 ||
                m->gpus_per_node < 1 || m->local_batch < 1 || m->accumulation < 1)
                continue;
            cf_perf_params p = perf->params;
            p.inter_gbps = inter_gbps_for(catalog, perf, m);
            log_sum += log(solve_scale(&p, bytes, m));
            measured_sum += m->step_time_s;
            predicted_sum += model_step(&p, 1.0, bytes, m);
            used++;
        }
        if (!used)
            continue;
        double scale = exp(log_sum / (double)used);
        const char *was = cf_provenance_name(perf->params.compute_provenance);
        perf->params.alpha_s *= scale;
        perf->params.beta_s *= scale;
        perf->params.compute_provenance = CF_PROV_MEASURED;
        snprintf(perf->note, sizeof perf->note,
                 "from %zu recorded run(s): measured step %.4g s vs %.4g s %s, compute time × %.3g", used,
                 measured_sum / (double)used, predicted_sum / (double)used, was, scale);
        cf_inputs_add_note(in, "%s throughput uses %zu measured run(s) recorded with 'cloudfit record' in place of the %s "
                     "model (compute time × %.3g)",
                 perf->gpu, used, was, scale);
    }
}
