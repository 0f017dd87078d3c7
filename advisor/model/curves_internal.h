/* The advisor's own half of cloudfit/advisor/curves.h: functions used only inside advisor/
 * (and by its tests), kept out of the public header. */
#ifndef CLOUDFIT_ADVISOR_CURVES_INTERNAL_H
#define CLOUDFIT_ADVISOR_CURVES_INTERNAL_H
#include "cloudfit/advisor/curves.h"

/* Throughput of `chosen`'s VM type, per-GPU batch and accumulation for
 * 1 … max_nodes nodes (limited by the constraints' max_nodes and max_gpus,
 * and never below the chosen count), with `perf` the parameters of its GPU
 * type. `out` has room for `cap` points; *n_out gets the count.
 * CF_ERR_INVALID when perf is NULL or the GPU type differs. */
cf_status cf_scaling_curve(const cf_job *job, const cf_constraints *limits, const cf_gpu_perf *perf,
                           const cf_noise_model *noise, const cf_config *chosen, cf_scaling_point *out,
                           size_t cap, size_t *n_out);

/* Statistical efficiency at `n` global batches spaced evenly on a log
 * scale over [lo, hi] (n ≥ 2, 0 < lo < hi). Returns the count written. */
size_t cf_stateff_curve(const cf_noise_model *noise, double e0_samples, double lo, double hi, size_t n,
                        cf_stateff_point *out);

#endif
