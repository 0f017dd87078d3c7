/* The profiler (DESIGN.md §3.1, §3.3, §4.3): a batch-size sweep on a probe
 * backend (warm-up steps excluded, median of repeated timed steps, the
 * largest per-device batch that fits), a linear fit t_c(m) = α + β·m with
 * its residuals, and the gradient noise scale from a short training run at
 * the recipe's batch split into micro-batches. The result is a plain
 * struct (cf_profile), serialisable to JSON for the profile cache.
 *
 * Probe backends are structs of function pointers:
 *   cpu   the built-in CPU engine (cf_engine_cpu(), OpenBLAS)
 *   cuda  the built-in CUDA engine (cf_engine_cuda(); CF_ERR_UNAVAILABLE
 *         when this build or machine has no usable GPU)
 *   exec  the user's own training script (spec profile.command, argv, no
 *         shell) speaking the JSON-lines protocol of docs/exec-protocol.md */
#ifndef CLOUDFIT_PROFILER_H
#define CLOUDFIT_PROFILER_H
#include <stddef.h>
#include "cloudfit/engine.h"
#include "cloudfit/spec.h"
#include "cloudfit/status.h"

#define CF_PROBE_MAX_MICRO 64
#define CF_PROFILE_MAX_POINTS 32
#define CF_PROFILE_MAX_TRACE 64

/* ---- probe backends ------------------------------------------------------------- */

/* One optimizer step as a backend reports it. */
typedef struct {
    double time_s;                              /* wall time of the step */
    long samples;                               /* samples in the step (all micro-batches) */
    double micro_sqnorms[CF_PROBE_MAX_MICRO];   /* |g_i|² per micro-batch (empty with one micro-batch) */
    int n_micro;
    double mean_sqnorm;                         /* |mean of the micro-batch gradients|²; < 0 = not reported */
    double loss;                                /* mean training loss; NAN = not reported */
} cf_probe_step;

typedef struct {
    char name[128];            /* "NVIDIA A100-SXM4-40GB", "cpu: AMD EPYC 7B13 (2 threads)" */
    double memory_gib;         /* 0 = unknown */
    int gpus;                  /* devices the run used (1 unless the script trains data-parallel) */
    int is_gpu;                /* 0 for a CPU run: its step times are not a GPU's throughput */
} cf_probe_device;

/* One run of the backend: a fresh model (same seed each run), warm-up
 * steps, then timed steps. */
typedef struct {
    int local_batch;           /* samples per micro-batch */
    int micro_batches;         /* micro-batches per step (gradients averaged, one update) */
    int steps;                 /* steps after warm-up */
    int warmup_steps;
    unsigned long seed;
} cf_probe_run;

typedef struct {
    cf_probe_step *steps;      /* warm-up steps first, then timed ones; malloc'd */
    int n_steps;
    int oom;                   /* the batch does not fit (the backend's OOM answer); no steps then */
    cf_probe_device device;
    int has_device;
} cf_probe_result;

typedef struct {
    double timeout_s;          /* exec: kill the script after this long without a line (default 120) */
    int threads;               /* cpu: BLAS threads, 0 = library default */
} cf_probe_options;

typedef struct cf_probe cf_probe;

typedef struct cf_probe_backend cf_probe_backend;
struct cf_probe_backend {
    const char *name;                          /* "cpu", "cuda", "exec" */
    /* Prepares a probe for the spec's model (checks what the backend needs). */
    cf_status (*open)(const cf_probe_backend *self, const cf_spec *spec, const cf_probe_options *options,
                      cf_probe **out);
    /* Runs one configuration. A batch that does not fit is CF_OK with
     * out->oom set; any other failure is an error and out holds nothing. */
    cf_status (*run)(cf_probe *probe, const cf_probe_run *run, cf_probe_result *out);
    void (*close)(cf_probe *probe);
    const void *impl;                          /* backend data (the engine ops for cpu/cuda) */
};

void cf_probe_result_free(cf_probe_result *result);

/* The built-in engine behind a probe (cpu/cuda, or a test's own ops). */
cf_probe_backend cf_probe_engine_backend(const cf_engine_ops *ops);
/* The CPU engine; always available. */
cf_probe_backend cf_probe_cpu(void);
/* The CUDA engine, or CF_ERR_UNAVAILABLE with the engine's reason. */
cf_status cf_probe_cuda(cf_probe_backend *out);
/* The exec backend (the spec's profile.command). */
cf_probe_backend cf_probe_exec(void);
/* Backend by name ("cpu", "cuda", "exec"); CF_ERR_USAGE for other names. */
cf_status cf_probe_backend_by_name(const char *name, cf_probe_backend *out);

/* ---- the profile ------------------------------------------------------------------- */

typedef struct {
    int local_batch;
    double step_time_s;        /* median of the timed steps */
    double min_s, max_s;       /* spread of the timed steps */
    int n_timed;
    double residual_s;         /* measured median − fitted α + β·m */
} cf_profile_point;

