/* Statistical efficiency and learning-rate scaling (docs/model.md "Statistical efficiency", "Learning rate"). */
#ifndef CLOUDFIT_ADVISOR_STATEFF_H
#define CLOUDFIT_ADVISOR_STATEFF_H
#include "cloudfit/types.h"

/* The noise scale as the advisor uses it (docs/model.md, "Statistical
 * efficiency"). B(p) is the recipe run's noise scale over training progress
 * p ∈ [0,1] (batch M0, piecewise linear through a trace, constant before
 * its first point; beyond its last point held constant, or with
 * cf_noise_model_init_trend continued along the least-squares slope of all
 * its points, never downwards), or a constant.
 *
 * A run at batch M whose learning rate follows the gain rule measures a
 * larger noise scale than the M0 run: near SGD's equilibrium the squared
 * gradient norm is ∝ lr/M, so B ∝ M/lr, and with lr_M = r·lr0,
 *   B_M(p) = B(p) · (M/M0) / r(B(p)) = B(p) · (B(p) + M)/(B(p) + M0).
 * Samples to the recipe's quality:
 *   E(M) = E0 · ∫₀¹ (B_M(p) + M)/(B_M(p) + M0) dp.
 * b_noise_effective = 1/I − M0 with I = ∫ dp/(B(p) + M0): the constant
 * noise scale of the M0 run with the same harmonic mean, used for the
 * learning rate and reported as "effective". */
#define CF_NOISE_GRID 1024            /* Simpson intervals over p ∈ [0,1] (even) */
#define CF_NOISE_TABLE_PER_OCTAVE 16  /* E(M) table: points per doubling of M */
#define CF_NOISE_TABLE (26 * CF_NOISE_TABLE_PER_OCTAVE + 1) /* M = 1 … 2²⁶ */
#define CF_NOISE_MAX_POINTS 256       /* trace points kept for B(p) in launch specs (longer: thinned) */
typedef struct {
    double m0;                 /* recipe global batch */
    double inv_integral;       /* I above, 1/samples */
    double b_noise_effective;  /* 1/I − M0 */
    double b_noise_start, b_noise_end;
    double trace_end_progress; /* last trace point's progress (1 for a constant) */
    double trend_per_progress; /* slope used beyond trace_end_progress, samples per unit p */
    double b_grid[CF_NOISE_GRID + 1]; /* B(i/CF_NOISE_GRID) */
    /* The trace B(p) is built from (empty for a constant): constant before
     * its first point, linear between, trend_per_progress after its last
     * (cf_noise_at_progress; what a training script needs to follow it). */
    cf_noise_point points[CF_NOISE_MAX_POINTS];
    int n_points;
    int points_thinned;        /* a longer trace: B(p) from the grid instead */
    double j_table[CF_NOISE_TABLE];   /* private to stateff.c: E(M) by interpolation */
    cf_provenance provenance;
} cf_noise_model;

/* Builds the model from a constant B (n_trace == 0) or a trace held
 * constant after its last point. */
void cf_noise_model_init(cf_noise_model *nm, double m0, double b_noise_const,
                         const cf_noise_point *trace, int n_trace, cf_provenance provenance);
/* Builds the model from a trace (n_trace ≥ 1) that covers the start of
 * training and is continued along its trend after its last point. */
void cf_noise_model_init_trend(cf_noise_model *nm, double m0, const cf_noise_point *trace, int n_trace,
                               cf_provenance provenance);
/* The noise scale a gain-rule run at batch M measures where the M0 run
 * measures b_noise (B_M above). */
double cf_noise_at_batch(double b_noise, double m0, double global_batch);
/* Samples needed at global batch M to match E0 samples at M0 (E(M) above). */
double cf_samples_to_target(const cf_noise_model *nm, double e0_samples, double global_batch);
/* Statistical efficiency E0/E(M) ∈ (0, 1] for M ≥ M0 (> 1 below M0). */
double cf_stat_efficiency(const cf_noise_model *nm, double global_batch);
/* AdaScale gain r = (B+M0)·M / ((B+M)·M0) for a constant noise scale B. */
double cf_lr_gain(double b_noise, double m0, double global_batch);
/* B(p), the recipe run's noise scale at training progress p ∈ [0, 1]
 * (the trace's rule above; the model's grid for a thinned trace): what
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
