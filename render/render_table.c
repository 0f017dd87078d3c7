#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/render/render_catalog.h"
#include "cloudfit/common/number.h"
#include "cloudfit/render/text_table.h"
#include "cloudfit/render.h"
#include "cloudfit/pricing/regions.h"


/* text_table.c's green and bold (written as two codes) and reset, and
 * render_chart.c's GREEN_BOLD and DIM. */
const char *const cf_report_color_codes[] = {"\033[32m", "\033[1m", "\033[0m", "\033[1;32m", "\033[2m", NULL};

/* 12345.6 → "12,346"; keeps `decimals` below 100; from 1e15 on (where a
 * double stops holding every whole number, and lround would wrap past
 * 2^63) in scientific notation: "1.84e+19". */
static void fmt_money(char *out, size_t n, double v)
{
    if (!(v < 1e15)) {
        snprintf(out, n, "%.3g", v);
    } else if (v >= 100) {
        char digits[32];
        snprintf(digits, sizeof digits, "%.0f", v);
        size_t len = strlen(digits), o = 0;
        for (size_t i = 0; i < len && o + 2 < n; i++) {
            out[o++] = digits[i];
            if ((len - i - 1) % 3 == 0 && i + 1 < len)
                out[o++] = ',';
        }
        out[o] = '\0';
    } else {
        snprintf(out, n, "%.2f", v);
    }
}

static void fmt_count(char *out, size_t n, double v)
{
    if (v < 100)
        snprintf(out, n, "%.0f", v);
    else
        fmt_money(out, n, v);
}

/* The ranking's columns and what goes first when the terminal is narrow
 * (cloudfit/render/text_table.h): the redundant mark, the accumulation,
 * the global batch, the VM price, then the intervals, then the region,
 * batch and LR (the explanation below repeats the chosen one's); the
 * left-out line names the intervals as it does the columns. Rank,
 * instance, shape and cost always stay; the time too unless even the cut
 * instance names leave no room (the explanation below gives the pick's). */
static const cf_text_column columns[] = {
    {"#", 1, 0, 0, 0, NULL, NULL},
    {"CLOUD/REGION", 0, 9, 1, 0, NULL, NULL},
    {"INSTANCE", 0, 0, 1, 0, NULL, NULL},
    {"NODES×GPUS", 0, 0, 0, 0, NULL, NULL},
    {"BATCH/GPU", 1, 7, 0, 0, NULL, NULL},
    {"ACCUM", 1, 2, 0, 0, NULL, NULL},
    {"GLOBAL", 1, 3, 0, 0, NULL, NULL},
    {"LR", 1, 8, 0, 0, NULL, NULL},
    {"TIME (80%)", 1, -1, 0, 5, "TIME", "80% interval"},
    {"$/HR", 1, 4, 0, 0, NULL, NULL},
    {"TOTAL $ (80%)", 1, 0, 0, 6, "TOTAL $", "80% interval"},
    {"CHOSEN", 0, 1, 0, 0, NULL, NULL},
};
#define N_COLUMNS (sizeof columns / sizeof *columns)
#define CELL 96

static void row_cells(const cf_config *c, size_t rank, char cells[N_COLUMNS][CELL], char shorts[N_COLUMNS][CELL])
{
    snprintf(cells[0], CELL, "%zu", rank);
    snprintf(cells[1], CELL, "%s/%s", c->vm->cloud, c->vm->region);
    snprintf(cells[2], CELL, "%s%s%s%s", c->vm->instance_type, c->spot ? " (" : "", cf_config_capacity_label(c),
             c->spot ? ")" : "");
    snprintf(cells[3], CELL, "%d×%d %s", c->nodes, c->gpus_per_node, c->vm->gpu_model);
    snprintf(cells[4], CELL, "%d", c->local_batch);
    snprintf(cells[5], CELL, "%d", c->accumulation);
    snprintf(cells[6], CELL, "%ld", c->global_batch);
    snprintf(cells[7], CELL, "%.4g", c->lr.lr);
    /* the point value and the 80 % interval: "18.9 h (16.4–21.8)", "12 min (10–15)" */
    cf_text_duration_range(c->hours, c->hours_p10, c->hours_p90, cells[8], CELL);
    cf_text_duration(c->hours, shorts[8], CELL);
    snprintf(cells[9], CELL, "%.2f", c->usd_per_hour);
    char usd[24], lo[24], hi[24];
    fmt_money(usd, sizeof usd, c->total_usd);
    fmt_money(lo, sizeof lo, c->total_usd_p10);
    fmt_money(hi, sizeof hi, c->total_usd_p90);
    snprintf(cells[10], CELL, "%s (%s–%s)", usd, lo, hi);
    snprintf(shorts[10], CELL, "%s", usd);
    snprintf(cells[11], CELL, "%s", rank == 1 ? "✔" : "");
}

