/* CPU engine kernels against finite differences: each activation, the
 * softmax cross-entropy, and every dense layer's weight and bias gradient
 * through the whole engine (ReLU and GELU), against an independent
 * double-precision reference written here. */
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
#include "mlp_cpu.h"
#include "npy.h"
#include "rng.h"

/* ---- double-precision reference ------------------------------------------ */

static double ref_act(double x, cf_activation act)
{
    return act == CF_ACT_RELU ? (x > 0 ? x : 0) : 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
}

/* Mean softmax cross-entropy of the MLP with parameters theta (the
 * engine's layout: per layer weight [in, out] then bias [out]) over rows
 * rows[0..n) of x/y. *min_abs_pre gets the smallest |pre-activation| of a
 * hidden unit (how close ReLU is to its kink). */
static double ref_loss(const double *theta, const int *widths, int n_widths, cf_activation act, const float *x,
                       const int *y, const long *rows, int n, double *min_abs_pre)
{
    double total = 0.0;
    double h[2][64];
    if (min_abs_pre)
        *min_abs_pre = INFINITY;
    for (int r = 0; r < n; r++) {
        const float *xr = x + (size_t)rows[r] * widths[0];
        for (int k = 0; k < widths[0]; k++)
            h[0][k] = xr[k];
        const double *p = theta;
        int cur = 0;
        for (int l = 0; l + 1 < n_widths; l++) {
            int in = widths[l], out = widths[l + 1];
            const double *w = p, *b = p + (size_t)in * out;
            for (int j = 0; j < out; j++) {
                double z = b[j];
                for (int k = 0; k < in; k++)
                    z += h[cur][k] * w[(size_t)k * out + j];
                if (l + 2 < n_widths) {
                    if (min_abs_pre && fabs(z) < *min_abs_pre)
                        *min_abs_pre = fabs(z);
                    z = ref_act(z, act);
                }
                h[1 - cur][j] = z;
            }
            cur = 1 - cur;
            p += (size_t)in * out + out;
        }
        int C = widths[n_widths - 1];
        double zmax = h[cur][0];
        for (int j = 1; j < C; j++)
            zmax = fmax(zmax, h[cur][j]);
        double sum = 0.0;
        for (int j = 0; j < C; j++)
            sum += exp(h[cur][j] - zmax);
        total += log(sum) + zmax - h[cur][y[rows[r]]];
    }
    return total / n;
}

/* ---- activations and the loss in isolation -------------------------------- */

static void check_activation(cf_layer_act act)
{
    enum { N = 81 };
    float x[N], dout[N], din[N];
    for (int i = 0; i < N; i++) {
        x[i] = -4.0f + 0.1f * (float)i + 0.0123f; /* never exactly at ReLU's kink */
        dout[i] = 0.5f + 0.01f * (float)i;
    }
    cf_act_backward(din, dout, x, N, act);
    cf_activation ref = act == CF_LAYER_RELU ? CF_ACT_RELU : CF_ACT_GELU;
    for (int i = 0; i < N; i++) {
        float y;
        cf_act_forward(&y, &x[i], 1, act);
        assert_true(fabs(y - ref_act(x[i], ref)) < 1e-6 * (1 + fabs(x[i])));
        double eps = 1e-6;
        double fd = (ref_act(x[i] + eps, ref) - ref_act(x[i] - eps, ref)) / (2 * eps) * dout[i];
        if (fabs(din[i] - fd) > 1e-5 * (1 + fabs(fd)))
            fail_msg("activation %d at x=%g: backward %g, finite difference %g", (int)act, x[i], din[i], fd);
    }
}

static void test_relu_gradient(void **state)
{
    (void)state;
    check_activation(CF_LAYER_RELU);
    /* ReLU for a ReLU output passed as `pre` (the engine keeps only that). */
    float out[3] = {0.0f, 2.0f, 0.5f}, d[3] = {1, 1, 1}, din[3];
    cf_act_backward(din, d, out, 3, CF_LAYER_RELU);
    assert_true(din[0] == 0.0f && din[1] == 1.0f && din[2] == 1.0f);
}

static void test_gelu_gradient(void **state)
{
    (void)state;
    check_activation(CF_LAYER_GELU);
}

