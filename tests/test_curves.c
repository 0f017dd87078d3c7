/* Tests of advisor/curves.c: throughput vs node count of a chosen VM type
 * (the throughput model at the chosen batch, against linear scaling) and
 * statistical efficiency vs global batch (1 at the recipe's batch). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cloudfit/advisor/curves.h"

typedef struct {
    cf_job job;
    cf_constraints limits;
    cf_gpu_perf perf;
    cf_vm vm;
    cf_noise_model noise;
    cf_config chosen;
} fixture;

static void setup(fixture *f)
{
    memset(f, 0, sizeof *f);
    f->job.parameters = 25e6;
    f->job.gradient_bytes = 4;
    f->job.total_samples = 1e8;
    f->job.batch = 256;
    f->limits.max_nodes = 8;
    f->limits.max_gpus = 64;
    snprintf(f->perf.gpu, sizeof f->perf.gpu, "T4");
    f->perf.params = cf_perf_defaults(NULL);
    f->perf.params.alpha_s = 0.05;
    f->perf.params.beta_s = 0.002;
    snprintf(f->vm.gpu_model, sizeof f->vm.gpu_model, "T4");
    snprintf(f->vm.instance_type, sizeof f->vm.instance_type, "g4dn.12xlarge");
    f->vm.gpu_count = 4;
    f->vm.network_gbps = 50;
    cf_noise_model_init(&f->noise, 256, 4000, NULL, 0, CF_PROV_MEASURED);
    f->chosen = (cf_config){.vm = &f->vm, .nodes = 3, .gpus_per_node = 4, .local_batch = 64, .accumulation = 2};
}

static void test_scaling_curve(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    cf_scaling_point pts[32];
    size_t n = 0;
    assert_int_equal(cf_scaling_curve(&f.job, &f.limits, &f.perf, &f.noise, &f.chosen, pts, 32, &n), CF_OK);
    assert_int_equal(n, 8); /* max_nodes */
    for (size_t i = 0; i < n; i++) {
        double global = (double)pts[i].nodes * 4 * 64 * 2;
        assert_int_equal(pts[i].nodes, (int)i + 1);
        assert_true(pts[i].step_time_s > 0);
        assert_true(fabs(pts[i].samples_per_s * pts[i].step_time_s / global - 1) < 1e-12);
        /* linear scaling from one node, never beaten */
        assert_true(fabs(pts[i].ideal_samples_per_s - pts[0].samples_per_s * pts[i].nodes) < 1e-6);
        assert_true(pts[i].samples_per_s <= pts[i].ideal_samples_per_s * (1 + 1e-12));
        double steps = cf_samples_to_target(&f.noise, f.job.total_samples, global) / global;
        assert_true(fabs(pts[i].hours - steps * pts[i].step_time_s / 3600) < 1e-9);
        if (i > 0) /* more nodes, more throughput (this model, this batch) */
            assert_true(pts[i].samples_per_s > pts[i - 1].samples_per_s);
    }
    /* the all-reduce between VMs costs something from two nodes on */
    assert_true(pts[1].samples_per_s < pts[1].ideal_samples_per_s);
}

static void test_scaling_limits(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    cf_scaling_point pts[32];
    size_t n = 0;
    f.limits.max_gpus = 8; /* two VMs of 4 GPUs, but the chosen one has 3: still shown */
    assert_int_equal(cf_scaling_curve(&f.job, &f.limits, &f.perf, &f.noise, &f.chosen, pts, 32, &n), CF_OK);
    assert_int_equal(n, 3);
    f.limits.max_gpus = 64;
    assert_int_equal(cf_scaling_curve(&f.job, &f.limits, &f.perf, &f.noise, &f.chosen, pts, 5, &n), CF_OK);
    assert_int_equal(n, 5); /* the caller's room */
    snprintf(f.perf.gpu, sizeof f.perf.gpu, "A100-40GB");
    assert_int_equal(cf_scaling_curve(&f.job, &f.limits, &f.perf, &f.noise, &f.chosen, pts, 32, &n), CF_ERR_INVALID);
    assert_int_equal(n, 0);
    assert_int_equal(cf_scaling_curve(&f.job, &f.limits, NULL, &f.noise, &f.chosen, pts, 32, &n), CF_ERR_INVALID);
}

static void test_stateff_curve(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    cf_stateff_point pts[5];
    assert_int_equal(cf_stateff_curve(&f.noise, f.job.total_samples, 64, 4096, 5, pts), 5);
    double want_m[] = {64, 181.019, 512, 1448.15, 4096};
    for (size_t i = 0; i < 5; i++) {
        assert_true(fabs(pts[i].global_batch / want_m[i] - 1) < 1e-5);
        assert_true(fabs(pts[i].efficiency - cf_stat_efficiency(&f.noise, pts[i].global_batch)) < 1e-12);
        if (i > 0)
            assert_true(pts[i].efficiency < pts[i - 1].efficiency);
    }
    assert_true(pts[0].efficiency > 1); /* below the recipe's batch */
    assert_true(pts[4].efficiency < 1);
    cf_stateff_point at[3];
    assert_int_equal(cf_stateff_curve(&f.noise, f.job.total_samples, 64, 1024, 3, at), 3);
    assert_true(fabs(at[1].global_batch - 256) < 1e-9);
    assert_true(fabs(at[1].efficiency - 1) < 1e-9); /* M0 */
    assert_true(fabs(at[1].samples_to_target / f.job.total_samples - 1) < 1e-9);
    assert_int_equal(cf_stateff_curve(&f.noise, 1, 10, 5, 3, at), 0);
    assert_int_equal(cf_stateff_curve(&f.noise, 1, 0, 5, 3, at), 0);
    assert_int_equal(cf_stateff_curve(&f.noise, 1, 1, 5, 1, at), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scaling_curve),
        cmocka_unit_test(test_scaling_limits),
        cmocka_unit_test(test_stateff_curve),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
