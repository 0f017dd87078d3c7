/* Step-time model fit: recovery of a known network from synthetic
 * measurements, the NIC bound, the interval's coverage on data drawn from a
 * known model, and the 64-GPU ResNet-50 prediction from a 1–2 node T4
 * profile (real measurements shipped in examples/ and tests/data/). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cloudfit/profiler/measurements.h"
#include "cloudfit/advisor/perf.h"
#include "../advisor/model/perf_internal.h"

#define RESNET50_PARAMS 25557032.0

static cf_measurement row(int nodes, int gpn, int m, double t)
{
    cf_measurement r;
    memset(&r, 0, sizeof r);
    snprintf(r.model, sizeof r.model, "synthetic");
    snprintf(r.gpu, sizeof r.gpu, "T4");
    r.hw_gpus_per_node = 4;
    r.num_nodes = nodes;
    r.num_gpus = nodes * gpn;
    r.local_bsz = m;
    r.step_time_s = t;
    r.sync_time_s = -1;
    for (int i = 0; i < nodes && i < 16; i++)
        r.placement[i] = (char)('0' + gpn);
    return r;
}

/* The truth: a T4-like node (PCIe, 50 Gbit/s TCP NIC) with profiled
 * single-node curves at 1, 2, 4 GPUs and a network of 5 Gbit/s effective,
 * 40 % of the step able to hide it, 5 ms of per-step overhead. */
static cf_perf_params truth_params(double bytes)
{
    cf_perf_params t = cf_perf_defaults(NULL);
    t.gradient_bytes = bytes;
    t.n_curves = 3;
    static const int gs[] = {1, 2, 4};
    for (int c = 0; c < 3; c++) {
        cf_perf_curve *cv = &t.curves[c];
        cv->gpus = gs[c];
        cv->n = 0;
        for (int m = 16; m <= 256; m *= 2) {
            cv->batch[cv->n] = m;
            cv->step_s[cv->n++] = (0.03 + 0.002 * m) * (1 + 0.04 * (gs[c] - 1));
        }
    }
    t.nic_gbps = 50;
    t.inter_gbps = 5;
    t.hide = 0.4;
    t.overhead_s = 0.005;
    t.network_provenance = CF_PROV_FITTED;
    return t;
}

/* The measured rows of `truth` on layouts (nodes, GPUs per node), batches
 * 16..256, each × e^(noise·z) with z from a fixed pseudo-random sequence. */
static size_t rows_of(const cf_perf_params *truth, double bytes, const int (*layouts)[2], size_t n_layouts,
                      double noise, unsigned *seed, cf_measurement *out)
{
    size_t n = 0;
    for (size_t l = 0; l < n_layouts; l++)
        for (int m = 16; m <= 256; m *= 2) {
            double z = 0;
            if (noise > 0) { /* Box–Muller over a small LCG: deterministic */
                *seed = *seed * 1103515245u + 12345u;
                double u1 = ((*seed >> 8) + 1.0) / 16777217.0;
                *seed = *seed * 1103515245u + 12345u;
                double u2 = ((*seed >> 8) + 1.0) / 16777217.0;
                z = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
            }
            double t = cf_perf_step_s(truth, bytes, layouts[l][0], layouts[l][1], m, 1) * exp(noise * z);
            out[n++] = row(layouts[l][0], layouts[l][1], m, t);
        }
    return n;
}

