#include "cloudfit/common/svg.h"

#include "cloudfit/common/escape.h"
#include "cloudfit/common/number.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- text ------------------------------------------------------------------------------- */

#define REPLACEMENT "\xEF\xBF\xBD"

void cf_svg_escape(cf_buf *out, const char *text)
{
    const unsigned char *s = (const unsigned char *)(text ? text : ""), *end = s + strlen((const char *)s);
    while (*s) {
        switch (*s) {
        case '&': cf_buf_puts(out, "&amp;"); s++; continue;
        case '<': cf_buf_puts(out, "&lt;"); s++; continue;
        case '>': cf_buf_puts(out, "&gt;"); s++; continue;
        case '"': cf_buf_puts(out, "&quot;"); s++; continue;
        case '\'': cf_buf_puts(out, "&#39;"); s++; continue;
        default: break;
        }
        if (*s < 0x20 && *s != '\t' && *s != '\n' && *s != '\r') {
            cf_buf_puts(out, REPLACEMENT);
            s++;
            continue;
        }
        size_t n = cf_utf8_sequence_length((const char *)s, (size_t)(end - s));
        if (n == 0 || *s == 0x7f) {
            cf_buf_puts(out, REPLACEMENT);
            s++;
            continue;
        }
        /* Characters XML does not allow (U+FFFE, U+FFFF: xmllint refused the
         * file) or that act on a terminal if the file is printed (C1) */
        int noncharacter = n == 3 && s[0] == 0xEF && s[1] == 0xBF && (s[2] == 0xBE || s[2] == 0xBF);
        int c1 = n == 2 && s[0] == 0xC2 && s[1] <= 0x9F;
        unsigned reordering = cf_utf8_reordering((const char *)s, n); /* shown as the other sinks show it */
        if (noncharacter || c1)
            cf_buf_puts(out, REPLACEMENT);
        else if (reordering)
            cf_buf_printf(out, "\\u%04x", reordering);
        else
            cf_buf_append(out, (const char *)s, n);
        s += n;
    }
}

void cf_svg_attr(cf_buf *out, const char *name, const char *value)
{
    cf_buf_printf(out, " %s=\"", name);
    cf_svg_escape(out, value);
    cf_buf_puts(out, "\"");
}

void cf_svg_attr_num(cf_buf *out, const char *name, double value)
{
    cf_buf_printf(out, " %s=\"%.6g\"", name, value);
}

/* A coordinate: two decimals, never "-0.00". */
static void num(cf_buf *out, double v)
{
    if (!isfinite(v))
        v = 0;
    if (fabs(v) < 0.005)
        v = 0;
    cf_buf_printf(out, "%.2f", v);
}

/* ---- scales ----------------------------------------------------------------------------- */