static void table(const cf_report *r, cf_buf *out, int color, int width)
{
    size_t n = r->advice->n_ranked;
    char(*cells)[N_COLUMNS][CELL] = calloc(n ? n : 1, sizeof *cells);
    char(*shorts)[N_COLUMNS][CELL] = calloc(n ? n : 1, sizeof *shorts);
    const char **cell_ptr = calloc(n * N_COLUMNS + 1, sizeof *cell_ptr);
    const char **short_ptr = calloc(n * N_COLUMNS + 1, sizeof *short_ptr);
    if (!cells || !shorts || !cell_ptr || !short_ptr) {
        out->failed = 1;
    } else {
        for (size_t i = 0; i < n; i++) {
            row_cells(&r->advice->ranked[i], i + 1, cells[i], shorts[i]);
            for (size_t c = 0; c < N_COLUMNS; c++) {
                cell_ptr[i * N_COLUMNS + c] = cells[i][c];
                short_ptr[i * N_COLUMNS + c] = shorts[i][c][0] ? shorts[i][c] : NULL;
            }
        }
        cf_text_table t = {.columns = columns, .n_columns = N_COLUMNS, .cells = cell_ptr, .short_cells = short_ptr,
                           .n_rows = n, .width = width, .lead = 1, .gap = 2, .rules = 1, .pad_last_title = 1,
                           .highlight_row = 0, .color = color};
        cf_buf left_out = CF_BUF_INIT;
        cf_text_table_render(&t, out, &left_out);
        cf_text_table_note(&left_out, width, out);
        cf_buf_free(&left_out);
    }
    free(cells);
    free(shorts);
    free(cell_ptr);
    free(short_ptr);
}

/* "cheapest of N configurations that meet the deadline (POINT; AT at 90% ≤
 * D h) and the budget (...) with 90% confidence": the figures the limits
 * were held to (cloudfit/render.h). */
void cf_report_constraint_text(const cf_report *r, const cf_config *c, cf_buf *out)
{
    const cf_spec *s = r->spec;
    char money[32], feasible[32];
    fmt_money(money, sizeof money, c->total_usd);
    fmt_count(feasible, sizeof feasible, (double)r->advice->n_feasible);
    const char *goal = s->search.objective == CF_OBJ_COST ? "cheapest" : s->search.objective == CF_OBJ_TIME ? "fastest" : "best time × cost";
    cf_buf_printf(out, "%s of %s configurations", goal, feasible);
    if (s->search.deadline_hours > 0 || s->search.budget_usd > 0) {
        char conf[16];
        cf_number_percent_text(s->search.confidence > 0 ? s->search.confidence : CF_DEFAULT_CONFIDENCE, conf, sizeof conf);
        cf_buf_puts(out, " that meet");
        if (s->search.deadline_hours > 0) {
            char deadline[48]; /* as given, never "1e+06" */
            cf_number_plain_text(s->search.deadline_hours, CF_NUMBER_AS_GIVEN, deadline, sizeof deadline);
            if (c->spot && c->spot_est.valid) { /* the plan's own distribution, at its check quantile */
                char point[32], at[32];
                cf_text_duration(c->hours, point, sizeof point);
                cf_text_duration(c->hours_at_confidence, at, sizeof at);
                char quantile[24];
                cf_report_quantile_text(c->spot_est.check_quantile, quantile, sizeof quantile);
                cf_buf_printf(out, " the deadline (median %s; %s %s ≤ %s h)", point, quantile, at, deadline);
            } else {
                char point[32], at[32];
                cf_text_duration(c->hours, point, sizeof point);
                cf_text_duration(c->hours_at_confidence, at, sizeof at);
                cf_buf_printf(out, " the deadline (%s; %s at %s ≤ %s h)", point, at, conf, deadline);
            }
        }
        if (s->search.deadline_hours > 0 && s->search.budget_usd > 0)
            cf_buf_puts(out, " and");
        if (s->search.budget_usd > 0) {
            char budget[32], at[32];
            fmt_money(budget, sizeof budget, s->search.budget_usd);
            fmt_money(at, sizeof at, c->usd_at_confidence);
            char quantile[24];
            cf_report_quantile_text(c->spot_est.check_quantile, quantile, sizeof quantile);
            if (c->spot && c->spot_est.valid)
                cf_buf_printf(out, " the budget ($%s; %s $%s ≤ $%s)", money, quantile, at, budget);
            else
                cf_buf_printf(out, " the budget ($%s; $%s at %s ≤ $%s)", money, at, conf, budget);
        }
        cf_buf_printf(out, " with %s confidence", conf);
    }
}

