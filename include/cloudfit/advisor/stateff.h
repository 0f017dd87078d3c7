/* Statistical efficiency and learning-rate scaling (docs/model.md "Statistical efficiency", "Learning rate"). */
#ifndef CLOUDFIT_ADVISOR_STATEFF_H
#define CLOUDFIT_ADVISOR_STATEFF_H
#include "cloudfit/common/shared_types.h"
#include "cloudfit/spec/types.h"

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
/* M = 1 … 2³¹: every global batch (an int); the last two points only serve
 * the interpolation. A batch past the table is the direct integral, 1,025
 * terms: at 2²⁶ it was (search.max_global_batch and max_accumulation at
 * their limits: 73 % of a 5 s recommend). */
#define CF_NOISE_TABLE (31 * CF_NOISE_TABLE_PER_OCTAVE + 3)
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
    double j_table[CF_NOISE_TABLE];   /* private to stateff.c: E(M) by interpolation, */
    int j_first;                      /* from this entry on (the ones below M0 are not read) */
    cf_provenance provenance;
} cf_noise_model;

/* The learning rate at global batch M. `rule` auto means gain; gain is
 * lr0·r for SGD/momentum and lr0·√r for Adam-family optimizers. */
typedef struct {
    double lr;
    double factor;             /* lr / lr0 */
    cf_lr_rule rule_used;      /* never CF_LR_AUTO */
    int sqrt_form;             /* gain rule applied as √r (Adam family) */
    int warmup_recommended;    /* factor ≥ 2: warm up over the first steps */
} cf_lr_choice;

#endif
