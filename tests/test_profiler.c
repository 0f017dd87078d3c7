/* The profiler on a fake engine whose answers are known: step times
 * α + β·m (with outliers the median must ignore), an out-of-memory answer
 * above a set batch, and gradients from the linear-regression problem of
 * docs/profiler.md "The gradient noise scale" (analytic noise scale). Also the fit, the JSON round trip,
 * the cache key and the all-or-nothing rule on failures. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cloudfit/common/hash.h"
#include "cloudfit/profiler.h"
#include "cloudfit/spec.h"

#define DIM 16
#define ALPHA_S 0.002
#define BETA_S 0.0001
#define CEILING 200

/* ---- a fake engine ------------------------------------------------------------- */

struct cf_engine {
    uint64_t rng;
    int spare_ok;
    double spare;
    long steps;
    double d[DIM];
};


/* cf_profile_sweep over a spec: its job, and its profile section as the settings. */
static cf_status run_profile(const cf_probe_backend *be, const cf_spec *spec, cf_profile_options *o, cf_profile *p)
{
    o->probe.settings = &spec->probe;
    return cf_profile_sweep(be, &spec->job, o, p);
}

static int fail_at_batch = 0;   /* train_step fails (not OOM) at this batch */
static int noise_ceiling = 0;   /* not 0: a step of several micro-batches runs out of memory above this batch */

