#include "cloudfit/advisor/spot_model.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "spot_model_internal.h"
#include "spot_replay_internal.h"

/* ---- fitting ------------------------------------------------------------------ */

void cf_spot_runs_free(cf_spot_runs *r)
{
    free(r->up_h);
    free(r->down_h);
    memset(r, 0, sizeof *r);
}

static cf_status push_cycle(cf_spot_runs *r, double up, double down)
{
    if (r->n_cycles == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 256;
        double *u = realloc(r->up_h, cap * sizeof *u);
        if (!u)
            return cf_error_set(CF_ERR_NOMEM, "out of memory");
        r->up_h = u;
        double *d = realloc(r->down_h, cap * sizeof *d);
        if (!d)
            return cf_error_set(CF_ERR_NOMEM, "out of memory");
        r->down_h = d;
        r->cap = cap;
    }
    r->up_h[r->n_cycles] = up;
    r->down_h[r->n_cycles] = down;
    r->n_cycles++;
    return CF_OK;
}

cf_status cf_spot_runs_add(cf_spot_runs *r, const cf_spot_trace *t)
{
    size_t n = t->n_ticks;
    int K = t->n_types, N = t->vm[0].requested;
#define CNT(i) (t->counts[((i) % n) * (size_t)K])
    /* Rotate to the first UP tick that follows a DOWN tick. */
    size_t s0 = 0;
    int changes = 0, found = 0;
    for (size_t i = 1; i < n; i++) {
        if ((CNT(i) > 0) != (CNT(i - 1) > 0)) {
            changes = 1;
            if (CNT(i) > 0 && !found) {
                s0 = i;
                found = 1;
            }
        }
    }
    if (!changes)
        return cf_error_set(CF_ERR_INVALID, "%s: the trace never changes between some and no VMs held: no cycles",
                            t->name);
    /* Runs of equal UP/DOWN over the rotated series: UP_j pairs with the
     * DOWN run after it. */
    size_t j = 0;
    cf_status st = CF_OK;
    while (j < n && st == CF_OK) {
        int up = CNT(s0 + j) > 0;
        size_t start = j;
        double len = 0;
        while (j < n && (CNT(s0 + j) > 0) == up) {
            len += t->dt_h[(s0 + j) % n];
            j++;
        }
        if (!up)
            continue; /* a DOWN run before any UP (only when no UP follows a DOWN) */
        /* the DOWN run after it */
        double down = 0;
        while (j < n && CNT(s0 + j) == 0) {
            down += t->dt_h[(s0 + j) % n];
            j++;
        }
        if (down <= 0)
            break; /* unpaired last UP run */
        if ((st = push_cycle(r, len, down)) != CF_OK)
            break;
        if (N > 1) {
            r->multi_node = 1;
            r->up_runs += 1;
            r->up_runs_full += CNT(s0 + start) >= N;
            for (size_t k = start; k < j; k++) {
                int c = CNT(s0 + k);
                if (c == 0)
                    break; /* reached the DOWN run */
                double dt = t->dt_h[(s0 + k) % n];
                if (c >= 2)
                    r->drop_exposure_h += dt;
                if (c < N)
                    r->rise_exposure_h += dt;
                int next = CNT(s0 + k + 1); /* the last UP tick's next is the DOWN run: not an inner event */
                if (next > 0) {
                    if (next < c)
                        r->drops += 1;
                    else if (next > c) {
                        r->rises += 1;
                        r->rises_to_full += next >= N;
                    }
                }
            }
        }
    }
#undef CNT
    return st;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median and mean matched lognormal: μ = ln median, σ = √(2 ln(mean/median)). */
static void ln_fit(const double *x, size_t n, double *median, double *sigma)
{
    double *s = malloc(n * sizeof *s), mean = 0;
    if (!s || n == 0) {
        free(s);
        *median = n ? x[0] : 1;
        *sigma = CF_SPOT_SIGMA_FLOOR;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        s[i] = x[i];
        mean += x[i];
    }
    mean /= (double)n;
    qsort(s, n, sizeof *s, cmp_double);
    double med = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    free(s);
    *median = med;
    *sigma = mean > med ? fmax(sqrt(2.0 * log(mean / med)), CF_SPOT_SIGMA_FLOOR) : CF_SPOT_SIGMA_FLOOR;
}

void cf_spot_process_fit(const cf_spot_runs *r, const cf_spot_process *inner, cf_spot_process *out)
{
    memset(out, 0, sizeof *out);
    ln_fit(r->up_h, r->n_cycles, &out->up_median_h, &out->up_sigma);
    ln_fit(r->down_h, r->n_cycles, &out->down_median_h, &out->down_sigma);
    if (r->multi_node) {
        out->kd_per_h = r->drop_exposure_h > 0 ? r->drops / r->drop_exposure_h : 0;
        out->kr_per_h = r->rise_exposure_h > 0 ? r->rises / r->rise_exposure_h : 0;
        out->qf = r->up_runs > 0 ? r->up_runs_full / r->up_runs : 1;
        out->qr = r->rises > 0 ? r->rises_to_full / r->rises : 1;
    } else if (inner) {
        out->kd_per_h = inner->kd_per_h;
        out->kr_per_h = inner->kr_per_h;
        out->qf = inner->qf;
        out->qr = inner->qr;
    } else {
        out->qf = out->qr = 1;
    }
}

void cf_spot_trace_summary_of(const cf_spot_runs *r, cf_spot_trace_summary *out)
{
    memset(out, 0, sizeof *out);
    out->cycles = r->n_cycles;
    double median;
    ln_fit(r->up_h, r->n_cycles, &median, &out->sigma_up);
    ln_fit(r->down_h, r->n_cycles, &median, &out->sigma_down);
    double n = (double)r->n_cycles, su = 0, sd = 0, qu = 0, qd = 0;
    for (size_t i = 0; i < r->n_cycles; i++) {
        su += r->up_h[i];
        sd += r->down_h[i];
    }
    double mu = n > 0 ? su / n : 1, md = n > 0 ? sd / n : 1;
    for (size_t i = 0; i < r->n_cycles; i++) {
        qu += (r->up_h[i] - mu) * (r->up_h[i] - mu);
        qd += (r->down_h[i] - md) * (r->down_h[i] - md);
    }
    out->log_mean_up = log(mu);
    out->log_mean_down = log(md);
    /* Var(log mean) ≈ s²/(n·mean²), the delta method with the sample variance. */
    out->var_log_mean_up = n > 1 ? qu / (n - 1) / (n * mu * mu) : 1;
    out->var_log_mean_down = n > 1 ? qd / (n - 1) / (n * md * md) : 1;
}

/* ---- paths ---------------------------------------------------------------------- */

static inline double greater_of(double a, double b) { return a > b ? a : b; }

static int finite_in(double v, double lo, double hi) { return isfinite(v) && v >= lo && v <= hi; }

cf_status cf_spot_process_check(const cf_spot_process *p, int nodes)
{
    const char *bad = !finite_in(p->up_median_h, CF_SPOT_MIN_RUN_H, 1e9)     ? "up_median_h"
                      : !finite_in(p->down_median_h, CF_SPOT_MIN_RUN_H, 1e9) ? "down_median_h"
                      : !finite_in(p->up_sigma, 0, 10)                       ? "up_sigma"
                      : !finite_in(p->down_sigma, 0, 10)                     ? "down_sigma"
                      : !finite_in(p->regime_sd_up, 0, 10)                   ? "regime_sd_up"
                      : !finite_in(p->regime_sd_down, 0, 10)                 ? "regime_sd_down"
                      : !finite_in(p->kd_per_h, 0, CF_SPOT_MAX_RATE_PER_H)   ? "kd_per_h"
                      : !finite_in(p->kr_per_h, 0, CF_SPOT_MAX_RATE_PER_H)   ? "kr_per_h"
                      : !finite_in(p->qf, 0, 1)                              ? "qf"
                      : !finite_in(p->qr, 0, 1)                              ? "qr"
                                                                             : NULL;
    if (bad)
        return cf_error_set(CF_ERR_INVALID, "spot preemption model: %s is out of range (medians ≥ 1 s, sigmas 0–10, "
                            "rates 0–%g per hour, probabilities 0–1)", bad, CF_SPOT_MAX_RATE_PER_H);
    if (nodes < 1)
        return cf_error_set(CF_ERR_INVALID, "spot preemption model: %d VMs requested", nodes);
    return CF_OK;
}

/* Appends a segment at `level` to a one-type path, joined with the last
 * one when the level agrees: cf_spot_path_push without the call and the
 * memcmp per segment (path generation is most of a recommend with spot;
 * the path is the same). */
static inline cf_status push_level(cf_spot_path *out, double d_h, int level)
{
    if (!(d_h > 0))
        return CF_OK;
    if (out->n > 0 && out->c[out->n - 1] == level) {
        out->d_h[out->n - 1] += d_h;
        out->total_h += d_h;
        return CF_OK;
    }
    if (out->n == out->cap)
        return cf_spot_path_push(out, d_h, &level); /* grows the arrays */
    out->d_h[out->n] = d_h;
    out->c[out->n] = level;
    out->n++;
    out->total_h += d_h;
    return CF_OK;
}

/* Log-scale shifts of one regime (UP, DOWN). */
static void regime_draw(gsl_rng *rng, const cf_spot_process *p, double *du, double *dd)
{
    *du = p->regime_sd_up > 0 ? p->regime_sd_up * gsl_ran_gaussian_ziggurat(rng, 1.0) : 0;
    *dd = p->regime_sd_down > 0 ? p->regime_sd_down * gsl_ran_gaussian_ziggurat(rng, 1.0) : 0;
}

cf_status cf_spot_path_generate(const cf_spot_process *p, int nodes, double hours, unsigned long seed,
                                cf_spot_path *out)
{
    memset(out, 0, sizeof *out);
    out->n_types = 1;
    cf_status st = cf_spot_process_check(p, nodes);
    if (st != CF_OK)
        return st;
    if (!(hours > 0) || !isfinite(hours))
        return cf_error_set(CF_ERR_INVALID, "spot preemption model: a path of %g hours", hours);
    const int N = nodes;
    /* Room for the expected number of segments up front (one growth of a
     * large array costs page faults and a copy); refused when too many. */
    cf_spot_screen sc;
    cf_spot_screen_of(p, 1, &sc);
    double per_cycle = 2 + (N > 1 ? sc.mean_up_h * (p->kd_per_h + p->kr_per_h) : 0);
    double want_segments = 1.2 * hours / (sc.mean_up_h + sc.mean_down_h) * per_cycle + 1024;
    if (!(want_segments <= CF_SPOT_MAX_PATH_SEGMENTS))
        return cf_error_set(CF_ERR_INVALID, "spot preemption model: a %g h path would hold about %.3g runs and "
                            "events (at most %d)", hours, want_segments, CF_SPOT_MAX_PATH_SEGMENTS);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_taus2);
    if (!rng)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    gsl_rng_set(rng, seed);
    const double mu_u = log(p->up_median_h), mu_d = log(p->down_median_h);
    const double au = p->up_sigma * sqrt(CF_SPOT_RHO), bu = p->up_sigma * sqrt(1 - CF_SPOT_RHO);
    const double ad = p->down_sigma * sqrt(CF_SPOT_RHO), bd = p->down_sigma * sqrt(1 - CF_SPOT_RHO);
    const double k_ar = sqrt(1 - CF_SPOT_PHI * CF_SPOT_PHI);
    double s = gsl_ran_gaussian_ziggurat(rng, 1.0);
    double du, dd;
    regime_draw(rng, p, &du, &dd);
    double regime_end = gsl_ran_exponential(rng, CF_SPOT_REGIME_H);
    size_t want = (size_t)want_segments;
    out->d_h = malloc(want * sizeof *out->d_h);
    out->c = malloc(want * sizeof *out->c);
    if (!out->d_h || !out->c)
        st = cf_error_set(CF_ERR_NOMEM, "out of memory");
    else
        out->cap = want;
    for (long j = 0; out->total_h < hours && st == CF_OK; j++) {
        if (j > 0)
            s = CF_SPOT_PHI * s + k_ar * gsl_ran_gaussian_ziggurat(rng, 1.0);
        while (out->total_h >= regime_end) { /* a new regime from this cycle on */
            regime_draw(rng, p, &du, &dd);
            regime_end += gsl_ran_exponential(rng, CF_SPOT_REGIME_H);
        }
        double up = exp(mu_u + du + au * s + bu * gsl_ran_gaussian_ziggurat(rng, 1.0));
        double down = exp(mu_d + dd - ad * s + bd * gsl_ran_gaussian_ziggurat(rng, 1.0));
        /* Runs at least a second long, and none past the path's end (a
         * heavy tail can draw one of 10^14 hours, with its events). */
        double room = hours - out->total_h;
        up = greater_of(up < room ? up : room, CF_SPOT_MIN_RUN_H);
        down = greater_of(down < room ? down : room, CF_SPOT_MIN_RUN_H);
        if (N == 1) {
            st = push_level(out, up, 1);
        } else {
            int lv = gsl_rng_uniform(rng) < p->qf ? N : 1 + (int)gsl_rng_uniform_int(rng, (unsigned long)(N - 1));
            double left = up;
            while (left > 0 && st == CF_OK) {
                double kd = lv >= 2 ? p->kd_per_h : 0, kr = lv < N ? p->kr_per_h : 0, q = kd + kr;
                double h = q > 0 ? gsl_ran_exponential(rng, 1.0 / q) : left;
                if (h >= left) {
                    st = push_level(out, left, lv);
                    break;
                }
                st = push_level(out, h, lv);
                left -= h;
                if (st == CF_OK && out->n > CF_SPOT_MAX_PATH_SEGMENTS)
                    st = cf_error_set(CF_ERR_INVALID, "spot preemption model: more than %d runs and events in a "
                                      "%g h path", CF_SPOT_MAX_PATH_SEGMENTS, hours);
                if (gsl_rng_uniform(rng) * q < kd)
                    lv = 1 + (int)gsl_rng_uniform_int(rng, (unsigned long)(lv - 1));
                else if (gsl_rng_uniform(rng) < p->qr)
                    lv = N;
                else
                    lv = lv + 1 + (int)gsl_rng_uniform_int(rng, (unsigned long)(N - lv));
            }
        }
        if (st == CF_OK)
            st = push_level(out, down, 0);
        if (st == CF_OK && out->n > CF_SPOT_MAX_PATH_SEGMENTS)
            st = cf_error_set(CF_ERR_INVALID, "spot preemption model: more than %d runs and events in a %g h path",
                              CF_SPOT_MAX_PATH_SEGMENTS, hours);
    }
    gsl_rng_free(rng);
    if (st != CF_OK)
        cf_spot_path_free(out);
    return st;
}

