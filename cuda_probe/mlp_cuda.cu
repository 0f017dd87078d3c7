// The CUDA mirror of the CPU engine's kernels (mlp_cuda.h): the same
// arithmetic as mlp_cpu.c and optim_cpu.c, element for element, so the
// parity test can hold the two to a tight tolerance. Products through
// cuBLAS (column-major): a row-major X[r, c] is the column-major X^T, so
// C = A·W (row-major) is C^T = W^T·A^T, one cublasSgemm without copies.
#include <cmath>
#include <cstdio>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "mlp_cuda.h"

namespace {

const int kThreads = 256; // a multiple of the warp size (block_reduce)

cublasHandle_t g_blas = nullptr;
cublasStatus_t g_blas_status = CUBLAS_STATUS_SUCCESS; // first failure since the last check
double *g_sums = nullptr;                              // device scratch for reductions (3 doubles)

int blocks_for(size_t n)
{
    size_t b = (n + kThreads - 1) / kThreads;
    if (b < 1)
        b = 1;
    return (int)(b < 4096 ? b : 4096); // the kernels stride over the rest
}

void blas(cublasStatus_t s)
{
    if (s != CUBLAS_STATUS_SUCCESS && g_blas_status == CUBLAS_STATUS_SUCCESS)
        g_blas_status = s;
}

__device__ float gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }

__device__ float gelu_grad(float x)
{
    float cdf = 0.5f * (1.0f + erff(x * 0.70710678118654752f));
    float pdf = 0.39894228040143268f * expf(-0.5f * x * x);
    return cdf + x * pdf;
}

__device__ float activate(float v, int act)
{
    if (act == CF_LAYER_RELU)
        return v > 0.0f ? v : 0.0f;
    if (act == CF_LAYER_GELU)
        return gelu(v);
    return v;
}

// Sum over the block; the result is valid in thread 0. Safe to call more
// than once per kernel (it synchronises before reusing its shared memory).
template <typename T, typename Op> __device__ T block_reduce(T v, Op op)
{
    __shared__ T partial[32];
    __syncthreads();
    for (int o = 16; o > 0; o >>= 1)
        v = op(v, __shfl_down_sync(0xffffffffu, v, o));
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0)
        partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        int warps = (blockDim.x + 31) >> 5;
        v = lane < warps ? partial[lane] : partial[0];
        for (int o = 16; o > 0; o >>= 1) {
            T other = __shfl_down_sync(0xffffffffu, v, o);
            if (lane + o < warps)
                v = op(v, other);
        }
    }
    return v;
}

struct Add {
    template <typename T> __device__ T operator()(T a, T b) const { return a + b; }
};
struct Max {
    __device__ float operator()(float a, float b) const { return a > b ? a : b; }
};

__device__ void add_to(double *sum, double block_value)
{
    double v = block_reduce(block_value, Add());
    if (threadIdx.x == 0)
        atomicAdd(sum, v);
}

__global__ void act_backward_kernel(float *dinp, const float *dout, const float *pre, size_t n, int act)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        if (act == CF_LAYER_RELU)
            dinp[i] = pre[i] > 0.0f ? dout[i] : 0.0f;
        else if (act == CF_LAYER_GELU)
            dinp[i] = dout[i] * gelu_grad(pre[i]);
        else
            dinp[i] = dout[i];
    }
}

// pre += bias (broadcast over rows), then out = act(pre); with out == pre
// the activation overwrites (LINEAR and ReLU, as in the CPU twin).
__global__ void bias_act_kernel(float *pre, float *out, const float *bias, size_t n, int C_out, int act)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float v = pre[i] + bias[i % (size_t)C_out];
        if (out == pre) {
            pre[i] = activate(v, act);
        } else {
            pre[i] = v;
            out[i] = activate(v, act);
        }
    }
}

// dbias[j] = Σ_r d[r, j]: one thread per column, rows in order (as the CPU).
__global__ void column_sum_kernel(float *dbias, const float *d, int B, int C)
{
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < C; j += gridDim.x * blockDim.x) {
        float s = 0.0f;
        for (int r = 0; r < B; r++)
            s += d[(size_t)r * C + j];
        dbias[j] = s;
    }
}