static void test_recovers_synthetic_network(void **state)
{
    (void)state;
    double bytes = 50e6;
    cf_perf_params truth = truth_params(bytes);
    static const int train[][2] = {{1, 1}, {1, 2}, {1, 4}, {2, 1}};
    cf_measurement rows[64];
    unsigned seed = 1;
    size_t n = rows_of(&truth, bytes, train, 4, 0, &seed, rows);
    cf_perf_params start = cf_perf_defaults(NULL), fit;
    cf_perf_fit_report rep;
    assert_int_equal(cf_perf_fit(rows, n, bytes, 50, &start, &fit, &rep), CF_OK);
    assert_true(rep.fitted_inter && rep.fitted_hide && !rep.bound_hit);
    assert_int_equal(rep.n_curves, 3);
    assert_true(fabs(fit.inter_gbps / 5 - 1) < 0.08);      /* the A2 grid's resolution */
    assert_true(fabs(fit.hide - 0.4) <= 0.05 + 1e-9);
    /* predictions hold at layouts never measured: 16 × 4 GPUs */
    for (int m = 16; m <= 256; m *= 2) {
        double want = cf_perf_step_s(&truth, bytes, 16, 4, m, 1);
        double got = cf_perf_step_s(&fit, bytes, 16, 4, m, 1);
        assert_true(fabs(got / want - 1) < 0.03);
    }
    /* the profile's own rows are reproduced exactly */
    assert_float_equal(cf_perf_step_s(&fit, bytes, 1, 4, 64, 1), cf_perf_step_s(&truth, bytes, 1, 4, 64, 1), 1e-12);
    /* fitted on 2 nodes at most: 16 nodes are an extrapolation and say so; 2 are not */
    assert_int_equal(fit.max_nodes_measured, 2);
    assert_int_equal(cf_network_extrapolated_from(&fit, 16), 2);
    assert_int_equal(cf_network_extrapolated_from(&fit, 2), 0);
    /* with a 4-node row among the measurements, 4 nodes are measured ground */
    rows[n++] = row(4, 1, 64, cf_perf_step_s(&truth, bytes, 4, 1, 64, 1));
    assert_int_equal(cf_perf_fit(rows, n, bytes, 50, &start, &fit, &rep), CF_OK);
    assert_int_equal(fit.max_nodes_measured, 4);
    assert_int_equal(cf_network_extrapolated_from(&fit, 4), 0);
    assert_int_equal(cf_network_extrapolated_from(&fit, 8), 4);
    /* carried to another NIC of the same class: still measured somewhere, still said */
    cf_perf_params carried = cf_perf_on_network(&fit, 50, 25);
    assert_int_equal(carried.network_provenance, CF_PROV_ESTIMATED);
    assert_int_equal(cf_network_extrapolated_from(&carried, 8), 4);
    /* no network measured at all: the default is not "extrapolated from" anything */
    cf_perf_params none = cf_perf_defaults(NULL);
    assert_int_equal(cf_network_extrapolated_from(&none, 16), 0);
    /* refitted on single-node rows only: the network (and its node count) is gone */
    assert_int_equal(cf_perf_fit(rows, 3 * 5, bytes, 50, &start, &fit, &rep), CF_OK);
    assert_false(rep.fitted_inter);
    assert_int_equal(cf_network_extrapolated_from(&fit, 16), 0);
}

/* DGX-like rows whose multi-node runs cost nothing beyond compute: 1 and 4
 * GPUs on one node and 2 × 1 GPU, batches 16..256, all at 0.03 + 0.002·m s. */
static size_t free_network_rows(cf_measurement *rows)
{
    size_t n = 0;
    for (int m = 16; m <= 256; m *= 2) {
        rows[n++] = row(1, 1, m, 0.03 + 0.002 * m);
        rows[n++] = row(1, 4, m, 0.03 + 0.002 * m);
        rows[n++] = row(2, 1, m, 0.03 + 0.002 * m);
    }
    return n;
}

/* Those rows fitted with a 400 MB gradient on a NIC of `nic_gbps` (0: unknown). */
static void fit_free_network(double nic_gbps, cf_perf_params *fit, cf_perf_fit_report *rep)
{
    cf_measurement rows[64];
    size_t n = free_network_rows(rows);
    cf_perf_params start = cf_perf_defaults(NULL);
    assert_int_equal(cf_perf_fit(rows, n, 400e6, nic_gbps, &start, fit, rep), CF_OK);
}

