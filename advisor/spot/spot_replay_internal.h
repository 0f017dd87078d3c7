/* The advisor's own half of cloudfit/advisor/spot_replay.h: functions used only inside advisor/
 * (and by its tests), kept out of the public header. */
#ifndef CLOUDFIT_ADVISOR_SPOT_REPLAY_INTERNAL_H
#define CLOUDFIT_ADVISOR_SPOT_REPLAY_INTERNAL_H
#include "cloudfit/advisor/spot_replay.h"
#include "cloudfit/spec/types.h"
#include "cloudfit/status.h"

/* Bytes of a checkpoint: fp32 weights plus the optimizer's moments (two
 * for Adam-family optimizers, one for momentum, none for plain SGD). */
double cf_checkpoint_bytes(double parameters, cf_optimizer optimizer);

/* Checkpoint write time and restart time (start-up plus reading the
 * checkpoint back), hours. `checkpoint_minutes` > 0 overrides the write
 * time; storage_mb_per_s ≤ 0 means the default. */
void cf_checkpoint_costs(double bytes, double storage_mb_per_s, double checkpoint_minutes, double startup_minutes,
                         double *out_checkpoint_h, double *out_restart_h);

/* Young's interval √(2·C·M) and Daly's higher-order one (compute time
 * between checkpoints; M when C ≥ 2M; infinite when M is). */
double cf_young_interval_h(double checkpoint_h, double mtbf_h);
double cf_daly_interval_h(double checkpoint_h, double mtbf_h);

/* Start positions: every step_h along the path (returns the count, at
 * most CF_SPOT_MAX_STARTS; seg and off need room for ⌈total/step⌉), or n uniform in [0, frac·total)
 * from a seeded generator. cf_spot_start_step is the step a replay of the
 * whole path uses: step_h, or longer when that would be more than
 * CF_SPOT_MAX_STARTS starts. */
double cf_spot_start_step(const cf_spot_path *p, double step_h);
size_t cf_spot_starts_grid(const cf_spot_path *p, double step_h, size_t *seg, double *off);
cf_status cf_spot_starts_random(const cf_spot_path *p, size_t n, double frac, unsigned long seed, size_t *seg,
                                double *off);

/* The q-quantile of sorted values, linear interpolation between order
 * statistics (numpy's default); infinities count as values. */
double cf_quantile_sorted(const double *sorted, size_t n, double q);

/* Sorts in place, then the q-quantile. */
double cf_quantile(double *values, size_t n, double q);

/* Rearranges values (no NaN) so that each order statistic that
 * cf_quantile_sorted(values, n, q[i]) reads is where a sort would put it,
 * by selection rather than a sort (a few passes over the data instead of
 * n·log n moves): cf_quantile_sorted then gives the same values. */
void cf_quantiles_place(double *values, size_t n, const double *q, size_t n_q);

/* Replays `plan` from n starts (seg, off) into runs[n], as n calls of
 * cf_spot_replay do (the same stops, counts and times; the hours and
 * samples of a start that never finishes to within rounding): once a
 * start's pass over the path ends in the state it began in, that pass is
 * replayed once, and a start that later enters a segment in the pass's
 * state there takes its totals and time from it up to shortly before its
 * cap (a job that never finishes replays a few segments per start, not
 * several passes over the path). *segments (when not NULL): the segments
 * replayed, all starts together. */
void cf_spot_replay_many(const cf_spot_path *p, const size_t *seg, const double *off, size_t n,
                         const cf_spot_plan *plan, cf_spot_run *runs, size_t *segments);

/* cf_spot_replay, given up at the end of the first segment that ends
 * after stop_h (wall_h INFINITY, stop CF_SPOT_STOP_HOURS): a replay that
 * finishes by stop_h gives the same run, step for step, and one that
 * finishes later gives a wall_h above stop_h too (INFINITY), so a count
 * of wall times at or below any bound up to stop_h is the same. The
 * calibration's bootstrap, which only counts, stops there instead of
 * replaying its slowest windows to the end. */
void cf_spot_replay_until(const cf_spot_path *p, size_t seg, double offset_h, const cf_spot_plan *plan, double stop_h,
                          cf_spot_run *out);

/* The same plan replayed from one start for several amounts of work,
 * work[0] ≥ work[1] ≥ … (plan->work_h is not read), into runs[k] as
 * cf_spot_replay_until(p, seg, offset_h, plan with work[k], stop_h[k])
 * gives, step for step: the work enters a replay's decisions only near its
 * end, so a shorter job does what the longest one does up to a segment
 * near its own end, and goes on from there with the longest one's state
 * instead of replaying that stretch again. Shared for one VM type without
 * a per-state rate and at most CF_SPOT_MAX_LENGTHS lengths; otherwise each
 * is replayed on its own. */
#define CF_SPOT_MAX_LENGTHS 8
void cf_spot_replay_lengths(const cf_spot_path *p, size_t seg, double offset_h, const cf_spot_plan *plan,
                            const double *work, const double *stop_h, size_t n, cf_spot_run *runs);

/* Appends a segment (joined with the last one when the counts agree). */
cf_status cf_spot_path_push(cf_spot_path *p, double d_h, const int *counts);

#endif
