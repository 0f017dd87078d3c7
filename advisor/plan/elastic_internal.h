/* The advisor's own half of cloudfit/advisor/elastic.h: functions used only inside advisor/
 * (and by its tests), kept out of the public header. */
#ifndef CLOUDFIT_ADVISOR_ELASTIC_INTERNAL_H
#define CLOUDFIT_ADVISOR_ELASTIC_INTERNAL_H
#include "cloudfit/advisor/elastic.h"

cf_lr_function cf_lr_function_of(const cf_job *job, const cf_noise_model *noise);

/* The LR at M with the effective (constant) noise scale. */
double cf_lr_function_eval(const cf_lr_function *f, double global_batch);

/* The LR at M at training progress p ∈ [0, 1] (the gain rule with B(p)). */
double cf_lr_function_eval_at(const cf_lr_function *f, double global_batch, double progress);

/* The optimal LR at M (the gain rule's), with the effective noise scale
 * and at progress p. */
double cf_lr_optimal(const cf_lr_function *f, double global_batch);
double cf_lr_optimal_at(const cf_lr_function *f, double global_batch, double progress);

cf_status cf_elastic_plan_for(const cf_elastic_request *req, cf_elastic_plan *out);

/* The elastic plan of a ranked configuration (advisor/plan/elastic_config.c):
 * the batch held by accumulation up to the search's max_accumulation, the
 * memory ceiling and `perf` on the VM's own network (cf_gpu_perf_on_vm),
 * the advisor's noise model. CF_ERR_INTERNAL when perf is NULL; *out
 * malloc'd. */
cf_status cf_elastic_plan_of_config(const cf_job *job, const cf_constraints *limits, const cf_gpu_perf *perf,
                                    const cf_noise_model *noise, const cf_config *c, cf_elastic_plan **out);

/* Progress per hour at each count (index n, 0..N; [0] = 0) when the LR
 * follows `rule` relative to the plan's optimum at full size at each point
 * of training p (simulate): fixed: lr_opt(M_N, p); linear: lr_opt(M_N,
 * p)·M_n/M_N; sqrt: lr_opt(M_N, p)·√(M_n/M_N); gain: lr_opt(M_n, p)
 * (AdaScale with the trace). Under HOLD the batch is held where
 * accumulation can (x = 1 there). The value of the samples is
 * cf_stat_efficiency_lr, recommend's model. rate[n] is in hours of the
 * full plan's work; samples[n] the throughput relative to the full plan's.
 * Returns the largest count with no expected progress (x ≥ 2 at some
 * point of training: rate 0), 0 when none; below it the batch only
 * shrinks further, so every smaller count has none either. */
int cf_elastic_rule_rates(const cf_elastic_request *req, cf_lr_rule rule, double *rate, double *samples);

#endif
