/* The plots of a recommendation (issue 16): what they show, built once
 * from the report (plots.c), then drawn as SVG (render_svg.c), inside a
 * self-contained HTML report (render_html.c), or as a compact text chart on
 * a terminal (render_chart.c). The SVG drawing itself is common/svg.c. */
#ifndef CLOUDFIT_RENDER_PLOTS_H
#define CLOUDFIT_RENDER_PLOTS_H
#include <stddef.h>

#include "cloudfit/advisor/curves.h"
#include "cloudfit/common/buf.h"
#include "cloudfit/common/svg.h"
#include "cloudfit/render.h"
#include "cloudfit/common/shared_types.h"

/* One configuration as a point of the time–cost plane. */
typedef struct {
    const cf_config *config;
    double hours, usd;
    /* The 80 % interval when the configuration has one (hours_p10 …
     * total_usd_p90 in its JSON, the step-time model's intervals); 0 = none. */
    double hours_p10, hours_p90, usd_p10, usd_p90;
    size_t gpu;                   /* index into cf_report_plots.gpus: the colour */
    int chosen;                   /* this is the recommended configuration */
} cf_plot_point;

/* GPU types with a colour of their own in the time–cost plot (one legend
 * row each); the types beyond share the last colour, named in the legend
 * as "other GPU types". */
#define CF_PLOT_MAX_GPUS CF_SVG_PALETTE_SIZE
#define CF_PLOT_STATEFF_POINTS CF_STATEFF_CURVE_POINTS

typedef struct {
    const cf_report *report;
    cf_plot_point *front;         /* the Pareto front, by hours */
    size_t n_front;
    cf_plot_point chosen;
    cf_plot_point *ranked;        /* the ranked alternatives (chosen first), for tables */
    size_t n_ranked;
    char gpus[CF_PLOT_MAX_GPUS][CF_GPU_NAME_MAX]; /* GPU types in the plot, in order of first appearance */
    size_t n_gpus;
    int other_gpus;               /* more types than colours: the last colour is "other GPU types" */
    double deadline_hours, budget_usd; /* 0 = none */
    int have_intervals;           /* some point has an interval */
    /* Throughput vs node count of the chosen VM type (empty when its GPU
     * type has no parameters). */
    cf_scaling_point *scaling;
    size_t n_scaling;
    /* Statistical efficiency vs global batch. */
    cf_stateff_point stateff[CF_PLOT_STATEFF_POINTS];
    size_t n_stateff;
    double recipe_batch;          /* M0 */
} cf_report_plots;

/* Builds the plots of `r` (r->advice must have a pick). CF_ERR_NOMEM. */
cf_status cf_report_plots_build(const cf_report *r, cf_report_plots *out);
void cf_report_plots_free(cf_report_plots *p);
/* Pixel width/height of the standalone plots. */
#define CF_PLOT_WIDTH 760.0
#define CF_PLOT_HEIGHT 440.0

/* The time–cost front: colour by GPU type, shape by spot/on-demand, the
 * chosen point, deadline and budget lines, p10–p90 whiskers. Each front
 * point is a <g class="front-point"> with data-hours, data-usd, data-gpu,
 * data-spot, data-instance, data-nodes; the chosen one also a
 * <g class="chosen-point">; the axes group carries the scales. */
void cf_render_front_svg(const cf_report_plots *p, cf_buf *out);
/* Throughput vs node count of the chosen VM type, with linear scaling. */
void cf_render_scaling_svg(const cf_report_plots *p, cf_buf *out);
/* Statistical efficiency vs global batch, the recipe's and the chosen batch marked. */
void cf_render_stateff_svg(const cf_report_plots *p, cf_buf *out);
/* The whole report as one HTML file: no script, no external resource. */
void cf_report_html(const cf_report_plots *p, cf_buf *out);
/* A compact text chart of the front, `width` × `height` characters of
 * plot area, colour escapes only when `color`. */
void cf_report_front_chart(const cf_report_plots *p, int width, int height, int color, cf_buf *out);

#endif
