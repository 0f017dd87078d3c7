/* Heterogeneous jobs and dynamic batching (advisor/plan/hetero.c,
 * advisor/plan/rebalance.c): the closed-form split equalises predicted
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
#include "../advisor/advisor_internal.h"
#include "../advisor/model/perf_internal.h"
#include "../advisor/model/stateff_internal.h"
#include "../advisor/plan/hetero_internal.h"

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
    int updates = true_spread(w, c.batch) <= 0.05 ? 0 : limit + 1;
    for (int iter = 0; iter < 1000 && updates > limit; iter++) {
        double t[8];
        for (int i = 0; i < w->n; i++)
            t[i] = (w->alpha[i] + w->beta[i] * c.batch[i]) * (1 + noise * gsl_ran_gaussian(rng, 1.0));
        assert_true(cf_rebalance_observe(&c, t) >= 0);
        if (c.in_window == 0 && true_spread(w, c.batch) <= 0.05)
            updates = c.updates; /* the first time: ends the loop */
        if (c.updates > limit)
            break;
    }
    cf_rebalance_free(&c);
    return updates;
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
    fflush(stdout);
    assert_true(worst_p <= 5);
    assert_true(worst_pi <= 12);
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
        cf_rebalance_free(&c);
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
    cf_rebalance_free(&c);
    assert_int_equal(cf_rebalance_init(&c, 3, 2, NULL, NULL, NULL), CF_ERR_INVALID);
    cf_rebalance_free(&c);
    assert_int_equal(cf_rebalance_init(&c, 2, 10, (int[]){3, 3}, NULL, NULL), CF_ERR_INVALID);
    cf_rebalance_free(&c);
}

/* With 15 % timing noise per iteration, independent, drifting (AR(1) per
 * worker, φ = 0.9: a shared machine's slow and fast stretches) or with
 * spikes (5 % of iterations 5–20× slower: a descheduled process), the
 * trimmed window times, the noise band and the hysteresis keep the
 * batches still in ≤ 10 % of windows once balanced, while a real 2×
 * slow-down is still followed. */
static void test_controller_noise_band(void **state)
{
    (void)state;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 11);
    for (int drift = 0; drift < 3; drift++) { /* 0: independent, 1: AR(1), 2: spikes */
        for (int window = 10; window <= 20; window += 10) {
            workers w = {.n = 2, .alpha = {0.005, 0.005}, .beta = {1e-4, 3e-4}};
            cf_rebalance_settings s = cf_rebalance_defaults();
            s.window = window;
            cf_rebalance c;
            assert_int_equal(cf_rebalance_init(&c, 2, 512, (int[]){384, 128}, NULL, &s), CF_OK);
            double ar[2] = {0, 0}, phi = drift == 1 ? 0.9 : 0, sigma = 0.15;
            int windows = 400, moved_at = -1;
            for (int iter = 0; iter < windows * window; iter++) {
                if (iter == windows * window * 3 / 4)
                    w.beta[0] *= 2; /* a real change: the fast worker slows to 2/3 of the other's speed */
                double t[2];
                for (int i = 0; i < 2; i++) {
                    ar[i] = phi * ar[i] + sqrt(1 - phi * phi) * sigma * gsl_ran_gaussian(rng, 1.0);
                    t[i] = (w.alpha[i] + w.beta[i] * c.batch[i]) * fmax(0.2, 1 + ar[i]);
                    if (drift == 2 && gsl_rng_uniform(rng) < 0.05)
                        t[i] *= 5 + 15 * gsl_rng_uniform(rng);
                }
                int changed = cf_rebalance_observe(&c, t);
                assert_true(changed >= 0);
                if (changed && moved_at < 0 && iter >= windows * window * 3 / 4)
                    moved_at = c.updates - windows * 3 / 4;
                if (iter == windows * window * 3 / 4 - 1) {
                    printf("  15 %% noise%s, window %d: batches changed in %d of %d windows (band %.3f), %d/%d\n",
                           drift == 1 ? " (AR(1) 0.9)" : drift == 2 ? " and 5 % spikes of 5-20x" : "", window,
                           c.changes, c.updates, c.band, c.batch[0], c.batch[1]);
                    assert_true(c.changes <= c.updates / 10);
                    assert_int_equal(c.n_below_floor, 0);
                }
            }
            printf("    then the fast worker 2x slower: followed after %d windows, %d/%d (balanced %.0f/%.0f)\n",
                   moved_at, c.batch[0], c.batch[1], 512 * (1 / 2e-4) / (1 / 2e-4 + 1 / 3e-4),
                   512 * (1 / 3e-4) / (1 / 2e-4 + 1 / 3e-4));
            assert_true(moved_at >= 1 && moved_at <= 6);
            assert_true(fabs(c.batch[0] - 307.2) < 0.2 * 307.2);
            cf_rebalance_free(&c);
        }
    }
    gsl_rng_free(rng);
}

