#include "cloudfit/advisor/spot_replay.h"
#include "cloudfit/profiler/types.h"
#include "cloudfit/spec/types.h"
#include "cloudfit/status.h"

#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "spot_replay_internal.h"

/* min and max for the replay's loops, where no value is NaN: inline,
 * unlike libm's fmin/fmax (a call each, a tenth of a replay's time). */
static inline double lesser(double a, double b)
{
    return a < b ? a : b;
}

static inline double greater(double a, double b)
{
    return a > b ? a : b;
}

/* ---- paths ------------------------------------------------------------------ */

void cf_spot_path_free(cf_spot_path *p)
{
    free(p->d_h);
    free(p->c);
    memset(p, 0, sizeof *p);
}

cf_status cf_spot_path_push(cf_spot_path *p, double d_h, const int *counts)
{
    int k = p->n_types > 0 ? p->n_types : 1;
    if (!(d_h > 0))
        return CF_OK;
    if (p->n > 0 && memcmp(&p->c[(p->n - 1) * (size_t)k], counts, (size_t)k * sizeof *counts) == 0) {
        p->d_h[p->n - 1] += d_h;
        p->total_h += d_h;
        return CF_OK;
    }
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 1024;
        double *d = realloc(p->d_h, cap * sizeof *d);
        if (!d)
            return cf_error_set(CF_ERR_NOMEM, "out of memory");
        p->d_h = d;
        int *c = realloc(p->c, cap * (size_t)k * sizeof *c);
        if (!c)
            return cf_error_set(CF_ERR_NOMEM, "out of memory");
        p->c = c;
        p->cap = cap;
    }
    p->d_h[p->n] = d_h;
    memcpy(&p->c[p->n * (size_t)k], counts, (size_t)k * sizeof *counts);
    p->n++;
    p->total_h += d_h;
    return CF_OK;
}

cf_status cf_spot_path_from_trace(const cf_spot_trace *t, cf_spot_path *out)
{
    memset(out, 0, sizeof *out);
    out->n_types = t->n_types;
    for (size_t i = 0; i < t->n_ticks; i++) {
        cf_status st = cf_spot_path_push(out, t->dt_h[i], &t->counts[i * (size_t)t->n_types]);
        if (st != CF_OK) {
            cf_spot_path_free(out);
            return st;
        }
    }
    if (out->n == 0)
        return cf_error_set(CF_ERR_INVALID, "%s: the trace has no time in it", t->name);
    return CF_OK;
}

/* ---- checkpoints -------------------------------------------------------------- */

double cf_checkpoint_bytes(double parameters, cf_optimizer optimizer)
{
    int moments = optimizer == CF_OPT_ADAM || optimizer == CF_OPT_ADAMW || optimizer == CF_OPT_LAMB ? 2
                  : optimizer == CF_OPT_MOMENTUM                                                   ? 1
                                                                                                   : 0;
    return parameters * 4.0 * (1 + moments);
}

void cf_checkpoint_costs(double bytes, double storage_mb_per_s, double checkpoint_minutes, double startup_minutes,
                         double *out_checkpoint_h, double *out_restart_h)
{
    double bw = storage_mb_per_s > 0 ? storage_mb_per_s : CF_DEFAULT_STORAGE_MB_PER_S;
    double io_h = bytes / (bw * 1e6) / 3600.0;
    if (out_checkpoint_h)
        *out_checkpoint_h = checkpoint_minutes > 0 ? checkpoint_minutes / 60.0 : io_h;
    if (out_restart_h)
        *out_restart_h = startup_minutes / 60.0 + io_h;
}

double cf_young_interval_h(double c, double m)
{
    if (!isfinite(m))
        return INFINITY;
    return sqrt(2.0 * c * m);
}

/* Daly (2006), eq. 37: τ = √(2CM)·[1 + ⅓√(C/2M) + (C/2M)/9] − C for C < 2M. */
double cf_daly_interval_h(double c, double m)
{
    if (!isfinite(m))
        return INFINITY;
    if (c >= 2.0 * m)
        return m;
    double x = c / (2.0 * m);
    return sqrt(2.0 * c * m) * (1.0 + sqrt(x) / 3.0 + x / 9.0) - c;
}

/* ---- the replay ------------------------------------------------------------------ */