/* A network faster than its NIC cannot be fitted: on DGX-like data whose
 * multi-node rows cost nothing beyond compute, the fitted rate stops at
 * the nominal NIC figure, the report says so, and no prediction is faster
 * than the NIC allows. */
static void test_bandwidth_bound(void **state)
{
    (void)state;
    double bytes = 400e6;
    cf_perf_params fit;
    cf_perf_fit_report rep;
    fit_free_network(100, &fit, &rep);
    assert_true(rep.bound_hit && fit.bound_hit);
    assert_true(fit.inter_gbps <= 100 && fit.inter_gbps > 99);
    /* 16 × 4 GPUs: the ring through each NIC carries 2·63/64 · 3.2 Gbit */
    cf_step s = cf_perf_predict(&fit, bytes, 16, 4, 64, 16, 1);
    assert_true(s.allreduce_s >= 2.0 * 63 / 64 * 3.2 / 100 - 1e-12);
    /* never above the NIC whatever the fit or the user says */
    fit.inter_gbps = 1e5;
    assert_true(cf_perf_sync_s(&fit, bytes, 2, 1) >= 3.2 / 100 - 1e-12);
}

/* A NIC the catalog does not give (0) bounds nothing measured: the same
 * "free" network is fitted far above the 10 Gbit/s the default network
 * assumes, and predicted as measured at 2 × 4 GPUs, where a 10 Gbit/s
 * bound and floor would add the ring's bytes at 10 Gbit/s (0.48 s). A
 * measured network slower than the default is fitted as on its known NIC;
 * one measured on a known NIC and carried to an unknown one is bounded by
 * the default's 10 Gbit/s; the default network itself (nothing measured)
 * still assumes 10 Gbit/s. */
static void test_unknown_nic_bounds_nothing(void **state)
{
    (void)state;
    double bytes = 400e6;
    cf_perf_params fit;
    cf_perf_fit_report rep;
    fit_free_network(0, &fit, &rep);
    assert_true(fit.nic_gbps == 0 && fit.inter_gbps > 1000);
    for (int m = 16; m <= 256; m *= 2)
        assert_true(fabs(cf_perf_step_s(&fit, bytes, 2, 4, m, 1) / (0.03 + 0.002 * m) - 1) < 0.02);
    /* carried to a VM whose NIC is also unknown: unchanged, not clamped */
    cf_perf_params carried = cf_perf_on_network(&fit, 0, 0);
    assert_float_equal(carried.inter_gbps, fit.inter_gbps, 1e-9);
    assert_true(carried.nic_gbps == 0);
    /* measured on a known 400 Gbit/s NIC, carried to an unknown one: the default's 10 Gbit/s bounds it */
    cf_perf_params on_known;
    fit_free_network(400, &on_known, &rep);
    assert_true(on_known.inter_gbps > 100);
    carried = cf_perf_on_network(&on_known, 400, 0);
    assert_true(carried.inter_gbps <= CF_DEFAULT_UNKNOWN_NETWORK_GBPS && carried.nic_gbps == CF_DEFAULT_UNKNOWN_NETWORK_GBPS);
    /* nothing measured, profiled on a known NIC, on a VM whose NIC is unknown: the default network, whose NIC
     * stays unknown (its interval spans the catalog's NICs: test_unknown_nic_interval_spans_fabrics) */
    cf_perf_params profiled_only = cf_perf_defaults(NULL);
    carried = cf_perf_on_network(&profiled_only, 400, 0);
    assert_true(carried.inter_gbps == 0 && carried.nic_gbps == 0 && carried.network_provenance == CF_PROV_DEFAULT);
    /* a slower measured network: the same fit as on a known 50 Gbit/s NIC */
    cf_perf_params truth = truth_params(bytes);
    static const int train[][2] = {{1, 1}, {1, 2}, {1, 4}, {2, 1}};
    unsigned seed = 1;
    cf_measurement rows[64];
    size_t n = rows_of(&truth, bytes, train, 4, 0, &seed, rows);
    cf_perf_params start = cf_perf_defaults(NULL);
    cf_perf_params known;
    assert_int_equal(cf_perf_fit(rows, n, bytes, 0, &start, &fit, &rep), CF_OK);
    assert_int_equal(cf_perf_fit(rows, n, bytes, 50, &start, &known, NULL), CF_OK);
    /* (the A2 grid starts at the bound, so its points differ: within its resolution) */
    assert_true(fabs(fit.inter_gbps / known.inter_gbps - 1) < 0.1 && fabs(fit.inter_gbps / 5 - 1) < 0.1);
    assert_true(fabs(fit.hide - known.hide) <= 0.05 + 1e-9);
    /* nothing measured on an unknown NIC: the default network, 10 Gbit/s nominal over TCP */
    cf_perf_params none = cf_perf_on_network(&start, 0, 0);
    assert_float_equal(cf_perf_sync_s(&none, bytes, 2, 1),
                       8 * bytes / (cf_default_inter_gbps(CF_DEFAULT_UNKNOWN_NETWORK_GBPS) * 1e9) +
                           cf_perf_hop_latency_s(&none.k, CF_DEFAULT_UNKNOWN_NETWORK_GBPS, bytes, 2),
                       1e-9);
}

