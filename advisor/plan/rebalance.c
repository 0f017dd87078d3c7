#include "cloudfit/advisor/rebalance.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hetero_internal.h"

cf_rebalance_settings cf_rebalance_defaults(void)
{
    return (cf_rebalance_settings){.kind = CF_REBALANCE_P, .dead_band = CF_REBALANCE_DEAD_BAND,
                                   .window = CF_REBALANCE_WINDOW, .gain = CF_REBALANCE_GAIN,
                                   .smoothing = CF_REBALANCE_SMOOTHING, .kp = CF_REBALANCE_KP,
                                   .ki = CF_REBALANCE_KI, .noise_z = CF_REBALANCE_NOISE_Z,
                                   .min_share = CF_REBALANCE_MIN_SHARE};
}

/* Integer batches in [1, max_i] summing to M, in proportion to `weight`
 * (a target batch or a speed; ≤ 0 counts as nearly nothing, i.e. 1)
 * wherever no limit binds: water-filled (a worker whose share would pass
 * its limit is held there and the rest re-split over the others, until
 * none does), then rounded by largest remainders. Clamping each worker on
 * its own and fixing the sum a sample at a time, as before, handed a
 * capped worker's whole excess to the lowest-index free worker whatever
 * its speed. cf_hetero_split with no fixed costs is exactly this split
 * (b_i ∝ 1/β_i). CF_OK, or CF_ERR_NOMEM. */
static cf_status split_in_proportion(const cf_rebalance *c, const double *weight, int *out)
{
    double per_sample_s[CF_REBALANCE_MAX_WORKERS], no_fixed_cost_s[CF_REBALANCE_MAX_WORKERS] = {0};
    for (int i = 0; i < c->n; i++)
        per_sample_s[i] = 1.0 / fmax(weight[i], 1e-12);
    return cf_hetero_split(no_fixed_cost_s, per_sample_s, c->max_batch, c->n, c->global_batch, out, NULL);
}

/* Flags the workers whose share is under the floor. */
static void check_floor(cf_rebalance *c)
{
    double floor_b = c->s.min_share * (double)c->global_batch / c->n;
    c->n_below_floor = 0;
    for (int i = 0; i < c->n; i++) {
        c->below_floor[i] = c->batch[i] < floor_b;
        c->n_below_floor += c->below_floor[i];
    }
}

cf_status cf_rebalance_init(cf_rebalance *c, int n, long m, const int *initial, const int *max_batch,
                            const cf_rebalance_settings *settings)
{
    memset(c, 0, sizeof *c);
    c->s = settings ? *settings : cf_rebalance_defaults();
    if (n < 1 || n > CF_REBALANCE_MAX_WORKERS)
        return cf_error_set(CF_ERR_INVALID, "workers: expected 1 to %d, got %d", CF_REBALANCE_MAX_WORKERS, n);
    if (m < n)
        return cf_error_set(CF_ERR_INVALID, "global batch %ld is smaller than the %d workers", m, n);
    if (!(c->s.dead_band >= 0 && c->s.dead_band < 1))
        return cf_error_set(CF_ERR_INVALID, "dead band: expected 0 to 1, got %g", c->s.dead_band);
    if (c->s.window < 1 || c->s.window > CF_REBALANCE_MAX_WINDOW)
        return cf_error_set(CF_ERR_INVALID, "window: expected 1 to %d iterations, got %d", CF_REBALANCE_MAX_WINDOW,
                            c->s.window);
    if (!(c->s.gain > 0 && c->s.gain < 2))
        return cf_error_set(CF_ERR_INVALID, "gain: expected a value in (0, 2), got %g", c->s.gain);
    if (!(c->s.smoothing > 0 && c->s.smoothing <= 1))
        return cf_error_set(CF_ERR_INVALID, "smoothing: expected a value in (0, 1], got %g", c->s.smoothing);
    if (!(c->s.noise_z >= 0 && c->s.noise_z <= 10))
        return cf_error_set(CF_ERR_INVALID, "noise band: expected 0 to 10 standard deviations, got %g", c->s.noise_z);
    if (!(c->s.min_share >= 0 && c->s.min_share < 1))
        return cf_error_set(CF_ERR_INVALID, "share floor: expected 0 to 100%% of an equal share, got %g",
                            c->s.min_share);
    c->n = n;
    c->global_batch = m;
    double cap = 0;
    for (int i = 0; i < n; i++) {
        c->max_batch[i] = max_batch ? max_batch[i] : 0;
        if (c->max_batch[i] < 0)
            return cf_error_set(CF_ERR_INVALID, "worker %d: a negative batch limit", i);
        cap += c->max_batch[i] > 0 ? c->max_batch[i] : INFINITY;
    }
    if ((double)m > cap)
        return cf_error_set(CF_ERR_INVALID, "global batch %ld exceeds the workers' limits (%.0f together)", m, cap);
    if (initial) {
        long sum = 0;
        for (int i = 0; i < n; i++) {
            if (initial[i] < 1 || (c->max_batch[i] > 0 && initial[i] > c->max_batch[i]))
                return cf_error_set(CF_ERR_INVALID, "worker %d: initial batch %d outside 1..%d", i, initial[i],
                                    c->max_batch[i] > 0 ? c->max_batch[i] : (int)m);
            c->batch[i] = initial[i];
            sum += initial[i];
        }
        if (sum != m)
            return cf_error_set(CF_ERR_INVALID, "initial batches sum to %ld, not the global batch %ld", sum, m);
    } else {
        double target[CF_REBALANCE_MAX_WORKERS];
        for (int i = 0; i < n; i++)
            target[i] = (double)m / n;
        cf_status st = split_in_proportion(c, target, c->batch);
        if (st != CF_OK)
            return st;
    }
    c->band = c->s.dead_band;
    c->speed_var_share = 1;
    for (int i = 0; i < n; i++)
        c->pi_error_samples[i] = NAN; /* no previous error: the first PI step is ki·d_i */
    check_floor(c);
    c->window_t = malloc((size_t)n * (size_t)c->s.window * sizeof *c->window_t);
    return c->window_t ? CF_OK : cf_error_set(CF_ERR_NOMEM, "out of memory");
}