/* ---- closed-form screen -------------------------------------------------------------- */

/* Stationary distribution of the inner chain on 1..N, in O(N). Balance at
 * m < N: π_m·out_m = D(m) + U(m), with D(m) = Σ_{n>m} π_n kd/(n−1) (drops
 * land uniformly below) and U(m) = Σ_{n<m} π_n kr(1−qr)/(N−n) (rises land
 * uniformly above, or on N with qr). Subtracting the balance at m from the
 * one at m+1 (D loses π_{m+1}kd/m, U gains π_m kr(1−qr)/(N−m)) leaves
 *   π_{m+1}(out_{m+1} + kd/m) = π_m(out_m + kr(1−qr)/(N−m)),   m+1 < N,
 * and the balance at N gives π_N = Σ_{n<N} π_n kr((1−qr)/(N−n) + qr) / kd.
 * (It replaced a power iteration that took a tenth of a recommend with spot;
 * the two agree to 1e-9: tests/test_spot.c.) */
void cf_spot_inner_stationary(const cf_spot_process *p, int N, double *pi)
{
    double kd = p->kd_per_h, kr = p->kr_per_h;
    pi[0] = 0;
    if (kd + kr <= 0 || N < 2) {
        for (int n = 1; n <= N; n++)
            pi[n] = 1.0 / N;
        return;
    }
    for (int n = 1; n <= N; n++)
        pi[n] = 0;
    if (kd <= 0) { /* only rises: everything ends on N */
        pi[N] = 1;
        return;
    }
    pi[1] = 1;
    for (int m = 1; m + 1 < N; m++) {
        double out_m = (m >= 2 ? kd : 0) + kr, out_next = kd + (m + 1 < N ? kr : 0);
        pi[m + 1] = pi[m] * (out_m + kr * (1 - p->qr) / (N - m)) / (out_next + kd / m);
    }
    double into_n = 0;
    for (int n = 1; n < N; n++)
        into_n += pi[n] * kr * ((1 - p->qr) / (N - n) + p->qr);
    pi[N] = into_n / kd;
    double total = 0;
    for (int n = 1; n <= N; n++)
        total += pi[n];
    for (int n = 1; n <= N; n++)
        pi[n] /= total;
}

