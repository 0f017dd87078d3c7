/* The CUDA engine's kernels one by one against what the device itself can
 * do (bench/gpu.sh): for the MLP of examples/mlp-synthetic.json at several
 * batch sizes, each op of a training step (cuda_probe/mlp_cuda.h) timed
 * with CUDA events over `reps` launches, next to
 *   - cuBLAS's own FP32 GEMM (pedantic math, as the engine uses) at the
 *     same shapes: the products inside cf_dense_forward_cuda and
 *     cf_dense_backward_cuda; the rest of those ops is the engine's own
 *     kernels (bias + activation forward, activation backward + bias
 *     gradient), reported as the difference;
 *   - a device-to-device copy for the memory-bound kernels (softmax
 *     cross-entropy, the squared norm, the SGD update): GB/s moved;
 *   - cuBLAS FP32 GEMM at 4096³: the device's FP32 GEMM rate;
 * and the whole step through the engine (cf_engine_cuda(): the data set on
 * the host, as a loader's, so the step includes its host-to-device copy).
 * One JSON line per measurement on stdout. Exit 77 when there is no GPU.
 * Usage: gpu_kernel_bench [--widths 784,1024,1024,10] [--batches 64,256,1024] [--reps 50] */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cloudfit/cuda_probe.h"
#include "bench_args.h"
#include "mlp_cuda.h"

#define MAX_LAYERS 16

static void *dev_alloc(size_t floats)
{
    void *p = NULL;
    if (cudaMalloc(&p, floats * sizeof(float) + 16) != cudaSuccess) {
        fprintf(stderr, "gpu_kernel_bench: cudaMalloc of %zu floats failed\n", floats);
        exit(1);
    }
    cudaMemset(p, 0, floats * sizeof(float));
    return p;
}

/* Small values, so activations and the loss stay finite. */
static void dev_fill(float *d, size_t n, unsigned seed)
{
    float *h = malloc(n * sizeof *h);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        h[i] = ((float)(seed >> 8) / 16777216.0f - 0.5f) * 0.1f;
    }
    cudaMemcpy(d, h, n * sizeof *h, cudaMemcpyHostToDevice);
    free(h);
}

typedef struct {
    cudaEvent_t start, stop;
    int reps;
} timer;

static void timer_begin(timer *t)
{
    cudaDeviceSynchronize();
    cudaEventRecord(t->start, 0);
}

/* Milliseconds per repetition since timer_begin. */
static double timer_end_ms(timer *t)
{
    cudaEventRecord(t->stop, 0);
    cudaEventSynchronize(t->stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, t->start, t->stop);
    return ms / t->reps;
}

/* C[m, n] = A[m, k] · B[k, n] row-major as the engine calls it. */
static void sgemm_rowmajor(cublasHandle_t h, int m, int n, int k, const float *a, const float *b, float *c)
{
    const float one = 1, zero = 0;
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, n, a, k, &zero, c, n);
}

/* One JSON line: the op, and two more figures named key_a and key_b. */
static void line(const char *op, int batch, double ms, const char *key_a, double a, const char *key_b, double b)
{
    printf("{\"op\": \"%s\", \"batch\": %d, \"ms\": %.6g, \"%s\": %.6g, \"%s\": %.6g}\n", op, batch, ms, key_a,
           a, key_b, b);
}

static double square_gemm_tflops(cublasHandle_t h, int n, int reps)
{
    float *a = dev_alloc((size_t)n * n), *b = dev_alloc((size_t)n * n), *c = dev_alloc((size_t)n * n);
    dev_fill(a, (size_t)n * n, 1);
    dev_fill(b, (size_t)n * n, 2);
    timer t = {0, 0, reps};
    cudaEventCreate(&t.start);
    cudaEventCreate(&t.stop);
    sgemm_rowmajor(h, n, n, n, a, b, c); /* warm-up */
    timer_begin(&t);
    for (int r = 0; r < reps; r++)
        sgemm_rowmajor(h, n, n, n, a, b, c);
    double ms = timer_end_ms(&t);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    cudaEventDestroy(t.start);
    cudaEventDestroy(t.stop);
    return 2.0 * n * (double)n * n / (ms * 1e-3) / 1e12;
}

