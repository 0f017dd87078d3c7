/* The advisor's front door: per-GPU-type performance parameters (measured, fitted,
 * carried over or estimated), then an enumeration over VM type × nodes ×
 * per-GPU batch × accumulation × spot/on-demand with constraints, a Pareto
 * front of (time, cost) and a pick by objective (docs/model.md "Time and cost", "Search").
 * Pure computation: no files, no network, no database. */
#ifndef CLOUDFIT_ADVISOR_H
#define CLOUDFIT_ADVISOR_H
#include <stddef.h>
#include "cloudfit/advisor/perf.h"
#include "cloudfit/advisor/spot_plan.h"
#include "cloudfit/advisor/stateff.h"
#include "cloudfit/status.h"
#include "cloudfit/common/shared_types.h"
#include "cloudfit/pricing/types.h"
#include "cloudfit/spec/types.h"

/* Performance parameters of one GPU type as the enumeration uses them. */
typedef struct {
    char gpu[CF_GPU_NAME_MAX];
    cf_perf_params params;
    double reference_network_gbps;  /* nominal NIC of the VM the network was fitted on; 0 = none */
    char carried_from[CF_GPU_NAME_MAX]; /* GPU type the compute profile was carried over from, "" if none */
    char profile_memory_format[20]; /* the memory format the profile (this type's, or the one carried from)
                                       ran in where the spec's model.memory_format names another; "" if none */
    char note[224];                 /* how the numbers were obtained, one line */
    char network_note[200];         /* how inter_gbps was measured (e.g. "measured probe: ..."); "" = see
                                       params.network_provenance */
} cf_gpu_perf;

/* Defaults when nothing was measured (docs/model.md); the network ones are
 * in advisor/perf.h. */
#define CF_DEFAULT_ROOFLINE_EFFICIENCY 0.35
#define CF_DEFAULT_SPOT_INTERRUPTIONS_PCT_PER_MONTH 15.0 /* shown for information only (docs/spot.md) */
#define CF_DEFAULT_CONFIDENCE 0.9

typedef struct {
    const cf_vm *vm;
    int spot;
    int nodes;
    int gpus_per_node;
    int local_batch;
    int accumulation;
    long global_batch;
    cf_lr_choice lr;
    double step_time_s;
    double step_sigma;            /* log sd of step_time_s below the point */
    double step_sigma_up;         /* and above it (≥ step_sigma: the all-reduce beyond its measured shape); the
                                     80 % interval is [×e^(−1.2816σ), ×e^(1.2816σ_up)] (cf_step_quantile) */
    double compute_s;             /* one micro-batch on a node of g GPUs (in-node sync included) */
    double sync_s;                /* raw inter-node all-reduce time (before overlap) */
    double samples_per_s;
    double samples_to_target;
    double steps;
    double stat_efficiency;       /* E0 / E(M) */
    double parallel_efficiency;   /* throughput / (K × single-GPU throughput at the same m) */
    double train_hours;           /* without startup and preemption */
    double hours;                 /* total wall time */
    double hours_p10, hours_p90;  /* its 80 % interval (spot: p10 and p90 of the plan's distribution) */
    double hours_at_confidence;   /* the quantile the deadline is held to (constraints.confidence) */
    double spot_factor;           /* hours / (start-up + train_hours); 1 for on-demand */
    double checkpoint_interval_hours; /* spot only */
    /* Spot only (docs/spot.md): hours, total_usd, their p10/p90 and the
     * figures at the confidence are quantiles of one distribution, the
     * Monte Carlo over the preemption model and the throughput
     * uncertainty (spot_est.spot, or spot_est.mixed when mixed: spot with
     * an on-demand fallback near the deadline). */
    cf_spot_estimate spot_est;
    int mixed;
    double usd_per_hour;          /* whole cluster */
    double total_usd;
    double total_usd_p10, total_usd_p90;
    double usd_at_confidence;     /* the quantile the budget is held to */
    cf_provenance prov_throughput, prov_noise, prov_network, prov_price;
    int network_measured_max_nodes; /* > 0: the configuration has more nodes than any measurement its network was
                                       fitted on (this many at most): the all-reduce's growth is extrapolated */
    /* Parts of step_sigma (and _up) a measurement would remove: the compute
     * carried over or estimated (profiling this GPU type), and the
     * inter-node all-reduce at this shape (running these VMs), each a log
     * sd; the rest is the profile's own scatter. */
    double step_sigma_compute;
    double step_sigma_network, step_sigma_network_up;
} cf_config;

/* The measurement worth buying (advisor/plan/next_measurement.c): what would
 * most reduce the risk of a wrong choice, and what it costs. */
typedef enum {
    CF_MEASURE_NONE = 0,       /* every source a measurement could remove is measured already */
    CF_MEASURE_PROFILE,        /* profile the GPU type on one VM (its compute was carried over or estimated) */
    CF_MEASURE_NETWORK,        /* run `nodes` VMs of the type (the all-reduce beyond its measured shape) */
} cf_measure_kind;

typedef enum {
    CF_MEASURE_FOR_CHOSEN = 0, /* narrows the chosen plan */
    CF_MEASURE_FOR_RUNNER_UP,  /* the ranking between the chosen plan and the runner-up depends on it */
    CF_MEASURE_FOR_HELD_BACK,  /* a better plan fails the confidence check only for this uncertainty */
} cf_measure_about;