enum { IDLE, RESTART, RUN, CKPT };

static int state_index(const cf_spot_plan *pl, const int *n)
{
    return pl->n_types > 1 ? n[0] + (pl->nodes[0] + 1) * n[1] : n[0];
}

static double default_share(const cf_spot_plan *pl, const int *n)
{
    double held = 0, want = 0;
    for (int k = 0; k < pl->n_types; k++) {
        held += n[k];
        want += pl->nodes[k];
    }
    return want > 0 ? held / want : 0;
}

static int any_less(const int *a, const int *b, int k)
{
    for (int i = 0; i < k; i++)
        if (a[i] < b[i])
            return 1;
    return 0;
}

static int all_zero(const int *a, int k)
{
    for (int i = 0; i < k; i++)
        if (a[i])
            return 0;
    return 1;
}

static void copy_counts(int *dst, const int *src, int k)
{
    for (int i = 0; i < k; i++)
        dst[i] = src[i];
}

/* The replay's state where a pass over the circular path begins: with
 * the path, all that the rest of the replay depends on (the time t only
 * decides where the caps stop it). A restart's or checkpoint's time left
 * counts only in that phase, the work at the checkpoint only while writing
 * it: a value left over from an earlier phase changes nothing. */
typedef struct {
    int phase, nrun[CF_SPOT_MAX_TYPES];
    double w, ws, since, phl, wck;
} replay_state;

static replay_state state_of(int phase, const int *nrun, double w, double ws, double since, double phl, double wck)
{
    return (replay_state){.phase = phase, .nrun = {nrun[0], nrun[1]}, .w = w, .ws = ws, .since = since,
                          .phl = phase == RESTART || phase == CKPT ? phl : 0, .wck = phase == CKPT ? wck : 0};
}

static int same_state(const replay_state *a, const replay_state *b)
{
    return a->phase == b->phase && a->nrun[0] == b->nrun[0] && a->nrun[1] == b->nrun[1] && a->w == b->w &&
           a->ws == b->ws && a->since == b->since && a->phl == b->phl && a->wck == b->wck;
}

/* The time steps of one pass (each `t += x` of the replay, in order):
 * enough to advance t over repeated passes exactly as replaying them
 * would, rounding included. At most MAX_PASS_STEPS (a pass of more is
 * replayed). */
#define MAX_PASS_STEPS ((size_t)1 << 22)
typedef struct {
    double *x;
    size_t n, cap;
    int on, lost; /* recording this pass; a step did not fit */
} pass_steps;

static void steps_push(pass_steps *s, double x)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 4096;
        double *x2 = cap <= MAX_PASS_STEPS ? realloc(s->x, cap * sizeof *x2) : NULL;
        if (!x2) {
            s->lost = 1;
            s->on = 0;
            return;
        }
        s->x = x2;
        s->cap = cap;
    }
    s->x[s->n++] = x;
}

/* t after `max_passes` repeats at most of the pass whose steps `s` holds,
 * each ending a `margin` or more before `limit`; *done says how many. The
 * floating-point time after a pass is the sum of its steps in order. In a
 * binade of t each step rounds to the same multiple of the binade's ulp
 * whatever t is (t is on that grid), unless it lies half-way between two
 * (the tie goes to the even one): passes inside a binade add one exact
 * sum each, so many are added at once; a pass that crosses into the next
 * binade, or one with a tie, is summed step by step. */
static double advance_passes(const pass_steps *s, double t, int max_passes, double limit, double margin, int *done)
{
    int k = 0;
    while (k < max_passes) {
        int e;
        frexp(t, &e); /* t in [2^(e-1), 2^e) */
        double lo = ldexp(1.0, e - 1), top = ldexp(1.0, e), ulp = ldexp(1.0, e - 53);
        double part[4] = {0, 0, 0, 0}; /* multiples of the ulp below 2^(e-1): exact in any order */
        int tie = 0;
        for (size_t j = 0; j < s->n; j++) {
            double even = (lo + s->x[j]) - lo, odd = ((lo + ulp) + s->x[j]) - (lo + ulp);
            tie |= (even != odd) | !(s->x[j] < lo); /* (a step that long would leave the binade) */
            part[j & 3] += even;
        }
        double sum = (part[0] + part[1]) + (part[2] + part[3]);
        if (!tie && sum > 0) {
            double n = floor(lesser((top - t) / sum, (limit - margin - t) / sum));
            n = lesser(n, (double)(max_passes - k));
            while (n >= 1 && !(t + n * sum < top && t + n * sum <= limit - margin))
                n--;
            if (n >= 1) {
                t += n * sum; /* exact: on the binade's grid, inside it */
                k += (int)n;
            }
        }
        if (k >= max_passes)
            break;
        double next = t;
        for (size_t j = 0; j < s->n; j++)
            next += s->x[j];
        if (!(next <= limit - margin))
            break;
        t = next;
        k++;
    }
    *done = k;
    return t;
}

