/* Dynamic batching at run time (advisor/plan/rebalance.c, docs/spot.md "Dynamic batching",
 * Tyagi & Sharma ACSOS'20, docs/spot.md "Dynamic batching"): per-worker
 * batches that keep compute times equal on heterogeneous workers while
 * the global batch stays fixed.
 *
 * The signal is each worker's COMPUTE time per iteration: forward and
 * backward up to the moment its last gradient bucket is handed to the
 * all-reduce, without the collective's wait. In a synchronous
 * data-parallel loop every rank's wall time per step is the same by
 * construction (the fast ones wait in the all-reduce), so wall times show
 * no imbalance and must not be fed.
 *
 * Every `window` iterations it updates the batches from the window's
 * trimmed mean times (CF_REBALANCE_TRIM of the iterations dropped at each
 * end: robust to the odd descheduled iteration). Both controllers step
 * toward full_i, the split the speeds b_i/t_i give with the global batch
 * held and the limits kept (water-filled: cf_hetero_split):
 *   proportional: b_i ← b_i + gain·(full_i − b_i), from the speeds smoothed
 *                 over the windows since the batches last moved (a move
 *                 restarts them: with a fixed cost per iteration a speed
 *                 depends on the batch);
 *   PI:           velocity form on the error in samples d_i = full_i − b_i
 *                 from this window's speeds: b_i ← b_i + ki·d_i +
 *                 kp·(d_i − d_i'), d_i' the previous update's (none after
 *                 a window inside the band).
 * No change while the slowest worker is within the band of the fastest,
 * in the window's times or in the smoothed speeds' prediction (a move
 * needs both outside), counting only the workers a move can help (one at
 * its limit is not the fastest, one at batch 1 not the slowest). The band
 * is the larger of `dead_band` and the imbalance that the measured timing
 * noise alone produces with probability ~0.3 % (noise_z standard
 * deviations, from the times' spread inside each window (winsorized) and
 * the spread of the window times while the batches stay put).
 * Hysteresis: once the times have been inside the band for two windows in
 * a row, two windows in a row outside it are needed before the batches
 * move again (one when the imbalance is past twice the band).
 * Batches are integers in [1, max_batch_i] summing to the global batch;
 * a worker whose share falls below min_share of an equal share is
 * flagged (below_floor) — it is nearly idle weight, or the times fed are
 * not compute times. `cloudfit rebalance` is this controller as a
 * JSON-lines filter. */
#ifndef CLOUDFIT_ADVISOR_REBALANCE_H
#define CLOUDFIT_ADVISOR_REBALANCE_H
#include "cloudfit/common/buf.h"
#include "cloudfit/status.h"

#define CF_REBALANCE_MAX_WORKERS 1024
/* Defaults (docs/spot.md "Dynamic batching"). */
#define CF_REBALANCE_DEAD_BAND 0.03
#define CF_REBALANCE_WINDOW 20
#define CF_REBALANCE_GAIN 1.2
#define CF_REBALANCE_SMOOTHING 0.5
/* PI (velocity form): ki·d_i is the step that moves the batches (the
 * proportional controller's gain: above 1 it makes up for the fixed cost
 * per iteration), kp·(d_i − d_i') reacts to the change of the error. The
 * time follows the batch within the window (a plant without lag), so a
 * large kp only slows it: 0.8/0.2 took 30–50 updates on the closed-loop
 * simulations of tests/test_rebalance.c, 0.1/1.2 takes 1–8. */
#define CF_REBALANCE_KP 0.1
#define CF_REBALANCE_KI 1.2
/* The noise band: this many standard deviations of the predicted
 * imbalance's log (a false move per window ~0.3 %, and with the
 * hysteresis two in a row are needed). */
#define CF_REBALANCE_NOISE_Z 3.0
/* Weight of the newest window in the smoothed noise estimates. */
#define CF_REBALANCE_NOISE_SMOOTHING 0.3
/* The floor: a share below this fraction of an equal share (M/n) is
 * flagged. 0.25 = the worker is over 4× slower per sample than the
 * average; a wall-clock signal drove a 3×-slower worker to 0.09–0.14. */
#define CF_REBALANCE_MIN_SHARE 0.25
/* Longest input line the protocol reads (1,024 workers' times fit in a
 * third of it); longer lines are reported and skipped. */
#define CF_REBALANCE_MAX_LINE 65536
/* The share of a window's iterations dropped at each end of its times. */
#define CF_REBALANCE_TRIM 0.2
/* Iterations per window at most. */
#define CF_REBALANCE_MAX_WINDOW 100000
/* The times the controller takes, seconds: a nanosecond to 11 days (outside
 * that they are not iteration times, and their squares would under- or
 * overflow). */
#define CF_REBALANCE_MIN_TIME_S 1e-9
#define CF_REBALANCE_MAX_TIME_S 1e6

