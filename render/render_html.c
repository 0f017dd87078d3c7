/* The recommendation as one self-contained HTML file: the plots as inline
 * SVG (render_svg.c), the alternatives table and the explanation; no
 * script, no font, image or style sheet from anywhere else (the page's
 * Content-Security-Policy forbids fetching any). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cloudfit/common/number.h"
#include "cloudfit/common/svg.h"
#include "cloudfit/version.h"
#include "cloudfit/render/plots.h"
#include "cloudfit/render/text_table.h"

static const char *const style =
    "body{font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;color:#222;background:#fff;margin:24px auto;"
    "max-width:1140px;padding:0 16px;line-height:1.45}\n"
    "h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ddd}\n"
    ".summary{font-size:1.05em;background:#f4f8fb;border-left:4px solid #0072B2;padding:.6em 1em}\n"
    ".meta{color:#555;font-size:.9em}\n"
    "figure{margin:0}figcaption{color:#555;font-size:.9em;margin-top:.3em}svg{max-width:100%;height:auto}\n"
    /* The alternatives fit a 1200-pixel window: intervals on a line of their
     * own under the value, names wrap; a narrower window scrolls the table. */
    "table{border-collapse:collapse;font-size:.85em;width:100%}th,td{padding:4px 5px;border-bottom:1px solid #e4e4e4;"
    "text-align:right;white-space:nowrap;vertical-align:top}th{background:#f2f2f2;white-space:normal}"
    "td.l,th.l{text-align:left;white-space:normal;overflow-wrap:anywhere}\n"
    ".iv{display:block;color:#666;font-size:.85em;font-weight:normal}\n"
    ".scroll{overflow-x:auto}\n"
    "tr.chosen td{background:#e8f5ec;font-weight:bold}\n"
    "pre{background:#f7f7f7;padding:.8em;overflow-x:auto;font-size:.8em}\n"
    "td.n,th.n{text-align:left;white-space:nowrap}td.fail{color:#b00020;font-weight:bold}\n";

static void esc(cf_buf *out, const char *text) { cf_svg_escape(out, text); }

static void money(cf_buf *out, double usd)
{
    if (usd >= 100)
        cf_buf_printf(out, "$%.0f", usd);
    else
        cf_buf_printf(out, "$%.2f", usd);
}

/* The value, and its 80 % interval on a line of its own in a table
 * (`block`) or in brackets in running text. */
static void hours_cell(cf_buf *out, const cf_plot_point *pt, int block)
{
    /* 3 significant digits, never "1.07e+03" (cloudfit/common/number.h) */
    char h[48], lo[48], hi[48];
    cf_number_plain_text(pt->hours, 3, h, sizeof h);
    cf_buf_puts(out, h);
    if (pt->hours_p10 > 0) {
        cf_number_plain_text(pt->hours_p10, 3, lo, sizeof lo);
        cf_number_plain_text(pt->hours_p90, 3, hi, sizeof hi);
        cf_buf_printf(out, block ? "<span class=\"iv\">%s–%s</span>" : " (%s–%s)", lo, hi);
    }
}

static void usd_cell(cf_buf *out, const cf_plot_point *pt, int block)
{
    money(out, pt->usd);
    if (pt->usd_p10 > 0) {
        cf_buf_puts(out, block ? "<span class=\"iv\">" : " (");
        money(out, pt->usd_p10);
        cf_buf_puts(out, "–");
        money(out, pt->usd_p90);
        cf_buf_puts(out, block ? "</span>" : ")");
    }
}

static void summary(const cf_report_plots *p, cf_buf *out)
{
    const cf_plot_point *pt = &p->chosen;
    const cf_config *c = pt->config;
    const cf_constraints *s = &p->report->spec->search;
    cf_buf_puts(out, "<p class=\"summary\" id=\"chosen\">Recommended: <strong>");
    cf_buf_printf(out, "%d × ", c->nodes);
    esc(out, c->vm->instance_type);
    cf_buf_printf(out, " (%d × ", c->gpus_per_node);
    esc(out, c->vm->gpu_model);
    cf_buf_puts(out, ") on ");
    esc(out, c->vm->cloud);
    cf_buf_puts(out, "/");
    esc(out, c->vm->region);
    cf_buf_printf(out, ", %s</strong>: ", c->spot ? cf_config_capacity_label(c) : "on-demand");
    hours_cell(out, pt, 0);
    cf_buf_puts(out, " h, ");
    usd_cell(out, pt, 0);
    cf_buf_printf(out, ".<br>Batch %d per GPU × %d accumulation = global batch %ld; learning rate %.4g (%s rule); "
                       "statistical efficiency %.0f%%.",
                  c->local_batch, c->accumulation, c->global_batch, c->lr.lr, cf_lr_rule_name(c->lr.rule_used),
                  100 * c->stat_efficiency);
    cf_buf_printf(out, "<br>Objective: %s", cf_objective_name(s->objective));
    char limit[48];
    if (s->deadline_hours > 0) {
        cf_number_plain_text(s->deadline_hours, CF_NUMBER_AS_GIVEN, limit, sizeof limit);
        cf_buf_printf(out, "; deadline %s h", limit);
    }
    if (s->budget_usd > 0) {
        cf_number_plain_text(s->budget_usd, CF_NUMBER_AS_GIVEN, limit, sizeof limit);
        cf_buf_printf(out, "; budget $%s", limit);
    }
    cf_buf_printf(out, "; %zu configurations meet the constraints.</p>\n", p->report->advice->n_feasible);
}

