/* The cuda_probe module's front door: GPU device discovery and the
 * built-in training engine, which trains the job's model for real so the
 * profiler can time steps and measure gradient noise. The CPU twin
 * (OpenBLAS) is the reference; the CUDA engine implements the same ops with
 * mirrored names and arguments (llm.c style), is compared with it by a
 * parity test at an explicit tolerance, and lives in a shared module
 * loaded only when a command asks for it (cuda_probe/loader.c). */
#ifndef CLOUDFIT_CUDA_PROBE_H
#define CLOUDFIT_CUDA_PROBE_H
#include "cloudfit/status.h"
#include "cloudfit/spec/types.h"

/* ---- devices ---------------------------------------------------------------- */

typedef struct {
    char name[128];
    double memory_gib;
    int compute_major, compute_minor;
    int multiprocessors;
} cf_device_info;

/* 1 when this build contains the CUDA code. */
int cf_cuda_built(void);
/* Lists up to `max` CUDA devices. No driver / no device / no CUDA in this
 * build → CF_ERR_UNAVAILABLE with a message a user can act on. */
cf_status cf_devices_list(cf_device_info *out, int max, int *out_count);

/* ---- engines ---------------------------------------------------------------- */

#define CF_ENGINE_MAX_LAYERS 16
#define CF_ENGINE_MAX_MICRO 64

typedef enum { CF_ACT_RELU, CF_ACT_GELU } cf_activation;

typedef struct {
    int widths[CF_ENGINE_MAX_LAYERS]; /* layer widths incl. input and output (classes) */
    int n_widths;
    cf_activation activation;
    cf_optimizer optimizer;           /* sgd, momentum (0.9), adam/adamw (0.9, 0.999, 1e-8; adamw decay 0.01) */
    double lr;
    unsigned long seed;               /* weights, teacher and data order */
    const char *npy_x, *npy_y;        /* NumPy .npy inputs (float32 [n, in]) and labels (int [n]); NULL = synthetic */
    long synthetic_samples;           /* size of the synthetic data set (from a fixed random teacher) */
    int threads;                      /* BLAS threads; 0 = library default */
    /* Memory the engine may use for the model state (weights, gradients,
     * optimizer state) and one micro-batch's activations; a batch that
     * needs more fails with "out of memory" (CF_ERR_UNAVAILABLE), like a
     * GPU running out of device memory. 0 = $CLOUDFIT_CPU_MEMORY_LIMIT_MIB
     * when set, else the machine's memory (cgroup limit or physical RAM).
     * The data set is host memory and is not counted. */
    double memory_limit_mib;
} cf_engine_config;

/* One optimizer step over `micro_batches` micro-batches of `local_batch`
 * samples each (gradients averaged, then one update). */
typedef struct {
    double time_s;                              /* wall time of the whole step */
    double loss;                                /* mean training loss over the step's samples */
    long samples;                               /* local_batch × micro_batches */
    double micro_sqnorms[CF_ENGINE_MAX_MICRO];  /* |g_i|² of each micro-batch's mean gradient */
    int n_micro;
    double mean_sqnorm;                         /* |mean of the micro-batch gradients|² */
} cf_engine_step;

typedef struct cf_engine cf_engine;

typedef struct {
    const char *name;                           /* "cpu" or "cuda" */
    cf_status (*create)(const cf_engine_config *config, cf_engine **out);
    /* Device the engine runs on (CPU model / GPU name, memory). */
    cf_status (*describe)(cf_engine *engine, cf_device_info *out);
    /* CF_ERR_UNAVAILABLE with "out of memory" text when the batch does not fit. */
    cf_status (*train_step)(cf_engine *engine, int local_batch, int micro_batches, cf_engine_step *out);
    void (*destroy)(cf_engine *engine);
} cf_engine_ops;

/* The CPU twin; always available. */
const cf_engine_ops *cf_engine_cpu(void);
/* Training FLOPs per sample of the config's MLP (forward 2·Σ in·out,
 * backward 2·Σ in·out for weights plus 2·Σ in·out for the inputs of every
 * layer but the first), the figure the engine's FLOP/s is quoted with. */
double cf_engine_flops_per_sample(const cf_engine_config *config);
/* Writes the synthetic data set the CPU engine would train on for
 * `config` (its seed, widths and synthetic_samples) as NumPy files: x
 * float32 [n, in] and y int64 [n], so another implementation (a PyTorch
 * script) can train on exactly the same samples. */
cf_status cf_engine_write_synthetic_npy(const cf_engine_config *config, const char *x_path, const char *y_path);
/* The CUDA engine, or NULL (with the reason as the last error) when this
 * build has no CUDA or the machine no usable GPU. */
const cf_engine_ops *cf_engine_cuda(void);

#endif