typedef struct {
    cf_measure_kind kind;
    cf_measure_about about;
    char gpu[CF_GPU_NAME_MAX];
    /* the VM to run it on (the cheapest on demand of that shape) */
    char cloud[CF_CLOUD_NAME_MAX], region[CF_REGION_NAME_MAX], instance_type[CF_INSTANCE_TYPE_MAX];
    int nodes, gpus_per_node;
    /* network: the limits the plans were held to (search.max_nodes / max_gpus, or recommend's
     * --max-nodes / --max-gpus over them), which the probe's command passes on so that profile
     * allows the shape too */
    int max_nodes, max_gpus;
    /* profile: the VMs of the 2-node × 1-GPU probe `profile --runner` runs after the light profile, on
     * the same VM type (0: none, max_nodes 1) */
    int probe_nodes;
    /* what the printed command runs (either kind: the light profile on one VM, then the probe): */
    double est_minutes;        /* one start-up + the runs' steps at the model's own step times */
    double est_usd;            /* each run's minutes × its VMs' on-demand price, the start-up × the most VMs */
    /* The chosen plan's cost interval now (p10–p90) and as expected after
     * the measurement (the source it removes gone; equal when it
     * concerns another plan). */
    double usd_p10, usd_p90, usd_p10_after, usd_p90_after;
    /* The plan it concerns (the chosen one, the runner-up or the held-back
     * one) and its cost. */
    double plan_usd, plan_hours;
    int plan_nodes;
    char plan_instance_type[CF_INSTANCE_TYPE_MAX];
    /* P(the choice changes) once measured, under the present uncertainty. */
    double flip_probability;
    /* The measurement's value: the expected improvement of the choice made
     * after it over the chosen plan (cf_expected_improvement, the search's
     * probe criterion), a share of the chosen plan's objective. */
    double expected_gain;
    int could_change_choice;   /* the choice changes with probability ≥ 10 % */
    char reason[512];          /* one sentence with the numbers */
} cf_next_measurement;

typedef struct {
    const cf_job *job;
    const cf_constraints *constraints;
    const cf_vm *const *vms;      /* candidate rows (already filtered) */
    size_t n_vms;
    const cf_gpu_perf *perf;      /* one per GPU type appearing in vms */
    size_t n_perf;
    const cf_noise_model *noise;
    size_t top;                   /* alternatives to keep (ranked), e.g. 10 */
} cf_advisor_input;

/* What the advice shows beyond the ranking (cloudfit/advisor/explain.h). */
typedef struct cf_advice_explained cf_advice_explained;

typedef struct {
    cf_config *ranked;            /* best first; ranked[0] is the pick; deduplicated by (cloud, instance, spot) */
    size_t n_ranked;
    /* How many of `ranked` the launch specs draw fallbacks from (SkyPilot's
     * resources.ordered): a depth --top, a display option, does not change
     * (recommend sets it before cutting `ranked` to --top; 0 = n_ranked). */
    size_t n_ranked_launch;
    cf_config *pareto;            /* (hours, total_usd) front over all feasible configs, by hours */
    size_t n_pareto;
    size_t n_evaluated;           /* model evaluations (shape × nodes × batch × accumulation) */
    size_t n_candidates;          /* priced (VM × nodes × spot) points */
    size_t n_feasible;
    cf_config fastest;            /* fastest within all limits but deadline/budget (for messages) */
    cf_config cheapest;           /* cheapest likewise */
    cf_config cheapest_at_confidence; /* likewise, by its cost at the confidence the budget is held to */
    cf_config fastest_at_confidence;  /* likewise, by its hours at the confidence the deadline is held to */
    cf_config cheapest_in_deadline;   /* lowest cost at the confidence of those within the deadline there */
    int have_cheapest_in_deadline;
    int have_extremes;
    cf_config best_ondemand, best_spot; /* best feasible of each kind, side by side */
    int have_best_ondemand, have_best_spot;
    /* The best on-demand configuration by the objective, better than the
     * pick, whose point values meet the deadline and budget but whose
     * quantiles at the confidence do not: held back by its uncertainty. */
    cf_config held_back;
    int have_held_back;
    cf_next_measurement next;     /* kind CF_MEASURE_NONE when nothing is left to measure */
    size_t n_spot_simulated;      /* spot candidates given the Monte Carlo */
    cf_advice_explained *explained; /* owned; NULL until cf_advice_explain */
} cf_advice;

/* Runs the enumeration. CF_ERR_INFEASIBLE when no configuration meets the
 * deadline and budget; advice->fastest / cheapest are filled then, so the
 * caller can say how far off the constraints are. */
cf_status cf_advise(const cf_advisor_input *input, cf_advice *advice);
void cf_advice_free(cf_advice *advice);

/* Sets CF_ERR_INFEASIBLE saying how far the best configurations miss:
 * "WHERE: no configuration finishes within 24 h: the fastest, ... takes
 * 30.1 h", or only at the confidence (`fastest_at_confidence`, the
 * configuration of the fewest hours at the confidence: the one that comes
 * closest there), or stays within the budget (at its point, or with
 * `cheapest_at_confidence`, the configuration of the lowest cost at the
 * confidence, only at the confidence), or (each within its limit) meets
 * both together: then `cheapest_in_deadline`, the lowest cost at the
 * confidence of the configurations within the deadline there, says how far
 * it misses the budget (NULL: the limits alone). `qualifier` is appended to
 * the constraint (e.g. " with the safety margin"); NULL for none. */
cf_status cf_infeasible_error(const cf_constraints *c, const char *where, const cf_config *fastest,
                              const cf_config *fastest_at_confidence, const cf_config *cheapest,
                              const cf_config *cheapest_at_confidence, const cf_config *cheapest_in_deadline,
                              const char *qualifier);

#endif
