#include "cloudfit/advisor/spot_replay.h"
#include "cloudfit/profiler/types.h"
#include "cloudfit/spec/types.h"
#include "cloudfit/status.h"

#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort_double.h>
#include <math.h>
#include <stdint.h>
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
    int on, lost;        /* recording this pass; a step did not fit */
    int repeated;        /* a pass ended in the state it began in, `fixed` */
    replay_state fixed;
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

/* ---- one pass shared by the starts of a replay (cf_spot_replay_many) ---- */

/* The totals before a segment of the shared pass, from the pass's start
 * (`stalls`: segments that stalled, for the run's flag). */
typedef struct {
    double node_h[CF_SPOT_MAX_TYPES], lost_h, below_h, zero_h, samples_h, stalled_h;
    int preemptions, checkpoints, restarts, stalls;
} pass_totals;

static pass_totals totals_of(const cf_spot_run *r, int stalls)
{
    return (pass_totals){.node_h = {r->node_h[0], r->node_h[1]}, .lost_h = r->lost_h, .below_h = r->below_h,
                         .zero_h = r->zero_h, .samples_h = r->samples_h, .stalled_h = r->stalled_h,
                         .preemptions = r->preemptions, .checkpoints = r->checkpoints, .restarts = r->restarts,
                         .stalls = stalls};
}

/* A binade [2^(e-1), 2^e) of the time t, for the pass's steps: in it each
 * step adds the same multiple of the ulp to t (advance_passes), except the
 * `odd` ones (a tie, whose rounding depends on t). g[j]: the first j steps'
 * multiples, in ulps. Made on first use; state -1: added step by step (a
 * step half the binade or longer, or a pass of 2^60 ulps or more). */
#define BINADE_MIN (-64)
#define BINADE_MAX 64
typedef struct {
    int64_t *g;
    size_t *odd, n_odd;
    int state; /* 0 not made, 1 made, -1 step by step */
} binade_sums;

/* The pass over the whole path from the state s0 at segment 0 back to s0:
 * the state entering each segment, where its steps begin, the totals
 * before it. A start whose replay enters a segment in the shared pass's
 * state there repeats the shared pass from then on (the replay depends on
 * the state and the path alone, the time only decides where the caps stop
 * it): it goes on from a segment shortly before its cap (shared_jump) with
 * the time the replay of every segment would reach (sum_steps) and the
 * shared pass's totals. So a start on a trace where the job never finishes
 * replays a few segments, not several passes over the trace. */
typedef struct {
    int tried, ready;
    replay_state s0;
    size_t n, m;           /* segments, steps */
    replay_state *st;      /* [n] */
    size_t *first;         /* [n + 1]: the first step of each segment (first[n] = m) */
    pass_totals *tot;      /* [n + 1] */
    double *x;             /* [m]: the steps */
    double longest, max_step, sum;
    binade_sums b[BINADE_MAX - BINADE_MIN + 1];
} shared_pass;

static void shared_free(shared_pass *sh)
{
    free(sh->st);
    free(sh->first);
    free(sh->tot);
    free(sh->x);
    for (size_t k = 0; k < sizeof sh->b / sizeof *sh->b; k++) {
        free(sh->b[k].g);
        free(sh->b[k].odd);
    }
    memset(sh, 0, sizeof *sh);
}