/* `k` more passes like the last, which began with the totals `before`. */
static void repeat_totals(cf_spot_run *out, const cf_spot_run *before, int k)
{
    for (int j = 0; j < CF_SPOT_MAX_TYPES; j++)
        out->node_h[j] += k * (out->node_h[j] - before->node_h[j]);
    out->lost_h += k * (out->lost_h - before->lost_h);
    out->below_h += k * (out->below_h - before->below_h);
    out->zero_h += k * (out->zero_h - before->zero_h);
    out->samples_h += k * (out->samples_h - before->samples_h);
    out->stalled_h += k * (out->stalled_h - before->stalled_h);
    out->preemptions += k * (out->preemptions - before->preemptions);
    out->checkpoints += k * (out->checkpoints - before->checkpoints);
    out->restarts += k * (out->restarts - before->restarts);
}

#define ADVANCE(x)                                                                                                   \
    do {                                                                                                             \
        double x_ = (x);                                                                                             \
        t += x_;                                                                                                     \
        if (may_record && recording) {                                                                               \
            steps_push(steps, x_);                                                                                   \
            recording = steps->on;                                                                                   \
        }                                                                                                            \
    } while (0)

/* Compiled twice (may_record a constant): a path on which the hour cap
 * leaves fewer than 4 passes (recommend's 50,000-h model paths) has none
 * to count at once and gets the replay without the bookkeeping. */
