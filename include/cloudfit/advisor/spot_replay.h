/* Replaying a spot plan against an availability path (advisor/spot/spot_replay.c,
 * docs/spot.md): a real trace or a path drawn from the preemption model.
 * Checkpoint size, cost and interval (Young/Daly), the event-driven replay
 * of one start (elastic or gang), the mixed plan (spot with an on-demand
 * fallback near the deadline), start grids and quantiles. Pure functions. */
#ifndef CLOUDFIT_ADVISOR_SPOT_REPLAY_H
#define CLOUDFIT_ADVISOR_SPOT_REPLAY_H
#include <stddef.h>
#include "cloudfit/status.h"
#include "cloudfit/profiler/types.h"

/* Defaults (docs/spot.md), written down only here. Storage: EBS gp3's
 * baseline throughput, in the range of one S3 stream. A replay longer than
 * CF_SPOT_MAX_HOURS does not finish. On on-demand nodes (mixed plan) the
 * checkpoint interval is at least CF_SPOT_OD_INTERVAL_H. */
#define CF_DEFAULT_STORAGE_MB_PER_S 125.0
#define CF_SPOT_MAX_HOURS 20000.0
#define CF_SPOT_OD_INTERVAL_H 1.0
#define CF_SPOT_REPLAY_STEP_H 0.25   /* a trace replay starts every 15 minutes */
/* A replay that has gone round the (circular) path this often does not
 * finish either (a path of a few ticks cannot make it loop for ever); a
 * replay of a trace starts at most this often (the step grows beyond). */
#define CF_SPOT_MAX_PASSES 1000
#define CF_SPOT_MAX_STARTS 200000

/* A piecewise-constant count of held VMs: segment i lasts d_h[i] hours
 * with c[i·n_types + k] VMs of type k. Replays treat it as circular. */
typedef struct {
    double *d_h;
    int *c;
    size_t n, cap;
    int n_types;
    double total_h;
} cf_spot_path;

/* Merges a trace's ticks into segments (equal neighbours joined). */
cf_status cf_spot_path_from_trace(const cf_spot_trace *t, cf_spot_path *out);
void cf_spot_path_free(cf_spot_path *p);

typedef enum { CF_SPOT_ELASTIC = 0, CF_SPOT_GANG = 1 } cf_spot_semantics;

/* A fixed plan on spot VMs. State index of a count vector (n0, n1):
 * n0 + (nodes[0] + 1)·n1. */
typedef struct {
    int n_types;
    int nodes[CF_SPOT_MAX_TYPES];   /* requested */
    double work_h;                  /* W: training hours on all requested nodes, uninterrupted */
    double checkpoint_h, restart_h, interval_h;
    cf_spot_semantics semantics;
    const double *rate;             /* progress (hours of W per hour) per state; NULL = Σn/ΣN */
    const double *samples;          /* samples processed per hour, relative to all nodes; NULL = rate */
    double max_h;                   /* 0 = CF_SPOT_MAX_HOURS */
} cf_spot_plan;

/* Why a replay stopped without finishing (wall_h INFINITY). */
typedef enum {
    CF_SPOT_STOP_NONE = 0,          /* it finished */
    CF_SPOT_STOP_HOURS,             /* max_h of replay passed */
    CF_SPOT_STOP_PASSES             /* CF_SPOT_MAX_PASSES passes over the path before max_h */
} cf_spot_stop;

typedef struct {
    double wall_h;                  /* INFINITY when not done within max_h */
    double node_h[CF_SPOT_MAX_TYPES]; /* VM-hours held (billed) per type */
    double lost_h;                  /* work lost to preemptions, hours of W */
    double below_h, zero_h;         /* time with fewer than the requested VMs, with none */
    double samples_h;               /* samples processed, in hours of the full cluster's throughput */
    int preemptions, checkpoints, restarts;
    int stalled;                    /* time spent in a state with rate 0 */
    double stalled_h;               /* how much */
    cf_spot_stop stop;              /* why it stopped unfinished; CF_SPOT_STOP_NONE when done */
} cf_spot_run;

/* One start `offset_h` into segment `seg` (docs/spot.md, "The replay").
 * wall_h is INFINITY when it does not finish within max_h or
 * CF_SPOT_MAX_PASSES passes over the path (`stop` says which). Nothing is
 * accounted past max_h: the tick that crosses it is cut there, so node_h,
 * below_h, zero_h, samples_h and stalled_h cover at most max_h hours. */
void cf_spot_replay(const cf_spot_path *p, size_t seg, double offset_h, const cf_spot_plan *plan, cf_spot_run *out);

/* The mixed plan: elastic spot with an on-demand fallback (one VM type).
 * Greedy: spot until the latest time on-demand can still finish by the
 * deadline, then on-demand to the end. Uniform: also switch when the saved
 * work falls below the line of uniform progress (Can't Be Late), and back
 * to spot when all nodes are held and the job is well ahead. node_h[0] is
 * spot, node_h[1] on-demand VM-hours. */
typedef enum { CF_MIXED_GREEDY = 0, CF_MIXED_UNIFORM = 1 } cf_mixed_policy;
void cf_spot_replay_mixed(const cf_spot_path *p, size_t seg, double offset_h, const cf_spot_plan *plan,
                          double deadline_h, cf_mixed_policy policy, cf_spot_run *out);

/* Statistics of a path: availability (all requested held), mean held
 * share, VMs lost per VM-day held, cluster preemption events per day, and
 * the mean time between events while the job can run (elastic: time with
 * ≥ 1 VM per drop; gang: time with all per exit from all). Single type. */
typedef struct {
    double availability, mean_share, rate_per_node_day, events_per_day, mtbf_h, mtbf_gang_h;
} cf_spot_path_stats;
void cf_spot_path_stats_of(const cf_spot_path *p, int nodes, cf_spot_path_stats *out);
/* The same over every type of the path, nodes[t] requested of type t:
 * all held when every type holds its count, VMs lost per VM-day held over
 * all VMs, an event when any type loses VMs. */
void cf_spot_path_stats_all(const cf_spot_path *p, const int *nodes, cf_spot_path_stats *out);

#endif
