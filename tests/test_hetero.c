/* Heterogeneous jobs and dynamic batching (advisor/hetero.c,
 * advisor/rebalance.c): the closed-form split equalises predicted
 * iteration times within 1 % on random instances and never exceeds a
 * memory limit; the controller converges to within 5 % of equal times in
 * ≤ 5 updates from a 4× imbalance with 5 % timing noise and does not move
 * inside its dead band; the PI variant converges too. */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cloudfit/advisor/hetero.h"
#include "cloudfit/advisor/rebalance.h"

static void test_split_closed_form(void **state)
{
    (void)state;
    /* Two workers, no fixed cost: b ∝ speed. */
    double alpha[2] = {0, 0}, beta[2] = {1e-3, 4e-3}, t;
    int b[2];
    assert_int_equal(cf_hetero_split(alpha, beta, NULL, 2, 500, b, &t), CF_OK);
    assert_int_equal(b[0], 400);
    assert_int_equal(b[1], 100);
    assert_float_equal(t, 0.4, 1e-12);
    /* T = (M + Σ α/β)/Σ 1/β */
    double a2[2] = {0.01, 0.05}, b2[2] = {1e-3, 2e-3};
    assert_int_equal(cf_hetero_split(a2, b2, NULL, 2, 300, b, &t), CF_OK);
    double tt = (300 + 0.01 / 1e-3 + 0.05 / 2e-3) / (1 / 1e-3 + 1 / 2e-3);
    assert_int_equal(b[0], (int)lround((tt - 0.01) / 1e-3));
    assert_int_equal(b[0] + b[1], 300);
    /* A memory limit binds: the fast worker is capped, the rest goes to the other. */
    int max_b[2] = {250, 0};
    assert_int_equal(cf_hetero_split(alpha, beta, max_b, 2, 500, b, &t), CF_OK);
    assert_int_equal(b[0], 250);
    assert_int_equal(b[1], 250);
    assert_int_equal(cf_hetero_split(alpha, beta, (int[]){100, 100}, 2, 500, b, NULL), CF_ERR_INFEASIBLE);
}

static void test_split_random_instances(void **state)
{
    (void)state;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 15);
    int worst_over = 0;
    double worst_spread = 0;
    for (int trial = 0; trial < 2000; trial++) {
        /* 2–32 workers, speeds 1–20× apart, fixed costs, memory limits;
         * a global batch that leaves every worker below its limit ≥ 100
         * samples (integer batches: one sample is then ≤ 1 % of a time). */
        int n = 2 + (int)gsl_rng_uniform_int(rng, 31);
        double alpha[32], beta[32], cont[32];
        int max_b[32], b[32];
        long cap = 0, m = 0;
        for (int tries = 0; tries < 100; tries++) {
            cap = 0;
            for (int i = 0; i < n; i++) {
                alpha[i] = 0.002 + 0.05 * gsl_rng_uniform(rng);
                beta[i] = 1e-4 * exp(log(20.0) * gsl_rng_uniform(rng));
                max_b[i] = 200 + (int)gsl_rng_uniform_int(rng, 4000);
                cap += max_b[i];
            }
            m = 200L * n + (long)gsl_rng_uniform_int(rng, (unsigned long)(cap - 200L * n));
            assert_int_equal(cf_hetero_split(alpha, beta, NULL, n, m, b, NULL), CF_OK);
            int ok = 1;
            for (int i = 0; i < n; i++)
                ok &= b[i] >= 100 || b[i] >= max_b[i];
            if (ok)
                break;
        }
        (void)cont;
        assert_int_equal(cf_hetero_split(alpha, beta, max_b, n, m, b, NULL), CF_OK);
        long sum = 0;
        double t_free_max = 0, t_free_min = INFINITY, t_max = 0;
        for (int i = 0; i < n; i++) {
            sum += b[i];
            assert_true(b[i] >= 1);
            worst_over |= b[i] > max_b[i];
            double ti = alpha[i] + beta[i] * b[i];
            t_max = fmax(t_max, ti);
            if (b[i] < max_b[i] && b[i] > 1) {
                t_free_max = fmax(t_free_max, ti);
                t_free_min = fmin(t_free_min, ti);
            }
        }
        assert_int_equal(sum, m);
        /* Workers below their limit share one predicted time (integer
         * batches: within 1 %); capped workers finish no later. */
        if (isfinite(t_free_min)) {
            double spread = t_free_max / t_free_min - 1;
            worst_spread = fmax(worst_spread, spread);
            if (spread > 0.01) {
                for (int i = 0; i < n; i++)
                    printf("   w%d a %.4f b %.6f max %d -> %d t %.5f\n", i, alpha[i], beta[i], max_b[i], b[i],
                           alpha[i] + beta[i] * b[i]);
                printf("   M %ld\n", m);
            }
            assert_true(spread <= 0.01);
            assert_true(t_max <= t_free_max * 1.01);
        }
    }
    assert_false(worst_over);
    printf("  2000 random instances (2-32 workers, speeds up to 20x apart): worst spread of predicted iteration times %.3f %%, never over a limit\n",
           100 * worst_spread);
    gsl_rng_free(rng);
}

/* Simulated workers t_i = (α_i + β_i·b_i)·(1 + noise·N(0,1)). */
typedef struct {
    double alpha[8], beta[8];
    int n;
} workers;

