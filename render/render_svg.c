/* The plots of a recommendation as SVG, drawn with common/svg.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/number.h"
#include "cloudfit/common/svg.h"
#include "cloudfit/render/plots.h"

#define LEGEND_WIDTH 200.0
#define INK "#222222"

static void money(double usd, char *out, size_t n)
{
    if (usd >= 100)
        snprintf(out, n, "$%.0f", usd);
    else
        snprintf(out, n, "$%.2f", usd);
}

static void describe(const cf_plot_point *pt, cf_buf *out)
{
    const cf_config *c = pt->config;
    char usd[32];
    money(pt->usd, usd, sizeof usd);
    char h[48], lo[48], hi[48];
    cf_number_plain_text(pt->hours, 3, h, sizeof h);
    cf_buf_printf(out, "%s: %d × %s (%d×%s) on %s/%s, %s: %s h, %s", pt->chosen ? "chosen" : "front", c->nodes,
                  c->vm->instance_type, c->gpus_per_node, c->vm->gpu_model, c->vm->cloud, c->vm->region,
                  c->spot ? cf_config_capacity_label(c) : "on-demand", h, usd); /* spot+od as every format says it */
    if (pt->hours_p10 > 0) {
        cf_number_plain_text(pt->hours_p10, 3, lo, sizeof lo);
        cf_number_plain_text(pt->hours_p90, 3, hi, sizeof hi);
        cf_buf_printf(out, " (80%% interval %s–%s h", lo, hi);
        if (pt->usd_p10 > 0) { /* the cost's too, as the whiskers and every other format give it */
            char usd_lo[32], usd_hi[32];
            money(pt->usd_p10, usd_lo, sizeof usd_lo);
            money(pt->usd_p90, usd_hi, sizeof usd_hi);
            cf_buf_printf(out, ", %s–%s", usd_lo, usd_hi);
        }
        cf_buf_puts(out, ")");
    }
}

/* data-* attributes that name a configuration, for readers and tests. */
static void point_attrs(const cf_plot_point *pt, const char *cls, cf_buf *out)
{
    const cf_config *c = pt->config;
    cf_svg_attr(out, "class", cls);
    cf_svg_attr_num(out, "data-hours", pt->hours);
    cf_svg_attr_num(out, "data-usd", pt->usd);
    cf_svg_attr(out, "data-gpu", c->vm->gpu_model);
    cf_svg_attr(out, "data-cloud", c->vm->cloud);
    cf_svg_attr(out, "data-region", c->vm->region);
    cf_svg_attr(out, "data-instance", c->vm->instance_type);
    cf_svg_attr_num(out, "data-nodes", c->nodes);
    cf_svg_attr(out, "data-spot", c->spot ? "true" : "false");
    if (pt->hours_p10 > 0) {
        cf_svg_attr_num(out, "data-hours-p10", pt->hours_p10);
        cf_svg_attr_num(out, "data-hours-p90", pt->hours_p90);
    }
    if (pt->usd_p10 > 0) {
        cf_svg_attr_num(out, "data-usd-p10", pt->usd_p10);
        cf_svg_attr_num(out, "data-usd-p90", pt->usd_p90);
    }
    if (pt->chosen)
        cf_buf_puts(out, " data-chosen=\"true\"");
}

static void extend(double *lo, double *hi, double v)
{
    if (v > 0 && isfinite(v)) {
        if (v < *lo)
            *lo = v;
        if (v > *hi)
            *hi = v;
    }
}

static void range_of(const cf_report_plots *p, int hours, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    const cf_plot_point *pts[2] = {p->front, &p->chosen};
    size_t counts[2] = {p->n_front, 1};
    for (size_t k = 0; k < 2; k++)
        for (size_t i = 0; i < counts[k]; i++) {
            const cf_plot_point *pt = &pts[k][i];
            extend(lo, hi, hours ? pt->hours : pt->usd);
            extend(lo, hi, hours ? pt->hours_p10 : pt->usd_p10);
            extend(lo, hi, hours ? pt->hours_p90 : pt->usd_p90);
        }
}


