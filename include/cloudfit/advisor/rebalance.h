/* Dynamic batching at run time (advisor/rebalance.c, DESIGN.md §3.6,
 * Tyagi & Sharma ACSOS'20): per-worker batches that keep iteration times
 * equal on heterogeneous workers while the global batch stays fixed.
 * Feed it every iteration's per-worker times; every `window` iterations
 * it updates the batches from the window's mean times:
 *   proportional: b_i ← b_i·t̄/t_i (renormalised to the global batch),
 *                 moved a fraction `gain` of the way, through the smoothed
 *                 per-worker speed b_i/t_i;
 *   PI:           b_i ← b_i·(1 + kp·e_i + ki·Σe_i), e_i = t̄/t_i − 1.
 * No change while the slowest worker's predicted time (from the smoothed
 * speeds) is within `dead_band` of the fastest's, so measurement noise
 * inside the band cannot make it oscillate.
 * Batches are integers in [1, max_batch_i] summing to the global batch.
 * `cloudfit rebalance` is this controller as a JSON-lines filter. */
#ifndef CLOUDFIT_ADVISOR_REBALANCE_H
#define CLOUDFIT_ADVISOR_REBALANCE_H
#include "cloudfit/common/buf.h"
#include "cloudfit/status.h"

#define CF_REBALANCE_MAX_WORKERS 1024
/* The longest protocol line read (1,024 workers' times take ~26 kB). */
#define CF_REBALANCE_MAX_LINE_BYTES (1 << 20)
/* Defaults (docs/spot.md "Dynamic batching"). */
#define CF_REBALANCE_DEAD_BAND 0.03
#define CF_REBALANCE_WINDOW 20
#define CF_REBALANCE_GAIN 1.2
#define CF_REBALANCE_SMOOTHING 0.5
#define CF_REBALANCE_KP 0.8
#define CF_REBALANCE_KI 0.2

typedef enum { CF_REBALANCE_P = 0, CF_REBALANCE_PI = 1 } cf_rebalance_kind;

typedef struct {
    cf_rebalance_kind kind;
    double dead_band;          /* relative, e.g. 0.05 */
    int window;                /* iterations averaged per update */
    double gain;               /* P: fraction of the step taken, (0, 2) */
    double smoothing;          /* P: weight of the newest speed estimate, (0, 1] */
    double kp, ki;             /* PI gains */
} cf_rebalance_settings;

cf_rebalance_settings cf_rebalance_defaults(void);

typedef struct {
    cf_rebalance_settings s;
    int n;
    long global_batch;
    int batch[CF_REBALANCE_MAX_WORKERS];
    int max_batch[CF_REBALANCE_MAX_WORKERS];       /* 0 = no limit */
    double speed[CF_REBALANCE_MAX_WORKERS];        /* smoothed samples/s (P) */
    double integral[CF_REBALANCE_MAX_WORKERS];     /* PI */
    double sum_t[CF_REBALANCE_MAX_WORKERS];        /* the window so far */
    int in_window;
    double last_t[CF_REBALANCE_MAX_WORKERS];       /* the last window's mean times */
    double imbalance;                              /* slowest / fastest − 1, the last window's mean times */
    double predicted_imbalance;                    /* the same from the smoothed speeds (the dead band's test) */
    int updates, changes;
} cf_rebalance;

/* initial: per-worker batches summing to global_batch (NULL = as equal as
 * integers allow); max_batch: limits (NULL = none); settings NULL = the
 * defaults. CF_ERR_INVALID for impossible inputs (naming them). */
cf_status cf_rebalance_init(cf_rebalance *c, int workers, long global_batch, const int *initial,
                            const int *max_batch, const cf_rebalance_settings *settings);
/* One iteration's per-worker times (seconds, > 0). Returns 1 when this
 * call ended a window and the batches changed, 0 otherwise; the current
 * batches are always in c->batch. CF_ERR_INVALID as a negative value for
 * a non-positive time (the message names the worker). */
int cf_rebalance_observe(cf_rebalance *c, const double *times_s);

/* ---- the JSON-lines protocol (advisor/rebalance_lines.c) ----------------
 * One line in per training iteration, {"times_s": [0.31, 0.12]} (seconds
 * per worker, in worker order); one line out for each,
 * {"batches": [64, 192], "changed": true, "updates": 1, "imbalance": 0.41}.
 * Blank lines carry nothing. */

/* Whether `line` is only white space. */
int cf_rebalance_line_blank(const char *line);
/* The n per-worker times of one input line; CF_ERR_INVALID naming
 * "SOURCE:NUMBER" (and the worker) for anything else. */
cf_status cf_rebalance_read_line(const char *line, const char *source, long number, int n, double *times_s);
/* The answer line (with its newline) after an observation that returned
 * `changed`. */
void cf_rebalance_answer(const cf_rebalance *c, int changed, cf_buf *out);

#endif
