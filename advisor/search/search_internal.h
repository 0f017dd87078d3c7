/* Shared by advisor/search*.c only. */
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

/* A candidate as a `recommend` configuration over the search's estimates
 * (advisor/search/search_advice.c; on demand). */
void cf_search_config(const cf_search_options *o, const cf_search_result *r, const cf_noise_model *noise,
                            size_t i, cf_config *cfg);

#endif