static void legend_row(cf_buf *out, double x, double *y, cf_svg_shape shape, const cf_svg_style *st, const char *text)
{
    cf_svg_marker(out, shape, x + 8, *y - 4, 10, st, NULL, NULL);
    cf_svg_text(out, x + 22, *y, CF_SVG_START, 11, text, NULL);
    *y += 18;
}

static void legend_line(cf_buf *out, double x, double *y, const cf_svg_style *st, const char *text)
{
    cf_svg_line(out, x, *y - 4, x + 16, *y - 4, st, NULL);
    cf_svg_text(out, x + 22, *y, CF_SVG_START, 11, text, NULL);
    *y += 18;
}


/* ---- labels that avoid the points and each other --------------------------------------- */

/* A box in user units. */
typedef struct {
    double x0, y0, x1, y1;
} label_box;

/* What a label must not cover: markers, and the labels placed so far. */
typedef struct {
    label_box *items;
    size_t n, cap;
} obstacles;

static void add_box(obstacles *o, label_box b)
{
    if (o->n == o->cap) {
        size_t cap = o->cap ? 2 * o->cap : 32;
        label_box *items = realloc(o->items, cap * sizeof *items);
        if (!items)
            return; /* placement then only avoids what it knows */
        o->items = items;
        o->cap = cap;
    }
    o->items[o->n++] = b;
}

static label_box around(double x, double y, double half)
{
    return (label_box){x - half, y - half, x + half, y + half};
}

/* The box a text of `size` takes at (x, y) with its anchor: DejaVu Sans,
 * the plots' font, is about 0.64 em wide per character (digits and
 * capitals, the widest of what labels hold), 0.93 em above the baseline
 * and 0.24 em below. */
static label_box text_box(double x, double y, cf_svg_anchor anchor, double size, const char *text)
{
    double w = 0.64 * size * (double)cf_utf8_width(text);
    double x0 = anchor == CF_SVG_START ? x : anchor == CF_SVG_END ? x - w : x - w / 2;
    return (label_box){x0, y - 0.93 * size, x0 + w, y + 0.24 * size};
}

/* The caption above a plot, at 13 units, smaller where a long one (an
 * instance type's name) would run past the picture's right edge. */
static void caption(cf_buf *out, const char *text)
{
    double size = 13, room = CF_PLOT_WIDTH - 70 - 10;
    label_box b = text_box(70, 14, CF_SVG_START, size, text);
    if (b.x1 - b.x0 > room)
        size = fmax(8, size * room / (b.x1 - b.x0));
    cf_svg_text(out, 70, 14, CF_SVG_START, size, text, " class=\"caption\" font-weight=\"bold\"");
}

/* A marker's label: below right of it, or left of it where it would run
 * past the plot's right edge (the chosen node count is often the last),
 * above it where it would run below the bottom. */
static void marker_label(cf_buf *out, const cf_svg_plot *plot, double x, double y, const char *text)
{
    cf_svg_anchor a = CF_SVG_START;
    double tx = x + 12, ty = y + 18;
    if (text_box(tx, ty, a, 12, text).x1 > plot->left + plot->width - 2)
        a = CF_SVG_END, tx = x - 12;
    if (ty + 0.24 * 12 > plot->top + plot->height - 2)
        ty = y - 12;
    cf_svg_text(out, tx, ty, a, 12, text, " class=\"chosen-label\" font-weight=\"bold\"");
}

