/* The CPU engine end to end: training lowers the loss (every optimizer,
 * both activations), a fixed seed is reproducible, exported synthetic data
 * trains identically, memory limits give "out of memory", bad
 * configurations are refused, and the CUDA engine says it is absent. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cloudfit/cuda_probe.h"
#include "engine_cpu.h"
#include "npy.h"

static cf_engine_config small_config(cf_optimizer opt, double lr)
{
    cf_engine_config c;
    memset(&c, 0, sizeof c);
    c.widths[0] = 32;
    c.widths[1] = 64;
    c.widths[2] = 4;
    c.n_widths = 3;
    c.activation = CF_ACT_RELU;
    c.optimizer = opt;
    c.lr = lr;
    c.seed = 42;
    c.synthetic_samples = 4096;
    c.threads = 1;
    return c;
}

/* Mean loss of the first and of the last `window` of `steps` steps. */
static void train(const cf_engine_config *c, int steps, int batch, int micro, double *first, double *last)
{
    const cf_engine_ops *ops = cf_engine_cpu();
    cf_engine *e;
    assert_int_equal(ops->create(c, &e), CF_OK);
    const int window = 20;
    *first = *last = 0;
    for (int s = 0; s < steps; s++) {
        cf_engine_step st;
        assert_int_equal(ops->train_step(e, batch, micro, &st), CF_OK);
        assert_int_equal(st.samples, (long)batch * micro);
        assert_true(st.time_s > 0);
        if (s < window)
            *first += st.loss / window;
        if (s >= steps - window)
            *last += st.loss / window;
    }
    ops->destroy(e);
}

static void test_training_lowers_the_loss(void **state)
{
    (void)state;
    static const struct {
        cf_optimizer opt;
        double lr;
        cf_activation act;
    } runs[] = {
        {CF_OPT_SGD, 0.1, CF_ACT_RELU},   {CF_OPT_SGD, 0.1, CF_ACT_GELU},    {CF_OPT_MOMENTUM, 0.02, CF_ACT_RELU},
        {CF_OPT_ADAM, 2e-3, CF_ACT_RELU}, {CF_OPT_ADAMW, 2e-3, CF_ACT_GELU}, {CF_OPT_LAMB, 2e-3, CF_ACT_RELU},
    };
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        cf_engine_config c = small_config(runs[i].opt, runs[i].lr);
        c.activation = runs[i].act;
        double first, last;
        train(&c, 300, 32, 1, &first, &last);
        /* Starting near log(4) = 1.39 (chance), the teacher's labels must
         * be learnt well past chance in 300 steps. */
        if (!(first > 1.0 && last < 0.75 * first))
            fail_msg("%s/%s: loss %.4f over the first steps, %.4f over the last", cf_optimizer_name(runs[i].opt),
                     runs[i].act == CF_ACT_RELU ? "relu" : "gelu", first, last);
    }
}

static void run_steps(const cf_engine_config *c, int steps, int micro, cf_engine_step *out, float **params,
                      size_t *n)
{
    const cf_engine_ops *ops = cf_engine_cpu();
    cf_engine *e;
    assert_int_equal(ops->create(c, &e), CF_OK);
    for (int s = 0; s < steps; s++)
        assert_int_equal(ops->train_step(e, 16, micro, &out[s]), CF_OK);
    *n = cf_engine_cpu_n_params(e);
    *params = malloc(*n * sizeof **params);
    memcpy(*params, cf_engine_cpu_params(e), *n * sizeof **params);
    ops->destroy(e);
}

static void assert_same_run(const cf_engine_step *a, const cf_engine_step *b, int steps)
{
    for (int s = 0; s < steps; s++) {
        assert_true(a[s].loss == b[s].loss);
        assert_true(a[s].mean_sqnorm == b[s].mean_sqnorm);
        assert_int_equal(a[s].n_micro, b[s].n_micro);
        for (int i = 0; i < a[s].n_micro; i++)
            assert_true(a[s].micro_sqnorms[i] == b[s].micro_sqnorms[i]);
    }
}

