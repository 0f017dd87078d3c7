/* What a spot plan's time and cost look like, from a Monte Carlo over a
 * path of the preemption model (advisor/spot/spot_plan.c, docs/spot.md):
 * p10/p50/p90 of wall time and cost, whether it meets a deadline at the
 * stated confidence, and the mixed plan (spot with an on-demand fallback
 * near the deadline). Pure computation. */
#ifndef CLOUDFIT_ADVISOR_SPOT_PLAN_H
#define CLOUDFIT_ADVISOR_SPOT_PLAN_H
#include <stddef.h>
#include "cloudfit/advisor/spot_model.h"
#include "cloudfit/advisor/spot_replay.h"
#include "cloudfit/advisor/spot_table.h"
#include "cloudfit/status.h"

/* A spot or mixed plan has one distribution of wall time and cost: the
 * replays of the plan from many start times on a path of the preemption
 * model (preemptions, restarts, lost work), each with its own draw of the
 * work from the throughput model's uncertainty (log-normal, the step
 * time's σ). Every figure shown is a quantile of it: the point is the
 * median, the interval p10–p90, and the deadline and budget are held to
 * its check quantile for the confidence c the user asked for,
 * 1 − (1 − c)·CF_SPOT_MISS_FACTOR (q0.95 at c = 0.9): on traces of a few
 * weeks an exactly right model's share of starts done by its q_c falls
 * below c in about half of them, by its q0.95 in few (the calibration's
 * band; docs/spot.md "Calibration"). */
#define CF_SPOT_CONFIDENCE 0.9   /* when none is given */
#define CF_SPOT_MISS_FACTOR 0.5
/* The Monte Carlo: one path per (model row, node count) and uniform start
 * times in its first 90 %. bench/spot.sh uses the full size; recommend a
 * smaller one (its latency budget; docs/spot.md gives the spread). */
#define CF_SPOT_SEED 15
#define CF_SPOT_MC_PATH_HOURS 300000.0
#define CF_SPOT_MC_STARTS 3000
#define CF_SPOT_RECOMMEND_PATH_HOURS 50000.0
#define CF_SPOT_RECOMMEND_STARTS 1000
#define CF_SPOT_START_FRACTION 0.9

typedef struct {
    double path_hours;
    int starts;
    unsigned long seed;
} cf_spot_mc_settings;

/* Spread of wall time and cost over replays (cost: VM-hours × the price of
 * each type): quantiles of each, q the quantile behind the deadline and
 * budget checks. */
typedef struct {
    size_t n, n_unfinished;
    size_t n_unfinished_passes;             /* of n_unfinished: stopped after CF_SPOT_MAX_PASSES passes over
                                               the path, before its hour cap (the others reached it) */
    double q;
    double p10_h, p50_h, p90_h, q_h, mean_h;
    double p10_usd, p50_usd, p90_usd, q_usd, mean_usd;
    double mean_preemptions, mean_checkpoints, mean_restarts, mean_lost_h, mean_below_h;
    double mean_node_h[CF_SPOT_MAX_TYPES];
} cf_spot_spread;

/* A spot plan to evaluate: W hours of work on N VMs of one type, W's
 * log-normal spread (0: exact), the confidence of the checks. */
typedef struct {
    const cf_spot_process *process;
    int nodes;
    double work_h;
    double work_sigma;                /* log sd of W below its median: the throughput model's (step time σ) */
    double work_sigma_up;             /* and above it (the step's σ_up: a two-piece log-normal); 0 = work_sigma */
    double confidence;                /* the deadline and budget hold with this probability; 0 = CF_SPOT_CONFIDENCE */
    int no_mixed;                     /* spot only: never the mixed plan */
    double checkpoint_h, restart_h;
    double spot_usd_per_node_h;
    double ondemand_usd_per_node_h;   /* 0 = not offered on demand: no mixed plan */
    double deadline_h;                /* 0 = none: no deadline claim, no mixed plan */
    cf_mixed_policy mixed_policy;
    cf_spot_semantics semantics;
    int always_mixed;                 /* also when spot alone meets the deadline (else only when it does not) */
} cf_spot_request;

typedef struct {
    int valid;
    cf_spot_spread spot;              /* spot alone */
    double checkpoint_h, restart_h, interval_h, mtbf_h;
    cf_spot_path_stats model;         /* the model at N: availability, preemption rate */
    double work_sigma;                /* the throughput uncertainty folded in: log sd below W's median */
    double work_sigma_up;             /* and above it (≥ work_sigma: the all-reduce beyond what was measured) */
    double confidence, check_quantile;/* asked for; the quantile the checks use */
    double deadline_h;
    int meets_deadline;               /* spot alone: its check quantile ≤ deadline */
    double spot_met_share;            /* share of the Monte Carlo starts done by the deadline */
    int has_mixed;
    cf_mixed_policy mixed_policy;
    cf_spot_spread mixed;             /* mean_node_h[1]: on-demand VM-hours */
    int mixed_meets;
    double mixed_met_share;
    cf_spot_lookup source;            /* the model row (filled by the caller) */
} cf_spot_estimate;

/* Paths and start times, shared by every plan of the same (row, N). */
typedef struct cf_spot_mc cf_spot_mc;

#endif