static inline __attribute__((always_inline)) void replay(const cf_spot_path *p, size_t seg, double offset_h,
                                                         const cf_spot_plan *pl, cf_spot_run *out, pass_steps *steps,
                                                         const int may_record)
{
    memset(out, 0, sizeof *out);
    const int K = pl->n_types > 1 ? 2 : 1;
    const double W = pl->work_h, C = pl->checkpoint_h, R = pl->restart_h;
    const double tau = pl->interval_h > 1e-9 ? pl->interval_h : 1e-9;
    const double max_h = pl->max_h > 0 ? pl->max_h : CF_SPOT_MAX_HOURS;
    size_t i = seg;
    double t = 0, left = p->d_h[i] - offset_h;
    int phase = IDLE, nrun[CF_SPOT_MAX_TYPES] = {0, 0}, passes = 0;
    double w = 0, ws = 0, since = 0, phl = 0, wck = 0;
    /* where the last pass began (passes ≥ 1): its state and totals */
    replay_state pass_state = {0};
    cf_spot_run pass_run = {0};
    int recording = 0; /* steps->on, in a register */
    for (;;) {
        const int *raw = &p->c[i * (size_t)p->n_types];
        int nav[CF_SPOT_MAX_TYPES] = {0, 0}, below = 0;
        copy_counts(nav, raw, K);
        for (int k = 0; k < K; k++)
            below |= raw[k] < pl->nodes[k];
        if (pl->semantics == CF_SPOT_GANG && below)
            nav[0] = nav[1] = 0;
        if (any_less(nav, nrun, K)) { /* a preemption: back to the last checkpoint */
            out->preemptions++;
            out->lost_h += w - ws;
            w = ws;
            since = 0;
            copy_counts(nrun, nav, K);
            if (all_zero(nav, K)) {
                phase = IDLE;
            } else {
                phase = RESTART;
                phl = R;
                out->restarts++;
            }
        } else if (any_less(nrun, nav, K)) {
            if (phase == IDLE) {
                phase = RESTART;
                phl = R;
                out->restarts++;
                copy_counts(nrun, nav, K);
            } else if (phase == RESTART) {
                copy_counts(nrun, nav, K); /* joins the restart in progress */
            }
            /* RUN / CKPT: the new VMs join after the next checkpoint */
        }
        /* The tick is cut at max_h: an idle or stalled phase takes the
         * whole of what is left of a tick at once, and a tick may last up
         * to 10^9 s, so without the cut the replay (and the VM-hours, time
         * below N and samples it accounts) would run far past the cap. */
        int capped = left > max_h - t;
        if (capped)
            left = max_h - t;
        double t_seg = t;
        int done = 0;
        while (left > 1e-12 && !done) {
            if (phase == IDLE) {
                ADVANCE(left);
                left = 0;
            } else if (phase == RESTART) {
                double dt = lesser(left, phl);
                ADVANCE(dt);
                left -= dt;
                phl -= dt;
                if (phl <= 1e-12)
                    phase = RUN;
            } else if (phase == RUN) {
                int s = state_index(pl, nrun);
                double rr = pl->rate ? pl->rate[s] : default_share(pl, nrun);
                double sr = pl->samples ? pl->samples[s] : pl->rate ? rr : default_share(pl, nrun);
                if (rr <= 0) { /* no progress at this size (an LR rule that diverges) */
                    out->stalled = 1;
                    out->stalled_h += left;
                    out->samples_h += sr * left;
                    ADVANCE(left);
                    left = 0;
                    continue;
                }
                double tf = (W - w) / rr;
                if (since == 0 && left > tau + C && tf > tau) { /* whole checkpoint cycles at once */
                    double k = lesser(floor(left / (tau + C)), floor(tf / tau));
                    if (k >= 1 && k * tau < tf) {
                        ADVANCE(k * (tau + C));
                        left -= k * (tau + C);
                        w += k * tau * rr;
                        out->samples_h += k * tau * sr;
                        ws = w;
                        out->checkpoints += (int)k;
                        if (any_less(nrun, nav, K) && !any_less(nav, nrun, K)) {
                            phase = RESTART;
                            phl = R;
                            out->restarts++;
                            copy_counts(nrun, nav, K);
                        }
                        continue;
                    }
                }
                double dt = lesser(lesser(left, tf), tau - since);
                ADVANCE(dt);
                left -= dt;
                w += rr * dt;
                out->samples_h += sr * dt;
                since += dt;
                if (dt >= tf || w >= W - 1e-9) {
                    done = 1;
                } else if (since >= tau - 1e-12) {
                    phase = CKPT;
                    phl = C;
                    wck = w;
                }
            } else { /* CKPT */
                double dt = lesser(left, phl);
                ADVANCE(dt);
                left -= dt;
                phl -= dt;
                if (phl <= 1e-12) {
                    ws = wck;
                    since = 0;
                    out->checkpoints++;
                    if (any_less(nrun, nav, K) && !any_less(nav, nrun, K)) {
                        phase = RESTART;
                        phl = R;
                        out->restarts++;
                        copy_counts(nrun, nav, K);
                    } else {
                        phase = RUN;
                    }
                }
            }
        }
        double dt_seg = t - t_seg;
        for (int k = 0; k < K; k++)
            out->node_h[k] += raw[k] * dt_seg;
        if (below)
            out->below_h += dt_seg;
        if (all_zero(raw, K))
            out->zero_h += dt_seg;
        if (done) {
            out->wall_h = t;
            return;
        }
        if (capped || t >= max_h) {
            out->wall_h = INFINITY;
            out->stop = CF_SPOT_STOP_HOURS;
            return;
        }
        if (++i == p->n) {
            i = 0;
            if (++passes > CF_SPOT_MAX_PASSES) {
                out->wall_h = INFINITY;
                out->stop = CF_SPOT_STOP_PASSES;
                return;
            }
            /* A job that never ends (runs too short for a restart and the
             * work to a checkpoint) repeats its passes until a cap, each
             * like the last once one has ended in the state it began in:
             * those are counted, not replayed (a replay per start of the
             * whole trace up to 1,000 times made `simulate` on a short
             * trace quadratic in its length). The time t advances by the
             * pass's own steps (advance_passes), so the caps stop the
             * replay where a replay of every pass would; the last passes
             * before a cap are replayed. */
            if (may_record) {
                replay_state now = state_of(phase, nrun, w, ws, since, phl, wck);
                if (steps->on && same_state(&now, &pass_state)) {
                    /* a pass that ends the longest segment or more before max_h
                     * has no tick that reaches it */
                    int k = 0;
                    double longest = 0;
                    for (size_t j = 0; j < p->n; j++)
                        longest = greater(longest, p->d_h[j]);
                    t = advance_passes(steps, t, CF_SPOT_MAX_PASSES - passes, max_h, longest, &k);
                    repeat_totals(out, &pass_run, k);
                    passes += k;
                }
                pass_state = now;
                pass_run = *out;
                steps->n = 0;
                steps->on = recording = !steps->lost;
            }
        }
        left = p->d_h[i];
    }
}
#undef ADVANCE