// One block per row: the CPU twin's softmax cross-entropy.
__global__ void softmax_xent_kernel(float *dlogits, const float *logits, const int *labels, int C, float dscale,
                                    double *loss)
{
    const float *z = logits + (size_t)blockIdx.x * C;
    float *d = dlogits + (size_t)blockIdx.x * C;
    __shared__ float row_max;
    __shared__ double row_sum;
    float m = -INFINITY;
    for (int j = threadIdx.x; j < C; j += blockDim.x)
        m = z[j] > m ? z[j] : m;
    m = block_reduce(m, Max());
    if (threadIdx.x == 0)
        row_max = m;
    __syncthreads();
    double s = 0.0;
    for (int j = threadIdx.x; j < C; j += blockDim.x) {
        d[j] = expf(z[j] - row_max);
        s += d[j];
    }
    s = block_reduce(s, Add());
    if (threadIdx.x == 0)
        row_sum = s;
    __syncthreads();
    float inv = (float)(1.0 / row_sum);
    for (int j = threadIdx.x; j < C; j += blockDim.x)
        d[j] *= inv * dscale;
    __syncthreads();
    if (threadIdx.x == 0) {
        int y = labels[blockIdx.x];
        d[y] -= dscale;
        atomicAdd(loss, log(row_sum) - (double)(z[y] - row_max));
    }
}

__global__ void sqnorm_kernel(const float *x, size_t n, double *sum)
{
    double s = 0.0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        s += (double)x[i] * x[i];
    add_to(sum, s);
}

__global__ void accumulate_sqnorm_kernel(float *acc, const float *x, size_t n, double *sum)
{
    double s = 0.0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        acc[i] += x[i];
        s += (double)x[i] * x[i];
    }
    add_to(sum, s);
}

__global__ void sgd_kernel(float *p, const float *g, size_t n, float lr, double *sum)
{
    double s = 0.0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        s += (double)g[i] * g[i];
        p[i] -= lr * g[i];
    }
    add_to(sum, s);
}

__global__ void momentum_kernel(float *p, const float *g, float *b, size_t n, float lr, float mu, double *sum)
{
    double s = 0.0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        s += (double)g[i] * g[i];
        b[i] = mu * b[i] + g[i];
        p[i] -= lr * b[i];
    }
    add_to(sum, s);
}

// Adam and AdamW (keep = 1 − lr·λ first, 1 for Adam), PyTorch's arrangement.
__global__ void adam_kernel(float *p, const float *g, float *m, float *v, size_t n, float b1, float b2, float keep,
                            float step, float inv_root_bc2, float eps, double *sum)
{
    double s = 0.0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        if (keep != 1.0f)
            p[i] *= keep;
        s += (double)g[i] * g[i];
        m[i] = b1 * m[i] + (1.0f - b1) * g[i];
        v[i] = b2 * v[i] + (1.0f - b2) * g[i] * g[i];
        p[i] -= step * m[i] / (sqrtf(v[i]) * inv_root_bc2 + eps);
    }
    add_to(sum, s);
}

__device__ float lamb_direction(float m, float v, float w, float bc1, float bc2, float eps, float wd)
{
    return (m / bc1) / (sqrtf(v / bc2) + eps) + wd * w;
}

// LAMB, first pass: moments, and Σg², Σw², Σr² for the trust ratio.
__global__ void lamb_moments_kernel(const float *p, const float *g, float *m, float *v, size_t n, float b1, float b2,
                                    float bc1, float bc2, float eps, float wd, double *sums)
{
    double sg = 0.0, sw = 0.0, sr = 0.0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        sg += (double)g[i] * g[i];
        m[i] = b1 * m[i] + (1.0f - b1) * g[i];
        v[i] = b2 * v[i] + (1.0f - b2) * g[i] * g[i];
        float r = lamb_direction(m[i], v[i], p[i], bc1, bc2, eps, wd);
        sw += (double)p[i] * p[i];
        sr += (double)r * r;
    }
    add_to(&sums[0], sg);
    add_to(&sums[1], sw);
    add_to(&sums[2], sr);
}