/* 1, 2 or 5 × 10^k, the smallest at least `raw`. */
static double nice_step(double raw)
{
    if (!(raw > 0) || !isfinite(raw))
        return 1;
    double p = pow(10, floor(log10(raw)));
    double f = raw / p;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

/* The largest 1-2-5 × 10^k at most v (down) or smallest at least v (up). */
static double nice_125(double v, int up)
{
    double p = pow(10, floor(log10(v)));
    static const double m[] = {1, 2, 5, 10};
    if (up) {
        for (size_t i = 0; i < 4; i++)
            if (m[i] * p >= v * (1 - 1e-12))
                return m[i] * p;
        return 10 * p;
    }
    for (size_t i = 4; i-- > 0;)
        if (m[i] * p <= v * (1 + 1e-12))
            return m[i] * p;
    return p;
}

void cf_svg_nice_domain(double *lo, double *hi, int log)
{
    if (log) {
        *lo = nice_125(*lo, 0);
        *hi = nice_125(*hi, 1);
        return;
    }
    double step = nice_step((*hi - *lo) / 5);
    *lo = floor(*lo / step + 1e-9) * step;
    *hi = ceil(*hi / step - 1e-9) * step;
}

cf_svg_scale cf_svg_scale_make(double lo, double hi, double r0, double r1, int log)
{
    if (!isfinite(lo) || !isfinite(hi)) {
        lo = log ? 1 : 0;
        hi = log ? 10 : 1;
    }
    if (hi < lo) {
        double t = lo;
        lo = hi;
        hi = t;
    }
    if (log && !(lo > 0)) {
        log = 0; /* nothing positive to show on a log scale */
    }
    if (hi == lo) {
        if (log) {
            lo /= 2;
            hi *= 2;
        } else {
            double pad = lo == 0 ? 1 : fabs(lo) * 0.1;
            lo -= pad;
            hi += pad;
        }
    }
    cf_svg_nice_domain(&lo, &hi, log);
    return (cf_svg_scale){lo, hi, r0, r1, log, 0};
}

double cf_svg_map(const cf_svg_scale *s, double value)
{
    double t;
    if (s->log)
        t = value > 0 ? (log10(value) - log10(s->d0)) / (log10(s->d1) - log10(s->d0)) : 0;
    else
        t = (value - s->d0) / (s->d1 - s->d0);
    return s->r0 + t * (s->r1 - s->r0);
}

double cf_svg_invert(const cf_svg_scale *s, double position)
{
    double t = (position - s->r0) / (s->r1 - s->r0);
    if (s->log)
        return pow(10, log10(s->d0) + t * (log10(s->d1) - log10(s->d0)));
    return s->d0 + t * (s->d1 - s->d0);
}

size_t cf_svg_ticks(const cf_svg_scale *s, int target, double *out, size_t max)
{
    size_t n = 0;
    if (target < 2)
        target = 2;
    if (s->log) {
        double decades = log10(s->d1) - log10(s->d0);
        static const double m125[] = {1, 2, 5}, many[] = {1, 1.5, 2, 3, 4, 5, 6, 8}, one[] = {1};
        const double *m = decades <= 1.2 ? many : decades < 3 ? m125 : one;
        size_t nm = decades <= 1.2 ? 8 : decades < 3 ? 3 : 1;
        int every = decades > 2.0 * target ? (int)ceil(decades / target) : 1;
        for (int k = (int)floor(log10(s->d0)) - 1; k <= (int)ceil(log10(s->d1)) && n < max; k++) {
            if (nm == 1 && k % every != 0)
                continue;
            for (size_t i = 0; i < nm && n < max; i++) {
                double v = m[i] * pow(10, k);
                if (v >= s->d0 * (1 - 1e-9) && v <= s->d1 * (1 + 1e-9))
                    out[n++] = v;
            }
        }
        return n;
    }
    double step = nice_step((s->d1 - s->d0) / target);
    if (s->integer && step < 1)
        step = 1; /* no half a node */
    double first = ceil(s->d0 / step - 1e-9);
    for (double i = first; n < max; i++) {
        double v = i * step;
        if (v > s->d1 + step * 1e-9)
            break;
        if (fabs(v) < step * 1e-9)
            v = 0;
        out[n++] = v;
    }
    return n;
}

void cf_svg_format_tick(double value, const char *prefix, char *out, size_t n)
{
    const char *p = prefix ? prefix : "";
    double a = fabs(value);
    char num[64];
    /* never in scientific notation (docs/output.md): "%.4g" wrote a tick of
     * $0.00001 as "$1e-05", "%.3gG" one of $1e12 as "$1e+03G" */
    if (a >= 1e9) {
        cf_number_plain_text(value / 1e9, 3, num, sizeof num);
        snprintf(out, n, "%s%sG", p, num);
    } else if (a >= 1e6) {
        cf_number_plain_text(value / 1e6, 3, num, sizeof num);
        snprintf(out, n, "%s%sM", p, num);
    } else if (a >= 1e4) {
        cf_number_plain_text(value / 1e3, 3, num, sizeof num);
        snprintf(out, n, "%s%sk", p, num);
    } else {
        cf_number_plain_text(value, 4, num, sizeof num);
        snprintf(out, n, "%s%s", p, num);
    }
}

int cf_svg_prefer_log(double lo, double hi, double ratio)
{
    return lo > 0 && hi > 0 && hi / lo >= ratio;
}

/* ---- the document ----------------------------------------------------------------------- */

void cf_svg_begin(cf_buf *out, double width, double height, const char *title, const char *extra)
{
    cf_buf_puts(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" role=\"img\"");
    cf_buf_printf(out, " width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\"", width, height, width, height);
    cf_buf_puts(out, " font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\"");
    if (extra)
        cf_buf_puts(out, extra);
    cf_buf_puts(out, ">\n<title>");
    cf_svg_escape(out, title);
    cf_buf_puts(out, "</title>\n");
    cf_buf_printf(out, "<rect width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n", width, height);
}

void cf_svg_end(cf_buf *out) { cf_buf_puts(out, "</svg>\n"); }

void cf_svg_group_begin(cf_buf *out, const char *extra)
{
    cf_buf_puts(out, "<g");
    if (extra)
        cf_buf_puts(out, extra);
    cf_buf_puts(out, ">\n");
}

void cf_svg_group_end(cf_buf *out) { cf_buf_puts(out, "</g>\n"); }

#define MARGIN_LEFT 70.0
#define MARGIN_RIGHT 20.0
#define MARGIN_TOP 20.0
#define MARGIN_BOTTOM 46.0

cf_svg_plot cf_svg_plot_make(double width, double height, double x0, double x1, int x_log, double y0,
                             double y1, int y_log)
{
    cf_svg_plot p;
    p.left = MARGIN_LEFT;
    p.top = MARGIN_TOP;
    p.width = width - MARGIN_LEFT - MARGIN_RIGHT;
    p.height = height - MARGIN_TOP - MARGIN_BOTTOM;
    p.x = cf_svg_scale_make(x0, x1, p.left, p.left + p.width, x_log);
    p.y = cf_svg_scale_make(y0, y1, p.top + p.height, p.top, y_log);
    return p;
}

static void scale_attrs(cf_buf *out, const char *axis, const cf_svg_scale *s)
{
    char name[32];
    snprintf(name, sizeof name, "data-%s-domain", axis);
    cf_buf_printf(out, " %s=\"%.9g %.9g\"", name, s->d0, s->d1);
    snprintf(name, sizeof name, "data-%s-range", axis);
    cf_buf_printf(out, " %s=\"%.4f %.4f\"", name, s->r0, s->r1);
    snprintf(name, sizeof name, "data-%s-log", axis);
    cf_buf_printf(out, " %s=\"%d\"", name, s->log);
}

void cf_svg_axes(cf_buf *out, const cf_svg_plot *p, const char *x_title, const char *x_prefix,
                 const char *y_title, const char *y_prefix)
{
    cf_buf extra = CF_BUF_INIT;
    cf_buf_puts(&extra, " class=\"axes\"");
    scale_attrs(&extra, "x", &p->x);
    scale_attrs(&extra, "y", &p->y);
    cf_svg_group_begin(out, extra.data);
    cf_buf_free(&extra);
    const cf_svg_style grid = {.stroke = "#e3e3e3", .stroke_width = 1};
    const cf_svg_style tick = {.stroke = "#444444", .stroke_width = 1};
    const cf_svg_style frame = {.fill = NULL, .stroke = "#444444", .stroke_width = 1};
    double ticks[64];
    char label[48];
    double bottom = p->top + p->height, right = p->left + p->width;
    size_t n = cf_svg_ticks(&p->x, 6, ticks, 64);
    for (size_t i = 0; i < n; i++) {
        double x = cf_svg_map(&p->x, ticks[i]);
        cf_svg_line(out, x, p->top, x, bottom, &grid, NULL);
        cf_svg_line(out, x, bottom, x, bottom + 5, &tick, NULL);
        cf_svg_format_tick(ticks[i], x_prefix, label, sizeof label);
        cf_svg_text(out, x, bottom + 18, CF_SVG_MIDDLE, 11, label, " class=\"tick\"");
    }
    n = cf_svg_ticks(&p->y, 5, ticks, 64);
    for (size_t i = 0; i < n; i++) {
        double y = cf_svg_map(&p->y, ticks[i]);
        cf_svg_line(out, p->left, y, right, y, &grid, NULL);
        cf_svg_line(out, p->left - 5, y, p->left, y, &tick, NULL);
        cf_svg_format_tick(ticks[i], y_prefix, label, sizeof label);
        cf_svg_text(out, p->left - 8, y + 4, CF_SVG_END, 11, label, " class=\"tick\"");
    }
    cf_svg_rect(out, p->left, p->top, p->width, p->height, &frame, NULL);
    if (x_title)
        cf_svg_text(out, p->left + p->width / 2, bottom + 38, CF_SVG_MIDDLE, 12, x_title, " class=\"axis-title\"");
    if (y_title) {
        cf_buf t = CF_BUF_INIT;
        cf_buf_printf(&t, " class=\"axis-title\" transform=\"rotate(-90 %.2f %.2f)\"", 16.0, p->top + p->height / 2);
        cf_svg_text(out, 16, p->top + p->height / 2, CF_SVG_MIDDLE, 12, y_title, t.data);
        cf_buf_free(&t);
    }
    cf_svg_group_end(out);
}

/* ---- marks ------------------------------------------------------------------------------ */

static void style_attrs(cf_buf *out, const cf_svg_style *st)
{
    cf_svg_style none = {0};
    if (!st)
        st = &none;
    cf_svg_attr(out, "fill", st->fill ? st->fill : "none");
    if (st->stroke) {
        cf_svg_attr(out, "stroke", st->stroke);
        cf_buf_printf(out, " stroke-width=\"%.2g\"", st->stroke_width > 0 ? st->stroke_width : 1.0);
    }
    if (st->dash)
        cf_svg_attr(out, "stroke-dasharray", st->dash);
    if (st->opacity > 0 && st->opacity < 1)
        cf_buf_printf(out, " opacity=\"%.2f\"", st->opacity);
}

void cf_svg_marker(cf_buf *out, cf_svg_shape shape, double x, double y, double size, const cf_svg_style *style,
                   const char *extra, const char *tooltip)
{
    double h = size / 2;
    cf_buf_puts(out, "<g transform=\"translate(");
    num(out, x);
    cf_buf_puts(out, ",");
    num(out, y);
    cf_buf_puts(out, ")\"");
    if (extra)
        cf_buf_puts(out, extra);
    cf_buf_puts(out, ">");
    if (tooltip) {
        cf_buf_puts(out, "<title>");
        cf_svg_escape(out, tooltip);
        cf_buf_puts(out, "</title>");
    }
    cf_svg_style ring;
    switch (shape) {
    case CF_SVG_CIRCLE:
        cf_buf_printf(out, "<circle r=\"%.2f\"", h);
        break;
    case CF_SVG_RING:
        ring = style ? *style : (cf_svg_style){0};
        if (!ring.stroke)
            ring.stroke = ring.fill;
        ring.fill = NULL;
        style = &ring;
        cf_buf_printf(out, "<circle r=\"%.2f\"", h);
        break;
    case CF_SVG_SQUARE:
        cf_buf_printf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"", -h * 0.9, -h * 0.9, h * 1.8,
                      h * 1.8);
        break;
    case CF_SVG_TRIANGLE:
        cf_buf_printf(out, "<path d=\"M0,%.2f L%.2f,%.2f L%.2f,%.2f Z\"", -h * 1.15, h * 1.1, h * 0.75, -h * 1.1,
                      h * 0.75);
        break;
    case CF_SVG_DIAMOND:
        cf_buf_printf(out, "<path d=\"M0,%.2f L%.2f,0 L0,%.2f L%.2f,0 Z\"", -h * 1.2, h * 1.2, h * 1.2, -h * 1.2);
        break;
    }
    style_attrs(out, style);
    cf_buf_puts(out, "/></g>\n");
}