/* The floor: a worker fed times that make it look ever slower (a
 * wall-clock signal) is flagged once its share is under 25 % of an
 * equal share. */
static void test_controller_floor(void **state)
{
    (void)state;
    cf_rebalance c;
    assert_int_equal(cf_rebalance_init(&c, 2, 512, NULL, NULL, NULL), CF_OK);
    assert_int_equal(c.n_below_floor, 0);
    for (int iter = 0; iter < 400 && !c.n_below_floor; iter++) {
        double t[2] = {1e-4 * c.batch[0], 2e-3 * c.batch[1]}; /* 20x slower per sample */
        assert_true(cf_rebalance_observe(&c, t) >= 0);
    }
    assert_int_equal(c.n_below_floor, 1);
    assert_true(c.below_floor[1] && !c.below_floor[0] && c.batch[1] < 64);
    cf_rebalance_free(&c);
    cf_rebalance_settings s = cf_rebalance_defaults();
    s.min_share = 1.5;
    assert_int_equal(cf_rebalance_init(&c, 2, 512, NULL, NULL, &s), CF_ERR_INVALID);
    cf_rebalance_free(&c);
    cf_error_clear();
}

/* ---- two-type jobs on real VM shapes -------------------------------------------------- */

typedef struct {
    cf_job job;
    cf_constraints limits;
    cf_vm vm[2];
    const cf_vm *rows[2];
    cf_gpu_perf perf[2];
    cf_noise_model noise;
    cf_advisor_input in;
    cf_config chosen;
    cf_advice advice;
} mix_case;

/* Two single-GPU VMs types in one region, compute t(m) = α + β·m (the
 * first type 3× faster per sample), a 100 M-parameter model, NICs of
 * `nic0` and `nic1` Gbit/s and no measured network: each VM's default for
 * its NIC applies. */
static void mix_case_init(mix_case *c, double nic0, double nic1)
{
    memset(c, 0, sizeof *c);
    c->job = (cf_job){.parameters = 1e8, .gradient_bytes = 4, .batch = 256, .lr = 0.1, .total_samples = 1e8,
                      .lr_rule = CF_LR_GAIN, .optimizer = CF_OPT_SGD};
    c->limits = (cf_constraints){.objective = CF_OBJ_TIME, .max_gpus = 64, .max_nodes = 16, .max_accumulation = 8,
                                 .max_global_batch = 4096, .spot = CF_SPOT_NEVER};
    const char *gpu[2] = {"FAST", "SLOW"};
    double nic[2] = {nic0, nic1}, beta[2] = {1e-3, 3e-3};
    for (int t = 0; t < 2; t++) {
        c->vm[t] = (cf_vm){.cloud = "aws", .region = "r1", .gpu_count = 1, .network_gbps = nic[t],
                           .price_ondemand_usd_per_hr = 1.0 + t};
        snprintf(c->vm[t].instance_type, sizeof c->vm[t].instance_type, "%s.1x", gpu[t]);
        snprintf(c->vm[t].gpu_model, sizeof c->vm[t].gpu_model, "%s", gpu[t]);
        c->rows[t] = &c->vm[t];
        snprintf(c->perf[t].gpu, sizeof c->perf[t].gpu, "%s", gpu[t]);
        c->perf[t].params = cf_perf_defaults(NULL);
        c->perf[t].params.alpha_s = 0.02;
        c->perf[t].params.beta_s = beta[t];
        c->perf[t].params.max_local_batch = 512;
        c->perf[t].params.gradient_bytes = c->job.parameters * c->job.gradient_bytes;
    }
    cf_noise_model_init(&c->noise, c->job.batch, 1e5, NULL, 0, CF_PROV_MEASURED);
    c->in = (cf_advisor_input){.job = &c->job, .constraints = &c->limits, .vms = c->rows, .n_vms = 2,
                               .perf = c->perf, .n_perf = 2, .noise = &c->noise, .top = 1};
    c->chosen = (cf_config){.vm = &c->vm[0], .nodes = 1, .gpus_per_node = 1, .hours = 5.0};
    c->advice = (cf_advice){.ranked = &c->chosen, .n_ranked = 1};
}

