/* Runners (profiler/runner_trace.c, runner_exec.c, runner_profile.c): real
 * training runs on whole VMs for `cloudfit search` and `cloudfit profile
 * --runner`, each a cf_search_runner (struct of function pointers):
 *   trace:MEASUREMENTS.csv  answers a run with the measured step time of
 *                           that configuration × seeded noise (the oracle is
 *                           known: how the search is tested and benchmarked)
 *   exec:'COMMAND TEMPLATE' runs the command (argv, no shell) per run and
 *                           reads the JSON-lines protocol of
 *                           docs/exec-protocol.md through the exec backend */
#ifndef CLOUDFIT_PROFILER_RUNNERS_H
#define CLOUDFIT_PROFILER_RUNNERS_H
#include <stddef.h>
#include "cloudfit/profiler.h"
#include "cloudfit/status.h"
#include "cloudfit/advisor/types.h"
#include "cloudfit/common/shared_types.h"
#include "cloudfit/pricing/types.h"
#include "cloudfit/profiler/types.h"

/* ---- trace runner ------------------------------------------------------------ */

/* --price GPU=USD_PER_GPU_HR: a price for a GPU the catalog does not sell. */
typedef struct {
    char gpu[CF_GPU_NAME_MAX];
    double usd_per_gpu_hr;
} cf_search_price;
/* Prices are below this many US dollars per GPU-hour (as a price override's per VM-hour). */
#define CF_SEARCH_PRICE_MAX 1e5
/* "GPU=USD_PER_GPU_HR" (T4=0.53): a GPU name and a decimal price above 0 and
 * below CF_SEARCH_PRICE_MAX. CF_ERR_INVALID saying what was expected. */
cf_status cf_search_price_parse(const char *text, cf_search_price *out);

typedef struct cf_trace_runner cf_trace_runner;
struct cf_trace_runner {
    char path[1024];
    char model[64];
    cf_search_candidate *cands;   /* one per symmetric (GPU, nodes, GPUs per node, batch) of the model */
    double *true_step_s;          /* per candidate: median of the file's rows */
    size_t n;
    cf_vm *synthetic;             /* VM rows for --price candidates (owned) */
    size_t n_synthetic;
    size_t n_rows_used, n_unpriced, n_asymmetric;
    size_t n_filtered;            /* configurations the GPU, cloud or region filter left out */
    cf_measurement_set rows;      /* the model's rows (the hardware they ran on) */
    double noise_sd;
    void *rng;                    /* gsl_rng */
};

typedef struct {
    const char *path;             /* the measurements CSV */
    const char *model;            /* rows whose model column is this */
    const cf_vm *vms;             /* offers that price a configuration: same GPU and count, */
    size_t n_vms;                 /*   of `clouds` when given, the row's profile cloud first */
    const char (*clouds)[CF_CLOUD_NAME_MAX];
    int n_clouds;
    const char (*regions)[CF_REGION_NAME_MAX]; /* only offers in these regions (none: any); a --price VM has none */
    int n_regions;
    const char (*gpus)[CF_GPU_NAME_MAX];       /* only rows of these GPUs (none: any) */
    int n_gpus;
    const cf_search_price *prices;/* --price entries: they win over the catalog */
    size_t n_prices;
    double noise_sd;              /* log sd of the multiplicative noise on answers */
    unsigned long seed;
    double nic_gbps;              /* > 0: the NIC of the cluster the trace was measured on, for every
                                     configuration (else the pricing VM's) */
    const cf_gpu *gpu_table;      /* the GPU table the gpu column and --price names are read in
                                     (cf_gpu_model_name: "Tesla T4" is T4); NULL: compared as written */
    size_t n_gpu_table;
} cf_trace_runner_config;

/* The NIC a trace may say it was measured on (--trace-nic-gbps), in Gbit/s:
 * 1e-300 predicted a step of 4.7e-21 s; the top is the spec's
 * sync_s.inter_node_gbps bound. */