/* One run of a runner profile (`cloudfit profile --runner`): a
 * configuration of whole VMs, as a row of the measurements CSV. */
#define CF_PROFILE_MAX_RUNS 16
typedef struct {
    int nodes, gpus_per_node;  /* placement: `gpus_per_node` GPUs busy on each of `nodes` VMs */
    int hw_gpus_per_node;      /* GPUs installed in the VM */
    int local_batch;
    double step_time_s;        /* as the runner reported it (median of its timed steps) */
    double network_gbps;       /* nominal NIC of the VM; 0 = unknown */
    char cloud[8];             /* of the VM; "" when the runner has no VM */
    char instance_type[64];    /* "" when the runner has no VM */
    char kind[16];             /* "profile" (light profile, one VM) or "probe" (2 nodes × 1 GPU) */
} cf_profile_run_row;

typedef struct {
    char spec_name[CF_SPEC_NAME_MAX];
    char spec_key[65];         /* cf_profile_spec_key(): what the measurement depends on */
    char backend[8];           /* cpu | cuda | exec, or trace | runner for `profile --runner` */
    cf_probe_device device;
    char created_at[32];       /* ISO 8601 UTC */
    int steps, warmup_steps;   /* per timed run */

    cf_profile_point points[CF_PROFILE_MAX_POINTS]; /* batches that fit, ascending */
    int n_points;
    int has_fit;               /* ≥ 2 points */
    double alpha_s, beta_s;    /* t_c(m) = α + β·m, one micro-batch on one device */
    double r2;
    double rel_rmse;           /* root mean square of residual / measured */
    int max_local_batch;       /* largest batch that ran */
    int ceiling_found;         /* 1: a larger batch ran out of memory (max_local_batch is the ceiling);
                                  0: nothing ran out of memory (it is a lower bound) */
    int oom_batch;             /* smallest batch that did not fit; 0 = none */

    int has_noise;
    double b_noise, b_noise_stderr;
    int noise_local_batch, noise_micro_batches, noise_steps;
    double noise_samples;      /* samples the noise run trained on */
    cf_noise_point noise_trace[CF_PROFILE_MAX_TRACE]; /* progress here = samples seen (absolute), not a fraction */
    int n_noise_trace;
    char noise_error[200];     /* why there is no noise scale, when has_noise == 0 */

    /* Runner profiles only (n_runs > 0): every run, the light profile's
     * single-VM runs and the 2-node × 1-GPU probe; points[] then hold the
     * 1-GPU runs. probe_status: "measured", "skipped" or "failed", with
     * probe_note saying why (empty for other backends). */
    cf_profile_run_row runs[CF_PROFILE_MAX_RUNS];
    int n_runs;
    char runner[160];          /* the --runner text, shortened */
    char probe_status[16];
    char probe_note[240];
} cf_profile;

/* Progress of a sweep, for the CLI's bar. `done` of `total` runs. */
typedef void (*cf_profile_progress_fn)(void *ctx, int done, int total, const char *what);

typedef struct {
    int local_batches[CF_SPEC_MAX_BATCHES]; /* ascending; empty = spec's profile.local_batches or 8..256 */
    int n_local_batches;
    int steps;                 /* timed steps per batch; 0 = spec's profile.steps */
    int warmup_steps;          /* default 3 */
    int noise_micro_batches;   /* k for the noise run; default 8; 0 < k ≤ 64; -1 = no noise run */
    int noise_steps;           /* default 200 */
    unsigned long seed;        /* default 1 */
    int refine_ceiling;        /* bisect between the last batch that fit and the first OOM (default on) */
    cf_probe_options probe;
    cf_profile_progress_fn progress;
    void *progress_ctx;
} cf_profile_options;

void cf_profile_options_init(cf_profile_options *options);

/* Runs the sweep and the noise run. On any backend error nothing is
 * returned (the profile is all-or-nothing); a noise scale that cannot be
 * resolved is not an error (has_noise = 0, noise_error says why). */
cf_status cf_profile_run(const cf_probe_backend *backend, const cf_spec *spec, const cf_profile_options *options,
                         cf_profile *out);

/* The key a profile is cached under: SHA-256 of the spec's model, data and
 * training.{batch, lr, optimizer} sections and profile.command — what the
 * measurement depends on — so that editing the deadline or the search
 * does not discard a profile. */
cf_status cf_profile_spec_key(const cf_spec *spec, char out[65]);

/* Least-squares line t = α + β·m through the points (GSL); fills the
 * residuals, R² and rel_rmse. Needs ≥ 2 distinct batches. */
cf_status cf_profile_fit(cf_profile *profile);

/* JSON (the cache's storage form and `profile --format json`). */
char *cf_profile_to_json(const cf_profile *profile, int pretty);
cf_status cf_profile_from_json(const char *text, cf_profile *out);

/* Median of n values (sorts a copy). */
double cf_median(const double *values, int n);

#endif
