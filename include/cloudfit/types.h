/* The plain structs the modules exchange (docs/architecture.md): the training job
 * and its constraints, offers and GPUs, measured step times, noise points,
 * profiles and recorded runs. Middle-floor modules include this header,
 * never each other's: spec/ fills a job and constraints, pricing/ fills
 * offers and GPUs, profiler/ fills measurements and profiles, advisor/
 * reads them all. Pure data plus look-ups over it (common/types.c). */
#ifndef CLOUDFIT_TYPES_H
#define CLOUDFIT_TYPES_H

/* The largest node count considered when the spec's search.max_nodes is not set. */
#define CF_MAX_NODES_DEFAULT 16
/* ... and of GPUs when search.max_gpus is not set. */
#define CF_MAX_GPUS_DEFAULT 64
#include <stddef.h>
#include "cloudfit/status.h"

typedef enum { CF_OPT_SGD, CF_OPT_MOMENTUM, CF_OPT_ADAM, CF_OPT_ADAMW, CF_OPT_LAMB } cf_optimizer;
typedef enum { CF_LR_AUTO, CF_LR_GAIN, CF_LR_LINEAR, CF_LR_SQRT, CF_LR_NONE } cf_lr_rule;
typedef enum { CF_OBJ_COST, CF_OBJ_TIME, CF_OBJ_BALANCED } cf_objective;
typedef enum { CF_SPOT_NEVER, CF_SPOT_ALLOW, CF_SPOT_ONLY } cf_spot_policy;
/* Arithmetic of the training run; amp = automatic mixed precision (FP16
 * tensor math where the GPU has it, else BF16, else FP32). */
typedef enum { CF_PREC_FP32, CF_PREC_TF32, CF_PREC_FP16, CF_PREC_BF16, CF_PREC_AMP } cf_precision;

/* Where a figure came from (docs/output.md). */
typedef enum { CF_PROV_MEASURED, CF_PROV_FITTED, CF_PROV_ESTIMATED, CF_PROV_DEFAULT } cf_provenance;

const char *cf_optimizer_name(cf_optimizer v);
const char *cf_lr_rule_name(cf_lr_rule v);
const char *cf_objective_name(cf_objective v);
const char *cf_spot_policy_name(cf_spot_policy v);
const char *cf_precision_name(cf_precision v);
/* "fp32", "tf32", "fp16", "bf16", "amp" (any case) → *out; 0 when the name is none of them. */
int cf_precision_parse(const char *name, cf_precision *out);
const char *cf_provenance_name(cf_provenance v);

#define CF_SPEC_NAME_MAX 65      /* [A-Za-z0-9._-]{1,64} + NUL */
#define CF_GPU_NAME_MAX 32
#define CF_PATH_MAX 1024
#define CF_SPEC_MAX_GPUS 32
#define CF_SPEC_MAX_LIST 16
#define CF_SPEC_MAX_TRACE 256
#define CF_SPEC_MAX_ARGV 64
#define CF_SPEC_MAX_BATCHES 32
#define CF_SPEC_MAX_SAMPLES 9007199254740992.0 /* 2^53: data.samples, training.samples and their product with epochs; larger doubles skip whole numbers */

/* ---- the job: what is trained (spec sections model, data, training) ------- */

typedef struct {
    char name[CF_SPEC_NAME_MAX];
    char source[CF_PATH_MAX];           /* file it was read from ("" for text): messages, relative paths */

    /* model */
    double parameters;
    int gradient_bytes;                 /* bytes per gradient element on the wire; default 4 */
    cf_precision precision;             /* default: fp16 when gradient_bytes == 2, else fp32 */
    double flops_per_sample;            /* 0 = unknown */
    double memory_per_sample_mib;       /* 0 = unknown */
    char architecture_type[16];         /* "" | "mlp" | "cnn" | "decoder" */
    int mlp_layers[CF_SPEC_MAX_LIST];   /* architecture.layers for "mlp": widths incl. input and output */
    int n_mlp_layers;
    char activation[8];                 /* "relu" | "gelu"; default "relu" */

    /* data */
    double samples_per_epoch;
    char data_source[16];               /* "synthetic" (default) | "npy" | "tokens" */
    char npy_x[CF_PATH_MAX], npy_y[CF_PATH_MAX], tokens_path[CF_PATH_MAX];

    /* training: the known-good recipe */
    double epochs;                      /* exactly one of epochs / samples */
    double total_samples;               /* = epochs × samples_per_epoch when epochs given */
    int batch;                          /* M0 */
    double lr;
    cf_optimizer optimizer;             /* default sgd */
    cf_lr_rule lr_rule;                 /* default auto */
    int has_current;                    /* training.current: today's set-up, for savings */
    char current_gpu[CF_GPU_NAME_MAX];
    int current_gpus_per_node, current_nodes;
} cf_job;

