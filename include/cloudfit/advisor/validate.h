/* How well the models predict measurements (`cloudfit validate`): step
 * times from a measurements CSV, and iterations-to-target from gradient-
 * noise traces. Pure computation over plain structs (advisor/). */
#ifndef CLOUDFIT_ADVISOR_VALIDATE_H
#define CLOUDFIT_ADVISOR_VALIDATE_H
#include <stddef.h>
#include "cloudfit/advisor/perf.h"
#include "cloudfit/status.h"
#include "cloudfit/common/shared_types.h"
#include "cloudfit/pricing/types.h"
#include "cloudfit/profiler/types.h"

/* Absolute percentage errors summarised (fractions, not percent). */
typedef struct {
    size_t n;
    double median_ape, p90_ape, max_ape;
    /* share of the predictions whose 80 % interval holds the measurement;
     * < 0 when the predictions have no interval */
    double interval_coverage;
} cf_ape_stats;

#define CF_VALIDATE_MAX_NODE_BUCKETS 12

typedef struct {
    int train_max_nodes;                 /* rows with num_nodes <= this are fitted (default 1) */
    int with_2node_probe;                /* also fit placement "11" (2 nodes × 1 GPU) */
    /* Fit only what the search's light profile runs (cf_search_spread):
     * one node at 1 GPU (smallest, largest, middle batch) and at the
     * group's largest GPU count (smallest, largest); with with_2node_probe
     * the 2-node × 1-GPU rows at the smallest and largest batch. Every
     * other row is scored, single-node ones included (the batch
     * interpolation between profiled batches). Overrides train_max_nodes. */
    int light_profile;
    const char *const *train_gpus;       /* when given: fit these GPU types, predict the others by carry-over */
    size_t n_train_gpus;
    /* Fit every row of the group, but still score only the rows the
     * training subset leaves out: the model's own fit error on them, a floor
     * for its prediction error there (not a prediction). */
    int fit_all_rows;
    /* The model's global constants; NULL = the shipped ones
     * (cf_perf_constants_default). bench/accuracy.sh passes those chosen on
     * the other cluster. */
    const cf_perf_constants *constants;
    /* When not NULL: one entry per measurement row (the caller allocates
     * n_rows), filled for every scored row (`scored` 1) with the point
     * prediction and its 80 % interval (`validate --rows`). */
    struct cf_validate_row_prediction *per_row;
} cf_validate_options;

/* One scored row (cf_validate_options.per_row). */
typedef struct cf_validate_row_prediction {
    int scored;
    double predicted_s, p10_s, p90_s;   /* point and 80 % interval of the step time */
    double sigma;                       /* log sd of the interval */
    int gpus_per_node;                  /* as the model read the row (the busiest node of an uneven placement) */
    double network_share;               /* visible inter-node time / step (0 on one node) */
    const char *carried_from;           /* GPU the group was carried from, NULL when fitted */
} cf_validate_row_prediction;

/* One (model, gpu, profile, precision) group. The caller fills the inputs (which need
 * the catalog and model sizes), cf_validate_steps fills the results. */
typedef struct {
    char model[CF_SPEC_NAME_MAX], gpu[CF_GPU_NAME_MAX], profile[32];
    int has_precision;                   /* the rows' precision column (part of the group's key) */
    cf_precision precision;              /* fp32 when the rows do not say */
    /* The group as people read it: "model/gpu/profile", then " fp16" when
     * the rows have a precision column, so that groups apart only by it are
     * told apart (cf_validate_find_groups). Raw names: escape to print. */
    char label[176];
    /* inputs */
    double gradient_bytes;               /* parameters × bytes per gradient element */
    double nominal_inter_gbps;           /* VM NIC for (gpu, GPUs per node); 0 = unknown */
    const cf_gpu *gpu_info;              /* GPU table row, NULL when unknown */
    const cf_vm *network_vm;             /* the offer whose NIC nominal_inter_gbps is; NULL when none */
    /* The slowest and fastest NIC of the catalog VMs the group may have
     * run on (its GPU and GPUs per VM; its campaign's cloud where that has
     * one): nominal_inter_gbps is the slowest; a network fitted on the
     * group's rows is bounded by the fastest, a default one's interval
     * spans both. Equal when one NIC (or --inter-node-gbps), 0 when none. */
    double nic_span_gbps[2];
    double given_inter_gbps;             /* > 0: the caller's figure for every group (--inter-node-gbps) */
    /* The VM size (GPUs per VM) whose NIC network_vm is: the group's
     * multi-node rows' (they crossed it), else its first row's; hw_line is
     * that row's line. When the multi-node rows ran on VMs of two sizes,
     * hw_other and hw_other_line are the first row of another size (else
     * 0): the group mixes NICs and the caller says so. */
    int hw_gpus_per_node, hw_other;
    long hw_line, hw_other_line;
    int skipped;                         /* 1: not validated (message says why; e.g. no parameter count) */
    /* results */
    size_t n_fit, n_pred;
    cf_perf_params params;               /* fitted (or carried-over) model */
    cf_perf_fit_report fit;              /* what the fit used (not for carried-over groups) */
    char carried_from[CF_GPU_NAME_MAX];  /* "" unless predicted from another GPU type */
    double inter_gbps;                   /* the inter-node all-reduce rate the model used: fitted, else the NIC's default */
    char network_source[512];            /* where that rate came from, for people */
    double interval_span_gbps[2];        /* the NICs its default network's 80 % interval spans; {0, 0}: none */
    cf_ape_stats all;
    int bucket_nodes[CF_VALIDATE_MAX_NODE_BUCKETS];   /* node count of each bucket (last: all larger) */
    cf_ape_stats by_nodes[CF_VALIDATE_MAX_NODE_BUCKETS];
    int n_buckets;
    int failed;                          /* 1 when the group could not be fitted */
    char message[200];                   /* why it failed or was skipped */
    char hint[120];                      /* what to do about it; "" = nothing to add */
} cf_validate_group;

