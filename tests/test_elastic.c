/* Elastic plans and LR rules (advisor/plan/elastic.c, advisor/model/stateff.c;
 * docs/spot.md "Statistical progress while VMs are missing", "Elastic
 * plans"): the count below which an LR rule makes no expected progress,
 * against its closed form on a 16-VM plan (hold and shrink); `simulate`'s
 * statistical value of a batch is `recommend`'s statistical efficiency;
 * the gain rule's LR follows the noise-scale trace at the current
 * progress (AdaScale with the measured trace). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cloudfit/advisor/elastic.h"
#include "cloudfit/advisor/stateff.h"
#include "../advisor/model/perf_internal.h"
#include "../advisor/model/stateff_internal.h"
#include "../advisor/plan/elastic_internal.h"

typedef struct {
    cf_job job;
    cf_perf_params perf;
    cf_noise_model noise;
    cf_elastic_request req;
} plan_case;

/* 16 single-GPU VMs, per-GPU batch 50 × accumulation 2 (M_N = 1600),
 * memory for 50 per GPU, accumulation up to 3; SGD (gain exponent 1). */
static void plan_case_init(plan_case *c, double b_noise)
{
    memset(c, 0, sizeof *c);
    c->job = (cf_job){.parameters = 1e7, .gradient_bytes = 4, .batch = 100, .lr = 0.1, .total_samples = 1e8,
                      .lr_rule = CF_LR_GAIN, .optimizer = CF_OPT_SGD};
    c->perf = cf_perf_defaults(NULL);
    c->perf.alpha_s = 0.01;
    c->perf.beta_s = 1e-3;
    c->perf.max_local_batch = 50;
    cf_noise_model_init(&c->noise, c->job.batch, b_noise, NULL, 0, CF_PROV_MEASURED);
    c->req = (cf_elastic_request){.job = &c->job, .perf = &c->perf, .gradient_bytes = 4e7, .nodes = 16,
                                  .gpus_per_node = 1, .local_batch = 50, .accumulation = 2, .max_accumulation = 3,
                                  .max_local_batch = 50, .noise = &c->noise};
}

/* Under the fixed rule (the full plan's LR on fewer VMs) with a constant
 * B, x = r(B, M_N)/r(B, M_n) = M_N(B + M_n)/(M_n(B + M_N)) ≥ 2 exactly
 * when M_n ≤ T = M_N·B/(2B + M_N). B = 622: T = 349.9. Shrink: M_n = 100n,
 * so no progress at n ≤ 3; hold: accumulation 3 holds 150n, so n ≤ 2.
 * The old note said "1 VM and fewer" for both, and "diverges". */
static void test_no_progress_threshold_16_vms(void **state)
{
    (void)state;
    plan_case *c = test_malloc(sizeof *c);
    plan_case_init(c, 622);
    double m_full = 1600, b = 622, t = m_full * b / (2 * b + m_full);
    double rate[17], samples[17];
    struct {
        cf_elastic_batch batch;
        double per_node; /* M_n = per_node·n below the held range */
        int expect;
    } cases[] = {{CF_ELASTIC_SHRINK, 100, 3}, {CF_ELASTIC_HOLD, 150, 2}};
    for (size_t k = 0; k < 2; k++) {
        c->req.batch = cases[k].batch;
        int closed = (int)floor(t / cases[k].per_node);
        int got = cf_elastic_rule_rates(&c->req, CF_LR_NONE, rate, samples);
        printf("  16 VMs, %s, fixed rule: no progress at <= %d VMs (closed form %d: M_n <= %.1f)\n",
               cases[k].batch == CF_ELASTIC_HOLD ? "hold" : "shrink", got, closed, t);
        assert_int_equal(closed, cases[k].expect);
        assert_int_equal(got, cases[k].expect);
        for (int n = 1; n <= 16; n++) {
            if (n <= got)
                assert_true(rate[n] == 0 && samples[n] > 0);
            else
                assert_true(rate[n] > 0);
        }
        /* the gain rule (AdaScale) has progress at every count */
        assert_int_equal(cf_elastic_rule_rates(&c->req, CF_LR_GAIN, rate, samples), 0);
        for (int n = 1; n <= 16; n++)
            assert_true(rate[n] > 0);
    }
    test_free(c);
}

/* A noise-scale trace that grows tenfold over training. */
static const cf_noise_point TRACE[] = {{0.0, 300}, {0.1, 1200}, {0.5, 2500}, {1.0, 3000}};

/* simulate's value of the samples at a batch is recommend's statistical
 * efficiency E0/E(M): with the LR at the optimum (gain rule, or the batch
 * held), rate[n]/samples[n] = eff(M_n)/eff(M_N) on every count. */
