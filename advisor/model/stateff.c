#include "cloudfit/advisor/stateff.h"
#include "cloudfit/common/parallel.h"

#include <math.h>
#include <stdlib.h>
#include "stateff_internal.h"

/* B(p) of a sorted trace: constant before the first point, piecewise
 * linear through the points, and beyond the last point continued along
 * `trend` (samples per unit progress). */
static double trace_value(const cf_noise_point *trace, int n, double trend, double progress)
{
    if (progress <= trace[0].progress_fraction)
        return trace[0].b_noise;
    for (int i = 1; i < n; i++) {
        if (progress <= trace[i].progress_fraction) {
            double span = trace[i].progress_fraction - trace[i - 1].progress_fraction;
            double w = span > 0 ? (progress - trace[i - 1].progress_fraction) / span : 1.0;
            return trace[i - 1].b_noise + w * (trace[i].b_noise - trace[i - 1].b_noise);
        }
    }
    return trace[n - 1].b_noise + trend * (progress - trace[n - 1].progress_fraction);
}

/* Least-squares slope of B over p through all trace points, clamped at 0:
 * a trace that ends early (a short profile) is continued along its trend,
 * the lowest-order assumption that keeps the noise scale's growth (it grows
 * as the loss falls, McCandlish et al. 2018) without assuming its form.
 * A falling trend is not extrapolated: it is held constant instead. */
static double trace_trend(const cf_noise_point *trace, int n)
{
    if (n < 2)
        return 0;
    double mp = 0, mb = 0;
    for (int i = 0; i < n; i++) {
        mp += trace[i].progress_fraction;
        mb += trace[i].b_noise;
    }
    mp /= n;
    mb /= n;
    double sxy = 0, sxx = 0;
    for (int i = 0; i < n; i++) {
        sxy += (trace[i].progress_fraction - mp) * (trace[i].b_noise - mb);
        sxx += (trace[i].progress_fraction - mp) * (trace[i].progress_fraction - mp);
    }
    double slope = sxx > 0 ? sxy / sxx : 0;
    return slope > 0 ? slope : 0;
}

/* ∫₀¹ f(B(p)) dp by the composite Simpson rule on the model's grid. */
static double simpson_weight(int i)
{
    return (i == 0 || i == CF_NOISE_GRID) ? 1 : (i % 2 ? 4 : 2);
}

static void build_j_table(cf_noise_model *nm);

static void init_model(cf_noise_model *nm, double m0, double b_noise_const, const cf_noise_point *trace,
                       int n_trace, int follow_trend, cf_provenance provenance)
{
    nm->m0 = m0;
    nm->provenance = provenance;
    nm->n_points = 0;
    nm->points_thinned = n_trace > CF_NOISE_MAX_POINTS;
    if (n_trace > 0) {
        /* kept for launch specs; a longer trace thinned evenly by index,
         * its first and last points kept */
        int keep = n_trace < CF_NOISE_MAX_POINTS ? n_trace : CF_NOISE_MAX_POINTS;
        for (int k = 0; k < keep; k++)
            nm->points[nm->n_points++] = trace[keep > 1 ? (int)((long)k * (n_trace - 1) / (keep - 1)) : 0];
        nm->trend_per_progress = follow_trend ? trace_trend(trace, n_trace) : 0;
        nm->trace_end_progress = trace[n_trace - 1].progress_fraction;
        nm->b_noise_start = trace[0].b_noise;
        nm->b_noise_end = trace[n_trace - 1].b_noise;
        for (int i = 0; i <= CF_NOISE_GRID; i++)
            nm->b_grid[i] = trace_value(trace, n_trace, nm->trend_per_progress, (double)i / CF_NOISE_GRID);
    } else {
        nm->trend_per_progress = 0;
        nm->trace_end_progress = 1;
        nm->b_noise_start = nm->b_noise_end = b_noise_const;
        for (int i = 0; i <= CF_NOISE_GRID; i++)
            nm->b_grid[i] = b_noise_const;
    }
    double sum = 0;
    for (int i = 0; i <= CF_NOISE_GRID; i++)
        sum += simpson_weight(i) / (nm->b_grid[i] + m0);
    nm->inv_integral = sum / (3.0 * CF_NOISE_GRID);
    nm->b_noise_effective = 1.0 / nm->inv_integral - m0;
    build_j_table(nm);
}

void cf_noise_model_init(cf_noise_model *nm, double m0, double b_noise_const,
                         const cf_noise_point *trace, int n_trace, cf_provenance provenance)
{
    init_model(nm, m0, b_noise_const, trace, n_trace, 0, provenance);
}