static double uniform01(struct cf_engine *e)
{
    uint64_t z = (e->rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(struct cf_engine *e)
{
    if (e->spare_ok) {
        e->spare_ok = 0;
        return e->spare;
    }
    double r = sqrt(-2 * log(uniform01(e))), t = 6.283185307179586 * uniform01(e);
    e->spare = r * sin(t);
    e->spare_ok = 1;
    return r * cos(t);
}

/* B_noise of linear regression with σ = 1 at |d| = 1: (n(|d|²+σ²)+|d|²)/|d|². */
static double analytic_b_noise(void)
{
    return (DIM * 2.0 + 1.0) / 1.0;
}

static int model_too_big; /* fake_create answers that the model state does not fit */

static cf_status fake_create(const cf_engine_config *config, cf_engine **out)
{
    if (model_too_big)
        return cf_error_set(CF_ERR_DOES_NOT_FIT, "out of memory: the weights need more than the fake's 16 GB");
    struct cf_engine *e = calloc(1, sizeof *e);
    if (!e)
        return CF_ERR_NOMEM;
    e->rng = config->seed * 7919u + 1;
    for (int i = 0; i < DIM; i++)
        e->d[i] = (i % 2 ? 1.0 : -1.0) / sqrt((double)DIM); /* |d| = 1 */
    *out = e;
    return CF_OK;
}

static cf_status fake_describe(cf_engine *e, cf_device_info *out)
{
    (void)e;
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "Fake GPU 16GB");
    out->memory_gib = 16;
    return CF_OK;
}

static cf_status fake_step(cf_engine *e, int b, int k, cf_engine_step *out)
{
    memset(out, 0, sizeof *out);
    if (b > CEILING)
        return cf_error_set(CF_ERR_DOES_NOT_FIT, "out of memory: local batch %d (model state 1 MiB + activations)", b);
    if (b == fail_at_batch)
        return cf_error_set(CF_ERR_INVALID, "training diverged");
    if (noise_ceiling != 0 && k > 1 && b > noise_ceiling)
        return cf_error_set(CF_ERR_DOES_NOT_FIT, "out of memory: %d micro-batches of %d (gradients kept apart)", k, b);
    e->steps++;
    double mean[DIM] = {0};
    for (int j = 0; j < k; j++) {
        double g[DIM] = {0}, x[DIM];
        for (int s = 0; s < b; s++) {
            double dx = 0;
            for (int i = 0; i < DIM; i++) {
                x[i] = normal(e);
                dx += e->d[i] * x[i];
            }
            double r = dx - normal(e);
            for (int i = 0; i < DIM; i++)
                g[i] += r * x[i] / b;
        }
        double sq = 0;
        for (int i = 0; i < DIM; i++) {
            sq += g[i] * g[i];
            mean[i] += g[i] / k;
        }
        out->micro_sqnorms[j] = sq;
    }
    for (int i = 0; i < DIM; i++)
        out->mean_sqnorm += mean[i] * mean[i];
    out->n_micro = k;
    out->samples = (long)b * k;
    /* Every 5th step is a 10× outlier: the median must not see it. */
    out->time_s = k * (ALPHA_S + BETA_S * b) * (e->steps % 5 == 0 ? 10.0 : 1.0 + 0.001 * (double)(e->steps % 3));
    out->loss = 1.0;
    return CF_OK;
}

static void fake_destroy(cf_engine *e)
{
    free(e);
}

static const cf_engine_ops fake_ops = {"fake", fake_create, fake_describe, fake_step, fake_destroy};

/* ---- helpers -------------------------------------------------------------------- */

static const char *spec_text =
    "{\"name\": \"fake-mlp\", \"model\": {\"architecture\": {\"type\": \"mlp\", \"layers\": [16, 32, 4]}},"
    " \"data\": {\"samples\": 1000}, \"training\": {\"epochs\": 1, \"batch\": 64, \"lr\": 0.1},"
    " \"profile\": {\"local_batches\": [16, 32, 64, 128, 256], \"steps\": 9},"
    " \"search\": {\"deadline_hours\": 5}}";

static void load_spec(const char *text, cf_spec *spec)
{
    if (cf_spec_parse(text, strlen(text), "fake.json", spec) != CF_OK)
        fail_msg("spec: %s", cf_error_message());
}

typedef struct {
    int calls, last_done, last_total;
} progress_log;

static void on_progress(void *ctx, int done, int total, const char *what)
{
    progress_log *log = ctx;
    assert_non_null(what);
    assert_true(done >= log->last_done);
    assert_true(done <= total);
    log->calls++;
    log->last_done = done;
    log->last_total = total;
}

/* ---- tests ---------------------------------------------------------------------- */

static void test_sweep_fit_ceiling_and_noise(void **state)
{
    (void)state;
    cf_spec spec;
    load_spec(spec_text, &spec);
    cf_probe_backend be = cf_probe_engine_backend(&fake_ops);
    cf_profile_options o;
    cf_profile_options_init(&o);
    o.noise_steps = 800;
    progress_log log = {0, 0, 0};
    o.progress = on_progress;
    o.progress_ctx = &log;
    cf_profile p;
    assert_int_equal(run_profile(&be, &spec, &o, &p), CF_OK);
    assert_string_equal(p.backend, "fake");
    assert_string_equal(p.device.name, "Fake GPU 16GB");
    assert_string_equal(p.spec_name, "fake-mlp");
    assert_int_equal(p.steps, 9);
    /* 16..128 fit; 256 does not; the ceiling is bisected towards 200. */
    assert_int_equal(p.n_points, 4);
    assert_int_equal(p.points[3].local_batch, 128);
    assert_true(p.ceiling_found);
    assert_true(p.max_local_batch >= 176 && p.max_local_batch <= CEILING);
    assert_true(p.oom_batch > CEILING && p.oom_batch <= 256);
    /* Medians ignore the 10× outliers; the fit recovers α and β. */
    for (int i = 0; i < p.n_points; i++) {
        double truth = ALPHA_S + BETA_S * p.points[i].local_batch;
        assert_true(fabs(p.points[i].step_time_s - truth) / truth < 0.005);
        assert_true(p.points[i].max_s > 5 * truth);
        assert_int_equal(p.points[i].n_timed, 9);
    }
    assert_true(p.has_fit);
    assert_true(fabs(p.alpha_s - ALPHA_S) / ALPHA_S < 0.02);
    assert_true(fabs(p.beta_s - BETA_S) / BETA_S < 0.01);
    assert_true(p.r2 > 0.999);
    assert_true(p.rel_rmse < 0.01);
    /* Noise run: recipe batch 64 as 8 micro-batches of 8. */
    assert_true(p.has_noise);
    assert_int_equal(p.noise_micro_batches, 8);
    assert_int_equal(p.noise_local_batch, 8);
    double truth = analytic_b_noise();
    printf("B_noise %.2f ± %.2f (analytic %.2f), trace of %d points\n", p.b_noise, p.b_noise_stderr, truth,
           p.n_noise_trace);
    assert_true(fabs(p.b_noise - truth) / truth < 0.10);
    assert_true(fabs(p.b_noise - truth) < 4 * p.b_noise_stderr);
    assert_true(p.n_noise_trace > 10 && p.n_noise_trace <= CF_PROFILE_MAX_TRACE);
    assert_true(p.noise_trace[p.n_noise_trace - 1].samples_seen == 800.0 * 64);
    assert_true(fabs(p.noise_trace[p.n_noise_trace - 1].b_noise - p.b_noise) < 1e-9 * p.b_noise);
    for (int i = 1; i < p.n_noise_trace; i++)
        assert_true(p.noise_trace[i].samples_seen > p.noise_trace[i - 1].samples_seen);
    assert_true(log.calls >= 6);
    assert_int_equal(log.last_done, log.last_total);
    cf_spec_free(&spec);
}

/* The noise run keeps each micro-batch's gradient, so it can run out of
 * memory under the sweep's ceiling: it is run again at half the micro-batch
 * (the recipe's batch as twice as many) until it fits, and says when none does. */
static void test_noise_run_retries_smaller_micro_batches(void **state)
{
    (void)state;
    cf_spec spec;
    load_spec(spec_text, &spec);
    cf_probe_backend be = cf_probe_engine_backend(&fake_ops);
    cf_profile_options o;
    cf_profile_options_init(&o);
    o.noise_steps = 400;
    progress_log log = {0, 0, 0};
    o.progress = on_progress;
    o.progress_ctx = &log;
    cf_profile p;
    noise_ceiling = 3;
    cf_status st = run_profile(&be, &spec, &o, &p);
    noise_ceiling = 0;
    assert_int_equal(st, CF_OK);
    assert_true(p.has_noise);
    assert_int_equal(p.noise_local_batch, 2); /* 8 and 4 ran out */
    assert_int_equal(p.noise_micro_batches, 32);
    double truth = analytic_b_noise();
    assert_true(fabs(p.b_noise - truth) / truth < 0.15);
    assert_int_equal(log.last_done, log.last_total);

    noise_ceiling = -1; /* no micro-batch fits, down to 1 (64 micro-batches: the limit) */
    log = (progress_log){0, 0, 0};
    o.noise_micro_batches = 8;
    st = run_profile(&be, &spec, &o, &p);
    noise_ceiling = 0;
    assert_int_equal(st, CF_OK);
    assert_false(p.has_noise);
    assert_non_null(strstr(p.noise_error, "ran out of memory at every micro-batch from 8 down to 1"));
    cf_spec_free(&spec);
}

/* A noise run the estimator cannot use (one step): the reason is kept
 * without the estimator's own "noise scale: " (the report shows it under
 * "noise scale: not measured: " already). */
static void test_noise_reason_is_not_prefixed_twice(void **state)
{
    (void)state;
    cf_spec spec;
    load_spec(spec_text, &spec);
    cf_probe_backend be = cf_probe_engine_backend(&fake_ops);
    cf_profile_options o;
    cf_profile_options_init(&o);
    o.noise_steps = 1;
    cf_profile p;
    assert_int_equal(run_profile(&be, &spec, &o, &p), CF_OK);
    assert_false(p.has_noise);
    if (strcmp(p.noise_error, "1 usable step(s), need at least 2") != 0)
        fail_msg("noise_error: '%s'", p.noise_error);
    cf_spec_free(&spec);
}

static void test_json_round_trip(void **state)
{
    (void)state;
    cf_spec spec;
    load_spec(spec_text, &spec);
    cf_probe_backend be = cf_probe_engine_backend(&fake_ops);
    cf_profile_options o;
    cf_profile_options_init(&o);
    o.noise_steps = 50;
    cf_profile p, q;
    assert_int_equal(run_profile(&be, &spec, &o, &p), CF_OK);
    char *a = cf_profile_to_json(&p, 0);
    assert_non_null(a);
    assert_int_equal(cf_profile_from_json(a, &q), CF_OK);
    char *b = cf_profile_to_json(&q, 0);
    assert_string_equal(a, b);
    assert_int_equal(q.max_local_batch, p.max_local_batch);
    assert_true(q.b_noise == p.b_noise);
    free(a);
    free(b);
    assert_int_equal(cf_profile_from_json("{\"version\": 1}", &q), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "stored profile"));
    assert_int_equal(cf_profile_from_json("[1,", &q), CF_ERR_INVALID);
    /* What recommend cannot use is refused on reading ("unreadable, not
     * used"), not silently skipped: a precision it does not know (the step
     * was not moved to the job's), a point without a positive step time or
     * batch (dropped from the fit), a device of no GPU count. */
    static const struct {
        const char *from, *to, *message;
    } bad[] = {
        {"\"precision\":\"fp32\"", "\"precision\":\"fp8\"", "'precision': expected fp32, tf32, fp16, bf16 or amp, got 'fp8'"},
        {"\"step_time_s\":", "\"step_time_s\":-", "'points[0]': expected a local_batch ≥ 1 and a positive step_time_s"},
        {"\"local_batch\":16", "\"local_batch\":0", "'points[0]': expected a local_batch ≥ 1"},
        {"\"gpus\":1", "\"gpus\":0", "'device.gpus': expected a positive integer"},
        /* compared with the spec's model.memory_format: the interval widened for a name no probe reports */
        {"\"memory_format\":null", "\"memory_format\":\"NHWC\"",
         "'memory_format': expected contiguous, channels_last or channels_last_3d, got 'NHWC'"},
        {"\"memory_format\":null", "\"memory_format\":\"channels_last_3dx\"", "got 'channels_last_3dx'"},
    };
    a = cf_profile_to_json(&p, 0);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *at = strstr(a, bad[i].from);
        assert_non_null(at);
        size_t head = (size_t)(at - a), len = strlen(a) + 16;
        char *edited = malloc(len);
        assert_non_null(edited);
        snprintf(edited, len, "%.*s%s%s", (int)head, a, bad[i].to, at + strlen(bad[i].from));
        assert_int_equal(cf_profile_from_json(edited, &q), CF_ERR_INVALID);
        if (!strstr(cf_error_message(), bad[i].message))
            fail_msg("case %zu: '%s'", i, cf_error_message());
        free(edited);
    }
    free(a);
    cf_spec_free(&spec);
}

