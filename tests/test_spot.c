/* The spot preemption model (advisor/spot_*.c, docs/spot.md): Young/Daly
 * against the closed form and the exact model's optimum, checkpoint
 * costs, the estimators on hand-made traces, the replay and the mixed plan
 * on paths with known answers, the generator's stationary statistics, the
 * shipped table against a refit of the shipped traces, and the deadline
 * claim against the replays of the 4- and 16-node traces. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <gsl/gsl_rng.h>

#include "cloudfit/advisor/spot_calibrate.h"
#include "cloudfit/advisor/spot_model.h"
#include "cloudfit/advisor/spot_plan.h"
#include "cloudfit/advisor/spot_table.h"
#include "cloudfit/common/fileio.h"
#include "cloudfit/profiler/spot_traces.h"
#include "../advisor/spot/spot_calibrate_internal.h"
#include "../advisor/spot/spot_model_internal.h"
#include "../advisor/spot/spot_plan_internal.h"
#include "../advisor/spot/spot_replay_internal.h"
#include "../advisor/spot/spot_table_internal.h"

#define TRACES CF_SOURCE_DIR "/examples/spot-traces"

/* Daly's expected wall time of W hours of work with checkpoint cost C,
 * restart R and exponential failures of mean M (Daly 2006, eq. 13). */
static double daly_wall(double tau, double c, double r, double m, double w)
{
    return m * exp(r / m) * (exp((tau + c) / m) - 1) * w / tau;
}

static void test_young_daly_closed_form(void **state)
{
    (void)state;
    assert_float_equal(cf_young_interval_h(0.1, 5), sqrt(2 * 0.1 * 5), 1e-12);
    for (double c = 1e-4; c < 1; c *= 3.7) {
        for (double m = 0.05; m < 500; m *= 2.9) {
            double d = cf_daly_interval_h(c, m);
            if (c >= 2 * m) {
                assert_float_equal(d, m, 1e-12);
                continue;
            }
            double x = c / (2 * m);
            assert_float_equal(d, sqrt(2 * c * m) * (1 + sqrt(x) / 3 + x / 9) - c, 1e-12 * (1 + d));
            /* Daly's τ is the optimum of his exact model to within 1 % of wall time for C ≪ M. */
            if (c / m < 0.05) {
                double best = INFINITY;
                for (double tau = d / 20; tau < d * 20; tau *= 1.01)
                    best = fmin(best, daly_wall(tau, c, 0.1, m, 10));
                assert_true(daly_wall(d, c, 0.1, m, 10) <= best * 1.01);
            }
        }
    }
    assert_true(isinf(cf_daly_interval_h(0.1, INFINITY)));
    assert_true(isinf(cf_young_interval_h(0.1, INFINITY)));
}

static void test_checkpoint_costs(void **state)
{
    (void)state;
    /* GPT-2 XL with Adam: 12 B per parameter, 125 MB/s, 10 min start-up
     * (the lab's plan): C = 2.49 min, R = 12.49 min. */
    double bytes = cf_checkpoint_bytes(1.558e9, CF_OPT_ADAM), c, r;
    assert_float_equal(bytes, 1.558e9 * 12, 1);
    assert_float_equal(cf_checkpoint_bytes(1e6, CF_OPT_MOMENTUM), 8e6, 1e-6);
    assert_float_equal(cf_checkpoint_bytes(1e6, CF_OPT_SGD), 4e6, 1e-6);
    cf_checkpoint_costs(bytes, 0, 0, 10, &c, &r);
    assert_float_equal(c * 60, 2.4928, 1e-3);
    assert_float_equal(r * 60, 12.4928, 1e-3);
    cf_checkpoint_costs(bytes, 125, 3, 10, &c, &r); /* checkpoint_minutes overrides the write */
    assert_float_equal(c * 60, 3, 1e-12);
}

static cf_spot_trace make_trace(const int *counts, size_t n, int requested, double gap_h)
{
    cf_spot_trace t;
    memset(&t, 0, sizeof t);
    t.n_types = 1;
    t.vm[0].requested = requested;
    t.n_ticks = n;
    t.dt_h = malloc(n * sizeof *t.dt_h);
    t.counts = malloc(n * sizeof *t.counts);
    for (size_t i = 0; i < n; i++) {
        t.dt_h[i] = gap_h;
        t.counts[i] = counts[i];
    }
    return t;
}

static void test_estimators(void **state)
{
    (void)state;
    /* Rotated to the first UP after a DOWN (tick 2): cycles UP 3 / DOWN 1,
     * UP 2 / DOWN 3 (wrapping), then an unpaired... none: 2 cycles. */
    static const int n1[] = {0, 0, 1, 1, 1, 0, 1, 1, 0};
    cf_spot_trace t = make_trace(n1, 9, 1, 0.5);
    cf_spot_runs r = {0};
    assert_int_equal(cf_spot_runs_add(&r, &t), CF_OK);
    assert_int_equal(r.n_cycles, 2);
    assert_float_equal(r.up_h[0], 1.5, 1e-12);
    assert_float_equal(r.down_h[0], 0.5, 1e-12);
    assert_float_equal(r.up_h[1], 1.0, 1e-12);
    assert_float_equal(r.down_h[1], 1.5, 1e-12);
    cf_spot_process p;
    cf_spot_process_fit(&r, NULL, &p);
    /* median of {1.5, 1.0} = 1.25, mean 1.25: σ at the floor */
    assert_float_equal(p.up_median_h, 1.25, 1e-12);
    assert_float_equal(p.up_sigma, CF_SPOT_SIGMA_FLOOR, 1e-12);
    cf_spot_runs_free(&r);
    cf_spot_trace_free(&t);

    /* Four nodes: inside UP runs, drops 4→2 and 3→1, rises 2→4 (to full) and 1→3. */
    static const int n4[] = {0, 4, 4, 2, 4, 0, 3, 1, 3, 0};
    t = make_trace(n4, 10, 4, 1.0);
    memset(&r, 0, sizeof r);
    assert_int_equal(cf_spot_runs_add(&r, &t), CF_OK);
    assert_int_equal(r.n_cycles, 2);
    assert_float_equal(r.drops, 2, 0);
    assert_float_equal(r.rises, 2, 0);
    assert_float_equal(r.rises_to_full, 1, 0);
    assert_float_equal(r.up_runs, 2, 0);
    assert_float_equal(r.up_runs_full, 1, 0);
    /* exposure: ticks at ≥ 2 VMs: 4,4,2,4,3,3 = 6 h; below 4: 2,3,1,3 = 4 h */
    assert_float_equal(r.drop_exposure_h, 6, 1e-12);
    assert_float_equal(r.rise_exposure_h, 4, 1e-12);
    cf_spot_process_fit(&r, NULL, &p);
    assert_float_equal(p.kd_per_h, 2.0 / 6, 1e-12);
    assert_float_equal(p.kr_per_h, 2.0 / 4, 1e-12);
    assert_float_equal(p.qf, 0.5, 1e-12);
    assert_float_equal(p.qr, 0.5, 1e-12);
    cf_spot_runs_free(&r);
    cf_spot_trace_free(&t);

    static const int never[] = {1, 1, 1};
    t = make_trace(never, 3, 1, 1.0);
    memset(&r, 0, sizeof r);
    assert_int_equal(cf_spot_runs_add(&r, &t), CF_ERR_INVALID);
    cf_spot_runs_free(&r);
    cf_spot_trace_free(&t);
}

static cf_spot_path path_of(const double *d, const int *c, size_t n)
{
    cf_spot_path p;
    memset(&p, 0, sizeof p);
    p.n_types = 1;
    for (size_t i = 0; i < n; i++)
        assert_int_equal(cf_spot_path_push(&p, d[i], &c[i]), CF_OK);
    return p;
}

static void test_replay_known_answers(void **state)
{
    (void)state;
    /* Always all 4 held: restart R, then W of work with a checkpoint every τ. */
    static const double d_full[] = {1000};
    static const int c_full[] = {4};
    cf_spot_path p = path_of(d_full, c_full, 1);
    cf_spot_plan plan = {.n_types = 1, .nodes = {4, 0}, .work_h = 10, .checkpoint_h = 0.1, .restart_h = 0.5,
                         .interval_h = 3};
    cf_spot_run run;
    cf_spot_replay(&p, 0, 0, &plan, &run);
    assert_float_equal(run.wall_h, 0.5 + 10 + 3 * 0.1, 1e-9); /* checkpoints at 3, 6, 9 h of work */
    assert_int_equal(run.checkpoints, 3);
    assert_int_equal(run.preemptions, 0);
    assert_float_equal(run.node_h[0], 4 * run.wall_h, 1e-9);
    cf_spot_path_free(&p);

    /* Full for 5 h, none for 2 h, full again: the work since the checkpoint
     * at 3 h (after 0.5 h restart + 3 h + 0.1 h checkpoint = 3.6 h) is lost:
     * 1.4 h of work; then a restart at 7 h. */
    static const double d_cut[] = {5, 2, 1000};
    static const int c_cut[] = {4, 0, 4};
    p = path_of(d_cut, c_cut, 3);
    cf_spot_replay(&p, 0, 0, &plan, &run);
    assert_int_equal(run.preemptions, 1);
    assert_float_equal(run.lost_h, 1.4, 1e-9);
    assert_float_equal(run.zero_h, 2, 1e-9);
    /* after 7 h: restart 0.5, remaining 7 h of work with checkpoints at 6 and 9 h of total work */
    assert_float_equal(run.wall_h, 7 + 0.5 + 7 + 2 * 0.1, 1e-9);
    assert_float_equal(run.node_h[0], 4 * (run.wall_h - 2), 1e-9);

    /* Gang: the same path at 2 of 4 held never runs; elastic runs at half speed. */
    static const double d_half[] = {100, 1000};
    static const int c_half[] = {2, 4};
    cf_spot_path_free(&p);
    p = path_of(d_half, c_half, 2);
    plan.interval_h = 100;
    cf_spot_replay(&p, 0, 0, &plan, &run);
    assert_float_equal(run.wall_h, 0.5 + 20, 1e-9);
    assert_float_equal(run.below_h, run.wall_h, 1e-9);
    plan.semantics = CF_SPOT_GANG;
    cf_spot_replay(&p, 0, 0, &plan, &run);
    assert_float_equal(run.wall_h, 100 + 0.5 + 10, 1e-9);
    assert_float_equal(run.node_h[0], 2 * 100 + 4 * 10.5, 1e-9); /* held VMs are paid for while waiting */
    cf_spot_path_free(&p);
}