void cf_spot_replay(const cf_spot_path *p, size_t seg, double offset_h, const cf_spot_plan *pl, cf_spot_run *out)
{
    const double max_h = pl->max_h > 0 ? pl->max_h : CF_SPOT_MAX_HOURS;
    if (4 * p->total_h < max_h) {
        pass_steps steps = {0};
        replay(p, seg, offset_h, pl, out, &steps, 1);
        free(steps.x);
    } else {
        replay(p, seg, offset_h, pl, out, NULL, 0);
    }
}

/* ---- the mixed plan ------------------------------------------------------------- */

typedef struct {
    const cf_spot_plan *pl;
    double D, tau_od, t;
    double ws;
    int uniform;
} mixed_ctx;

static double t_safe(const mixed_ctx *m)
{
    const cf_spot_plan *pl = m->pl;
    return m->D - ((pl->work_h - m->ws) * (1 + pl->checkpoint_h / m->tau_od) + pl->restart_h + pl->checkpoint_h);
}

static double line_at(const mixed_ctx *m)
{
    if (!m->uniform)
        return -INFINITY;
    double R = m->pl->restart_h;
    return m->pl->work_h * (m->t - R) / (m->D - R);
}

static double t_line(const mixed_ctx *m)
{
    if (!m->uniform)
        return INFINITY;
    double R = m->pl->restart_h;
    return R + m->ws * (m->D - R) / m->pl->work_h;
}