/* The key ignores the search section but not the model or the recipe. */
static void test_spec_key(void **state)
{
    (void)state;
    cf_spec a, b, c;
    load_spec(spec_text, &a);
    char *other = strdup(spec_text);
    char *at = strstr(other, "\"deadline_hours\": 5");
    at[18] = '9';
    load_spec(other, &b);
    at = strstr(other, "\"lr\": 0.1");
    at[8] = '2';
    load_spec(other, &c);
    char ka[65], kb[65], kc[65];
    assert_int_equal(cf_spec_profile_key(&a, ka), CF_OK);
    assert_int_equal(cf_spec_profile_key(&b, kb), CF_OK);
    assert_int_equal(cf_spec_profile_key(&c, kc), CF_OK);
    assert_string_equal(ka, kb);
    assert_string_not_equal(ka, kc);
    assert_string_not_equal(a.hash, b.hash);
    free(other);
    cf_spec_free(&a);
    cf_spec_free(&b);
    cf_spec_free(&c);
}

/* model.precision is not in the key: the profile records the precision it
 * was measured in and recommend moves it to the spec's, whose note asks
 * the user to set model.precision — which discarded the profile. The key
 * older versions stored it under (precision included) is still known. */
static void test_spec_key_ignores_precision(void **state)
{
    (void)state;
    static const char *const with_precision =
        "{\"name\": \"p\", \"model\": {\"parameters\": 1000000, \"precision\": \"fp16\"},"
        " \"data\": {\"samples\": 10000}, \"training\": {\"epochs\": 1, \"batch\": 32, \"lr\": 0.1}}";
    static const char *const without =
        "{\"name\": \"p\", \"model\": {\"parameters\": 1000000},"
        " \"data\": {\"samples\": 10000}, \"training\": {\"epochs\": 1, \"batch\": 32, \"lr\": 0.1}}";
    cf_spec a, b;
    load_spec(with_precision, &a);
    load_spec(without, &b);
    char ka[65], kb[65], before_a[65], before_b[65], old_a[65];
    assert_int_equal(cf_spec_profile_key(&a, ka), CF_OK);
    assert_int_equal(cf_spec_profile_key(&b, kb), CF_OK);
    assert_string_equal(ka, kb);
    /* the key of the previous versions: the whole model object */
    static const char old_text[] = "{\"model\":{\"parameters\":1000000,\"precision\":\"fp16\"},"
                                   "\"data\":{\"samples\":10000},\"training\":{\"batch\":32,\"lr\":0.1}}";
    assert_int_equal(cf_sha256_hex(old_text, strlen(old_text), old_a), CF_OK);
    assert_int_equal(cf_spec_profile_key_before_precision(&a, before_a), CF_OK);
    assert_string_equal(before_a, old_a);
    assert_int_equal(cf_spec_profile_key_before_precision(&b, before_b), CF_OK);
    assert_string_equal(before_b, ""); /* without model.precision: the same key, nothing else to look up */
    cf_spec_free(&a);
    cf_spec_free(&b);
}

