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
#include "cloudfit/common/number.h"

#define BAR_CELLS 20
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
    const char *env = getenv("CLOUDFIT_PROGRESS_INTERVAL_S");
    if (env && *env) {
        double v = 0;
        if (cf_number_double(env, 0, 86400, &v) == CF_NUMBER_OK)
            p->interval_s = v;
    }
    p->started_s = now_s();
    p->last_draw_s = -INFINITY;
}

/* 12345678 bytes → "12.3 MB". */
static void bytes_text(double v, char *out, size_t n)
{
    static const char *units[] = {"B", "kB", "MB", "GB", "TB"};
    int u = 0;
    while (v >= 1000 && u < 4) {
        v /= 1000;
        u++;
    }
    snprintf(out, n, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
}

static void duration_text(double s, char *out, size_t n)
{
    if (s < 60)
        snprintf(out, n, "%.0f s", ceil(s));
    else if (s < 3600)
        snprintf(out, n, "%d min %02d s", (int)(s / 60), (int)fmod(s, 60));
    else
        snprintf(out, n, "%d h %02d min", (int)(s / 3600), (int)fmod(s / 60, 60));
}

/* Cuts `s` to at most `width` display columns (UTF-8: whole characters). */
static void clip(char *s, int width)
{
    int cols = 0;
    for (char *c = s; *c; c++) {
        if (((unsigned char)*c & 0xC0) != 0x80) {
            if (cols == width) {
                *c = '\0';
                return;
            }
            cols++;
        }
    }
}

void cf_cli_progress_format(const cf_cli_progress *p, double now, int bar, int width, char *out, size_t n)
{
    int bytes = strcmp(p->unit, "bytes") == 0;
    char count[96], rate[48] = "", eta[48] = "", a[32], b[32];
    const char *le = p->at_most ? "≤ " : "";
    if (bytes) {
        bytes_text(p->done, a, sizeof a);
        bytes_text(p->total, b, sizeof b);
        if (p->total > 0)
            snprintf(count, sizeof count, "%s of %s%s", a, le, b);
        else
            snprintf(count, sizeof count, "%s", a);
    } else if (p->total > 0) {
        snprintf(count, sizeof count, "%.0f/%s%.0f %s", p->done, le, p->total, p->unit);
    } else {
        snprintf(count, sizeof count, "%.0f %s", p->done, p->unit);
    }
    double elapsed = now - p->started_s;
    double per_s = elapsed > 0.2 && p->done > 0 ? p->done / elapsed : 0;
    if (per_s > 0) {
        if (bytes) {
            bytes_text(per_s, a, sizeof a);
            snprintf(rate, sizeof rate, "%s/s", a);
        } else if (per_s >= 100) {
            snprintf(rate, sizeof rate, "%.0f %s/s", per_s, p->unit);
        } else if (per_s >= 1) {
            snprintf(rate, sizeof rate, "%.1f %s/s", per_s, p->unit);
        } else {
            snprintf(rate, sizeof rate, "%.1f %s/min", per_s * 60, p->unit);
        }
        if (p->total > p->done) {
            duration_text((p->total - p->done) / per_s, a, sizeof a);
            snprintf(eta, sizeof eta, "ETA %s%s", le, a);
        }
    }
    if (!rate[0] && elapsed >= 1) { /* nothing finished yet: how long it has been going */
        duration_text(elapsed, a, sizeof a);
        snprintf(rate, sizeof rate, "%s so far", a);
    }
    if (bar) {
        char cells[BAR_CELLS + 1];
        int filled = p->total > 0 ? (int)(BAR_CELLS * fmin(1, p->done / p->total)) : 0;
        for (int i = 0; i < BAR_CELLS; i++)
            cells[i] = p->total > 0 ? (i < filled ? '#' : '.') : '-';
        cells[BAR_CELLS] = '\0';
        snprintf(out, n, "%s [%s] %s%s%s%s%s%s%s", p->label, cells, count, rate[0] ? "  " : "", rate,
                 eta[0] ? "  " : "", eta, p->what[0] ? "  " : "", p->what);
        clip(out, width - 1);
    } else {
        char pct[16] = "";
        if (p->total > 0)
            snprintf(pct, sizeof pct, " (%.0f%%)", 100 * fmin(1, p->done / p->total));
        snprintf(out, n, "%s: %s%s%s%s%s%s%s%s", p->label, count, pct, rate[0] ? ", " : "", rate, eta[0] ? ", " : "",
                 eta, p->what[0] ? ": " : "", p->what);
    }
}

static void draw(cf_cli_progress *p, double now)
{
    char line[512];
    if (p->mode == CF_PROGRESS_BAR) {
        cf_cli_progress_format(p, now, 1, stderr_columns(), line, sizeof line);
        fprintf(stderr, "\r\033[K%s", line);
        fflush(stderr);
        p->drawn = 1;
    } else {
        cf_cli_progress_format(p, now, 0, 0, line, sizeof line);
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