/* Nothing is replayed or accounted past the hour cap: an idle (or
 * stalled) phase took a whole tick at once, and a tick may last 10^9 s, so
 * the time below N and the VM-hours ran to 277,778 h for a replay "not
 * finished within 20,000 h". A short path stops at the pass cap first, and
 * says so. A whole-path grid has at most CF_SPOT_MAX_STARTS starts. */
static void test_replay_caps(void **state)
{
    (void)state;
    const double tick_h = 1e9 / 3600.0;
    static const int none = 0, one = 1;
    cf_spot_plan plan = {.n_types = 1, .nodes = {1, 0}, .work_h = 10, .checkpoint_h = 0.1, .restart_h = 0.5,
                         .interval_h = 3};
    cf_spot_run run;
    /* idle: no VM for a whole 10^9 s tick */
    double d_idle[] = {tick_h, tick_h};
    int c_idle[] = {none, one};
    cf_spot_path p = path_of(d_idle, c_idle, 2);
    cf_spot_replay(&p, 0, 0, &plan, &run);
    assert_true(isinf(run.wall_h));
    assert_int_equal(run.stop, CF_SPOT_STOP_HOURS);
    assert_float_equal(run.below_h, CF_SPOT_MAX_HOURS, 1e-6);
    assert_float_equal(run.zero_h, CF_SPOT_MAX_HOURS, 1e-6);
    assert_float_equal(run.node_h[0], 0, 1e-9);
    /* stalled: the VM held, but no progress at that size */
    static const double no_rate[] = {0, 0};
    plan.rate = no_rate;
    cf_spot_replay(&p, 1, 0, &plan, &run);
    assert_true(isinf(run.wall_h));
    assert_int_equal(run.stop, CF_SPOT_STOP_HOURS);
    assert_true(run.stalled_h <= CF_SPOT_MAX_HOURS + 1e-6);
    assert_float_equal(run.node_h[0], CF_SPOT_MAX_HOURS, 1e-6);
    assert_float_equal(run.samples_h, 0, 1e-9);
    plan.rate = NULL;
    cf_spot_path_free(&p);
    /* a 10-minute path whose 5-minute runs never outlast the restart: the pass cap, long before the hour cap */
    double d_short[] = {5.0 / 60, 5.0 / 60};
    int c_short[] = {one, none};
    p = path_of(d_short, c_short, 2);
    cf_spot_replay(&p, 0, 0, &plan, &run);
    assert_true(isinf(run.wall_h));
    assert_int_equal(run.stop, CF_SPOT_STOP_PASSES);
    cf_spot_replay_mixed(&p, 0, 0, &plan, 20, CF_MIXED_GREEDY, &run);
    assert_true(isfinite(run.wall_h)); /* on demand finishes it by the deadline */
    assert_int_equal(run.stop, CF_SPOT_STOP_NONE);
    cf_spot_replay_mixed(&p, 0, 0, &plan, 1e9, CF_MIXED_GREEDY, &run); /* a deadline past the cap: spot to the end */
    assert_true(isinf(run.wall_h));
    assert_true(run.node_h[0] + run.node_h[1] <= CF_SPOT_MAX_HOURS + 1e-6);
    cf_spot_run runs[2] = {run, run};
    runs[0].wall_h = INFINITY;
    runs[0].stop = CF_SPOT_STOP_PASSES;
    runs[1].wall_h = 5;
    runs[1].stop = CF_SPOT_STOP_NONE;
    const double usd[2] = {1, 1};
    cf_spot_spread spread;
    assert_int_equal(cf_spot_spread_of(runs, 2, usd, 0.95, &spread), CF_OK);
    assert_int_equal(spread.n_unfinished, 1);
    assert_int_equal(spread.n_unfinished_passes, 1);
    cf_spot_path_free(&p);
    /* 200 ticks of 10^9 s (the sweep's trace): total / (total / MAX) rounded to MAX + 1 starts */
    const char *counts = "00000011000111101110010101101100101010000111111010110111010100101011101000111010001011001011"
                         "111100110111001110110100001110110001101111100011110010000010110010001110100010001000001110"
                         "010001000100001110";
    memset(&p, 0, sizeof p);
    p.n_types = 1;
    for (const char *c = counts; *c; c++)
        assert_int_equal(cf_spot_path_push(&p, tick_h, *c == '1' ? &one : &none), CF_OK);
    double step = cf_spot_start_step(&p, CF_SPOT_REPLAY_STEP_H);
    size_t cap = (size_t)(p.total_h / step) + 2;
    size_t *seg = malloc(cap * sizeof *seg);
    double *off = malloc(cap * sizeof *off);
    assert_true(seg && off);
    assert_int_equal(cf_spot_starts_grid(&p, step, seg, off), CF_SPOT_MAX_STARTS);
    free(seg);
    free(off);
    cf_spot_path_free(&p);
}

/* A job that never ends repeats its passes over the circular path until a
 * cap; the passes after one that ended in the state it began in are
 * counted, not replayed (a replay per start over a short trace up to 1,000
 * times made `simulate` quadratic in the trace's length). Counted or
 * replayed, a cap stops the replay at the same point with the same counts
 * (its clock advances by the pass's own steps): against the same path
 * unrolled (no pass repeats there) and against the pass cap's closed form. */
static void assert_runs_agree(const cf_spot_run *a, const cf_spot_run *b)
{
    assert_true(isinf(a->wall_h) && isinf(b->wall_h));
    assert_int_equal(a->stop, b->stop);
    assert_int_equal(a->preemptions, b->preemptions);
    assert_int_equal(a->restarts, b->restarts);
    assert_int_equal(a->checkpoints, b->checkpoints);
    assert_int_equal(a->stalled, b->stalled);
    const double x[] = {a->node_h[0], a->lost_h, a->below_h, a->zero_h, a->samples_h, a->stalled_h};
    const double y[] = {b->node_h[0], b->lost_h, b->below_h, b->zero_h, b->samples_h, b->stalled_h};
    for (size_t i = 0; i < sizeof x / sizeof *x; i++)
        assert_float_equal(x[i], y[i], 1e-9 * (1 + fabs(y[i])));
}

static void test_replay_never_ends(void **state)
{
    (void)state;
    /* 25 × a 0.9-h pattern whose runs of held VMs never outlast a 0.5-h restart: a 22.5-h path */
    static const double d_pat[] = {0.3, 0.2, 0.1, 0.25, 0.05};
    static const int c_pat[] = {4, 2, 0, 3, 1};
    enum { PATTERNS = 25, COPIES = 900 }; /* 900 × 22.5 h is past the 20,000-h cap */
    cf_spot_path p = {.n_types = 1}, unrolled = {.n_types = 1};
    for (int k = 0; k < PATTERNS; k++)
        for (int j = 0; j < 5; j++)
            assert_int_equal(cf_spot_path_push(&p, d_pat[j], &c_pat[j]), CF_OK);
    for (int copy = 0; copy < COPIES; copy++)
        for (size_t j = 0; j < p.n; j++)
            assert_int_equal(cf_spot_path_push(&unrolled, p.d_h[j], &p.c[j]), CF_OK);
    static const double stall_below_4[] = {0, 0, 0, 0, 1};
    cf_spot_plan plan = {.n_types = 1, .nodes = {4, 0}, .work_h = 10, .checkpoint_h = 0.1, .restart_h = 0.5,
                         .interval_h = 0.2};
    for (int variant = 0; variant < 3; variant++) {
        plan.semantics = variant == 1 ? CF_SPOT_GANG : CF_SPOT_ELASTIC;
        plan.rate = variant == 2 ? stall_below_4 : NULL; /* with a shorter restart: work lost, time stalled */
        plan.restart_h = variant == 2 ? 0.1 : 0.5;
        cf_spot_run counted, replayed;
        cf_spot_replay(&p, 7, 0.125, &plan, &counted);
        cf_spot_replay(&unrolled, 7, 0.125, &plan, &replayed);
        assert_int_equal(counted.stop, CF_SPOT_STOP_HOURS);
        assert_runs_agree(&counted, &replayed);
        assert_true(variant < 2 || (counted.lost_h > 0 && counted.stalled_h > 0 && counted.samples_h > 0));
    }
    cf_spot_path_free(&p);
    cf_spot_path_free(&unrolled);

    /* one 0.9-h pattern: the pass cap stops it after 1,001 passes, each a restart and a preemption */
    p = path_of(d_pat, c_pat, 5);
    plan.semantics = CF_SPOT_ELASTIC;
    plan.rate = NULL;
    plan.restart_h = 0.5;
    cf_spot_run run;
    cf_spot_replay(&p, 0, 0, &plan, &run);
    assert_true(isinf(run.wall_h));
    assert_int_equal(run.stop, CF_SPOT_STOP_PASSES);
    /* a pass: lost at 2 (a preemption and a restart), at 0 (a preemption), a restart at 3, lost at 1 (a
     * preemption and a restart); the restart in progress at the end goes on at 4 (the first pass starts one) */
    assert_int_equal(run.preemptions, 3 * (CF_SPOT_MAX_PASSES + 1));
    assert_int_equal(run.restarts, 3 * (CF_SPOT_MAX_PASSES + 1) + 1);
    assert_float_equal(run.zero_h, 0.1 * (CF_SPOT_MAX_PASSES + 1), 1e-9);
    assert_float_equal(run.node_h[0], (4 * 0.3 + 2 * 0.2 + 3 * 0.25 + 0.05) * (CF_SPOT_MAX_PASSES + 1), 1e-9);
    assert_float_equal(run.samples_h, 0, 1e-12);
    cf_spot_path_free(&p);
}