static double copy_gbs(size_t floats, int reps)
{
    float *a = dev_alloc(floats), *b = dev_alloc(floats);
    timer t = {0, 0, reps};
    cudaEventCreate(&t.start);
    cudaEventCreate(&t.stop);
    cudaMemcpy(b, a, floats * sizeof(float), cudaMemcpyDeviceToDevice);
    timer_begin(&t);
    for (int r = 0; r < reps; r++)
        cudaMemcpy(b, a, floats * sizeof(float), cudaMemcpyDeviceToDevice);
    double ms = timer_end_ms(&t);
    cudaFree(a);
    cudaFree(b);
    cudaEventDestroy(t.start);
    cudaEventDestroy(t.stop);
    return 2.0 * floats * sizeof(float) / (ms * 1e-3) / 1e9; /* read + write */
}

static void bench_batch(cublasHandle_t h, const int *w, int nw, int B, int reps, double copy_rate)
{
    int nl = nw - 1;
    float *W[MAX_LAYERS], *bias[MAX_LAYERS], *dW[MAX_LAYERS], *db[MAX_LAYERS], *act[MAX_LAYERS + 1],
        *pre[MAX_LAYERS], *dact[MAX_LAYERS + 1];
    size_t n_params = 0;
    for (int l = 0; l < nl; l++) {
        W[l] = dev_alloc((size_t)w[l] * w[l + 1]);
        dW[l] = dev_alloc((size_t)w[l] * w[l + 1]);
        bias[l] = dev_alloc((size_t)w[l + 1]);
        db[l] = dev_alloc((size_t)w[l + 1]);
        pre[l] = dev_alloc((size_t)B * w[l + 1]);
        dev_fill(W[l], (size_t)w[l] * w[l + 1], 10u + (unsigned)l);
        n_params += (size_t)w[l] * w[l + 1] + (size_t)w[l + 1];
    }
    for (int l = 0; l <= nl; l++) {
        act[l] = dev_alloc((size_t)B * w[l]);
        dact[l] = dev_alloc((size_t)B * w[l]);
    }
    dev_fill(act[0], (size_t)B * w[0], 3);
    int *labels = NULL;
    cudaMalloc((void **)&labels, (size_t)B * sizeof(int));
    cudaMemset(labels, 0, (size_t)B * sizeof(int));
    timer t = {0, 0, reps};
    cudaEventCreate(&t.start);
    cudaEventCreate(&t.stop);
    double gemm_ms_total = 0, engine_ms_total = 0, flops_total = 0;
    char name[64];
    for (int l = 0; l < nl; l++) {
        cf_layer_act a = l < nl - 1 ? CF_LAYER_RELU : CF_LAYER_LINEAR;
        double flops = 2.0 * B * w[l] * (double)w[l + 1];
        /* one untimed call of each first: cuBLAS picks and loads its kernel for a new shape on the first call
         * (on an H100 the first 64 × 784 × 1024 product timed 0.22 ms of setup in 50 calls) */
        sgemm_rowmajor(h, B, w[l + 1], w[l], act[l], W[l], pre[l]);
        cf_dense_forward_cuda(pre[l], act[l + 1], act[l], W[l], bias[l], B, w[l], w[l + 1], a);
        timer_begin(&t);
        for (int r = 0; r < reps; r++)
            sgemm_rowmajor(h, B, w[l + 1], w[l], act[l], W[l], pre[l]);
        double gemm = timer_end_ms(&t);
        timer_begin(&t);
        for (int r = 0; r < reps; r++)
            cf_dense_forward_cuda(pre[l], act[l + 1], act[l], W[l], bias[l], B, w[l], w[l + 1], a);
        double op = timer_end_ms(&t);
        snprintf(name, sizeof name, "cf_dense_forward_cuda L%d %dx%d", l + 1, w[l], w[l + 1]);
        line(name, B, op, "cublas_sgemm_ms", gemm, "bias_act_kernel_ms", op - gemm);
        gemm_ms_total += gemm;
        engine_ms_total += op;
        flops_total += flops;
    }
    for (int l = nl - 1; l >= 0; l--) {
        cf_layer_act a = l < nl - 1 ? CF_LAYER_RELU : CF_LAYER_LINEAR;
        int products = l > 0 ? 2 : 1; /* the first layer needs no input gradient */
        cf_dense_backward_cuda(l > 0 ? dact[l] : NULL, dW[l], db[l], dact[l + 1], pre[l], act[l], W[l], B, w[l],
                               w[l + 1], a); /* untimed: its cuBLAS shapes loaded (above) */
        timer_begin(&t);
        for (int r = 0; r < reps; r++) {
            /* dW = Xᵀ·dY [in, out]; dX = dY·Wᵀ [B, in] (as row-major products) */
            const float one = 1, zero = 0;
            cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, w[l + 1], w[l], B, &one, dact[l + 1], w[l + 1], act[l], w[l],
                        &zero, dW[l], w[l + 1]);
            if (l > 0)
                cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, w[l], B, w[l + 1], &one, W[l], w[l + 1], dact[l + 1],
                            w[l + 1], &zero, dact[l], w[l]);
        }
        double gemm = timer_end_ms(&t);
        timer_begin(&t);
        for (int r = 0; r < reps; r++)
            cf_dense_backward_cuda(l > 0 ? dact[l] : NULL, dW[l], db[l], dact[l + 1], pre[l], act[l], W[l], B, w[l],
                                   w[l + 1], a);
        double op = timer_end_ms(&t);
        snprintf(name, sizeof name, "cf_dense_backward_cuda L%d %dx%d", l + 1, w[l], w[l + 1]);
        line(name, B, op, "cublas_sgemm_ms", gemm, "act_backward_column_sum_kernels_ms", op - gemm);
        gemm_ms_total += gemm;
        engine_ms_total += op;
        flops_total += products * 2.0 * B * w[l] * (double)w[l + 1];
    }
    /* Memory-bound kernels: bytes moved over the time, against a copy. */
    timer_begin(&t);
    for (int r = 0; r < reps; r++)
        cf_softmax_xent_cuda(dact[nl], act[nl], labels, B, w[nl], 1.0f / B);
    double ms = timer_end_ms(&t);
    double gbs = 2.0 * B * w[nl] * sizeof(float) / (ms * 1e-3) / 1e9;
    line("cf_softmax_xent_cuda (incl. reading the loss back)", B, ms, "gbs", gbs, "copy_gbs", copy_rate);
    engine_ms_total += ms;
    timer_begin(&t);
    for (int r = 0; r < reps; r++)
        cf_sqnorm_cuda(dW[0], (size_t)w[0] * w[1]);
    ms = timer_end_ms(&t);
    gbs = (double)w[0] * w[1] * sizeof(float) / (ms * 1e-3) / 1e9;
    line("cf_sqnorm_cuda (layer 1 gradient)", B, ms, "gbs", gbs, "copy_gbs", copy_rate);
    cf_optim o;
    cf_optim_init(&o, CF_OPT_SGD, 0.01f);
    double update_ms = 0;
    for (int l = 0; l < nl; l++) {
        timer_begin(&t);
        for (int r = 0; r < reps; r++)
            cf_optim_update_cuda(&o, W[l], dW[l], NULL, NULL, (size_t)w[l] * w[l + 1]);
        update_ms += timer_end_ms(&t);
    }
    gbs = 3.0 * (double)n_params * sizeof(float) / (update_ms * 1e-3) / 1e9;
    line("cf_optim_update_cuda sgd (all weights)", B, update_ms, "gbs", gbs, "copy_gbs", copy_rate);
    engine_ms_total += update_ms;
    printf("{\"op\": \"step ops (sum)\", \"batch\": %d, \"ms\": %.6g, \"cublas_sgemm_ms\": %.6g, \"gflops\": %.5g, "
           "\"cublas_gflops\": %.5g}\n",
           B, engine_ms_total, gemm_ms_total, flops_total / (engine_ms_total * 1e-3) / 1e9,
           flops_total / (gemm_ms_total * 1e-3) / 1e9);
    cudaEventDestroy(t.start);
    cudaEventDestroy(t.stop);
    for (int l = 0; l < nl; l++) {
        cudaFree(W[l]);
        cudaFree(dW[l]);
        cudaFree(bias[l]);
        cudaFree(db[l]);
        cudaFree(pre[l]);
    }
    for (int l = 0; l <= nl; l++) {
        cudaFree(act[l]);
        cudaFree(dact[l]);
    }
    cudaFree(labels);
}