/* Nor is model.memory_format, under either key: the profile records the
 * format it ran in and recommend compares the two, and its hint asks for a
 * new profile in the job's format — which a key of its own would have left
 * unseen beside the old one. */
static void test_spec_key_ignores_memory_format(void **state)
{
    (void)state;
    static const char *const with_format =
        "{\"name\": \"p\", \"model\": {\"parameters\": 1000000, \"precision\": \"fp16\","
        " \"memory_format\": \"channels_last\"},"
        " \"data\": {\"samples\": 10000}, \"training\": {\"epochs\": 1, \"batch\": 32, \"lr\": 0.1}}";
    static const char *const without =
        "{\"name\": \"p\", \"model\": {\"parameters\": 1000000, \"precision\": \"fp16\"},"
        " \"data\": {\"samples\": 10000}, \"training\": {\"epochs\": 1, \"batch\": 32, \"lr\": 0.1}}";
    cf_spec a, b;
    load_spec(with_format, &a);
    load_spec(without, &b);
    char ka[65], kb[65], before_a[65], before_b[65];
    assert_int_equal(cf_spec_profile_key(&a, ka), CF_OK);
    assert_int_equal(cf_spec_profile_key(&b, kb), CF_OK);
    assert_string_equal(ka, kb);
    assert_int_equal(cf_spec_profile_key_before_precision(&a, before_a), CF_OK);
    assert_int_equal(cf_spec_profile_key_before_precision(&b, before_b), CF_OK);
    assert_string_equal(before_a, before_b);
    assert_string_not_equal(before_a, "");
    cf_spec_free(&a);
    cf_spec_free(&b);
}