void cf_spot_replay_mixed(const cf_spot_path *p, size_t seg, double offset_h, const cf_spot_plan *pl,
                          double deadline_h, cf_mixed_policy policy, cf_spot_run *out)
{
    memset(out, 0, sizeof *out);
    const int N = pl->nodes[0];
    const double W = pl->work_h, C = pl->checkpoint_h, R = pl->restart_h;
    const double tau = pl->interval_h > 1e-9 ? pl->interval_h : 1e-9;
    const double hyst = 2 * (R + C);
    const double max_h = pl->max_h > 0 ? pl->max_h : CF_SPOT_MAX_HOURS;
    mixed_ctx m = {.pl = pl, .D = deadline_h, .tau_od = greater(tau, CF_SPOT_OD_INTERVAL_H),
                   .uniform = policy == CF_MIXED_UNIFORM};
    size_t i = seg;
    double left = p->d_h[i] - offset_h;
    int mode = 0, phase = IDLE, nrun = 0, passes = 0; /* mode 0 spot, 1 on-demand */
    double w = 0, since = 0, phl = 0, wck = 0;
#define GO_OD()                                                                                                      \
    do {                                                                                                             \
        mode = 1;                                                                                                    \
        w = m.ws;                                                                                                    \
        since = 0;                                                                                                   \
        phase = RESTART;                                                                                             \
        phl = R;                                                                                                     \
        nrun = N;                                                                                                    \
        out->restarts++;                                                                                             \
    } while (0)
    for (;;) {
        int nav = p->c[i * (size_t)p->n_types];
        if (mode == 0) {
            if (nav < nrun) {
                out->preemptions++;
                out->lost_h += w - m.ws;
                w = m.ws;
                since = 0;
                nrun = nav;
                if (nav == 0) {
                    phase = IDLE;
                } else {
                    phase = RESTART;
                    phl = R;
                    out->restarts++;
                }
            } else if (nav > nrun) {
                if (phase == IDLE) {
                    phase = RESTART;
                    phl = R;
                    nrun = nav;
                    out->restarts++;
                } else if (phase == RESTART) {
                    nrun = nav;
                }
            }
            if (((phase == IDLE || phase == RESTART) && m.ws < line_at(&m)) || m.t >= t_safe(&m))
                GO_OD();
        }
        int capped = left > max_h - m.t; /* cut at max_h, as in cf_spot_replay */
        if (capped)
            left = max_h - m.t;
        int done = 0;
        while (left > 1e-12 && !done) {
            int hold = mode ? N : nav;
            double dt;
            if (mode == 0 && phase == IDLE) {
                dt = lesser(left, greater(0.0, lesser(t_line(&m), t_safe(&m)) - m.t));
                m.t += dt;
                left -= dt;
                out->node_h[0] += dt * hold;
                if (left > 1e-12)
                    GO_OD();
                continue;
            }
            if (phase == RESTART) {
                dt = lesser(left, phl);
                if (mode == 0)
                    dt = lesser(dt, greater(0.0, t_safe(&m) - m.t));
                m.t += dt;
                left -= dt;
                phl -= dt;
                out->node_h[mode] += dt * hold;
                if (mode == 0 && m.t >= t_safe(&m) && phl > 1e-12) {
                    GO_OD();
                    continue;
                }
                if (phl <= 1e-12)
                    phase = RUN;
            } else if (phase == RUN) {
                double rr = (double)nrun / N;
                double tf = (W - w) / rr, tcur = mode ? m.tau_od : tau;
                if (!m.uniform && since == 0 && left > tcur + C && tf > tcur) {
                    /* Whole checkpoint cycles at once (greedy only: uniform
                     * progress checks its line at every checkpoint). On spot
                     * they must end before the safety net, which only moves
                     * later as work is saved. */
                    double k = lesser(floor(left / (tcur + C)), floor(tf / tcur));
                    if (mode == 0)
                        k = lesser(k, floor((t_safe(&m) - m.t) / (tcur + C)));
                    if (k >= 1 && k * tcur < tf) {
                        m.t += k * (tcur + C);
                        left -= k * (tcur + C);
                        w += k * tcur * rr;
                        out->samples_h += k * tcur * rr;
                        out->node_h[mode] += k * (tcur + C) * hold;
                        m.ws = w;
                        out->checkpoints += (int)k;
                        if (mode == 0 && nav > nrun) {
                            phase = RESTART;
                            phl = R;
                            nrun = nav;
                            out->restarts++;
                        }
                        continue;
                    }
                }
                dt = lesser(lesser(left, tf), tcur - since);
                if (mode == 0)
                    dt = lesser(dt, greater(0.0, t_safe(&m) - m.t));
                m.t += dt;
                left -= dt;
                w += rr * dt;
                out->samples_h += rr * dt;
                since += dt;
                out->node_h[mode] += dt * hold;
                if (dt >= tf || w >= W - 1e-9) {
                    done = 1;
                    break;
                }
                if (mode == 0 && m.t >= t_safe(&m)) {
                    GO_OD();
                    continue;
                }
                if (since >= tcur - 1e-12) {
                    phase = CKPT;
                    phl = C;
                    wck = w;
                }
            } else { /* CKPT */
                dt = lesser(left, phl);
                m.t += dt;
                left -= dt;
                phl -= dt;
                out->node_h[mode] += dt * hold;
                if (phl <= 1e-12) {
                    m.ws = wck;
                    since = 0;
                    phase = RUN;
                    out->checkpoints++;
                    if (mode == 0) {
                        if (m.ws < line_at(&m) || m.t >= t_safe(&m)) {
                            GO_OD();
                        } else if (nav > nrun) {
                            phase = RESTART;
                            phl = R;
                            nrun = nav;
                            out->restarts++;
                        }
                    } else if (m.uniform && nav >= N && m.ws >= line_at(&m) + hyst && t_safe(&m) - m.t > 2 * R) {
                        mode = 0; /* back to spot */
                        phase = RESTART;
                        phl = R;
                        nrun = nav;
                        out->restarts++;
                    }
                }
            }
        }
        if (done) {
            out->wall_h = m.t;
            return;
        }
        if (capped || m.t >= max_h) {
            out->wall_h = INFINITY;
            out->stop = CF_SPOT_STOP_HOURS;
            return;
        }
        if (++i == p->n) {
            i = 0;
            if (++passes > CF_SPOT_MAX_PASSES) {
                out->wall_h = INFINITY;
                out->stop = CF_SPOT_STOP_PASSES;
                return;
            }
        }
        left = p->d_h[i];
    }
#undef GO_OD
}

