/* The curves behind a recommendation's plots (advisor/model/curves.c): how the
 * chosen VM type's throughput grows with the node count, and how
 * statistical efficiency falls with the global batch. Pure computation,
 * the same model the enumeration ranks with. */
#ifndef CLOUDFIT_ADVISOR_CURVES_H
#define CLOUDFIT_ADVISOR_CURVES_H
#include <stddef.h>
#include "cloudfit/advisor.h"
#include "cloudfit/status.h"

typedef struct {
    int nodes;
    double step_time_s;
    double samples_per_s;        /* at the chosen per-GPU batch and accumulation */
    double ideal_samples_per_s;  /* nodes × the one-node throughput (linear scaling) */
    double hours;                /* training time at this node count (no start-up or preemption) */
    cf_scaling_reason reason;    /* why the throughput fell (or jumped) from one node fewer; REGULAR when it did not */
} cf_scaling_point;

/* Throughput of `chosen`'s VM type, per-GPU batch and accumulation for
 * 1 … max_nodes nodes (limited by the constraints' max_nodes and max_gpus,
 * and never below the chosen count), with `perf` the parameters of its GPU
 * type. `out` has room for `cap` points; *n_out gets the count.
 * CF_ERR_INVALID when perf is NULL or the GPU type differs. */
cf_status cf_scaling_curve(const cf_job *job, const cf_constraints *limits, const cf_gpu_perf *perf,
                           const cf_noise_model *noise, const cf_config *chosen, cf_scaling_point *out,
                           size_t cap, size_t *n_out);

typedef struct {
    double global_batch;
    double efficiency;           /* E0 / E(M): 1 at the recipe's batch */
    double samples_to_target;
} cf_stateff_point;

/* Statistical efficiency at `n` global batches spaced evenly on a log
 * scale over [lo, hi] (n ≥ 2, 0 < lo < hi). Returns the count written. */
size_t cf_stateff_curve(const cf_noise_model *noise, double e0_samples, double lo, double hi, size_t n,
                        cf_stateff_point *out);

#endif
