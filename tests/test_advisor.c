/* Advisor: formulas against hand-computed values, the Pareto front against
 * brute force, and the enumeration's invariants on a small catalog. */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <gsl/gsl_rng.h>

#include "cloudfit/advisor.h"
#include "cloudfit/advisor/explain.h"
#include "cloudfit/advisor/carry.h"
#include "cloudfit/common/json.h"
#include "cloudfit/spec.h"
#include "../advisor/advisor_internal.h"
#include "../advisor/model/carry_internal.h"
#include "../advisor/model/perf_internal.h"
#include "../advisor/model/stateff_internal.h"
#include "../advisor/plan/elastic_internal.h"
#include "../advisor/plan/explain_internal.h"

/* A 1-GPU line t = 0.05 + 0.004·m, κ = 0.02, an 80 Gbit/s in-node link, a
 * probe-fitted 8 Gbit/s on a 50 Gbit/s NIC, ρ = 0.5, c0 = 0.01 s. */
static cf_perf_params hand_params(void)
{
    cf_perf_params p = cf_perf_defaults(NULL);
    p.alpha_s = 0.05;
    p.beta_s = 0.004;
    p.contention = 0.02;
    p.intra_gbps = 80;
    p.nic_gbps = 50;
    p.inter_gbps = 8;
    p.hide = 0.5;
    p.overhead_s = 0.01;
    p.network_provenance = CF_PROV_FITTED;
    p.gradient_bytes = 100e6;
    return p;
}

static void test_compute_time(void **state)
{
    (void)state;
    cf_perf_params p = hand_params();
    assert_float_equal(cf_perf_compute_s(&p, 100, 1), 0.45, 1e-12);
    /* 4 GPUs from the 1-GPU line: + t1·κ·3; the in-node ring of 100 MB,
     * 1.5 × 0.8 Gbit / (0.5 × 80 Gbit/s) = 0.03 s, hides behind ρ_def·t1 = 0.045 s */
    assert_float_equal(cf_perf_compute_s(&p, 100, 4), 0.45 * 1.06, 1e-12);
    /* 1 GB of gradients: the ring, 0.3 s, shows 0.3 − 0.045 */
    p.gradient_bytes = 1e9;
    assert_float_equal(cf_perf_compute_s(&p, 100, 4), 0.45 * 1.06 + 0.255, 1e-12);
    /* profiled curves: the profile's own time at its batches, linear in the
     * batch between (α + βm: log-log would give √(0.1 · 0.25) = 0.158 at 64) */
    cf_perf_params q = cf_perf_defaults(NULL);
    q.n_curves = 2;
    q.curves[0] = (cf_perf_curve){.gpus = 1, .n = 2, .batch = {32, 128}, .step_s = {0.1, 0.25}};
    q.curves[1] = (cf_perf_curve){.gpus = 4, .n = 2, .batch = {32, 128}, .step_s = {0.12, 0.29}};
    assert_float_equal(cf_perf_compute_s(&q, 32, 4), 0.12, 1e-15);
    assert_float_equal(cf_perf_compute_s(&q, 64, 1), 0.15, 1e-12);           /* 0.1 + 0.15 · 32/96 */
    assert_float_equal(cf_perf_compute_s(&q, 32, 2), 0.1 + (0.02) / 3, 1e-12); /* linear in g between 1 and 4 */
    assert_float_equal(cf_perf_compute_s(&q, 256, 1), 0.25 + 0.15 / 96 * 128, 1e-12); /* the end's slope beyond */
    /* the light profile: three batches on one GPU resolve a knee (flat to
     * 160, then linear), two on the full node do not; the full node takes
     * the 1-GPU shape plus its measured difference (0.03 s at 20, 0.05 s at
     * 800: 0.03 + 0.02 · 140/780 at 160), not the chord 0.13 + 0.42 · 140/780 */
    cf_perf_params k = cf_perf_defaults(NULL);
    k.n_curves = 2;
    k.curves[0] = (cf_perf_curve){.gpus = 1, .n = 3, .batch = {20, 160, 800}, .step_s = {0.10, 0.12, 0.50}};
    k.curves[1] = (cf_perf_curve){.gpus = 8, .n = 2, .batch = {20, 800}, .step_s = {0.13, 0.55}};
    assert_float_equal(cf_perf_compute_s(&k, 160, 8), 0.12 + 0.03 + 0.02 * 140 / 780, 1e-12);
    assert_float_equal(cf_perf_compute_s(&k, 20, 8), 0.13, 1e-12);     /* its own measurements stand */
    assert_float_equal(cf_perf_compute_s(&k, 800, 8), 0.55, 1e-12);
    assert_float_equal(cf_perf_compute_s(&k, 1000, 8), 0.50 + 0.38 / 640 * 200 + 0.05, 1e-12); /* held beyond */
    assert_float_equal(cf_perf_compute_s(&k, 160, 1), 0.12, 1e-12);     /* the dense curve is its own */
    /* what a search's probes left (two clouds of one GPU type): 3 GPUs at
     * 513–1025, denser than the 1-GPU curve but not spanning it, and two
     * batches 0.1 % apart. The 1-GPU curve keeps its own chord (the 3-GPU
     * shape extrapolated to 4096 lent it a 2.8 s step at 2051); the 3-GPU
     * curve, narrower, follows the 1-GPU one beyond 1025 plus its
     * difference there (measured at 2051: 0.211 and 0.215 s), not a slope
     * from 1024 → 1025 */
    cf_perf_params w = cf_perf_defaults(NULL);
    w.n_curves = 2;
    w.curves[0] = (cf_perf_curve){.gpus = 1, .n = 3, .batch = {32, 513, 4096}, .step_s = {0.0341, 0.0712, 0.4123}};
    w.curves[1] = (cf_perf_curve){.gpus = 3, .n = 4, .batch = {513, 725, 1024, 1025}, .step_s = {0.0725, 0.0893, 0.1187, 0.1213}};
    assert_float_equal(cf_perf_compute_s(&w, 2051, 1), 0.0712 + (0.4123 - 0.0712) * 1538 / 3583, 1e-12);
    double one_at = 0.0712 + (0.4123 - 0.0712) * 1538 / 3583, one_1025 = 0.0712 + (0.4123 - 0.0712) * 512 / 3583;
    assert_float_equal(cf_perf_compute_s(&w, 2051, 3), one_at + (0.1213 - one_1025), 1e-12);
    assert_float_equal(cf_perf_compute_s(&w, 725, 3), 0.0893, 1e-12); /* its own measurements stand */
    /* a borrower far beyond its own two batches: the lent shape plus its
     * difference, not the floor of half its own extrapolated chord */
    cf_perf_params v = cf_perf_defaults(NULL);
    v.n_curves = 2;
    v.curves[0] = (cf_perf_curve){.gpus = 1, .n = 5, .batch = {23, 35, 292, 293, 1371}, .step_s = {0.139, 0.1449, 0.2562, 0.2603, 0.7441}};
    v.curves[1] = (cf_perf_curve){.gpus = 2, .n = 2, .batch = {34, 35}, .step_s = {0.1504, 0.1533}};
    double one_2518 = 0.7441 + (0.7441 - 0.2603) / 1078 * 1147;
    assert_float_equal(cf_perf_compute_s(&v, 2518, 2), one_2518 + (0.1533 - 0.1449), 1e-12);
    /* one batch and no curve spanning it: the widest other curve's slope
     * per sample (NCF on DGX, flat in the batch: 1 GPU at 363 predicted at
     * 32768 was 0.74 s by the one-batch rule; measured 0.014 s on 8) */
    cf_perf_params u = cf_perf_defaults(NULL);
    u.n_curves = 3;
    u.curves[0] = (cf_perf_curve){.gpus = 1, .n = 1, .batch = {363}, .step_s = {0.0096}};
    u.curves[1] = (cf_perf_curve){.gpus = 5, .n = 2, .batch = {1024, 2901}, .step_s = {0.0101, 0.0099}};
    u.curves[2] = (cf_perf_curve){.gpus = 8, .n = 2, .batch = {11606, 23211}, .step_s = {0.0130, 0.0143}};
    assert_float_equal(cf_perf_compute_s(&u, 32768, 1), 0.0096, 1e-12); /* the widest (5 GPUs) falls: slope 0 */
    u.curves[1].step_s[1] = 0.0130;
    assert_float_equal(cf_perf_compute_s(&u, 32768, 1), 0.0096 + 0.0029 / 1877 * (32768 - 363), 1e-12);
    /* and a lender of two batches where one spans it (5 GPUs at 91–2901):
     * its line plus the difference, never negative beyond */
    u.curves[1] = (cf_perf_curve){.gpus = 5, .n = 2, .batch = {91, 2901}, .step_s = {0.0101, 0.0099}};
    assert_float_equal(cf_perf_compute_s(&u, 32768, 1), 0.0099, 1e-12);
    /* no lender and two batches under 1.1× apart: the one-batch rule from
     * the nearest (fixed share φ), not the slope between them */
    w.n_curves = 1;
    w.curves[0] = (cf_perf_curve){.gpus = 1, .n = 2, .batch = {1024, 1025}, .step_s = {0.1187, 0.1213}};
    assert_float_equal(cf_perf_compute_s(&w, 2050, 1), 0.1213 * (CF_PERF_FIXED_SHARE + (1 - CF_PERF_FIXED_SHARE) * 2050 / 1025), 1e-12);
    assert_float_equal(cf_perf_compute_s(&w, 512, 1), 0.1187 * (CF_PERF_FIXED_SHARE + (1 - CF_PERF_FIXED_SHARE) * 512 / 1024), 1e-12);
}