/* The all-reduce of a mix is the slower of the two types' inter-VM terms
 * on their own VMs' NICs (cf_gpu_perf_on_vm), not a 10 Gbit/s default. */
static void test_mix_uses_each_vms_network(void **state)
{
    (void)state;
    double nics[][2] = {{400, 400}, {400, 25}, {25, 400}};
    for (size_t k = 0; k < sizeof nics / sizeof *nics; k++) {
        mix_case *c = test_malloc(sizeof *c);
        mix_case_init(c, nics[k][0], nics[k][1]);
        cf_hetero_advice *h = test_malloc(sizeof *h);
        assert_int_equal(cf_hetero_search(&c->in, &c->advice, h), CF_OK);
        assert_true(h->have);
        const cf_hetero_plan *p = &h->best;
        int nodes = p->nodes[0] + p->nodes[1], gpus = nodes;
        double bytes = c->job.parameters * c->job.gradient_bytes, want = 0, at_default = 0;
        for (int t = 0; t < 2; t++) {
            cf_perf_params on_vm = cf_gpu_perf_on_vm(&c->perf[t], nics[k][t]);
            want = fmax(want, cf_perf_network_term(&on_vm, bytes, nodes, 1, gpus).allreduce_s);
            cf_perf_params unknown = cf_gpu_perf_on_vm(&c->perf[t], 0);
            at_default = fmax(at_default, cf_perf_network_term(&unknown, bytes, nodes, 1, gpus).allreduce_s);
        }
        printf("  NICs %g/%g Gbit/s: %d + %d VMs, all-reduce %.4f s (each VM's NIC: %.4f s; unknown NIC: %.4f s)\n",
               nics[k][0], nics[k][1], p->nodes[0], p->nodes[1], p->sync_s, want, at_default);
        assert_true(nodes >= 2);
        assert_float_equal(p->sync_s, want, 1e-12);
        if (nics[k][0] == 400 && nics[k][1] == 400)
            assert_true(p->sync_s < at_default / 10); /* 400 Gbit/s RDMA against the 10 Gbit/s default */
        test_free(h);
        test_free(c);
    }
}

/* The equal-batch baseline against its closed form: the slowest worker at
 * the equal batch, max_k(α_k + β_k·M/K), over the balanced time
 * (M + Σα_i/β_i)/Σ(1/β_i); the all-reduce made negligible (a tiny model
 * on 400 Gbit/s) so the two steps are their compute. */