/* How the inter-node cost was obtained: a fitted probe, a carried or given
 * figure, or the documented default for the VM's NIC (a guess on a NIC the
 * catalog does not give: the step's interval spans the catalog's NICs).
 * The same words in every format (cloudfit/render.h). */
int cf_report_network_text(const cf_report *r, const cf_config *c, cf_buf *out)
{
    const cf_advice_explained *e = r->advice->explained;
    const cf_gpu_perf *perf = NULL;
    for (size_t i = 0; i < r->inputs->n_perf; i++)
        if (strcmp(r->inputs->perf[i].gpu, c->vm->gpu_model) == 0)
            perf = &r->inputs->perf[i];
    if (!perf || !e || !e->have_network) {
        cf_buf_printf(out, "one VM, no inter-node all-reduce");
        return 0;
    }
    cf_provenance prov = e->inter_provenance; /* computed once (cloudfit/advisor/explain.h) */
    double gbps = e->inter_gbps;
    char nic[48];
    if (c->vm->network_gbps > 0)
        snprintf(nic, sizeof nic, "the %g Gbit/s NIC", c->vm->network_gbps);
    else
        snprintf(nic, sizeof nic, "a NIC of unknown speed (%g Gbit/s assumed)", CF_DEFAULT_UNKNOWN_NETWORK_GBPS);
    switch (prov) {
    case CF_PROV_DEFAULT:
        cf_buf_printf(out, "%.1f Gbit/s effective between VMs, the default for %s (min(½ nominal, %g Gbit/s) "
                           "over TCP, ½ nominal for RDMA; docs/model.md) — a 2-node probe would measure it",
                      gbps, nic, CF_DEFAULT_TCP_ALLREDUCE_GBPS);
        if (cf_report_network_is_guess(r, c)) /* the interval spans the catalog's NICs (docs/model.md "Intervals") */
            cf_buf_printf(out, "; the NIC is unknown, so the step's 80%% interval spans the catalog's NICs, %g to %g Gbit/s",
                          CF_UNKNOWN_NIC_SLOWEST_GBPS, CF_UNKNOWN_NIC_FIT_BOUND_GBPS);
        break;
    case CF_PROV_ESTIMATED:
        if (perf->reference_network_gbps > 0)
            cf_buf_printf(out, "%.1f Gbit/s effective between VMs, carried from a measurement on a %g Gbit/s "
                               "NIC to %s%s%s", gbps, perf->reference_network_gbps, nic,
                          perf->network_note[0] ? "; " : "", perf->network_note);
        else /* a rate given with no NIC (a spec's sync_s.inter_node_gbps): kept as is, not scaled (cf_perf_on_network) */
            cf_buf_printf(out, "%.1f Gbit/s effective between VMs, carried as is from %s%s to %s (the NIC it "
                               "was measured on is not known, so it is not scaled to this one)%s%s", gbps,
                          perf->carried_from[0] ? perf->carried_from : "a measurement",
                          perf->carried_from[0] ? "'s profile" : "", nic, perf->network_note[0] ? "; " : "",
                          perf->network_note);
        break;
    default:
        if (perf->network_note[0]) /* e.g. the 2-node probe of `cloudfit profile --runner` */
            cf_buf_printf(out, "%.1f Gbit/s effective between VMs, %s from the %s", gbps,
                          cf_provenance_name(prov), perf->network_note);
        else
            cf_buf_printf(out, "%.1f Gbit/s effective between VMs, %s from multi-node measurements",
                          gbps, cf_provenance_name(prov));
        break;
    }
    return 1;
}