void cf_svg_line(cf_buf *out, double x1, double y1, double x2, double y2, const cf_svg_style *style,
                 const char *extra)
{
    cf_buf_puts(out, "<line x1=\"");
    num(out, x1);
    cf_buf_puts(out, "\" y1=\"");
    num(out, y1);
    cf_buf_puts(out, "\" x2=\"");
    num(out, x2);
    cf_buf_puts(out, "\" y2=\"");
    num(out, y2);
    cf_buf_puts(out, "\"");
    style_attrs(out, style);
    if (extra)
        cf_buf_puts(out, extra);
    cf_buf_puts(out, "/>\n");
}

void cf_svg_polyline(cf_buf *out, const double *xs, const double *ys, size_t n, const cf_svg_style *style,
                     const char *extra)
{
    cf_buf_puts(out, "<polyline points=\"");
    for (size_t i = 0; i < n; i++) {
        if (i)
            cf_buf_puts(out, " ");
        num(out, xs[i]);
        cf_buf_puts(out, ",");
        num(out, ys[i]);
    }
    cf_buf_puts(out, "\"");
    style_attrs(out, style);
    if (extra)
        cf_buf_puts(out, extra);
    cf_buf_puts(out, "/>\n");
}

void cf_svg_rect(cf_buf *out, double x, double y, double w, double h, const cf_svg_style *style,
                 const char *extra)
{
    cf_buf_puts(out, "<rect x=\"");
    num(out, x);
    cf_buf_puts(out, "\" y=\"");
    num(out, y);
    cf_buf_puts(out, "\" width=\"");
    num(out, w > 0 ? w : 0);
    cf_buf_puts(out, "\" height=\"");
    num(out, h > 0 ? h : 0);
    cf_buf_puts(out, "\"");
    style_attrs(out, style);
    if (extra)
        cf_buf_puts(out, extra);
    cf_buf_puts(out, "/>\n");
}

void cf_svg_text(cf_buf *out, double x, double y, cf_svg_anchor anchor, double size, const char *text,
                 const char *extra)
{
    static const char *anchors[] = {"start", "middle", "end"};
    cf_buf_puts(out, "<text x=\"");
    num(out, x);
    cf_buf_puts(out, "\" y=\"");
    num(out, y);
    cf_buf_printf(out, "\" text-anchor=\"%s\" font-size=\"%.3g\" fill=\"#222222\"", anchors[anchor],
                  size > 0 ? size : 12.0);
    if (extra)
        cf_buf_puts(out, extra);
    cf_buf_puts(out, ">");
    cf_svg_escape(out, text);
    cf_buf_puts(out, "</text>\n");
}

const char *cf_svg_palette(size_t i)
{
    static const char *colours[CF_SVG_PALETTE_SIZE] = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                                       "#CC79A7", "#56B4E9", "#000000", "#999999",
                                                       "#F0E442", "#882D17", "#8DB600", "#604E97"};
    return colours[i % CF_SVG_PALETTE_SIZE];
}