void cf_rebalance_free(cf_rebalance *c)
{
    free(c->window_t);
    c->window_t = NULL;
}

static int by_value(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* The trimmed mean of v[0..n) (sorted in place): the mean without the
 * CF_REBALANCE_TRIM share at each end, robust to the odd descheduled
 * iteration and nearly as efficient as the mean for Gaussian noise; and
 * its relative variance from the winsorized variance,
 * s_w²/((1 − 2g/n)²·n) (Tukey & McLaughlin 1963). */
static double trimmed_mean(double *v, int n, double *rel_var)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    int g = (int)(CF_REBALANCE_TRIM * n);
    double sum = 0;
    for (int k = g; k < n - g; k++)
        sum += v[k];
    double tm = sum / (n - 2 * g), wmean = 0, ss = 0;
    for (int k = 0; k < n; k++)
        wmean += v[k < g ? g : k >= n - g ? n - g - 1 : k];
    wmean /= n;
    for (int k = 0; k < n; k++) {
        double d = v[k < g ? g : k >= n - g ? n - g - 1 : k] - wmean;
        ss += d * d;
    }
    double keep = 1.0 - 2.0 * g / n;
    *rel_var = n > 1 ? ss / (n - 1) / (keep * keep * n) / (tm * tm) : 0;
    return tm;
}

/* The band the timing noise alone can fill: z standard deviations of the
 * log of the predicted slowest/fastest ratio. The smoothed speeds carry
 * speed_var_share of a window time's variance (1 in the window after a
 * move, when the smoothing restarts, falling to w/(2 − w)). */
static double noise_band(const cf_rebalance *c, int slow, int fast)
{
    double var = 0;
    int idx[2] = {slow, fast};
    for (int k = 0; k < 2; k++)
        var += c->speed_var_share * fmax(c->within_var[idx[k]], c->residual_var[idx[k]]);
    return expm1(c->s.noise_z * sqrt(var));
}

/* slowest/fastest − 1 of `time_s` over the workers the batches can act on:
 * one at its memory limit cannot take more, so it is not the fastest, and
 * one at batch 1 cannot give, so it is not the slowest (else a capped fast
 * worker reads as an imbalance forever). 0 when no pair is left; the
 * pair's indices in *slow, *fast. */
static double movable_imbalance(const cf_rebalance *c, const double *time_s, int *slow, int *fast)
{
    double lo = INFINITY, hi = 0;
    *slow = *fast = 0;
    for (int i = 0; i < c->n; i++) {
        if (!(c->max_batch[i] > 0 && c->batch[i] >= c->max_batch[i]) && time_s[i] < lo) {
            lo = time_s[i];
            *fast = i;
        }
        if (c->batch[i] > 1 && time_s[i] > hi) {
            hi = time_s[i];
            *slow = i;
        }
    }
    return isfinite(lo) && hi > lo ? hi / lo - 1 : 0;
}

