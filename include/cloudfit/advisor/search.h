/* Online black-box search (docs/search.md): a light
 * profile, then short probe runs where the analytic model's uncertainty can
 * still change the decision, a refit after each probe, a stopping rule, and
 * a measurement of the final pick before committing to it.
 *
 * Pure computation: the runner (which really runs the probes, or answers
 * them from a trace) is a struct of function pointers passed in, so the
 * advisor does no I/O. Deterministic for a fixed seed (the seed only drives
 * the random starts of the plain-BO baseline; the runner has its own). */
#ifndef CLOUDFIT_ADVISOR_SEARCH_H
#define CLOUDFIT_ADVISOR_SEARCH_H
#include <stddef.h>
#include "cloudfit/advisor.h"
#include "cloudfit/advisor/inputs.h"
#include "cloudfit/advisor/stateff.h"
#include "cloudfit/advisor/validate.h"
#include "cloudfit/common/progress.h"
#include "cloudfit/status.h"
#include "cloudfit/advisor/types.h"
#include "cloudfit/pricing/types.h"
#include "cloudfit/spec/types.h"

typedef enum {
    CF_SEARCH_CLOUDFIT,           /* model prior + error model, decision-aware probes (the default) */
    CF_SEARCH_MODEL_ONLY,         /* light profile, refit, pick from the model: no probes (baseline) */
    CF_SEARCH_PLAIN_BO            /* GP without the model, random starts, expected improvement (baseline) */
} cf_search_method;

typedef struct {
    const cf_job *job;            /* job size, gradient bytes, recipe */
    const cf_constraints *constraints; /* objective, deadline, budget, limits, startup */
    const cf_noise_model *noise;
    const cf_search_candidate *candidates;
    size_t n_candidates;
    /* Before each run: runs done, at most how many in all (the light
     * profiles planned + max_probes; the search may stop earlier), "runs",
     * and which run. NULL = none (cloudfit/common/progress.h). */
    cf_progress_count_fn progress;
    void *progress_ctx;
    /* Start values per GPU type (network, overlap, contention; compute when
     * a profile cannot be fitted). GPU types without an entry start from
     * defaults; candidates of a type whose profile failed are dropped. */
    const cf_gpu_perf *prior;
    size_t n_prior;
    cf_search_method method;
    double margin;                /* stop when nothing untried can beat the best by more (default 0.03) */
    int max_probes;               /* probes after the profile, the final measurement included (default 12) */
    int probe_steps;              /* steps per probe (default 50) */
    int profile_steps;            /* steps per profile run (default 20) */
    double noise_sd;              /* measurement noise, log sd (default 0.02) */
    double safety_sds;            /* deadline/budget margin in sds of the estimate (default 1.28: 90 % confidence) */
    double probe_startup_s;       /* paid per run and not progress, e.g. VM boot (default 0; at most
                                     CF_SEARCH_PROBE_STARTUP_MAX_S) */
    unsigned long seed;           /* random starts of the plain-BO baseline */
} cf_search_options;

/* The most start-up a run may be charged: a day (a VM's boot is minutes;
 * 1e300 s made every cost and share a 300-digit number). */
#define CF_SEARCH_PROBE_STARTUP_MAX_S 86400.0

void cf_search_options_init(cf_search_options *options);
/* The defaults for searching `job` under `limits` (the spec's search
 * section): the deadline and budget hold at its stated confidence (0.9
 * when none), as that quantile of the estimate's uncertainty. `noise` is
 * the noise model the inputs chose. */
void cf_search_options_for(cf_search_options *options, const cf_job *job, const cf_constraints *limits,
                           const cf_noise_model *noise);

typedef enum { CF_RUN_PROFILE, CF_RUN_PROBE } cf_search_run_kind;

/* One run through the runner (profile or probe), in order. */
typedef struct {
    size_t candidate;
    cf_search_run_kind kind;
    int steps;
    int attempts;                 /* 1, or 2 after a retry */
    int failed;                   /* both attempts failed: the configuration is out */
    char error[240];              /* the last failure's message ("" if none) */
    double measured_step_s;       /* NAN when failed */
    double predicted_step_s;      /* the search's estimate just before the run (NAN: none yet) */
    double predicted_sd;          /* its log sd */
    double cost_usd;              /* steps (and start-up) at the measured step time */
    double progress;              /* fraction of the job the run's steps did */
} cf_search_step;

typedef enum { CF_STOP_MARGIN, CF_STOP_MAX_PROBES, CF_STOP_EXHAUSTED, CF_STOP_NO_PROBES } cf_search_stop;