/* ---- starts and quantiles ------------------------------------------------------------ */

/* Segment and offset of time s along the path (cum: n + 1 prefix sums). */
static void locate(const cf_spot_path *p, const double *cum, double s, size_t *seg, double *off)
{
    size_t lo = 0, hi = p->n; /* cum[lo] ≤ s < cum[hi] */
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (cum[mid] <= s)
            lo = mid;
        else
            hi = mid;
    }
    *seg = lo;
    *off = s - cum[lo];
}

static double *prefix_sums(const cf_spot_path *p)
{
    double *cum = malloc((p->n + 1) * sizeof *cum);
    if (!cum)
        return NULL;
    cum[0] = 0;
    for (size_t i = 0; i < p->n; i++)
        cum[i + 1] = cum[i] + p->d_h[i];
    return cum;
}

double cf_spot_start_step(const cf_spot_path *p, double step_h)
{
    double least = p->total_h / CF_SPOT_MAX_STARTS;
    return step_h > least ? step_h : least;
}

size_t cf_spot_starts_grid(const cf_spot_path *p, double step_h, size_t *seg, double *off)
{
    double *cum = prefix_sums(p);
    if (!cum)
        return 0;
    size_t n = 0;
    /* at most CF_SPOT_MAX_STARTS: with cf_spot_start_step's least step,
     * total / (total / MAX) can round to one start more */
    for (double s = 0; s < cum[p->n] - 1e-12 && n < CF_SPOT_MAX_STARTS; s = (double)(++n) * step_h)
        locate(p, cum, s, &seg[n], &off[n]);
    free(cum);
    return n;
}

typedef struct {
    double t_h; /* the start time along the path */
    size_t i;   /* which start */
} start_time;

static int by_start_time(const void *a, const void *b)
{
    const start_time *x = a, *y = b;
    if (x->t_h != y->t_h)
        return x->t_h < y->t_h ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* Starts are placed by one walk along the path in order of time, not by a
 * binary search in an array of prefix sums (that array was as large as the
 * path: 400 KB of fresh pages per path). The running sum adds the same
 * durations in the same order, so each start's segment and offset are the
 * ones the prefix sums gave. */
cf_status cf_spot_starts_random(const cf_spot_path *p, size_t n, double frac, unsigned long seed, size_t *seg,
                                double *off)
{
    start_time *order = malloc((n ? n : 1) * sizeof *order);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!order || !rng) {
        free(order);
        if (rng)
            gsl_rng_free(rng);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    double total = 0;
    for (size_t i = 0; i < p->n; i++)
        total += p->d_h[i];
    gsl_rng_set(rng, seed);
    for (size_t i = 0; i < n; i++)
        order[i] = (start_time){gsl_rng_uniform(rng) * frac * total, i};
    gsl_rng_free(rng);
    qsort(order, n, sizeof *order, by_start_time);
    size_t lo = 0;
    double cum_lo = 0; /* the sum of the durations before segment lo */
    for (size_t r = 0; r < n; r++) {
        double t = order[r].t_h;
        while (lo + 1 < p->n && cum_lo + p->d_h[lo] <= t) {
            cum_lo += p->d_h[lo];
            lo++;
        }
        seg[order[r].i] = lo;
        off[order[r].i] = t - cum_lo;
    }
    free(order);
    return CF_OK;
}

double cf_quantile_sorted(const double *x, size_t n, double q)
{
    if (n == 0)
        return NAN;
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)floor(pos), hi = lo + 1 < n ? lo + 1 : lo;
    double frac = pos - (double)lo;
    if (frac <= 0 || hi == lo)
        return x[lo];
    if (!isfinite(x[hi]) || !isfinite(x[lo]))
        return x[hi];
    return x[lo] + (x[hi] - x[lo]) * frac;
}

/* Moves the k-th smallest of x[lo, hi) to x[k], with nothing larger before
 * it and nothing smaller after it (quickselect, median-of-three pivot,
 * three-way partition: runs that never meet a preemption are many equal
 * times). */
