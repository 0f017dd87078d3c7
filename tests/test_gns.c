/* Gradient noise scale estimator against the analytic answer for
 * least-squares linear regression, x ~ N(0, I_n), y = w*·x + ε,
 * ε ~ N(0, σ²), evaluated at weights w = w* + d. The per-example gradient is
 * (d·x − ε)·x, so G = d and tr(Σ) = n(|d|² + σ²) + |d|², i.e.
 *   B_noise = (n(|d|² + σ²) + |d|²) / |d|².
 * The test draws the examples itself (fixed seeds), forms micro-batch
 * gradients, and feeds only their squared norms to the estimator. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cloudfit/profiler/gns.h"

#define MAX_DIM 128
#define MAX_MICRO 16

typedef struct {
    uint64_t state;
    int have_spare;
    double spare;
} rng;

static uint64_t splitmix64(rng *r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double uniform01(rng *r)
{
    return ((double)(splitmix64(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static double normal(rng *r)
{
    if (r->have_spare) {
        r->have_spare = 0;
        return r->spare;
    }
    double u = uniform01(r), v = uniform01(r);
    double rad = sqrt(-2.0 * log(u));
    r->spare = rad * sin(6.283185307179586 * v);
    r->have_spare = 1;
    return rad * cos(6.283185307179586 * v);
}

typedef struct {
    int n;           /* dimension */
    double sigma;    /* label noise */
    double d[MAX_DIM];
    double d2;       /* |d|² */
} problem;

static void make_problem(problem *p, int n, double sigma, double d_norm, rng *r)
{
    p->n = n;
    p->sigma = sigma;
    double s = 0;
    for (int i = 0; i < n; i++) {
        p->d[i] = normal(r);
        s += p->d[i] * p->d[i];
    }
    p->d2 = 0;
    for (int i = 0; i < n; i++) {
        p->d[i] *= d_norm / sqrt(s);
        p->d2 += p->d[i] * p->d[i];
    }
}

static double analytic_b_noise(const problem *p)
{
    return (p->n * (p->d2 + p->sigma * p->sigma) + p->d2) / p->d2;
}

/* One step: k micro-batches of b examples; squared norms of the micro-batch
 * mean gradients and of their mean. */
static void step(const problem *p, int b, int k, rng *r, double *micro_sqnorms, double *mean_sqnorm)
{
    double mean[MAX_DIM] = {0}, g[MAX_DIM], x[MAX_DIM];
    for (int j = 0; j < k; j++) {
        memset(g, 0, sizeof g);
        for (int e = 0; e < b; e++) {
            double dx = 0;
            for (int i = 0; i < p->n; i++) {
                x[i] = normal(r);
                dx += p->d[i] * x[i];
            }
            double residual = dx - p->sigma * normal(r); /* w·x − y = d·x − ε */
            for (int i = 0; i < p->n; i++)
                g[i] += residual * x[i] / b;
        }
        double s = 0;
        for (int i = 0; i < p->n; i++) {
            s += g[i] * g[i];
            mean[i] += g[i] / k;
        }
        micro_sqnorms[j] = s;
    }
    double s = 0;
    for (int i = 0; i < p->n; i++)
        s += mean[i] * mean[i];
    *mean_sqnorm = s;
}

static cf_gns_estimate run(const problem *p, int b, int k, int steps, double ema_steps, rng *r)
{
    cf_gns gns;
    cf_gns_config cfg = {ema_steps, 0};
    cf_gns_init(&gns, &cfg);
    double micro[MAX_MICRO], mean;
    for (int s = 0; s < steps; s++) {
        step(p, b, k, r, micro, &mean);
        assert_int_equal(cf_gns_add_micro(&gns, b, micro, k, mean), CF_OK);
    }
    cf_gns_estimate est;
    assert_int_equal(cf_gns_result(&gns, &est), CF_OK);
    assert_int_equal(gns.n_points, (size_t)steps);
    cf_gns_free(&gns);
    return est;
}