/* cf_spot_replay_many: once a start's pass ends in the state it began in,
 * that pass is replayed once and shared: a start that enters a segment in
 * its state takes the time and totals from it up to shortly before its
 * cap (each start rediscovered the repeat on its own, so on a long trace
 * where the job never finishes each replayed several passes: 77.5 s for
 * 32k rows of 5-min ticks). The same stops, counts and times as one
 * cf_spot_replay per start, the hours to within rounding, and a few
 * segments per start instead of passes over the path. */
static cf_spot_path bursts_path(int n_types, size_t n, unsigned seed)
{
    /* bursts of 1-4 VMs of 5 or 15 min, then none for 5-10 min (5-min ticks: hours not exact in binary) */
    cf_spot_path p = {.n_types = n_types};
    unsigned x = seed;
    while (p.n < n) {
        x = x * 1103515245u + 12345u;
        int c[2] = {1 + (int)(x >> 16) % 4, 1 + (int)(x >> 20) % 2}, none[2] = {0, 0};
        assert_int_equal(cf_spot_path_push(&p, ((x >> 24) & 1 ? 3 : 1) / 12.0, c), CF_OK);
        assert_int_equal(cf_spot_path_push(&p, ((x >> 26) & 1 ? 2 : 1) / 12.0, none), CF_OK);
    }
    return p;
}

static void test_replay_many_shares_the_pass(void **state)
{
    (void)state;
    static const double stall_below_2[] = {0, 0, 1, 1, 1};
    for (int variant = 0; variant < 5; variant++) {
        /* 0 elastic, 1 gang, 2 stalled below 2 VMs, 3 two types, 4 a short path (the pass cap) */
        cf_spot_path p = bursts_path(variant == 3 ? 2 : 1, variant == 4 ? 40 : 3000, 7u + (unsigned)variant);
        /* runs of at most 15 min: a 10.2-min restart and a 6-min interval never reach a checkpoint */
        cf_spot_plan plan = {.n_types = variant == 3 ? 2 : 1, .nodes = {4, variant == 3 ? 2 : 0}, .work_h = 10,
                             .checkpoint_h = 0.1, .restart_h = 0.17, .interval_h = 0.1,
                             .semantics = variant == 1 ? CF_SPOT_GANG : CF_SPOT_ELASTIC,
                             .rate = variant == 2 ? stall_below_2 : NULL};
        size_t cap = (size_t)(p.total_h / CF_SPOT_REPLAY_STEP_H) + 2, segments = 0;
        size_t *seg = malloc(cap * sizeof *seg);
        double *off = malloc(cap * sizeof *off);
        assert_non_null(seg);
        assert_non_null(off);
        size_t n = cf_spot_starts_grid(&p, CF_SPOT_REPLAY_STEP_H, seg, off);
        assert_true(n > 10);
        cf_spot_run *many = calloc(n, sizeof *many);
        assert_non_null(many);
        cf_spot_replay_many(&p, seg, off, n, &plan, many, &segments);
        for (size_t i = 0; i < n; i++) {
            cf_spot_run one;
            cf_spot_replay(&p, seg[i], off[i], &plan, &one);
            assert_int_equal(many[i].stop, variant == 4 ? CF_SPOT_STOP_PASSES : CF_SPOT_STOP_HOURS);
            assert_runs_agree(&many[i], &one);
            assert_int_equal(many[i].stalled, one.stalled);
            assert_float_equal(many[i].node_h[1], one.node_h[1], 1e-9 * (1 + one.node_h[1]));
            assert_true(one.lost_h > 0 && one.preemptions > 0);
            assert_true(variant != 2 || (one.stalled && one.stalled_h > 0));
        }
        /* a replay per start of at least two passes was n · 2 · p.n segments */
        assert_true(segments < n * p.n / (variant == 4 ? 1 : 10));
        assert_true(segments > n);
        free(many);
        free(seg);
        free(off);
        cf_spot_path_free(&p);
    }
}

/* Two runs alike to the last bit: every field (a shortcut that moved the
 * time by one rounding would change a calibration's counts). */
static void assert_runs_identical(const cf_spot_run *a, const cf_spot_run *b)
{
    const double da[] = {a->wall_h, a->node_h[0], a->node_h[1], a->lost_h, a->below_h, a->zero_h, a->samples_h,
                         a->stalled_h};
    const double db[] = {b->wall_h, b->node_h[0], b->node_h[1], b->lost_h, b->below_h, b->zero_h, b->samples_h,
                         b->stalled_h};
    assert_memory_equal(da, db, sizeof da);
    assert_int_equal(a->preemptions, b->preemptions);
    assert_int_equal(a->checkpoints, b->checkpoints);
    assert_int_equal(a->restarts, b->restarts);
    assert_int_equal(a->stalled, b->stalled);
    assert_int_equal(a->stop, b->stop);
}

/* The calibration's shortcuts (advisor/spot/spot_calibrate.c), on paths
 * drawn from a model as its bootstrap draws them, from a start every hour:
 * cf_spot_replay_until is cf_spot_replay for a replay that finishes by its
 * stop, and gives up past it otherwise; cf_spot_replay_lengths gives for
 * each length what cf_spot_replay_until gives for it alone, to the bit,
 * with and without stops, elastic and gang, on one VM or several. */
static void test_replay_until_and_lengths(void **state)
{
    (void)state;
    cf_spot_process proc = {.up_median_h = 6, .up_sigma = 1.2, .down_median_h = 2, .down_sigma = 1.0,
                            .kd_per_h = 0.2, .kr_per_h = 1.5, .qf = 0.5, .qr = 0.7};
    for (int variant = 0; variant < 4; variant++) {
        int nodes = variant == 0 ? 1 : variant == 1 ? 4 : 16;
        cf_spot_path p;
        assert_int_equal(cf_spot_path_generate(&proc, nodes, 600, 11u + (unsigned)variant, &p), CF_OK);
        cf_spot_plan plan = {.n_types = 1, .nodes = {nodes, 0}, .checkpoint_h = 0.1, .restart_h = 0.2,
                             .interval_h = 1.5, .semantics = variant == 3 ? CF_SPOT_GANG : CF_SPOT_ELASTIC};
        const double work[4] = {40, 10, 2.5, 0.625};
        const double no_stop[4] = {INFINITY, INFINITY, INFINITY, INFINITY}, stops[4] = {90, 30, 12, 4};
        size_t cap = (size_t)p.total_h + 2, shorter = 0, past = 0;
        size_t *seg = malloc(cap * sizeof *seg);
        double *off = malloc(cap * sizeof *off);
        assert_non_null(seg);
        assert_non_null(off);
        size_t n = cf_spot_starts_grid(&p, 1.0, seg, off);
        assert_true(n > 500);
        for (size_t i = 0; i < n; i++) {
            for (int stopped = 0; stopped < 2; stopped++) {
                const double *stop_h = stopped ? stops : no_stop;
                cf_spot_run runs[4];
                cf_spot_replay_lengths(&p, seg[i], off[i], &plan, work, stop_h, 4, runs);
                for (int k = 0; k < 4; k++) {
                    cf_spot_plan one = plan;
                    one.work_h = work[k];
                    cf_spot_run alone, full;
                    cf_spot_replay_until(&p, seg[i], off[i], &one, stop_h[k], &alone);
                    assert_runs_identical(&runs[k], &alone);
                    cf_spot_replay(&p, seg[i], off[i], &one, &full);
                    if (full.wall_h <= stop_h[k]) {
                        assert_runs_identical(&alone, &full);
                    } else {
                        assert_true(alone.wall_h > stop_h[k]);
                        past += isinf(alone.wall_h) && !isinf(full.wall_h);
                    }
                    shorter += k > 0 && full.wall_h < runs[0].wall_h;
                }
            }
        }
        assert_true(shorter > n && past > 0); /* both shortcuts were taken */
        free(seg);
        free(off);
        cf_spot_path_free(&p);
    }
}

static void test_mixed_plan(void **state)
{
    (void)state;
    /* No spot capacity at all: greedy waits until the safety net, then
     * runs on demand and ends exactly at the deadline. */
    static const double d[] = {1e6};
    static const int c[] = {0};
    cf_spot_path p = path_of(d, c, 1);
    cf_spot_plan plan = {.n_types = 1, .nodes = {4, 0}, .work_h = 10, .checkpoint_h = 0.1, .restart_h = 0.5,
                         .interval_h = 2};
    cf_spot_run run;
    double deadline = 30;
    cf_spot_replay_mixed(&p, 0, 0, &plan, deadline, CF_MIXED_GREEDY, &run);
    assert_true(run.wall_h <= deadline + 1e-9);
    assert_float_equal(run.node_h[0], 0, 1e-9);
    assert_true(run.node_h[1] > 4 * 10);
    /* Full spot capacity: never leaves spot. */
    static const int full[] = {4};
    cf_spot_path q = path_of(d, full, 1);
    cf_spot_replay_mixed(&q, 0, 0, &plan, deadline, CF_MIXED_GREEDY, &run);
    assert_float_equal(run.node_h[1], 0, 1e-9);
    cf_spot_run alone;
    cf_spot_replay(&q, 0, 0, &plan, &alone);
    assert_float_equal(run.wall_h, alone.wall_h, 1e-9);
    cf_spot_replay_mixed(&p, 0, 0, &plan, deadline, CF_MIXED_UNIFORM, &run);
    assert_true(run.wall_h <= deadline + 1e-9);
    cf_spot_path_free(&p);
    cf_spot_path_free(&q);
}

static void test_quantile(void **state)
{
    (void)state;
    double v[] = {4, 1, 3, 2};
    assert_float_equal(cf_quantile(v, 4, 0.5), 2.5, 1e-12);   /* numpy: 2.5 */
    assert_float_equal(cf_quantile(v, 4, 0.9), 3.7, 1e-12);   /* numpy: 3.7 */
    assert_float_equal(cf_quantile(v, 4, 0.1), 1.3, 1e-12);
    double w[] = {1, INFINITY};
    assert_true(isinf(cf_quantile(w, 2, 0.9)));
}