/* What the groups' inputs come from. */
typedef struct {
    const char *name;                    /* model name as in the measurements */
    double parameters;
} cf_model_param;

typedef struct {
    const cf_gpu *gpus;                  /* GPU table: names resolved with cf_gpu_resolve */
    size_t n_gpus;
    const cf_vm *vms;                    /* offers: the NIC a measured (GPU, GPUs per node) ran on */
    size_t n_vms;
    const cf_model_param *params;        /* parameter counts given by the user (--params); they win over */
    size_t n_params;                     /*   the built-in table (advisor/model/model_sizes.h) */
    double inter_node_gbps;              /* > 0: the nominal NIC of every group (--inter-node-gbps) */
} cf_validate_context;

/* Fills each group's inputs: the gradient bytes (the caller's parameter
 * count, else the built-in table; a model neither knows is `skipped` with
 * a message naming --params), the GPU table row, and the nominal NIC (the
 * caller's figure, else the offer of the campaign's cloud with the
 * smallest NIC for the group's VM size, hw_gpus_per_node, else unknown).
 * A caller's name matches a model as the built-in table's do (ignoring
 * case and - _ . and spaces); of several that match, the last wins. */
void cf_validate_prepare(const cf_measurement *rows, size_t n_rows, const cf_validate_context *ctx,
                         cf_validate_group *groups, size_t n_groups);

/* Distinct (model, gpu, profile, precision) groups in row order; *out is malloc'd. */
cf_status cf_validate_find_groups(const cf_measurement *rows, size_t n_rows, cf_validate_group **out,
                                  size_t *n_out);
/* Fits each group on its training subset and scores the other rows;
 * `overall` gets the errors of every predicted row of every group.
 * `spec_for_carry` gives precision and FLOPs for carrying a fit across GPU
 * types (may be NULL: bandwidth ratio only). */
cf_status cf_validate_steps(const cf_measurement *rows, size_t n_rows, const cf_validate_options *options,
                            cf_validate_group *groups, size_t n_groups, cf_ape_stats *overall);
/* When no row was scored (overall.n == 0): CF_ERR_INVALID saying why —
 * the first group skipped or not fitted, with its message and hint, else
 * every row being in the training subset — for the file `path`. */
cf_status cf_validate_nothing_predicted(const char *path, const cf_validate_options *options,
                                        const cf_validate_group *groups, size_t n_groups);

/* Iterations to the target metric, per (model, batch). */
typedef struct {
    char model[64];
    int batch, m0;
    double target;
    double measured_iterations, predicted_iterations;
    double error;                        /* predicted / measured − 1 */
} cf_gns_prediction;

typedef struct {
    double train_epochs;                 /* use only the first K epochs of the M0 run; 0 = all */
} cf_gns_validate_options;

/* Predicts, from the M0 run only, every larger batch's iterations to the
 * target and compares with the measured ones. *out is malloc'd. */
cf_status cf_validate_gns(const cf_gns_traces *traces, const cf_gns_validate_options *options,
                          cf_gns_prediction **out, size_t *n_out, cf_ape_stats *overall);

#endif
