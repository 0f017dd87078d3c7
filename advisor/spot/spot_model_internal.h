/* The advisor's own half of cloudfit/advisor/spot_model.h: functions used only inside advisor/
 * (and by its tests), kept out of the public header. */
#ifndef CLOUDFIT_ADVISOR_SPOT_MODEL_INTERNAL_H
#define CLOUDFIT_ADVISOR_SPOT_MODEL_INTERNAL_H
#include "cloudfit/advisor/spot_model.h"

/* CF_OK when a path can be drawn from p for N VMs: medians and sigmas
 * finite, medians ≥ CF_SPOT_MIN_RUN_H, rates in [0, CF_SPOT_MAX_RATE_PER_H],
 * probabilities in [0, 1]; else CF_ERR_INVALID naming the number. */
cf_status cf_spot_process_check(const cf_spot_process *p, int nodes);

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

void cf_spot_trace_summary_of(const cf_spot_runs *r, cf_spot_trace_summary *out);

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