/* Selection places the order statistics a quantile reads where a sort
 * would: the same quantiles, bit for bit, on data with many ties (runs that
 * never meet a preemption), infinities (runs that never finish) and every
 * size from 1. */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_quantiles_place(void **state)
{
    (void)state;
    const double qs[] = {0.0, 0.10, 0.50, 0.90, 0.95, 1.0, 0.333};
    unsigned long r = 12345;
    for (size_t n = 1; n <= 300; n += (n < 20 ? 1 : 37)) {
        for (int kind = 0; kind < 3; kind++) {
            double v[300], sorted[300];
            for (size_t i = 0; i < n; i++) {
                r = r * 6364136223846793005UL + 1442695040888963407UL;
                double u = (double)(r >> 11) / 9007199254740992.0;
                v[i] = kind == 0 ? u : kind == 1 ? floor(u * 4) : (u < 0.2 ? INFINITY : u * 10);
                sorted[i] = v[i];
            }
            qsort(sorted, n, sizeof *sorted, cmp_double);
            cf_quantiles_place(v, n, qs, sizeof qs / sizeof *qs);
            for (size_t k = 0; k < sizeof qs / sizeof *qs; k++) {
                double want = cf_quantile_sorted(sorted, n, qs[k]), got = cf_quantile_sorted(v, n, qs[k]);
                assert_true(want == got || (isinf(want) && isinf(got)));
            }
        }
    }
}

/* cf_spot_starts_random places each start where a binary search in the
 * path's prefix sums does (the rule it replaced), to the bit: the same
 * draws, the same segment, the same offset. */
static void test_starts_random_placement(void **state)
{
    (void)state;
    cf_spot_lookup l;
    cf_spot_model_lookup("aws", "V100", 1, "us-west-2", 4, &l);
    cf_spot_path path;
    assert_int_equal(cf_spot_path_generate(&l.row->process, 4, 3000, 77, &path), CF_OK);
    enum { N = 500 };
    size_t seg[N];
    double off[N];
    const double frac = 0.75;
    assert_int_equal(cf_spot_starts_random(&path, N, frac, 99, seg, off), CF_OK);
    double *cum = malloc((path.n + 1) * sizeof *cum);
    cum[0] = 0;
    for (size_t i = 0; i < path.n; i++)
        cum[i + 1] = cum[i] + path.d_h[i];
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 99);
    for (size_t k = 0; k < N; k++) {
        double t = gsl_rng_uniform(rng) * frac * cum[path.n];
        size_t lo = 0, hi = path.n;
        while (hi - lo > 1) {
            size_t mid = (lo + hi) / 2;
            if (cum[mid] <= t)
                lo = mid;
            else
                hi = mid;
        }
        assert_int_equal(seg[k], lo);
        assert_true(off[k] == t - cum[lo]);
    }
    gsl_rng_free(rng);
    free(cum);
    cf_spot_path_free(&path);
}

static void test_generator_statistics(void **state)
{
    (void)state;
    cf_spot_process p = {.up_median_h = 0.8, .up_sigma = 1.5, .down_median_h = 0.5, .down_sigma = 1.2,
                         .kd_per_h = 0.3, .kr_per_h = 2.5, .qf = 0.5, .qr = 0.7};
    cf_spot_path path;
    assert_int_equal(cf_spot_path_generate(&p, 1, 400000, 7, &path), CF_OK);
    cf_spot_path_stats st;
    cf_spot_path_stats_of(&path, 1, &st);
    double mean_up = 0.8 * exp(1.5 * 1.5 / 2), mean_down = 0.5 * exp(1.2 * 1.2 / 2);
    assert_float_equal(st.availability, mean_up / (mean_up + mean_down), 0.02);
    assert_float_equal(st.mtbf_h, mean_up, 0.1 * mean_up);
    cf_spot_path_free(&path);
    /* Deterministic for a seed. */
    cf_spot_path a, b;
    assert_int_equal(cf_spot_path_generate(&p, 16, 5000, 3, &a), CF_OK);
    assert_int_equal(cf_spot_path_generate(&p, 16, 5000, 3, &b), CF_OK);
    assert_int_equal(a.n, b.n);
    assert_memory_equal(a.c, b.c, a.n * sizeof *a.c);
    /* Several nodes: availability of all 16 is below that of at least one,
     * and the closed-form screen agrees with the path on the mean share. */
    cf_spot_path_stats s16;
    cf_spot_path_free(&b);
    cf_spot_path_free(&a);
    assert_int_equal(cf_spot_path_generate(&p, 16, 200000, 5, &a), CF_OK);
    cf_spot_path_stats_of(&a, 16, &s16);
    cf_spot_screen sc;
    cf_spot_screen_of(&p, 16, &sc);
    assert_true(s16.availability < sc.p_up);
    assert_float_equal(s16.mean_share, sc.p_up * sc.share_given_up, 0.05);
    cf_spot_path_free(&a);
}

static void test_shipped_table_matches_traces(void **state)
{
    (void)state;
    cf_spot_trace_set set;
    assert_int_equal(cf_spot_trace_set_load(TRACES, &set), CF_OK);
    assert_int_equal(set.n, 21);
    cf_spot_table_row *rows = NULL;
    size_t n = 0;
    assert_int_equal(cf_spot_table_fit(set.traces, set.n, &rows, &n), CF_OK);
    assert_int_equal(n, cf_spot_table_count);
    for (size_t i = 0; i < n; i++) {
        const cf_spot_table_row *t = &cf_spot_table[i];
        assert_string_equal(rows[i].cloud, t->cloud);
        assert_string_equal(rows[i].gpu, t->gpu);
        assert_string_equal(rows[i].region, t->region);
        assert_int_equal(rows[i].size_class, t->size_class);
        assert_int_equal(rows[i].nodes, t->nodes);
        const double *got = &rows[i].process.up_median_h, *want = &t->process.up_median_h;
        for (size_t k = 0; k < sizeof t->process / sizeof(double); k++)
            assert_float_equal(got[k], want[k], 1e-4);
        assert_int_equal(rows[i].cycles, t->cycles);
        assert_int_equal(rows[i].n_traces, t->n_traces);
        assert_string_equal(rows[i].traces, t->traces);
    }
    free(rows);
    /* Look-ups: single VMs from single-VM traces, clusters from the
     * cluster traces of the nearest size, an unknown GPU. */
    cf_spot_lookup l;
    cf_spot_model_lookup("aws", "V100", 1, "us-west-2", 1, &l);
    assert_int_equal(l.kind, CF_SPOT_ROW_REGION);
    assert_int_equal(l.row->nodes, 1);
    assert_null(strstr(l.row->traces, "16n")); /* not the 16-node clusters */
    cf_spot_model_lookup("aws", "V100", 1, "us-east-2", 16, &l);
    assert_int_equal(l.kind, CF_SPOT_ROW_REGION);
    assert_int_equal(l.row->nodes, 16);
    cf_spot_model_lookup("aws", "V100", 1, "us-east-2", 3, &l);
    assert_int_equal(l.row->nodes, 4);
    cf_spot_model_lookup("aws", "V100", 1, "us-east-2", 8, &l); /* as far from 4 as from 16: the larger */
    assert_int_equal(l.row->nodes, 16);
    cf_spot_model_lookup("aws", "V100", 1, "us-east-1", 16, &l); /* the region's only cluster size */
    assert_int_equal(l.kind, CF_SPOT_ROW_REGION);
    assert_int_equal(l.row->nodes, 4);
    cf_spot_model_lookup("aws", "V100", 1, "eu-west-1", 12, &l);
    assert_int_equal(l.kind, CF_SPOT_ROW_POOLED);
    assert_int_equal(l.row->nodes, 16);
    cf_spot_model_lookup("aws", "V100", 8, "eu-west-1", 1, &l);
    assert_int_equal(l.kind, CF_SPOT_ROW_POOLED);
    cf_spot_model_lookup("gcp", "A100", 1, "us-central1", 4, &l);
    assert_int_equal(l.kind, CF_SPOT_ROW_DEFAULT);
    assert_int_equal(l.row->nodes, 4);
    assert_int_equal(l.provenance, CF_PROV_DEFAULT);
    assert_non_null(strstr(l.text, "no traces for gcp A100"));
    cf_spot_model_lookup("gcp", "A100", 8, "us-central1", 1, &l);
    assert_int_equal(l.kind, CF_SPOT_ROW_DEFAULT);
    assert_int_equal(l.row->size_class, 8);
    /* A row that knows less is not more certain: a pooled row's regime
     * spread is at least its region rows'. */
    cf_spot_lookup region, pooled;
    cf_spot_model_lookup("aws", "V100", 1, "us-west-2", 1, &region);
    cf_spot_model_lookup("aws", "V100", 1, "eu-west-1", 1, &pooled);
    assert_true(pooled.row->process.regime_sd_up >= region.row->process.regime_sd_up - 0.05);
    cf_spot_trace_set_free(&set);
}

/* The calibration (advisor/spot/spot_calibrate.c) on the shipped traces with a
 * fixed plan (a GPT-2 XL checkpoint, W = 24 h and the shorter lengths):
 * in-sample, and with the model fitted to one half of the traces (split by
 * date) scored on the other, both ways. The acceptance: the shares
 * below the model's p50 in [0.30, 0.70], below its p90 in [0.75, 0.98],
 * done by the check quantile at least the confidence; in-sample also
 * inside the bands. A small Monte Carlo and bootstrap (the test runs
 * under valgrind); `simulate --calibrate` uses the full sizes. */
