/* Heterogeneous jobs (advisor/plan/hetero.c, docs/spot.md
 * "Mixed GPU types"): two GPU types in one data-parallel job. The per-
 * worker batch split in closed form from each type's compute model, the
 * iteration time with the all-reduce limited by the slowest link, and a
 * search over pairs of offers in one cloud region. Pure computation. */
#ifndef CLOUDFIT_ADVISOR_HETERO_H
#define CLOUDFIT_ADVISOR_HETERO_H
#include <stddef.h>
#include "cloudfit/advisor.h"
#include "cloudfit/status.h"

/* Splits a global batch M over n workers with compute times
 * t_i(b) = α_i + β_i·b so that iteration times are equal:
 *   T = (M + Σ α_i/β_i) / Σ 1/β_i,  b_i = (T − α_i)/β_i,
 * then clamped to [1, max_b[i]] (max_b NULL or ≤ 0 = no limit; a clamped
 * worker is fixed and the rest re-split), then rounded to integers that
 * sum to M (largest remainders, never over a limit). out_t (may be NULL)
 * gets the slowest worker's time after rounding. CF_ERR_INFEASIBLE when
 * M < n or M > Σ max_b. */
cf_status cf_hetero_split(const double *alpha, const double *beta, const int *max_b, int n, long global_batch,
                          int *out_b, double *out_t);

/* A two-type job: nodes[k] VMs of offer vm[k] (gpus[k] GPUs each). */
typedef struct {
    const cf_vm *vm[2];
    int nodes[2];
    int gpus_per_node[2];
    int accumulation;
    long global_batch;
    int batch[2];              /* per-worker batch of each type (the split; workers of one type get the same) */
    int batch_spread[2];       /* 1 when the integer rounding left ±1 between workers of a type */
    double compute_s[2];       /* per micro-batch at that batch */
    double sync_s;             /* all-reduce over every GPU, the slowest link */
    double step_time_s;
    double samples_per_s;
    double train_hours, hours, usd_per_hour, total_usd;
    cf_lr_choice lr;
    /* The best single type using the same VMs: only the type-0 VMs or only the
     * type-1 VMs (each with its own best batch), and the speed-up over it. */
    double single_hours[2];
    double speedup;            /* min(single_hours) / train_hours */
    /* The research baseline (cf_hetero_equal_batches): the same workers
     * and global batch with equal per-worker batches; 0 when none fits. */
    double equal_step_time_s;
    int equal_local_batch, equal_accumulation;
    double speedup_over_equal_batches; /* equal_step_time_s / step_time_s (= the training-time ratio) */
    /* The chosen single-type plan's hours (its p50 for spot) / this plan's
     * hours; set by cf_hetero_search. */
    double speedup_over_chosen;
    int feasible;              /* meets the deadline and budget */
} cf_hetero_plan;

/* Evaluates a two-type job at a global batch and accumulation; perf[k]
 * the type's parameters on vm[k]'s NIC (cf_gpu_perf_on_vm: the same
 * per-VM network model as single-type plans). */
cf_status cf_hetero_evaluate(const cf_advisor_input *in, const cf_perf_params *perf0, const cf_perf_params *perf1,
                             cf_hetero_plan *plan);

/* The fastest (global batch, accumulation) for the VMs of `plan` (the
 * cheapest too: their price per hour is fixed); 0 when none fits. */
int cf_hetero_plan_best_batch(const cf_advisor_input *in, const cf_perf_params *perf0, const cf_perf_params *perf1,
                              cf_hetero_plan *plan);

/* The same workers (plan's VMs, global batch) with equal per-worker
 * batches: per-micro-batch b = ⌈M/(K·s)⌉ at the smallest accumulation
 * s ≥ the plan's (within max_accumulation) at which b fits every type's
 * memory; its compute max_k(α_k + β_k·b) on the same per-type lines as
 * the split (whose balanced time is (M/s + Σα_i/β_i)/Σ(1/β_i)), the same
 * all-reduce. Sets the plan's equal_* fields and
 * speedup_over_equal_batches; CF_ERR_INFEASIBLE (no message) when no
 * accumulation fits. The plan must have been evaluated. */
cf_status cf_hetero_equal_batches(const cf_advisor_input *in, const cf_perf_params *perf0,
                                  const cf_perf_params *perf1, cf_hetero_plan *plan);

/* Why no mix was found. */
typedef enum {
    CF_HETERO_FOUND = 0,
    CF_HETERO_SPOT_ONLY,           /* --spot only: no preemption model of two VM types together */
    CF_HETERO_NO_ONDEMAND_PRICE,   /* the top plans' offers are sold as spot only */
    CF_HETERO_NO_PARTNER,          /* no other GPU type with a throughput model in their regions */
    CF_HETERO_NOTHING_FITS,        /* no global batch fits the pairs' memory within the limits */
    CF_HETERO_CONSTRAINTS,         /* mixes fit, none meets the deadline and budget */
    CF_HETERO_NOT_FASTER           /* mixes meet them, none beats the same VMs of one type */
} cf_hetero_why_not;

typedef struct {
    int have;
    cf_hetero_plan best;       /* by the objective among the feasible mixes */
    cf_perf_params best_perf[2]; /* its types' parameters on their VMs' NICs */
    size_t n_evaluated;        /* (global batch, accumulation) evaluations */
    size_t n_pairs;            /* offer pairs tried */
    size_t n_fitting;          /* node-count pairs with a global batch that fits */
    size_t n_feasible;         /* of those, meeting the deadline and budget */
    int n_spot_priced_on_demand; /* top plans bought as spot whose VMs were mixed on demand */
    int n_spot_only_offers;    /* top plans' offers without an on-demand price (not mixed) */
    cf_hetero_why_not why_not;
} cf_hetero_advice;

/* For each offer among the five best ranked configurations of `advice`
 * (a spot plan's VMs on demand, as a spot mix has no preemption model;
 * nothing under --spot only) and each other GPU type offered in the same
 * cloud region (its cheapest offer), tries node counts (up to max_nodes
 * together, within max_gpus) × global batch × accumulation, each type on
 * its own VM's network figures, and keeps the best mix by the objective
 * that meets the constraints and beats the best single-type plan of the
 * same VMs; then its equal-batch baseline and its speed-up over the
 * chosen plan. why_not says why when there is none. */
cf_status cf_hetero_search(const cf_advisor_input *in, const cf_advice *advice, cf_hetero_advice *out);

/* Progress and throughput at each availability state (n0, n1) of a two-type
 * job, relative to the plan on all its VMs (index n0 + (nodes0 + 1)·n1):
 * the split re-solved at each state with the global batch held (workers
 * take larger batches up to their limit; beyond that the batch shrinks and
 * the gain rule applies). For `cloudfit simulate` with two traces. */
cf_status cf_hetero_state_rates(const cf_advisor_input *in, const cf_perf_params *perf0, const cf_perf_params *perf1,
                                const cf_hetero_plan *plan, double *rate, double *samples);

#endif