static void select_kth(double *x, size_t lo, size_t hi, size_t k)
{
    while (hi - lo > 1) {
        double a = x[lo], b = x[lo + (hi - lo) / 2], c = x[hi - 1];
        double pivot = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
        size_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            double v = x[i];
            if (v < pivot) {
                x[i++] = x[lt];
                x[lt++] = v;
            } else if (v > pivot) {
                x[i] = x[--gt];
                x[gt] = v;
            } else {
                i++;
            }
        }
        if (k < lt)
            hi = lt;
        else if (k >= gt)
            lo = gt;
        else
            return; /* x[lt, gt) all equal the pivot */
    }
}

void cf_quantiles_place(double *v, size_t n, const double *q, size_t n_q)
{
    enum { MAX_POSITIONS = 64 };
    size_t pos[MAX_POSITIONS], n_pos = 0;
    if (n < 2)
        return;
    if (n_q > MAX_POSITIONS / 2) {
        gsl_sort(v, 1, n);
        return;
    }
    for (size_t i = 0; i < n_q; i++) {
        size_t lo = (size_t)floor(q[i] * (double)(n - 1));
        pos[n_pos++] = lo < n ? lo : n - 1;
        if (lo + 1 < n)
            pos[n_pos++] = lo + 1;
    }
    for (size_t i = 1; i < n_pos; i++) /* insertion sort of a few positions */
        for (size_t j = i; j > 0 && pos[j - 1] > pos[j]; j--) {
            size_t t = pos[j];
            pos[j] = pos[j - 1];
            pos[j - 1] = t;
        }
    /* After x[k] is placed, x[0, k] holds the k + 1 smallest: the next
     * position is selected among the rest only. */
    size_t from = 0;
    for (size_t i = 0; i < n_pos; i++) {
        if (pos[i] < from)
            continue;
        select_kth(v, from, n, pos[i]);
        from = pos[i] + 1;
    }
}

double cf_quantile(double *v, size_t n, double q)
{
    gsl_sort(v, 1, n);
    return cf_quantile_sorted(v, n, q);
}

/* The statistics over the path's first n_used types, nodes[t] requested
 * of type t (the path holds p->n_types counts per segment). */
static inline void path_stats(const cf_spot_path *p, int n_used, const int *nodes, cf_spot_path_stats *out)
{
    memset(out, 0, sizeof *out);
    double total = 0, held = 0, up = 0, full = 0, drops = 0;
    long events = 0, exits_full = 0;
    size_t k = p->n_types > 0 ? (size_t)p->n_types : 1;
    int requested = 0;
    for (int t = 0; t < n_used; t++)
        requested += nodes[t];
    for (size_t i = 0; i < p->n; i++) {
        const int *c = &p->c[i * k], *next = i + 1 < p->n ? &p->c[(i + 1) * k] : NULL;
        int c_all = 0, all_held = 1, lost = 0;
        for (int t = 0; t < n_used; t++) {
            c_all += c[t];
            all_held &= c[t] >= nodes[t];
            if (next && next[t] < c[t])
                lost += c[t] - next[t];
        }
        total += p->d_h[i];
        held += p->d_h[i] * c_all;
        if (c_all > 0)
            up += p->d_h[i];
        if (all_held)
            full += p->d_h[i];
        if (lost > 0) {
            drops += lost;
            events++;
            exits_full += all_held;
        }
    }
    if (total <= 0 || requested <= 0)
        return;
    out->availability = full / total;
    out->mean_share = held / total / requested;
    out->rate_per_node_day = held > 0 ? drops / held * 24.0 : 0;
    out->events_per_day = events / total * 24.0;
    out->mtbf_h = events ? up / events : INFINITY;
    out->mtbf_gang_h = exits_full ? full / exits_full : INFINITY;
}

void cf_spot_path_stats_all(const cf_spot_path *p, const int *nodes, cf_spot_path_stats *out)
{
    path_stats(p, p->n_types > 0 ? p->n_types : 1, nodes, out);
}

void cf_spot_path_stats_of(const cf_spot_path *p, int nodes, cf_spot_path_stats *out)
{
    path_stats(p, 1, &nodes, out); /* the first type (a path of one type, or a mixed path's first) */
}