static int overlaps(label_box a, label_box b)
{
    return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

static double box_gap(label_box a, label_box b)
{
    double dx = fmax(fmax(a.x0 - b.x1, b.x0 - a.x1), 0), dy = fmax(fmax(a.y0 - b.y1, b.y0 - a.y1), 0);
    return sqrt(dx * dx + dy * dy);
}

/* Whether a label box fits inside the plot area and covers nothing. */
static int free_at(const cf_svg_plot *plot, const obstacles *o, label_box b)
{
    if (b.x0 < plot->left + 2 || b.x1 > plot->left + plot->width - 2 || b.y0 < plot->top + 2 ||
        b.y1 > plot->top + plot->height - 2)
        return 0;
    for (size_t i = 0; i < o->n; i++)
        if (overlaps(b, o->items[i]))
            return 0;
    return 1;
}

/* Where the deadline's label goes: beside its line, from the top down,
 * left of it first. */
static void place_deadline_label(const cf_svg_plot *plot, obstacles *o, double x, const char *text, double *lx,
                                 double *ly, cf_svg_anchor *anchor)
{
    for (double y = plot->top + 14; y < plot->top + plot->height; y += 13)
        for (int side = 0; side < 2; side++) {
            cf_svg_anchor a = side == 0 ? CF_SVG_END : CF_SVG_START;
            double tx = side == 0 ? x - 4 : x + 4;
            label_box b = text_box(tx, y, a, 11, text);
            if (free_at(plot, o, b)) {
                *lx = tx, *ly = y, *anchor = a;
                add_box(o, b);
                return;
            }
        }
    *lx = x - 4, *ly = plot->top + 14, *anchor = CF_SVG_END;
}

/* Where the budget's label goes: above its line, from the right end
 * leftwards, then below it. */
static void place_budget_label(const cf_svg_plot *plot, obstacles *o, double y, const char *text, double *lx,
                               double *ly)
{
    double right = plot->left + plot->width;
    for (int below = 0; below < 2; below++)
        for (double x = right - 4; x > plot->left + 40; x -= 12) {
            double ty = below ? y + 14 : y - 5;
            label_box b = text_box(x, ty, CF_SVG_END, 11, text);
            if (free_at(plot, o, b)) {
                *lx = x, *ly = ty;
                add_box(o, b);
                return;
            }
        }
    *lx = right - 4, *ly = y - 5;
}

/* The "chosen" label: the nearest free place around the ring (eight
 * directions, farther out step by step) that is nearer the ring than any
 * other point, so it cannot be read as another point's; a leader line
 * joins it to the ring when it is not right beside it. */
static void chosen_label(cf_buf *out, const cf_svg_plot *plot, obstacles *o, const label_box *points, size_t n_points,
                         double x, double y)
{
    static const double dirs[8][2] = {{1, -1}, {1, 0}, {1, 1}, {0, 1}, {-1, 1}, {-1, 0}, {-1, -1}, {0, -1}};
    const char *text = "chosen";
    label_box ring = around(x, y, 11);
    for (double r = 14; r <= 120; r += 10)
        for (int d = 0; d < 8; d++) {
            double dx = dirs[d][0], dy = dirs[d][1];
            cf_svg_anchor a = dx > 0 ? CF_SVG_START : dx < 0 ? CF_SVG_END : CF_SVG_MIDDLE;
            double tx = x + dx * r, ty = y + dy * r + (dy > 0 ? 12 : dy == 0 ? 4 : 0);
            label_box b = text_box(tx, ty, a, 12, text);
            if (!free_at(plot, o, b))
                continue;
            double own = box_gap(b, ring);
            int nearer_other = 0;
            for (size_t i = 0; i < n_points && !nearer_other; i++)
                nearer_other = !overlaps(points[i], ring) && box_gap(b, points[i]) <= own;
            if (nearer_other)
                continue;
            if (own > 6) { /* the leader: from the ring's edge to the label */
                double cx = fmin(fmax(x, b.x0), b.x1), cy = fmin(fmax(y, b.y0), b.y1);
                double len = hypot(cx - x, cy - y);
                cf_svg_line(out, x + (cx - x) * 11 / len, y + (cy - y) * 11 / len, cx, cy,
                            &(cf_svg_style){.stroke = "#111111", .stroke_width = 1}, " class=\"chosen-leader\"");
            }
            cf_svg_text(out, tx, ty, a, 12, text, " class=\"chosen-label\" font-weight=\"bold\"");
            add_box(o, b);
            return;
        }
    cf_svg_text(out, x + 14, y - 10, CF_SVG_START, 12, text, " class=\"chosen-label\" font-weight=\"bold\"");
}

void cf_render_front_svg(const cf_report_plots *p, cf_buf *out)
{
    double x0, x1, y0, y1;
    range_of(p, 1, &x0, &x1);
    range_of(p, 0, &y0, &y1);
    /* The deadline and budget lines join the ranges unless they would
     * squeeze the points into a corner (then the legend says where they are). */
    int show_deadline = p->deadline_hours > 0 && p->deadline_hours <= 3 * x1;
    int show_budget = p->budget_usd > 0 && p->budget_usd <= 3 * y1;
    if (show_deadline)
        extend(&x0, &x1, p->deadline_hours);
    if (show_budget)
        extend(&y0, &y1, p->budget_usd);
    int x_log = cf_svg_prefer_log(x0, x1, 20), y_log = cf_svg_prefer_log(y0, y1, 20);
    if (!x_log)
        x0 = 0;
    if (!y_log)
        y0 = 0;
    cf_svg_plot plot = cf_svg_plot_make(CF_PLOT_WIDTH - LEGEND_WIDTH, CF_PLOT_HEIGHT, x0, x1, x_log, y0, y1, y_log);
    cf_buf title = CF_BUF_INIT;
    cf_buf_printf(&title, "%s: predicted time and cost of the Pareto-optimal configurations", p->report->spec->job.name);
    cf_svg_begin(out, CF_PLOT_WIDTH, CF_PLOT_HEIGHT, title.data, " class=\"cloudfit-plot front\"");
    cf_buf_free(&title);
    caption(out, "Time vs cost: the Pareto front");
    cf_svg_axes(out, &plot, x_log ? "wall time, hours (log scale)" : "wall time, hours", NULL,
                y_log ? "total cost, US$ (log scale)" : "total cost, US$", "$");
    double bottom = plot.top + plot.height, right = plot.left + plot.width;
    char label[96], limit[48];
    if (show_deadline) {
        double x = cf_svg_map(&plot.x, p->deadline_hours);
        cf_buf a = CF_BUF_INIT;
        cf_buf_puts(&a, " class=\"deadline\"");
        cf_svg_attr_num(&a, "data-hours", p->deadline_hours);
        cf_svg_line(out, x, plot.top, x, bottom, &(cf_svg_style){.stroke = "#C0392B", .stroke_width = 1.5, .dash = "6 4"},
                    a.data);
        cf_buf_free(&a);
    }
    if (show_budget) {
        double y = cf_svg_map(&plot.y, p->budget_usd);
        cf_buf a = CF_BUF_INIT;
        cf_buf_puts(&a, " class=\"budget\"");
        cf_svg_attr_num(&a, "data-usd", p->budget_usd);
        cf_svg_line(out, plot.left, y, right, y, &(cf_svg_style){.stroke = "#8E44AD", .stroke_width = 1.5, .dash = "2 3"},
                    a.data);
        cf_buf_free(&a);
    }
    /* The front as a staircase of grey segments, then whiskers, then the points. */
    if (p->n_front > 1) {
        double xs[2], ys[2];
        const cf_svg_style step = {.stroke = "#b0b0b0", .stroke_width = 1};
        cf_svg_group_begin(out, " class=\"front-line\"");
        for (size_t i = 1; i < p->n_front; i++) {
            xs[0] = cf_svg_map(&plot.x, p->front[i - 1].hours);
            ys[0] = cf_svg_map(&plot.y, p->front[i - 1].usd);
            xs[1] = cf_svg_map(&plot.x, p->front[i].hours);
            ys[1] = cf_svg_map(&plot.y, p->front[i].usd);
            cf_svg_polyline(out, xs, ys, 2, &step, NULL);
        }
        cf_svg_group_end(out);
    }
    if (p->have_intervals) {
        cf_svg_group_begin(out, " class=\"whiskers\"");
        for (size_t i = 0; i < p->n_front; i++) {
            const cf_plot_point *pt = &p->front[i];
            double x = cf_svg_map(&plot.x, pt->hours), y = cf_svg_map(&plot.y, pt->usd);
            const cf_svg_style st = {.stroke = cf_svg_palette(pt->gpu), .stroke_width = 1.2, .opacity = 0.7};
            cf_buf a = CF_BUF_INIT;
            cf_buf_puts(&a, " class=\"whisker\"");
            cf_svg_attr_num(&a, "data-hours", pt->hours);
            if (pt->hours_p10 > 0) {
                double xa = cf_svg_map(&plot.x, pt->hours_p10), xb = cf_svg_map(&plot.x, pt->hours_p90);
                cf_svg_line(out, xa, y, xb, y, &st, a.data);
                cf_svg_line(out, xa, y - 3, xa, y + 3, &st, NULL);
                cf_svg_line(out, xb, y - 3, xb, y + 3, &st, NULL);
            }
            if (pt->usd_p10 > 0) {
                double ya = cf_svg_map(&plot.y, pt->usd_p10), yb = cf_svg_map(&plot.y, pt->usd_p90);
                cf_svg_line(out, x, ya, x, yb, &st, a.data);
                cf_svg_line(out, x - 3, ya, x + 3, ya, &st, NULL);
                cf_svg_line(out, x - 3, yb, x + 3, yb, &st, NULL);
            }
            cf_buf_free(&a);
        }
        cf_svg_group_end(out);
    }
    cf_svg_group_begin(out, " class=\"front-points\"");
    for (size_t i = 0; i < p->n_front; i++) {
        const cf_plot_point *pt = &p->front[i];
        cf_buf a = CF_BUF_INIT, tip = CF_BUF_INIT;
        point_attrs(pt, "front-point", &a);
        describe(pt, &tip);
        const cf_svg_style st = {.fill = cf_svg_palette(pt->gpu), .stroke = "#ffffff", .stroke_width = 0.8};
        cf_svg_marker(out, pt->config->spot ? CF_SVG_TRIANGLE : CF_SVG_CIRCLE, cf_svg_map(&plot.x, pt->hours),
                      cf_svg_map(&plot.y, pt->usd), 10, &st, a.data, tip.data);
        cf_buf_free(&a);
        cf_buf_free(&tip);
    }
    cf_svg_group_end(out);
    /* The chosen configuration: a ring around its point, and a label. */
    {
        const cf_plot_point *pt = &p->chosen;
        double x = cf_svg_map(&plot.x, pt->hours), y = cf_svg_map(&plot.y, pt->usd);
        cf_buf a = CF_BUF_INIT, tip = CF_BUF_INIT;
        point_attrs(pt, "chosen-point", &a);
        describe(pt, &tip);
        cf_svg_marker(out, CF_SVG_RING, x, y, 20, &(cf_svg_style){.stroke = "#111111", .stroke_width = 2.5}, a.data,
                      tip.data);
        cf_buf_free(&a);
        cf_buf_free(&tip);
        /* Labels that cover no point and no other label: the chosen one's
         * first, then the deadline's and the budget's beside their lines. */
        obstacles o = {0};
        label_box *points = calloc(p->n_front + 1, sizeof *points);
        for (size_t i = 0; points && i < p->n_front; i++) {
            points[i] = around(cf_svg_map(&plot.x, p->front[i].hours), cf_svg_map(&plot.y, p->front[i].usd), 6);
            add_box(&o, points[i]);
        }
        add_box(&o, around(x, y, 11));
        chosen_label(out, &plot, &o, points, points ? p->n_front : 0, x, y);
        if (show_deadline) {
            double lx, ly;
            cf_svg_anchor anchor;
            cf_number_plain_text(p->deadline_hours, CF_NUMBER_AS_GIVEN, limit, sizeof limit);
            snprintf(label, sizeof label, "deadline %s h", limit);
            place_deadline_label(&plot, &o, cf_svg_map(&plot.x, p->deadline_hours), label, &lx, &ly, &anchor);
            cf_svg_text(out, lx, ly, anchor, 11, label, " class=\"deadline-label\"");
        }
        if (show_budget) {
            double lx, ly;
            cf_number_plain_text(p->budget_usd, CF_NUMBER_AS_GIVEN, limit, sizeof limit);
            snprintf(label, sizeof label, "budget $%s", limit);
            place_budget_label(&plot, &o, cf_svg_map(&plot.y, p->budget_usd), label, &lx, &ly);
            cf_svg_text(out, lx, ly, CF_SVG_END, 11, label, " class=\"budget-label\"");
        }
        free(points);
        free(o.items);
    }
    /* Legend. */
    double lx = CF_PLOT_WIDTH - LEGEND_WIDTH + 10, ly = plot.top + 12;
    cf_svg_group_begin(out, " class=\"legend\"");
    cf_svg_text(out, lx, ly, CF_SVG_START, 11, "GPU type", " font-weight=\"bold\"");
    ly += 18;
    for (size_t i = 0; i < p->n_gpus; i++)
        legend_row(out, lx, &ly, CF_SVG_CIRCLE, &(cf_svg_style){.fill = cf_svg_palette(i)},
                   p->other_gpus && i == CF_PLOT_MAX_GPUS - 1 ? "other GPU types" : p->gpus[i]);
    ly += 6;
    legend_row(out, lx, &ly, CF_SVG_CIRCLE, &(cf_svg_style){.fill = "#777777"}, "on-demand");
    legend_row(out, lx, &ly, CF_SVG_TRIANGLE, &(cf_svg_style){.fill = "#777777"}, "spot");
    legend_row(out, lx, &ly, CF_SVG_RING, &(cf_svg_style){.stroke = "#111111", .stroke_width = 2}, "chosen");
    if (p->have_intervals)
        legend_line(out, lx, &ly, &(cf_svg_style){.stroke = "#777777", .stroke_width = 1.2}, "p10–p90 interval");
    if (p->deadline_hours > 0) {
        cf_number_plain_text(p->deadline_hours, CF_NUMBER_AS_GIVEN, limit, sizeof limit);
        snprintf(label, sizeof label, show_deadline ? "deadline %s h" : "deadline %s h (off the plot)", limit);
        legend_line(out, lx, &ly, &(cf_svg_style){.stroke = "#C0392B", .stroke_width = 1.5, .dash = "6 4"}, label);
    }
    if (p->budget_usd > 0) {
        cf_number_plain_text(p->budget_usd, CF_NUMBER_AS_GIVEN, limit, sizeof limit);
        snprintf(label, sizeof label, show_budget ? "budget $%s" : "budget $%s (off the plot)", limit);
        legend_line(out, lx, &ly, &(cf_svg_style){.stroke = "#8E44AD", .stroke_width = 1.5, .dash = "2 3"}, label);
    }
    snprintf(label, sizeof label, "%zu configurations on the front", p->n_front);
    cf_svg_text(out, lx, ly + 6, CF_SVG_START, 10, label, NULL);
    cf_svg_group_end(out);
    cf_svg_end(out);
}

void cf_render_scaling_svg(const cf_report_plots *p, cf_buf *out)
{
    const cf_config *c = p->chosen.config;
    cf_buf title = CF_BUF_INIT;
    cf_buf_printf(&title, "Throughput vs nodes: %s (%d×%s), %d per GPU × %d accumulation", c->vm->instance_type,
                  c->gpus_per_node, c->vm->gpu_model, c->local_batch, c->accumulation);
    double y1 = 0;
    for (size_t i = 0; i < p->n_scaling; i++)
        y1 = fmax(y1, fmax(p->scaling[i].samples_per_s, p->scaling[i].ideal_samples_per_s));
    int max_nodes = p->n_scaling ? p->scaling[p->n_scaling - 1].nodes : c->nodes;
    cf_svg_plot plot = cf_svg_plot_make(CF_PLOT_WIDTH, CF_PLOT_HEIGHT, 0, max_nodes > 1 ? max_nodes : 2, 0, 0,
                                        y1 > 0 ? y1 * 1.05 : 1, 0);
    plot.x.integer = 1; /* node counts */
    cf_svg_begin(out, CF_PLOT_WIDTH, CF_PLOT_HEIGHT, title.data, " class=\"cloudfit-plot scaling\"");
    caption(out, title.data);
    cf_buf_free(&title);
    cf_svg_axes(out, &plot, "nodes", NULL, "samples per second", NULL);
    if (p->n_scaling == 0) {
        cf_svg_text(out, plot.left + plot.width / 2, plot.top + plot.height / 2, CF_SVG_MIDDLE, 13,
                    "no throughput model for this GPU type", NULL);
        cf_svg_end(out);
        return;
    }
    size_t n = p->n_scaling;
    double *xs = malloc(n * sizeof *xs), *ys = malloc(n * sizeof *ys);
    if (!xs || !ys) {
        free(xs);
        free(ys);
        out->failed = 1; /* out of memory: sticky, like the buffer's own */
        return;
    }
    for (size_t i = 0; i < n; i++) {
        xs[i] = cf_svg_map(&plot.x, p->scaling[i].nodes);
        ys[i] = cf_svg_map(&plot.y, p->scaling[i].ideal_samples_per_s);
    }
    cf_svg_polyline(out, xs, ys, n, &(cf_svg_style){.stroke = "#999999", .stroke_width = 1.5, .dash = "6 4"},
                    " class=\"ideal\"");
    for (size_t i = 0; i < n; i++)
        ys[i] = cf_svg_map(&plot.y, p->scaling[i].samples_per_s);
    cf_svg_polyline(out, xs, ys, n, &(cf_svg_style){.stroke = cf_svg_palette(0), .stroke_width = 2},
                    " class=\"model\"");
    cf_svg_group_begin(out, " class=\"scaling-points\"");
    for (size_t i = 0; i < n; i++) {
        cf_buf a = CF_BUF_INIT, tip = CF_BUF_INIT;
        cf_svg_attr(&a, "class", "scaling-point");
        cf_svg_attr_num(&a, "data-nodes", p->scaling[i].nodes);
        cf_svg_attr_num(&a, "data-samples-per-s", p->scaling[i].samples_per_s);
        char sps[48], h[48];
        cf_number_plain_text(p->scaling[i].samples_per_s, 4, sps, sizeof sps);
        cf_number_plain_text(p->scaling[i].hours, 3, h, sizeof h);
        cf_buf_printf(&tip, "%d node%s: %s samples/s (%.0f%% of linear), %s h of training", p->scaling[i].nodes,
                      p->scaling[i].nodes == 1 ? "" : "s", sps,
                      100 * p->scaling[i].samples_per_s / p->scaling[i].ideal_samples_per_s, h);
        cf_svg_marker(out, CF_SVG_CIRCLE, xs[i], ys[i], 6, &(cf_svg_style){.fill = cf_svg_palette(0)}, a.data, tip.data);
        cf_buf_free(&a);
        cf_buf_free(&tip);
    }
    cf_svg_group_end(out);
    for (size_t i = 0; i < n; i++)
        if (p->scaling[i].nodes == c->nodes) {
            cf_buf a = CF_BUF_INIT;
            cf_svg_attr(&a, "class", "chosen-point");
            cf_svg_attr_num(&a, "data-nodes", c->nodes);
            cf_svg_attr_num(&a, "data-samples-per-s", p->scaling[i].samples_per_s);
            cf_svg_marker(out, CF_SVG_RING, xs[i], ys[i], 18, &(cf_svg_style){.stroke = "#111111", .stroke_width = 2.5},
                          a.data, "chosen node count");
            cf_buf_free(&a);
            marker_label(out, &plot, xs[i], ys[i], "chosen");
        }
    double lx = plot.left + 12, ly = plot.top + 18;
    legend_line(out, lx, &ly, &(cf_svg_style){.stroke = cf_svg_palette(0), .stroke_width = 2}, "predicted throughput");
    legend_line(out, lx, &ly, &(cf_svg_style){.stroke = "#999999", .stroke_width = 1.5, .dash = "6 4"},
                "linear scaling from one node");
    free(xs);
    free(ys);
    cf_svg_end(out);
}

void cf_render_stateff_svg(const cf_report_plots *p, cf_buf *out)
{
    const cf_config *c = p->chosen.config;
    double x0 = INFINITY, x1 = 0, y1 = 1;
    for (size_t i = 0; i < p->n_stateff; i++) {
        x0 = fmin(x0, p->stateff[i].global_batch);
        x1 = fmax(x1, p->stateff[i].global_batch);
        y1 = fmax(y1, p->stateff[i].efficiency);
    }
    if (p->n_stateff == 0) {
        x0 = 1;
        x1 = 2;
    }
    cf_svg_plot plot = cf_svg_plot_make(CF_PLOT_WIDTH, CF_PLOT_HEIGHT, x0, x1, 1, 0, y1 * 1.05, 0);
    cf_svg_begin(out, CF_PLOT_WIDTH, CF_PLOT_HEIGHT, "Statistical efficiency vs global batch",
                 " class=\"cloudfit-plot stateff\"");
    caption(out, "Statistical efficiency vs global batch");
    cf_svg_axes(out, &plot, "global batch (log scale)", NULL, "statistical efficiency (samples at M0 / samples at M)",
                NULL);
    double xs[CF_PLOT_STATEFF_POINTS], ys[CF_PLOT_STATEFF_POINTS];
    for (size_t i = 0; i < p->n_stateff; i++) {
        xs[i] = cf_svg_map(&plot.x, p->stateff[i].global_batch);
        ys[i] = cf_svg_map(&plot.y, p->stateff[i].efficiency);
    }
    double one = cf_svg_map(&plot.y, 1);
    cf_svg_line(out, plot.left, one, plot.left + plot.width, one, &(cf_svg_style){.stroke = "#bbbbbb", .dash = "4 4"},
                NULL);
    cf_svg_polyline(out, xs, ys, p->n_stateff, &(cf_svg_style){.stroke = cf_svg_palette(2), .stroke_width = 2},
                    " class=\"model\"");
    char label[96];
    cf_buf a = CF_BUF_INIT;
    cf_svg_attr(&a, "class", "recipe-point");
    cf_svg_attr_num(&a, "data-global-batch", p->recipe_batch);
    double rx = cf_svg_map(&plot.x, p->recipe_batch), ry = cf_svg_map(&plot.y, 1);
    char batch[48];
    cf_number_plain_text(p->recipe_batch, CF_NUMBER_AS_GIVEN, batch, sizeof batch);
    snprintf(label, sizeof label, "the recipe: batch %s", batch);
    cf_svg_marker(out, CF_SVG_DIAMOND, rx, ry, 10, &(cf_svg_style){.fill = "#555555"}, a.data, label);
    cf_svg_text(out, rx + 8, ry - 8, CF_SVG_START, 11, label, NULL);
    cf_buf_free(&a);
    a = (cf_buf)CF_BUF_INIT;
    cf_svg_attr(&a, "class", "chosen-point");
    cf_svg_attr_num(&a, "data-global-batch", (double)c->global_batch);
    cf_svg_attr_num(&a, "data-efficiency", c->stat_efficiency);
    double cx = cf_svg_map(&plot.x, (double)c->global_batch), cy = cf_svg_map(&plot.y, c->stat_efficiency);
    snprintf(label, sizeof label, "chosen: batch %ld, %.0f%%", c->global_batch, 100 * c->stat_efficiency);
    cf_svg_marker(out, CF_SVG_RING, cx, cy, 18, &(cf_svg_style){.stroke = "#111111", .stroke_width = 2.5}, a.data,
                  label);
    marker_label(out, &plot, cx, cy, label);
    cf_buf_free(&a);
    cf_svg_end(out);
}