typedef enum { CF_REBALANCE_P = 0, CF_REBALANCE_PI = 1 } cf_rebalance_kind;

typedef struct {
    cf_rebalance_kind kind;
    double dead_band;          /* relative, e.g. 0.05 */
    int window;                /* iterations averaged per update */
    double gain;               /* P: fraction of the step taken, (0, 2) */
    double smoothing;          /* P: weight of the newest speed estimate, (0, 1] */
    double kp, ki;             /* PI gains: on the change of the error in samples, and on the error */
    double noise_z;            /* the noise band in standard deviations; 0 = the dead band alone */
    double min_share;          /* floor as a fraction of an equal share, [0, 1) */
} cf_rebalance_settings;

cf_rebalance_settings cf_rebalance_defaults(void);

typedef struct {
    cf_rebalance_settings s;
    int n;
    long global_batch;
    int batch[CF_REBALANCE_MAX_WORKERS];
    int max_batch[CF_REBALANCE_MAX_WORKERS];       /* 0 = no limit */
    double speed[CF_REBALANCE_MAX_WORKERS];        /* samples/s, smoothed since the batches last moved */
    double speed_var_share;                        /* their variance as a share of one window's: 1 after a move */
    double pi_error_samples[CF_REBALANCE_MAX_WORKERS]; /* PI: d_i = full_i − b_i at the last move, samples;
                                                       NAN: none to difference (see cf_rebalance_observe) */
    double *window_t;                              /* the window so far: window_t[i·window + k] (malloc'd) */
    int in_window;
    double last_t[CF_REBALANCE_MAX_WORKERS];       /* the last window's (trimmed mean) times */
    /* Relative variance of a window's time: from the spread inside
     * windows (the trimmed mean's, from the winsorized variance; smoothed
     * over windows), and the exponentially weighted variance of the log
     * window times around their weighted mean (log_level) while the
     * batches stay put (drift and correlated noise that the spread inside
     * one window misses). */
    double within_var[CF_REBALANCE_MAX_WORKERS];
    double residual_var[CF_REBALANCE_MAX_WORKERS];
    double log_level[CF_REBALANCE_MAX_WORKERS];
    double imbalance;                              /* slowest / fastest − 1, the last window's times, over the
                                                      workers a move can help (none at a limit as the fastest) */
    double predicted_imbalance;                    /* the same from the smoothed speeds; a move needs both > band */
    double band;                                   /* the band of the last update: max(dead band, noise band) */
    int inside;                                    /* consecutive windows inside the band, up to 2 (settled) */
    int outside;                                   /* consecutive windows outside the band while settled */
    int moved;                                     /* the last update moved the batches */
    int below_floor[CF_REBALANCE_MAX_WORKERS];     /* share < min_share of M/n at the current batches */
    int n_below_floor;
    int updates, changes;
} cf_rebalance;

/* initial: per-worker batches summing to global_batch (NULL = as equal as
 * integers allow); max_batch: limits (NULL = none); settings NULL = the
 * defaults. CF_ERR_INVALID for impossible inputs (naming them). Release
 * with cf_rebalance_free (also after a failed init). */
cf_status cf_rebalance_init(cf_rebalance *c, int workers, long global_batch, const int *initial,
                            const int *max_batch, const cf_rebalance_settings *settings);
void cf_rebalance_free(cf_rebalance *c);
/* One iteration's per-worker times (seconds, CF_REBALANCE_MIN_TIME_S to
 * CF_REBALANCE_MAX_TIME_S). Returns 1 when this call ended a window and
 * the batches changed, 0 otherwise; the current batches are always in
 * c->batch. A negative value with the error set: CF_ERR_INVALID for a
 * time out of range (the message names the worker), CF_ERR_NOMEM. */
int cf_rebalance_observe(cf_rebalance *c, const double *times_s);

/* ---- the JSON-lines protocol (advisor/plan/rebalance_lines.c) ----------------
 * One line in per training iteration, {"compute_s": [0.31, 0.12]}
 * (seconds of compute per worker, in worker order; "times_s" is read as
 * the same); one line out for each,
 * {"batches": [64, 192], "changed": true, "updates": 1, "imbalance": 0.41,
 *  "band": 0.05} plus "below_floor": [worker, ...] when a share is under
 * the floor, or {..., "skipped": "the reason"} for a line that was not
 * understood (the batches unchanged). Blank lines carry nothing. */

/* Whether `line` is only white space. */
int cf_rebalance_line_blank(const char *line);
/* The n per-worker times of one input line; CF_ERR_INVALID naming
 * "SOURCE:NUMBER" (and the worker) for anything else. */
cf_status cf_rebalance_read_line(const char *line, const char *source, long number, int n, double *times_s);
/* The answer line (with its newline) after an observation that returned
 * `changed`; `skipped` (NULL for none) is why the line was skipped. */
void cf_rebalance_answer(const cf_rebalance *c, int changed, const char *skipped, cf_buf *out);

#endif