#define CF_TRACE_NIC_GBPS_MIN 0.1
#define CF_TRACE_NIC_GBPS_MAX 1e6

cf_status cf_trace_runner_open(const cf_trace_runner_config *config, cf_trace_runner *out);
cf_search_runner cf_trace_runner_iface(cf_trace_runner *t);
void cf_trace_runner_close(cf_trace_runner *t);
/* The hardware a trace row of this shape ran on: the GPUs per VM of the
 * first matching row (0 when none), and its cluster (the `profile` column,
 * "" when the file has none) in *cloud when cloud is not NULL. A 2 × 1
 * probe measured on 4-GPU VMs ran over those VMs' NIC. */
int cf_trace_runner_hw_gpus(const cf_trace_runner *t, const char *gpu, int nodes, int gpus_per_node,
                            int local_batch, const char **cloud);

/* ---- exec runner --------------------------------------------------------------- */

#define CF_EXEC_MAX_WORDS 64

typedef struct {
    char *words[CF_EXEC_MAX_WORDS];   /* the template split into argv words (owned) */
    int n_words;
    char label[160];
    double timeout_s;
    unsigned long seed;
    int warmup_steps;
    size_t n_runs;
    const cf_gpu *gpus;               /* the GPU table a 'device' event's name is resolved in */
    size_t n_gpus;                    /*   (NULL: the name is not checked); not owned */
    char precision[8];                /* the last good run's 'device' event said (""; not said) */
    char memory_format[16];
} cf_exec_runner;

/* Splits and checks the template (placeholders: {cloud} {region}
 * {instance_type} {gpu} {nodes} {gpus_per_node} {local_batch} {steps});
 * CF_ERR_USAGE for an empty or malformed template or an unknown placeholder.
 * With a GPU table set (gpus, n_gpus) after opening, a run whose 'device'
 * event names another GPU of the table than the configuration's
 * (cf_gpu_resolve; a family name such as "A100" stands for each of its
 * rows) fails: its step time is another GPU's throughput. A name the
 * table does not know is taken on trust. So does a run whose 'device'
 * event gives a "gpus" (the world size) other than nodes × gpus_per_node;
 * one that leaves "gpus" out is taken on trust. */
cf_status cf_exec_runner_open(const char *template_text, double timeout_s, unsigned long seed, cf_exec_runner *out);
cf_search_runner cf_exec_runner_iface(cf_exec_runner *e);
void cf_exec_runner_close(cf_exec_runner *e);
/* 1 when the template can start several nodes (it passes {nodes}). */
int cf_exec_runner_multi_node(const cf_exec_runner *e);

/* ---- a profile through a runner --------------------------------------------------- */

typedef struct {
    const cf_search_candidate *light;   /* the light profile's runs (at least 2 on one GPU) */
    size_t n_light;
    const cf_search_candidate *probe;   /* the 2-node × 1-GPU probe's runs (0 to 2) */
    size_t n_probe;
    const char *probe_skipped_why;      /* when no probe can run; NULL otherwise */
    int profile_steps, probe_steps, warmup_steps;
    const char *spec_name, *spec_key;
    const char *backend;                /* "trace" or "runner" */
    const cf_gpu *gpu;                  /* the GPU type profiled */
    const char *runner_text;            /* the --runner text, for the record */
    cf_profile_progress_fn progress;    /* per run; may be NULL */
    void *progress_ctx;
} cf_runner_profile_plan;

/* Runs the plan: each run retried once; a failed light-profile run fails
 * the whole profile (CF_ERR_UNAVAILABLE, nothing returned), a failed probe
 * only marks the probe failed (probe_status, probe_note); a stop signal in
 * any run returns nothing (CF_ERR_INTERRUPTED). Fills runs[],
 * points[] (the 1-GPU runs), the t_c(m) fit and the device. */
cf_status cf_profile_through_runner(const cf_runner_profile_plan *plan, const cf_search_runner *runner,
                                    cf_profile *out);

#endif