__global__ void lamb_apply_kernel(float *p, const float *m, const float *v, size_t n, float bc1, float bc2, float eps,
                                  float wd, float lr, float trust)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] -= lr * trust * lamb_direction(m[i], v[i], p[i], bc1, bc2, eps, wd);
}

// Zeroes the scratch, runs `launch`, and reads back `count` sums.
template <typename Launch> void reduce(int count, double *out, Launch launch)
{
    cudaMemset(g_sums, 0, 3 * sizeof(double));
    launch(g_sums);
    cudaMemcpy(out, g_sums, (size_t)count * sizeof(double), cudaMemcpyDeviceToHost);
}

} // namespace

extern "C" cf_status cf_cuda_blas_init(void)
{
    if (g_blas)
        return CF_OK;
    cublasStatus_t s = cublasCreate(&g_blas);
    if (s != CUBLAS_STATUS_SUCCESS) {
        g_blas = nullptr;
        return cf_error_set(CF_ERR_UNAVAILABLE, "cuBLAS cannot start: %s", cublasGetStatusString(s));
    }
    // Plain FP32 products (no TF32): the CPU twin is the reference.
    s = cublasSetMathMode(g_blas, CUBLAS_PEDANTIC_MATH);
    if (s != CUBLAS_STATUS_SUCCESS) {
        cublasDestroy(g_blas);
        g_blas = nullptr;
        return cf_error_set(CF_ERR_UNAVAILABLE, "cuBLAS cannot set FP32 (pedantic) math: %s", cublasGetStatusString(s));
    }
    cudaError_t e = cudaMalloc(&g_sums, 3 * sizeof(double));
    if (e != cudaSuccess) {
        cublasDestroy(g_blas);
        g_blas = nullptr;
        return cf_error_set(CF_ERR_UNAVAILABLE, "CUDA: %s", cudaGetErrorString(e));
    }
    return CF_OK;
}

extern "C" void cf_cuda_blas_release(void)
{
    if (g_blas)
        cublasDestroy(g_blas);
    if (g_sums)
        cudaFree(g_sums);
    g_blas = nullptr;
    g_sums = nullptr;
}

extern "C" cf_status cf_cuda_check(const char *what)
{
    cudaError_t e = cudaGetLastError();
    cublasStatus_t b = g_blas_status;
    g_blas_status = CUBLAS_STATUS_SUCCESS;
    if (e == cudaErrorMemoryAllocation)
        return cf_error_set(CF_ERR_DOES_NOT_FIT, "out of memory on the GPU (%s)", what);
    if (e != cudaSuccess)
        return cf_error_set(CF_ERR_UNAVAILABLE, "CUDA error in %s: %s", what, cudaGetErrorString(e));
    if (b != CUBLAS_STATUS_SUCCESS)
        return cf_error_set(CF_ERR_UNAVAILABLE, "cuBLAS error in %s: %s", what, cublasGetStatusString(b));
    return CF_OK;
}

extern "C" void cf_dense_forward_cuda(float *pre, float *out, const float *inp, const float *weight, const float *bias,
                                      int B, int C_in, int C_out, cf_layer_act act)
{
    const float one = 1.0f, zero = 0.0f;
    // pre[B, C_out] = inp[B, C_in] · weight[C_in, C_out]
    blas(cublasSgemm(g_blas, CUBLAS_OP_N, CUBLAS_OP_N, C_out, B, C_in, &one, weight, C_out, inp, C_in, &zero, pre,
                     C_out));
    size_t n = (size_t)B * C_out;
    bias_act_kernel<<<blocks_for(n), kThreads>>>(pre, out, bias, n, C_out, (int)act);
}