typedef struct {
    cf_search_step *runs;
    size_t n_runs, n_profile_runs, n_probes, n_failed;
    long chosen;                  /* candidate index; -1 = nothing feasible */
    int chosen_measured;          /* the pick was measured before committing */
    int chosen_safe;              /* meets deadline/budget with the safety margin */
    cf_search_stop stop;
    /* Per candidate, final estimates (NAN for failed ones). */
    double *est_step_s;
    double *est_sd;               /* log sd of the step-time estimate */
    unsigned char *failed;
    unsigned char *measured;
    cf_gpu_perf *fitted;          /* final model per GPU type */
    size_t n_fitted;
    /* Accounting under the search's own (measured) numbers. */
    double chosen_hours, chosen_usd;
    double profile_cost_usd, probe_cost_usd;
    double overhead_usd;          /* runs' cost beyond what the pick spends for the same progress */
} cf_search_result;

/* Runs the search. CF_ERR_INVALID for bad options or no candidates; a
 * failing runner is not an error (see cf_search_runner). When nothing is
 * feasible, result->chosen is -1 and the status CF_ERR_INFEASIBLE. */
cf_status cf_search_run(const cf_search_options *options, const cf_search_runner *runner, cf_search_result *result);
void cf_search_result_free(cf_search_result *result);

/* Scoring against known step times (the trace runner's oracle). */
typedef struct {
    long oracle;                  /* best candidate under the true times; -1 = none feasible */
    double oracle_hours, oracle_usd;
    double chosen_hours, chosen_usd;   /* the pick under the true times */
    double regret;                /* chosen / oracle − 1 in the objective (cost or time) */
    int miss;                     /* breaks the deadline or budget by more than 3 % */
    double over_deadline, over_budget; /* how far the pick breaks each under the true times (0: met; NAN: no pick) */
    double overhead_frac;         /* overhead / the pick's true job cost */
    double profile_frac;          /* profile runs' cost / the pick's true job cost */
    double fastest_hours, cheapest_usd;  /* over all candidates, no constraints */
} cf_search_score;

#define CF_SEARCH_MISS_TOLERANCE 0.03

cf_status cf_search_score_against(const cf_search_options *options, const double *true_step_s,
                                  const cf_search_result *result, cf_search_score *out);

/* When nothing met the limits: CF_ERR_INFEASIBLE with recommend's message
 * (cf_infeasible_error) about the closest candidates by the search's own
 * estimates (result->est_step_s) within the node, GPU and batch limits —
 * how far the fastest and the cheapest miss, at their points or at the
 * confidence, figures on the side of the limit they are on. */
cf_status cf_search_infeasible_error(const cf_search_options *options, const cf_search_result *result,
                                     const char *where);

/* The light profile of one GPU type (the search's first runs, and
 * `cloudfit profile --runner`): among the candidates of `gpu` on one node
 * that are not excluded (excluded may be NULL), three per-GPU batches on
 * one GPU and two on the fullest node — smallest, largest (and middle) —
 * each on the cheapest VM of that shape (then the lowest index). */
#define CF_SEARCH_PROFILE_MAX_RUNS 5

/* Steps of one probe run and of one light-profile run (`search
 * --probe-steps` sets both; `profile --runner`). */
#define CF_SEARCH_DEFAULT_PROBE_STEPS 50
#define CF_SEARCH_DEFAULT_PROFILE_STEPS 20
/* Per-GPU batches of the light profile on one GPU and on the fullest
 * node, and of the 2-node × 1-GPU probe (cf_search_spread picks them). */
#define CF_SEARCH_PROFILE_BATCHES_ONE 3
#define CF_SEARCH_PROFILE_BATCHES_FULL 2
#define CF_SEARCH_PROBE_BATCHES 2

/* Candidates for a runner that starts the catalog's VMs: the cheapest
 * region of each (cloud, instance type), node counts 1, 2, 4, … up to the
 * limits, and the per-GPU batches (local_batches, else 8 … 256 by powers of
 * two); a GPU model without a 1-GPU VM also gets one GPU of its VM (paid in
 * full) for the profile's single-GPU runs. *out is malloc'd. */
/* A runner that starts real VMs profiles every GPU type among its
 * candidates once: more than CF_SEARCH_MAX_PROFILED_GPU_TYPES is
 * CF_ERR_USAGE, with a hint to name the GPU types and clouds. */
#define CF_SEARCH_MAX_PROFILED_GPU_TYPES 4
cf_status cf_search_check_gpu_types(const cf_search_candidate *cands, size_t n);