void cf_noise_model_init_trend(cf_noise_model *nm, double m0, const cf_noise_point *trace, int n_trace,
                               cf_provenance provenance)
{
    init_model(nm, m0, 0, trace, n_trace, 1, provenance);
}

double cf_noise_at_batch(double b_noise, double m0, double global_batch)
{
    return b_noise * (b_noise + global_batch) / (b_noise + m0);
}

/* E(M)/E0 = ∫ (B_M + M)/(B_M + M0) dp = 1 + (M − M0)·J(M), where with
 * B_M = B(B + M)/(B + M0)
 *   J(M) = ∫ (B + M0) / ((B + M0)² + (M − M0)·B) dp,
 * positive and smooth in M (the denominator is ≥ B² + B·M0 + M0² > 0 for
 * M ≥ 0), with J(M0) = I. Evaluated on the grid: the direct form. */
static double j_direct(const cf_noise_model *nm, double global_batch)
{
    double sum = 0, dm = global_batch - nm->m0;
    for (int i = 0; i <= CF_NOISE_GRID; i++) {
        double b = nm->b_grid[i], c = b + nm->m0;
        sum += simpson_weight(i) * c / (c * c + dm * b);
    }
    return sum / (3.0 * CF_NOISE_GRID);
}

/* The search evaluates E(M) for ~4·10⁵ batch sizes, so J is tabulated once
 * at log2 M = k/CF_NOISE_TABLE_PER_OCTAVE and read by cubic (Catmull–Rom)
 * interpolation in log2 M: J is smooth there (flat well below the noise
 * scale, ∝ 1/M well above), and the interpolation agrees with the direct
 * integral to ~1e-6 relative (tested), far below the model's own error,
 * at a fraction of the cost of the direct sum. */
static const double table_step = 0.69314718055994530942 / CF_NOISE_TABLE_PER_OCTAVE; /* ln 2 / points */

/* The grid's terms of j_direct that do not depend on M, once per table:
 * each entry's sum is then a multiply, an add and a divide per point, the
 * same operations in the same order as j_direct's, so the same bits
 * (test_j_table_is_the_direct_integral). */
typedef struct {
    cf_noise_model *nm;
    double wc[CF_NOISE_GRID + 1], cc[CF_NOISE_GRID + 1];
} j_fill;

static void fill_j(void *ctx, size_t k, int thread)
{
    (void)thread;
    const j_fill *f = ctx;
    cf_noise_model *nm = f->nm;
    size_t entry = (size_t)nm->j_first + k;
    double dm = exp((double)entry * table_step) - nm->m0, sum = 0;
    for (int i = 0; i <= CF_NOISE_GRID; i++)
        sum += f->wc[i] / (f->cc[i] + dm * nm->b_grid[i]);
    nm->j_table[entry] = sum / (3.0 * CF_NOISE_GRID);
}

/* On every core: up to 499 integrals of 1,025 terms. Only the entries a
 * batch above M0 reads are made (j_of's stencil reaches one entry below
 * its own): at or below M0 a batch takes the recipe's samples
 * (samples_ratio) and reads no J. Each entry is its own, so the table is
 * the same on any number of cores. */
static void build_j_table(cf_noise_model *nm)
{
    int first = nm->m0 >= 1 ? (int)floor(log2(nm->m0) * CF_NOISE_TABLE_PER_OCTAVE) - 1 : 0;
    nm->j_first = first < 0 ? 0 : first > CF_NOISE_TABLE ? CF_NOISE_TABLE : first;
    j_fill *f = malloc(sizeof *f);
    if (!f) { /* no table: j_of integrates directly (the same values, slower) */
        nm->j_first = CF_NOISE_TABLE;
        return;
    }
    f->nm = nm;
    for (int i = 0; i <= CF_NOISE_GRID; i++) {
        double c = nm->b_grid[i] + nm->m0;
        f->wc[i] = simpson_weight(i) * c;
        f->cc[i] = c * c;
    }
    cf_parallel_for((size_t)(CF_NOISE_TABLE - nm->j_first), cf_parallel_threads(), fill_j, f);
    free(f);
}