/* ---- the constraints of a recommendation (spec section search) ----------- */

typedef struct {
    cf_objective objective;             /* default cost */
    double deadline_hours;              /* 0 = none */
    double budget_usd;                  /* 0 = none */
    char clouds[CF_SPEC_MAX_LIST][16];
    int n_clouds;                       /* 0 = all */
    char regions[CF_SPEC_MAX_LIST][32];
    int n_regions;                      /* 0 = all */
    char gpus[CF_SPEC_MAX_GPUS][CF_GPU_NAME_MAX];
    int n_gpus;                         /* 0 = all */
    int max_gpus;                       /* default CF_MAX_GPUS_DEFAULT */
    int max_nodes;                      /* default CF_MAX_NODES_DEFAULT */
    int min_nodes;                      /* 0 or 1 = any; not a spec key (cloudfit simulate plans exactly N) */
    int max_accumulation;               /* default 8 */
    int max_global_batch;               /* default 64 × batch */
    cf_spot_policy spot;                /* default never */
    double startup_minutes;             /* default 10: provisioning, image pull, data staging */
    double confidence;                  /* default 0.9: the deadline and budget hold with this probability */
    double checkpoint_minutes;          /* 0 (default) = from the checkpoint size and storage_mb_per_s */
    double storage_mb_per_s;            /* default 125: checkpoint write and read-back bandwidth (spot) */
} cf_constraints;

/* ---- how to probe the model (spec section profile: backend and sweep) ---- */

typedef struct {
    char backend[8];                    /* "" | "cpu" | "cuda" | "exec" */
    char *command[CF_SPEC_MAX_ARGV];    /* argv for the exec backend, NULL-terminated; owned by the spec */
    int n_command;
    int local_batches[CF_SPEC_MAX_BATCHES];
    int n_local_batches;                /* 0 = the profiler's default sweep */
    int steps;                          /* timed steps per batch; default 30 */
} cf_probe_settings;

/* ---- offers and GPUs (pricing/ fills them) --------------------------------- */

/* Where a price comes from (docs/catalog.md): every price carries its kind
 * and date, and the output says which one it used. */
typedef enum {
    CF_PRICE_NONE = 0,   /* no such price (not offered, or not known) */
    CF_PRICE_LISTED,     /* a published price list or API (on-demand; GCP/Azure spot) */
    CF_PRICE_OBSERVED,   /* a market price seen (AWS spot: lowest over the region's zones) */
    CF_PRICE_ESTIMATED,  /* derived: AWS on-demand × (1 − Spot Advisor savings) */
} cf_price_kind;

/* One VM offer: an instance type in a region at a price. */
typedef struct {
    char cloud[8];                      /* aws | gcp | azure | lambda */
    char region[32];
    char instance_type[48];
    char gpu_model[32];                 /* key into the GPU table */
    int gpu_count;                      /* GPUs per VM (whole GPUs; fractional sizes are not in the catalog) */
    double gpu_memory_gib;              /* per GPU */
    int vcpus;
    double memory_gib;
    double network_gbps;                /* 0 = not recorded */
    double price_ondemand_usd_per_hr;   /* whole VM; 0 = not offered on demand (spot / flex-start only) */
    double price_spot_usd_per_hr;       /* whole VM; 0 = no spot offer known */
    int spot_price_estimated;           /* 1 when spot_kind is CF_PRICE_ESTIMATED */
    double interruptions_pct_per_month; /* spot interruption frequency; < 0 = unknown (the advisor's default applies) */
    int source_index;                   /* index into the catalog's sources */
    /* Provenance of each price and where the offer can be launched. */
    cf_price_kind ondemand_kind, spot_kind;          /* CF_PRICE_NONE exactly when the price is 0 */
    char ondemand_date[11], spot_date[11];           /* YYYY-MM-DD of the price; "" = not recorded */
    double spot_savings_pct;            /* estimated spot: the advisor savings % it used */
    int interruption_band;              /* AWS Spot Advisor band 0..4 behind the rate; -1 = none */
    char zones[128];                    /* space-separated zones it can be launched in; "" = not recorded */
    int spot_regional;                  /* observed spot: one price for the whole region (the AWS spot feed), not
                                         * the lowest of the zones' prices */
    int has_spot_source;                /* the spot price comes from another source than the row ... */
    int spot_source_index;              /* ... this one (index into the catalog's sources) */
} cf_vm;