/* A failure in the middle of the sweep returns nothing at all. */
static void test_failure_returns_nothing(void **state)
{
    (void)state;
    cf_spec spec;
    load_spec(spec_text, &spec);
    cf_probe_backend be = cf_probe_engine_backend(&fake_ops);
    cf_profile_options o;
    cf_profile_options_init(&o);
    cf_profile p;
    fail_at_batch = 64;
    assert_int_equal(run_profile(&be, &spec, &o, &p), CF_ERR_INVALID);
    fail_at_batch = 0;
    assert_non_null(strstr(cf_error_message(), "local batch 64"));
    assert_non_null(strstr(cf_error_message(), "diverged"));
    assert_int_equal(p.n_points, 0);
    assert_int_equal(p.has_noise, 0);
    assert_string_equal(p.device.name, "");
    /* Nothing fits: an error that says so. */
    o.n_local_batches = 2;
    o.local_batches[0] = 300;
    o.local_batches[1] = 400;
    assert_int_equal(run_profile(&be, &spec, &o, &p), CF_ERR_INFEASIBLE);
    assert_non_null(strstr(cf_error_message(), "not even a local batch of 300"));
    /* the batch's own answer: a smaller batch may fit, whatever its words say */
    assert_true(strncmp(cf_error_hint_text(), "lower ", 6) == 0);
    /* the engine cannot even start: the model alone does not fit */
    model_too_big = 1;
    assert_int_equal(run_profile(&be, &spec, &o, &p), CF_ERR_INFEASIBLE);
    model_too_big = 0;
    assert_non_null(strstr(cf_error_message(), "the weights need more"));
    assert_non_null(strstr(cf_error_hint_text(), "the model alone does not fit"));
    cf_spec_free(&spec);
}

