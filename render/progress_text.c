#include "cloudfit/render/progress_text.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define BAR_CELLS 20

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

void cf_progress_text(const cf_progress_view *p, int bar, int width, char *out, size_t n)
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
    double elapsed = p->elapsed_s;
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
                 eta[0] ? "  " : "", eta, (p->what && p->what[0]) ? "  " : "", p->what ? p->what : "");
        clip(out, width - 1);
    } else {
        char pct[16] = "";
        if (p->total > 0)
            snprintf(pct, sizeof pct, " (%.0f%%)", 100 * fmin(1, p->done / p->total));
        snprintf(out, n, "%s: %s%s%s%s%s%s%s%s", p->label, count, pct, rate[0] ? ", " : "", rate, eta[0] ? ", " : "",
                 eta, (p->what && p->what[0]) ? ": " : "", p->what ? p->what : "");
    }
}

