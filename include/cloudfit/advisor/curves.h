/* The curves behind a recommendation's plots (advisor/model/curves.c): how the
 * chosen VM type's throughput grows with the node count, and how
 * statistical efficiency falls with the global batch. Pure computation,
 * the same model the enumeration ranks with. */
#ifndef CLOUDFIT_ADVISOR_CURVES_H
#define CLOUDFIT_ADVISOR_CURVES_H
#include <stddef.h>
#include "cloudfit/advisor.h"
#include "cloudfit/status.h"

typedef struct {
    int nodes;
    double step_time_s;
    double samples_per_s;        /* at the chosen per-GPU batch and accumulation */
    double ideal_samples_per_s;  /* nodes × the one-node throughput (linear scaling) */
    double hours;                /* training time at this node count (no start-up or preemption) */
    cf_scaling_reason reason;    /* why the throughput fell (or jumped) from one node fewer; REGULAR when it did not */
} cf_scaling_point;

typedef struct {
    double global_batch;
    double efficiency;           /* E0 / E(M): 1 at the recipe's batch */
    double samples_to_target;
} cf_stateff_point;

#endif