/* The CPU backend needs an MLP architecture. */
static void test_engine_backend_needs_mlp(void **state)
{
    (void)state;
    const char *text = "{\"name\": \"x\", \"model\": {\"parameters\": 1000}, \"data\": {\"samples\": 10},"
                       " \"training\": {\"epochs\": 1, \"batch\": 8, \"lr\": 0.1}}";
    cf_spec spec;
    load_spec(text, &spec);
    cf_probe_backend be = cf_probe_engine_backend(&fake_ops);
    cf_profile_options o;
    cf_profile_options_init(&o);
    cf_profile p;
    assert_int_equal(run_profile(&be, &spec, &o, &p), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "\"mlp\""));
    assert_non_null(strstr(cf_error_hint_text(), "--backend exec"));
    cf_spec_free(&spec);
}

static void test_median_and_fit(void **state)
{
    (void)state;
    double v[] = {5, 1, 3, 2, 4};
    assert_true(cf_median(v, 5) == 3);
    assert_true(cf_median(v, 4) == 2.5); /* 1 2 3 5 */
    assert_true(isnan(cf_median(v, 0)));
    cf_profile p;
    memset(&p, 0, sizeof p);
    p.n_points = 1;
    p.points[0].local_batch = 8;
    p.points[0].step_time_s = 1;
    assert_int_equal(cf_profile_fit(&p), CF_ERR_INVALID);
    p.n_points = 3;
    for (int i = 0; i < 3; i++) {
        p.points[i].local_batch = 8 << i;
        p.points[i].step_time_s = 0.5 + 0.25 * (8 << i);
    }
    assert_int_equal(cf_profile_fit(&p), CF_OK);
    assert_true(fabs(p.alpha_s - 0.5) < 1e-9 && fabs(p.beta_s - 0.25) < 1e-9 && p.r2 > 0.999999);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep_fit_ceiling_and_noise),
        cmocka_unit_test(test_noise_run_retries_smaller_micro_batches),
        cmocka_unit_test(test_noise_reason_is_not_prefixed_twice),
        cmocka_unit_test(test_json_round_trip),
        cmocka_unit_test(test_spec_key),
        cmocka_unit_test(test_spec_key_ignores_precision),
        cmocka_unit_test(test_spec_key_ignores_memory_format),
        cmocka_unit_test(test_failure_returns_nothing),
        cmocka_unit_test(test_engine_backend_needs_mlp),
        cmocka_unit_test(test_median_and_fit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