/* A sweep of the profiles a search leaves: the light profile (three
 * batches on one GPU, the full node at the smallest and largest) plus
 * probes on 0–2 GPU counts in between at 1–4 random batches (now and then
 * two batches one apart), 2 % noise, from a known law — a knee max(c,
 * k0 + k·m) per GPU plus what g GPUs add, either a constant (the model's
 * own assumption) or a share of the step. Every query inside the profiled
 * batches and GPU counts must land within a bounded factor of the law:
 * before the lending rules held, probes at batches 2541 and 2542 put a
 * 0.9 s step where the law had 0.16 s, two batches 38 and 39 a 12 s step
 * for 3.5 s. Returns the worst factor between prediction and law. */
static double sweep_worst_factor(int share, unsigned long seed)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, seed);
    double worst = 0;
    for (int trial = 0; trial < 20000; trial++) {
        int full = 2 + (int)gsl_rng_uniform_int(rng, 7);
        double c = 0.01 + 0.2 * gsl_rng_uniform(rng), k = 1e-4 + 2e-3 * gsl_rng_uniform(rng);
        double add = 0.3 * gsl_rng_uniform(rng), knee = 0.2 * gsl_rng_uniform(rng);
        double lo = 1 + (double)gsl_rng_uniform_int(rng, 64), hi = lo * (4 + 100 * gsl_rng_uniform(rng));
#define SWEEP_LAW(m, g) (share ? fmax(c, knee + k * (m)) * (1 + add * ((g) - 1)) : fmax(c, knee + k * (m)) + c * add * ((g) - 1))
        cf_perf_params p = cf_perf_defaults(NULL);
        int gs[4] = {1, 0, 0, full}, n_g = 1;
        for (int e = (int)gsl_rng_uniform_int(rng, 3); e > 0 && full > 2; e--) {
            int g = 2 + (int)gsl_rng_uniform_int(rng, (unsigned long)full - 2), dup = 0;
            for (int i = 0; i < n_g; i++)
                dup |= gs[i] == g;
            if (!dup)
                gs[n_g++] = g;
        }
        gs[n_g++] = full;
        for (int i = 1; i < n_g; i++)
            for (int j = i; j > 0 && gs[j] < gs[j - 1]; j--) {
                int t = gs[j];
                gs[j] = gs[j - 1];
                gs[j - 1] = t;
            }
        p.n_curves = n_g;
        for (int i = 0; i < n_g; i++) {
            cf_perf_curve *cv = &p.curves[i];
            double bs[6] = {0};
            int n = 0;
            if (gs[i] == 1) {
                bs[n++] = lo, bs[n++] = round(sqrt(lo * hi)), bs[n++] = hi;
            } else if (gs[i] == full) {
                bs[n++] = lo, bs[n++] = hi;
            } else {
                for (int j = 1 + (int)gsl_rng_uniform_int(rng, 4); j > 0; j--)
                    bs[n++] = round(lo * exp(gsl_rng_uniform(rng) * log(hi / lo)));
                if (gsl_rng_uniform(rng) < 0.3)
                    bs[n] = bs[0] + 1, n++;
            }
            for (int a = 1; a < n; a++)
                for (int b = a; b > 0 && bs[b] < bs[b - 1]; b--) {
                    double t = bs[b];
                    bs[b] = bs[b - 1];
                    bs[b - 1] = t;
                }
            cv->gpus = gs[i];
            cv->n = 0;
            for (int j = 0; j < n; j++)
                if (cv->n == 0 || bs[j] > cv->batch[cv->n - 1]) {
                    cv->batch[cv->n] = bs[j];
                    cv->step_s[cv->n++] = SWEEP_LAW(bs[j], gs[i]) * exp(0.02 * (2 * gsl_rng_uniform(rng) - 1));
                }
        }
        for (int q = 0; q < 10; q++) {
            double m = round(lo * exp(gsl_rng_uniform(rng) * log(hi / lo)));
            int g = 1 + (int)gsl_rng_uniform_int(rng, (unsigned long)full);
            double t = cf_perf_compute_s(&p, m, g);
            assert_true(isfinite(t) && t > 0);
            worst = fmax(worst, fabs(log(t / SWEEP_LAW(m, g))));
        }
#undef SWEEP_LAW
    }
    gsl_rng_free(rng);
    return exp(worst);
}

static void test_curves_from_search_profiles(void **state)
{
    (void)state;
    /* the model's law (a constant per GPU added): within 2× (1.72 here;
     * 23.8 before) */
    assert_true(sweep_worst_factor(0, 11) < 2.0);
    /* a law it does not assume (a share of the step): within 3× (2.73;
     * 25.7 before) — beyond a probe's batches the constant is held within
     * a factor 2 of the share */
    assert_true(sweep_worst_factor(1, 11) < 3.0);
}

static void test_sync_time(void **state)
{
    (void)state;
    cf_perf_params p = hand_params();
    /* 100 MB = 0.8 Gbit at 8 Gbit/s: 0.1 s on the probe's 2 × 1; λ(N) =
     * 2e-4 s × 4 buckets × 2(N − 1); growth √ring(N) with a = 0.5. */
    assert_float_equal(cf_perf_sync_s(&p, 100e6, 2, 4), 0.1 + 2e-4 * 4 * 2, 1e-12);
    assert_float_equal(cf_perf_sync_s(&p, 100e6, 16, 1), 0.1 * sqrt(1.875) + 2e-4 * 4 * 30, 1e-12);
    assert_float_equal(cf_perf_sync_s(&p, 100e6, 1, 4), 0.0, 1e-15);
    /* never faster than the NIC: at 50 Gbit/s, no latency, 16 × 4 GPUs the
     * ring through the NIC, 1.96875 × 0.8 / 50, exceeds √1.875 × 0.016 */
    p.inter_gbps = 50;
    p.k.hop_latency_s = 0;
    assert_float_equal(cf_perf_sync_s(&p, 100e6, 16, 4), 1.96875 * 0.8 / 50, 1e-12);
    /* a fitted rate above the NIC is held at the NIC */
    p.inter_gbps = 500;
    assert_float_equal(cf_perf_sync_s(&p, 100e6, 2, 1), 0.8 / 50, 1e-12);
    /* no measured network: the default for the NIC, ≤ 5 Gbit/s over TCP, ½ nominal over RDMA */
    assert_float_equal(cf_default_inter_gbps(50), 5, 0);
    assert_float_equal(cf_default_inter_gbps(1600), 800, 0);
    assert_float_equal(cf_default_inter_gbps(0), 5, 0);
}

