#include "cloudfit/advisor/rebalance.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

cf_rebalance_settings cf_rebalance_defaults(void)
{
    return (cf_rebalance_settings){.kind = CF_REBALANCE_P, .dead_band = CF_REBALANCE_DEAD_BAND,
                                   .window = CF_REBALANCE_WINDOW, .gain = CF_REBALANCE_GAIN,
                                   .smoothing = CF_REBALANCE_SMOOTHING, .kp = CF_REBALANCE_KP,
                                   .ki = CF_REBALANCE_KI, .noise_z = CF_REBALANCE_NOISE_Z,
                                   .min_share = CF_REBALANCE_MIN_SHARE};
}

/* Integer batches from real targets: each in [1, max], summing to M
 * (largest remainders first). */
static void to_integers(const cf_rebalance *c, const double *target, int *out)
{
    long sum = 0;
    double frac[CF_REBALANCE_MAX_WORKERS];
    for (int i = 0; i < c->n; i++) {
        double v = fmax(1.0, target[i]);
        if (c->max_batch[i] > 0)
            v = fmin(v, c->max_batch[i]);
        out[i] = (int)floor(v);
        frac[i] = v - out[i];
        sum += out[i];
    }
    while (sum != c->global_batch) {
        int best = -1;
        for (int i = 0; i < c->n; i++) {
            if (sum < c->global_batch ? (c->max_batch[i] > 0 && out[i] >= c->max_batch[i]) : out[i] <= 1)
                continue;
            if (best < 0 || (sum < c->global_batch ? frac[i] > frac[best] : frac[i] < frac[best]))
                best = i;
        }
        if (best < 0)
            break; /* cannot happen: init checked n ≤ M ≤ Σ max */
        out[best] += sum < c->global_batch ? 1 : -1;
        frac[best] = sum < c->global_batch ? -1 : 2; /* once per pass */
        sum += sum < c->global_batch ? 1 : -1;
    }
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
        to_integers(c, target, c->batch);
    }
    c->band = c->s.dead_band;
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
 * log of the predicted slowest/fastest ratio. A smoothed speed (weight w
 * for the newest window) has w/(2 − w) of a window time's variance. */
static double noise_band(const cf_rebalance *c, int slow, int fast)
{
    double w = c->s.smoothing, shrink = w / (2 - w), var = 0;
    int idx[2] = {slow, fast};
    for (int k = 0; k < 2; k++)
        var += shrink * fmax(c->within_var[idx[k]], c->residual_var[idx[k]]);
    return expm1(c->s.noise_z * sqrt(var));
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
    double mean = 0, a = CF_REBALANCE_NOISE_SMOOTHING;
    int w = c->in_window;
    for (int i = 0; i < c->n; i++) {
        /* this window's time and the relative variance of it, from its spread */
        double v = 0, m = trimmed_mean(&c->window_t[(size_t)i * c->s.window], w, &v);
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
        mean += m;
    }
    c->in_window = 0;
    mean /= c->n;
    c->updates++;
    /* Speeds b_i/t_i, smoothed over windows (a worker's speed hardly
     * depends on its batch, so estimates from before a change stay
     * useful); the band is tested on the times they predict at the
     * current batches, so one noisy window does not move anything. */
    double lo = INFINITY, hi = 0, mlo = INFINITY, mhi = 0;
    int slow = 0, fast = 0;
    for (int i = 0; i < c->n; i++) {
        double v = c->batch[i] / c->last_t[i];
        c->speed[i] = c->speed[i] > 0 ? (1 - c->s.smoothing) * c->speed[i] + c->s.smoothing * v : v;
        double predicted = c->batch[i] / c->speed[i];
        if (predicted < lo) {
            lo = predicted;
            fast = i;
        }
        if (predicted > hi) {
            hi = predicted;
            slow = i;
        }
        mlo = fmin(mlo, c->last_t[i]);
        mhi = fmax(mhi, c->last_t[i]);
    }
    c->imbalance = mhi / mlo - 1;
    c->predicted_imbalance = hi / lo - 1;
    c->band = fmax(c->s.dead_band, c->s.noise_z > 0 ? noise_band(c, slow, fast) : 0);
    c->moved = 0;
    if (c->predicted_imbalance <= c->band) {
        c->inside += c->inside < 2;
        c->outside = 0;
        return 0;
    }
    /* Hysteresis: a split settled (two windows in a row inside the band)
     * moves on the second window in a row outside it, unless the
     * imbalance is past twice the band (past 6 standard deviations of the
     * noise: a real change). */
    int settled = c->inside >= 2;
    c->inside = 0;
    if (settled && 1 + c->predicted_imbalance <= (1 + c->band) * (1 + c->band) && ++c->outside < 2) {
        c->inside = 2; /* still settled at the next window */
        return 0;
    }
    c->outside = 0;
    double target[CF_REBALANCE_MAX_WORKERS] = {0}, sum = 0;
    if (c->s.kind == CF_REBALANCE_PI) {
        for (int i = 0; i < c->n; i++) {
            double e = mean / c->last_t[i] - 1;
            c->integral[i] += e;
            target[i] = fmax(0.5, c->batch[i] * (1 + c->s.kp * e + c->s.ki * c->integral[i]));
            sum += target[i];
        }
    } else {
        for (int i = 0; i < c->n; i++)
            sum += c->speed[i];
        for (int i = 0; i < c->n; i++) {
            double full = (double)c->global_batch * c->speed[i] / sum; /* b_i·t̄/t_i, renormalised */
            target[i] = c->batch[i] + c->s.gain * (full - c->batch[i]);
        }
        sum = 0;
        for (int i = 0; i < c->n; i++)
            sum += target[i];
    }
    for (int i = 0; i < c->n; i++)
        target[i] *= (double)c->global_batch / sum;
    int next[CF_REBALANCE_MAX_WORKERS], changed = 0;
    to_integers(c, target, next);
    for (int i = 0; i < c->n; i++) {
        changed |= next[i] != c->batch[i];
        c->batch[i] = next[i];
    }
    c->changes += changed;
    c->moved = changed;
    check_floor(c);
    return changed;
}
