/* Replaying a plan against an availability trace under each LR rule
 * (advisor/spot/spot_simulate.c; `cloudfit simulate`, docs/spot.md): wall time,
 * cost, checkpoints, restarts, lost work, time below the requested VMs,
 * samples processed and statistical progress per rule and batch policy.
 * Pure computation over a trace already read. */
#ifndef CLOUDFIT_ADVISOR_SPOT_SIMULATE_H
#define CLOUDFIT_ADVISOR_SPOT_SIMULATE_H
#include <stddef.h>
#include "cloudfit/advisor.h"
#include "cloudfit/advisor/elastic.h"
#include "cloudfit/advisor/hetero.h"
#include "cloudfit/advisor/spot_plan.h"
#include "cloudfit/status.h"

#define CF_SIMULATE_MAX_ROWS 16
/* The most VMs of each type a mixed-types replay holds: its rate table has
 * a heterogeneous split per (n0, n1) state, about cubic in the counts
 * (256 + 256: ~1 s; 1000 + 1000 took 40 s, 2000 + 2000 minutes). */
#define CF_SIMULATE_MAX_MIXED_NODES 256

/* LR rules simulate knows, as bits: fixed (the full plan's LR whatever the
 * batch), linear, sqrt, gain. */
enum { CF_SIM_FIXED = 1, CF_SIM_LINEAR = 2, CF_SIM_SQRT = 4, CF_SIM_GAIN = 8, CF_SIM_ALL_RULES = 15 };
/* Batch policies as bits: hold (accumulation), shrink. */
enum { CF_SIM_HOLD = 1, CF_SIM_SHRINK = 2 };

typedef struct {
    const cf_spot_path *trace;
    int n_types;
    int nodes[CF_SPOT_MAX_TYPES];           /* requested VMs per type */
    double usd_per_node_h[CF_SPOT_MAX_TYPES];
    /* One type: the plan's configuration and throughput model. */
    cf_elastic_request elastic;              /* .batch is set per row */
    /* Two types (a mixed job): progress and throughput per state
     * (n0 + (nodes[0] + 1)·n1), from the heterogeneous split; the rules
     * do not apply (one row). */
    const double *rate2, *samples2;
    double work_h;                           /* W: hours on all requested VMs, uninterrupted */
    double checkpoint_h, restart_h, interval_h;
    double full_samples_per_s;               /* throughput on all requested VMs */
    double target_samples;                   /* E(M_N): samples the plan needs at full size */
    cf_spot_semantics semantics;
    double start_step_h;                     /* starts every step (0 = CF_SPOT_REPLAY_STEP_H) */
    double single_start_h;                   /* ≥ 0: one start at this time instead */
    unsigned rules, batches;                 /* CF_SIM_* bits (0 = all) */
} cf_simulate_request;

typedef struct {
    const char *rule;                        /* fixed | linear | sqrt | gain | mixed-types */
    cf_elastic_batch batch;
    int no_progress_max_nodes;               /* largest count with no expected progress (x ≥ 2 at some point of
                                                training), every smaller count none either; 0 = none */
    cf_spot_spread spread;                   /* wall time, cost, checkpoints, restarts, preemptions, lost work, below */
    double mean_samples;                     /* samples processed */
    double progress_per_usd;                 /* target samples (M0-equivalent progress) per dollar (mean cost) */
    double mean_stalled_h;                   /* time spent at a count where the rule makes no progress */
} cf_simulate_row;

typedef struct {
    cf_simulate_row rows[CF_SIMULATE_MAX_ROWS];
    int n_rows;
    size_t n_starts;
    double start_step_h;                     /* the step between the starts of a whole-path replay (cf_spot_start_step) */
    cf_spot_path_stats trace_stats;          /* of the trace (type 0 for two types) */
} cf_simulate_result;

cf_status cf_simulate(const cf_simulate_request *req, cf_simulate_result *out);

/* The plan a trace is replayed against, as recommend would make it: for
 * one type, the spec's best configuration on exactly nodes[0] VMs of
 * vms[0] (batch, accumulation, W = its training hours); for two types, the
 * heterogeneous split on nodes[0] + nodes[1] VMs. Checkpoint and restart
 * from the checkpoint size and the storage setting, the interval by Daly
 * from the preemption model's MTBF for that offer and node count (what the
 * plan would use; the trace is not looked at). The replay's prices are the
 * spot prices (on-demand when an offer has none). Fills out->req except
 * rules, batches and semantics (the caller's). */
typedef struct {
    cf_simulate_request req;
    int n_types;
    cf_config config;                        /* one type */
    cf_hetero_plan hetero;                   /* two types */
    cf_perf_params perf[CF_SPOT_MAX_TYPES];
    cf_spot_lookup model;                    /* the model row behind the interval */
    double model_mtbf_h;
    double *rate2, *samples2;                /* owned */
} cf_simulate_setup;

cf_status cf_simulate_prepare(const cf_advisor_input *in, const cf_vm *const *vms, const int *nodes, int n_types,
                              const cf_spot_path *trace, cf_spot_semantics semantics, cf_simulate_setup *out);
void cf_simulate_setup_free(cf_simulate_setup *s);

#endif
