/* How well the preemption model's distribution of wall time matches
 * traces it is checked on (advisor/spot/spot_calibrate.c; `cloudfit simulate
 * SPEC --calibrate DIR`, docs/spot.md "Calibration"). For each trace and
 * each job length, a plan is replayed from every start window of the trace
 * and each replay is compared with the model's p10, p50, p90 and the
 * quantile the deadline check uses, for that trace's VMs and node count.
 * Pooled over traces and job lengths, the shares of windows below each
 * quantile are set beside the band a correct model would give on traces of
 * the same lengths: a parametric bootstrap that draws traces of those
 * lengths from the model itself and scores them the same way. Pure
 * computation over traces already read. */
#ifndef CLOUDFIT_ADVISOR_SPOT_CALIBRATE_H
#define CLOUDFIT_ADVISOR_SPOT_CALIBRATE_H
#include <stddef.h>
#include "cloudfit/advisor/spot_model.h"
#include "cloudfit/advisor/spot_replay.h"
#include "cloudfit/status.h"

/* Job lengths: the plan's work W, then W/4, W/16, W/64 while at least
 * CF_CALIBRATE_MIN_WORK_H; a length is scored when the trace is at least
 * CF_CALIBRATE_TRACE_PER_WORK times its work (a longer job replays most of
 * the trace in every window: its windows say little about the process). */
#define CF_CALIBRATE_LENGTHS 4
#define CF_CALIBRATE_MIN_WORK_H 0.5
#define CF_CALIBRATE_TRACE_PER_WORK 8.0
/* The band: the central 95 % of the bootstrap's pooled shares. */
#define CF_CALIBRATE_BAND_LO 0.025
#define CF_CALIBRATE_BAND_HI 0.975
#define CF_CALIBRATE_REPLICATES 100
#define CF_CALIBRATE_BOOT_STEP_H 1.0 /* windows of the bootstrap's traces: every hour */
/* The model's quantiles: a larger Monte Carlo than recommend's (their
 * noise would move the shares by a few hundredths). */
#define CF_CALIBRATE_MC_PATH_HOURS 500000.0
#define CF_CALIBRATE_MC_STARTS 10000

enum { CF_CAL_P10, CF_CAL_P50, CF_CAL_P90, CF_CAL_CHECK, CF_CAL_N };

/* One trace to check: its path (a single VM type), the requested VMs, the
 * model row that a plan on those VMs gets, and the plan (work W on all
 * VMs, checkpoint write and restart). */
typedef struct {
    const char *name;
    const cf_spot_path *path;
    int nodes;
    const cf_spot_process *process;
    double work_h, checkpoint_h, restart_h;
} cf_calibrate_trace;

typedef struct {
    double confidence;            /* the check quantile's (0 = 0.9) */
    int replicates;               /* bootstrap traces per trace (0 = CF_CALIBRATE_REPLICATES) */
    double step_h;                /* windows on the real traces (0 = CF_SPOT_REPLAY_STEP_H) */
    double mc_path_hours;         /* the model's Monte Carlo (0 = CF_CALIBRATE_MC_PATH_HOURS) */
    int mc_starts;                /* (0 = CF_CALIBRATE_MC_STARTS) */
    unsigned long seed;
} cf_calibrate_settings;

/* One (trace, job length). */
typedef struct {
    size_t trace;
    double work_h, interval_h;
    int scored;
    size_t windows;
    double model_h[CF_CAL_N];     /* the model's p10, p50, p90 and check quantile, hours */
    double replay_p50_h, replay_p90_h;
    double share[CF_CAL_N];       /* windows of the trace below each */
} cf_calibrate_item;

typedef struct {
    double share, band_lo, band_hi;
} cf_calibrate_share;

typedef struct {
    cf_calibrate_item *items;     /* malloc'd; n_traces × CF_CALIBRATE_LENGTHS at most */
    size_t n_items;
    size_t windows;               /* pooled over the scored items */
    double quantile[CF_CAL_N];    /* 0.1, 0.5, 0.9 and the check quantile */
    cf_calibrate_share pooled[CF_CAL_N];
    int replicates;
    double *replicate_shares;     /* malloc'd, replicates × CF_CAL_N: each bootstrap trace set's pooled shares
                                     (what a correct model gives here), for any check a caller wants to size */
    /* How often a correct model shows a miss: the share of replicates with at
     * least one of their CF_CAL_N shares outside its band, each band taken
     * from the other replicates (leave-one-out). About 1 − 0.95^4 if the
     * shares were independent: one share outside its band is no evidence
     * against the model by itself. NAN without a band. */
    double replicates_outside_any_band;
} cf_calibrate_result;

cf_status cf_spot_calibrate(const cf_calibrate_trace *traces, size_t n, const cf_calibrate_settings *settings,
                            cf_calibrate_result *out);
void cf_calibrate_result_free(cf_calibrate_result *r);

#endif
