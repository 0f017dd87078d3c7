/* Statistical efficiency and learning-rate scaling (DESIGN.md §3.3–3.4). */
#ifndef CLOUDFIT_STATEFF_H
#define CLOUDFIT_STATEFF_H
#include "cloudfit/spec.h"
#include "cloudfit/types.h"

/* The noise scale as the advisor uses it. A trace B(p) over training
 * progress p ∈ [0,1] (piecewise linear, constant beyond its ends) enters
 * through I = ∫ dp / (B(p) + M0), because
 *   E(M) = E0 · ∫ (B(p)+M)/(B(p)+M0) dp = E0 · (1 + (M − M0)·I).
 * b_noise_effective is the constant noise scale with the same E(M). */
typedef struct {
    double m0;                 /* recipe global batch */
    double inv_integral;       /* I above, 1/samples */
    double b_noise_effective;  /* 1/I − M0 */
    double b_noise_start, b_noise_end;
    cf_provenance provenance;
} cf_noise_model;

/* Builds the model from a constant B (n_trace == 0) or a trace. */
void cf_noise_model_init(cf_noise_model *nm, double m0, double b_noise_const,
                         const cf_noise_point *trace, int n_trace, cf_provenance provenance);
/* Samples needed at global batch M to match E0 samples at M0. */
double cf_samples_to_target(const cf_noise_model *nm, double e0_samples, double global_batch);
/* Statistical efficiency E0/E(M) ∈ (0, 1] for M ≥ M0 (> 1 below M0). */
double cf_stat_efficiency(const cf_noise_model *nm, double global_batch);
/* AdaScale gain r = (B+M0)·M / ((B+M)·M0) for a constant noise scale B. */
double cf_lr_gain(double b_noise, double m0, double global_batch);

/* The learning rate at global batch M. `rule` auto means gain; gain is
 * lr0·r for SGD/momentum and lr0·√r for Adam-family optimizers. */
typedef struct {
    double lr;
    double factor;             /* lr / lr0 */
    cf_lr_rule rule_used;      /* never CF_LR_AUTO */
    int sqrt_form;             /* gain rule applied as √r (Adam family) */
    int warmup_recommended;    /* factor ≥ 2: warm up over the first steps */
} cf_lr_choice;

cf_lr_choice cf_lr_for_batch(cf_lr_rule rule, cf_optimizer optimizer, double lr0, double m0,
                             double b_noise, double global_batch);

#endif
