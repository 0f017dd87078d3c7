/* What was measured (docs/architecture.md): step times, a profile, spot
 * availability traces and the data sets `validate` scores the models on,
 * as profiler/ fills them (it reads every file of them) and the other
 * modules read them. Any module may include this header (the layout rule
 * for `<module>/types.h`). */
#ifndef CLOUDFIT_PROFILER_TYPES_H
#define CLOUDFIT_PROFILER_TYPES_H
#include <stddef.h>
#include "cloudfit/common/shared_types.h"

/* ---- measured step times (docs/profiler.md) ----------------------------------- */

/* One row of a measurements CSV (the columns of the Pollux throughput file). */
typedef struct {
    char model[CF_SPEC_NAME_MAX];  /* a spec's name fits (profile --csv writes it); longer is refused */
    char gpu[CF_GPU_NAME_MAX];
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

/* The noise scale measured after a number of training samples (a profile's
 * run covers an absolute number of samples, not a fraction of training). */
typedef struct {
    double samples_seen;
    double b_noise;
} cf_noise_sample;

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
    char cloud[CF_CLOUD_NAME_MAX]; /* of the VM; "" when the runner has no VM */
    char instance_type[CF_INSTANCE_TYPE_MAX]; /* "" when the runner has no VM */
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

/* ---- spot availability traces (profiler/spot_traces.c reads them) ---------- */

/* How many spot VMs were held at each tick of a trace (the shipped format
 * `t_s,nodes_available`, examples/spot-traces/), for one VM type or, for a
 * job that mixes two types, one count per type per tick. */
#define CF_SPOT_MAX_TYPES 2
typedef struct {
    int requested;                      /* nodes requested (index.csv, else the largest count) */
    /* From the index.csv beside the file when it lists it; "" / 0 = unknown. */
    char cloud[CF_CLOUD_NAME_MAX], zone[CF_ZONE_NAME_MAX], region[CF_REGION_NAME_MAX];
    char instance_type[CF_INSTANCE_TYPE_MAX], gpu[CF_GPU_NAME_MAX], start_date[CF_DATE_MAX];
    int gpus_per_vm;
    char index_row[CF_PATH_MAX + 32];   /* "DIR/index.csv:LINE" of the row that says so, for messages; "" */
} cf_spot_trace_vm;

typedef struct {
    char name[256];                     /* file name(s), for messages and reports */
    int n_types;                        /* 1, or 2 for a mixed job */
    cf_spot_trace_vm vm[CF_SPOT_MAX_TYPES];
    size_t n_ticks;
    double *dt_h;                       /* duration of each tick, hours */
    int *counts;                        /* n_ticks × n_types: VMs held during the tick */
} cf_spot_trace;

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
    long line;             /* in the models file */
} cf_gns_model_info;

typedef struct {
    cf_gns_row *rows;          /* sorted by (model, batch, epoch) */
    size_t n_rows;
    cf_gns_model_info *models; /* each model once */
    size_t n_models;
    char *traces_name, *models_name; /* the two files, for messages (malloc'd) */
    /* rows of models the models file does not list: left out (a models file
     * may name a subset of the traces' models) and said, with the first */
    size_t n_unlisted_rows;
    char first_unlisted[64];
    long first_unlisted_line;
} cf_gns_traces;

/* One published single-machine throughput (crossgpu/throughput.csv). */
typedef struct {
    char gpu[CF_GPU_NAME_MAX];
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
