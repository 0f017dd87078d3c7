/* A small SVG writer (common/svg.c): the document, scales (linear and
 * logarithmic) with readable ticks, axes with grid lines and labels, marks
 * (markers of several shapes, lines, polylines, rectangles, text) and text
 * escaping. It knows nothing about recommendations: render/render_svg.c
 * draws cloudfit's plots with it.
 *
 * Everything is appended to a cf_buf (allocation failure is sticky: check
 * cf_buf_failed once at the end). Coordinates are SVG user units, y down.
 * Strings given as text or attribute values are escaped here; `extra`
 * arguments are attribute text the caller built with cf_svg_attr (already
 * escaped) and may be NULL. */
#ifndef CLOUDFIT_COMMON_SVG_H
#define CLOUDFIT_COMMON_SVG_H
#include <stddef.h>
#include "cloudfit/common/buf.h"

/* ---- text ------------------------------------------------------------------------------- */

/* Appends `text` with & < > " ' escaped (valid in XML text and in quoted
 * attribute values, and in HTML). Control characters other than TAB, LF
 * and CR, which XML 1.0 forbids, become U+FFFD. */
void cf_svg_escape(cf_buf *out, const char *text);
/* Appends ` name="value"` with the value escaped. */
void cf_svg_attr(cf_buf *out, const char *name, const char *value);
/* Appends ` name="value"` for a number, shortest round-trip-ish form (%.6g). */
void cf_svg_attr_num(cf_buf *out, const char *name, double value);

/* ---- scales ----------------------------------------------------------------------------- */

typedef struct {
    double d0, d1;   /* domain (data values); for a log scale both > 0 */
    double r0, r1;   /* range (user units); r1 < r0 for a y axis */
    int log;         /* logarithmic (base 10) */
    int integer;     /* counts (nodes): linear ticks only on whole numbers; 0 from cf_svg_scale_make */
} cf_svg_scale;

/* A scale over [lo, hi] (widened a little when lo == hi; a log scale
 * needs lo > 0) mapped onto [r0, r1]; the domain is first extended to
 * readable bounds (cf_svg_nice_domain). */
cf_svg_scale cf_svg_scale_make(double lo, double hi, double r0, double r1, int log);
/* Extends [*lo, *hi] outwards to readable bounds: multiples of the tick
 * step (linear), or 1-2-5 × 10^k (log). */
void cf_svg_nice_domain(double *lo, double *hi, int log);
/* Data value → user units, and back. */
double cf_svg_map(const cf_svg_scale *s, double value);
double cf_svg_invert(const cf_svg_scale *s, double position);
/* Tick values inside the domain, ascending: 1-2-5 steps (linear; about
 * `target` of them, at least 1 apart on an `integer` scale) or decades
 * with 2 and 5 between when there are few decades (log). Returns the
 * count (at most `max`). */
size_t cf_svg_ticks(const cf_svg_scale *s, int target, double *out, size_t max);
/* A compact label for a tick: 0.5, 12, 1.5k, 2M, 0.00001 — never in
 * scientific notation (and `prefix`, e.g. "$"). */
void cf_svg_format_tick(double value, const char *prefix, char *out, size_t n);
/* Whether data spanning [lo, hi] (both > 0) reads better on a log scale
 * (the ratio is at least `ratio`). */
int cf_svg_prefer_log(double lo, double hi, double ratio);

/* ---- the document ----------------------------------------------------------------------- */

/* <svg xmlns=... width height viewBox role="img"> with a <title>; the
 * default font and a white background. `extra` goes into the svg tag. */
void cf_svg_begin(cf_buf *out, double width, double height, const char *title, const char *extra);
void cf_svg_end(cf_buf *out);
/* <g ...> with `extra` attributes, and </g>. */
void cf_svg_group_begin(cf_buf *out, const char *extra);
void cf_svg_group_end(cf_buf *out);

/* A plot area: the scales and the rectangle they map onto. */
typedef struct {
    double left, top, width, height;
    cf_svg_scale x, y;
} cf_svg_plot;

/* A plot of `width` × `height` user units with margins for the axes; the
 * scales map the data ranges [x0, x1] and [y0, y1] (made readable). */
cf_svg_plot cf_svg_plot_make(double width, double height, double x0, double x1, int x_log, double y0,
                             double y1, int y_log);
/* Frame, grid lines, ticks with labels (prefixes such as "$" or NULL),
 * axis titles; the group carries data-x-* / data-y-* attributes with each
 * scale (domain, range, log) so a reader can map marks back to values. */
void cf_svg_axes(cf_buf *out, const cf_svg_plot *p, const char *x_title, const char *x_prefix,
                 const char *y_title, const char *y_prefix);

/* ---- marks ------------------------------------------------------------------------------ */

typedef enum {
    CF_SVG_CIRCLE,
    CF_SVG_SQUARE,
    CF_SVG_TRIANGLE,   /* pointing up */
    CF_SVG_DIAMOND,
    CF_SVG_RING,       /* a circle without fill */
} cf_svg_shape;

typedef struct {
    const char *fill;          /* NULL = none */
    const char *stroke;        /* NULL = none */
    double stroke_width;       /* 0 = 1 */
    const char *dash;          /* stroke-dasharray, NULL = solid */
    double opacity;            /* 0 = opaque */
} cf_svg_style;

/* A marker of `size` (its width) centred on (x, y): a group translated to
 * the centre holding the shape, so readers find the position in one
 * attribute; `extra` attributes go on the group, `tooltip` (NULL = none)
 * becomes its <title>. */
void cf_svg_marker(cf_buf *out, cf_svg_shape shape, double x, double y, double size, const cf_svg_style *style,
                   const char *extra, const char *tooltip);
void cf_svg_line(cf_buf *out, double x1, double y1, double x2, double y2, const cf_svg_style *style,
                 const char *extra);
/* A polyline through n points (no fill unless the style has one). */
void cf_svg_polyline(cf_buf *out, const double *xs, const double *ys, size_t n, const cf_svg_style *style,
                     const char *extra);
void cf_svg_rect(cf_buf *out, double x, double y, double w, double h, const cf_svg_style *style,
                 const char *extra);
typedef enum { CF_SVG_START, CF_SVG_MIDDLE, CF_SVG_END } cf_svg_anchor;
/* Text at (x, y) (baseline), `size` in user units (0 = 12). */
void cf_svg_text(cf_buf *out, double x, double y, cf_svg_anchor anchor, double size, const char *text,
                 const char *extra);

/* A qualitative palette: Okabe & Ito's eight, which stay apart for
 * colour-blind readers, then grey and three of Kelly's (brown,
 * yellow-green, violet); colour i, cycling after CF_SVG_PALETTE_SIZE, so
 * a plot that gives each series its own colour has at most that many. */
#define CF_SVG_PALETTE_SIZE 12
const char *cf_svg_palette(size_t i);

#endif
