/* Benchmark driver for the CPU engine: the median training-step time of an
 * MLP at several batch sizes, and the same step's matrix products run
 * back to back through bare OpenBLAS cblas_sgemm (same shapes, same
 * transposes) as the ceiling the engine is measured against. One JSON line
 * per batch size on stdout.
 * Usage: engine_bench [--widths 784,1024,1024,10] [--batches 64,128,256]
 *        [--threads N] [--steps N] [--warmup N] [--optimizer sgd|momentum|adam|adamw]
 *        [--lr X] [--activation relu|gelu] */
#include <cblas.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cloudfit/cuda_probe.h"
#include "bench_args.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The engine's products for one step at batch B: forward X·W per layer,
 * weight gradients Xᵀ·dY per layer, input gradients dY·Wᵀ for every layer
 * but the first. */
typedef struct {
    const int *w;
    int nw, B, maxw;
    float *weights, *grads, *act, *d0, *d1;
} sgemm_plan;

static void sgemm_plan_init(sgemm_plan *p, const int *w, int nw, int B)
{
    size_t wsz = 0;
    p->w = w;
    p->nw = nw;
    p->B = B;
    p->maxw = 0;
    for (int l = 0; l < nw; l++)
        if (w[l] > p->maxw)
            p->maxw = w[l];
    for (int l = 0; l + 1 < nw; l++)
        wsz += (size_t)w[l] * w[l + 1];
    size_t acts = (size_t)B * p->maxw * nw;
    p->weights = calloc(wsz, sizeof(float));
    p->grads = calloc(wsz, sizeof(float));
    p->act = calloc(acts, sizeof(float));
    p->d0 = calloc((size_t)B * p->maxw, sizeof(float));
    p->d1 = calloc((size_t)B * p->maxw, sizeof(float));
    for (size_t i = 0; i < wsz; i++)
        p->weights[i] = 0.01f * (float)(i % 7);
    for (size_t i = 0; i < acts; i++)
        p->act[i] = 0.1f * (float)(i % 5);
}

static double sgemm_plan_run_s(const sgemm_plan *p)
{
    const int *w = p->w, B = p->B;
    const size_t stride = (size_t)B * p->maxw;
    double t0 = now_s();
    size_t off = 0;
    for (int l = 0; l + 1 < p->nw; l++) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, w[l + 1], w[l], 1.0f, p->act + l * stride, w[l],
                    p->weights + off, w[l + 1], 0.0f, p->act + (l + 1) * stride, w[l + 1]);
        off += (size_t)w[l] * w[l + 1];
    }
    for (int l = p->nw - 2; l >= 0; l--) {
        off -= (size_t)w[l] * w[l + 1];
        float *dout = (l & 1) ? p->d0 : p->d1, *dinp = (l & 1) ? p->d1 : p->d0;
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, w[l], w[l + 1], B, 1.0f, p->act + l * stride, w[l], dout,
                    w[l + 1], 0.0f, p->grads + off, w[l + 1]);
        if (l > 0)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, w[l], w[l + 1], 1.0f, dout, w[l + 1],
                        p->weights + off, w[l + 1], 0.0f, dinp, w[l]);
    }
    return now_s() - t0;
}

static void sgemm_plan_free(sgemm_plan *p)
{
    free(p->weights);
    free(p->grads);
    free(p->act);
    free(p->d0);
    free(p->d1);
}

int main(int argc, char **argv)
{
    cf_engine_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.n_widths = parse_list("784,1024,1024,10", cfg.widths, CF_ENGINE_MAX_LAYERS);
    cfg.activation = CF_ACT_RELU;
    cfg.optimizer = CF_OPT_SGD;
    cfg.lr = 0.05;
    cfg.seed = 1;
    cfg.synthetic_samples = 60000;
    int batches[16], n_batches = parse_list("64,128,256", batches, 16);
    int steps = 30, warmup = 5;
    static const struct option opts[] = {
        {"widths", required_argument, NULL, 'w'},  {"batches", required_argument, NULL, 'b'},
        {"threads", required_argument, NULL, 't'}, {"steps", required_argument, NULL, 's'},
        {"warmup", required_argument, NULL, 'u'},  {"optimizer", required_argument, NULL, 'o'},
        {"lr", required_argument, NULL, 'l'},      {"activation", required_argument, NULL, 'a'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'w': cfg.n_widths = parse_list(optarg, cfg.widths, CF_ENGINE_MAX_LAYERS); break;
        case 'b': n_batches = parse_list(optarg, batches, 16); break;
        case 't': cfg.threads = atoi(optarg); break;
        case 's': steps = atoi(optarg); break;
        case 'u': warmup = atoi(optarg); break;
        case 'l': cfg.lr = atof(optarg); break;
        case 'a': cfg.activation = strcmp(optarg, "gelu") == 0 ? CF_ACT_GELU : CF_ACT_RELU; break;
        case 'o':
            cfg.optimizer = strcmp(optarg, "momentum") == 0 ? CF_OPT_MOMENTUM
                            : strcmp(optarg, "adam") == 0   ? CF_OPT_ADAM
                            : strcmp(optarg, "adamw") == 0  ? CF_OPT_ADAMW
                                                            : CF_OPT_SGD;
            break;
        default: fprintf(stderr, "usage: see the comment at the top of bench/engine_bench.c\n"); return 2;
        }
    }
    if (steps < 1 || warmup < 0) {
        fprintf(stderr, "engine_bench: --steps must be at least 1\n");
        return 2;
    }
    const cf_engine_ops *ops = cf_engine_cpu();
    cf_engine *e;
    if (ops->create(&cfg, &e) != CF_OK) {
        fprintf(stderr, "engine_bench: %s\n", cf_error_message());
        return 1;
    }
    int threads = openblas_get_num_threads();
    double flops = cf_engine_flops_per_sample(&cfg);
    double *times = malloc((size_t)steps * sizeof *times), *sgemm_times = malloc((size_t)steps * sizeof *sgemm_times);
    for (int b = 0; b < n_batches; b++) {
        int B = batches[b];
        sgemm_plan plan;
        sgemm_plan_init(&plan, cfg.widths, cfg.n_widths, B);
        /* Engine step and bare products alternate, so a change in machine
         * load hits both sides of the ratio alike. */
        for (int s = 0; s < warmup + steps; s++) {
            cf_engine_step st;
            if (ops->train_step(e, B, 1, &st) != CF_OK) {
                fprintf(stderr, "engine_bench: %s\n", cf_error_message());
                return 1;
            }
            double sg = sgemm_plan_run_s(&plan);
            if (s >= warmup) {
                times[s - warmup] = st.time_s;
                sgemm_times[s - warmup] = sg;
            }
        }
        sgemm_plan_free(&plan);
        double engine_s = median(times, steps);
        double sgemm_s = median(sgemm_times, steps);
        printf("{\"impl\": \"cloudfit\", \"batch\": %d, \"threads\": %d, \"step_s\": %.6g, \"sgemm_step_s\": %.6g, "
               "\"gflops\": %.4g, \"sgemm_gflops\": %.4g, \"flops_ratio\": %.4f, \"blas_core\": \"%s\"}\n",
               B, threads, engine_s, sgemm_s, flops * B / engine_s / 1e9, flops * B / sgemm_s / 1e9,
               sgemm_s / engine_s, openblas_get_corename());
        fflush(stdout);
    }
    free(sgemm_times);
    free(times);
    ops->destroy(e);
    return 0;
}