static void test_equal_batch_baseline_closed_form(void **state)
{
    (void)state;
    mix_case *c = test_malloc(sizeof *c);
    mix_case_init(c, 400, 400);
    c->job.parameters = 1e3;
    for (int t = 0; t < 2; t++)
        c->perf[t].params.gradient_bytes = c->job.parameters * c->job.gradient_bytes;
    int counts[][2] = {{1, 1}, {2, 1}, {1, 3}, {4, 2}};
    for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
        cf_perf_params pa = cf_gpu_perf_on_vm(&c->perf[0], 400), pb = cf_gpu_perf_on_vm(&c->perf[1], 400);
        cf_hetero_plan p = {.vm = {&c->vm[0], &c->vm[1]}, .nodes = {counts[k][0], counts[k][1]},
                            .gpus_per_node = {1, 1}, .accumulation = 1, .global_batch = 480};
        assert_int_equal(cf_hetero_evaluate(&c->in, &pa, &pb, &p), CF_OK);
        assert_int_equal(cf_hetero_equal_batches(&c->in, &pa, &pb, &p), CF_OK);
        double n[2] = {counts[k][0], counts[k][1]}, a[2], b[2], k_total = n[0] + n[1];
        for (int t = 0; t < 2; t++) {
            a[t] = c->perf[t].params.alpha_s;
            b[t] = c->perf[t].params.beta_s;
        }
        double m = 480, b_eq = ceil(m / k_total);
        double t_eq = fmax(a[0] + b[0] * b_eq, a[1] + b[1] * b_eq);
        double t_bal = (m + n[0] * a[0] / b[0] + n[1] * a[1] / b[1]) / (n[0] / b[0] + n[1] / b[1]);
        double closed = t_eq / t_bal;
        printf("  %g + %g workers, M 480: equal batches %d, step %.4f s; balanced %d/%d, step %.4f s; speed-up %.4f, "
               "closed form %.4f\n",
               n[0], n[1], p.equal_local_batch, p.equal_step_time_s, p.batch[0], p.batch[1], p.step_time_s,
               p.speedup_over_equal_batches, closed);
        assert_int_equal(p.equal_local_batch, (int)b_eq);
        assert_int_equal(p.equal_accumulation, 1);
        /* integer batches: the balanced step is within one sample of its real-valued time */
        assert_true(fabs(p.speedup_over_equal_batches / closed - 1) < 0.01);
    }
    /* An equal batch past the slower type's memory raises the accumulation. */
    c->perf[1].params.max_local_batch = 100;
    cf_perf_params pa = cf_gpu_perf_on_vm(&c->perf[0], 400), pb = cf_gpu_perf_on_vm(&c->perf[1], 400);
    cf_hetero_plan p = {.vm = {&c->vm[0], &c->vm[1]}, .nodes = {1, 1}, .gpus_per_node = {1, 1}, .accumulation = 1,
                        .global_batch = 480};
    assert_int_equal(cf_hetero_evaluate(&c->in, &pa, &pb, &p), CF_OK);
    assert_int_equal(cf_hetero_equal_batches(&c->in, &pa, &pb, &p), CF_OK);
    assert_int_equal(p.equal_accumulation, 3);
    assert_int_equal(p.equal_local_batch, 80);
    test_free(c);
}

/* --mix says why it has nothing, and does not blame the constraints when
 * it never looked. */
static void test_mix_reasons(void **state)
{
    (void)state;
    mix_case *c = test_malloc(sizeof *c);
    cf_hetero_advice *h = test_malloc(sizeof *h);
    mix_case_init(c, 25, 25);
    c->limits.spot = CF_SPOT_ONLY;
    assert_int_equal(cf_hetero_search(&c->in, &c->advice, h), CF_OK);
    assert_false(h->have);
    assert_int_equal(h->why_not, CF_HETERO_SPOT_ONLY);
    assert_int_equal(h->n_evaluated, 0);
    /* A spot plan under "allow": its VMs are mixed on demand. */
    c->limits.spot = CF_SPOT_ALLOW;
    c->chosen.spot = 1;
    assert_int_equal(cf_hetero_search(&c->in, &c->advice, h), CF_OK);
    assert_true(h->have && h->n_spot_priced_on_demand == 1);
    /* Sold as spot only: not mixed, and said so. */
    c->vm[0].price_ondemand_usd_per_hr = 0;
    c->vm[0].price_spot_usd_per_hr = 0.5;
    assert_int_equal(cf_hetero_search(&c->in, &c->advice, h), CF_OK);
    assert_false(h->have);
    assert_int_equal(h->why_not, CF_HETERO_NO_ONDEMAND_PRICE);
    /* No other GPU type in the region. */
    mix_case_init(c, 25, 25);
    snprintf(c->vm[1].region, sizeof c->vm[1].region, "r2");
    assert_int_equal(cf_hetero_search(&c->in, &c->advice, h), CF_OK);
    assert_int_equal(h->why_not, CF_HETERO_NO_PARTNER);
    /* A deadline nothing meets. */
    mix_case_init(c, 25, 25);
    c->limits.deadline_hours = 0.001;
    assert_int_equal(cf_hetero_search(&c->in, &c->advice, h), CF_OK);
    assert_int_equal(h->why_not, CF_HETERO_CONSTRAINTS);
    assert_true(h->n_fitting > 0 && h->n_feasible == 0);
    /* No room for two types within the node limit: said so, not "nothing fits memory". */
    mix_case_init(c, 25, 25);
    c->limits.max_nodes = 1;
    assert_int_equal(cf_hetero_search(&c->in, &c->advice, h), CF_OK);
    assert_int_equal(h->why_not, CF_HETERO_LIMITS);
    test_free(h);
    test_free(c);
}