static double j_of(const cf_noise_model *nm, double global_batch)
{
    double x = global_batch >= 1 ? log2(global_batch) * CF_NOISE_TABLE_PER_OCTAVE : -1;
    if (!(x >= nm->j_first + 1 && x >= 1 && x <= CF_NOISE_TABLE - 2))
        return j_direct(nm, global_batch);
    int k = (int)x;
    if (k > CF_NOISE_TABLE - 3)
        k = CF_NOISE_TABLE - 3;
    double t = x - k;
    const double *y = &nm->j_table[k - 1];
    return y[1] + 0.5 * t * (y[2] - y[0] + t * (2 * y[0] - 5 * y[1] + 4 * y[2] - y[3] +
                                                t * (3 * (y[1] - y[2]) + y[3] - y[0])));
}

/* E(M)/E0. Below the recipe's batch M0 the bookkeeping would credit a
 * smaller batch with fewer samples than the recipe (up to M0/M: ResNet-50
 * at batch 12 "reached" the 90-epoch target in 34 epochs), a gain nothing
 * validates (`validate --gns` scores batches above M0; Pollux bounds
 * M ≥ M0): there a batch takes the recipe's samples, E(M) = E0. */
static double samples_ratio(const cf_noise_model *nm, double global_batch)
{
    if (global_batch <= nm->m0)
        return 1.0;
    return 1.0 + (global_batch - nm->m0) * j_of(nm, global_batch);
}

double cf_samples_to_target(const cf_noise_model *nm, double e0_samples, double global_batch)
{
    return e0_samples * samples_ratio(nm, global_batch);
}

double cf_stat_efficiency(const cf_noise_model *nm, double global_batch)
{
    return 1.0 / samples_ratio(nm, global_batch);
}

double cf_lr_gain(double b_noise, double m0, double global_batch)
{
    return (b_noise + m0) * global_batch / ((b_noise + global_batch) * m0);
}

double cf_noise_at_progress(const cf_noise_model *nm, double progress)
{
    if (nm->n_points > 0 && !nm->points_thinned)
        return trace_value(nm->points, nm->n_points, nm->trend_per_progress, fmin(fmax(progress, 0.0), 1.0));
    double x = fmin(fmax(progress, 0.0), 1.0) * CF_NOISE_GRID;
    int i = (int)x;
    if (i >= CF_NOISE_GRID)
        return nm->b_grid[CF_NOISE_GRID];
    return nm->b_grid[i] + (x - i) * (nm->b_grid[i + 1] - nm->b_grid[i]);
}

double cf_stat_efficiency_lr(const cf_noise_model *nm, double global_batch, double m_ref, double scale,
                             double exponent, double *max_x)
{
    if (max_x)
        *max_x = scale;
    if (scale == 1 && m_ref == global_batch)
        return cf_stat_efficiency(nm, global_batch); /* x ≡ 1: recommend's E0/E(M), the same table */
    double sum = 0, m0 = nm->m0, m = global_batch, worst = 0;
    for (int i = 0; i <= CF_NOISE_GRID; i++) {
        double b = nm->b_grid[i];
        double x = scale * pow(cf_lr_gain(b, m0, m_ref) / cf_lr_gain(b, m0, m), exponent);
        double q = x * (2 - x), b_m = cf_noise_at_batch(b, m0, m);
        worst = fmax(worst, x);
        if (!(q > 0)) {
            sum = INFINITY;
            continue;
        }
        sum += simpson_weight(i) * fmax(1.0, (b_m + m) / (b_m + m0)) / q; /* below M0: E0 (samples_ratio) */
    }
    if (max_x)
        *max_x = worst;
    return isfinite(sum) ? 3.0 * CF_NOISE_GRID / sum : 0;
}

cf_lr_choice cf_lr_for_batch(cf_lr_rule rule, cf_optimizer optimizer, double lr0, double m0,
                             double b_noise, double global_batch)
{
    cf_lr_choice c = {0};
    int adam_family = optimizer == CF_OPT_ADAM || optimizer == CF_OPT_ADAMW || optimizer == CF_OPT_LAMB;
    double scale = global_batch / m0;
    c.rule_used = rule == CF_LR_AUTO ? CF_LR_GAIN : rule;
    switch (c.rule_used) {
    case CF_LR_LINEAR: c.factor = scale; break;
    case CF_LR_SQRT: c.factor = sqrt(scale); break;
    case CF_LR_NONE: c.factor = 1.0; break;
    case CF_LR_GAIN:
    case CF_LR_AUTO: {
        double r = cf_lr_gain(b_noise, m0, global_batch);
        c.factor = adam_family ? sqrt(r) : r;
        c.sqrt_form = adam_family;
        break;
    }
    }
    c.lr = lr0 * c.factor;
    c.warmup_recommended = c.factor >= 2.0;
    return c;
}