cf_status cf_search_catalog_candidates(const cf_constraints *limits, const int *local_batches, int n_local_batches,
                                       const cf_vm *const *rows, size_t n_rows, cf_search_candidate **out,
                                       size_t *n_out);

/* The plan of a profile of one GPU type through a runner (`cloudfit profile
 * --runner`): the light profile's runs and the 2-node × 1-GPU probe. */
typedef struct {
    const char *gpu;                      /* the GPU type profiled */
    const char *instance_type;            /* multi-GPU runs only on this VM type; NULL = any */
    const cf_constraints *constraints;    /* the limits a probe must respect */
    int from_trace;                       /* the candidates are a trace's rows */
    int runner_multi_node;                /* the runner can start several nodes (exec: {nodes}) */
    /* The probe's shape: VMs and GPUs on each (0, 0: the 2-node × 1-GPU
     * probe; `profile --probe-nodes N --probe-gpus G`, e.g. the shape a
     * recommendation's next measurement names). */
    int probe_nodes, probe_gpus;
} cf_search_profile_request;

typedef struct {
    size_t light[CF_SEARCH_PROFILE_MAX_RUNS];
    size_t n_light;
    size_t probe[2];
    size_t n_probe;
    char probe_skipped_why[200];          /* "" when the probe can run */
    char probe_instead[256];              /* the shape run in place of a default 2 × 1 the trace lacks; "" */
} cf_search_profile_plan;

/* Plans the profile over *cands (indices into it). A runner that starts
 * VMs gets the 2 × 1 probe shapes appended to *cands (realloc'd; *n grows).
 * CF_ERR_INVALID when the GPU (or instance type) has no configuration. */
cf_status cf_search_plan_profile(const cf_search_profile_request *request, cf_search_candidate **cands, size_t *n,
                                 cf_search_profile_plan *out);

/* Start values per GPU type among the candidates (cf_search_options.prior):
 * the inputs' parameters when they have the type (spec profile, cached
 * profile, carry-over), else the defaults of the GPU table (cf_perf_defaults).
 * *out is malloc'd with one entry per distinct GPU type of the candidates. */
cf_status cf_search_prior(const cf_inputs *inputs, const cf_gpu *gpus, size_t n_gpus, const cf_search_candidate *cands,
                          size_t n, cf_gpu_perf **out, size_t *n_out);

/* The search's pick first, then the other configurations that meet the
 * constraints with the safety margin, by objective (at most `top`), and the
 * (hours, cost) front, as `recommend` configurations over the search's
 * estimates. */
cf_status cf_search_advice(const cf_search_options *o, const cf_search_result *r, const cf_noise_model *noise,
                           size_t top, cf_advice *out);
/* Spot plans over the search's estimates (advisor/search/search_spot.c,
 * docs/spot.md): a probe measures the step time, which does not depend on
 * how the VM is bought, so every candidate with an estimate is also a spot
 * plan on the same VMs at their spot price. The most promising ones get
 * the preemption model's Monte Carlo (p10/p50/p90, the deadline at the
 * stated confidence, the mixed plan), as in `recommend`. Fills
 * advice->best_ondemand (the search's pick) and best_spot; with `only`, or
 * with `allow` when the best spot plan beats the pick by the objective, the
 * spot plan becomes ranked[0] (the search's own pick follows it). */
cf_status cf_search_spot(const cf_search_options *o, const cf_search_result *r, const cf_noise_model *noise,
                         cf_spot_policy policy, cf_advice *advice);

/* What `search` reports beyond its runs, computed once by the library so
 * that its renderers compute nothing (cf_search_summarise). */
typedef struct {
    /* the pick (result->chosen >= 0): its 80 % intervals, as recommend
     * shows them (cf_config_intervals of cf_search_config) */
    double chosen_hours_p10, chosen_hours_p90, chosen_usd_p10, chosen_usd_p90;
    /* the spec's training.current among the candidates (cf_search_find_current):
     * its index (-1 = none), what it is or why it is missing, and its time
     * and cost at the search's estimate */
    long current;
    char current_note[200];
    double current_hours, current_usd;
    /* the probes' prediction errors before they ran (predicted / measured - 1) */
    cf_ape_stats prediction;
} cf_search_summary;

/* Fills `out` for a search's result (finished or stopped); CF_ERR_NOMEM only. */
cf_status cf_search_summarise(const cf_job *job, const cf_search_options *o, const cf_search_result *r,
                              cf_search_summary *out);

const char *cf_search_method_name(cf_search_method method);
const char *cf_search_stop_name(cf_search_stop stop);

#endif