static const binade_sums *binade_of(shared_pass *sh, int e)
{
    if (e < BINADE_MIN || e > BINADE_MAX)
        return NULL;
    binade_sums *b = &sh->b[e - BINADE_MIN];
    if (b->state == 0) {
        b->state = -1;
        const double lo = ldexp(1.0, e - 1), ulp = ldexp(1.0, e - 53);
        if (!(sh->max_step < lo) || !(sh->sum < ldexp(1.0, e + 6)))
            return NULL;
        int64_t *g = malloc((sh->m + 1) * sizeof *g);
        size_t *odd = NULL, n_odd = 0, cap = 0;
        if (!g)
            return NULL;
        g[0] = 0;
        for (size_t j = 0; j < sh->m; j++) {
            double even = (lo + sh->x[j]) - lo, other = ((lo + ulp) + sh->x[j]) - (lo + ulp);
            if (even != other) {
                if (n_odd == cap) {
                    size_t c2 = cap ? 2 * cap : 16;
                    size_t *o2 = realloc(odd, c2 * sizeof *o2);
                    if (!o2) {
                        free(g);
                        free(odd);
                        return NULL;
                    }
                    odd = o2;
                    cap = c2;
                }
                odd[n_odd++] = j;
            }
            g[j + 1] = g[j] + (int64_t)(even / ulp);
        }
        b->g = g;
        b->odd = odd;
        b->n_odd = n_odd;
        b->state = 1;
    }
    return b->state == 1 ? b : NULL;
}

/* The shared pass's step at position k of its unrolled repeats. */
static inline double step_at(const shared_pass *sh, uint64_t k)
{
    return sh->x[k % sh->m];
}

/* b's ulps of the steps at positions [k0, k1) (k1 - k0 at most a few passes
 * more than fit in the binade: no overflow). */
static int64_t ulps_between(const shared_pass *sh, const binade_sums *b, uint64_t k0, uint64_t k1)
{
    uint64_t q0 = k0 / sh->m, q1 = k1 / sh->m;
    return (int64_t)(q1 - q0) * b->g[sh->m] + b->g[k1 % sh->m] - b->g[k0 % sh->m];
}

/* t after the steps at positions [k0, k1), exactly as `t += x` for each
 * in order: inside a binade of t the steps up to the next odd one or the
 * one that leaves the binade are added at once (advance_passes' argument). */
static double sum_steps(shared_pass *sh, double t, uint64_t k0, uint64_t k1)
{
    const uint64_t m = sh->m;
    while (k0 < k1) {
        int e = 0;
        const binade_sums *b = NULL;
        if (t > 0) {
            frexp(t, &e);
            b = binade_of(sh, e);
        }
        if (!b) {
            t += step_at(sh, k0++);
            continue;
        }
        const double top = ldexp(1.0, e), ulp = ldexp(1.0, e - 53);
        uint64_t hi = k1;
        if (b->n_odd) { /* the next odd step */
            size_t s = (size_t)(k0 % m), lo_i = 0, hi_i = b->n_odd;
            while (lo_i < hi_i) {
                size_t mid = lo_i + (hi_i - lo_i) / 2;
                if (b->odd[mid] < s)
                    lo_i = mid + 1;
                else
                    hi_i = mid;
            }
            uint64_t next = k0 - s + (lo_i < b->n_odd ? b->odd[lo_i] : m + b->odd[0]);
            if (next < hi)
                hi = next;
        }
        if (b->g[m] > 0) { /* no more passes than fit in the binade, and two */
            uint64_t fit = (uint64_t)(top / ((double)b->g[m] * ulp)) + 2;
            if ((hi - k0) / m > fit)
                hi = k0 + fit * m;
        }
        uint64_t k = hi;
        if (!(t + (double)ulps_between(sh, b, k0, hi) * ulp < top)) {
            uint64_t a = k0, z = hi; /* the last k in [a, z) with t + ulps(k0, k) · ulp < top */
            while (z - a > 1) {
                uint64_t mid = a + (z - a) / 2;
                if (t + (double)ulps_between(sh, b, k0, mid) * ulp < top)
                    a = mid;
                else
                    z = mid;
            }
            k = a;
        }
        t += (double)ulps_between(sh, b, k0, k) * ulp; /* exact: on the binade's grid, inside it */
        k0 = k;
        if (k0 < k1) /* the odd step or the one that leaves the binade, as it is */
            t += step_at(sh, k0++);
    }
    return t;
}

