/* The spot preemption model (advisor/spot/spot_model.c, docs/spot.md): a
 * stochastic process of how many of N requested spot VMs are held, fitted
 * to availability traces, and paths drawn from it.
 *
 * "LN-AR with regimes": the cluster alternates between UP (at least one VM
 * held) and DOWN (none). UP and DOWN run lengths are lognormal. A period
 * (a regime, about CF_SPOT_REGIME_H long) shifts the log-scale of its UP
 * and DOWN runs by its own draws, whose spread is how much one trace's
 * runs differ from another's plus how little a short history says about
 * the centre (regime_sd_*): a new week in a new zone is a new draw. Inside
 * a regime a factor shared by consecutive cycles (AR(1) with CF_SPOT_PHI,
 * a share CF_SPOT_RHO of the log-variance) lengthens UP runs and shortens
 * DOWN runs together (good and bad days). Inside an UP run the count
 * follows a chain on 1..N: drop events at rate kd to a level uniform
 * below, recoveries at rate kr to N with probability qr (else uniform
 * above), a run starting at N with probability qf. Ten numbers per (cloud,
 * GPU, VM size, region, cluster size). */
#ifndef CLOUDFIT_ADVISOR_SPOT_MODEL_H
#define CLOUDFIT_ADVISOR_SPOT_MODEL_H
#include <stddef.h>
#include "cloudfit/advisor/spot_replay.h"
#include "cloudfit/status.h"

/* Structural constants (docs/spot.md, "Which data chose what"). */
#define CF_SPOT_PHI 0.8
#define CF_SPOT_RHO 0.2
#define CF_SPOT_SIGMA_FLOOR 0.1
/* Mean length of a regime (exponential), hours. */
#define CF_SPOT_REGIME_H 336.0
/* Limits that keep a path finite: runs of at least a second, events at
 * most one a second, at most CF_SPOT_MAX_PATH_SEGMENTS segments. */
#define CF_SPOT_MIN_RUN_H (1.0 / 3600)
#define CF_SPOT_MAX_RATE_PER_H 3600.0
#define CF_SPOT_MAX_PATH_SEGMENTS 20000000

typedef struct {
    double up_median_h, up_sigma;       /* UP run length in a regime ~ LN(ln median + shift, σ) */
    double down_median_h, down_sigma;
    double kd_per_h, kr_per_h;          /* drop and recovery events inside UP */
    double qf, qr;                      /* P(UP starts full), P(a recovery goes to full) */
    double regime_sd_up, regime_sd_down;/* sd of a regime's log-scale shift of UP and DOWN runs */
} cf_spot_process;

/* What the estimators need from traces, summed so that traces pool:
 * UP and DOWN run lengths (cycles), and inside UP runs the drop and rise
 * events with their exposures. */
typedef struct {
    double *up_h, *down_h;
    size_t n_cycles, cap;
    double drops, rises, rises_to_full;  /* events between ticks inside UP runs */
    double drop_exposure_h;              /* UP time at ≥ 2 VMs */
    double rise_exposure_h;              /* UP time below the requested count */
    double up_runs, up_runs_full;        /* UP runs, and those starting at the requested count */
    int multi_node;                      /* a trace with N > 1 contributed the inner counts */
} cf_spot_runs;

/* One trace's runs as the table's fit pools them across traces: the log of
 * the mean UP and DOWN run (hours) with the variance of that estimate
 * (s²/(n·mean²)), and the lognormal σ of its runs (median and mean
 * matched). */
typedef struct {
    double log_mean_up, var_log_mean_up, sigma_up;
    double log_mean_down, var_log_mean_down, sigma_down;
    size_t cycles;
} cf_spot_trace_summary;

/* A path of at least `hours` for N requested VMs (merged segments),
 * stationary from the start; GSL's MT19937 seeded with `seed`.
 * CF_ERR_INVALID when cf_spot_process_check refuses p or the path would
 * need more than CF_SPOT_MAX_PATH_SEGMENTS segments. */
cf_status cf_spot_path_generate(const cf_spot_process *p, int nodes, double hours, unsigned long seed,
                                cf_spot_path *out);

/* Closed-form figures (no path): mean UP and DOWN run, availability of at
 * least one VM, and the inner chain's stationary distribution blended with
 * the start distribution by how long UP runs last — for screening many
 * candidates before the Monte Carlo. */
typedef struct {
    double mean_up_h, mean_down_h, p_up;    /* over regimes */
    double share_given_up;     /* E[n/N | UP] */
    double events_per_up_h;    /* cluster preemption events per hour of UP */
} cf_spot_screen;

#endif
