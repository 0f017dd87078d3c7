/* Progress of a long command on stderr, the one helper `profile`, `search`,
 * `prices update` and `validate` use: on a terminal a bar with the count,
 * the rate and the time left, redrawn in place (at most 10 times a second);
 * otherwise plain lines, the first at once and then one every
 * CLOUDFIT_PROGRESS_INTERVAL_S seconds (default 5; 0 = every update) and
 * the last; nothing with -q. Library functions report through callbacks
 * (cloudfit/common/progress.h); the adapters below fit them. */
#ifndef CLOUDFIT_CLI_PROGRESS_H
#define CLOUDFIT_CLI_PROGRESS_H
#include "options.h"

typedef enum { CF_PROGRESS_OFF, CF_PROGRESS_BAR, CF_PROGRESS_LINES } cf_progress_mode;

typedef struct {
    cf_progress_mode mode;
    char label[32];            /* "profile", "search", ... */
    int at_most;               /* totals are upper bounds: "≤ N" */
    double interval_s;         /* lines mode */
    double started_s;          /* of the current phase (unit and total) */
    double last_draw_s;
    int drawn;                 /* a bar is on the screen */
    int printed_any;           /* lines mode: something was printed */
    double done, total;
    char unit[16];
    char what[160];
} cf_cli_progress;

/* Starts a display labelled `label`; the mode follows -q, whether stderr is
 * a terminal and TERM=dumb. */
void cf_cli_progress_begin(cf_cli_progress *p, const cf_cli_options *o, const char *label);
/* `done` of `total` `unit` finished, `what` under way (see cf_progress_count_fn). */
void cf_cli_progress_update(cf_cli_progress *p, double done, double total, const char *unit, const char *what);
/* A message line as it is (a phase, a retry): the bar steps aside for it. */
void cf_cli_progress_note(cf_cli_progress *p, const char *line);
/* Clears the bar (the lines mode prints the last count if it was not yet). */
void cf_cli_progress_end(cf_cli_progress *p);

/* Adapters: ctx is a cf_cli_progress. */
void cf_cli_progress_count_cb(void *ctx, double done, double total, const char *unit, const char *what);
/* cf_profile_progress_fn: run `done` of `total` is starting, `what` says which. */
void cf_cli_progress_runs_cb(void *ctx, int done, int total, const char *what);
/* cf_progress_fn (pricing): a line. */
void cf_cli_progress_line_cb(void *ctx, const char *line);

#endif