#define SCREEN_MAX_NODES 256 /* the chain in n/N hardly changes beyond this */

void cf_spot_screen_of(const cf_spot_process *p, int nodes, cf_spot_screen *out)
{
    memset(out, 0, sizeof *out);
    /* Over regimes: the within-regime σ² and the regime shift's variance. */
    out->mean_up_h = p->up_median_h * exp((p->up_sigma * p->up_sigma + p->regime_sd_up * p->regime_sd_up) / 2);
    out->mean_down_h =
        p->down_median_h * exp((p->down_sigma * p->down_sigma + p->regime_sd_down * p->regime_sd_down) / 2);
    out->p_up = out->mean_up_h / (out->mean_up_h + out->mean_down_h);
    int N = nodes > SCREEN_MAX_NODES ? SCREEN_MAX_NODES : nodes;
    if (N <= 1) {
        out->share_given_up = 1;
        out->events_per_up_h = 1.0 / out->mean_up_h;
        return;
    }
    double pi[SCREEN_MAX_NODES + 1];
    cf_spot_inner_stationary(p, N, pi);
    double share_st = 0, multi_st = 0;
    for (int n = 1; n <= N; n++) {
        share_st += pi[n] * n / N;
        multi_st += n >= 2 ? pi[n] : 0;
    }
    /* Start distribution: N with qf, else uniform on 1..N−1. */
    double share_0 = p->qf + (1 - p->qf) * 0.5, multi_0 = 1 - (1 - p->qf) / (N - 1);
    /* Weight of the stationary part: inner events per UP run. */
    double b = out->mean_up_h * (p->kd_per_h + p->kr_per_h);
    out->share_given_up = (share_0 + b * share_st) / (1 + b);
    double multi = (multi_0 + b * multi_st) / (1 + b);
    out->events_per_up_h = 1.0 / out->mean_up_h + p->kd_per_h * multi;
}

double cf_spot_screen_hours(const cf_spot_screen *s, double work_h, double checkpoint_h, double restart_h,
                            double *out_interval_h)
{
    double m = s->events_per_up_h > 0 ? 1.0 / s->events_per_up_h : INFINITY;
    double tau = cf_daly_interval_h(checkpoint_h, m);
    if (out_interval_h)
        *out_interval_h = tau;
    double loss = (isfinite(tau) ? checkpoint_h / tau : 0) +
                  (isfinite(tau) ? s->events_per_up_h * (tau / 2 + restart_h) : 0);
    double rate = s->p_up * s->share_given_up * (1 - loss);
    if (!(rate > 0))
        return INFINITY;
    return restart_h + work_h / rate;
}
