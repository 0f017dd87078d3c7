#include "mlp_cpu.h"
#include "vec_cpu.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

/* GELU, exact form (as PyTorch's default): x·Φ(x). */
static inline float gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }

static inline float gelu_grad(float x)
{
    float cdf = 0.5f * (1.0f + erff(x * 0.70710678118654752f));
    float pdf = 0.39894228040143268f * expf(-0.5f * x * x);
    return cdf + x * pdf;
}

void cf_act_forward(float *out, const float *inp, size_t n, cf_layer_act act)
{
    switch (act) {
    case CF_LAYER_LINEAR:
        if (out != inp)
            memmove(out, inp, n * sizeof *out);
        break;
    case CF_LAYER_RELU:
        for (size_t i = 0; i < n; i++)
            out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
        break;
    case CF_LAYER_GELU:
        for (size_t i = 0; i < n; i++)
            out[i] = gelu(inp[i]);
        break;
    }
}

void cf_act_backward(float *dinp, const float *dout, const float *pre, size_t n, cf_layer_act act)
{
    switch (act) {
    case CF_LAYER_LINEAR:
        if (dinp != dout)
            memmove(dinp, dout, n * sizeof *dinp);
        break;
    case CF_LAYER_RELU:
        for (size_t i = 0; i < n; i++)
            dinp[i] = pre[i] > 0.0f ? dout[i] : 0.0f;
        break;
    case CF_LAYER_GELU:
        for (size_t i = 0; i < n; i++)
            dinp[i] = dout[i] * gelu_grad(pre[i]);
        break;
    }
}

void cf_dense_forward(float *pre, float *out, const float *inp, const float *weight, const float *bias,
                      int B, int C_in, int C_out, cf_layer_act act)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, C_out, C_in, 1.0f, inp, C_in, weight, C_out,
                0.0f, pre, C_out);
    /* Bias and activation in one pass over the product, row by row so the
     * bias stays in L1. */
    for (int r = 0; r < B; r++) {
        float *restrict p = pre + (size_t)r * C_out;
        float *o = out + (size_t)r * C_out;
        switch (act) {
        case CF_LAYER_LINEAR:
            for (int j = 0; j < C_out; j++)
                p[j] += bias[j];
            if (o != p)
                memcpy(o, p, (size_t)C_out * sizeof *o);
            break;
        case CF_LAYER_RELU:
            if (o == p) {
                for (int j = 0; j < C_out; j++) {
                    float v = p[j] + bias[j];
                    p[j] = v > 0.0f ? v : 0.0f;
                }
            } else {
                for (int j = 0; j < C_out; j++) {
                    float v = p[j] + bias[j];
                    p[j] = v;
                    o[j] = v > 0.0f ? v : 0.0f;
                }
            }
            break;
        case CF_LAYER_GELU:
            for (int j = 0; j < C_out; j++) {
                float v = p[j] + bias[j];
                p[j] = v;
                o[j] = gelu(v);
            }
            break;
        }
    }
}

void cf_dense_backward(float *dinp, float *dweight, float *dbias, float *dout, const float *pre,
                       const float *inp, const float *weight, int B, int C_in, int C_out, cf_layer_act act)
{
    /* Activation derivative and the bias gradient in one pass. */
    memset(dbias, 0, (size_t)C_out * sizeof *dbias);
    for (int r = 0; r < B; r++) {
        float *restrict d = dout + (size_t)r * C_out;
        const float *p = pre ? pre + (size_t)r * C_out : NULL;
        switch (act) {
        case CF_LAYER_LINEAR:
            break;
        case CF_LAYER_RELU:
            for (int j = 0; j < C_out; j++)
                d[j] = p[j] > 0.0f ? d[j] : 0.0f;
            break;
        case CF_LAYER_GELU:
            for (int j = 0; j < C_out; j++)
                d[j] *= gelu_grad(p[j]);
            break;
        }
        for (int j = 0; j < C_out; j++)
            dbias[j] += d[j];
    }
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, C_in, C_out, B, 1.0f, inp, C_in, dout, C_out, 0.0f,
                dweight, C_out);
    if (dinp)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, C_in, C_out, 1.0f, dout, C_out, weight, C_out,
                    0.0f, dinp, C_in);
}

double cf_softmax_xent(float *dlogits, const float *logits, const int *labels, int B, int C, float dscale)
{
    double loss = 0.0;
    for (int r = 0; r < B; r++) {
        const float *z = logits + (size_t)r * C;
        float *d = dlogits + (size_t)r * C;
        float zmax = z[0];
        for (int j = 1; j < C; j++)
            if (z[j] > zmax)
                zmax = z[j];
        double sum = 0.0;
        for (int j = 0; j < C; j++) {
            d[j] = expf(z[j] - zmax);
            sum += d[j];
        }
        float inv = (float)(1.0 / sum);
        for (int j = 0; j < C; j++)
            d[j] *= inv * dscale;
        d[labels[r]] -= dscale;
        loss += log(sum) - (double)(z[labels[r]] - zmax);
    }
    return loss;
}

/* Reductions over all parameters: 8 float lanes per block of
 * CF_VEC_BLOCK, each block added in double (so the total over millions of
 * parameters keeps its digits). */
double cf_sqnorm(const float *x, size_t n)
{
    double total = 0.0;
    for (size_t start = 0; start < n; start += CF_VEC_BLOCK) {
        size_t end = start + CF_VEC_BLOCK < n ? start + CF_VEC_BLOCK : n;
        cf_v4 a0 = cf_v4_splat(0.0f), a1 = a0;
        size_t i = start;
        for (; i + 8 <= end; i += 8) {
            cf_v4 v0 = cf_v4_load(x + i), v1 = cf_v4_load(x + i + 4);
            a0 += v0 * v0;
            a1 += v1 * v1;
        }
        double block = cf_v4_sum(a0) + cf_v4_sum(a1);
        for (; i < end; i++)
            block += (double)x[i] * x[i];
        total += block;
    }
    return total;
}

double cf_accumulate_sqnorm(float *restrict acc, const float *restrict x, size_t n)
{
    double total = 0.0;
    for (size_t start = 0; start < n; start += CF_VEC_BLOCK) {
        size_t end = start + CF_VEC_BLOCK < n ? start + CF_VEC_BLOCK : n;
        cf_v4 a0 = cf_v4_splat(0.0f), a1 = a0;
        size_t i = start;
        for (; i + 8 <= end; i += 8) {
            cf_v4 v0 = cf_v4_load(x + i), v1 = cf_v4_load(x + i + 4);
            a0 += v0 * v0;
            a1 += v1 * v1;
            cf_v4_store(acc + i, cf_v4_load(acc + i) + v0);
            cf_v4_store(acc + i + 4, cf_v4_load(acc + i + 4) + v1);
        }
        double block = cf_v4_sum(a0) + cf_v4_sum(a1);
        for (; i < end; i++) {
            block += (double)x[i] * x[i];
            acc[i] += x[i];
        }
        total += block;
    }
    return total;
}