/* Several dimensions and noise levels, fixed seeds: within 5 %. */
static void test_reproduces_analytic_b_noise(void **state)
{
    (void)state;
    static const struct {
        int n;
        double sigma, d_norm;
        int b, k, steps;
    } cases[] = {
        {4, 0.0, 1.0, 4, 8, 3000},   /* no label noise: B = n + 1 */
        {4, 2.0, 1.0, 8, 8, 3000},
        {16, 0.5, 1.0, 8, 8, 3000},
        {16, 1.0, 0.5, 16, 8, 3000},
        {64, 0.3, 1.0, 16, 4, 3000},
        {64, 1.0, 2.0, 32, 8, 2000},
        {128, 0.1, 1.0, 32, 4, 2000},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        rng r = {1000 + c, 0, 0};
        problem p;
        make_problem(&p, cases[c].n, cases[c].sigma, cases[c].d_norm, &r);
        double truth = analytic_b_noise(&p);
        cf_gns_estimate est = run(&p, cases[c].b, cases[c].k, cases[c].steps, 0, &r);
        double err = fabs(est.b_noise - truth) / truth;
        printf("n=%3d sigma=%.1f |d|=%.1f b=%2d k=%d: analytic %8.2f estimated %8.2f ± %.2f (error %.2f%%)\n",
               p.n, p.sigma, sqrt(p.d2), cases[c].b, cases[c].k, truth, est.b_noise, est.b_noise_stderr,
               100 * err);
        assert_true(err < 0.05);
        /* The reported uncertainty is meaningful: small here, and consistent with the error. */
        assert_true(est.b_noise_stderr > 0 && est.b_noise_stderr < 0.05 * truth);
        assert_true(fabs(est.b_noise - truth) < 4 * est.b_noise_stderr);
        assert_true(fabs(est.g2 - p.d2) / p.d2 < 0.05);
    }
}

/* The standard error is calibrated: over many short runs, the analytic
 * value lies within ±2 standard errors about 95 % of the time. */
static void test_uncertainty_is_calibrated(void **state)
{
    (void)state;
    rng r = {77, 0, 0};
    problem p;
    make_problem(&p, 16, 1.0, 1.0, &r);
    double truth = analytic_b_noise(&p);
    int runs = 200, covered = 0;
    for (int i = 0; i < runs; i++) {
        cf_gns_estimate est = run(&p, 8, 4, 150, 0, &r);
        covered += fabs(est.b_noise - truth) <= 2 * est.b_noise_stderr;
    }
    printf("coverage of ±2 stderr: %d/%d\n", covered, runs);
    assert_true(covered >= 0.88 * runs && covered <= 0.995 * runs);
}

/* The EMA trace follows a noise scale that changes during training. */
static void test_ema_trace_follows_change(void **state)
{
    (void)state;
    rng r = {5, 0, 0};
    problem early, late;
    make_problem(&early, 16, 0.5, 2.0, &r);   /* large |d|: small B_noise */
    late = early;
    for (int i = 0; i < late.n; i++)
        late.d[i] *= 0.25;                      /* closer to the optimum: larger B_noise */
    late.d2 = early.d2 * 0.0625;
    double b_early = analytic_b_noise(&early), b_late = analytic_b_noise(&late);
    cf_gns gns;
    cf_gns_config cfg = {300, 10};
    cf_gns_init(&gns, &cfg);
    double micro[MAX_MICRO], mean;
    int b = 16, k = 8, half = 3000;
    for (int s = 0; s < 2 * half; s++) {
        step(s < half ? &early : &late, b, k, &r, micro, &mean);
        assert_int_equal(cf_gns_add_micro(&gns, b, micro, k, mean), CF_OK);
    }
    assert_int_equal(gns.n_points, (size_t)(2 * half - 10));
    double mid = gns.points[half - 11].b_noise, end = gns.points[gns.n_points - 1].b_noise;
    printf("trace: %.1f (analytic %.1f) → %.1f (analytic %.1f)\n", mid, b_early, end, b_late);
    assert_true(fabs(mid - b_early) / b_early < 0.10);
    assert_true(fabs(end - b_late) / b_late < 0.10);
    assert_true(gns.points[gns.n_points - 1].samples == 2.0 * half * b * k);
    cf_gns_estimate est;
    assert_int_equal(cf_gns_result(&gns, &est), CF_OK);
    assert_true(fabs(est.b_noise - end) < 1e-9 * end);
    assert_true(est.n_effective > 100 && est.n_effective < 700);
    cf_gns_free(&gns);
}