/* The engine's whole step (cf_engine_cuda()), median of `steps` after warm-up. */
static void bench_engine(const int *w, int nw, int B, int steps)
{
    const cf_engine_ops *ops = cf_engine_cuda();
    if (!ops) {
        fprintf(stderr, "gpu_kernel_bench: the CUDA engine: %s\n", cf_error_message());
        return;
    }
    cf_engine_config cfg;
    memset(&cfg, 0, sizeof cfg);
    memcpy(cfg.widths, w, (size_t)nw * sizeof *w);
    cfg.n_widths = nw;
    cfg.activation = CF_ACT_RELU;
    cfg.optimizer = CF_OPT_SGD;
    cfg.lr = 0.05;
    cfg.seed = 1;
    cfg.synthetic_samples = 10000;
    cf_engine *e = NULL;
    if (ops->create(&cfg, &e) != CF_OK) {
        fprintf(stderr, "gpu_kernel_bench: engine: %s\n", cf_error_message());
        return;
    }
    double times[512];
    if (steps > 512)
        steps = 512;
    cf_engine_step s;
    /* a failed step (out of memory at this batch) has no time: a median of
     * its zeroed time_s would read as an infinitely fast step */
    for (int i = 0; i < 5 + steps; i++) {
        if (ops->train_step(e, B, 1, &s) != CF_OK) {
            fprintf(stderr, "gpu_kernel_bench: engine train_step at batch %d: %s\n", B, cf_error_message());
            ops->destroy(e);
            return;
        }
        if (i >= 5)
            times[i - 5] = s.time_s;
    }
    double med = median(times, steps);
    double flops = cf_engine_flops_per_sample(&cfg) * B;
    printf("{\"op\": \"engine train_step (cf_engine_cuda)\", \"batch\": %d, \"ms\": %.6g, \"gflops\": %.5g}\n", B,
           med * 1e3, flops / med / 1e9);
    ops->destroy(e);
}