static void calibrate_on(const cf_spot_trace_set *scored, const cf_spot_table_row *rows, size_t n_rows,
                         cf_calibrate_result *res)
{
    double c_h, r_h;
    cf_checkpoint_costs(cf_checkpoint_bytes(1.558e9, CF_OPT_ADAM), 0, 0, 10, &c_h, &r_h);
    cf_spot_path *paths = calloc(scored->n, sizeof *paths);
    cf_calibrate_trace *tr = calloc(scored->n, sizeof *tr);
    cf_spot_lookup *l = calloc(scored->n, sizeof *l);
    for (size_t i = 0; i < scored->n; i++) {
        const cf_spot_trace *t = &scored->traces[i];
        assert_int_equal(cf_spot_path_from_trace(t, &paths[i]), CF_OK);
        cf_spot_model_lookup_in(rows, n_rows, t->vm[0].cloud, t->vm[0].gpu, t->vm[0].gpus_per_vm, t->vm[0].region,
                                t->vm[0].requested, &l[i]);
        assert_non_null(l[i].row);
        tr[i] = (cf_calibrate_trace){.name = t->name, .path = &paths[i], .nodes = t->vm[0].requested,
                                     .process = &l[i].row->process, .work_h = 24, .checkpoint_h = c_h,
                                     .restart_h = r_h};
    }
    cf_calibrate_settings settings = {.confidence = 0.9, .replicates = 24, .step_h = 2, .mc_path_hours = 40000,
                                      .mc_starts = 800};
    assert_int_equal(cf_spot_calibrate(tr, scored->n, &settings, res), CF_OK);
    printf("  %zu windows: below p10 %.3f [%.3f, %.3f], p50 %.3f [%.3f, %.3f], p90 %.3f [%.3f, %.3f], "
           "done by q%.2f %.3f [%.3f, %.3f]\n",
           res->windows, res->pooled[0].share, res->pooled[0].band_lo, res->pooled[0].band_hi, res->pooled[1].share,
           res->pooled[1].band_lo, res->pooled[1].band_hi, res->pooled[2].share, res->pooled[2].band_lo,
           res->pooled[2].band_hi, res->quantile[3], res->pooled[3].share, res->pooled[3].band_lo,
           res->pooled[3].band_hi);
    assert_true(res->windows > 0);
    /* the replicates' own shares, and how often one of them misses a band the
     * others draw: more than one share's 5 %, less than four shares' 20 %
     * (the shares move together) */
    assert_non_null(res->replicate_shares);
    for (int b = 0; b < res->replicates; b++)
        for (int q = 0; q < CF_CAL_N; q++) {
            double v = res->replicate_shares[(size_t)b * CF_CAL_N + (size_t)q];
            assert_true(v >= 0 && v <= 1);
        }
    printf("  a correct model misses a band in %.0f %% of %d replicates\n", 100 * res->replicates_outside_any_band,
           res->replicates);
    assert_true(res->replicates_outside_any_band >= 0.04 && res->replicates_outside_any_band <= 0.5);
    assert_true(res->pooled[CF_CAL_P50].share >= 0.30 && res->pooled[CF_CAL_P50].share <= 0.70);
    assert_true(res->pooled[CF_CAL_P90].share >= 0.75 && res->pooled[CF_CAL_P90].share <= 0.98);
    assert_true(res->pooled[CF_CAL_CHECK].share >= 0.9);
    for (size_t i = 0; i < scored->n; i++)
        cf_spot_path_free(&paths[i]);
    free(paths);
    free(tr);
    free(l);
}

static cf_spot_trace_set subset(const cf_spot_trace_set *all, int half)
{
    cf_spot_trace_set s = {.traces = calloc(all->n, sizeof *s.traces)};
    for (size_t i = 0; i < all->n; i++) {
        const char *d = all->traces[i].vm[0].start_date;
        int a = strcmp(d, "2023-02-15") == 0 || strcmp(d, "2023-08-03") == 0;
        if (a == (half == 0))
            s.traces[s.n++] = all->traces[i]; /* borrowed: freed with `all` */
    }
    return s;
}

static void test_calibration_on_traces(void **state)
{
    (void)state;
    cf_spot_trace_set set;
    assert_int_equal(cf_spot_trace_set_load(TRACES, &set), CF_OK);
    cf_calibrate_result res;
    calibrate_on(&set, NULL, 0, &res); /* the shipped table, in-sample */
    for (int q = 0; q < CF_CAL_N; q++)
        assert_true(res.pooled[q].share >= res.pooled[q].band_lo && res.pooled[q].share <= res.pooled[q].band_hi);
    assert_true(res.quantile[CF_CAL_CHECK] > 0.9); /* the margin: q0.95 at 0.9 */
    cf_calibrate_result_free(&res);
    for (int half = 0; half < 2; half++) {
        cf_spot_trace_set fit = subset(&set, half), scored = subset(&set, !half);
        cf_spot_table_row *rows = NULL;
        size_t n_rows = 0;
        assert_int_equal(cf_spot_table_fit(fit.traces, fit.n, &rows, &n_rows), CF_OK);
        calibrate_on(&scored, rows, n_rows, &res);
        cf_calibrate_result_free(&res);
        free(rows);
        free(fit.traces);
        free(scored.traces);
    }
    cf_spot_trace_set_free(&set);
}

/* What a trace's path says (profiler/spot_trace_names.c): the public
 * traces' layout and their CSV copies' names, table-driven. */