/* The measurement worth buying (render/render_measure.c). */
static void next_measurement(const cf_report *r, cf_buf *out)
{
    const cf_next_measurement *m = &r->advice->next;
    if (m->kind == CF_MEASURE_NONE)
        return;
    cf_buf_puts(out, "<p class=\"next\" id=\"next-measurement\"><strong>Next measurement</strong>: ");
    cf_buf sentence = CF_BUF_INIT, cmd = CF_BUF_INIT;
    cf_next_measurement_sentence(m, &sentence);
    cf_next_measurement_command(m, r->spec->job.source, r->history, &cmd);
    esc(out, sentence.data ? sentence.data : "");
    cf_buf_puts(out, " <code>");
    esc(out, cmd.data ? cmd.data : "");
    cf_buf_puts(out, "</code></p>\n");
    if (sentence.failed || cmd.failed)
        out->failed = 1;
    cf_buf_free(&sentence);
    cf_buf_free(&cmd);
}

/* The CI gates (docs/ci.md), as the table's "Gates:" lines and the
 * markdown's table give them: name, limit as given, value, the outcome and
 * the note (the baseline of an increase gate). None: no section. */
static void gates(const cf_report *r, cf_buf *out)
{
    if (!r->n_gates)
        return;
    int all = cf_gates_passed(r->gates, r->n_gates);
    cf_buf_printf(out, "<h2>CI gates: %s</h2>\n<table id=\"gates\">\n<thead><tr><th class=\"n\">gate</th>"
                       "<th>limit</th><th>value</th><th class=\"n\">result</th><th class=\"l\">note</th></tr>"
                       "</thead>\n<tbody>\n",
                  all ? "all passed" : "FAILED");
    for (size_t i = 0; i < r->n_gates; i++) {
        const cf_history_gate *g = &r->gates[i];
        char value[48] = "–", limit[48];
        if (isfinite(g->value))
            snprintf(value, sizeof value, "%.2f", g->value);
        cf_number_plain_text(g->limit, CF_NUMBER_AS_GIVEN, limit, sizeof limit);
        cf_buf_puts(out, "<tr><td class=\"n\"><code>");
        esc(out, g->name);
        cf_buf_printf(out, "</code></td><td>%s</td><td>%s</td>", limit, value);
        cf_buf_puts(out, g->passed ? "<td class=\"n\">pass</td>" : "<td class=\"n fail\">FAIL</td>");
        cf_buf_puts(out, "<td class=\"l\">");
        esc(out, g->note);
        cf_buf_puts(out, "</td></tr>\n");
    }
    cf_buf_puts(out, "</tbody>\n</table>\n");
}

/* Where adding a VM lowers the predicted throughput (cf_scaling_reason). */
static void scaling_notes(const cf_report_plots *p, cf_buf *out)
{
    for (size_t i = 0; i < p->n_scaling; i++) {
        const cf_scaling_point *pt = &p->scaling[i];
        if (pt->reason == CF_SCALING_NETWORK_BOUND)
            cf_buf_printf(out, " At %d nodes the throughput is below one node's: the visible all-reduce between the "
                               "VMs takes longer than a one-VM step.", pt->nodes);
        else if (pt->reason == CF_SCALING_TWO_VM)
            cf_buf_printf(out, " At %d nodes the step departs from the trend: two VMs of several GPUs were measured "
                               "slower than three (the fitted two-VM slowdown, docs/model.md).", pt->nodes);
        else if (pt->reason == CF_SCALING_LATENCY_BOUND)
            cf_buf_printf(out, " At %d nodes the throughput is below %d nodes': the all-reduce's per-hop latency "
                               "(2 hops per gradient bucket for each VM added) outgrows the added VM's share of a "
                               "step it dominates.", pt->nodes, pt->nodes - 1);
        else if (pt->reason == CF_SCALING_UNEXPLAINED)
            cf_buf_printf(out, " At %d nodes the model predicts a throughput change it cannot explain.", pt->nodes);
    }
}