/* The mix is held to the deadline at the confidence, as single-type plans
 * are (it was held at its point), with its interval around the point. */
static void test_mix_held_at_confidence(void **state)
{
    (void)state;
    mix_case *c = test_malloc(sizeof *c);
    cf_hetero_advice *h = test_malloc(sizeof *h);
    mix_case_init(c, 25, 25);
    assert_int_equal(cf_hetero_search(&c->in, &c->advice, h), CF_OK);
    assert_true(h->have);
    cf_hetero_plan p = h->best;
    assert_true(p.step_sigma_up > 0 && p.hours_p10 < p.hours && p.hours < p.hours_p90);
    assert_true(p.hours_at_confidence > p.hours);
    cf_perf_params pa = h->best_perf[0], pb = h->best_perf[1];
    c->limits.deadline_hours = (p.hours + p.hours_at_confidence) / 2; /* above the point, below the quantile */
    assert_int_equal(cf_hetero_evaluate(&c->in, &pa, &pb, &p), CF_OK);
    assert_false(p.feasible);
    c->limits.deadline_hours = p.hours_at_confidence * 1.001;
    assert_int_equal(cf_hetero_evaluate(&c->in, &pa, &pb, &p), CF_OK);
    assert_true(p.feasible);
    c->limits.confidence = 0.5; /* at the median the point decides */
    c->limits.deadline_hours = p.hours * 1.001;
    assert_int_equal(cf_hetero_evaluate(&c->in, &pa, &pb, &p), CF_OK);
    assert_true(p.feasible);
    test_free(h);
    test_free(c);
}

/* Global batches beyond the powers of two: three workers of batch 1 at most
 * have global batch 3 (none was tried: "never" alone); and a ceiling the
 * memory does not give is the recipe's batch over its current GPUs, as in
 * the enumeration (the mix took the whole recipe batch per GPU). */
static void test_mix_batches_and_ceiling(void **state)
{
    (void)state;
    mix_case *c = test_malloc(sizeof *c);
    mix_case_init(c, 25, 25);
    c->limits.max_accumulation = 1;
    for (int t = 0; t < 2; t++)
        c->perf[t].params.max_local_batch = 1;
    cf_perf_params pa = cf_gpu_perf_on_vm(&c->perf[0], 25), pb = cf_gpu_perf_on_vm(&c->perf[1], 25);
    cf_hetero_plan p = {.vm = {&c->vm[0], &c->vm[1]}, .nodes = {2, 1}, .gpus_per_node = {1, 1}};
    assert_int_equal(cf_hetero_plan_best_batch(&c->in, &pa, &pb, &p), 1);
    assert_int_equal(p.global_batch, 3);
    mix_case_init(c, 25, 25);
    c->job.batch = 1024;
    c->job.has_current = 1;
    c->job.current_nodes = 4;
    c->job.current_gpus_per_node = 8;
    for (int t = 0; t < 2; t++)
        c->perf[t].params.max_local_batch = 0; /* memory unknown */
    pa = cf_gpu_perf_on_vm(&c->perf[0], 25);
    pb = cf_gpu_perf_on_vm(&c->perf[1], 25);
    cf_hetero_plan q = {.vm = {&c->vm[0], &c->vm[1]}, .nodes = {1, 1}, .gpus_per_node = {1, 1}};
    assert_int_equal(cf_hetero_plan_best_batch(&c->in, &pa, &pb, &q), 1);
    assert_true(q.batch[0] <= 32 && q.batch[1] <= 32);
    test_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_closed_form),
        cmocka_unit_test(test_split_random_instances),
        cmocka_unit_test(test_controller_converges_from_4x),
        cmocka_unit_test(test_controller_dead_band),
        cmocka_unit_test(test_controller_limits_and_errors),
        cmocka_unit_test(test_controller_noise_band),
        cmocka_unit_test(test_controller_floor),
        cmocka_unit_test(test_mix_uses_each_vms_network),
        cmocka_unit_test(test_equal_batch_baseline_closed_form),
        cmocka_unit_test(test_mix_reasons),
        cmocka_unit_test(test_mix_held_at_confidence),
        cmocka_unit_test(test_mix_batches_and_ceiling),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
