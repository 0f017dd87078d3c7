#include "optim_cpu.h"

#include <math.h>

#include "vec_cpu.h"

void cf_optim_init(cf_optim *o, cf_optimizer kind, float lr)
{
    o->kind = kind;
    o->lr = lr;
    o->momentum = 0.9f;
    o->beta1 = 0.9f;
    o->beta2 = 0.999f;
    o->eps = 1e-8f;
    o->weight_decay = 0.01f;
    o->t = 0;
}

int cf_optim_state_per_param(cf_optimizer kind)
{
    switch (kind) {
    case CF_OPT_SGD: return 0;
    case CF_OPT_MOMENTUM: return 1;
    case CF_OPT_ADAM:
    case CF_OPT_ADAMW:
    case CF_OPT_LAMB: return 2;
    }
    return 0;
}

/* The passes below walk the tensor in blocks of CF_VEC_BLOCK: 4-float
 * vectors for the bulk, scalars for the tail, |g|² per block in double. */

static double sgd(float lr, float *restrict p, const float *restrict g, size_t n)
{
    double total = 0.0;
    cf_v4 vlr = cf_v4_splat(lr);
    for (size_t start = 0; start < n; start += CF_VEC_BLOCK) {
        size_t end = start + CF_VEC_BLOCK < n ? start + CF_VEC_BLOCK : n;
        cf_v4 acc = cf_v4_splat(0.0f);
        size_t i = start;
        for (; i + 4 <= end; i += 4) {
            cf_v4 vg = cf_v4_load(g + i);
            acc += vg * vg;
            cf_v4_store(p + i, cf_v4_load(p + i) - vlr * vg);
        }
        double block = cf_v4_sum(acc);
        for (; i < end; i++) {
            block += (double)g[i] * g[i];
            p[i] -= lr * g[i];
        }
        total += block;
    }
    return total;
}

static double momentum(float lr, float mu, float *restrict p, const float *restrict g, float *restrict b, size_t n)
{
    double total = 0.0;
    cf_v4 vlr = cf_v4_splat(lr), vmu = cf_v4_splat(mu);
    for (size_t start = 0; start < n; start += CF_VEC_BLOCK) {
        size_t end = start + CF_VEC_BLOCK < n ? start + CF_VEC_BLOCK : n;
        cf_v4 acc = cf_v4_splat(0.0f);
        size_t i = start;
        for (; i + 4 <= end; i += 4) {
            cf_v4 vg = cf_v4_load(g + i);
            acc += vg * vg;
            cf_v4 vb = vmu * cf_v4_load(b + i) + vg;
            cf_v4_store(b + i, vb);
            cf_v4_store(p + i, cf_v4_load(p + i) - vlr * vb);
        }
        double block = cf_v4_sum(acc);
        for (; i < end; i++) {
            block += (double)g[i] * g[i];
            b[i] = mu * b[i] + g[i];
            p[i] -= lr * b[i];
        }
        total += block;
    }
    return total;
}

/* Adam's moments; returns Σ g². */
static double adam_moments(const cf_optim *o, const float *restrict g, float *restrict m, float *restrict v, size_t n)
{
    float b1 = o->beta1, b2 = o->beta2;
    cf_v4 vb1 = cf_v4_splat(b1), vb2 = cf_v4_splat(b2), vc1 = cf_v4_splat(1.0f - b1), vc2 = cf_v4_splat(1.0f - b2);
    double total = 0.0;
    for (size_t start = 0; start < n; start += CF_VEC_BLOCK) {
        size_t end = start + CF_VEC_BLOCK < n ? start + CF_VEC_BLOCK : n;
        cf_v4 acc = cf_v4_splat(0.0f);
        size_t i = start;
        for (; i + 4 <= end; i += 4) {
            cf_v4 vg = cf_v4_load(g + i);
            acc += vg * vg;
            cf_v4_store(m + i, vb1 * cf_v4_load(m + i) + vc1 * vg);
            cf_v4_store(v + i, vb2 * cf_v4_load(v + i) + vc2 * vg * vg);
        }
        double block = cf_v4_sum(acc);
        for (; i < end; i++) {
            block += (double)g[i] * g[i];
            m[i] = b1 * m[i] + (1.0f - b1) * g[i];
            v[i] = b2 * v[i] + (1.0f - b2) * g[i] * g[i];
        }
        total += block;
    }
    return total;
}

double cf_optim_update(const cf_optim *o, float *restrict params, const float *restrict grads, float *m, float *v,
                       size_t n)
{
    float lr = o->lr;
    switch (o->kind) {
    case CF_OPT_SGD: return sgd(lr, params, grads, n);
    case CF_OPT_MOMENTUM: return momentum(lr, o->momentum, params, grads, m, n);
    case CF_OPT_ADAM:
    case CF_OPT_ADAMW: {
        if (o->kind == CF_OPT_ADAMW) {
            float keep = 1.0f - lr * o->weight_decay;
            for (size_t i = 0; i < n; i++)
                params[i] *= keep;
        }
        double sq = adam_moments(o, grads, m, v, n);
        /* PyTorch's arrangement: step = lr / (1 − β1^t), denominator
         * √v / √(1 − β2^t) + ε. */
        float step = (float)(lr / (1.0 - pow(o->beta1, (double)o->t)));
        float inv_root_bc2 = (float)(1.0 / sqrt(1.0 - pow(o->beta2, (double)o->t)));
        for (size_t i = 0; i < n; i++)
            params[i] -= step * m[i] / (sqrtf(v[i]) * inv_root_bc2 + o->eps);
        return sq;
    }
    case CF_OPT_LAMB: {
        double sq = adam_moments(o, grads, m, v, n);
        float bc1 = (float)(1.0 - pow(o->beta1, (double)o->t));
        float bc2 = (float)(1.0 - pow(o->beta2, (double)o->t));
        double w_sq = 0.0, r_sq = 0.0;
        for (size_t i = 0; i < n; i++) {
            float r = (m[i] / bc1) / (sqrtf(v[i] / bc2) + o->eps) + o->weight_decay * params[i];
            w_sq += (double)params[i] * params[i];
            r_sq += (double)r * r;
        }
        float trust = (w_sq > 0.0 && r_sq > 0.0) ? (float)sqrt(w_sq / r_sq) : 1.0f;
        for (size_t i = 0; i < n; i++) {
            float r = (m[i] / bc1) / (sqrtf(v[i] / bc2) + o->eps) + o->weight_decay * params[i];
            params[i] -= lr * trust * r;
        }
        return sq;
    }
    }
    return 0.0;
}
