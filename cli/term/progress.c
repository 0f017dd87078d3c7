#include "term/progress.h"
#include "term/terminal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "cloudfit/common/env_settings.h"
#include "cloudfit/common/number.h"
#include "cloudfit/render/progress_text.h"

#define REDRAW_S 0.1

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int stderr_columns(void) { return cf_cli_terminal_columns(STDERR_FILENO); }

void cf_cli_progress_begin(cf_cli_progress *p, const cf_cli_options *o, const char *label)
{
    memset(p, 0, sizeof *p);
    snprintf(p->label, sizeof p->label, "%s", label);
    const char *term = getenv("TERM");
    if ((o && o->quiet) || cf_log_verbosity() < 0)
        p->mode = CF_PROGRESS_OFF;
    else if (isatty(STDERR_FILENO) && !(term && strcmp(term, "dumb") == 0))
        p->mode = CF_PROGRESS_BAR;
    else
        p->mode = CF_PROGRESS_LINES;
    p->interval_s = 5;
    cf_env_setting("CLOUDFIT_PROGRESS_INTERVAL_S", &p->interval_s);
    p->started_s = now_s();
    p->last_draw_s = -INFINITY;
}

/* The display's text at `now` (render/progress_text.c). */
static void format(const cf_cli_progress *p, double now, int bar, int width, char *out, size_t n)
{
    cf_progress_view view = {.label = p->label, .at_most = p->at_most, .elapsed_s = now - p->started_s,
                             .done = p->done, .total = p->total, .unit = p->unit, .what = p->what};
    cf_progress_text(&view, bar, width, out, n);
}

static void draw(cf_cli_progress *p, double now)
{
    char line[512];
    if (p->mode == CF_PROGRESS_BAR) {
        format(p, now, 1, stderr_columns(), line, sizeof line);
        fprintf(stderr, "\r\033[K%s", line);
        fflush(stderr);
        p->drawn = 1;
    } else {
        format(p, now, 0, 0, line, sizeof line);
        fprintf(stderr, "%s\n", line);
        fflush(stderr);
        p->printed_any = 1;
    }
    p->last_draw_s = now;
}

void cf_cli_progress_update(cf_cli_progress *p, double done, double total, const char *unit, const char *what)
{
    if (p->mode == CF_PROGRESS_OFF)
        return;
    double now = now_s();
    unit = unit ? unit : "";
    what = what ? what : "";
    if (done == p->done && total == p->total && strcmp(unit, p->unit) == 0 && strncmp(what, p->what, sizeof p->what - 1) == 0 &&
        (p->drawn || p->printed_any))
        return; /* nothing new (libcurl reports the same count again and again) */
    int reset = strcmp(unit, p->unit) != 0 || done < p->done;
    if (reset) /* a new phase (or a new download): a new rate */
        p->started_s = now;
    snprintf(p->unit, sizeof p->unit, "%s", unit);
    snprintf(p->what, sizeof p->what, "%s", what ? what : "");
    for (char *c = p->what; *c; c++) /* text from outside (a runner, a script) never moves the cursor */
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    int finished = total > 0 && done >= total && (p->done < total || reset);
    p->done = done;
    p->total = total;
    int due;
    if (p->mode == CF_PROGRESS_BAR)
        due = reset || finished || now - p->last_draw_s >= REDRAW_S;
    else /* the first line, then periodic ones, and the end of a count (not of every download) */
        due = !p->printed_any || now - p->last_draw_s >= p->interval_s ||
              (finished && strcmp(p->unit, "bytes") != 0);
    if (due)
        draw(p, now);
}

void cf_cli_progress_note(cf_cli_progress *p, const char *line)
{
    if (p->mode == CF_PROGRESS_OFF)
        return;
    if (p->mode == CF_PROGRESS_BAR && p->drawn)
        fputs("\r\033[K", stderr);
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
    if (p->mode == CF_PROGRESS_BAR && p->drawn && p->unit[0])
        draw(p, now_s());
}

void cf_cli_progress_end(cf_cli_progress *p)
{
    if (p->mode == CF_PROGRESS_BAR && p->drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    p->drawn = 0;
    p->mode = CF_PROGRESS_OFF;
}

void cf_cli_progress_count_cb(void *ctx, double done, double total, const char *unit, const char *what)
{
    cf_cli_progress_update(ctx, done, total, unit, what);
}

void cf_cli_progress_runs_cb(void *ctx, int done, int total, const char *what)
{
    cf_cli_progress_update(ctx, done, total, "runs", what);
}

void cf_cli_progress_line_cb(void *ctx, const char *line)
{
    cf_cli_progress_note(ctx, line);
}