/* The default network on a NIC the catalog does not give guesses 10 Gbit/s:
 * its 80 % interval must hold the predictions on the catalog's slowest NIC
 * (2.5 Gbit/s, TCP) and fastest (6,400 Gbit/s, RDMA), where one on a known
 * NIC (u_def) and one measured keep their width, and the point stays the
 * 10 Gbit/s guess. (The interval was u_def's either way: a Lambda VM's
 * guess looked as certain as a known NIC's, and DGX A100 rows under a GPU
 * name with no catalog NIC erred 96 % with 8 % of them covered.) */
static void test_unknown_nic_interval_spans_fabrics(void **state)
{
    (void)state;
    const double z = CF_INTERVAL_Z;
    double sizes[] = {50e6, 400e6, 4e9};
    for (size_t b = 0; b < sizeof sizes / sizeof *sizes; b++) {
        double bytes = sizes[b];
        cf_perf_params unknown = truth_params(bytes);
        unknown.nic_gbps = 0;
        unknown.inter_gbps = 0;
        unknown.hide = -1;
        unknown.overhead_s = 0;
        unknown.network_provenance = CF_PROV_DEFAULT;
        cf_perf_params slowest = unknown, fastest = unknown, guess = unknown;
        slowest.nic_gbps = CF_UNKNOWN_NIC_SLOWEST_GBPS;
        fastest.nic_gbps = CF_UNKNOWN_NIC_FIT_BOUND_GBPS;
        guess.nic_gbps = CF_DEFAULT_UNKNOWN_NETWORK_GBPS; /* the same guess on a NIC the catalog gives */
        static const int shapes[][2] = {{2, 1}, {2, 4}, {4, 4}, {8, 1}, {16, 4}};
        for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
            int nodes = shapes[i][0], g = shapes[i][1];
            for (int m = 16; m <= 256; m *= 4)
                for (int s = 1; s <= 4; s *= 4) {
                    cf_step u = cf_perf_predict(&unknown, bytes, nodes, g, nodes * g, m, s);
                    cf_step k = cf_perf_predict(&guess, bytes, nodes, g, nodes * g, m, s);
                    double lo = u.step_s * exp(-z * u.sigma), hi = u.step_s * exp(z * u.sigma_up);
                    double t_slow = cf_perf_predict(&slowest, bytes, nodes, g, nodes * g, m, s).step_s;
                    double t_fast = cf_perf_predict(&fastest, bytes, nodes, g, nodes * g, m, s).step_s;
                    assert_true(t_fast < u.step_s && u.step_s < t_slow);
                    assert_true(lo <= t_fast * (1 + 1e-9));
                    assert_true(hi >= t_slow * (1 - 1e-9));
                    /* the point is the guess's; a known NIC's default keeps u_def (narrower) */
                    assert_float_equal(u.step_s, k.step_s, 1e-12 * k.step_s);
                    assert_true(k.sigma < u.sigma && k.sigma_up < u.sigma_up);
                    cf_perf_net net = cf_perf_network_term(&guess, bytes, nodes, g, nodes * g);
                    assert_float_equal(net.sigma_net, guess.k.sigma_default_net, 1e-12);
                }
        }
        /* a VM inferred among several (validate: 100–1,600 Gbit/s): the
         * slowest's point, the interval's fast side reaching the fastest, its
         * slow side u_def's as on the slowest alone; moved to another VM,
         * the span is gone */
        cf_perf_params among = guess, fast = guess;
        among.nic_gbps = 100;
        among.nic_span_gbps[0] = 100;
        among.nic_span_gbps[1] = 1600;
        cf_perf_params alone = among;
        alone.nic_span_gbps[0] = alone.nic_span_gbps[1] = 0;
        fast.nic_gbps = 1600;
        for (int nodes = 2; nodes <= 8; nodes *= 2) {
            cf_step a = cf_perf_predict(&among, bytes, nodes, 4, nodes * 4, 32, 1);
            cf_step o = cf_perf_predict(&alone, bytes, nodes, 4, nodes * 4, 32, 1);
            double t_fast = cf_perf_predict(&fast, bytes, nodes, 4, nodes * 4, 32, 1).step_s;
            assert_float_equal(a.step_s, o.step_s, 1e-12 * o.step_s);
            assert_true(a.step_s * exp(-z * a.sigma) <= t_fast * (1 + 1e-9));
            assert_true(o.step_s * exp(-z * o.sigma) > t_fast);
            assert_float_equal(a.sigma_up, o.sigma_up, 1e-12);
        }
        cf_perf_params moved = cf_perf_on_network(&among, 0, 400);
        assert_float_equal(moved.nic_span_gbps[1], 0, 0);
        /* a network measured on that unknown NIC: σ_net is the fit's, as before */
        cf_perf_params measured = truth_params(bytes);
        measured.nic_gbps = 0;
        measured.sigma_fit = 0.07;
        measured.max_nodes_measured = 2;
        measured.max_node_gpus_measured = 1;
        cf_perf_net net = cf_perf_network_term(&measured, bytes, 2, 1, 2);
        assert_float_equal(net.sigma_net, 0.07, 1e-12);
        assert_float_equal(net.sigma_net_below, 0.07, 1e-12);
        assert_float_equal(net.sigma_net_above, 0.07, 1e-12);
    }
}