static void test_step_time_overlap_and_accumulation(void **state)
{
    (void)state;
    cf_perf_params p = hand_params();
    double t_c = 0.477, a = 0.1016;
    /* ρ·T1 = 0.2385 s hides all of A; c0 + ψ·A shows */
    double step = t_c + 0.01 + 0.1 * a;
    assert_float_equal(cf_perf_step_s(&p, 100e6, 2, 4, 100, 1), step, 1e-9);
    assert_float_equal(cf_perf_step_s(&p, 100e6, 2, 4, 100, 4), 3 * t_c + step, 1e-9);
    p.hide = 0; /* nothing hides: additive */
    assert_float_equal(cf_perf_step_s(&p, 100e6, 2, 4, 100, 1), t_c + 0.01 + a, 1e-9);
    p.hide = 0.1; /* the hinge: A − ρ·T1 shows, ψ of the hidden part */
    assert_float_equal(cf_perf_step_s(&p, 100e6, 2, 4, 100, 1), t_c + 0.01 + (a - 0.0477) + 0.1 * 0.0477, 1e-9);
    /* one GPU: compute only */
    assert_float_equal(cf_perf_step_s(&p, 100e6, 1, 1, 100, 2), 0.9, 1e-12);
    /* the interval: wider across nodes than on the profiled node, wider
     * with the default network than with the probe's */
    cf_step one = cf_perf_predict(&p, 100e6, 1, 1, 1, 100, 1), multi = cf_perf_predict(&p, 100e6, 4, 4, 16, 8, 1);
    assert_true(one.sigma > 0 && multi.sigma > one.sigma);
    cf_perf_params d = cf_perf_on_network(&p, 50, 100); /* a TCP NIC elsewhere: carried */
    assert_int_equal(d.network_provenance, CF_PROV_ESTIMATED);
    assert_float_equal(d.inter_gbps, 8, 0);
    d = cf_perf_on_network(&p, 50, 1600); /* RDMA: another fabric, the default */
    assert_int_equal(d.network_provenance, CF_PROV_DEFAULT);
    cf_perf_params e = cf_perf_on_network(&p, 50, 25); /* a slower NIC: in proportion */
    assert_float_equal(e.inter_gbps, 4, 1e-12);
    cf_perf_params def = p;
    def.inter_gbps = 0;
    def.network_provenance = CF_PROV_DEFAULT;
    assert_true(cf_perf_predict(&def, 100e6, 4, 1, 4, 8, 1).sigma > cf_perf_predict(&p, 100e6, 4, 1, 4, 8, 1).sigma);
}

/* The network's log sd on each side, by hand: σ_fit 0.1, measured on at
 * most 2 VMs of 1 GPU. At the measured shape only σ_fit; at 4 VMs × 1 GPU
 * the growth exponent's range: a = 0.5 in [0, 2], its 10th and 90th
 * percentiles 0.2 and 1.8, so 0.3·ln(ring(4)/ring(2))/z80 below and
 * 1.3·ln(…)/z80 above; at a = 2 all of the range lies below. At 2 VMs × 4
 * GPUs (more GPUs per VM than measured) the shape term u_shape·√ln 4 above
 * (u_shape_lo of it below), no growth term. */
static void test_network_interval_sides(void **state)
{
    (void)state;
    cf_perf_params p = hand_params();
    p.sigma_fit = 0.1;
    p.max_nodes_measured = 2;
    p.max_node_gpus_measured = 1;
    double z80 = cf_normal_two_sided_z(0.8), growth = log(1.5 / 1.0) / z80;
    assert_float_equal(CF_INTERVAL_Z, z80, 1e-12);
    cf_perf_net at = cf_perf_network_term(&p, 100e6, 2, 1, 2);
    assert_float_equal(at.sigma_net_below, 0.1, 1e-12);
    assert_float_equal(at.sigma_net_above, 0.1, 1e-12);
    assert_float_equal(at.factor_above, exp(z80 * 0.1), 1e-12);
    cf_perf_net four = cf_perf_network_term(&p, 100e6, 4, 1, 4);
    assert_float_equal(four.sigma_shape, 0, 0);
    assert_float_equal(four.sigma_net_below, sqrt(0.01 + pow(0.3 * growth, 2)), 1e-12);
    assert_float_equal(four.sigma_net_above, sqrt(0.01 + pow(1.3 * growth, 2)), 1e-12);
    cf_perf_net wide = cf_perf_network_term(&p, 100e6, 2, 4, 8);
    double shape = CF_PERF_SIGMA_SHAPE * sqrt(log(4.0)), below = CF_PERF_SIGMA_SHAPE_BELOW * shape;
    assert_float_equal(wide.sigma_net_below, sqrt(0.01 + below * below), 1e-12);
    assert_float_equal(wide.sigma_net_above, sqrt(0.01 + shape * shape), 1e-12);
    /* the step: the all-reduce and c0 at their percentiles, through the
     * hinge; here the all-reduce shows whole (ρ = 0), so the step's
     * percentiles are the step with A and c0 scaled */
    p.hide = 0;
    four = cf_perf_network_term(&p, 100e6, 4, 1, 4);
    cf_step st = cf_perf_predict(&p, 100e6, 4, 1, 4, 100, 1);
    double net = p.overhead_s + st.allreduce_s;
    assert_float_equal(st.visible_s, net, 1e-12);
    double up = log((st.step_s + net * (four.factor_above - 1)) / st.step_s) / z80;
    double lo = log(st.step_s / (st.step_s - net * (1 - four.factor_below))) / z80;
    assert_float_equal(st.sigma_up, sqrt(st.sigma_base * st.sigma_base + up * up), 1e-12);
    assert_float_equal(st.sigma, sqrt(st.sigma_base * st.sigma_base + lo * lo), 1e-12);
    /* hidden behind compute at the point, the upper percentile shows: wider
     * than the share of the step would say (the old linearisation) */
    p.hide = st.allreduce_s * (1 + four.factor_above) / 2 / st.compute_s; /* A < ρ·T1 < A·e^(z·above) */
    st = cf_perf_predict(&p, 100e6, 4, 1, 4, 100, 1);
    assert_true(st.visible_s < 0.1 * st.step_s);
    double net_up;
    cf_perf_step_sigmas(&st, st.step_s, NULL, NULL, NULL, &net_up);
    assert_true(net_up > 2 * st.visible_s / st.step_s * four.sigma_net_above);
    /* accumulation dilutes the network's part */
    double acc_up;
    cf_perf_step_sigmas(&st, 4 * st.step_s, NULL, &acc_up, NULL, NULL);
    assert_true(acc_up < st.sigma_up);
    p.k.growth_nodes = 2;
    four = cf_perf_network_term(&p, 100e6, 4, 1, 4);
    assert_float_equal(four.sigma_net_below, sqrt(0.01 + pow(1.8 * growth, 2)), 1e-12);
    assert_float_equal(four.sigma_net_above, 0.1, 1e-12);
    /* a range of one point: no growth term */
    assert_int_equal(cf_perf_constant_set(&p.k, "a_min", 2), CF_OK);
    four = cf_perf_network_term(&p, 100e6, 4, 1, 4);
    assert_float_equal(four.sigma_net_below, 0.1, 1e-12);
}

