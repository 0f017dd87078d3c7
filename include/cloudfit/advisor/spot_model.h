/* The spot preemption model (advisor/spot_model.c, docs/spot.md): a
 * stochastic process of how many of N requested spot VMs are held, fitted
 * to availability traces, and paths drawn from it.
 *
 * "LN-AR": the cluster alternates between UP (at least one VM held) and
 * DOWN (none). UP and DOWN run lengths are lognormal, median and mean
 * matched to the traces; a slowly varying factor shared by consecutive
 * cycles (AR(1) with CF_SPOT_PHI, a share CF_SPOT_RHO of the log-variance)
 * lengthens UP runs and shortens DOWN runs together (good and bad weeks).
 * Inside an UP run the count follows a chain on 1..N: drop events at rate
 * kd to a level uniform below, recoveries at rate kr to N with probability
 * qr (else uniform above), a run starting at N with probability qf. Eight
 * numbers per (cloud, GPU, VM size, region). */
#ifndef CLOUDFIT_ADVISOR_SPOT_MODEL_H
#define CLOUDFIT_ADVISOR_SPOT_MODEL_H
#include <stddef.h>
#include "cloudfit/advisor/spot_replay.h"
#include "cloudfit/status.h"
#include "cloudfit/types.h"

/* Structural constants, chosen on the 16 single-node traces only (the 4-
 * and 16-node traces are the report; bench/spot_lab.py --select). */
#define CF_SPOT_PHI 0.8
#define CF_SPOT_RHO 0.2
#define CF_SPOT_SIGMA_FLOOR 0.1

typedef struct {
    double up_median_h, up_sigma;       /* UP run length ~ LN(ln median, σ) */
    double down_median_h, down_sigma;
    double kd_per_h, kr_per_h;          /* drop and recovery events inside UP */
    double qf, qr;                      /* P(UP starts full), P(a recovery goes to full) */
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

/* Adds one single-type trace (ticks, requested count N): circular UP/DOWN
 * runs paired as cycles (rotated to start at an UP run after a DOWN run,
 * the unpaired last run dropped) and, for N > 1, the inner events.
 * CF_ERR_INVALID when the trace never changes between UP and DOWN. */
cf_status cf_spot_runs_add(cf_spot_runs *r, const cf_spot_trace *t);
void cf_spot_runs_free(cf_spot_runs *r);

/* The process from pooled runs: μ = ln(median), σ = √(2 ln(mean/median))
 * (floored), so the median and the mean (hence availability) match; kd,
 * kr, qf, qr as event counts over exposures. When `r` has no multi-node
 * trace, `inner` (may be NULL: the defaults) gives kd, kr, qf, qr. */
void cf_spot_process_fit(const cf_spot_runs *r, const cf_spot_process *inner, cf_spot_process *out);

/* A path of at least `hours` for N requested VMs (merged segments),
 * stationary from the start; GSL's MT19937 seeded with `seed`. */
cf_status cf_spot_path_generate(const cf_spot_process *p, int nodes, double hours, unsigned long seed,
                                cf_spot_path *out);

/* Closed-form figures (no path): mean UP and DOWN run, availability of at
 * least one VM, and the inner chain's stationary distribution blended with
 * the start distribution by how long UP runs last — for screening many
 * candidates before the Monte Carlo. */
typedef struct {
    double mean_up_h, mean_down_h, p_up;
    double share_given_up;     /* E[n/N | UP] */
    double events_per_up_h;    /* cluster preemption events per hour of UP */
} cf_spot_screen;
void cf_spot_screen_of(const cf_spot_process *p, int nodes, cf_spot_screen *out);
/* The inner chain's stationary distribution on 1..N (pi[1..N], pi[0] = 0;
 * pi has N + 1 slots): where an UP run's node count spends its time. */
void cf_spot_inner_stationary(const cf_spot_process *p, int N, double *pi);
/* Approximate mean wall time of W hours of work: R + W / (P(UP)·E[n/N|UP]·
 * (1 − C/τ − Λ(τ/2 + R))); INFINITY when no progress. Writes τ (Daly with
 * M = 1/Λ) when out_interval_h is not NULL. */
double cf_spot_screen_hours(const cf_spot_screen *s, double work_h, double checkpoint_h, double restart_h,
                            double *out_interval_h);

#endif