/* Where a start that entered segment i of the shared pass at time *t,
 * after `passes` passes, goes on replaying: the last segment (index along
 * the unrolled passes from segment 0 of this one) it enters at a time no
 * later than `max_h` less twice the longest segment and an hour (no cap
 * stops it before), and before the pass cap; *t becomes the time there. */
static uint64_t shared_jump(shared_pass *sh, size_t i, double *t, int passes, double max_h)
{
    const uint64_t n = sh->n, m = sh->m;
    const uint64_t last = (uint64_t)(CF_SPOT_MAX_PASSES - passes) * n + (n - 1);
    const double limit = max_h - 2 * sh->longest - 1.0;
    uint64_t at = i, step = 1;
    double t_at = *t;
    int grow = 1;
    if (!(t_at <= limit))
        return at;
    while (step > 0) {
        uint64_t to = at + step;
        double t_to = 0;
        int ok = to <= last;
        if (ok) {
            t_to = sum_steps(sh, t_at, (at / n) * m + sh->first[at % n], (to / n) * m + sh->first[to % n]);
            ok = t_to <= limit;
        }
        if (ok) {
            at = to;
            t_at = t_to;
            step = grow ? 2 * step : step / 2;
        } else {
            grow = 0;
            step /= 2;
        }
    }
    *t = t_at;
    return at;
}

/* The totals from segment i of the shared pass to position `to` of its
 * unrolled repeats (to ≥ i). */
static void shared_totals(const shared_pass *sh, size_t i, uint64_t to, cf_spot_run *out)
{
    const uint64_t q = to / sh->n;
    const pass_totals *a = &sh->tot[i], *z = &sh->tot[to % sh->n], *all = &sh->tot[sh->n];
#define SPAN(f) (q ? (all->f - a->f) + (double)(q - 1) * all->f + z->f : z->f - a->f)
#define SPAN_INT(f) (int)(q ? (all->f - a->f) + (int64_t)(q - 1) * all->f + z->f : z->f - a->f)
    for (int k = 0; k < CF_SPOT_MAX_TYPES; k++)
        out->node_h[k] += SPAN(node_h[k]);
    out->lost_h += SPAN(lost_h);
    out->below_h += SPAN(below_h);
    out->zero_h += SPAN(zero_h);
    out->samples_h += SPAN(samples_h);
    out->stalled_h += SPAN(stalled_h);
    out->preemptions += SPAN_INT(preemptions);
    out->checkpoints += SPAN_INT(checkpoints);
    out->restarts += SPAN_INT(restarts);
    if (SPAN_INT(stalls) > 0)
        out->stalled = 1;
#undef SPAN
#undef SPAN_INT
}

/* cf_spot_replay_lengths: where a shorter job's replay takes over from the
 * longest one's (the whole state at the top of segment i), and the
 * followers still to hand it to. */
typedef struct {
    size_t i;
    double t, left;
    int fresh, phase, nrun[CF_SPOT_MAX_TYPES];
    double w, ws, since, phl, wck;
    cf_spot_run out;
} replay_fork;

typedef struct {
    const double *work; /* the followers' work, each at most the one before it and the leader's */
    size_t n;           /* followers 0..n-1 not handed their state yet (the shortest goes first) */
    double stop_h;      /* the least stop_h of all */
    replay_fork *fork;  /* one per follower */
} lengths_ctx;

#define ADVANCE(x)                                                                                                   \
    do {                                                                                                             \
        double x_ = (x);                                                                                             \
        t += x_;                                                                                                     \
        if (may_record && recording) {                                                                               \
            steps_push(steps, x_);                                                                                   \
            recording = steps->on;                                                                                   \
        }                                                                                                            \
    } while (0)

/* Compiled several times (may_record, build constants; sh and count NULL
 * or not): a path on which the hour cap leaves fewer than 4 passes
 * (recommend's 50,000-h model paths) has none to count at once and gets
 * the replay without the bookkeeping. With sh (cf_spot_replay_many) a
 * start that enters a segment in the shared pass's state goes on near its
 * cap (shared_jump); `build` replays the shared pass itself, from sh->s0 at
 * segment 0 back to segment 0, and fills sh. *count: segments replayed. */