static void test_noise_at_batch(void **state)
{
    (void)state;
    /* B_M = B (B + M)/(B + M0): unchanged at M0, 1000·2024/1256 at 4 × 256. */
    assert_float_equal(cf_noise_at_batch(1000, 256, 256), 1000, 1e-12);
    assert_float_equal(cf_noise_at_batch(1000, 256, 1024), 1611.464968152866, 1e-9);
    /* It is B·S/r: the measured noise scale grows as M/lr with lr = r·lr0. */
    assert_float_equal(cf_noise_at_batch(1000, 256, 1024), 1000 * 4.0 / cf_lr_gain(1000, 256, 1024), 1e-9);
    /* A huge noise scale hardly moves (the gain is ≈ S: lr ∝ M). */
    assert_float_equal(cf_noise_at_batch(1e9, 256, 4096) / 1e9, 1.0, 1e-5);
}

static void test_samples_and_efficiency(void **state)
{
    (void)state;
    cf_noise_model nm;
    cf_noise_model_init(&nm, 256, 1000, NULL, 0, CF_PROV_MEASURED);
    /* E(M) = E0 (B_M + M)/(B_M + M0), B_M = 1000·2024/1256 at M = 1024:
     * 2635.464968…/1867.464968… = 1.411252… (the M0-noise form gave 1.6115). */
    double b_m = 1000.0 * 2024.0 / 1256.0;
    double ratio = (b_m + 1024) / (b_m + 256);
    assert_float_equal(ratio, 1.411252, 1e-6);
    /* E(M) is read from a table (relative accuracy ~1e-6, see stateff.c). */
    assert_float_equal(cf_samples_to_target(&nm, 1e6, 1024), 1e6 * ratio, 1e6 * ratio * 2e-6);
    assert_float_equal(cf_samples_to_target(&nm, 1e6, 256), 1e6, 1e-6);
    assert_float_equal(cf_stat_efficiency(&nm, 1024), 1.0 / ratio, 2e-6);
    /* … over the whole range of batch sizes above M0, and for noise
     * scales far below and far above the batch; below M0 a batch takes the
     * recipe's samples (no credit for a smaller batch: not validated), and
     * its efficiency is 1, never above. */
    static const double b_consts[] = {5, 1000, 1e7};
    for (int c = 0; c < 3; c++) {
        cf_noise_model_init(&nm, 256, b_consts[c], NULL, 0, CF_PROV_MEASURED);
        for (double m = 1; m <= INT_MAX; m *= 1.07) {
            double b = b_consts[c], bm = b * (b + m) / (b + 256);
            double exact = m <= 256 ? 1.0 : (bm + m) / (bm + 256);
            assert_true(fabs(cf_samples_to_target(&nm, 1.0, m) / exact - 1) < 2e-6);
            assert_true(cf_stat_efficiency(&nm, m) <= 1.0);
        }
    }
    /* The table covers every global batch (an int): past it E(M) is the
     * direct integral, ~1,000 times the cost (it ended at 2²⁶, and a search
     * up to search.max_global_batch spent 73 % of its time there). */
    assert_true(log2((double)INT_MAX) * CF_NOISE_TABLE_PER_OCTAVE <= CF_NOISE_TABLE - 2);
    /* the LR-mismatch form agrees below M0 too: its LR's own penalty, no credit */
    cf_noise_model_init(&nm, 256, 1000, NULL, 0, CF_PROV_MEASURED);
    assert_float_equal(cf_stat_efficiency_lr(&nm, 64, 64, 1.0, 1.0, NULL), 1.0, 1e-9);
    assert_true(cf_stat_efficiency_lr(&nm, 64, 64, 1.3, 1.0, NULL) < 1.0);
    cf_noise_model_init(&nm, 256, 1000, NULL, 0, CF_PROV_MEASURED);
    assert_float_equal(nm.b_noise_effective, 1000, 1e-9);
    /* More samples at every larger batch, never fewer than at M0, and never
     * more than the linear-scaling limit M/M0 (zero progress per extra sample). */
    double prev = 1e6;
    for (double m = 512; m <= 65536; m *= 2) {
        double e = cf_samples_to_target(&nm, 1e6, m);
        assert_true(e > prev && e < 1e6 * m / 256);
        prev = e;
    }
}

/* ∫₀¹ (B_M+M)/(B_M+M0) dp for B(p) = 1000 + 1000 p by the midpoint rule. */
static double linear_trace_ratio(double m0, double m)
{
    const int steps = 100000;
    double sum = 0;
    for (int i = 0; i < steps; i++) {
        double b = 1000 + 1000 * (i + 0.5) / steps;
        double b_m = b * (b + m) / (b + m0);
        sum += (b_m + m) / (b_m + m0);
    }
    return sum / steps;
}

static void test_noise_trace_integral(void **state)
{
    (void)state;
    /* B(p) = 1000 + 1000 p: ∫ dp/(B + 256) = ln(2256/1256)/1000. */
    cf_noise_point trace[] = {{0, 1000}, {1, 2000}};
    cf_noise_model nm;
    cf_noise_model_init(&nm, 256, 0, trace, 2, CF_PROV_MEASURED);
    double integral = log(2256.0 / 1256.0) / 1000.0;
    assert_float_equal(nm.inv_integral, integral, 1e-10);
    assert_float_equal(nm.b_noise_effective, 1.0 / integral - 256, 1e-6);
    assert_float_equal(cf_samples_to_target(&nm, 1.0, 4096), linear_trace_ratio(256, 4096), 2e-6);
    /* A constant trace equals the constant noise scale. */
    cf_noise_point flat[] = {{0.2, 500}, {0.8, 500}};
    cf_noise_model_init(&nm, 64, 0, flat, 2, CF_PROV_MEASURED);
    assert_float_equal(nm.b_noise_effective, 500, 1e-6);
    /* A growing noise scale costs fewer samples than its early value says. */
    cf_noise_model early;
    cf_noise_model_init(&early, 256, 1000, NULL, 0, CF_PROV_MEASURED);
    cf_noise_model_init(&nm, 256, 0, trace, 2, CF_PROV_MEASURED);
    assert_true(cf_samples_to_target(&nm, 1.0, 8192) < cf_samples_to_target(&early, 1.0, 8192));
}

/* The E(M) table's entries are the direct Simpson sum itself, bit for bit
 * (stateff.c fills them from the grid's terms precomputed): at M = 2^j the
 * interpolation reads one entry, so E(M)/E0 there is 1 + (M − M0)·J(M)
 * with J summed here as j_direct sums it. The first entries are made from
 * just below M0 on (a batch at or below M0 reads none): batches just above
 * M0 and far above it read the table, and those below get E0. */
static void test_j_table_is_the_direct_integral(void **state)
{
    (void)state;
    cf_noise_point trace[] = {{0, 900}, {0.3, 2700}, {0.7, 4800}, {1, 5400}};
    static const double m0s[] = {1, 3, 256, 1000};
    for (size_t c = 0; c < sizeof m0s / sizeof *m0s; c++) {
        cf_noise_model nm;
        cf_noise_model_init(&nm, m0s[c], 0, trace, 4, CF_PROV_MEASURED);
        for (int j = 0; j <= 30; j++) {
            int k = j * CF_NOISE_TABLE_PER_OCTAVE;
            double m = exp((double)k * (0.69314718055994530942 / CF_NOISE_TABLE_PER_OCTAVE)), dm = m - m0s[c];
            double sum = 0;
            for (int i = 0; i <= CF_NOISE_GRID; i++) {
                double b = nm.b_grid[i], cpl = b + m0s[c];
                double w = (i == 0 || i == CF_NOISE_GRID) ? 1 : (i % 2 ? 4 : 2);
                sum += w * cpl / (cpl * cpl + dm * b);
            }
            double want = m <= m0s[c] ? 1.0 : 1.0 + dm * (sum / (3.0 * CF_NOISE_GRID));
            double got = cf_samples_to_target(&nm, 1.0, ldexp(1.0, j));
            if (fabs(m - ldexp(1.0, j)) > 0) /* exp's 2^j an ulp off: the interpolation's own ~1e-6 */
                assert_true(fabs(got / want - 1) < 2e-6);
            else
                assert_true(got == want);
        }
        /* just above M0 and between table points: within the interpolation's accuracy */
        for (double m = m0s[c] * 1.001; m < 1e6; m *= 1.37) {
            double dm = m - m0s[c], sum = 0;
            for (int i = 0; i <= CF_NOISE_GRID; i++) {
                double b = nm.b_grid[i], cpl = b + m0s[c];
                double w = (i == 0 || i == CF_NOISE_GRID) ? 1 : (i % 2 ? 4 : 2);
                sum += w * cpl / (cpl * cpl + dm * b);
            }
            assert_true(fabs(cf_samples_to_target(&nm, 1.0, m) / (1.0 + dm * sum / (3.0 * CF_NOISE_GRID)) - 1) < 2e-6);
        }
    }
}