/* One GPU model of the GPU table. */
typedef struct {
    char model[32];
    char architecture[32];
    char form_factor[64];               /* "SXM5", "PCIe workstation (Quadro RTX 6000)"; "" = not recorded */
    char memory_type[16];               /* "HBM3", "GDDR6"; "" = not recorded */
    double memory_gib;
    double memory_bandwidth_gbs;        /* GB/s */
    double fp32_tflops;                 /* 0 = not known */
    double tf32_tflops;                 /* dense tensor; 0 = none */
    double fp16_tflops;                 /* dense tensor (or packed FP16); 0 = none */
    double bf16_tflops;                 /* dense tensor; 0 = none */
    char interconnect[64];              /* intra-node: "PCIe", "NVLink 3.0 ..." */
    double interconnect_gbs_per_gpu;    /* GB/s per GPU, nominal */
} cf_gpu;

/* Peak dense TFLOP/s for a precision, falling back to FP32 when the GPU has
 * no tensor rate for it. 0 when unknown or gpu is NULL. */
double cf_gpu_peak_tflops(const cf_gpu *gpu, cf_precision precision);
/* The GPU named `model` (case-insensitive), or NULL. */
const cf_gpu *cf_gpu_find(const cf_gpu *gpus, size_t n_gpus, const char *model);
/* The GPU a name from outside the table means: what nvidia-smi,
 * torch.cuda.get_device_name(), rocm-smi/amd-smi or a measurements CSV
 * print ("NVIDIA H100 80GB HBM3", "Tesla V100-SXM2-32GB", "QuadroRTX6000",
 * "AMD Instinct MI300X OAM", "a100 40gb"); NULL when the table has no row
 * for that product. Rules, in order (common/gpu_resolve.c; docs/catalog.md
 * lists the spellings):
 *   1. a model of the table, ignoring case;
 *   2. NULL for a spelling the driver gives another product whose words
 *      match a row ("NVIDIA H100" is the 94 GB H100 SXM5);
 *   3. the row all of whose words are in the name (separators and case
 *      ignored, "RTX 6000" is the word RTX6000) while every other word of
 *      the name only describes that row: a maker or product line (NVIDIA,
 *      AMD, Tesla, Quadro, GeForce, Instinct, also glued on:
 *      "QuadroRTX6000"), its memory size ("80GB", "144G"), memory type,
 *      architecture or a word of its form factor ("SXM4", "PCIe", "OAM",
 *      "Server Edition"), or a word the driver adds to it ("480GB" of the
 *      GH200's LPDDR5X). The row with most words wins;
 *   4. a bare family name is the table's first row of that family ("A100"
 *      is A100-40GB, "V100S" is V100S-PCIE).
 * So "Tesla V100-SXM2-32GB" is V100-32GB, never V100; "NVIDIA H100 PCIe"
 * is H100-PCIE; "NVIDIA RTX 6000 Ada Generation", "NVIDIA H200 NVL",
 * "NVIDIA A100-PCIE-40GB" and "NVIDIA GH200 144G HBM3e" give NULL. */
const cf_gpu *cf_gpu_resolve(const cf_gpu *gpus, size_t n_gpus, const char *name);

/* ---- measured step times (docs/profiler.md) ----------------------------------- */

/* One row of a measurements CSV (the columns of the Pollux throughput file). */
typedef struct {
    char model[64];
    char gpu[32];
    char profile[32];
    char placement[64];      /* one digit per node: GPUs used on it; "" when unknown */
    int hw_gpus_per_node;    /* GPUs installed per node */
    int num_nodes;
    int num_gpus;
    int local_bsz;           /* per-GPU batch */
    double step_time_s;
    double sync_time_s;      /* < 0 when not recorded */
    int has_precision;       /* the optional precision column gave one */
    cf_precision precision;  /* the run's arithmetic when has_precision (else the spec's, or fp32) */
    long line;               /* line in the source file, for messages */
} cf_measurement;