static inline __attribute__((always_inline)) void replay(const cf_spot_path *p, size_t seg, double offset_h,
                                                         const cf_spot_plan *pl, cf_spot_run *out, pass_steps *steps,
                                                         const int may_record, shared_pass *sh, const int build,
                                                         size_t *count, const double stop_h, lengths_ctx *ln,
                                                         const replay_fork *from)
{
    memset(out, 0, sizeof *out);
    const int K = pl->n_types > 1 ? 2 : 1;
    const double W = pl->work_h, C = pl->checkpoint_h, R = pl->restart_h;
    const double tau = pl->interval_h > 1e-9 ? pl->interval_h : 1e-9;
    const double max_h = build ? INFINITY : pl->max_h > 0 ? pl->max_h : CF_SPOT_MAX_HOURS;
    size_t i = build ? 0 : seg;
    double t = 0, left = build ? p->d_h[0] : p->d_h[i] - offset_h;
    int phase = IDLE, nrun[CF_SPOT_MAX_TYPES] = {0, 0}, passes = 0;
    double w = 0, ws = 0, since = 0, phl = 0, wck = 0;
    if (build) {
        phase = sh->s0.phase;
        copy_counts(nrun, sh->s0.nrun, CF_SPOT_MAX_TYPES);
        w = sh->s0.w;
        ws = sh->s0.ws;
        since = sh->s0.since;
        phl = sh->s0.phl;
        wck = sh->s0.wck;
    }
    /* where the last pass began (passes ≥ 1): its state and totals */
    replay_state pass_state = {0};
    cf_spot_run pass_run = {0};
    int recording = build; /* steps->on, in a register */
    int fresh = 0, merged = 0, stalls = 0; /* left is a whole segment; jumped (or too late to) */
    if (from) { /* a shorter job, from where the longest one's replay handed it over (always in its first pass) */
        i = from->i;
        t = from->t;
        left = from->left;
        fresh = from->fresh;
        phase = from->phase;
        copy_counts(nrun, from->nrun, CF_SPOT_MAX_TYPES);
        w = from->w;
        ws = from->ws;
        since = from->since;
        phl = from->phl;
        wck = from->wck;
        *out = from->out;
    }
    for (;;) {
        if (count)
            ++*count;
        if (ln) {
            /* The work enters this segment's decisions only through the time to finish
             * (W − w)/rate, and only where it is at most what is left of the segment or
             * one interval. In this segment the VMs running are at most those the
             * segment holds, so the rate is at most their share (none while it holds
             * none): a shorter job further than that from its end does here what the
             * longest one does, step for step. Each is handed the state before the
             * first segment where that may not hold, and before any segment that may
             * end the replay otherwise or wrap the path (a margin of an hour against
             * rounding). */
            const double d = p->d_h[i], most = default_share(pl, &p->c[i * (size_t)p->n_types]);
            const int all = i + 1 == p->n || !(t + d + 1 < max_h) || !(t + d + 1 < ln->stop_h);
            while (ln->n > 0 && (all || !(ln->work[ln->n - 1] - w >= most * (2 * d + tau + 1)))) {
                replay_fork *f = &ln->fork[--ln->n];
                *f = (replay_fork){.i = i, .t = t, .left = left, .fresh = fresh, .phase = phase,
                                   .nrun = {nrun[0], nrun[1]}, .w = w, .ws = ws, .since = since, .phl = phl,
                                   .wck = wck, .out = *out};
            }
        }
        if (build) {
            sh->st[i] = state_of(phase, nrun, w, ws, since, phl, wck);
            sh->first[i] = steps->n;
            stalls += out->stalled;
            out->stalled = 0;
            sh->tot[i] = totals_of(out, stalls);
        } else if (sh && fresh && !merged && sh->ready) {
            replay_state now = state_of(phase, nrun, w, ws, since, phl, wck);
            if (same_state(&now, &sh->st[i])) {
                /* the shared pass from here on: go on shortly before the cap */
                merged = 1;
                double t_to = t;
                uint64_t to = shared_jump(sh, i, &t_to, passes, max_h);
                if (to > i) {
                    shared_totals(sh, i, to, out);
                    passes += (int)(to / sh->n);
                    i = (size_t)(to % sh->n);
                    t = t_to;
                    const replay_state *s = &sh->st[i];
                    phase = s->phase;
                    copy_counts(nrun, s->nrun, CF_SPOT_MAX_TYPES);
                    w = s->w;
                    ws = s->ws;
                    since = s->since;
                    phl = s->phl;
                    wck = s->wck;
                    left = p->d_h[i];
                }
                if (may_record) { /* nothing left to count */
                    steps->lost = 1;
                    steps->on = recording = 0;
                }
            }
        }
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
        if (t > stop_h) { /* cf_spot_replay_until: it ends after stop_h, whenever that is */
            out->wall_h = INFINITY;
            out->stop = CF_SPOT_STOP_HOURS;
            return;
        }
        if (++i == p->n) {
            i = 0;
            if (build) { /* the shared pass: back in the state it began in */
                stalls += out->stalled;
                sh->tot[p->n] = totals_of(out, stalls);
                sh->first[p->n] = steps->n;
                replay_state now = state_of(phase, nrun, w, ws, since, phl, wck);
                sh->ready = !steps->lost && same_state(&now, &sh->s0);
                return;
            }
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
                    steps->repeated = 1;
                    steps->fixed = now;
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
        fresh = 1;
    }
}
#undef ADVANCE

void cf_spot_replay_until(const cf_spot_path *p, size_t seg, double offset_h, const cf_spot_plan *pl, double stop_h,
                          cf_spot_run *out)
{
    const double max_h = pl->max_h > 0 ? pl->max_h : CF_SPOT_MAX_HOURS;
    if (4 * p->total_h < max_h) {
        pass_steps steps = {0};
        replay(p, seg, offset_h, pl, out, &steps, 1, NULL, 0, NULL, stop_h, NULL, NULL);
        free(steps.x);
    } else {
        replay(p, seg, offset_h, pl, out, NULL, 0, NULL, 0, NULL, stop_h, NULL, NULL);
    }
}

void cf_spot_replay(const cf_spot_path *p, size_t seg, double offset_h, const cf_spot_plan *pl, cf_spot_run *out)
{
    cf_spot_replay_until(p, seg, offset_h, pl, INFINITY, out);
}

void cf_spot_replay_lengths(const cf_spot_path *p, size_t seg, double offset_h, const cf_spot_plan *pl,
                            const double *work, const double *stop_h, size_t n, cf_spot_run *runs)
{
    int shared = n >= 2 && n <= CF_SPOT_MAX_LENGTHS && pl->n_types == 1 && p->n_types == 1 && !pl->rate;
    for (size_t k = 1; k < n && shared; k++)
        shared = work[k] <= work[k - 1];
    cf_spot_plan lp = *pl;
    if (!shared) {
        for (size_t k = 0; k < n; k++) {
            lp.work_h = work[k];
            cf_spot_replay_until(p, seg, offset_h, &lp, stop_h[k], &runs[k]);
        }
        return;
    }
    const double max_h = pl->max_h > 0 ? pl->max_h : CF_SPOT_MAX_HOURS;
    const int record = 4 * p->total_h < max_h; /* as cf_spot_replay_until */
    replay_fork forks[CF_SPOT_MAX_LENGTHS];
    lengths_ctx ln = {.work = work + 1, .n = n - 1, .stop_h = stop_h[0], .fork = forks};
    for (size_t k = 1; k < n; k++)
        ln.stop_h = lesser(ln.stop_h, stop_h[k]);
    lp.work_h = work[0];
    pass_steps steps = {0};
    if (record)
        replay(p, seg, offset_h, &lp, &runs[0], &steps, 1, NULL, 0, NULL, stop_h[0], &ln, NULL);
    else
        replay(p, seg, offset_h, &lp, &runs[0], NULL, 0, NULL, 0, NULL, stop_h[0], &ln, NULL);
    for (size_t k = 1; k < n; k++) {
        lp.work_h = work[k];
        if (record) {
            steps.n = 0;
            steps.on = steps.lost = steps.repeated = 0;
            replay(p, seg, offset_h, &lp, &runs[k], &steps, 1, NULL, 0, NULL, stop_h[k], NULL, &forks[k - 1]);
        } else {
            replay(p, seg, offset_h, &lp, &runs[k], NULL, 0, NULL, 0, NULL, stop_h[k], NULL, &forks[k - 1]);
        }
    }
    free(steps.x);
}

/* The shared pass from the state s0 at segment 0 (sh->ready when it comes
 * back to s0). At most SHARED_MAX_SEGMENTS segments and SHARED_MAX_STEPS
 * steps (a longer path's starts count their own repeated passes). */
#define SHARED_MAX_SEGMENTS ((size_t)1 << 18)
#define SHARED_MAX_STEPS ((size_t)1 << 19)
static void shared_build(shared_pass *sh, const cf_spot_path *p, const cf_spot_plan *pl, const replay_state *s0,
                         size_t *count)
{
    sh->tried = 1;
    if (p->n > SHARED_MAX_SEGMENTS)
        return;
    sh->n = p->n;
    sh->s0 = *s0;
    sh->st = malloc(p->n * sizeof *sh->st);
    sh->first = malloc((p->n + 1) * sizeof *sh->first);
    sh->tot = malloc((p->n + 1) * sizeof *sh->tot);
    pass_steps steps = {.on = 1};
    if (sh->st && sh->first && sh->tot) {
        cf_spot_run run;
        replay(p, 0, 0, pl, &run, &steps, 1, sh, 1, count, INFINITY, NULL, NULL);
    }
    sh->x = steps.x;
    sh->m = steps.n;
    if (!sh->ready || sh->m == 0 || sh->m > SHARED_MAX_STEPS) {
        shared_free(sh);
        sh->tried = 1;
        return;
    }
    for (size_t j = 0; j < p->n; j++)
        sh->longest = greater(sh->longest, p->d_h[j]);
    for (size_t j = 0; j < sh->m; j++) {
        sh->max_step = greater(sh->max_step, sh->x[j]);
        sh->sum += sh->x[j];
    }
}

void cf_spot_replay_many(const cf_spot_path *p, const size_t *seg, const double *off, size_t n,
                         const cf_spot_plan *pl, cf_spot_run *runs, size_t *segments)
{
    const double max_h = pl->max_h > 0 ? pl->max_h : CF_SPOT_MAX_HOURS;
    size_t count = 0;
    if (4 * p->total_h < max_h) {
        /* once a start repeats a pass, the pass from that state is made
         * once and shared with the starts after it */
        shared_pass sh = {0};
        pass_steps steps = {0};
        for (size_t k = 0; k < n; k++) {
            steps.n = 0;
            steps.on = steps.lost = steps.repeated = 0;
            replay(p, seg[k], off[k], pl, &runs[k], &steps, 1, &sh, 0, &count, INFINITY, NULL, NULL);
            if (steps.repeated && !sh.tried)
                shared_build(&sh, p, pl, &steps.fixed, &count);
        }
        free(steps.x);
        shared_free(&sh);
    } else {
        for (size_t k = 0; k < n; k++)
            replay(p, seg[k], off[k], pl, &runs[k], NULL, 0, NULL, 0, &count, INFINITY, NULL, NULL);
    }
    if (segments)
        *segments = count;
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