static void test_noise_trace_trend(void **state)
{
    (void)state;
    /* The first half of B(p) = 1000 + 1000 p, continued along its trend, is
     * the whole line; held constant, it stays at 1500. */
    cf_noise_point half[] = {{0, 1000}, {0.25, 1250}, {0.5, 1500}};
    cf_noise_point whole[] = {{0, 1000}, {1, 2000}};
    cf_noise_model trend, held, full;
    cf_noise_model_init_trend(&trend, 256, half, 3, CF_PROV_MEASURED);
    cf_noise_model_init(&held, 256, 0, half, 3, CF_PROV_MEASURED);
    cf_noise_model_init(&full, 256, 0, whole, 2, CF_PROV_MEASURED);
    assert_float_equal(trend.trend_per_progress, 1000, 1e-9);
    assert_float_equal(trend.b_grid[CF_NOISE_GRID], 2000, 1e-9);
    assert_float_equal(held.b_grid[CF_NOISE_GRID], 1500, 1e-9);
    assert_float_equal(trend.inv_integral, full.inv_integral, 1e-14);
    assert_float_equal(cf_samples_to_target(&trend, 1.0, 4096), linear_trace_ratio(256, 4096), 2e-6);
    /* Least squares over all points: a noisy middle point tilts the slope. */
    cf_noise_point noisy[] = {{0, 1000}, {0.25, 1500}, {0.5, 1500}};
    cf_noise_model_init_trend(&trend, 256, noisy, 3, CF_PROV_MEASURED);
    assert_float_equal(trend.trend_per_progress, 1000, 1e-9); /* slope of (0,1000),(.25,1500),(.5,1500) */
    assert_float_equal(trend.b_grid[CF_NOISE_GRID], 2000, 1e-9);
    /* A falling trace is held at its last value, not extrapolated down. */
    cf_noise_point falling[] = {{0, 2000}, {0.5, 1000}};
    cf_noise_model_init_trend(&trend, 256, falling, 2, CF_PROV_MEASURED);
    assert_float_equal(trend.trend_per_progress, 0, 1e-12);
    assert_float_equal(trend.b_grid[CF_NOISE_GRID], 1000, 1e-9);
}

static void test_lr_rules(void **state)
{
    (void)state;
    double r = 1256.0 * 1024.0 / (2024.0 * 256.0);
    assert_float_equal(cf_lr_gain(1000, 256, 1024), r, 1e-12);
    cf_lr_choice c = cf_lr_for_batch(CF_LR_AUTO, CF_OPT_SGD, 0.1, 256, 1000, 1024);
    assert_int_equal(c.rule_used, CF_LR_GAIN);
    assert_float_equal(c.lr, 0.1 * r, 1e-12);
    assert_true(c.warmup_recommended);
    c = cf_lr_for_batch(CF_LR_AUTO, CF_OPT_ADAMW, 1e-3, 256, 1000, 1024);
    assert_float_equal(c.lr, 1e-3 * sqrt(r), 1e-15);
    assert_true(c.sqrt_form);
    c = cf_lr_for_batch(CF_LR_LINEAR, CF_OPT_ADAM, 1e-3, 256, 1000, 1024);
    assert_float_equal(c.lr, 4e-3, 1e-15);
    c = cf_lr_for_batch(CF_LR_SQRT, CF_OPT_SGD, 0.1, 256, 1000, 1024);
    assert_float_equal(c.lr, 0.2, 1e-12);
    c = cf_lr_for_batch(CF_LR_NONE, CF_OPT_SGD, 0.1, 256, 1000, 1024);
    assert_float_equal(c.lr, 0.1, 1e-15);
    assert_false(c.warmup_recommended);
    /* The gain lies in [1, S] and approaches S for a huge noise scale. */
    for (double m = 256; m <= 65536; m *= 2) {
        double g = cf_lr_gain(4000, 256, m);
        assert_true(g >= 1.0 - 1e-12 && g <= m / 256 + 1e-12);
    }
    assert_float_equal(cf_lr_gain(1e12, 256, 2048), 8.0, 1e-6);
}

static uint64_t rng_state = 88172645463325252ull;
static double rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

static int dominates(double xa, double ya, double xb, double yb)
{
    return xa <= xb && ya <= yb && (xa < xb || ya < yb);
}

static void test_pareto_brute_force(void **state)
{
    (void)state;
    for (int trial = 0; trial < 200; trial++) {
        size_t n = 1 + (size_t)(rnd() * 300);
        double x[300], y[300];
        size_t order[300];
        for (size_t i = 0; i < n; i++) {
            /* coarse grid so ties occur */
            x[i] = floor(rnd() * 20);
            y[i] = floor(rnd() * 20);
        }
        size_t k = cf_pareto_front(x, y, n, order);
        int on_front[300] = {0};
        for (size_t i = 0; i < k; i++) {
            on_front[order[i]] = 1;
            if (i > 0) {
                assert_true(x[order[i]] > x[order[i - 1]]);
                assert_true(y[order[i]] < y[order[i - 1]]);
            }
        }
        for (size_t i = 0; i < n; i++) {
            int dominated = 0, duplicate_on_front = 0;
            for (size_t j = 0; j < n; j++) {
                if (dominates(x[j], y[j], x[i], y[i]))
                    dominated = 1;
                if (j != i && on_front[j] && x[j] == x[i] && y[j] == y[i])
                    duplicate_on_front = 1;
            }
            if (on_front[i])
                assert_false(dominated);
            else
                assert_true(dominated || duplicate_on_front);
        }
    }
}

/* The front of the printed figures: points a billionth apart print alike
 * (6 significant digits), and none of the front may read as dominated. */
static void test_pareto_front_printed(void **state)
{
    (void)state;
    for (int trial = 0; trial < 200; trial++) {
        size_t n = 1 + (size_t)(rnd() * 300);
        double x[300], y[300], rx[300], ry[300];
        size_t order[300];
        for (size_t i = 0; i < n; i++) {
            x[i] = 1 + floor(rnd() * 20) * 1e-5 + rnd() * 1e-9;
            y[i] = 100 + floor(rnd() * 20) * 1e-3 + rnd() * 1e-7;
            rx[i] = cf_json_round(x[i], 6);
            ry[i] = cf_json_round(y[i], 6);
        }
        size_t k = cf_pareto_front_printed(x, y, n, order);
        assert_true(k >= 1);
        int on_front[300] = {0};
        for (size_t i = 0; i < k; i++) {
            on_front[order[i]] = 1;
            if (i > 0) {
                assert_true(rx[order[i]] > rx[order[i - 1]]);
                assert_true(ry[order[i]] < ry[order[i - 1]]);
            }
        }
        for (size_t i = 0; i < n; i++) {
            int dominated = 0, printed_alike = 0;
            for (size_t j = 0; j < n; j++) {
                if (dominates(rx[j], ry[j], rx[i], ry[i]))
                    dominated = 1;
                if (j != i && on_front[j] && rx[j] == rx[i] && ry[j] == ry[i])
                    printed_alike = 1;
            }
            if (on_front[i])
                assert_false(dominated);
            else
                assert_true(dominated || printed_alike);
        }
    }
}