static void test_fixed_seed_is_deterministic(void **state)
{
    (void)state;
    enum { STEPS = 25 };
    cf_engine_step a[STEPS], b[STEPS], c[STEPS];
    float *pa, *pb, *pc;
    size_t n;
    cf_engine_config cfg = small_config(CF_OPT_ADAM, 1e-3);
    run_steps(&cfg, STEPS, 3, a, &pa, &n);
    run_steps(&cfg, STEPS, 3, b, &pb, &n);
    assert_same_run(a, b, STEPS);
    assert_memory_equal(pa, pb, n * sizeof *pa);
    cfg.seed = 43;
    run_steps(&cfg, STEPS, 3, c, &pc, &n);
    assert_true(a[0].loss != c[0].loss);
    assert_true(memcmp(pa, pc, n * sizeof *pa) != 0);
    free(pa);
    free(pb);
    free(pc);
}

static void test_micro_batch_norms(void **state)
{
    (void)state;
    cf_engine_config cfg = small_config(CF_OPT_SGD, 0.05);
    const cf_engine_ops *ops = cf_engine_cpu();
    cf_engine *e;
    assert_int_equal(ops->create(&cfg, &e), CF_OK);
    cf_engine_step st;
    assert_int_equal(ops->train_step(e, 8, 8, &st), CF_OK);
    assert_int_equal(st.n_micro, 8);
    /* |mean|² ≤ mean of |g_i|² (Jensen), with equality only when all g_i
     * agree, which 8 different micro-batches do not. */
    double mean_micro = 0;
    for (int i = 0; i < 8; i++) {
        assert_true(st.micro_sqnorms[i] > 0);
        mean_micro += st.micro_sqnorms[i] / 8;
    }
    assert_true(st.mean_sqnorm > 0 && st.mean_sqnorm < mean_micro);
    assert_int_equal(ops->train_step(e, 8, CF_ENGINE_MAX_MICRO + 1, &st), CF_ERR_INVALID);
    assert_int_equal(ops->train_step(e, 0, 1, &st), CF_ERR_INVALID);
    ops->destroy(e);
}

static void test_exported_synthetic_data_trains_identically(void **state)
{
    (void)state;
    char dir[64] = "/tmp/cf-test-train-XXXXXX", xp[96], yp[96];
    assert_non_null(mkdtemp(dir));
    snprintf(xp, sizeof xp, "%s/x.npy", dir);
    snprintf(yp, sizeof yp, "%s/y.npy", dir);
    cf_engine_config cfg = small_config(CF_OPT_MOMENTUM, 0.02);
    cfg.synthetic_samples = 300;
    assert_int_equal(cf_engine_write_synthetic_npy(&cfg, xp, yp), CF_OK);
    enum { STEPS = 40 }; /* 40 × 16 samples: more than two epochs of 300 */
    cf_engine_step a[STEPS], b[STEPS];
    float *pa, *pb;
    size_t n;
    run_steps(&cfg, STEPS, 1, a, &pa, &n);
    cfg.npy_x = xp;
    cfg.npy_y = yp;
    run_steps(&cfg, STEPS, 1, b, &pb, &n);
    assert_same_run(a, b, STEPS);
    assert_memory_equal(pa, pb, n * sizeof *pa);
    free(pa);
    free(pb);
    unlink(xp);
    unlink(yp);
    rmdir(dir);
}