typedef struct {
    cf_measurement *rows;
    size_t n_rows;
} cf_measurement_set;

/* ---- gradient noise ---------------------------------------------------------- */

/* The noise scale of the recipe run at a point of training. */
typedef struct {
    double progress_fraction;   /* fraction of training, 0..1 */
    double b_noise;             /* samples */
} cf_noise_point;

/* The noise scale measured after a number of training samples (a profile's
 * run covers an absolute number of samples, not a fraction of training). */
typedef struct {
    double samples_seen;
    double b_noise;
} cf_noise_sample;

/* ---- what is known about a GPU type before estimates ----------------------- */

/* profile.gpus.<GPU> of the spec: fitted numbers, or a measurements CSV
 * (a path resolved relative to the spec file's directory). */
typedef struct {
    char gpu[CF_GPU_NAME_MAX];          /* key, e.g. "T4" (a GPU table model) */
    char measurements_path[CF_PATH_MAX];/* "" unless given as a CSV path */
    int has_compute;                    /* compute_s given */
    double alpha_s;                     /* compute_s.alpha: fixed time per micro-batch, s */
    double beta_s;                      /* compute_s.beta: time per sample, s */
    int max_local_batch;                /* 0 = unknown */
    /* sync_s (all optional; 0 = not given) */
    double intra_node_gbps;             /* effective all-reduce bandwidth inside a node */
    double inter_node_gbps;             /* effective all-reduce bandwidth between nodes */
    double latency_s;                   /* fixed cost of one all-reduce */
    double overlap_gamma;               /* Pollux overlap exponent, 1..10 */
} cf_gpu_profile_given;

/* ---- a profile (cloudfit profile; stored in the database as JSON) ---------- */

#define CF_PROFILE_MAX_POINTS 32
#define CF_PROFILE_MAX_TRACE 64
#define CF_PROFILE_MAX_RUNS 16

typedef struct {
    char name[128];            /* "NVIDIA A100-SXM4-40GB", "cpu: AMD EPYC 7B13 (2 threads)" */
    double memory_gib;         /* 0 = unknown */
    int gpus;                  /* devices the run used (1 unless the script trains data-parallel) */
    int is_gpu;                /* 0 for a CPU run: its step times are not a GPU's throughput */
} cf_probe_device;

typedef struct {
    int local_batch;
    double step_time_s;        /* median of the timed steps */
    double min_s, max_s;       /* spread of the timed steps */
    int n_timed;
    double residual_s;         /* measured median − fitted α + β·m */
} cf_profile_point;

/* One run of a runner profile (`cloudfit profile --runner`): a
 * configuration of whole VMs, as a row of the measurements CSV. */
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
    char spec_key[65];         /* cf_spec_profile_key(): what the measurement depends on */
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
    cf_noise_sample noise_trace[CF_PROFILE_MAX_TRACE];
    int n_noise_trace;
    char noise_error[200];     /* why there is no noise scale, when has_noise == 0 */
    int noise_failed;          /* the noise run failed (noise_error says how) while the sweep
                                  succeeded: the sweep is kept, `profile --resume` re-runs it */

    /* How the probe trained, as it reported it ("" = not reported): the
     * arithmetic (fp32, tf32, fp16, bf16, amp; cf_precision_parse) and the
     * memory format of its activations (contiguous, channels_last). */
    char precision[8];
    char memory_format[16];

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

/* ---- runners: real training runs on a configuration (search, profile --runner) ---- */

/* One configuration the search may pick: a VM type (on-demand), a node
 * count and a per-GPU batch (no accumulation: a probe measures what runs). */
typedef struct {
    const cf_vm *vm;              /* catalog row it is priced from; NULL allowed (tests, --price) */
    char gpu[32];                 /* GPU model; the refit groups probes by it */
    int nodes, gpus_per_node, local_batch;
    double usd_per_node_hr;       /* on-demand price of one VM */
    double network_gbps;          /* nominal NIC of the VM; 0 = unknown */
} cf_search_candidate;

/* Runs `steps` training steps on one candidate and reports the steady
 * step time. Anything but CF_OK is a failed run (non-zero exit, malformed
 * output, timeout); cf_error_message() says why. The search retries a
 * failed run once, then marks the configuration failed and goes on. */
typedef struct {
    void *ctx;
    cf_status (*probe)(void *ctx, const cf_search_candidate *candidate, int steps, double *out_step_time_s);
} cf_search_runner;

