/* The advisor's own half of cloudfit/advisor/stateff.h: functions used only inside advisor/
 * (and by its tests), kept out of the public header. */
#ifndef CLOUDFIT_ADVISOR_STATEFF_INTERNAL_H
#define CLOUDFIT_ADVISOR_STATEFF_INTERNAL_H
#include "cloudfit/advisor/stateff.h"

/* Builds the model from a constant B (n_trace == 0) or a trace held
 * constant after its last point. */
void cf_noise_model_init(cf_noise_model *nm, double m0, double b_noise_const,
                         const cf_noise_point *trace, int n_trace, cf_provenance provenance);

/* Builds the model from a trace (n_trace ≥ 1) that covers the start of
 * training and is continued along its trend after its last point. */
void cf_noise_model_init_trend(cf_noise_model *nm, double m0, const cf_noise_point *trace, int n_trace,
                               cf_provenance provenance);

/* The noise scale a gain-rule run at batch M measures where the M0 run
 * measures b_noise (B_M in cloudfit/advisor/stateff.h). */
double cf_noise_at_batch(double b_noise, double m0, double global_batch);

/* Samples needed at global batch M to match E0 samples at M0 (E(M) in cloudfit/advisor/stateff.h). */
double cf_samples_to_target(const cf_noise_model *nm, double e0_samples, double global_batch);

/* Statistical efficiency E0/E(M) ∈ (0, 1] for M ≥ M0 (> 1 below M0). */
double cf_stat_efficiency(const cf_noise_model *nm, double global_batch);

/* AdaScale gain r = (B+M0)·M / ((B+M)·M0) for a constant noise scale B. */
double cf_lr_gain(double b_noise, double m0, double global_batch);

/* B(p), the recipe run's noise scale at training progress p ∈ [0, 1]
 * (the trace's rule in cloudfit/advisor/stateff.h; the model's grid for a thinned trace): what
 * AdaScale's gain uses at that point of training. */
double cf_noise_at_progress(const cf_noise_model *nm, double progress);

/* The one statistical-efficiency model of `recommend` and `simulate`
 * (McCandlish et al. 2018, App. A, locally quadratic loss): a sample at
 * batch M and progress p is worth, relative to the recipe's,
 *   v(p) = (B_M(p) + M0)/(B_M(p) + M) · max(0, x(2 − x)),
 * x(p) = lr/lr_opt(M, p) the LR's deviation from the optimum (the gain
 * rule's lr0·r(B(p), M)^e), here x(p) = scale·(r(B(p), m_ref)/r(B(p), M))^e:
 * an LR that is `scale` times the optimum at batch m_ref (the LR rules of
 * docs/spot.md: fixed, linear, sqrt from the full plan; exponent 1 for
 * SGD and momentum, ½ for Adam-family). Over the run:
 *   E0/E = 1 / ∫₀¹ dp / v(p),
 * which is cf_stat_efficiency(nm, M) when x ≡ 1 (returned as that), and 0
 * when x ≥ 2 anywhere (no expected progress there in this model). *max_x
 * (may be NULL) gets the largest x over training. */
double cf_stat_efficiency_lr(const cf_noise_model *nm, double global_batch, double m_ref, double scale,
                             double exponent, double *max_x);

cf_lr_choice cf_lr_for_batch(cf_lr_rule rule, cf_optimizer optimizer, double lr0, double m0,
                             double b_noise, double global_batch);

#endif
