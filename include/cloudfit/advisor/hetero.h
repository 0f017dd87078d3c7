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
    /* The model's uncertainty, as a single-type plan's: the larger log sd
     * of the two types' step at their batches (the step is the slower
     * type's), each side; the 80 % interval of the hours and the hours and
     * cost at the constraints' confidence. */
    double step_sigma, step_sigma_up;
    double hours_p10, hours_p90, hours_at_confidence, usd_at_confidence;
    int feasible;              /* meets the deadline and budget at the confidence, as single-type plans do */
} cf_hetero_plan;

/* Why no mix was found. */
typedef enum {
    CF_HETERO_FOUND = 0,
    CF_HETERO_SPOT_ONLY,           /* --spot only: no preemption model of two VM types together */
    CF_HETERO_NO_ONDEMAND_PRICE,   /* the top plans' offers are sold as spot only */
    CF_HETERO_NO_PARTNER,          /* no other GPU type with a throughput model in their regions */
    CF_HETERO_NOTHING_FITS,        /* no global batch fits the pairs' memory within the limits */
    CF_HETERO_CONSTRAINTS,         /* mixes fit, none meets the deadline and budget */
    CF_HETERO_NOT_FASTER,          /* mixes meet them, none beats the same VMs of one type */
    CF_HETERO_LIMITS               /* max_nodes / max_gpus leave no room for VMs of two types */
} cf_hetero_why_not;

typedef struct {
    int have;
    cf_hetero_plan best;       /* by the objective among the feasible mixes */
    cf_perf_params best_perf[2]; /* its types' parameters on their VMs' NICs */
    size_t n_evaluated;        /* (global batch, accumulation) evaluations */
    size_t n_pairs;            /* offer pairs tried */
    size_t n_within_limits;    /* node-count pairs within max_nodes and max_gpus */
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

#endif