/* The 80 % interval covers about 80 % of measurements drawn from a known
 * model with known noise (5 % per step time): the profile's roughness and
 * the probe's fit give σ, and the shipped constants (calibrated on real
 * clusters) put the coverage in the accepted band. The growth in the node
 * count is the truth's own here, so the belief over it is that one point
 * (a_min = a_max = a): the range spans how clusters differ, and one known
 * model is one cluster (bench/accuracy.sh scores the range on data grown
 * otherwise). */
static void test_interval_coverage_known_model(void **state)
{
    (void)state;
    double bytes = 50e6;
    cf_perf_params truth = truth_params(bytes);
    static const int train[][2] = {{1, 1}, {1, 2}, {1, 3}, {1, 4}, {2, 1}};
    static const int test[][2] = {{2, 2}, {2, 4}, {3, 1}, {3, 4}, {4, 2}, {4, 4}, {8, 4}, {16, 4}, {16, 1}};
    truth.n_curves = 4; /* a 3-GPU curve too: the roughness across GPU counts */
    truth.curves[3] = truth.curves[2];
    truth.curves[2].gpus = 3;
    for (int j = 0; j < truth.curves[2].n; j++)
        truth.curves[2].step_s[j] = (0.03 + 0.002 * truth.curves[2].batch[j]) * 1.08;
    size_t covered = 0, total = 0;
    unsigned seed = 7;
    double z80 = cf_normal_two_sided_z(0.8);
    assert_float_equal(z80, 1.2815515655446004, 1e-9);
    for (int trial = 0; trial < 40; trial++) {
        cf_measurement rows[64], targets[128];
        size_t n = rows_of(&truth, bytes, train, 5, 0.05, &seed, rows);
        size_t k = rows_of(&truth, bytes, test, 9, 0.05, &seed, targets);
        cf_perf_params start = cf_perf_defaults(NULL), fit;
        start.k.growth_nodes_min = start.k.growth_nodes_max = truth.k.growth_nodes;
        assert_int_equal(cf_perf_fit(rows, n, bytes, 50, &start, &fit, NULL), CF_OK);
        if (!(fit.sigma_profile > 0.015 && fit.sigma_profile < 0.12)) /* it sees the 5 % noise */
            fail_msg("trial %d: profile sigma %g", trial, fit.sigma_profile);
        for (size_t i = 0; i < k; i++) {
            cf_step p = cf_perf_predict_measurement(&fit, &targets[i], bytes);
            double log_ratio = log(targets[i].step_time_s / p.step_s); /* the two-piece interval: σ below, σ_up above */
            covered += log_ratio < 0 ? -log_ratio <= z80 * p.sigma : log_ratio <= z80 * p.sigma_up;
            total++;
        }
    }
    double coverage = (double)covered / (double)total;
    print_message("coverage of the 80 %% interval on %zu rows drawn from a known model: %.1f%%\n", total,
                  100 * coverage);
    assert_true(coverage >= 0.75 && coverage <= 0.92);
}