int cf_rebalance_observe(cf_rebalance *c, const double *t)
{
    for (int i = 0; i < c->n; i++) {
        if (!(t[i] >= CF_REBALANCE_MIN_TIME_S && t[i] <= CF_REBALANCE_MAX_TIME_S)) {
            cf_error_set(CF_ERR_INVALID, "worker %d: expected a compute time of %g to %g seconds, got %g", i,
                         CF_REBALANCE_MIN_TIME_S, CF_REBALANCE_MAX_TIME_S, t[i]);
            return -1;
        }
    }
    for (int i = 0; i < c->n; i++)
        c->window_t[(size_t)i * c->s.window + c->in_window] = t[i];
    if (++c->in_window < c->s.window)
        return 0;
    double a = CF_REBALANCE_NOISE_SMOOTHING;
    int iterations = c->in_window;
    for (int i = 0; i < c->n; i++) {
        /* this window's time and the relative variance of it, from its spread */
        double v = 0, m = trimmed_mean(&c->window_t[(size_t)i * c->s.window], iterations, &v);
        c->within_var[i] = c->updates ? (1 - a) * c->within_var[i] + a * v : v;
        /* and from the spread of the window times themselves while the
         * batches stay put (an exponentially weighted variance around
         * their weighted mean, restarted at a move): drift over several
         * windows, which the spread inside one window misses */
        double lm = log(m);
        if (c->updates && !c->moved) {
            double d = lm - c->log_level[i];
            c->log_level[i] += a * d;
            c->residual_var[i] = (1 - a) * (c->residual_var[i] + a * d * d);
        } else {
            c->log_level[i] = lm;
        }
        c->last_t[i] = m;
    }
    c->in_window = 0;
    c->updates++;
    /* Speeds b_i/t_i, smoothed over the windows since the batches last
     * moved. Restarted at a move: with a fixed cost per iteration
     * (t = α + β·b) a worker's speed depends on its batch, and a speed
     * from before a move predicted an imbalance the measured times did
     * not have (and moved the batches away from balance inside the band). */
    double w = c->s.smoothing, predicted_s[CF_REBALANCE_MAX_WORKERS], raw_speed[CF_REBALANCE_MAX_WORKERS];
    int restart = c->moved || c->updates == 1;
    c->speed_var_share = restart ? 1 : (1 - w) * (1 - w) * c->speed_var_share + w * w;
    for (int i = 0; i < c->n; i++) {
        raw_speed[i] = c->batch[i] / c->last_t[i];
        c->speed[i] = restart ? raw_speed[i] : (1 - w) * c->speed[i] + w * raw_speed[i];
        predicted_s[i] = c->batch[i] / c->speed[i];
    }
    int slow, fast, slow_m, fast_m;
    c->predicted_imbalance = movable_imbalance(c, predicted_s, &slow, &fast);
    c->imbalance = movable_imbalance(c, c->last_t, &slow_m, &fast_m);
    c->band = fmax(c->s.dead_band, c->s.noise_z > 0 ? noise_band(c, slow, fast) : 0);
    c->moved = 0;
    /* The contract: no change while the slowest worker is within the band
     * of the fastest, in the window's measured times or in the smoothed
     * speeds' prediction (the noise guard): a move needs both outside. */
    double imbalance = fmin(c->imbalance, c->predicted_imbalance);
    if (imbalance <= c->band) {
        c->inside += c->inside < 2;
        c->outside = 0;
        for (int i = 0; i < c->n; i++)
            c->pi_error_samples[i] = NAN;
        return 0;
    }
    /* Hysteresis: a split settled (two windows in a row inside the band)
     * moves on the second window in a row outside it, unless the
     * imbalance is past twice the band (past 6 standard deviations of the
     * noise: a real change). */
    int settled = c->inside >= 2;
    c->inside = 0;
    if (settled && 1 + imbalance <= (1 + c->band) * (1 + c->band) && ++c->outside < 2) {
        c->inside = 2; /* still settled at the next window */
        return 0;
    }
    c->outside = 0;
    /* Both controllers step toward the split the speeds give (limits
     * kept): P from the smoothed speeds, a `gain` of the way; PI from this
     * window's, in velocity form on the error in samples d_i = full_i − b_i
     * (bounded by M): b_i += ki·d_i + kp·(d_i − d_i'), d_i' the previous
     * update's. The state is the batch itself, held within its limits, so
     * nothing winds up while a worker sits at one (its d_i stays bounded
     * and its batch does not move past the limit); d_i' restarts at d_i
     * (the step is ki·d_i alone) after a window inside the band, so an old
     * error does not kick the next move. Σd_i = 0 (Σfull = Σb = M), so
     * the steps keep the global batch. */
    int full[CF_REBALANCE_MAX_WORKERS], next[CF_REBALANCE_MAX_WORKERS], changed = 0;
    double target[CF_REBALANCE_MAX_WORKERS];
    if (split_in_proportion(c, c->s.kind == CF_REBALANCE_PI ? raw_speed : c->speed, full) != CF_OK)
        return -1;
    for (int i = 0; i < c->n; i++) {
        double d = full[i] - c->batch[i];
        if (c->s.kind == CF_REBALANCE_PI) {
            double prev = isnan(c->pi_error_samples[i]) ? d : c->pi_error_samples[i];
            target[i] = c->batch[i] + c->s.ki * d + c->s.kp * (d - prev);
            c->pi_error_samples[i] = d;
        } else {
            target[i] = c->batch[i] + c->s.gain * d;
        }
    }
    if (split_in_proportion(c, target, next) != CF_OK)
        return -1;
    for (int i = 0; i < c->n; i++) {
        changed |= next[i] != c->batch[i];
        c->batch[i] = next[i];
    }
    c->changes += changed;
    c->moved = changed;
    check_floor(c);
    return changed;
}