static double true_spread(const workers *w, const int *b)
{
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < w->n; i++) {
        double t = w->alpha[i] + w->beta[i] * b[i];
        lo = fmin(lo, t);
        hi = fmax(hi, t);
    }
    return hi / lo - 1;
}

/* Updates until the true times are within 5 %; returns how many it took
 * (up to `limit`, then limit + 1). */
static int updates_to_balance(const workers *w, long m, const cf_rebalance_settings *s, double noise, gsl_rng *rng,
                              int limit)
{
    cf_rebalance c;
    assert_int_equal(cf_rebalance_init(&c, w->n, m, NULL, NULL, s), CF_OK);
    if (true_spread(w, c.batch) <= 0.05)
        return 0;
    for (int iter = 0; iter < 1000; iter++) {
        double t[8];
        for (int i = 0; i < w->n; i++)
            t[i] = (w->alpha[i] + w->beta[i] * c.batch[i]) * (1 + noise * gsl_ran_gaussian(rng, 1.0));
        assert_true(cf_rebalance_observe(&c, t) >= 0);
        if (c.in_window == 0 && true_spread(w, c.batch) <= 0.05)
            return c.updates;
        if (c.updates > limit)
            break;
    }
    return limit + 1;
}

static void test_controller_converges_from_4x(void **state)
{
    (void)state;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 7);
    cf_rebalance_settings p = cf_rebalance_defaults(), pi = p;
    pi.kind = CF_REBALANCE_PI;
    int worst_p = 0, worst_pi = 0;
    for (int trial = 0; trial < 300; trial++) {
        /* 2 to 4 workers, the slowest 4× the fastest per sample, a fixed
         * cost of 2–10 % of the iteration. */
        workers w = {.n = 2 + trial % 3};
        for (int i = 0; i < w.n; i++) {
            w.beta[i] = 1e-3 * (i == 0 ? 1 : i == w.n - 1 ? 4 : 1 + 3 * gsl_rng_uniform(rng));
            w.alpha[i] = (0.02 + 0.08 * gsl_rng_uniform(rng)) * w.beta[i] * 128;
        }
        int k = updates_to_balance(&w, 128L * w.n, &p, 0.05, rng, 5);
        worst_p = k > worst_p ? k : worst_p;
        int kpi = updates_to_balance(&w, 128L * w.n, &pi, 0.05, rng, 30);
        worst_pi = kpi > worst_pi ? kpi : worst_pi;
    }
    printf("  300 trials from a 4x imbalance, 5 %% noise: proportional balanced within %d updates, PI within %d\n",
           worst_p, worst_pi);
    assert_true(worst_p <= 5);
    assert_true(worst_pi <= 20);
    gsl_rng_free(rng);
}

static void test_controller_dead_band(void **state)
{
    (void)state;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 9);
    for (int kind = 0; kind < 2; kind++) {
        /* Inside the band (true times 1 % apart), 2 % noise per
         * iteration: nothing moves, ever. */
        workers w = {.n = 2, .alpha = {0.01, 0.01}, .beta = {1e-3, 2.02e-3}};
        int init[2] = {200, 100};
        cf_rebalance_settings s = cf_rebalance_defaults();
        s.kind = (cf_rebalance_kind)kind;
        cf_rebalance c;
        assert_int_equal(cf_rebalance_init(&c, 2, 300, init, NULL, &s), CF_OK);
        for (int iter = 0; iter < 500; iter++) {
            double t[2];
            for (int i = 0; i < 2; i++)
                t[i] = (w.alpha[i] + w.beta[i] * c.batch[i]) * (1 + 0.02 * gsl_ran_gaussian(rng, 1.0));
            assert_int_equal(cf_rebalance_observe(&c, t), 0);
        }
        assert_int_equal(c.changes, 0);
        assert_int_equal(c.batch[0], 200);
        assert_int_equal(c.updates, 500 / CF_REBALANCE_WINDOW);
    }
    gsl_rng_free(rng);
}

static void test_controller_limits_and_errors(void **state)
{
    (void)state;
    cf_rebalance c;
    int max_b[2] = {150, 0};
    assert_int_equal(cf_rebalance_init(&c, 2, 300, NULL, max_b, NULL), CF_OK);
    for (int iter = 0; iter < 100; iter++) {
        double t[2] = {0.001 * c.batch[0], 0.004 * c.batch[1]};
        assert_true(cf_rebalance_observe(&c, t) >= 0);
        assert_true(c.batch[0] <= 150);
        assert_int_equal(c.batch[0] + c.batch[1], 300);
    }
    assert_int_equal(c.batch[0], 150); /* the fast worker sits at its limit */
    double bad[2] = {0.1, -1};
    assert_int_equal(cf_rebalance_observe(&c, bad), -1);
    assert_int_equal(cf_rebalance_init(&c, 3, 2, NULL, NULL, NULL), CF_ERR_INVALID);
    assert_int_equal(cf_rebalance_init(&c, 2, 10, (int[]){3, 3}, NULL, NULL), CF_ERR_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_closed_form),
        cmocka_unit_test(test_split_random_instances),
        cmocka_unit_test(test_controller_converges_from_4x),
        cmocka_unit_test(test_controller_dead_band),
        cmocka_unit_test(test_controller_limits_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
