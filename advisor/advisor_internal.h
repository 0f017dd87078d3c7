/* The advisor's own half of cloudfit/advisor.h: functions used only inside advisor/
 * (and by its tests), kept out of the public header. */
#ifndef CLOUDFIT_ADVISOR_ADVISOR_INTERNAL_H
#define CLOUDFIT_ADVISOR_ADVISOR_INTERNAL_H
#include "cloudfit/advisor.h"

/* The effective inter-node all-reduce rate of `perf` on a VM whose NIC is
 * `vm_nominal_gbps`: a measured figure carried in proportion to the NIC
 * (within one fabric), a given effective figure as is, else the default;
 * *out_prov says which. */
double cf_effective_inter_gbps(const cf_gpu_perf *perf, double vm_nominal_gbps, cf_provenance *out_prov);

/* perf's parameters on a VM whose NIC is `vm_nominal_gbps` (cf_perf_on_network). */
cf_perf_params cf_gpu_perf_on_vm(const cf_gpu_perf *perf, double vm_nominal_gbps);

/* Derives a GPU type's parameters without a profile of its own: carries
 * `ref` (a profiled type) over with the GPU table — a roofline per term —
 * or, when ref is NULL, estimates from model.flops_per_sample alone.
 * Fails with CF_ERR_INVALID when neither is possible. */
cf_status cf_gpu_perf_estimate(const cf_job *job, const cf_gpu *target, const cf_gpu_perf *ref,
                               const cf_gpu *ref_gpu, cf_gpu_perf *out);

/* Memory ceiling estimate (per-GPU batch) from model.memory_per_sample_mib
 * or, failing that, from a reference ceiling on another GPU. 0 = unknown. */
int cf_estimate_max_local_batch(const cf_job *job, double gpu_memory_gib, const cf_gpu_perf *ref,
                                double ref_memory_gib);

/* The per-GPU batch ceiling when memory says nothing: the recipe's batch
 * over its current GPUs (training.current), else the recipe's batch; the
 * enumeration and --mix use the same (the mix took the whole batch). */
int cf_default_max_local_batch(const cf_job *job);

/* The distribution behind a spot or mixed configuration (NULL when it
 * has none), and the configuration's figures set from it: hours and
 * total_usd the medians, the p10/p90 and the quantiles at the confidence. */
const cf_spot_spread *cf_config_spot_spread(const cf_config *c);
void cf_config_spot_quantiles(cf_config *c);

/* 1 when `hours` and `usd` meet the deadline and the budget of `c`, each
 * with `slack` (a fraction) of room: the advisor's one feasibility test. */
int cf_constraints_met(const cf_constraints *c, double hours, double usd, double slack);

/* Pareto front of points (x, y), both minimised: indices of the
 * non-dominated points sorted by x (of equal points, the first); returns
 * their count, 0 for n == 0 or when memory runs out. `order` needs n slots.
 * O(n log n). */
size_t cf_pareto_front(const double *x, const double *y, size_t n, size_t *order);

/* The front of the figures as every output prints them, at 6 significant
 * digits (docs/output.md): cf_pareto_front's, less each point that reads
 * as dominated once rounded (equal hours and a dearer cost, or equal cost
 * and more hours). Rounding is monotone, so that front lies within the
 * exact one, and only its few points are rounded. */
size_t cf_pareto_front_printed(const double *x, const double *y, size_t n, size_t *order);

#endif
