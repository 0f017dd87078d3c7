/* The profiler (docs/profiler.md, docs/exec-protocol.md): a batch-size sweep on a probe
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
#include "cloudfit/cuda_probe.h"
#include "cloudfit/status.h"
#include "cloudfit/profiler/types.h"
#include "cloudfit/spec/types.h"

#define CF_PROBE_MAX_MICRO 64

/* ---- probe backends ------------------------------------------------------------- */

/* One optimizer step as a backend reports it. */
typedef struct {
    double time_s;                              /* wall time of the step */
    long samples;                               /* samples in the step (all micro-batches; one device's or all's) */
    double micro_sqnorms[CF_PROBE_MAX_MICRO];   /* |g_i|² per micro-batch (empty with one micro-batch) */
    int n_micro;
    double mean_sqnorm;                         /* |mean of the micro-batch gradients|²; < 0 = not reported */
    double loss;                                /* mean training loss; NAN = not reported */
} cf_probe_step;

/* One run of the backend: a fresh model (same seed each run), warm-up
 * steps, then timed steps. */
typedef struct {
    int local_batch;           /* samples per micro-batch */
    int micro_batches;         /* micro-batches per step (gradients averaged, one update) */
    int steps;                 /* steps after warm-up */
    int warmup_steps;
    unsigned long seed;
    int world_size;            /* exec: the devices the run trains on, every node's together (a runner's nodes ×
                                * GPUs per node); 0 = the 'device' event's "gpus" (1 when it gives none). A
                                * step's "samples" must be local_batch × micro_batches (one device's) or that
                                * times the world size (docs/exec-protocol.md) */
} cf_probe_run;

typedef struct {
    cf_probe_step *steps;      /* warm-up steps first, then timed ones; malloc'd */
    int n_steps;
    int oom;                   /* the batch does not fit (the backend's OOM answer); no steps then */
    char oom_reason[256];      /* what the backend said about it ("" when it said nothing) */
    int oom_model;             /* with oom: the model state alone does not fit (the engine could not
                                * start), so no smaller batch helps */
    cf_probe_device device;
    int has_device;
    int device_gpus_given;     /* the 'device' event gave "gpus" (else device.gpus is the default 1) */
    char precision[8];         /* as the probe reported it: fp32 | tf32 | fp16 | bf16 | amp; "" = not said */
    char memory_format[16];    /* contiguous | channels_last | channels_last_3d; "" = not said */
} cf_probe_result;

/* What tells two reports of one device apart, or NULL when they agree: "name",
 * "gpus", "type" (GPU or CPU) or "memory_gib" (compared only when both
 * report it). One profile is one device: a step time measured on 4 GPUs, or
 * on the CPU, is not one GPU's throughput (profiler/sweep.c). */
const char *cf_probe_device_difference(const cf_probe_device *kept, const cf_probe_device *reported);

/* Seconds an exec probe may stay silent before it is stopped (profile, search, runners). */
#define CF_PROBE_TIMEOUT_S_DEFAULT 120
/* The silence --timeout may allow: a second to a day (1e-300 s timed every
 * run out at once, and 1e300 s never ended a hung one). */
#define CF_PROBE_TIMEOUT_S_MIN 1
#define CF_PROBE_TIMEOUT_S_MAX 86400

typedef struct {
    double timeout_s;          /* exec: kill the script after this long without a line; <= 0 = CF_PROBE_TIMEOUT_S_DEFAULT */
    int threads;               /* cpu: BLAS threads, 0 = library default */
    const cf_probe_settings *settings; /* the spec's profile section (exec: its command); NULL = none */
} cf_probe_options;

typedef struct cf_probe cf_probe;

typedef struct cf_probe_backend cf_probe_backend;
struct cf_probe_backend {
    const char *name;                          /* "cpu", "cuda", "exec" */
    /* Prepares a probe for the job's model (checks what the backend needs). */
    cf_status (*open)(const cf_probe_backend *self, const cf_job *job, const cf_probe_options *options,
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
/* The exec backend (the command of options->settings, the spec's profile.command). */
cf_probe_backend cf_probe_exec(void);
/* Why execvp could not run `program` ("is a directory", "is not executable",
 * "no such file", "empty program name", "not found on PATH ..."), in `why`
 * when it needs the room; NULL when it could. The exec backend and the exec
 * runner refuse such a program before the first run. */
const char *cf_exec_program_problem(const char *program, char *why, size_t n);
/* Backend by name ("cpu", "cuda", "exec"); CF_ERR_USAGE for other names. */
cf_status cf_probe_backend_by_name(const char *name, cf_probe_backend *out);

/* ---- the profile ------------------------------------------------------------------- */

/* Progress of a sweep, for the CLI's bar. `done` of `total` runs. */
typedef void (*cf_profile_progress_fn)(void *ctx, int done, int total, const char *what);

typedef struct {
    int local_batches[CF_SPEC_MAX_BATCHES]; /* ascending; empty = probe.settings' local_batches, else 8..256 */
    int n_local_batches;
    int steps;                 /* timed steps per batch; 0 = probe.settings' steps, else 30 */
    int warmup_steps;          /* default 3 */
    int noise_micro_batches;   /* k for the noise run; default 8; 0 < k ≤ 64; -1 = no noise run */
    int noise_steps;           /* default 200 */
    unsigned long seed;        /* default 1 */
    char spec_key[65];         /* copied into the profile (cf_spec_profile_key); "" = none */
    int refine_ceiling;        /* bisect between the last batch that fit and the first OOM (default on) */
    cf_probe_options probe;
    cf_profile_progress_fn progress;
    void *progress_ctx;
} cf_profile_options;

void cf_profile_options_init(cf_profile_options *options);

/* Runs the sweep and the noise run. A backend error in the sweep returns
 * nothing (memset); a noise scale that cannot be resolved is not an error
 * (has_noise = 0, noise_error says why). A noise run that fails (the
 * script crashed, broke the protocol, reported an error) returns its
 * error status with the completed sweep in *out, noise_failed = 1 and the
 * reason in noise_error: the caller may store it and resume later. A stop
 * signal (CF_ERR_INTERRUPTED) always returns nothing. */
cf_status cf_profile_sweep(const cf_probe_backend *backend, const cf_job *job, const cf_profile_options *options,
                         cf_profile *out);

/* Re-runs what failed in a stored profile `p` (today: its noise run, when
 * noise_failed) on the same backend and device, in place; the sweep is
 * kept as it was measured. Returns like cf_profile_sweep's noise run: CF_OK
 * with the noise scale filled in, or the error with noise_failed still
 * set. CF_ERR_INVALID when nothing in `p` failed. */
cf_status cf_profile_resume(const cf_probe_backend *backend, const cf_job *job, const cf_profile_options *options,
                            cf_profile *p);

/* Least-squares line t = α + β·m through the points (GSL); fills the
 * residuals, R² and rel_rmse. Needs ≥ 2 distinct batches. */
cf_status cf_profile_fit(cf_profile *profile);

/* JSON (the cache's storage form and `profile --format json`). */
char *cf_profile_to_json(const cf_profile *profile, int pretty);
cf_status cf_profile_from_json(const char *text, cf_profile *out);

/* Median of n values (sorts a copy). */
double cf_median(const double *values, int n);

#endif