static void alternatives(const cf_report_plots *p, cf_buf *out)
{
    cf_buf_puts(out, "<div class=\"scroll\"><table id=\"alternatives\">\n<thead><tr><th>#</th><th class=\"l\">cloud/region</th>"
                     "<th class=\"l\">instance</th><th class=\"l\">nodes × GPUs</th><th>batch/GPU</th><th>accum</th>"
                     "<th>global</th><th>LR</th><th>hours (p10–p90)</th><th>$/hour</th><th>total $ (p10–p90)</th>"
                     "</tr></thead>\n<tbody>\n");
    for (size_t i = 0; i < p->n_ranked; i++) {
        const cf_plot_point *pt = &p->ranked[i];
        const cf_config *c = pt->config;
        cf_buf_printf(out, "<tr%s><td>%zu</td><td class=\"l\">", i == 0 ? " class=\"chosen\"" : "", i + 1);
        esc(out, c->vm->cloud);
        cf_buf_puts(out, "/");
        esc(out, c->vm->region);
        cf_buf_puts(out, "</td><td class=\"l\">");
        esc(out, c->vm->instance_type);
        if (c->spot)
            cf_buf_printf(out, " (%s)", cf_config_capacity_label(c));
        cf_buf_printf(out, "</td><td class=\"l\">%d × %d ", c->nodes, c->gpus_per_node);
        esc(out, c->vm->gpu_model);
        cf_buf_printf(out, "</td><td>%d</td><td>%d</td><td>%ld</td><td>%.4g</td><td>", c->local_batch, c->accumulation,
                      c->global_batch, c->lr.lr);
        hours_cell(out, pt, 1);
        cf_buf_printf(out, "</td><td>%.2f</td><td>", c->usd_per_hour);
        usd_cell(out, pt, 1);
        cf_buf_puts(out, "</td></tr>\n");
    }
    cf_buf_puts(out, "</tbody>\n</table></div>\n");
}

/* recommend --mix: the mix and its speed-ups against the chosen plan and
 * the same workers with equal batches (render_spot.c has the text). */
static void mixed_types(const cf_report *r, cf_buf *out)
{
    const cf_hetero_advice *h = r->hetero;
    if (!h)
        return;
    cf_buf_puts(out, "<h2>Mixed GPU types</h2>\n<p id=\"mixed-gpu-types\">");
    if (!h->have) {
        cf_buf_puts(out, "None: ");
        esc(out, cf_report_hetero_why_not(h));
        cf_buf_puts(out, ".</p>\n");
        return;
    }
    const cf_hetero_plan *p = &h->best;
    for (int t = 0; t < 2; t++) {
        cf_buf_printf(out, "%s%d × ", t ? " + " : "", p->nodes[t]);
        esc(out, p->vm[t]->instance_type);
        cf_buf_printf(out, " (%d × ", p->gpus_per_node[t]);
        esc(out, p->vm[t]->gpu_model);
        cf_buf_printf(out, ", batch %d per GPU)", p->batch[t]);
    }
    cf_buf_puts(out, " on ");
    esc(out, p->vm[0]->cloud);
    cf_buf_puts(out, "/");
    esc(out, p->vm[0]->region);
    char hours[32], at[32], conf[16];
    cf_text_duration_range(p->hours, p->hours_p10, p->hours_p90, hours, sizeof hours);
    cf_text_duration(p->hours_at_confidence, at, sizeof at);
    cf_number_percent_text(r->spec->search.confidence > 0 ? r->spec->search.confidence : CF_DEFAULT_CONFIDENCE, conf,
                           sizeof conf);
    cf_buf_printf(out, ", on demand: step %.3f s (all-reduce %.3f s), %s (80 %%), ", p->step_time_s, p->sync_s, hours);
    money(out, p->total_usd);
    cf_buf_printf(out, "; at %s confidence %s, ", conf, at);
    money(out, p->usd_at_confidence);
    cf_buf_puts(out, ", held to the limits as the single-type plans are");
    cf_buf_puts(out, ".</p>\n<table id=\"mixed-speedups\">\n<thead><tr><th class=\"l\">against</th><th>speed-up</th>"
                     "</tr></thead>\n<tbody>\n");
    char chosen[32];
    cf_text_duration(r->advice->ranked[0].hours, chosen, sizeof chosen);
    cf_buf_printf(out, "<tr><td class=\"l\">the chosen single-type plan (%s)</td><td>%.2f×</td></tr>\n", chosen,
                  p->speedup_over_chosen);
    if (p->equal_step_time_s > 0)
        cf_buf_printf(out, "<tr><td class=\"l\">the same workers with equal per-worker batches (%d × %d accumulation, "
                           "step %.3f s)</td><td>%.2f×</td></tr>\n",
                      p->equal_local_batch, p->equal_accumulation, p->equal_step_time_s, p->speedup_over_equal_batches);
    cf_buf_printf(out, "<tr><td class=\"l\">either type's VMs alone</td><td>%.2f×</td></tr>\n</tbody>\n</table>\n",
                  p->speedup);
}