extern "C" void cf_dense_backward_cuda(float *dinp, float *dweight, float *dbias, float *dout, const float *pre,
                                       const float *inp, const float *weight, int B, int C_in, int C_out,
                                       cf_layer_act act)
{
    size_t n = (size_t)B * C_out;
    if (act != CF_LAYER_LINEAR)
        act_backward_kernel<<<blocks_for(n), kThreads>>>(dout, dout, pre, n, (int)act);
    column_sum_kernel<<<blocks_for((size_t)C_out), kThreads>>>(dbias, dout, B, C_out);
    const float one = 1.0f, zero = 0.0f;
    // dweight[C_in, C_out] = inp^T · dout
    blas(cublasSgemm(g_blas, CUBLAS_OP_N, CUBLAS_OP_T, C_out, C_in, B, &one, dout, C_out, inp, C_in, &zero, dweight,
                     C_out));
    // dinp[B, C_in] = dout · weight^T
    if (dinp)
        blas(cublasSgemm(g_blas, CUBLAS_OP_T, CUBLAS_OP_N, C_in, B, C_out, &one, weight, C_out, dout, C_out, &zero,
                         dinp, C_in));
}

extern "C" double cf_softmax_xent_cuda(float *dlogits, const float *logits, const int *labels, int B, int C,
                                       float dscale)
{
    double loss = 0.0;
    reduce(1, &loss, [&](double *sum) {
        softmax_xent_kernel<<<B, kThreads>>>(dlogits, logits, labels, C, dscale, sum);
    });
    return loss;
}

extern "C" double cf_sqnorm_cuda(const float *x, size_t n)
{
    double s = 0.0;
    reduce(1, &s, [&](double *sum) { sqnorm_kernel<<<blocks_for(n), kThreads>>>(x, n, sum); });
    return s;
}

extern "C" double cf_accumulate_sqnorm_cuda(float *acc, const float *x, size_t n)
{
    double s = 0.0;
    reduce(1, &s, [&](double *sum) { accumulate_sqnorm_kernel<<<blocks_for(n), kThreads>>>(acc, x, n, sum); });
    return s;
}

extern "C" double cf_optim_update_cuda(const cf_optim *o, float *params, const float *grads, float *m, float *v,
                                       size_t n)
{
    double sums[3] = {0.0, 0.0, 0.0};
    const int blocks = blocks_for(n);
    switch (o->kind) {
    case CF_OPT_SGD:
        reduce(1, sums, [&](double *s) { sgd_kernel<<<blocks, kThreads>>>(params, grads, n, o->lr, s); });
        break;
    case CF_OPT_MOMENTUM:
        reduce(1, sums,
               [&](double *s) { momentum_kernel<<<blocks, kThreads>>>(params, grads, m, n, o->lr, o->momentum, s); });
        break;
    case CF_OPT_ADAM:
    case CF_OPT_ADAMW: {
        float keep = o->kind == CF_OPT_ADAMW ? 1.0f - o->lr * o->weight_decay : 1.0f;
        float step = (float)(o->lr / (1.0 - std::pow((double)o->beta1, (double)o->t)));
        float inv_root_bc2 = (float)(1.0 / std::sqrt(1.0 - std::pow((double)o->beta2, (double)o->t)));
        reduce(1, sums, [&](double *s) {
            adam_kernel<<<blocks, kThreads>>>(params, grads, m, v, n, o->beta1, o->beta2, keep, step, inv_root_bc2,
                                              o->eps, s);
        });
        break;
    }
    case CF_OPT_LAMB: {
        float bc1 = (float)(1.0 - std::pow((double)o->beta1, (double)o->t));
        float bc2 = (float)(1.0 - std::pow((double)o->beta2, (double)o->t));
        reduce(3, sums, [&](double *s) {
            lamb_moments_kernel<<<blocks, kThreads>>>(params, grads, m, v, n, o->beta1, o->beta2, bc1, bc2, o->eps,
                                                      o->weight_decay, s);
        });
        float trust = (sums[1] > 0.0 && sums[2] > 0.0) ? (float)std::sqrt(sums[1] / sums[2]) : 1.0f;
        lamb_apply_kernel<<<blocks, kThreads>>>(params, m, v, n, bc1, bc2, o->eps, o->weight_decay, o->lr, trust);
        break;
    }
    }
    return sums[0];
}