static void test_simulate_and_recommend_agree(void **state)
{
    (void)state;
    plan_case *c = test_malloc(sizeof *c);
    plan_case_init(c, 622);
    cf_noise_model_init(&c->noise, c->job.batch, 0, TRACE, 4, CF_PROV_MEASURED);
    c->req.batch = CF_ELASTIC_SHRINK;
    double rate[17], samples[17], worst = 0;
    assert_int_equal(cf_elastic_rule_rates(&c->req, CF_LR_GAIN, rate, samples), 0);
    double eff_full = cf_stat_efficiency(&c->noise, 1600);
    for (int n = 1; n <= 16; n++) {
        double m = 100.0 * n, want = cf_stat_efficiency(&c->noise, m) / eff_full;
        worst = fmax(worst, fabs(rate[n] / samples[n] / want - 1));
    }
    printf("  gain rule, shrink: simulate's value / recommend's efficiency - 1: at most %.2e over 16 counts\n", worst);
    assert_true(worst < 1e-12);
    /* the same integrand: forced through the integral (x ≡ 1 by another
     * route) it gives recommend's E0/E(M) */
    for (double m = 50; m <= 6400; m *= 2) {
        double by_integral = cf_stat_efficiency_lr(&c->noise, m, m * (1 + 1e-13), 1.0, 1.0, NULL);
        assert_true(fabs(by_integral / cf_stat_efficiency(&c->noise, m) - 1) < 1e-5);
    }
    /* the elastic plan's progress (recommend's JSON) uses the same values */
    cf_elastic_plan *plan = test_malloc(sizeof *plan);
    c->req.batch = CF_ELASTIC_SHRINK;
    assert_int_equal(cf_elastic_plan_for(&c->req, plan), CF_OK);
    for (int n = 1; n <= 16; n++)
        assert_true(fabs(plan->points[n - 1].progress_rate - rate[n]) < 1e-12);
    test_free(plan);
    test_free(c);
}

/* The gain rule's LR at progress p is lr0·r(B(p)): AdaScale with the
 * measured trace; with the run's effective (constant) B it would be
 * higher early on, where B is still small. */
static void test_lr_follows_the_trace(void **state)
{
    (void)state;
    plan_case *c = test_malloc(sizeof *c);
    plan_case_init(c, 622);
    cf_noise_model_init(&c->noise, c->job.batch, 0, TRACE, 4, CF_PROV_MEASURED);
    cf_lr_function f = cf_lr_function_of(&c->job, &c->noise);
    double m = 1600, m0 = 100;
    for (double p = 0; p <= 1.0; p += 0.05) {
        double b = p <= 0.1 ? 300 + 9000 * p : p <= 0.5 ? 1200 + 3250 * (p - 0.1) : 2500 + 1000 * (p - 0.5);
        double want = 0.1 * (b + m0) * m / ((b + m) * m0);
        assert_true(fabs(cf_lr_function_eval_at(&f, m, p) / want - 1) < 1e-9);
    }
    double start = cf_lr_function_eval_at(&f, m, 0), effective = cf_lr_function_eval(&f, m);
    printf("  M 1600: LR %.4f at the start, %.4f at the end; %.4f with the effective B %.0f (%.2fx the start's)\n",
           start, cf_lr_function_eval_at(&f, m, 1), effective, c->noise.b_noise_effective, effective / start);
    assert_true(effective > 1.5 * start);
    /* the points kept for launch specs are the trace's */
    assert_int_equal(c->noise.n_points, 4);
    assert_true(c->noise.points[2].progress_fraction == 0.5 && c->noise.points[2].b_noise == 2500);
    /* the elastic plan reports both ends */
    cf_elastic_plan *plan = test_malloc(sizeof *plan);
    assert_int_equal(cf_elastic_plan_for(&c->req, plan), CF_OK);
    assert_true(fabs(plan->points[15].lr_start - start) < 1e-12);
    assert_true(plan->points[15].lr_end > plan->points[15].lr_start);
    test_free(plan);
    test_free(c);
}

/* Holding the batch rounds the per-GPU batch to the nearest, which may go
 * past search.max_global_batch: 4 single-GPU VMs at 128 (M_N = 512, the
 * limit) on 3 VMs held 3 × 171 = 513. Every count stays within the limit:
 * 3 × 170 = 510. */
static void test_hold_stays_within_max_global_batch(void **state)
{
    (void)state;
    plan_case *c = test_malloc(sizeof *c);
    plan_case_init(c, 1000);
    c->req.nodes = 4;
    c->req.local_batch = 128;
    c->req.accumulation = 1;
    c->req.max_accumulation = 1;
    c->req.max_local_batch = 200;
    c->req.max_global_batch = 512;
    cf_elastic_plan *plan = test_malloc(sizeof *plan);
    assert_int_equal(cf_elastic_plan_for(&c->req, plan), CF_OK);
    for (int n = 1; n <= 4; n++) {
        printf("  %d VMs: %d × %d = %ld\n", n, plan->points[n - 1].local_batch, plan->points[n - 1].accumulation,
               plan->points[n - 1].global_batch);
        assert_true(plan->points[n - 1].global_batch <= 512);
    }
    assert_int_equal(plan->points[2].local_batch, 170);
    assert_int_equal(plan->points[2].global_batch, 510);
    assert_int_equal(plan->points[3].global_batch, 512);
    /* no limit: the nearest, as before */
    c->req.max_global_batch = 0;
    assert_int_equal(cf_elastic_plan_for(&c->req, plan), CF_OK);
    assert_int_equal(plan->points[2].global_batch, 513);
    test_free(plan);
    test_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_progress_threshold_16_vms),
        cmocka_unit_test(test_simulate_and_recommend_agree),
        cmocka_unit_test(test_lr_follows_the_trace),
        cmocka_unit_test(test_hold_stays_within_max_global_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
