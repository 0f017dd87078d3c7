/* Throughput-model fit (GSL): recovery of known parameters from synthetic
 * measurements, and the 64-GPU ResNet-50 prediction from a 1–2 node T4
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

static void test_recovers_synthetic_parameters(void **state)
{
    (void)state;
    cf_perf_params truth = {0};
    truth.alpha_s = 0.03;
    truth.beta_s = 0.002;
    truth.contention = 0.05;
    truth.intra_gbps = 40;
    truth.inter_gbps = 5;
    truth.latency_s = 0.002;
    truth.gamma = 3;
    double bytes = 50e6;
    cf_measurement rows[200];
    size_t n = 0;
    static const int layouts[][2] = {{1, 1}, {1, 2}, {1, 4}, {2, 1}, {2, 4}, {4, 4}};
    for (size_t l = 0; l < sizeof layouts / sizeof *layouts; l++)
        for (int m = 16; m <= 256; m *= 2)
            rows[n] = row(layouts[l][0], layouts[l][1], m,
                          cf_perf_step_s(&truth, bytes, layouts[l][0], layouts[l][1], m, 1)),
            n++;
    cf_perf_params start = {0}, fit;
    start.gamma = 2;
    start.latency_s = 0.001;
    cf_perf_fit_report rep;
    assert_int_equal(cf_perf_fit(rows, n, bytes, &start, &fit, &rep), CF_OK);
    assert_true(rep.fitted_inter && rep.fitted_intra && rep.fitted_gamma);
    assert_true(rep.rel_rmse < 0.01);
    /* predictions match everywhere, including untried 16-node layouts */
    for (int m = 8; m <= 512; m *= 2) {
        double want = cf_perf_step_s(&truth, bytes, 16, 4, m, 1);
        double got = cf_perf_step_s(&fit, bytes, 16, 4, m, 1);
        assert_true(fabs(got / want - 1) < 0.03);
    }
    assert_true(fabs(fit.beta_s / truth.beta_s - 1) < 0.02);
}

static void test_needs_two_single_gpu_batches(void **state)
{
    (void)state;
    cf_measurement rows[2] = {row(1, 1, 32, 0.1), row(1, 4, 32, 0.12)};
    cf_perf_params start = {0}, fit;
    assert_int_equal(cf_perf_fit(rows, 2, 1e6, &start, &fit, NULL), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "single-GPU"));
}

static void test_resnet50_64gpu_from_small_profile(void **state)
{
    (void)state;
    cf_measurement_set profile, target;
    assert_int_equal(cf_measurements_load(CF_SOURCE_DIR "/examples/data/resnet50-t4-profile.csv", &profile), CF_OK);
    assert_int_equal(cf_measurements_load(CF_SOURCE_DIR "/tests/data/resnet50-t4-64gpu.csv", &target), CF_OK);
    for (size_t i = 0; i < profile.n_rows; i++)
        assert_true(profile.rows[i].num_nodes <= 2);
    cf_perf_params start = {0}, fit;
    start.gamma = 2;
    start.latency_s = 0.001;
    cf_perf_fit_report rep;
    assert_int_equal(cf_perf_fit(profile.rows, profile.n_rows, RESNET50_PARAMS * 4, &start, &fit, &rep), CF_OK);
    assert_true(rep.r2_single_gpu >= 0.99);
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
    assert_true(worst <= 0.15);
    cf_measurements_free(&profile);
    cf_measurements_free(&target);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recovers_synthetic_parameters),
        cmocka_unit_test(test_needs_two_single_gpu_batches),
        cmocka_unit_test(test_resnet50_64gpu_from_small_profile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