/* The growth exponent's range is a belief over clusters: where each
 * cluster's all-reduce grows with its own exponent, drawn from that belief
 * (uniform on [a_min, a_max] = [0, 2]), the interval of rows beyond the
 * probe covers about 80 % of them across clusters, though the point keeps
 * the shipped a = 0.5 (83.9 % here; 49.6 % of the rows of clusters above
 * 1.5). Per cluster it does not: a benign one is over-covered, a fast one
 * under (docs/model.md "Intervals"). The interval before 2026-11-28 (range
 * [0, 1], σ times the network's share) covers 74.9 % here, 32.4 % above
 * 1.5; with the range [0, 2] 82.1 %. */
static void test_interval_coverage_over_growth_belief(void **state)
{
    (void)state;
    double bytes = 50e6;
    static const int train[][2] = {{1, 1}, {1, 2}, {1, 4}, {2, 1}};
    static const int beyond[][2] = {{3, 1}, {4, 1}, {6, 1}, {8, 1}, {16, 1}}; /* GPUs per VM as probed: no shape term */
    size_t covered = 0, total = 0, covered_slow = 0, total_slow = 0;
    unsigned seed = 11;
    double z80 = cf_normal_two_sided_z(0.8);
    for (int trial = 0; trial < 40; trial++) {
        cf_perf_params truth = truth_params(bytes);
        truth.inter_gbps = 2; /* a network that shows: the all-reduce is ~40 % of a step */
        truth.k.growth_nodes = CF_PERF_GROWTH_NODES_MIN +
                               (CF_PERF_GROWTH_NODES_MAX - CF_PERF_GROWTH_NODES_MIN) * (trial + 0.5) / 40.0;
        cf_measurement rows[64], targets[128];
        size_t n = rows_of(&truth, bytes, train, 4, 0.05, &seed, rows);
        size_t k = rows_of(&truth, bytes, beyond, 5, 0.05, &seed, targets);
        cf_perf_params start = cf_perf_defaults(NULL), fit;
        assert_int_equal(cf_perf_fit(rows, n, bytes, 50, &start, &fit, NULL), CF_OK);
        for (size_t i = 0; i < k; i++) {
            cf_step p = cf_perf_predict_measurement(&fit, &targets[i], bytes);
            double log_ratio = log(targets[i].step_time_s / p.step_s);
            int in = log_ratio < 0 ? -log_ratio <= z80 * p.sigma : log_ratio <= z80 * p.sigma_up;
            covered += in;
            total++;
            if (truth.k.growth_nodes > 1.5) {
                covered_slow += in;
                total_slow++;
            }
        }
    }
    double coverage = (double)covered / (double)total, slow = (double)covered_slow / (double)total_slow;
    print_message("growth exponent drawn from [%g, %g]: the 80 %% interval covers %.1f%% of %zu rows beyond the "
                  "probe (%.1f%% where it exceeds 1.5)\n",
                  CF_PERF_GROWTH_NODES_MIN, CF_PERF_GROWTH_NODES_MAX, 100 * coverage, total, 100 * slow);
    assert_true(coverage >= 0.75 && coverage <= 0.92);
}

