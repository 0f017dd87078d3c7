/* Gradient noise scale estimator (docs/profiler.md "The gradient noise scale"; McCandlish et al. 2018).
 *
 * B_noise = tr(Σ) / |G|² from squared gradient norms at two batch sizes
 * b < B. Each step gives the unbiased pair
 *   |G|²  ≈ (B·|G_B|² − b·|G_b|²) / (B − b)
 *   tr(Σ) ≈ (|G_b|² − |G_B|²) / (1/b − 1/B)
 * where |G_b|² is the mean squared norm of the k gradients over b samples
 * each (micro-batches in one process, or workers in data-parallel training)
 * and |G_B|² the squared norm of their mean (B = k·b). The two are smoothed
 * separately with an exponential moving average and only then divided: the
 * per-step |G|² is often negative, so a ratio per step would be useless.
 *
 * The uncertainty is the delta-method (sandwich) standard error of the
 * ratio of the two weighted means, with the EMA weights, treating steps as
 * independent draws (true for the noise part; a drift of the signal over
 * the window shows up as a larger residual and so a larger error).
 * Pure computation: no I/O. */
#ifndef CLOUDFIT_PROFILER_GNS_H
#define CLOUDFIT_PROFILER_GNS_H
#include <stddef.h>
#include "cloudfit/status.h"

typedef struct {
    /* EMA time constant in steps (weight of a step decays by 1 − 1/τ per
     * later step); 0 = average all steps with equal weight. */
    double ema_steps;
    /* Steps at the start that are not used (the optimizer's first steps are
     * not representative); they still count towards progress. */
    int skip_steps;
} cf_gns_config;

/* One point of the noise trace: the smoothed estimate after a step. */
typedef struct {
    double samples;     /* training samples seen so far (Σ B over steps) */
    double b_noise;     /* smoothed tr(Σ)/|G|²; NAN while |G|² ≤ 0 */
} cf_gns_point;

typedef struct {
    cf_gns_config config;
    /* per step (after skip_steps): unbiased |G|² and tr(Σ) estimates */
    double *g2, *trace_sigma;
    size_t n, cap;
    int steps_seen;
    double samples_seen;
    /* running EMAs for the trace */
    double ema_g2, ema_sigma, ema_weight;
    cf_gns_point *points;
    size_t n_points, cap_points;
} cf_gns;

typedef struct {
    double b_noise;          /* tr(Σ) / |G|² from the smoothed estimates, samples */
    double b_noise_stderr;   /* delta-method standard error of b_noise */
    double g2;               /* smoothed |G|² */
    double trace_sigma;      /* smoothed tr(Σ) (per-sample gradient variance, summed over parameters) */
    size_t n_steps;          /* steps used */
    double n_effective;      /* (Σw)² / Σw²: how many steps the smoothing effectively averages */
} cf_gns_estimate;

void cf_gns_init(cf_gns *gns, const cf_gns_config *config);
void cf_gns_free(cf_gns *gns);

/* Adds one step: k = n_micro gradients over `small_batch` samples each,
 * their squared norms `micro_sqnorms`, and the squared norm of their mean
 * `mean_sqnorm` (the gradient over B = k·small_batch samples). Needs k ≥ 2.
 * CF_ERR_INVALID for k < 2, a batch < 1, or a negative / non-finite norm. */
cf_status cf_gns_add_micro(cf_gns *gns, int small_batch, const double *micro_sqnorms, int n_micro,
                           double mean_sqnorm);
/* Adds one step from any two batch sizes b < B with their squared norms
 * (|G_b|² may already be a mean over several gradients). */
cf_status cf_gns_add_pair(cf_gns *gns, double small_batch, double small_sqnorm, double big_batch,
                          double big_sqnorm);

/* The current estimate. CF_ERR_INVALID when fewer than 2 steps were used, or
 * when the smoothed |G|² is not positive (the gradient is not resolved
 * above the noise: more steps or larger batches are needed), or the smoothed
 * tr(Σ) is not (B_noise would not be positive). */
cf_status cf_gns_result(const cf_gns *gns, cf_gns_estimate *out);

#endif