/* A small synthetic catalog: two GPU types, several prices and shapes. */
/* Designated initializers: cf_vm grows (price provenance, zones). */
#define VM(c, r, t, g, n, mem, cpu, ram, net, od, spot, intr)                                                      \
    {.cloud = c, .region = r, .instance_type = t, .gpu_model = g, .gpu_count = n, .gpu_memory_gib = mem, .vcpus = cpu, \
     .memory_gib = ram, .network_gbps = net, .price_ondemand_usd_per_hr = od, .price_spot_usd_per_hr = spot,         \
     .interruptions_pct_per_month = intr, .interruption_band = -1}
static cf_vm test_vms[] = {
    VM("aws", "us-east-1", "big.8x", "FAST", 8, 80, 96, 1152, 400, 32.0, 10.0, 7.5),
    VM("aws", "us-east-1", "big.1x", "FAST", 1, 80, 12, 144, 50, 4.5, 1.5, 7.5),
    VM("gcp", "us-central1", "slow-4", "SLOW", 4, 16, 48, 192, 50, 3.9, 1.2, -1),
    VM("gcp", "europe-west4", "slow-4", "SLOW", 4, 16, 48, 192, 50, 4.4, 1.4, -1),
    VM("azure", "eastus", "slow-1", "SLOW", 1, 16, 8, 56, 0, 0.9, 0, -1),
};
#define N_TEST_VMS (sizeof test_vms / sizeof *test_vms)

static void setup_input(cf_spec *spec, cf_gpu_perf perf[2], cf_noise_model *nm, const cf_vm *rows[],
                        cf_advisor_input *in)
{
    memset(spec, 0, sizeof *spec);
    snprintf(spec->job.name, sizeof spec->job.name, "unit");
    spec->job.parameters = 25e6;
    spec->job.gradient_bytes = 4;
    spec->job.total_samples = 90 * 1.28e6;
    spec->job.batch = 256;
    spec->job.lr = 0.1;
    spec->search.max_gpus = 64;
    spec->search.max_nodes = 8;
    spec->search.max_accumulation = 8;
    spec->search.max_global_batch = 64 * 256;
    spec->search.startup_minutes = 10;
    spec->search.checkpoint_minutes = 1;
    memset(perf, 0, 2 * sizeof *perf);
    snprintf(perf[0].gpu, sizeof perf[0].gpu, "FAST");
    perf[0].params = hand_params();
    perf[0].params.alpha_s = 0.02;
    perf[0].params.beta_s = 0.001;
    perf[0].params.max_local_batch = 256;
    perf[0].params.inter_gbps = 0;
    perf[0].params.network_provenance = CF_PROV_DEFAULT;
    perf[0].params.intra_gbps = 1000;
    snprintf(perf[1].gpu, sizeof perf[1].gpu, "SLOW");
    perf[1].params = hand_params();
    perf[1].params.max_local_batch = 64;
    perf[1].params.inter_gbps = 0;
    perf[1].params.network_provenance = CF_PROV_DEFAULT;
    cf_noise_model_init(nm, 256, 4000, NULL, 0, CF_PROV_MEASURED);
    for (size_t i = 0; i < N_TEST_VMS; i++)
        rows[i] = &test_vms[i];
    *in = (cf_advisor_input){.job = &spec->job, .constraints = &spec->search, .vms = rows, .n_vms = N_TEST_VMS, .perf = perf, .n_perf = 2,
                             .noise = nm, .top = 10};
}

static void test_enumeration_invariants(void **state)
{
    (void)state;
    static const cf_objective objectives[] = {CF_OBJ_COST, CF_OBJ_TIME, CF_OBJ_BALANCED};
    static const cf_spot_policy spots[] = {CF_SPOT_NEVER, CF_SPOT_ALLOW, CF_SPOT_ONLY};
    for (size_t oi = 0; oi < 3; oi++) {
        for (size_t si = 0; si < 3; si++) {
            cf_spec spec;
            cf_gpu_perf perf[2];
            cf_noise_model nm;
            const cf_vm *rows[N_TEST_VMS];
            cf_advisor_input in;
            setup_input(&spec, perf, &nm, rows, &in);
            spec.search.objective = objectives[oi];
            spec.search.spot = spots[si];
            /* spot alone has no on-demand fallback: a looser deadline */
            spec.search.deadline_hours = spots[si] == CF_SPOT_ONLY ? 400 : 60;
            spec.search.budget_usd = 4000;
            cf_advice advice;
            assert_int_equal(cf_advise(&in, &advice), CF_OK);
            assert_true(advice.n_ranked >= 1);
            const cf_config *best = &advice.ranked[0];
            for (size_t i = 0; i < advice.n_ranked + advice.n_pareto; i++) {
                /* Every figure of a configuration is a quantile of one
                 * distribution: the point inside its interval, the checked
                 * quantile within the deadline and budget. */
                const cf_config *c = i < advice.n_ranked ? &advice.ranked[i] : &advice.pareto[i - advice.n_ranked];
                assert_true(c->hours_p10 <= c->hours * (1 + 1e-12) && c->hours <= c->hours_p90 * (1 + 1e-12));
                assert_true(c->total_usd_p10 <= c->total_usd * (1 + 1e-12) &&
                            c->total_usd <= c->total_usd_p90 * (1 + 1e-12));
                assert_true(c->hours_at_confidence <= spec.search.deadline_hours + 1e-6);
                assert_true(c->usd_at_confidence <= spec.search.budget_usd);
                assert_true(c->hours <= c->hours_at_confidence * (1 + 1e-12));
                if (c->spot) {
                    const cf_spot_spread *d = cf_config_spot_spread(c);
                    assert_non_null(d);
                    assert_true(c->hours == d->p50_h && c->hours_p90 == d->p90_h && c->hours_at_confidence == d->q_h);
                    assert_true(c->total_usd == d->p50_usd && c->usd_at_confidence == d->q_usd);
                    assert_float_equal(c->spot_est.check_quantile, 0.95, 1e-12); /* confidence 0.9 */
                    if (spots[si] == CF_SPOT_ONLY)
                        assert_false(c->mixed);
                }
            }
            for (size_t i = 0; i < advice.n_ranked; i++) {
                const cf_config *c = &advice.ranked[i];
                assert_true(c->hours <= spec.search.deadline_hours);
                assert_true(c->total_usd <= spec.search.budget_usd);
                assert_true(c->nodes * c->gpus_per_node <= spec.search.max_gpus);
                assert_true(c->local_batch <= (strcmp(c->vm->gpu_model, "FAST") ? 64 : 256));
                assert_int_equal(c->global_batch, (long)c->nodes * c->gpus_per_node * c->local_batch * c->accumulation);
                if (spots[si] == CF_SPOT_NEVER)
                    assert_false(c->spot);
                if (spots[si] == CF_SPOT_ONLY)
                    assert_true(c->spot);
                if (!c->spot) {
                    assert_float_equal(c->total_usd, c->hours * c->usd_per_hour, 1e-6 * c->total_usd);
                } else {
                    /* p50 of cost and of time: each replay's cost is at most its wall time × the
                     * whole cluster's spot price (VMs not held are not paid for), and so is
                     * the quantile; the mixed plan also pays on-demand hours. */
                    assert_true(c->spot_est.valid);
                    if (!c->mixed)
                        assert_true(c->total_usd <= c->hours * c->usd_per_hour * (1 + 1e-9));
                    assert_true(c->spot_est.spot.q_h <= spec.search.deadline_hours || c->mixed);
                    assert_true(!c->mixed || c->spot_est.mixed.q_h <= spec.search.deadline_hours + 1e-6);
                }
                if (objectives[oi] == CF_OBJ_COST)
                    assert_true(best->total_usd <= c->total_usd);
                if (objectives[oi] == CF_OBJ_TIME)
                    assert_true(best->hours <= c->hours);
            }
            /* The front is non-dominated and contains the pick's trade-off. */
            for (size_t i = 0; i < advice.n_pareto; i++)
                for (size_t j = 0; j < advice.n_pareto; j++)
                    assert_false(dominates(advice.pareto[j].hours, advice.pareto[j].total_usd,
                                           advice.pareto[i].hours, advice.pareto[i].total_usd));
            for (size_t i = 0; i < advice.n_ranked; i++) {
                int covered = 0;
                for (size_t j = 0; j < advice.n_pareto; j++)
                    if (advice.pareto[j].hours <= advice.ranked[i].hours + 1e-12 &&
                        advice.pareto[j].total_usd <= advice.ranked[i].total_usd + 1e-9)
                        covered = 1;
                assert_true(covered);
            }
            cf_advice_free(&advice);
        }
    }
}