static void test_memory_limit(void **state)
{
    (void)state;
    const cf_engine_ops *ops = cf_engine_cpu();
    cf_engine_config cfg = small_config(CF_OPT_ADAM, 1e-3);
    cfg.memory_limit_mib = 1.0; /* the model state is ~27 KiB; each row ~0.8 KiB */
    cf_engine *e;
    assert_int_equal(ops->create(&cfg, &e), CF_OK);
    cf_engine_step st;
    assert_int_equal(ops->train_step(e, 256, 1, &st), CF_OK);
    assert_int_equal(ops->train_step(e, 4096, 1, &st), CF_ERR_DOES_NOT_FIT);
    assert_non_null(strstr(cf_error_message(), "out of memory"));
    assert_non_null(strstr(cf_error_message(), "local batch 4096"));
    /* The engine is still usable after a batch that did not fit. */
    assert_int_equal(ops->train_step(e, 256, 2, &st), CF_OK);
    cf_device_info info;
    assert_int_equal(ops->describe(e, &info), CF_OK);
    assert_true(fabs(info.memory_gib - 1.0 / 1024) < 1e-9);
    assert_non_null(strstr(info.name, "CPU"));
    ops->destroy(e);

    /* The environment variable, when the config leaves it at 0. */
    cfg.memory_limit_mib = 0;
    cfg.widths[1] = 4096; /* 151,556 parameters: 2.3 MiB of weights, gradients and Adam state */
    setenv("CLOUDFIT_CPU_MEMORY_LIMIT_MIB", "2", 1);
    assert_int_equal(ops->create(&cfg, &e), CF_ERR_DOES_NOT_FIT);
    assert_non_null(strstr(cf_error_message(), "out of memory: the model state needs"));
    assert_non_null(strstr(cf_error_message(), "CLOUDFIT_CPU_MEMORY_LIMIT_MIB"));
    /* a value it cannot use is the default, as every tuning variable's (the CLI warns): it was
     * CF_ERR_INVALID, exit 3, and "1e99" a limit of 1e99 MiB */
    static const char *const unusable[] = {"lots", "-5", "0", "1e99"};
    for (size_t k = 0; k < sizeof unusable / sizeof *unusable; k++) {
        setenv("CLOUDFIT_CPU_MEMORY_LIMIT_MIB", unusable[k], 1);
        assert_int_equal(ops->create(&cfg, &e), CF_OK);
        assert_int_equal(ops->describe(e, &info), CF_OK);
        assert_true(info.memory_gib <= 4.0);
        ops->destroy(e);
    }
    setenv("CLOUDFIT_CPU_MEMORY_LIMIT_MIB", "64", 1);
    assert_int_equal(ops->create(&cfg, &e), CF_OK);
    ops->destroy(e);
    unsetenv("CLOUDFIT_CPU_MEMORY_LIMIT_MIB");

    /* Issue 33 (8): by default the engine is a device of a quarter of the
     * machine's memory, never more than 4 GiB (it was the whole machine). */
    assert_int_equal(ops->create(&cfg, &e), CF_OK);
    assert_int_equal(ops->describe(e, &info), CF_OK);
    assert_true(info.memory_gib > 0 && info.memory_gib <= 4.0);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    assert_true(info.memory_gib <= (double)pages * (double)page / 4 / (1 << 30) + 1e-9);
    assert_int_equal(ops->train_step(e, 1 << 20, 1, &st), CF_ERR_DOES_NOT_FIT); /* 2^20 rows of 4,096 wide: ~17 GiB */
    assert_non_null(strstr(cf_error_message(), "(default: 1/4 of "));
    ops->destroy(e);
}

static void test_bad_configurations(void **state)
{
    (void)state;
    const cf_engine_ops *ops = cf_engine_cpu();
    cf_engine *e = (cf_engine *)1;
    cf_engine_config c = small_config(CF_OPT_SGD, 0.1);
    c.n_widths = 1;
    assert_int_equal(ops->create(&c, &e), CF_ERR_INVALID);
    assert_null(e);
    c = small_config(CF_OPT_SGD, 0.1);
    c.widths[2] = 1;
    assert_int_equal(ops->create(&c, &e), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "at least 2 classes"));
    c = small_config(CF_OPT_SGD, -1);
    assert_int_equal(ops->create(&c, &e), CF_ERR_INVALID);
    c = small_config(CF_OPT_SGD, 0.1);
    c.npy_x = "x.npy";
    assert_int_equal(ops->create(&c, &e), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "both an x file and a y file"));
    c.npy_y = "/nonexistent/y.npy";
    c.npy_x = "/nonexistent/x.npy";
    assert_int_not_equal(ops->create(&c, &e), CF_OK);
    assert_non_null(strstr(cf_error_message(), "/nonexistent/x.npy"));
}