/* Per-worker norms at different batch sizes (any b < B) give the same answer. */
static void test_pair_form_matches(void **state)
{
    (void)state;
    rng r = {9, 0, 0};
    problem p;
    make_problem(&p, 32, 1.0, 1.0, &r);
    double truth = analytic_b_noise(&p);
    cf_gns gns;
    cf_gns_init(&gns, NULL);
    double micro[MAX_MICRO], mean;
    for (int s = 0; s < 3000; s++) {
        step(&p, 8, 16, &r, micro, &mean);
        /* b = 8 from the first micro-batch alone, B = 128 from the mean */
        assert_int_equal(cf_gns_add_pair(&gns, 8, micro[0], 128, mean), CF_OK);
    }
    cf_gns_estimate est;
    assert_int_equal(cf_gns_result(&gns, &est), CF_OK);
    assert_true(fabs(est.b_noise - truth) / truth < 0.05);
    cf_gns_free(&gns);
}

static void test_rejects_bad_input(void **state)
{
    (void)state;
    cf_gns gns;
    cf_gns_init(&gns, NULL);
    double one[1] = {1.0}, neg[2] = {1.0, -1.0}, ok[2] = {2.0, 2.0};
    assert_int_equal(cf_gns_add_micro(&gns, 8, one, 1, 1.0), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "at least 2"));
    assert_int_equal(cf_gns_add_micro(&gns, 8, neg, 2, 1.0), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "micro-batch 2"));
    assert_int_equal(cf_gns_add_micro(&gns, 8, ok, 2, NAN), CF_ERR_INVALID);
    assert_int_equal(cf_gns_add_pair(&gns, 8, 1, 8, 1), CF_ERR_INVALID);
    assert_int_equal(gns.n, 0);
    cf_gns_estimate est;
    assert_int_equal(cf_gns_result(&gns, &est), CF_ERR_INVALID);
    /* Noise only: |G_B|² = |G_b|²/k exactly, so |G|² = 0: not resolved. */
    for (int s = 0; s < 10; s++)
        assert_int_equal(cf_gns_add_micro(&gns, 8, ok, 2, 1.0), CF_OK);
    assert_int_equal(cf_gns_result(&gns, &est), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "not resolved"));
    cf_gns_free(&gns);
    /* |G_B|² above every |g_i|² (a probe's inconsistent norms): tr(Σ) < 0,
     * B_noise would be negative: not measured, never a negative estimate. */
    cf_gns_init(&gns, NULL);
    for (int s = 0; s < 10; s++)
        assert_int_equal(cf_gns_add_micro(&gns, 8, ok, 2, 100.0), CF_OK);
    assert_int_equal(cf_gns_result(&gns, &est), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "tr(Σ)"));
    cf_gns_free(&gns);
}

/* A run whose average holds fewer than 2 steps (the EMA window clamped to
 * one: a short noise run) has residuals of the estimate itself, spread 0:
 * its standard error is not known (NAN), never "± 0". */
static void test_stderr_unknown_below_two_effective_steps(void **state)
{
    (void)state;
    double micro[2] = {4.0, 6.0};
    for (int window = 1; window <= 2; window++) {
        cf_gns_config cfg = {.ema_steps = window == 1 ? 1.0 : 0.0, .skip_steps = 0};
        cf_gns gns;
        cf_gns_init(&gns, &cfg);
        for (int s = 0; s < 5; s++) {
            micro[0] = 4.0 + s, micro[1] = 6.0 - 0.5 * s;
            assert_int_equal(cf_gns_add_micro(&gns, 8, micro, 2, 3.5 + 0.1 * s), CF_OK);
        }
        cf_gns_estimate est;
        assert_int_equal(cf_gns_result(&gns, &est), CF_OK);
        if (window == 1) {
            assert_true(est.n_effective < 2);
            assert_true(isnan(est.b_noise_stderr));
        } else {
            assert_true(est.n_effective >= 2);
            assert_true(isfinite(est.b_noise_stderr) && est.b_noise_stderr > 0);
        }
        cf_gns_free(&gns);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reproduces_analytic_b_noise),
        cmocka_unit_test(test_uncertainty_is_calibrated),
        cmocka_unit_test(test_ema_trace_follows_change),
        cmocka_unit_test(test_pair_form_matches),
        cmocka_unit_test(test_rejects_bad_input),
        cmocka_unit_test(test_stderr_unknown_below_two_effective_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
