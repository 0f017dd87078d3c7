/* The job spec (model.json, DESIGN.md §4.1) as a validated plain struct.
 *
 * Parsing is strict: an unknown key, a wrong type or an out-of-range value is
 * CF_ERR_INVALID with a message that names the file and the key path, e.g.
 *   model.json: training.batch: expected a positive integer, got -1
 * and usually a hint (cf_error_hint_text()). */
#ifndef CLOUDFIT_SPEC_H
#define CLOUDFIT_SPEC_H
#include <stddef.h>
#include "cloudfit/status.h"
#include "cloudfit/types.h"

#define CF_SPEC_NAME_MAX 65      /* [A-Za-z0-9._-]{1,64} + NUL */
#define CF_GPU_NAME_MAX 32
#define CF_PATH_MAX 1024
#define CF_SPEC_MAX_GPUS 32
#define CF_SPEC_MAX_LIST 16
#define CF_SPEC_MAX_TRACE 256
#define CF_SPEC_MAX_ARGV 64
#define CF_SPEC_MAX_BATCHES 32

typedef struct {
    double progress;   /* fraction of training, 0..1 */
    double b_noise;    /* samples */
} cf_noise_point;

/* Inline profile of one GPU type: profile.gpus.<GPU>. Either fitted numbers
 * (an object) or a measurements CSV (a string path, resolved relative to
 * the spec file's directory). */
typedef struct {
    char gpu[CF_GPU_NAME_MAX];          /* key, e.g. "T4" (a gpus.csv model) */
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
} cf_spec_gpu_profile;

typedef struct {
    char name[CF_SPEC_NAME_MAX];
    char path[CF_PATH_MAX];             /* file it was read from ("" for text) */
    char hash[65];                      /* SHA-256 hex of the canonical (unformatted) JSON */
    char *canonical_json;               /* that canonical JSON, owned (freed by cf_spec_free) */

    /* model */
    double parameters;                  /* required unless architecture gives it */
    int gradient_bytes;                 /* default 4 */
    cf_precision precision;             /* default: fp16 when gradient_bytes == 2, else fp32 */
    double flops_per_sample;            /* 0 = unknown */
    double memory_per_sample_mib;       /* 0 = unknown */
    char architecture_type[16];         /* "" | "mlp" | "cnn" | "decoder" */
    int mlp_layers[CF_SPEC_MAX_LIST];   /* architecture.layers for "mlp": widths incl. input and output */
    int n_mlp_layers;
    char activation[8];                 /* "relu" | "gelu"; default "relu" */

    /* data */
    double samples_per_epoch;           /* data.samples, required */
    char data_source[16];               /* "synthetic" (default) | "npy" | "tokens" */
    char npy_x[CF_PATH_MAX], npy_y[CF_PATH_MAX], tokens_path[CF_PATH_MAX];

    /* training */
    double epochs;                      /* exactly one of epochs / samples */
    double total_samples;               /* = epochs * samples_per_epoch when epochs given */
    int batch;                          /* M0 */
    double lr;
    cf_optimizer optimizer;             /* default sgd */
    cf_lr_rule lr_rule;                 /* default auto */
    int has_current;
    char current_gpu[CF_GPU_NAME_MAX];
    int current_gpus_per_node, current_nodes;

    /* profile */
    int has_noise_scale;
    double noise_scale;                 /* constant B_noise (when n_noise_trace == 0) */
    cf_noise_point noise_trace[CF_SPEC_MAX_TRACE];
    int n_noise_trace;                  /* sorted by progress */
    cf_spec_gpu_profile gpus[CF_SPEC_MAX_GPUS];
    int n_gpus;
    char backend[8];                    /* "" | "cpu" | "cuda" | "exec" */
    char *command[CF_SPEC_MAX_ARGV];    /* argv for the exec backend, NULL-terminated, owned */
    int n_command;
    int local_batches[CF_SPEC_MAX_BATCHES];
    int n_local_batches;
    int steps;                          /* default 30 */

    /* search */
    cf_objective objective;             /* default cost */
    double deadline_hours;              /* 0 = none */
    double budget_usd;                  /* 0 = none */
    char clouds[CF_SPEC_MAX_LIST][16];
    int n_clouds;                       /* 0 = all */
    char regions[CF_SPEC_MAX_LIST][32];
    int n_regions;                      /* 0 = all */
    char search_gpus[CF_SPEC_MAX_GPUS][CF_GPU_NAME_MAX];
    int n_search_gpus;                  /* 0 = all */
    int max_gpus;                       /* default 64 */
    int max_nodes;                      /* default 16 */
    int max_accumulation;               /* default 8 */
    int max_global_batch;               /* default 64 * batch */
    cf_spot_policy spot;                /* default never */
    double startup_minutes;             /* default 10: provisioning, image pull, data staging */
    double checkpoint_minutes;          /* default 1: time to write one checkpoint */
} cf_spec;

/* Parses and validates JSON text. `path` names the source in messages and
 * is the base for relative paths inside the spec (may be NULL: "<spec>"). */
cf_status cf_spec_parse(const char *json_text, size_t len, const char *path, cf_spec *out);
/* Reads and parses a file. */
cf_status cf_spec_load_file(const char *path, cf_spec *out);
/* Frees owned members (command argv); the struct itself is the caller's. */
void cf_spec_free(cf_spec *spec);

#endif