static void test_trace_names(void **state)
{
    (void)state;
    static const struct {
        const char *path;
        int ok, nodes, per_vm;
        const char *cloud, *zone, *region, *gpu, *date;
    } cases[] = {
        {"x/availability/16-node/aws-08-27-2023/us-east-2b_v100_1.json", 1, 16, 1, "aws", "us-east-2b", "us-east-2",
         "V100", "2023-08-27"},
        {"/abs//preemption/4-node/aws-08-03-2023/us-west-2c_v100_1.json", 1, 4, 1, "aws", "us-west-2c", "us-west-2",
         "V100", "2023-08-03"},
        {"availability/1-node/aws-10-26-2022/us-west-2a_k80_8.json", 1, 1, 8, "aws", "us-west-2a", "us-west-2", "K80",
         "2022-10-26"},
        {"preemption/1-node/aws-04-19-2023/us-east-1b_intel_64.json", 1, 1, 64, "aws", "us-east-1b", "us-east-1",
         "INTEL", "2023-04-19"},
        {"availability_16node_08-27-2023_us-east-2b_V100x1.csv", 1, 16, 1, "aws", "us-east-2b", "us-east-2", "V100",
         "2023-08-27"},
        {"d/preemption_1node_04-22-2023_us-central1-a_T4x4.csv", 1, 1, 4, "gcp", "us-central1-a", "us-central1", "T4",
         "2023-04-22"},
        {"preemption/1-node/gcp-04-30-2023/us-central1-a_c3-88.json", 0, 0, 0, NULL, NULL, NULL, NULL, NULL},
        {"availability_16node_13-27-2023_us-east-2b_V100x1.csv", 0, 0, 0, NULL, NULL, NULL, NULL, NULL},
        {"availability_0node_08-27-2023_us-east-2b_V100x1.csv", 0, 0, 0, NULL, NULL, NULL, NULL, NULL},
        {"availability_16node_08-27-2023_eastus_V100x1.csv", 0, 0, 0, NULL, NULL, NULL, NULL, NULL},
        {"availability_9999999node_08-27-2023_us-east-2b_V100x1.csv", 0, 0, 0, NULL, NULL, NULL, NULL, NULL},
        {"availability/16-node/aws-08-27-2023/us-east-2b_v100_1.txt", 0, 0, 0, NULL, NULL, NULL, NULL, NULL},
        {"us-east-1c_v100_1.json", 0, 0, 0, NULL, NULL, NULL, NULL, NULL},
        {"notes.csv", 0, 0, 0, NULL, NULL, NULL, NULL, NULL},
        {"", 0, 0, 0, NULL, NULL, NULL, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cf_spot_trace_vm vm;
        int ok = cf_spot_trace_vm_from_path(cases[i].path, &vm);
        if (ok != cases[i].ok)
            fail_msg("%s: recognised %d, expected %d", cases[i].path, ok, cases[i].ok);
        if (!ok)
            continue;
        assert_int_equal(vm.requested, cases[i].nodes);
        assert_int_equal(vm.gpus_per_vm, cases[i].per_vm);
        assert_string_equal(vm.cloud, cases[i].cloud);
        assert_string_equal(vm.zone, cases[i].zone);
        assert_string_equal(vm.region, cases[i].region);
        assert_string_equal(vm.gpu, cases[i].gpu);
        assert_string_equal(vm.start_date, cases[i].date);
        assert_string_equal(vm.instance_type, "");
    }
}

/* The public traces' JSON reads as the same trace as its CSV copy; its
 * errors name the key. */
static void test_trace_json(void **state)
{
    (void)state;
    static const char json[] = "{\"metadata\": {\"gap_seconds\": 32}, \"data\": [0, 2, 1, 2]}";
    static const char csv[] = "t_s,nodes_available\n0,0\n32,2\n64,1\n96,2\n";
    cf_spot_trace a, b;
    assert_int_equal(cf_spot_trace_parse(json, sizeof json - 1, "t.json", 0, &a), CF_OK);
    assert_int_equal(cf_spot_trace_parse(csv, sizeof csv - 1, "t.csv", 0, &b), CF_OK);
    assert_int_equal(a.n_ticks, 4);
    assert_int_equal(a.n_ticks, b.n_ticks);
    assert_int_equal(a.n_types, 1);
    assert_int_equal(a.vm[0].requested, 2);
    for (size_t i = 0; i < a.n_ticks; i++) {
        assert_float_equal(a.dt_h[i], 32 / 3600.0, 1e-12);
        assert_float_equal(a.dt_h[i], b.dt_h[i], 1e-12);
        assert_int_equal(a.counts[i], b.counts[i]);
    }
    cf_spot_trace_free(&a);
    cf_spot_trace_free(&b);
    assert_int_equal(cf_spot_trace_parse(json, sizeof json - 1, "t.json", 4, &a), CF_OK);
    assert_int_equal(a.vm[0].requested, 4);
    cf_spot_trace_free(&a);
    static const struct {
        const char *text, *says;
    } bad[] = {
        {"{\"metadata\": {\"gap_seconds\": 0}, \"data\": [1, 1]}", "'metadata.gap_seconds'"},
        {"{\"metadata\": {}, \"data\": [1, 1]}", "'metadata.gap_seconds'"},
        {"{\"metadata\": {\"gap_seconds\": 30}, \"data\": {}}", "'data'"},
        {"{\"metadata\": {\"gap_seconds\": 30}, \"data\": [1, -1]}", "'data[1]'"},
        {"{\"metadata\": {\"gap_seconds\": 30}, \"data\": [1, 1.5]}", "'data[1]'"},
        {"{\"metadata\": {\"gap_seconds\": 30}, \"data\": [1, \"1\"]}", "'data[1]'"},
        {"{\"metadata\": {\"gap_seconds\": 30}, \"data\": [1]}", "at least 2 ticks"},
        {"{\"metadata\": {\"gap_seconds\": 30}, \"data\": [1, 100001]}", "'data[1]': expected a node count from 0 "
                                                                       "to 100000"},
        {"{\"metadata\": {\"gap_seconds\": 30}, \"data\": [0, 0]}", "no node is ever held"},
        {"[1, 2]", "a JSON object"},
        {"{\"metadata\": {\"gap_seconds\": 30}, \"data\": [1, ", "invalid JSON"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_not_equal(cf_spot_trace_parse(bad[i].text, strlen(bad[i].text), "t.json", 0, &a), CF_OK);
        if (!strstr(cf_error_message(), bad[i].says) || !strstr(cf_error_message(), "t.json"))
            fail_msg("%s: says '%s', expected '%s'", bad[i].text, cf_error_message(), bad[i].says);
    }
    assert_int_not_equal(cf_spot_trace_parse(json, sizeof json - 1, "t.json", 1, &a), CF_OK); /* 2 held, 1 asked */
    assert_non_null(strstr(cf_error_message(), "'data[1]': 2 nodes held, more than the 1 requested"));
    /* CSV: ticks a millisecond to 10^9 s (nanosecond ticks left no room to
     * start a job and were reported as out of memory; ±1.7e308 gave an
     * infinite tick and NaN results), and a count above the requested
     * nodes names its line */
    static const struct {
        const char *text, *says;
        int requested;
    } bad_csv[] = {
        {"t_s,nodes_available\n0,2\n1e-9,1\n2e-9,2\n", "t.csv:3: column 't_s'", 0},
        {"t_s,nodes_available\n0,1\n1.7e308,1\n", "t.csv:3: column 't_s'", 0},
        /* seconds since the start: a negative time was replayed as if it were one */
        {"t_s,nodes_available\n-600,1\n-300,0\n0,1\n", "t.csv:2: column 't_s': expected seconds since the start "
                                                         "(0 or more), got -600", 0},
        {"t_s,nodes_available\n-1.7e308,1\n1.7e308,1\n", "t.csv:2: column 't_s': expected seconds since the "
                                                            "start (0 or more)", 0},
        {"t_s,nodes_available\n0,1\n2e9,1\n", "expected 0.001 to 1e+09 s", 0},
        {"t_s,nodes_available\n0,1\n60,0\n120,4\n", "t.csv:4: column 'nodes_available': 4 nodes held, more than "
                                                         "the 2 requested", 2},
        {"t_s,nodes_available\n0,1\n60,100001\n", "t.csv:3: column 'nodes_available': expected a node count from 0 "
                                                     "to 100000, got 100001", 0},
    };
    for (size_t i = 0; i < sizeof bad_csv / sizeof bad_csv[0]; i++) {
        assert_int_not_equal(cf_spot_trace_parse(bad_csv[i].text, strlen(bad_csv[i].text), "t.csv",
                                                 bad_csv[i].requested, &a), CF_OK);
        if (!strstr(cf_error_message(), bad_csv[i].says))
            fail_msg("%s: says '%s', expected '%s'", bad_csv[i].text, cf_error_message(), bad_csv[i].says);
    }
    static const char ms[] = "t_s,nodes_available\n0,1\n0.001,0\n0.002,1\n"; /* the shortest tick taken */
    assert_int_equal(cf_spot_trace_parse(ms, sizeof ms - 1, "t.csv", 0, &a), CF_OK);
    cf_spot_trace_free(&a);
    /* 0.009 - 0.008 is 0.000999999... in binary: a 1-ms tick all the same
     * (refused as "a tick of 0.001 s; expected 0.001 to 1e+09 s") */
    static const char ms9[] = "t_s,nodes_available\n0.007,1\n0.008,0\n0.009,1\n1000000.008,1\n1000000.009,0\n";
    if (cf_spot_trace_parse(ms9, sizeof ms9 - 1, "t.csv", 0, &a) != CF_OK)
        fail_msg("1-ms ticks refused: %s", cf_error_message());
    cf_spot_trace_free(&a);
}

/* root/rel, in a buffer that the next call reuses. */
static const char *at(const char *root, const char *rel)
{
    static char path[700];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    return path;
}

/* Writes text to root/rel, making its folders. */
static void put(const char *root, const char *rel, const char *text)
{
    char dir[700];
    cf_dirname(at(root, rel), dir, sizeof dir);
    assert_int_equal(cf_mkdir_p(dir), CF_OK);
    FILE *f = fopen(at(root, rel), "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A folder without index.csv: its traces from their names (public layout
 * and CSV copies), in path order; other files skipped and named; the
 * shipped CSVs without their index read as with it, but for the instance
 * type the index names. A hand-written index needs only file,
 * nodes_requested, zone, gpu and gpus_per_vm, and may list files in
 * subfolders. */
static void test_trace_folder_without_index(void **state)
{
    (void)state;
    char root[] = "/tmp/cloudfit-traces-XXXXXX";
    assert_non_null(mkdtemp(root));
    put(root, "preemption/4-node/aws-08-03-2023/us-east-1f_v100_1.json",
        "{\"metadata\": {\"gap_seconds\": 60}, \"data\": [4, 3, 4, 2]}");
    put(root, "preemption/1-node/aws-04-19-2023/us-east-1b_intel_64.json",
        "{\"metadata\": {\"gap_seconds\": 60}, \"data\": [1, 0, 1]}");
    put(root, "availability_1node_02-15-2023_us-east-1a_V100x8.csv", "t_s,nodes_available\n0,1\n195,0\n390,1\n");
    put(root, "notes.csv", "a,b\n1,2\n");
    put(root, "README.md", "not a trace\n");
    cf_spot_trace_set set;
    assert_int_equal(cf_spot_trace_set_load(root, &set), CF_OK);
    assert_int_equal(set.n, 2);
    assert_int_equal(set.n_skipped, 2);
    assert_non_null(strstr(set.skipped, "notes.csv"));
    assert_non_null(strstr(set.skipped, "intel_64.json' (not a GPU VM)"));
    assert_non_null(strstr(set.traces[0].name, "availability_1node"));
    assert_int_equal(set.traces[0].vm[0].gpus_per_vm, 8);
    assert_int_equal(set.traces[0].vm[0].requested, 1);
    assert_string_equal(set.traces[1].vm[0].zone, "us-east-1f");
    assert_string_equal(set.traces[1].vm[0].region, "us-east-1");
    assert_int_equal(set.traces[1].vm[0].requested, 4); /* from 4-node, not the largest count */
    assert_int_equal(set.traces[1].n_ticks, 4);
    cf_spot_trace_set_free(&set);
    /* nothing left: an error that says what was skipped and a hint */
    assert_int_equal(unlink(at(root, "availability_1node_02-15-2023_us-east-1a_V100x8.csv")), 0);
    assert_int_equal(unlink(at(root, "preemption/4-node/aws-08-03-2023/us-east-1f_v100_1.json")), 0);
    assert_int_equal(cf_spot_trace_set_load(root, &set), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "no trace found"));
    assert_non_null(strstr(cf_error_message(), "notes.csv"));
    assert_non_null(strstr(cf_error_hint_text(), "index.csv"));
    /* the shipped CSVs without their index.csv */
    cf_spot_trace_set shipped, copies;
    assert_int_equal(cf_spot_trace_set_load(TRACES, &shipped), CF_OK);
    char copy_dir[600];
    snprintf(copy_dir, sizeof copy_dir, "%s/copies", root);
    assert_int_equal(mkdir(copy_dir, 0755), 0);
    for (size_t i = 0; i < shipped.n; i++) /* TRACES is an absolute path */
        assert_int_equal(symlink(shipped.traces[i].name, at(copy_dir, cf_basename(shipped.traces[i].name))), 0);
    assert_int_equal(cf_spot_trace_set_load(copy_dir, &copies), CF_OK);
    assert_int_equal(copies.n, shipped.n);
    assert_int_equal(copies.n_skipped, 0);
    for (size_t i = 0; i < shipped.n; i++) {
        const cf_spot_trace_vm *a = &shipped.traces[i].vm[0], *b = &copies.traces[i].vm[0];
        assert_string_equal(cf_basename(shipped.traces[i].name), cf_basename(copies.traces[i].name));
        assert_int_equal(a->requested, b->requested);
        assert_int_equal(a->gpus_per_vm, b->gpus_per_vm);
        assert_string_equal(a->cloud, b->cloud);
        assert_string_equal(a->zone, b->zone);
        assert_string_equal(a->region, b->region);
        assert_string_equal(a->gpu, b->gpu);
        assert_string_equal(a->start_date, b->start_date);
        assert_int_equal(shipped.traces[i].n_ticks, copies.traces[i].n_ticks);
        assert_memory_equal(shipped.traces[i].counts, copies.traces[i].counts,
                            shipped.traces[i].n_ticks * sizeof *shipped.traces[i].counts);
    }
    cf_spot_trace_set_free(&shipped);
    cf_spot_trace_set_free(&copies);
    /* a hand-written index with only the columns that matter, a file in a subfolder: the cloud from the
     * zone, no instance type, the requested count from the index */
    char mine[600];
    snprintf(mine, sizeof mine, "%s/mine", root);
    put(mine, "sub/trace.csv", "t_s,nodes_available\n0,2\n60,1\n120,2\n");
    put(mine, "index.csv", "file,nodes_requested,zone,gpu,gpus_per_vm\nsub/trace.csv,4,us-west-2b,V100,1\n");
    assert_int_equal(cf_spot_trace_set_load(mine, &set), CF_OK);
    assert_int_equal(set.n, 1);
    assert_string_equal(set.traces[0].vm[0].cloud, "aws");
    assert_string_equal(set.traces[0].vm[0].region, "us-west-2");
    assert_string_equal(set.traces[0].vm[0].gpu, "V100");
    assert_string_equal(set.traces[0].vm[0].instance_type, "");
    assert_int_equal(set.traces[0].vm[0].requested, 4);
    cf_spot_trace_set_free(&set);
    put(mine, "index.csv", "file,nodes_requested,gpu,gpus_per_vm\nsub/trace.csv,4,V100,1\n");
    assert_int_equal(cf_spot_trace_set_load(mine, &set), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "zone"));
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

/* A file reached by more than one path (a link to the folder itself, a
 * second link to the file) is one trace: read by its shortest path, the
 * others skipped and named (a link `again -> .` scored it five times). */
static void test_trace_folder_same_file_once(void **state)
{
    (void)state;
    char root[] = "/tmp/cloudfit-samefile-XXXXXX";
    assert_non_null(mkdtemp(root));
    const char *name = "availability_1node_02-15-2023_us-east-1a_V100x1.csv";
    put(root, name, "t_s,nodes_available\n0,1\n195,0\n390,1\n");
    assert_int_equal(symlink(".", at(root, "again")), 0);
    assert_int_equal(mkdir(at(root, "sub"), 0755), 0);
    char target[700];
    snprintf(target, sizeof target, "%s/%s", root, name);
    assert_int_equal(symlink(target, at(root, "sub/availability_1node_02-15-2023_us-east-1a_V100x1.csv")), 0);
    cf_spot_trace_set set;
    assert_int_equal(cf_spot_trace_set_load(root, &set), CF_OK);
    assert_int_equal(set.n, 1);
    assert_string_equal(set.traces[0].name, at(root, name));
    assert_int_equal(set.n_skipped, 8); /* again/… four levels down, sub/… and again/…/sub/… */
    assert_non_null(strstr(set.skipped, "(the same file as '"));
    cf_spot_trace_set_free(&set);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

/* The index.csv beside a --trace file is read whole, as --calibrate reads
 * it: its row describes the trace; a broken row, even another file's, or a
 * file listed twice, is an error naming the index and its line, never a
 * silent fall-back to the file's name. An empty gpus_per_vm is called
 * empty. */
static void test_trace_index_beside_a_trace(void **state)
{
    (void)state;
    char root[] = "/tmp/cloudfit-index-XXXXXX";
    assert_non_null(mkdtemp(root));
    const char *name = "availability_1node_02-15-2023_us-east-1a_V100x1.csv";
    put(root, name, "t_s,nodes_available\n0,1\n195,0\n390,1\n");
    const char *header = "file,nodes_requested,zone,gpu,gpus_per_vm\n";
    char text[600];
    snprintf(text, sizeof text, "%s%s,4,us-west-2a,V100,1\n", header, name);
    put(root, "index.csv", text);
    cf_spot_trace trace;
    assert_int_equal(cf_spot_trace_load(at(root, name), 0, &trace), CF_OK);
    assert_int_equal(trace.vm[0].requested, 4);
    assert_string_equal(trace.vm[0].zone, "us-west-2a");
    cf_spot_trace_free(&trace);
    /* the index's names are compared as one spelling: ./NAME is the file (it named none, and the trace fell back
     * to its file name: 1 node in us-east-1a), and NAME with .//NAME is one file listed twice */
    snprintf(text, sizeof text, "%s./%s,4,us-west-2a,V100,1\n", header, name);
    put(root, "index.csv", text);
    assert_int_equal(cf_spot_trace_load(at(root, name), 0, &trace), CF_OK);
    assert_int_equal(trace.vm[0].requested, 4);
    assert_string_equal(trace.vm[0].zone, "us-west-2a");
    cf_spot_trace_free(&trace);
    snprintf(text, sizeof text, "%s%s,4,us-west-2a,V100,1\n.//%s,1,us-east-1a,V100,1\n", header, name, name);
    put(root, "index.csv", text);
    assert_int_equal(cf_spot_trace_load(at(root, name), 0, &trace), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "index.csv:3: column 'file'"));
    /* a broken row of another file */
    snprintf(text, sizeof text, "%s%s,4,us-west-2a,V100,1\nother-week.csv,4,us-west-2a,V100,\n", header, name);
    put(root, "index.csv", text);
    assert_int_equal(cf_spot_trace_load(at(root, name), 0, &trace), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "index.csv:3: column 'gpus_per_vm'"));
    assert_non_null(strstr(cf_error_message(), "empty"));
    cf_spot_trace_set set;
    assert_int_equal(cf_spot_trace_set_load(root, &set), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "index.csv:3: column 'gpus_per_vm'"));
    /* a file listed twice: both lines named (set and single trace alike) */
    snprintf(text, sizeof text, "%s%s,4,us-west-2a,V100,1\n%s,1,us-east-1a,V100,1\n", header, name, name);
    put(root, "index.csv", text);
    assert_int_equal(cf_spot_trace_set_load(root, &set), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "index.csv:3: column 'file'"));
    assert_non_null(strstr(cf_error_message(), "listed again (first at line 2)"));
    assert_int_equal(cf_spot_trace_load(at(root, name), 0, &trace), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "listed again"));
    /* no index at all: the file's name describes it */
    assert_int_equal(unlink(at(root, "index.csv")), 0);
    assert_int_equal(cf_spot_trace_load(at(root, name), 0, &trace), CF_OK);
    assert_string_equal(trace.vm[0].zone, "us-east-1a");
    assert_int_equal(trace.vm[0].requested, 1);
    cf_spot_trace_free(&trace);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