static void test_enumeration_time_optimal_batch(void **state)
{
    (void)state;
    /* On one VM of 8 GPUs and one node, the chosen (batch, accumulation) is
     * at least as fast as every power-of-two batch (all on the grid) and no
     * faster than the best integer batch (nothing beats the model). */
    cf_spec spec;
    cf_gpu_perf perf[2];
    cf_noise_model nm;
    const cf_vm *rows[N_TEST_VMS];
    cf_advisor_input in;
    setup_input(&spec, perf, &nm, rows, &in);
    spec.search.objective = CF_OBJ_TIME;
    spec.search.max_nodes = 1;
    in.n_vms = 1; /* big.8x only */
    cf_advice advice;
    assert_int_equal(cf_advise(&in, &advice), CF_OK);
    double chosen = advice.ranked[0].train_hours, best_any = INFINITY, best_pow2 = INFINITY;
    for (int m = 1; m <= 256; m++) {
        for (int s = 1; s <= 8; s *= 2) {
            long global = 8L * m * s;
            if (global > spec.search.max_global_batch)
                continue;
            double step = cf_perf_step_s(&perf[0].params, 25e6 * 4, 1, 8, m, s);
            double hours = cf_samples_to_target(&nm, spec.job.total_samples, (double)global) / global * step / 3600;
            best_any = fmin(best_any, hours);
            if ((m & (m - 1)) == 0)
                best_pow2 = fmin(best_pow2, hours);
        }
    }
    assert_true(chosen <= best_pow2 * (1 + 1e-12));
    assert_true(chosen >= best_any * (1 - 1e-12));
    cf_advice_free(&advice);
}

static void test_region_pruning_matches_per_row_brute_force(void **state)
{
    (void)state;
    /* The full search keeps only the cheapest region of each offer; the
     * best of one-row searches over every row must give the same pick. */
    static const cf_objective objectives[] = {CF_OBJ_COST, CF_OBJ_TIME};
    for (size_t oi = 0; oi < 2; oi++) {
        cf_spec spec;
        cf_gpu_perf perf[2];
        cf_noise_model nm;
        const cf_vm *rows[N_TEST_VMS];
        cf_advisor_input in;
        setup_input(&spec, perf, &nm, rows, &in);
        spec.search.objective = objectives[oi];
        spec.search.spot = CF_SPOT_ALLOW;
        spec.search.deadline_hours = 60;
        cf_advice full;
        assert_int_equal(cf_advise(&in, &full), CF_OK);
        double best = INFINITY;
        for (size_t v = 0; v < N_TEST_VMS; v++) {
            cf_advisor_input one = in;
            one.vms = &rows[v];
            one.n_vms = 1;
            cf_advice a;
            if (cf_advise(&one, &a) == CF_OK)
                best = fmin(best, oi == 0 ? a.ranked[0].total_usd : a.ranked[0].hours);
            cf_advice_free(&a);
        }
        double got = oi == 0 ? full.ranked[0].total_usd : full.ranked[0].hours;
        assert_float_equal(got, best, 1e-9 * best);
        for (size_t i = 0; i < full.n_ranked; i++)
            assert_string_not_equal(full.ranked[i].vm->region, "europe-west4"); /* pricier region of slow-4 */
        cf_advice_free(&full);
    }
}

/* What the advice shows beyond its ranking is computed once, by cf_advise:
 * the same elastic plans and curves the model gives for the pick, an
 * interval around its step time; what renderers show (they compute
 * nothing, tests/layout). */
static void test_advice_is_explained_once(void **state)
{
    (void)state;
    cf_spec spec;
    cf_gpu_perf perf[2];
    cf_noise_model nm;
    const cf_vm *rows[N_TEST_VMS];
    cf_advisor_input in;
    setup_input(&spec, perf, &nm, rows, &in);
    spec.search.spot = CF_SPOT_ALLOW;
    spec.search.deadline_hours = 60;
    cf_advice advice;
    assert_int_equal(cf_advise(&in, &advice), CF_OK);
    const cf_advice_explained *e = advice.explained;
    assert_non_null(e);
    const cf_config *c = &advice.ranked[0];
    assert_true(e->step_p10_s < c->step_time_s && c->step_time_s < e->step_p90_s);
    assert_int_equal(e->have_network, c->nodes > 1);
    /* the pick's plan and the best spot plan, as the model makes them */
    const cf_gpu_perf *p = NULL;
    for (size_t i = 0; i < in.n_perf; i++)
        if (strcmp(in.perf[i].gpu, c->vm->gpu_model) == 0)
            p = &in.perf[i];
    cf_elastic_plan *direct = NULL;
    assert_int_equal(cf_elastic_plan_of_config(in.job, in.constraints, p, in.noise, c, &direct), CF_OK);
    assert_non_null(e->elastic);
    assert_ptr_equal(cf_advice_elastic(&advice, c), e->elastic);
    assert_int_equal(e->elastic->max_nodes, c->nodes);
    assert_memory_equal(e->elastic->points, direct->points, (size_t)c->nodes * sizeof *direct->points);
    free(direct);
    assert_int_equal(advice.have_best_spot, 1);
    assert_ptr_equal(cf_advice_elastic(&advice, &advice.best_spot), e->elastic_best_spot);
    assert_non_null(e->elastic_best_spot);
    assert_null(cf_advice_elastic(&advice, &advice.cheapest)); /* not shown: not computed */
    /* the curves: throughput from one node up, efficiency 1 at the recipe's batch */
    assert_true(e->n_scaling >= (size_t)c->nodes);
    assert_int_equal(e->scaling[0].nodes, 1);
    assert_int_equal(e->n_stateff, CF_STATEFF_CURVE_POINTS);
    assert_float_equal(e->recipe_batch, spec.job.batch, 0);
    /* explaining again replaces it */
    assert_int_equal(cf_advice_explain(&in, &advice), CF_OK);
    assert_non_null(advice.explained);
    cf_advice_free(&advice);
}

static void test_enumeration_infeasible(void **state)
{
    (void)state;
    cf_spec spec;
    cf_gpu_perf perf[2];
    cf_noise_model nm;
    const cf_vm *rows[N_TEST_VMS];
    cf_advisor_input in;
    setup_input(&spec, perf, &nm, rows, &in);
    spec.search.deadline_hours = 0.01; /* shorter than startup */
    cf_advice advice;
    assert_int_equal(cf_advise(&in, &advice), CF_ERR_INFEASIBLE);
    assert_true(advice.have_extremes);
    assert_true(advice.fastest.hours > spec.search.deadline_hours);
    assert_int_equal(advice.n_ranked, 0);
    cf_advice_free(&advice);
}

