/* The advisor's own half of cloudfit/advisor/hetero.h: functions used only inside advisor/
 * (and by its tests), kept out of the public header. */
#ifndef CLOUDFIT_ADVISOR_HETERO_INTERNAL_H
#define CLOUDFIT_ADVISOR_HETERO_INTERNAL_H
#include "cloudfit/advisor/hetero.h"

/* Splits a global batch M over n workers with compute times
 * t_i(b) = α_i + β_i·b so that iteration times are equal:
 *   T = (M + Σ α_i/β_i) / Σ 1/β_i,  b_i = (T − α_i)/β_i,
 * then clamped to [1, max_b[i]] (max_b NULL or ≤ 0 = no limit; a clamped
 * worker is fixed and the rest re-split), then rounded to integers that
 * sum to M (largest remainders, never over a limit). out_t (may be NULL)
 * gets the slowest worker's time after rounding. CF_ERR_INFEASIBLE when
 * M < n or M > Σ max_b. */
cf_status cf_hetero_split(const double *alpha, const double *beta, const int *max_b, int n, long global_batch,
                          int *out_b, double *out_t);

/* Evaluates a two-type job at a global batch and accumulation; perf[k]
 * the type's parameters on vm[k]'s NIC (cf_gpu_perf_on_vm: the same
 * per-VM network model as single-type plans). */
cf_status cf_hetero_evaluate(const cf_advisor_input *in, const cf_perf_params *perf0, const cf_perf_params *perf1,
                             cf_hetero_plan *plan);

/* The fastest (global batch, accumulation) for the VMs of `plan` (the
 * cheapest too: their price per hour is fixed); 0 when none fits. */
int cf_hetero_plan_best_batch(const cf_advisor_input *in, const cf_perf_params *perf0, const cf_perf_params *perf1,
                              cf_hetero_plan *plan);

/* The same workers (plan's VMs, global batch) with equal per-worker
 * batches: per-micro-batch b = ⌈M/(K·s)⌉ at the smallest accumulation
 * s ≥ the plan's (within max_accumulation) at which b fits every type's
 * memory; its compute max_k(α_k + β_k·b) on the same per-type lines as
 * the split (whose balanced time is (M/s + Σα_i/β_i)/Σ(1/β_i)), the same
 * all-reduce. Sets the plan's equal_* fields and
 * speedup_over_equal_batches; CF_ERR_INFEASIBLE (no message) when no
 * accumulation fits. The plan must have been evaluated. */
cf_status cf_hetero_equal_batches(const cf_advisor_input *in, const cf_perf_params *perf0,
                                  const cf_perf_params *perf1, cf_hetero_plan *plan);

/* Progress and throughput at each availability state (n0, n1) of a two-type
 * job, relative to the plan on all its VMs (index n0 + (nodes0 + 1)·n1):
 * the split re-solved at each state with the global batch held (workers
 * take larger batches up to their limit; beyond that the batch shrinks and
 * the gain rule applies). For `cloudfit simulate` with two traces. */
cf_status cf_hetero_state_rates(const cf_advisor_input *in, const cf_perf_params *perf0, const cf_perf_params *perf1,
                                const cf_hetero_plan *plan, double *rate, double *samples);

#endif
