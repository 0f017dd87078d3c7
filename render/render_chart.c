/* The time–cost front as a compact text chart, for `recommend` on a
 * terminal (after the table): one character per configuration, the chosen
 * one marked, the deadline and budget as dotted lines. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/number.h"
#include "cloudfit/common/svg.h"
#include "cloudfit/render/plots.h"

#define GREEN_BOLD "\033[1;32m"
#define DIM "\033[2m"
#define RESET "\033[0m"

enum { EMPTY = ' ', DEADLINE = ':', BUDGET = '.', ONDEMAND = 'o', SPOT = '^', CHOSEN = '@' };

static int cell(const cf_svg_scale *s, double v, int cells)
{
    int i = (int)lround(cf_svg_map(s, v));
    return i < 0 ? 0 : i >= cells ? cells - 1 : i;
}

void cf_report_front_chart(const cf_report_plots *p, int width, int height, int color, cf_buf *out)
{
    if (p->n_front == 0 || width < 10 || height < 3)
        return;
    double x0 = INFINITY, x1 = 0, y0 = INFINITY, y1 = 0;
    for (size_t i = 0; i < p->n_front; i++) {
        x0 = fmin(x0, p->front[i].hours);
        x1 = fmax(x1, p->front[i].hours);
        y0 = fmin(y0, p->front[i].usd);
        y1 = fmax(y1, p->front[i].usd);
    }
    x0 = fmin(x0, p->chosen.hours);
    x1 = fmax(x1, p->chosen.hours);
    y0 = fmin(y0, p->chosen.usd);
    y1 = fmax(y1, p->chosen.usd);
    int show_deadline = p->deadline_hours > 0 && p->deadline_hours <= 1.5 * x1;
    int show_budget = p->budget_usd > 0 && p->budget_usd <= 1.5 * y1;
    if (show_deadline)
        x1 = fmax(x1, p->deadline_hours);
    if (show_budget)
        y1 = fmax(y1, p->budget_usd);
    int x_log = cf_svg_prefer_log(x0, x1, 20), y_log = cf_svg_prefer_log(y0, y1, 20);
    cf_svg_scale xs = cf_svg_scale_make(x0, x1, 0, width - 1, x_log);
    cf_svg_scale ys = cf_svg_scale_make(y0, y1, height - 1, 0, y_log);
    char *grid = malloc((size_t)width * (size_t)height);
    if (!grid) {
        out->failed = 1;
        return;
    }
    memset(grid, EMPTY, (size_t)width * (size_t)height);
    if (show_deadline) {
        int c = cell(&xs, p->deadline_hours, width);
        for (int r = 0; r < height; r++)
            grid[r * width + c] = DEADLINE;
    }
    if (show_budget) {
        int r = cell(&ys, p->budget_usd, height);
        for (int c = 0; c < width; c++)
            grid[r * width + c] = grid[r * width + c] == DEADLINE ? '+' : BUDGET;
    }
    for (size_t i = 0; i < p->n_front; i++) {
        char *g = &grid[cell(&ys, p->front[i].usd, height) * width + cell(&xs, p->front[i].hours, width)];
        if (*g != CHOSEN && *g != ONDEMAND && *g != SPOT)
            *g = p->front[i].config->spot ? SPOT : ONDEMAND;
    }
    grid[cell(&ys, p->chosen.usd, height) * width + cell(&xs, p->chosen.hours, width)] = CHOSEN;

    char top[32], bottom[32], left[32], right[32];
    cf_svg_format_tick(ys.d1, "$", top, sizeof top);
    cf_svg_format_tick(ys.d0, "$", bottom, sizeof bottom);
    /* sub-hour jobs in minutes: "0.166 … 0.174 hours" says less than "10.0 … 10.4 minutes" */
    int minutes = xs.d1 < 1;
    cf_svg_format_tick(minutes ? xs.d0 * 60 : xs.d0, NULL, left, sizeof left);
    cf_svg_format_tick(minutes ? xs.d1 * 60 : xs.d1, NULL, right, sizeof right);
    int label_w = (int)fmax(strlen(top), strlen(bottom));
    cf_buf_printf(out, "\nTime vs cost, the Pareto front (%zu configurations)\n%*s  %s chosen, o on-demand, ^ spot",
                  p->n_front, label_w, "", color ? GREEN_BOLD "@" RESET : "@");
    char deadline[48], budget[48]; /* as given, never "1e+06" */
    cf_number_plain_text(p->deadline_hours, CF_NUMBER_AS_GIVEN, deadline, sizeof deadline);
    cf_number_plain_text(p->budget_usd, CF_NUMBER_AS_GIVEN, budget, sizeof budget);
    if (show_deadline)
        cf_buf_printf(out, ", : deadline %s h", deadline);
    if (show_budget)
        cf_buf_printf(out, ", . budget $%s", budget);
    cf_buf_puts(out, "\n");
    for (int r = 0; r < height; r++) {
        const char *label = r == 0 ? top : r == height - 1 ? bottom : "";
        cf_buf_printf(out, "%*s |", label_w, label);
        int dim = 0;
        for (int c = 0; c < width; c++) {
            char ch = grid[r * width + c];
            int line = ch == DEADLINE || ch == BUDGET || ch == '+';
            if (color && line != dim) {
                cf_buf_puts(out, line ? DIM : RESET);
                dim = line;
            }
            if (color && ch == CHOSEN) {
                cf_buf_puts(out, GREEN_BOLD "@" RESET);
                if (dim)
                    cf_buf_puts(out, DIM);
            } else {
                cf_buf_append(out, &ch, 1);
            }
        }
        if (color && dim)
            cf_buf_puts(out, RESET);
        /* no trailing blanks */
        while (out->len > 0 && out->data[out->len - 1] == ' ')
            out->data[--out->len] = '\0';
        cf_buf_puts(out, "\n");
    }
    cf_buf_printf(out, "%*s +", label_w, "");
    for (int c = 0; c < width; c++)
        cf_buf_puts(out, "-");
    cf_buf_puts(out, "\n");
    char axis[64];
    snprintf(axis, sizeof axis, "%s%s", minutes ? "minutes" : "hours", x_log ? " (log)" : "");
    int inner = width - (int)strlen(left) - (int)strlen(right);
    int pad_l = (inner - (int)strlen(axis)) / 2;
    if (pad_l < 1)
        pad_l = 1;
    int pad_r = inner - pad_l - (int)strlen(axis);
    if (pad_r < 1)
        pad_r = 1;
    cf_buf_printf(out, "%*s  %s%*s%s%*s%s\n", label_w, "", left, pad_l, "", axis, pad_r, "", right);
    if (y_log)
        cf_buf_printf(out, "%*s  (cost on a log scale)\n", label_w, "");
    /* limits too far off to draw are named, as the SVG's legend names them */
    int far_deadline = p->deadline_hours > 0 && !show_deadline, far_budget = p->budget_usd > 0 && !show_budget;
    if (far_deadline && far_budget)
        cf_buf_printf(out, "%*s  (deadline %s h and budget $%s: beyond the chart)\n", label_w, "", deadline, budget);
    else if (far_deadline)
        cf_buf_printf(out, "%*s  (deadline %s h: beyond the chart)\n", label_w, "", deadline);
    else if (far_budget)
        cf_buf_printf(out, "%*s  (budget $%s: beyond the chart)\n", label_w, "", budget);
    free(grid);
}