static void test_diverging_run_is_reported(void **state)
{
    (void)state;
    cf_engine_config c = small_config(CF_OPT_SGD, 1e30);
    const cf_engine_ops *ops = cf_engine_cpu();
    cf_engine *e;
    assert_int_equal(ops->create(&c, &e), CF_OK);
    cf_engine_step st;
    cf_status status = CF_OK;
    for (int s = 0; s < 10 && status == CF_OK; s++)
        status = ops->train_step(e, 16, 1, &st);
    assert_int_equal(status, CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "training diverged"));
    ops->destroy(e);
}

/* Features that are finite but huge: the gradient's squared norm overflows
 * while the loss is still a number. The message names the norm, not the
 * finite loss as the proof of divergence. */
static void test_divergence_names_what_is_not_finite(void **state)
{
    (void)state;
    char dir[] = "/tmp/cf-test-diverge-XXXXXX", xp[64], yp[64];
    assert_non_null(mkdtemp(dir));
    snprintf(xp, sizeof xp, "%s/x.npy", dir);
    snprintf(yp, sizeof yp, "%s/y.npy", dir);
    float x[8 * 32];
    int y[8];
    for (int i = 0; i < 8 * 32; i++)
        x[i] = i % 2 ? 1e30f : -1e30f;
    for (int i = 0; i < 8; i++)
        y[i] = i % 4;
    assert_int_equal(cf_npy_save_f32_matrix(xp, x, 8, 32), CF_OK);
    assert_int_equal(cf_npy_save_i64_vector(yp, y, 8), CF_OK);
    cf_engine_config c = small_config(CF_OPT_SGD, 0.01);
    c.npy_x = xp;
    c.npy_y = yp;
    const cf_engine_ops *ops = cf_engine_cpu();
    cf_engine *e;
    assert_int_equal(ops->create(&c, &e), CF_OK);
    cf_engine_step st;
    assert_int_equal(ops->train_step(e, 4, 1, &st), CF_ERR_INVALID);
    assert_true(isfinite(st.loss));
    if (!strstr(cf_error_message(), "training diverged: the gradient's squared norm is inf at step 1 (loss "))
        fail_msg("message: %s", cf_error_message());
    ops->destroy(e);
    unlink(xp);
    unlink(yp);
    rmdir(dir);
}

static void test_flops_per_sample(void **state)
{
    (void)state;
    cf_engine_config c;
    memset(&c, 0, sizeof c);
    int w[4] = {784, 1024, 1024, 10};
    memcpy(c.widths, w, sizeof w);
    c.n_widths = 4;
    /* forward 2·(784·1024 + 1024·1024 + 1024·10) = 3,723,264; weight
     * gradients the same; input gradients 2·(1024·1024 + 1024·10). */
    assert_true(cf_engine_flops_per_sample(&c) == 3723264.0 * 2 + 2117632.0);
}

/* The GPU engine exists exactly when a GPU answers; otherwise the reason
 * (no CUDA in the build, or the driver's answer) and a way out. */
static void test_cuda_engine_answers_honestly(void **state)
{
    (void)state;
    cf_device_info dev[1];
    int n = 0;
    int have_gpu = cf_devices_list(dev, 1, &n) == CF_OK && n > 0;
    cf_error_clear();
    const cf_engine_ops *ops = cf_engine_cuda();
    if (have_gpu) {
        assert_non_null(ops);
        assert_string_equal(ops->name, "cuda");
        return;
    }
    assert_null(ops);
    assert_int_equal(cf_error_status(), CF_ERR_UNAVAILABLE);
    const char *m = cf_error_message();
    assert_true(strstr(m, "built without CUDA") || strstr(m, "no usable CUDA GPU") || strstr(m, "no CUDA GPU"));
    assert_non_null(strstr(cf_error_hint_text(), "cpu"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_training_lowers_the_loss),
        cmocka_unit_test(test_fixed_seed_is_deterministic),
        cmocka_unit_test(test_micro_batch_norms),
        cmocka_unit_test(test_exported_synthetic_data_trains_identically),
        cmocka_unit_test(test_memory_limit),
        cmocka_unit_test(test_bad_configurations),
        cmocka_unit_test(test_diverging_run_is_reported),
        cmocka_unit_test(test_divergence_names_what_is_not_finite),
        cmocka_unit_test(test_flops_per_sample),
        cmocka_unit_test(test_cuda_engine_answers_honestly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
