/* The text of a progress display (render/progress_text.c): what the bar
 * or the line says of a long operation's count, rate and time left. The
 * CLI owns the terminal (when to draw, redrawing in place, -q:
 * cli/term/progress.c); this is the bytes it draws. */
#ifndef CLOUDFIT_RENDER_PROGRESS_TEXT_H
#define CLOUDFIT_RENDER_PROGRESS_TEXT_H
#include <stddef.h>

typedef struct {
    const char *label;  /* "profile", "search", ... */
    int at_most;        /* totals are upper bounds: "≤ N" */
    double elapsed_s;   /* since the current phase (unit and total) began */
    double done, total; /* total 0 = not known */
    const char *unit;   /* "runs", "rows", "bytes" (shown as kB, MB, ...) */
    const char *what;   /* the step under way; NULL or "" = none */
} cf_progress_view;

/* "label [####......] 12/40 runs  3.1 runs/s  ETA 9 s  what" (bar, cut to
 * `width` − 1 display columns, whole UTF-8 characters) or "label: 12/40
 * runs (30%), 3.1 runs/s, ETA 9 s: what" (line). Before anything is done,
 * how long it has been going instead of the rate. */
void cf_progress_text(const cf_progress_view *p, int bar, int width, char *out, size_t n);

#endif