/* Degenerate models and traces end with an error or an answer, never a
 * loop: a model with zero-length runs, one whose runs would fill the
 * memory, a path that is cut to a length, a replay on a path that never
 * holds a VM. */
static void test_degenerate_inputs(void **state)
{
    (void)state;
    cf_spot_path p;
    cf_spot_process zero = {0};
    assert_int_equal(cf_spot_path_generate(&zero, 1, 1000, 1, &p), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "up_median_h"));
    cf_spot_process tiny = {.up_median_h = CF_SPOT_MIN_RUN_H, .down_median_h = CF_SPOT_MIN_RUN_H, .qf = 1, .qr = 1};
    assert_int_equal(cf_spot_path_generate(&tiny, 4, 1e6, 1, &p), CF_ERR_INVALID); /* 3.6e9 runs */
    cf_spot_process nan_rate = {.up_median_h = 1, .down_median_h = 1, .kd_per_h = NAN};
    assert_int_equal(cf_spot_path_generate(&nan_rate, 4, 100, 1, &p), CF_ERR_INVALID);
    cf_spot_process ok = {.up_median_h = 1, .up_sigma = 1, .down_median_h = 0.5, .down_sigma = 1, .regime_sd_up = 0.5,
                          .regime_sd_down = 0.5, .kd_per_h = 0.2, .kr_per_h = 1, .qf = 0.5, .qr = 0.5};
    assert_int_equal(cf_spot_path_generate(&ok, 4, 500, 1, &p), CF_OK);
    cf_spot_path_truncate(&p, 123.5);
    assert_float_equal(p.total_h, 123.5, 1e-9);
    double sum = 0;
    for (size_t i = 0; i < p.n; i++)
        sum += p.d_h[i];
    assert_float_equal(sum, 123.5, 1e-9);
    cf_spot_path_free(&p);
    static const double d[] = {0.5, 0.5};
    static const int none[] = {0, 0};
    cf_spot_path empty = path_of(d, none, 2);
    cf_spot_plan plan = {.n_types = 1, .nodes = {1, 0}, .work_h = 1, .checkpoint_h = 0.01, .restart_h = 0.1,
                         .interval_h = 0.5};
    cf_spot_run run;
    cf_spot_replay(&empty, 0, 0, &plan, &run);
    assert_true(isinf(run.wall_h));
    cf_spot_path_free(&empty);
}

/* Growth with the node count as the traces show: the cluster's event rate
 * rises from N = 1 to N ≥ 2 by about kd and then stays nearly flat — far
 * from N × the single-VM rate — and all N held less often as N grows. */
static void test_node_count_growth(void **state)
{
    (void)state;
    cf_spot_lookup l;
    cf_spot_model_lookup("aws", "V100", 1, "us-west-2", 16, &l);
    cf_spot_path_stats st[3];
    static const int nodes[3] = {1, 4, 16};
    for (int i = 0; i < 3; i++) {
        cf_spot_path p;
        assert_int_equal(cf_spot_path_generate(&l.row->process, nodes[i], 100000, 11, &p), CF_OK);
        cf_spot_path_stats_of(&p, nodes[i], &st[i]);
        cf_spot_path_free(&p);
    }
    assert_true(st[1].events_per_day > st[0].events_per_day);
    assert_true(st[2].events_per_day < 4 * st[0].events_per_day);      /* not 16 × */
    assert_true(st[2].events_per_day < 1.5 * st[1].events_per_day);    /* nearly flat from 4 to 16 */
    assert_true(st[1].availability < st[0].availability);
    assert_true(st[2].availability > 0.5 * st[1].availability);         /* not a^N */
}

/* cf_spot_mc_estimate_many makes the paths and replays on several threads:
 * the estimates are the same, field for field, as one after the other,
 * whatever the thread count; a repeated plan at another price reuses the
 * replays and prices them anew. */
static void estimates(int threads, const cf_spot_request *reqs, size_t n, cf_spot_estimate *out)
{
    cf_spot_mc_settings settings = {2000, 200, CF_SPOT_SEED};
    cf_spot_mc *mc = NULL;
    assert_int_equal(cf_spot_mc_new(&settings, &mc), CF_OK);
    if (threads > 0)
        assert_int_equal(cf_spot_mc_estimate_many(mc, reqs, n, threads, out), CF_OK);
    else
        for (size_t i = 0; i < n; i++)
            assert_int_equal(cf_spot_mc_estimate(mc, &reqs[i], &out[i]), CF_OK);
    cf_spot_mc_free(mc);
}