static void test_needs_single_node_rows(void **state)
{
    (void)state;
    cf_measurement rows[2] = {row(2, 1, 32, 0.1), row(2, 4, 32, 0.12)};
    cf_perf_params start = cf_perf_defaults(NULL), fit;
    assert_int_equal(cf_perf_fit(rows, 2, 1e6, 50, &start, &fit, NULL), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "single-node"));
}

static void test_resnet50_64gpu_from_small_profile(void **state)
{
    (void)state;
    cf_measurement_set profile, target;
    assert_int_equal(cf_measurements_load(CF_SOURCE_DIR "/examples/data/resnet50-t4-profile.csv", &profile), CF_OK);
    assert_int_equal(cf_measurements_load(CF_SOURCE_DIR "/tests/data/resnet50-t4-64gpu.csv", &target), CF_OK);
    for (size_t i = 0; i < profile.n_rows; i++)
        assert_true(profile.rows[i].num_nodes <= 2);
    cf_perf_params start = cf_perf_defaults(NULL), fit;
    cf_perf_fit_report rep;
    /* g4dn.12xlarge: 50 Gbit/s */
    assert_int_equal(cf_perf_fit(profile.rows, profile.n_rows, RESNET50_PARAMS * 4, 50, &start, &fit, &rep), CF_OK);
    assert_true(rep.fitted_inter);
    assert_int_equal(target.n_rows, 8);
    double worst = 0;
    for (size_t i = 0; i < target.n_rows; i++) {
        const cf_measurement *r = &target.rows[i];
        assert_int_equal(r->num_gpus, 64);
        double pred = cf_perf_step_s(&fit, RESNET50_PARAMS * 4, r->num_nodes, 4, r->local_bsz, 1);
        double err = fabs(pred / r->step_time_s - 1);
        print_message("64 GPUs, batch %3d: measured %.3f s, predicted %.3f s, error %.1f%%\n", r->local_bsz,
                      r->step_time_s, pred, 100 * err);
        worst = fmax(worst, err);
    }
    /* The 16-node rows are the Pollux scalability campaign, where the
     * all-reduce of small batches costs more than its growth law from two
     * nodes says (docs/model.md "What the data show"): the model's weakest
     * region; large batches are within 5 %. */
    assert_true(worst <= 0.40);
    cf_measurements_free(&profile);
    cf_measurements_free(&target);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recovers_synthetic_network),
        cmocka_unit_test(test_bandwidth_bound),
        cmocka_unit_test(test_unknown_nic_bounds_nothing),
        cmocka_unit_test(test_unknown_nic_interval_spans_fabrics),
        cmocka_unit_test(test_interval_coverage_known_model),
        cmocka_unit_test(test_interval_coverage_over_growth_belief),
        cmocka_unit_test(test_needs_single_node_rows),
        cmocka_unit_test(test_resnet50_64gpu_from_small_profile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