static void test_softmax_xent_gradient(void **state)
{
    (void)state;
    enum { B = 3, C = 5 };
    const float logits[B * C] = {0.1f, -1.2f, 2.0f, 0.3f, 0.0f, 5.0f, 4.9f, -3.0f, 1.0f, 0.2f,
                                 -0.5f, -0.5f, -0.5f, 8.0f, -2.0f};
    const int labels[B] = {2, 1, 0};
    float d[B * C];
    double loss = cf_softmax_xent(d, logits, labels, B, C, 1.0f / B);
    double ref_total = 0.0;
    for (int r = 0; r < B; r++) {
        double z[C];
        for (int j = 0; j < C; j++)
            z[j] = logits[r * C + j];
        /* loss_r(z) = log Σ exp(z) − z_y, in double; central differences. */
        double lse = 0;
        for (int j = 0; j < C; j++)
            lse += exp(z[j]);
        ref_total += log(lse) - z[labels[r]];
        for (int j = 0; j < C; j++) {
            double eps = 1e-6, up = 0, down = 0;
            for (int k = 0; k < C; k++) {
                up += exp(z[k] + (k == j ? eps : 0));
                down += exp(z[k] - (k == j ? eps : 0));
            }
            double fd = ((log(up) - (j == labels[r] ? z[j] + eps : z[labels[r]])) -
                         (log(down) - (j == labels[r] ? z[j] - eps : z[labels[r]]))) /
                        (2 * eps) / B;
            if (fabs(d[r * C + j] - fd) > 1e-6)
                fail_msg("dlogits[%d][%d] = %g, finite difference %g", r, j, d[r * C + j], fd);
        }
    }
    assert_true(fabs(loss - ref_total) < 1e-5 * ref_total);
}

/* ---- the whole engine: every layer's weights and biases ------------------- */

typedef struct {
    char dir[64], x_path[96], y_path[96];
    float *x;
    int *y;
} fixture;