static void test_mc_estimate_many_same_results(void **state)
{
    (void)state;
    cf_spot_lookup one, four;
    cf_spot_model_lookup("aws", "V100", 1, "us-west-2", 1, &one);
    cf_spot_model_lookup("aws", "V100", 1, "us-west-2", 4, &four);
    cf_spot_request reqs[] = {
        {.process = &one.row->process, .nodes = 1, .work_h = 6, .checkpoint_h = 0.05, .restart_h = 0.1,
         .spot_usd_per_node_h = 1, .ondemand_usd_per_node_h = 3, .deadline_h = 8},          /* mixed: 8 h is tight */
        {.process = &four.row->process, .nodes = 4, .work_h = 10, .checkpoint_h = 0.05, .restart_h = 0.1,
         .spot_usd_per_node_h = 1, .ondemand_usd_per_node_h = 3, .deadline_h = 1000},       /* spot alone */
        {.process = &one.row->process, .nodes = 1, .work_h = 6, .checkpoint_h = 0.05, .restart_h = 0.1,
         .spot_usd_per_node_h = 2, .ondemand_usd_per_node_h = 5, .deadline_h = 8},          /* the first, dearer */
        {.process = &four.row->process, .nodes = 4, .work_h = 3, .checkpoint_h = 0.05, .restart_h = 0.1,
         .spot_usd_per_node_h = 1, .semantics = CF_SPOT_GANG},
        {.process = &one.row->process, .nodes = 2, .work_h = 6, .checkpoint_h = 0.05, .restart_h = 0.1,
         .spot_usd_per_node_h = 1, .ondemand_usd_per_node_h = 3, .deadline_h = 9, .always_mixed = 1},
        /* more plans on the first path than its memo array first holds (it grows while they are made) */
        {.process = &one.row->process, .nodes = 1, .work_h = 7, .checkpoint_h = 0.05, .restart_h = 0.1,
         .spot_usd_per_node_h = 1, .ondemand_usd_per_node_h = 3, .deadline_h = 8},
        {.process = &one.row->process, .nodes = 1, .work_h = 8, .checkpoint_h = 0.05, .restart_h = 0.1,
         .spot_usd_per_node_h = 1, .ondemand_usd_per_node_h = 3, .deadline_h = 8},
        {.process = &one.row->process, .nodes = 1, .work_h = 9, .checkpoint_h = 0.05, .restart_h = 0.1,
         .spot_usd_per_node_h = 1, .ondemand_usd_per_node_h = 3, .deadline_h = 8},
        {.process = &one.row->process, .nodes = 1, .work_h = 10, .checkpoint_h = 0.05, .restart_h = 0.1,
         .spot_usd_per_node_h = 1, .ondemand_usd_per_node_h = 3, .deadline_h = 8},
        {.process = &one.row->process, .nodes = 1, .work_h = 11, .checkpoint_h = 0.05, .restart_h = 0.1,
         .spot_usd_per_node_h = 1, .ondemand_usd_per_node_h = 3, .deadline_h = 8},
    };
    enum { N = sizeof reqs / sizeof reqs[0] };
    cf_spot_estimate base[N], got[N];
    estimates(0, reqs, N, base);
    assert_true(base[0].has_mixed && !base[1].has_mixed && base[4].has_mixed);
    assert_true(fabs(base[2].spot.p50_usd - 2 * base[0].spot.p50_usd) < 1e-9 * base[0].spot.p50_usd);
    assert_true(base[2].spot.p50_h == base[0].spot.p50_h);
    for (int threads = 1; threads <= 3; threads++) {
        estimates(threads, reqs, N, got);
        for (int i = 0; i < N; i++) {
            assert_true(got[i].spot.p10_h == base[i].spot.p10_h && got[i].spot.p90_h == base[i].spot.p90_h);
            assert_true(got[i].spot.q_h == base[i].spot.q_h && got[i].spot.mean_usd == base[i].spot.mean_usd);
            assert_true(got[i].spot.mean_preemptions == base[i].spot.mean_preemptions);
            assert_int_equal(got[i].has_mixed, base[i].has_mixed);
            assert_true(got[i].mixed.p50_usd == base[i].mixed.p50_usd && got[i].mixed.q_h == base[i].mixed.q_h);
            assert_true(got[i].interval_h == base[i].interval_h && got[i].spot_met_share == base[i].spot_met_share);
        }
    }
}

/* The work's spread above its median is the step's σ_up (a plan beyond the
 * node count its network was measured at): the estimate reports it beside
 * σ, which alone was printed and written (σ 0.05 where 0.30 was drawn). */
static void test_estimate_reports_both_sigmas(void **state)
{
    (void)state;
    cf_spot_lookup four;
    cf_spot_model_lookup("aws", "V100", 1, "us-west-2", 4, &four);
    cf_spot_request reqs[] = {
        {.process = &four.row->process, .nodes = 4, .work_h = 10, .work_sigma = 0.05, .work_sigma_up = 0.3,
         .checkpoint_h = 0.05, .restart_h = 0.1, .spot_usd_per_node_h = 1, .deadline_h = 1000},
        {.process = &four.row->process, .nodes = 4, .work_h = 10, .work_sigma = 0.05, .checkpoint_h = 0.05,
         .restart_h = 0.1, .spot_usd_per_node_h = 1, .deadline_h = 1000},
    };
    cf_spot_estimate got[2];
    estimates(0, reqs, 2, got);
    assert_float_equal(got[0].work_sigma, 0.05, 1e-12);
    assert_float_equal(got[0].work_sigma_up, 0.3, 1e-12);
    assert_float_equal(got[1].work_sigma_up, 0.05, 1e-12); /* 0 = work_sigma */
    assert_true(got[0].spot.p90_h > got[1].spot.p90_h);   /* and the Monte Carlo drew it */
}

/* The inner chain's stationary distribution (solved in O(N) by a
 * recursion) satisfies the balance equations and agrees with a plain power
 * iteration of the same chain, for every shipped row and N = 2..64 and for
 * the edge cases (no rises, no drops). */
static void power_stationary(const cf_spot_process *p, int N, double *pi)
{
    double kd = p->kd_per_h, kr = p->kr_per_h, lam = kd + kr, in[65];
    for (int n = 0; n <= N; n++)
        pi[n] = n >= 1 ? 1.0 / N : 0;
    for (int it = 0; it < 200000; it++) {
        double change = 0;
        for (int m = 1; m <= N; m++) {
            in[m] = 0;
            for (int n = m + 1; n <= N; n++)
                in[m] += pi[n] * kd / (n - 1);
            for (int n = 1; n < m; n++)
                in[m] += pi[n] * kr * (1 - p->qr) / (N - n);
            if (m == N)
                for (int n = 1; n < N; n++)
                    in[m] += pi[n] * kr * p->qr;
        }
        for (int m = 1; m <= N; m++) {
            double out_rate = (m >= 2 ? kd : 0) + (m < N ? kr : 0);
            double next = pi[m] + (in[m] - pi[m] * out_rate) / lam;
            change += fabs(next - pi[m]);
            pi[m] = next;
        }
        if (change < 1e-14)
            break;
    }
}

static void test_inner_stationary(void **state)
{
    (void)state;
    double pi[65], ref[65];
    int rows = 0;
    for (size_t r = 0; r < cf_spot_table_count; r++) {
        const cf_spot_process *p = &cf_spot_table[r].process;
        if (p->kd_per_h + p->kr_per_h <= 0)
            continue;
        rows++;
        for (int N = 2; N <= 64; N += (N < 8 ? 1 : 7)) {
            cf_spot_inner_stationary(p, N, pi);
            power_stationary(p, N, ref);
            double total = 0;
            for (int m = 1; m <= N; m++) {
                total += pi[m];
                assert_true(fabs(pi[m] - ref[m]) < 1e-9);
            }
            assert_true(fabs(total - 1) < 1e-12);
        }
    }
    assert_true(rows >= 2); /* the multi-node rows */
    cf_spot_process only_rises = {.kr_per_h = 0.5, .qr = 0.3}, only_drops = {.kd_per_h = 0.5, .qr = 0.3};
    cf_spot_inner_stationary(&only_rises, 5, pi);
    assert_true(pi[5] == 1 && pi[1] == 0);
    cf_spot_inner_stationary(&only_drops, 5, pi);
    assert_true(pi[1] == 1 && pi[5] == 0);
    cf_spot_process two = {.kd_per_h = 0.2, .kr_per_h = 0.6, .qr = 0.5};
    cf_spot_inner_stationary(&two, 2, pi);
    assert_true(fabs(pi[2] / pi[1] - 3.0) < 1e-12); /* kr / kd */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_young_daly_closed_form),
        cmocka_unit_test(test_checkpoint_costs),
        cmocka_unit_test(test_estimators),
        cmocka_unit_test(test_replay_known_answers),
        cmocka_unit_test(test_replay_caps),
        cmocka_unit_test(test_replay_never_ends),
        cmocka_unit_test(test_replay_many_shares_the_pass),
        cmocka_unit_test(test_replay_until_and_lengths),
        cmocka_unit_test(test_mixed_plan),
        cmocka_unit_test(test_quantile),
        cmocka_unit_test(test_quantiles_place),
        cmocka_unit_test(test_starts_random_placement),
        cmocka_unit_test(test_generator_statistics),
        cmocka_unit_test(test_shipped_table_matches_traces),
        cmocka_unit_test(test_calibration_on_traces),
        cmocka_unit_test(test_trace_names),
        cmocka_unit_test(test_trace_json),
        cmocka_unit_test(test_trace_folder_without_index),
        cmocka_unit_test(test_trace_folder_same_file_once),
        cmocka_unit_test(test_trace_index_beside_a_trace),
        cmocka_unit_test(test_degenerate_inputs),
        cmocka_unit_test(test_node_count_growth),
        cmocka_unit_test(test_mc_estimate_many_same_results),
        cmocka_unit_test(test_estimate_reports_both_sigmas),
        cmocka_unit_test(test_inner_stationary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
