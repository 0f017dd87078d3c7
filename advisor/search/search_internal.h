/* Shared inside advisor/ (the search*.c files, plan/next_measurement.c, validate/) and its tests. */
#ifndef CLOUDFIT_ADVISOR_SEARCH_INTERNAL_H
#define CLOUDFIT_ADVISOR_SEARCH_INTERNAL_H
#include <stddef.h>
#include "cloudfit/advisor/search.h"

#define CF_GP_FEATURES 4

/* Gaussian-process error model over candidates. Each candidate has a
 * feature vector (log2 nodes, log2 GPUs per node, log2 per-GPU batch, a
 * crosses-nodes flag), a GPU type and a prior standard deviation; the
 * kernel is sd_a·sd_b·exp(−½ Σ ((x_a − x_b)/ℓ)²), times `cross_type_corr`
 * between GPU types, plus nugget_a² when a == b. */
typedef struct {
    size_t n;                     /* candidates */
    double *x;                    /* n × CF_GP_FEATURES */
    int *type;                    /* GPU type index per candidate */
    double *prior_sd;             /* per candidate: smooth part */
    double *nugget_sd;            /* per candidate: independent part (the model's
                                     configuration-to-configuration scatter) */
    double length[CF_GP_FEATURES];
    double cross_type_corr;
    double noise_var;             /* observation noise variance (log units) */
} cf_gp;

/* Posterior mean and sd of the latent function at every candidate from
 * observations y at candidates obs[0..n_obs) (repeats allowed). */
cf_status cf_gp_posterior(const cf_gp *gp, const size_t *obs, const double *y, size_t n_obs, double *out_mean,
                          double *out_sd);

/* Overhead of the result's runs (cf_search_result.overhead_usd) when the
 * pick runs at `step_s` (advisor/search/search_score.c). */
double cf_search_overhead_usd(const cf_search_options *o, const cf_search_result *r, size_t pick, double step_s);

/* Declared here, not in cloudfit/advisor/search.h: used only inside advisor/
 * (and by its tests). */

/* Training hours and cost of a candidate at a given step time (start-up
 * included, as `recommend` counts it). */
void cf_search_job(const cf_search_options *options, const cf_search_candidate *c, double step_s, double *out_hours,
                   double *out_usd);

/* Objective value (lower is better) and whether the constraints hold with
 * `slack` (fraction, e.g. 0.03 for the miss rule). */
double cf_search_objective(const cf_search_options *options, double hours, double usd);
int cf_search_feasible(const cf_search_options *options, double hours, double usd, double slack);

/* Expected improvement over `v_best` of a quantity whose value with z
 * standard deviations of its uncertainty is value(ctx, z, &ok) (ok 0: that
 * outcome misses the constraints and improves nothing); v_best INFINITY:
 * the probability of an outcome that meets them. Quadrature over
 * z ∈ [−3, 3] in steps of 0.5 with normal weights. The one criterion for
 * what to measure: the search's next probe, and recommend's next
 * measurement (advisor/plan/next_measurement.c). */
double cf_expected_improvement(double (*value)(void *ctx, double z, int *ok), void *ctx, double v_best);

/* Whether a configuration of `nodes` VMs × `gpus_per_node` GPUs at this
 * per-GPU batch is within the limits (search.max_nodes, max_gpus,
 * max_global_batch, or the --max-nodes/--max-gpus that override them):
 * the one check the search's candidates and a profile's runs and probe
 * (trace or exec runner alike) are held to. */
int cf_search_within_limits(const cf_constraints *limits, int nodes, int gpus_per_node, int local_batch);

/* Which of n ascending per-GPU batches a light profile takes: the
 * smallest, the largest and (want = 3) the middle one (index n/2), without
 * repeats. Writes positions into out; returns how many. Also the training
 * subset of `validate --light-profile`. */
size_t cf_search_spread(size_t n, int want, size_t out[3]);
cf_status cf_search_light_profile(const cf_search_candidate *cands, size_t n, const char *gpu,
                                  const unsigned char *excluded, size_t out[CF_SEARCH_PROFILE_MAX_RUNS], size_t *n_out);

/* The 2-node × 1-GPU probe (placement 11) of one GPU type: the smallest and
 * the largest per-GPU batch among the candidates with 2 nodes × 1 GPU
 * (0, 1 or 2 indices). Two rows are what cf_perf_fit needs to identify the
 * inter-node bandwidth; the smallest batch exposes the all-reduce most. */
cf_status cf_search_two_node_probe(const cf_search_candidate *cands, size_t n, const char *gpu,
                                   const unsigned char *excluded, size_t out[2], size_t *n_out);

/* Candidate i as a `recommend` configuration at the search's estimate,
 * with the 80 % interval of its posterior. */
void cf_search_config(const cf_search_options *o, const cf_search_result *r, const cf_noise_model *noise, size_t i,
                      cf_config *cfg);

/* advice->explained (cloudfit/advisor/explain.h) over the search's fitted
 * parameters: cf_search_advice and cf_search_spot end with it. */
cf_status cf_search_explain(const cf_search_options *o, const cf_search_result *r, const cf_noise_model *noise,
                            cf_advice *advice);

/* The candidate that is the job's training.current (same GPU, GPUs per node
 * and nodes; the per-GPU batch nearest the recipe's split), or -1; `note`
 * says which, or why none. */
long cf_search_find_current(const cf_job *job, const cf_search_options *o, const cf_search_result *r, char *note,
                            size_t n);

#endif