static void make_data(fixture *f, int n, int in, int classes, unsigned long seed)
{
    snprintf(f->dir, sizeof f->dir, "/tmp/cf-test-mlp-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->x_path, sizeof f->x_path, "%s/x.npy", f->dir);
    snprintf(f->y_path, sizeof f->y_path, "%s/y.npy", f->dir);
    f->x = malloc((size_t)n * in * sizeof *f->x);
    f->y = malloc((size_t)n * sizeof *f->y);
    cf_rng rng;
    cf_rng_seed(&rng, seed, 7);
    for (int i = 0; i < n * in; i++)
        f->x[i] = (float)cf_rng_normal(&rng);
    for (int i = 0; i < n; i++)
        f->y[i] = (int)cf_rng_below(&rng, (uint64_t)classes);
    assert_int_equal(cf_npy_save_f32_matrix(f->x_path, f->x, n, in), CF_OK);
    assert_int_equal(cf_npy_save_i64_vector(f->y_path, f->y, n), CF_OK);
}

static void free_data(fixture *f)
{
    unlink(f->x_path);
    unlink(f->y_path);
    rmdir(f->dir);
    free(f->x);
    free(f->y);
}

/* Finite-difference gradient of the reference mean loss over `rows`. */
static void ref_gradient(const double *theta, size_t P, const int *widths, int nw, cf_activation act,
                         const fixture *f, const long *rows, int n, double *grad)
{
    double *t = malloc(P * sizeof *t);
    memcpy(t, theta, P * sizeof *t);
    for (size_t i = 0; i < P; i++) {
        double eps = 1e-6 * fmax(1.0, fabs(theta[i]));
        t[i] = theta[i] + eps;
        double up = ref_loss(t, widths, nw, act, f->x, f->y, rows, n, NULL);
        t[i] = theta[i] - eps;
        double down = ref_loss(t, widths, nw, act, f->x, f->y, rows, n, NULL);
        t[i] = theta[i];
        grad[i] = (up - down) / (2 * eps);
    }
    free(t);
}

static void check_engine_gradients(cf_activation act, int micro)
{
    enum { N = 8, NW = 4 };
    const int widths[NW] = {5, 7, 6, 3};
    fixture f;
    make_data(&f, N, widths[0], widths[NW - 1], 11);
    cf_engine_config cfg;
    memset(&cfg, 0, sizeof cfg);
    memcpy(cfg.widths, widths, sizeof widths);
    cfg.n_widths = NW;
    cfg.activation = act;
    cfg.optimizer = CF_OPT_SGD;
    cfg.lr = 0.1;
    cfg.seed = 5;
    cfg.npy_x = f.x_path;
    cfg.npy_y = f.y_path;
    cfg.threads = 1;
    const cf_engine_ops *ops = cf_engine_cpu();
    cf_engine *e;
    assert_int_equal(ops->create(&cfg, &e), CF_OK);
    size_t P = cf_engine_cpu_n_params(e);
    double *theta = malloc(P * sizeof *theta), *fd = malloc(P * sizeof *fd);
    const float *params = cf_engine_cpu_params(e);
    for (size_t i = 0; i < P; i++)
        theta[i] = params[i];

    /* One step over all N samples (as `micro` micro-batches): the engine's
     * mean gradient must match the finite differences of the mean loss. */
    cf_engine_step step;
    assert_int_equal(ops->train_step(e, N / micro, micro, &step), CF_OK);
    const long *idx = cf_engine_cpu_last_indices(e);
    double min_pre;
    double loss = ref_loss(theta, widths, NW, act, f.x, f.y, idx, N, &min_pre);
    assert_true(min_pre > 1e-3); /* no ReLU kink within the differences' reach */
    assert_true(fabs(step.loss - loss) < 1e-5 * loss);
    ref_gradient(theta, P, widths, NW, act, &f, idx, N, fd);
    const float *g = cf_engine_cpu_grads(e);
    double fd_sq = 0;
    for (size_t i = 0; i < P; i++) {
        fd_sq += fd[i] * fd[i];
        if (fabs(g[i] - fd[i]) > 2e-6 + 2e-4 * fabs(fd[i]))
            fail_msg("act %d, %d micro-batches: parameter %zu: engine %.8g, finite difference %.8g", (int)act,
                     micro, i, g[i], fd[i]);
    }
    assert_true(fabs(step.mean_sqnorm - fd_sq) < 1e-4 * fd_sq);
    /* Each micro-batch's |g_i|², from the differences over its own rows. */
    assert_int_equal(step.n_micro, micro);
    for (int m = 0; m < micro; m++) {
        ref_gradient(theta, P, widths, NW, act, &f, idx + m * (N / micro), N / micro, fd);
        double sq = 0;
        for (size_t i = 0; i < P; i++)
            sq += fd[i] * fd[i];
        if (fabs(step.micro_sqnorms[m] - sq) > 1e-4 * sq)
            fail_msg("micro-batch %d: |g|² engine %.8g, finite difference %.8g", m, step.micro_sqnorms[m], sq);
    }
    /* And the update applied is exactly SGD's. */
    for (size_t i = 0; i < P; i++)
        assert_true(fabs(params[i] - (theta[i] - 0.1 * (double)g[i])) < 1e-6);
    free(theta);
    free(fd);
    ops->destroy(e);
    free_data(&f);
}

static void test_engine_gradient_relu(void **state)
{
    (void)state;
    check_engine_gradients(CF_ACT_RELU, 1);
}

static void test_engine_gradient_gelu(void **state)
{
    (void)state;
    check_engine_gradients(CF_ACT_GELU, 1);
}

static void test_engine_gradient_micro_batches(void **state)
{
    (void)state;
    check_engine_gradients(CF_ACT_RELU, 2);
    check_engine_gradients(CF_ACT_GELU, 4);
}

/* A dense layer alone, with a non-square shape and several rows: the
 * input gradient (which the engine's first layer skips) is checked here. */
static void test_dense_input_gradient(void **state)
{
    (void)state;
    enum { B = 3, IN = 4, OUT = 5 };
    float x[B * IN], w[IN * OUT], b[OUT], pre[B * OUT], out[B * OUT], dout[B * OUT], dx[B * IN], dw[IN * OUT],
        db[OUT];
    cf_rng rng;
    cf_rng_seed(&rng, 3, 0);
    for (int i = 0; i < B * IN; i++)
        x[i] = (float)cf_rng_normal(&rng);
    for (int i = 0; i < IN * OUT; i++)
        w[i] = (float)cf_rng_normal(&rng);
    for (int i = 0; i < OUT; i++)
        b[i] = (float)cf_rng_normal(&rng);
    /* L = Σ c ⊙ gelu(x·w + b) for fixed coefficients c: dL/dout = c. */
    float c[B * OUT];
    for (int i = 0; i < B * OUT; i++)
        c[i] = (float)cf_rng_normal(&rng);
    cf_dense_forward(pre, out, x, w, b, B, IN, OUT, CF_LAYER_GELU);
    memcpy(dout, c, sizeof c);
    cf_dense_backward(dx, dw, db, dout, pre, x, w, B, IN, OUT, CF_LAYER_GELU);
    for (int i = 0; i < B * IN; i++) {
        double eps = 1e-6, val[2];
        for (int s = 0; s < 2; s++) {
            double xi = x[i] + (s ? -eps : eps), total = 0;
            int r = i / IN, k = i % IN;
            for (int j = 0; j < OUT; j++) {
                double z = b[j];
                for (int kk = 0; kk < IN; kk++)
                    z += (kk == k ? xi : x[r * IN + kk]) * w[kk * OUT + j];
                total += c[r * OUT + j] * ref_act(z, CF_ACT_GELU);
            }
            val[s] = total;
        }
        double fd = (val[0] - val[1]) / (2 * eps);
        if (fabs(dx[i] - fd) > 1e-4 * (1 + fabs(fd)))
            fail_msg("dx[%d] = %g, finite difference %g", i, dx[i], fd);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_relu_gradient),
        cmocka_unit_test(test_gelu_gradient),
        cmocka_unit_test(test_softmax_xent_gradient),
        cmocka_unit_test(test_dense_input_gradient),
        cmocka_unit_test(test_engine_gradient_relu),
        cmocka_unit_test(test_engine_gradient_gelu),
        cmocka_unit_test(test_engine_gradient_micro_batches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