int main(int argc, char **argv)
{
    int widths[MAX_LAYERS + 1] = {784, 1024, 1024, 10}, nw = 4;
    int batches[16] = {64, 256, 1024}, nb = 3, reps = 50;
    static const struct option longopts[] = {{"widths", required_argument, 0, 'w'},
                                             {"batches", required_argument, 0, 'b'},
                                             {"reps", required_argument, 0, 'r'},
                                             {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        if (c == 'w')
            nw = parse_list(optarg, widths, MAX_LAYERS + 1);
        else if (c == 'b')
            nb = parse_list(optarg, batches, 16);
        else if (c == 'r')
            reps = atoi(optarg) > 0 ? atoi(optarg) : 1;
        else
            return 2;
    }
    if (nw < 3) {
        fprintf(stderr, "gpu_kernel_bench: --widths needs at least 3 widths (a hidden layer)\n");
        return 2;
    }
    int devices = 0;
    cudaError_t err = cudaGetDeviceCount(&devices);
    if (err != cudaSuccess || devices == 0) {
        printf("skipped: no CUDA device (%s)\n", err != cudaSuccess ? cudaGetErrorString(err) : "none found");
        return 77;
    }
    struct cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    if (cf_cuda_blas_init() != CF_OK) {
        fprintf(stderr, "gpu_kernel_bench: %s\n", cf_error_message());
        return 1;
    }
    cublasHandle_t h;
    cublasCreate(&h);
    cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH); /* FP32 as the engine computes */
    double peak = square_gemm_tflops(h, 4096, 10);
    double copy = copy_gbs((size_t)64 << 20, 20);
    printf("{\"device\": \"%s\", \"sm\": %d%d, \"cublas_fp32_gemm_4096_tflops\": %.4g, \"copy_gbs\": %.4g}\n",
           prop.name, prop.major, prop.minor, peak, copy);
    for (int i = 0; i < nb; i++) {
        bench_batch(h, widths, nw, batches[i], reps, copy);
        bench_engine(widths, nw, batches[i], 50);
    }
    cublasDestroy(h);
    cf_cuda_blas_release();
    return cf_cuda_check("the benchmark") == CF_OK ? 0 : 1;
}
