/* The job, its constraints and the probe settings as spec/ reads them from
 * model.json (docs/architecture.md): plain structs that spec/ fills and
 * the other modules read. Any module may include this header (the layout
 * rule for `<module>/types.h`); the name look-ups are in common/types.c. */
#ifndef CLOUDFIT_SPEC_TYPES_H
#define CLOUDFIT_SPEC_TYPES_H
#include "cloudfit/common/shared_types.h"

/* The largest node count considered when the spec's search.max_nodes is not set. */
#define CF_MAX_NODES_DEFAULT 16
/* The most VMs of one type a configuration holds: the enumeration's node
 * range stops there, whatever max_nodes says (`simulate --nodes`, a
 * trace's count). */
#define CF_ADVISE_MAX_NODES 4096
/* ... and of GPUs when search.max_gpus is not set. */
#define CF_MAX_GPUS_DEFAULT 64

typedef enum { CF_OPT_SGD, CF_OPT_MOMENTUM, CF_OPT_ADAM, CF_OPT_ADAMW, CF_OPT_LAMB } cf_optimizer;
typedef enum { CF_LR_AUTO, CF_LR_GAIN, CF_LR_LINEAR, CF_LR_SQRT, CF_LR_NONE } cf_lr_rule;
typedef enum { CF_OBJ_COST, CF_OBJ_TIME, CF_OBJ_BALANCED } cf_objective;
typedef enum { CF_SPOT_NEVER, CF_SPOT_ALLOW, CF_SPOT_ONLY } cf_spot_policy;

const char *cf_optimizer_name(cf_optimizer v);
const char *cf_lr_rule_name(cf_lr_rule v);
const char *cf_objective_name(cf_objective v);
const char *cf_spot_policy_name(cf_spot_policy v);

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
    char memory_format[20];             /* "" (not said) | "contiguous" | "channels_last" | "channels_last_3d" */
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
    char clouds[CF_SPEC_MAX_LIST][CF_CLOUD_NAME_MAX];
    int n_clouds;                       /* 0 = all */
    char regions[CF_SPEC_MAX_LIST][CF_REGION_NAME_MAX];
    int n_regions;                      /* 0 = all */
    char gpus[CF_SPEC_MAX_GPUS][CF_GPU_NAME_MAX];
    int n_gpus;                         /* 0 = all */
    int max_gpus;                       /* default CF_MAX_GPUS_DEFAULT */
    int max_nodes;                      /* default CF_MAX_NODES_DEFAULT */
    int min_nodes;                      /* 0 or 1 = any; not a spec key (cloudfit simulate plans exactly N) */
    int max_accumulation;               /* default 8 */
    int max_global_batch;               /* default 64 × batch */
    cf_spot_policy spot;                /* default never */
    int spot_given;                     /* search.spot (or --spot) was said, not the default */
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
/* ---- gradient noise ---------------------------------------------------------- */

/* The noise scale of the recipe run at a point of training. */
typedef struct {
    double progress_fraction;   /* fraction of training, 0..1 */
    double b_noise;             /* samples */
} cf_noise_point;

/* ---- what is known about a GPU type before estimates ----------------------- */

/* profile.gpus.<GPU> of the spec: fitted numbers, or a measurements CSV
 * (a path resolved relative to the spec file's directory). */
typedef struct {
    char gpu[CF_GPU_NAME_MAX];          /* key, e.g. "T4": a GPU table model or a tool's spelling of one ("Tesla T4") */
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

#endif