/* ---- spot availability traces (profiler/spot_traces.c reads them) ---------- */

/* How many spot VMs were held at each tick of a trace (the shipped format
 * `t_s,nodes_available`, examples/spot-traces/), for one VM type or, for a
 * job that mixes two types, one count per type per tick. */
#define CF_SPOT_MAX_TYPES 2
typedef struct {
    int requested;                      /* nodes requested (index.csv, else the largest count) */
    /* From the index.csv beside the file when it lists it; "" / 0 = unknown. */
    char cloud[8], zone[32], region[32], instance_type[48], gpu[32], start_date[11];
    int gpus_per_vm;
} cf_spot_trace_vm;

typedef struct {
    char name[256];                     /* file name(s), for messages and reports */
    int n_types;                        /* 1, or 2 for a mixed job */
    cf_spot_trace_vm vm[CF_SPOT_MAX_TYPES];
    size_t n_ticks;
    double *dt_h;                       /* duration of each tick, hours */
    int *counts;                        /* n_ticks × n_types: VMs held during the tick */
} cf_spot_trace;

/* ---- what a real run measured (cloudfit record) ------------------------------ */

typedef struct {
    char cloud[16], instance_type[64], gpu[32];
    int gpus_per_node, nodes, local_batch, accumulation;
    double step_time_s;        /* NaN = not measured */
} cf_recorded_run;

/* ---- where a run happened ---------------------------------------------------- */

/* CI metadata of the run that made a recommendation (detected from the
 * environment, common/ci_env.c, docs/ci.md). "" = unknown / not in CI. */
typedef struct {
    char provider[32];         /* github-actions | gitlab-ci | jenkins | buildkite | circleci | ci | "" */
    char commit[64];
    char branch[256];
    char base_branch[256];     /* target branch of a pull/merge request, else the default branch if known */
    char pull_request[32];
    char run_id[64];
    char run_url[512];
} cf_ci_info;

/* ---- a recommendation as stored, and CI gates -------------------------------- */

/* One ranked configuration in the form the history stores it (rank 1 is
 * the chosen one): what a CI gate compares with (advisor/plan/gates.c) and a
 * history row holds (db/history.c). */
typedef struct {
    int rank;
    char cloud[16], region[48], instance_type[64], gpu[32];
    int gpus_per_node, nodes, local_batch, accumulation;
    long global_batch;
    double lr;
    int spot;
    double step_time_s, hours, total_usd;
    double usd_per_node_hour;
} cf_history_config;

/* One CI gate's outcome (docs/ci.md). value is NaN when there was nothing
 * to compare with (the gate then passes and `note` says why). */
typedef struct {
    char name[32];             /* max_cost_usd | max_hours | max_cost_increase_pct | max_cost_increase_usd |
                                  require_baseline */
    double limit;
    double value;
    int passed;
    char note[1200];
} cf_history_gate;

/* ---- data sets the models are scored on (cloudfit validate) ------------------ */

/* One row of a gradient-noise trace file (groundtruth/gns_traces). */
typedef struct {
    char model[64];
    int batch_size, m0, epoch;
    double progress;       /* cumulative progress in M0-iteration equivalents */
    double iteration;      /* cumulative optimizer steps of this run */
    double metric;
    double b_noise;        /* < 0 when blank */
    long line;
} cf_gns_row;

typedef struct {
    char model[64];
    int m0;
    int higher_is_better;
    char metric_name[64];
} cf_gns_model_info;

typedef struct {
    cf_gns_row *rows;          /* sorted by (model, batch, epoch) */
    size_t n_rows;
    cf_gns_model_info *models;
    size_t n_models;
} cf_gns_traces;

/* One published single-machine throughput (crossgpu/throughput.csv). */
typedef struct {
    char gpu[32];
    int gpu_count;
    char model[48];
    char precision[8];      /* fp32 | tf32 | fp16 | amp */
    char benchmark[8];      /* v0 | v1 | v2, from the notes */
    double batch_per_gpu;   /* 0 when not given */
    double throughput;      /* summed over gpu_count GPUs */
    int suspect;            /* notes carry a SUSPECT flag */
    long line;
} cf_crossgpu_row;

typedef struct {
    cf_crossgpu_row *rows;
    size_t n_rows;
} cf_crossgpu_set;

#endif