int cf_report_network_is_guess(const cf_report *r, const cf_config *c)
{
    const cf_advice_explained *e = r->advice->explained;
    return e && e->have_network && e->inter_provenance == CF_PROV_DEFAULT && c->vm->network_gbps <= 0;
}

void cf_report_extrapolation_note(const cf_config *c, cf_buf *out)
{
    if (c->network_measured_max_nodes <= 0)
        return;
    cf_buf_printf(out, "%d nodes, but the network was measured on at most %d: how the all-reduce grows with the node "
                       "count differs between clusters (docs/model.md), so this step time is extrapolated — measure "
                       "%d nodes (cloudfit search, or profile --runner) before relying on the deadline",
                  c->nodes, c->network_measured_max_nodes, c->nodes);
}

static void explanation(const cf_report *r, cf_buf *out)
{
    const cf_config *c = &r->advice->ranked[0];
    const cf_inputs *in = r->inputs;
    const cf_spec *s = r->spec;
    cf_buf_printf(out, "\nWhy %s/%s %s × %d%s%s%s:\n", c->vm->cloud, c->vm->region, c->vm->instance_type, c->nodes,
                  c->spot ? " (" : "", cf_config_capacity_label(c), c->spot ? ")" : "");
    cf_buf_puts(out, "  - ");
    cf_report_constraint_text(r, c, out);
    cf_buf_puts(out, "\n");
    const cf_advice_explained *e = r->advice->explained;
    double step_lo = e ? e->step_p10_s : NAN, step_hi = e ? e->step_p90_s : NAN;
    char efficiency[16];
    cf_number_share_text(c->parallel_efficiency, efficiency, sizeof efficiency); /* 0.9965 read 100% */
    if (c->nodes * c->gpus_per_node == 1)
        cf_buf_printf(out, "  - step %.3f s (80%%: %.3f–%.3f): compute %.3f s per micro-batch; one GPU, so no gradient "
                           "all-reduce\n",
                      c->step_time_s, step_lo, step_hi, c->compute_s);
    else if (c->nodes == 1)
        cf_buf_printf(out, "  - step %.3f s (80%%: %.3f–%.3f): %.3f s per micro-batch on %d GPUs of one VM (its "
                           "all-reduce inside); parallel efficiency %s\n",
                      c->step_time_s, step_lo, step_hi, c->compute_s, c->gpus_per_node, efficiency);
    else
        cf_buf_printf(out, "  - step %.3f s (80%%: %.3f–%.3f): %.3f s per micro-batch on one VM, all-reduce between VMs "
                           "%.3f s (partly hidden behind the backward pass); parallel efficiency %s\n",
                      c->step_time_s, step_lo, step_hi, c->compute_s, c->sync_s, efficiency);
    char samples[32], steps[32];
    fmt_count(samples, sizeof samples, c->samples_to_target);
    fmt_count(steps, sizeof steps, c->steps);
    char noise[32]; /* 0.13 is not a noise scale of "0" */
    cf_number_plain_text(in->noise.b_noise_effective, 2, noise, sizeof noise);
    cf_buf_printf(out, "  - global batch %ld = %d node%s × %d GPU%s × %d per GPU × %d accumulation: statistical efficiency %.0f%% "
                       "(noise scale %s, %s) → %s samples, %s steps\n",
                  c->global_batch, c->nodes, c->nodes == 1 ? "" : "s", c->gpus_per_node, c->gpus_per_node == 1 ? "" : "s",
                  c->local_batch, c->accumulation,
                  100 * c->stat_efficiency, noise, cf_provenance_name(in->noise.provenance),
                  samples, steps);
    const char *why_rule = s->job.lr_rule == CF_LR_AUTO ? (c->lr.sqrt_form ? "auto: AdaScale gain, square root for Adam-family optimizers"
                                                                       : "auto: AdaScale gain for SGD")
                                                    : "as the spec asks";
    cf_buf_printf(out, "  - learning rate %.4g = %g × %.3g (%s rule, %s)%s\n", c->lr.lr, s->job.lr, c->lr.factor,
                  cf_lr_rule_name(c->lr.rule_used), why_rule,
                  c->lr.warmup_recommended ? "; warm up linearly over the first ~5% of steps" : "");
    cf_report_spot_text(r, c, out);
    if (c->spot)
        cf_report_elastic_text(r, c, out);
    cf_buf_printf(out, "  - noise scale: %s\n", in->noise_note);
    for (size_t i = 0; i < in->n_perf; i++) {
        const cf_gpu_perf *g = &in->perf[i];
        if (g->params.compute_provenance != CF_PROV_ESTIMATED || strcmp(g->gpu, c->vm->gpu_model) == 0)
            cf_buf_printf(out, "  - %s throughput %s: %s\n", g->gpu, cf_provenance_name(g->params.compute_provenance),
                          g->note);
    }
    size_t n_est = 0;
    for (size_t i = 0; i < in->n_perf; i++) /* the chosen GPU's own line is above */
        n_est += in->perf[i].params.compute_provenance == CF_PROV_ESTIMATED &&
                 strcmp(in->perf[i].gpu, c->vm->gpu_model) != 0;
    if (n_est)
        cf_buf_printf(out, "  - %zu other GPU type%s estimated from the GPU table (see --format json)\n", n_est,
                      n_est == 1 ? "" : "s");
    cf_buf_puts(out, "  - network: ");
    cf_report_network_text(r, c, out);
    cf_buf_puts(out, "\n");
    char price_origin[192], price_age[48], availability[384];
    cf_vm_price_origin(c->vm, c->spot, price_origin, sizeof price_origin);
    cf_vm_price_age_text(c->vm, c->spot, price_age, sizeof price_age);
    cf_buf_printf(out, "  - price %s per VM-hour: %s%s\n", c->spot ? "spot" : "on-demand", price_origin, price_age);
    cf_vm_availability(c->vm, availability, sizeof availability);
    cf_buf_printf(out, "  - %s\n", availability);
    /* catalog name, source, age, too-old note and price overrides (render_catalog.c) */
    cf_catalog_source_explain(r->catalog_source, r->catalog, r->catalog_age_days, c->vm, c->spot, c->mixed, out);
    if (r->advice->next.kind != CF_MEASURE_NONE) {
        cf_buf_puts(out, "  next measurement: ");
        cf_next_measurement_text(&r->advice->next, s->job.source, r->history, out);
        cf_buf_puts(out, "\n");
    }
    if (c->network_measured_max_nodes > 0) {
        cf_buf_puts(out, "  note: ");
        cf_report_extrapolation_note(c, out);
        cf_buf_puts(out, "\n");
    }
    for (int i = 0; i < in->n_notes; i++) /* a note's hint (advisor/model/inputs.c) is its own line */
        cf_buf_printf(out, strncmp(in->notes[i], "hint: ", 6) == 0 ? "  %s\n" : "  note: %s\n", in->notes[i]);
}

void cf_report_table(const cf_report *r, cf_buf *out, int color) { cf_report_table_fit(r, out, color, 0); }

void cf_report_table_fit(const cf_report *r, cf_buf *out, int color, int width)
{
    char offers[32], feasible[32];
    fmt_count(offers, sizeof offers, (double)r->n_offers);
    fmt_count(feasible, sizeof feasible, (double)r->advice->n_feasible);
    cf_buf_printf(out, "%s: %s offers × 1–%d nodes, %s configurations meet the constraints (objective: %s)\n",
                  r->spec->job.name, offers, r->spec->search.max_nodes, feasible, cf_objective_name(r->spec->search.objective));
    table(r, out, color, width);
    explanation(r, out);
    cf_report_side_by_side_text(r, out);
    cf_report_hetero_text(r, out);
}