static void test_memory_ceiling(void **state)
{
    (void)state;
    cf_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.job.parameters = 100e6;
    spec.job.gradient_bytes = 4;
    spec.job.optimizer = CF_OPT_ADAM;
    spec.job.memory_per_sample_mib = 100;
    /* 16 GiB × 0.92 − (100e6 × 16 B + 1.5 GiB) over 100 MiB per sample */
    double free_bytes = 16.0 * 1073741824.0 * 0.92 - (100e6 * 16 + 1.5 * 1073741824.0);
    int expected = (int)floor(free_bytes / (100 * 1048576.0));
    assert_int_equal(cf_estimate_max_local_batch(&spec.job, 16, NULL, 0), expected);
    assert_true(cf_estimate_max_local_batch(&spec.job, 80, NULL, 0) > 5 * expected);
    spec.job.parameters = 2e9; /* 32 GB of state: does not fit a 16 GiB GPU */
    assert_true(cf_estimate_max_local_batch(&spec.job, 16, NULL, 0) < 0);
    spec.job.memory_per_sample_mib = 0; /* unknown and no reference: the state alone still does not fit */
    assert_true(cf_estimate_max_local_batch(&spec.job, 16, NULL, 0) < 0);
    assert_int_equal(cf_estimate_max_local_batch(&spec.job, 80, NULL, 0), 0); /* it fits: the ceiling is unknown */
    spec.job.parameters = 100e6;
    assert_int_equal(cf_estimate_max_local_batch(&spec.job, 16, NULL, 0), 0);
    /* a profile that ran on a 16 GiB GPU where the formula says nothing fits: the measurement wins */
    spec.job.parameters = 2e9;
    cf_gpu_perf ref;
    memset(&ref, 0, sizeof ref);
    ref.params.max_local_batch = 8;
    assert_int_equal(cf_estimate_max_local_batch(&spec.job, 16, &ref, 16), 0);
    assert_int_equal(cf_estimate_max_local_batch(&spec.job, 24, &ref, 16), 0); /* more memory: runs as well */
    /* less memory than the GPU it ran on: the measurement says nothing there, the formula rules it out */
    assert_true(cf_estimate_max_local_batch(&spec.job, 12, &ref, 16) < 0);
}

static cf_gpu carry_gpu(const char *name, double fp16_tflops, double bandwidth_gbs, double memory_gib)
{
    cf_gpu g;
    memset(&g, 0, sizeof g);
    snprintf(g.model, sizeof g.model, "%s", name);
    g.fp32_tflops = fp16_tflops / 8;
    g.fp16_tflops = fp16_tflops;
    g.memory_bandwidth_gbs = bandwidth_gbs;
    g.memory_gib = memory_gib;
    return g;
}

/* The carry-over rule against values computed by hand (docs/model.md). */
static void test_carry_rule_known_answers(void **state)
{
    (void)state;
    cf_gpu from = carry_gpu("small", 100, 1000, 16), to = carry_gpu("big", 400, 2000, 80);
    cf_carry_rule rule = cf_carry_rule_default();
    assert_float_equal(rule.peak_exponent, 0.283, 1e-12);
    assert_float_equal(rule.bandwidth_exponent, 0.499, 1e-12);
    assert_float_equal(rule.overhead_fraction, 0.148, 1e-12);
    /* R = (100/400)^0.283 · (1000/2000)^0.499 */
    assert_float_equal(cf_gpu_time_ratio(&from, &to, CF_PREC_FP16), 0.477972659, 1e-8);
    assert_float_equal(cf_gpu_time_ratio(&to, &from, CF_PREC_FP16), 1 / 0.477972659, 1e-7);
    /* No fixed share, or equal batches: throughput ratio 1/R. */
    assert_float_equal(cf_carry_throughput_ratio(&from, &to, CF_PREC_FP16, &rule, 0, 5), 2.092169880, 1e-8);
    assert_float_equal(cf_carry_throughput_ratio(&from, &to, CF_PREC_FP16, &rule, 0.148, 1), 2.092169880, 1e-8);
    /* (1 + 0.148) / (R · (1 + 0.148/5)): five times the batch amortises the fixed share. */
    assert_float_equal(cf_carry_throughput_ratio(&from, &to, CF_PREC_FP16, &rule, 0.148, 5), 2.332761288, 1e-8);
    /* Unknown batch ratio (0) counts as equal batches. */
    assert_float_equal(cf_carry_throughput_ratio(&from, &to, CF_PREC_FP16, &rule, 0.148, 0), 2.092169880, 1e-8);
    /* A peak rate the GPU table lacks drops that term. */
    cf_gpu no_peak = to;
    no_peak.fp16_tflops = no_peak.fp32_tflops = 0;
    assert_float_equal(cf_gpu_time_ratio(&from, &no_peak, CF_PREC_FP16), 0.707597080, 1e-8);
}

/* What `recommend` does with a carried profile (alpha and beta scaled by R,
 * run at the target's own memory ceiling) is what validate --crossgpu
 * scores: cf_carry_throughput_ratio with the profile's fixed share. */
static void test_carry_matches_estimate(void **state)
{
    (void)state;
    cf_gpu from = carry_gpu("small", 100, 1000, 16), to = carry_gpu("big", 400, 2000, 80);
    cf_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.job.parameters = 100e6;
    spec.job.gradient_bytes = 2;
    spec.job.optimizer = CF_OPT_ADAM;
    spec.job.precision = CF_PREC_FP16;
    cf_gpu_perf ref;
    memset(&ref, 0, sizeof ref);
    snprintf(ref.gpu, sizeof ref.gpu, "small");
    ref.params = hand_params();
    ref.params.max_local_batch = 64;
    cf_gpu_perf out;
    assert_int_equal(cf_gpu_perf_estimate(&spec.job, &to, &ref, &from, &out), CF_OK);
    int m_to = out.params.max_local_batch;
    assert_true(m_to > 5 * 64); /* the weights take a larger share of the small GPU */
    double r = cf_gpu_time_ratio(&from, &to, CF_PREC_FP16);
    assert_float_equal(out.params.alpha_s, 0.05, 1e-12);
    assert_float_equal(out.params.compute_scale, r, 1e-12); /* the whole single-node step scales by R */
    assert_float_equal(cf_perf_compute_s(&out.params, 100, 1), 0.45 * r, 1e-12);
    assert_true(out.params.sigma_compute > 0); /* carried: a wider interval */
    double x_ref = 64 / cf_perf_compute_s(&ref.params, 64, 1);
    double x_to = m_to / cf_perf_compute_s(&out.params, m_to, 1);
    cf_carry_rule rule = cf_carry_rule_default();
    double phi = 0.05 / (0.004 * 64);
    assert_float_equal(x_to / x_ref, cf_carry_throughput_ratio(&from, &to, CF_PREC_FP16, &rule, phi, m_to / 64.0),
                       1e-9);
    assert_non_null(strstr(out.note, "throughput at the largest batch"));
    assert_string_equal(out.carried_from, "small");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compute_time),
        cmocka_unit_test(test_curves_from_search_profiles),
        cmocka_unit_test(test_sync_time),
        cmocka_unit_test(test_step_time_overlap_and_accumulation),
        cmocka_unit_test(test_network_interval_sides),
        cmocka_unit_test(test_noise_at_batch),
        cmocka_unit_test(test_samples_and_efficiency),
        cmocka_unit_test(test_noise_trace_integral),
        cmocka_unit_test(test_j_table_is_the_direct_integral),
        cmocka_unit_test(test_noise_trace_trend),
        cmocka_unit_test(test_lr_rules),
        cmocka_unit_test(test_pareto_brute_force),
        cmocka_unit_test(test_pareto_front_printed),
        cmocka_unit_test(test_enumeration_invariants),
        cmocka_unit_test(test_enumeration_time_optimal_batch),
        cmocka_unit_test(test_region_pruning_matches_per_row_brute_force),
        cmocka_unit_test(test_enumeration_infeasible),
        cmocka_unit_test(test_advice_is_explained_once),
        cmocka_unit_test(test_memory_ceiling),
        cmocka_unit_test(test_carry_rule_known_answers),
        cmocka_unit_test(test_carry_matches_estimate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