static void figure(cf_buf *out, const char *id, const char *heading, const cf_buf *svg, const char *caption)
{
    cf_buf_printf(out, "<h2>%s</h2>\n<figure id=\"%s\">\n", heading, id);
    cf_buf_append(out, svg->data ? svg->data : "", svg->len);
    cf_buf_printf(out, "<figcaption>%s</figcaption>\n</figure>\n", caption);
}

void cf_report_html(const cf_report_plots *p, cf_buf *out)
{
    const cf_report *r = p->report;
    const char *name = r->spec->job.name;
    cf_buf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                     "style-src 'unsafe-inline'\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                     "<meta name=\"generator\" content=\"cloudfit ");
    esc(out, CF_VERSION);
    cf_buf_puts(out, "\">\n<title>cloudfit: ");
    esc(out, name);
    cf_buf_puts(out, "</title>\n<style>\n");
    cf_buf_puts(out, style);
    cf_buf_puts(out, "</style>\n</head>\n<body>\n<h1>cloudfit recommendation: ");
    esc(out, name);
    cf_buf_puts(out, "</h1>\n<p class=\"meta\">");
    esc(out, r->created_at ? r->created_at : "");
    /* whole days, floored, as the JSON's catalog.age_days and the text say it */
    double age_days = floor(r->catalog_age_days);
    cf_buf_printf(out, " · cloudfit %s · %zu offer%s · prices %.0f day%s old", CF_VERSION, r->n_offers,
                  r->n_offers == 1 ? "" : "s", age_days, age_days == 1 ? "" : "s");
    cf_buf_puts(out, " · spec ");
    esc(out, r->spec->job.source);
    cf_buf_puts(out, "</p>\n");
    summary(p, out);
    next_measurement(r, out);
    gates(r, out);

    cf_buf svg = CF_BUF_INIT;
    cf_render_front_svg(p, &svg);
    figure(out, "front", "Time and cost", &svg,
           "Every configuration on the Pareto front of predicted wall time and total cost (nothing else is both "
           "faster and cheaper). Colour: GPU type; circle: on-demand, triangle: spot; the ring marks the "
           "recommendation; dashed lines are the deadline and the budget; whiskers, where shown, the 80&#160;% "
           "interval (p10–p90).");
    svg.len = 0;
    cf_render_scaling_svg(p, &svg);
    cf_buf caption = CF_BUF_INIT;
    cf_buf_puts(&caption, "Predicted samples per second of the chosen VM type at the chosen per-GPU batch and "
                          "accumulation, against linear scaling from one node: the gap is gradient all-reduce between "
                          "VMs.");
    scaling_notes(p, &caption);
    figure(out, "scaling", "Throughput vs node count", &svg, caption.data);
    if (caption.failed)
        out->failed = 1;
    cf_buf_free(&caption);
    svg.len = 0;
    cf_render_stateff_svg(p, &svg);
    figure(out, "stateff", "Statistical efficiency vs global batch", &svg,
           "Samples the recipe needs at its own batch divided by the samples needed at batch M (from the gradient "
           "noise scale): a larger batch needs more samples to reach the same quality.");
    if (svg.failed)
        out->failed = 1;
    cf_buf_free(&svg);

    cf_buf_puts(out, "<h2>Alternatives</h2>\n");
    alternatives(p, out);
    mixed_types(r, out);

    cf_buf text = CF_BUF_INIT;
    cf_report_table(r, &text, 0);
    cf_buf_puts(out, "<h2>Details</h2>\n<pre>");
    esc(out, text.data ? text.data : "");
    cf_buf_puts(out, "</pre>\n</body>\n</html>\n");
    if (text.failed)
        out->failed = 1;
    cf_buf_free(&text);
}
