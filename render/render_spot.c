/* The spot and elastic parts of a recommendation (docs/spot.md): the
 * preemption model behind a spot configuration and its p10/p50/p90, the
 * deadline at the stated confidence, the mixed plan, the best on-demand
 * and the best spot plan side by side, and the elastic plan (node range,
 * global batch and LR as nodes come and go). Computed by the advisor;
 * rendered here as text, JSON and markdown. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/json.h"
#include "cloudfit/common/number.h"

#include "cloudfit/render.h"
#include "cloudfit/render/text_table.h"

static void fmt_hours(char *out, size_t n, double h)
{
    if (!isfinite(h))
        snprintf(out, n, "never");
    else if (h < 1.0 / 60)
        snprintf(out, n, "%.0f s", h * 3600);
    else if (h < 10.0 / 60) /* "1.8 min", not "2 min": a speed-up of 1.09× between two of them shows */
        snprintf(out, n, "%.1f min", h * 60);
    else if (h < 1)
        snprintf(out, n, "%.0f min", h * 60);
    else
        snprintf(out, n, "%.1f h", h);
}

static void fmt_usd(char *out, size_t n, double v)
{
    if (!isfinite(v))
        snprintf(out, n, "unbounded");
    else if (v >= 1000)
        snprintf(out, n, "$%.0f", v);
    else
        snprintf(out, n, "$%.2f", v);
}

/* ---- elastic plan ----------------------------------------------------------------- */

const cf_elastic_plan *cf_report_elastic(const cf_report *r, const cf_config *c)
{
    return cf_advice_elastic(r->advice, c);
}

static const char *lr_formula(const cf_lr_function *f, char *buf, size_t n)
{
    switch (f->rule) {
    case CF_LR_LINEAR: snprintf(buf, n, "lr0 * M / M0"); break;
    case CF_LR_SQRT: snprintf(buf, n, "lr0 * sqrt(M / M0)"); break;
    case CF_LR_NONE: snprintf(buf, n, "lr0"); break;
    default:
        if (f->noise && f->noise->n_points > 0)
            snprintf(buf, n, "lr0 * ((B(p) + M0) * M / ((B(p) + M) * M0))^%g, B(p) at training progress p",
                     f->exponent);
        else
            snprintf(buf, n, "lr0 * ((B + M0) * M / ((B + M) * M0))^%g", f->exponent);
        break;
    }
    return buf;
}

cJSON *cf_report_elastic_json(const cf_report *r, const cf_config *c)
{
    const cf_elastic_plan *e = cf_report_elastic(r, c);
    if (!e)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "min_nodes", e->min_nodes);
    cJSON_AddNumberToObject(o, "max_nodes", e->max_nodes);
    cJSON_AddNumberToObject(o, "hold_batch_min_nodes", e->hold_min_nodes);
    cJSON_AddStringToObject(o, "batch_policy", "hold the global batch (per-GPU batch and accumulation within memory and "
                                               "max_accumulation); where that falls short, it shrinks and the LR "
                                               "follows the function");
    cJSON *f = cJSON_AddObjectToObject(o, "lr_function");
    char formula[96];
    cJSON_AddStringToObject(f, "rule", cf_lr_rule_name(e->lr.rule));
    cJSON_AddStringToObject(f, "formula", lr_formula(&e->lr, formula, sizeof formula));
    cJSON_AddNumberToObject(f, "lr0", e->lr.lr0);
    cJSON_AddNumberToObject(f, "m0", e->lr.m0);
    cJSON_AddNumberToObject(f, "b_noise", cf_json_round(e->lr.b_noise, 6));
    /* B(p) for the gain rule at the current progress (docs/spot.md) */
    cJSON *trace = cJSON_AddArrayToObject(f, "b_noise_by_progress");
    for (int i = 0; e->lr.noise && i < e->lr.noise->n_points; i++) {
        const double pair[2] = {e->lr.noise->points[i].progress_fraction, cf_json_round(e->lr.noise->points[i].b_noise, 6)};
        cJSON_AddItemToArray(trace, cJSON_CreateDoubleArray(pair, 2));
    }
    cJSON_AddNumberToObject(f, "b_noise_trend_per_progress",
                            e->lr.noise ? cf_json_round(e->lr.noise->trend_per_progress, 6) : 0);
    cJSON_AddNumberToObject(f, "exponent", e->lr.exponent);
    cJSON *w = cJSON_AddObjectToObject(o, "warmup");
    cJSON_AddNumberToObject(w, "after_lr_jump_factor", e->warmup_factor);
    cJSON_AddNumberToObject(w, "steps", e->warmup_steps);
    cJSON *pts = cJSON_AddArrayToObject(o, "by_nodes");
    for (int n = 1; n <= e->max_nodes; n++) {
        const cf_elastic_point *p = &e->points[n - 1];
        cJSON *row = cJSON_CreateObject();
        cJSON_AddNumberToObject(row, "nodes", n);
        cJSON_AddNumberToObject(row, "local_batch", p->local_batch);
        cJSON_AddNumberToObject(row, "accumulation", p->accumulation);
        cJSON_AddNumberToObject(row, "global_batch", (double)p->global_batch);
        cJSON_AddNumberToObject(row, "lr", cf_json_round(p->lr, 6)); /* as CLOUDFIT_LR_BY_NODES */
        cJSON_AddNumberToObject(row, "lr_start", cf_json_round(p->lr_start, 6));
        cJSON_AddNumberToObject(row, "lr_end", cf_json_round(p->lr_end, 6));
        cJSON_AddNumberToObject(row, "progress_rate", cf_json_round(p->progress_rate, 4));
        cJSON_AddBoolToObject(row, "valid", p->valid);
        cJSON_AddItemToArray(pts, row);
    }
    return o;
}

void cf_report_elastic_text(const cf_report *r, const cf_config *c, cf_buf *out)
{
    const cf_elastic_plan *e = cf_report_elastic(r, c);
    if (!e)
        return;
    char formula[96];
    const cf_elastic_point *full = &e->points[e->max_nodes - 1];
    if (e->max_nodes == 1) {
        cf_buf_printf(out, "  - elastic: one VM (nothing to shrink to); LR(M) = %s (%s rule) if the batch changes\n",
                      lr_formula(&e->lr, formula, sizeof formula), cf_lr_rule_name(e->lr.rule));
        return;
    }
    cf_buf_printf(out, "  - elastic: valid on %d–%d VMs; per-GPU batch and accumulation hold the global batch (%ld) down to %d VM%s",
                  e->min_nodes, e->max_nodes, full->global_batch, e->hold_min_nodes, e->hold_min_nodes == 1 ? "" : "s");
    if (e->hold_min_nodes > 1)
        cf_buf_printf(out, ", below it shrinks (%ld on 1 VM, LR %.4g)", e->points[0].global_batch, e->points[0].lr);
    if (e->lr.noise && e->lr.noise->n_points > 0 && e->lr.rule == CF_LR_GAIN)
        cf_buf_printf(out, "; LR(M) = %s (gain rule: AdaScale with the noise trace, B %.0f → %.0f; on %d VMs LR %.4g at "
                           "the start → %.4g at the end)",
                      lr_formula(&e->lr, formula, sizeof formula), e->lr.noise->b_grid[0],
                      e->lr.noise->b_grid[CF_NOISE_GRID], e->max_nodes, full->lr_start, full->lr_end);
    else
        cf_buf_printf(out, "; LR(M) = %s (%s rule, B = %.0f)", lr_formula(&e->lr, formula, sizeof formula),
                      cf_lr_rule_name(e->lr.rule), e->lr.b_noise);
    cf_buf_printf(out, "; warm up over %d steps after a ≥%g× LR jump\n", e->warmup_steps, e->warmup_factor);
}

/* ---- spot --------------------------------------------------------------------------- */

/* Hours and dollars to 6 digits: the check quantile is compared with the
 * deadline and budget, and must not round past them. */
static cJSON *spread_json(const cf_spot_spread *s, int with_below)
{
    cJSON *o = cJSON_CreateObject();
    cf_json_add_rounded(o, "p10_hours", s->p10_h, 6);
    cf_json_add_rounded(o, "p50_hours", s->p50_h, 6);
    cf_json_add_rounded(o, "p90_hours", s->p90_h, 6);
    cf_json_add_rounded(o, "check_quantile_hours", s->q_h, 6);
    cf_json_add_rounded(o, "p10_usd", s->p10_usd, 6);
    cf_json_add_rounded(o, "p50_usd", s->p50_usd, 6);
    cf_json_add_rounded(o, "p90_usd", s->p90_usd, 6);
    cf_json_add_rounded(o, "check_quantile_usd", s->q_usd, 6);
    cf_json_add_rounded(o, "mean_preemptions", s->mean_preemptions, 4);
    cf_json_add_rounded(o, "mean_checkpoints", s->mean_checkpoints, 4);
    cf_json_add_rounded(o, "mean_lost_work_hours", s->mean_lost_h, 4);
    if (with_below)
        cf_json_add_rounded(o, "mean_hours_below_nodes", s->mean_below_h, 4);
    cJSON_AddNumberToObject(o, "unfinished_share", cf_json_round((double)s->n_unfinished / (double)(s->n ? s->n : 1), 3));
    return o;
}

const char *cf_config_capacity_label(const cf_config *c)
{
    if (!c->spot)
        return "";
    if (c->mixed)
        return "spot+od";
    return c->vm->spot_kind == CF_PRICE_ESTIMATED ? "spot, est." : "spot";
}

cJSON *cf_config_spot_json(const cf_config *c)
{
    if (!c->spot || !c->spot_est.valid)
        return NULL;
    const cf_spot_estimate *e = &c->spot_est;
    cJSON *o = cJSON_CreateObject();
    cJSON *m = cJSON_AddObjectToObject(o, "model");
    cJSON_AddStringToObject(m, "row", cf_spot_row_kind_name(e->source.kind));
    cJSON_AddStringToObject(m, "source", e->source.text);
    cJSON_AddStringToObject(m, "provenance", cf_provenance_name(e->source.provenance));
    cJSON_AddNumberToObject(m, "trace_nodes", e->source.row->nodes);
    cf_json_add_rounded(m, "availability_all_nodes", e->model.availability, 4);
    cf_json_add_rounded(m, "preemptions_per_node_day", e->model.rate_per_node_day, 4);
    cf_json_add_rounded(m, "cluster_events_per_day", e->model.events_per_day, 4);
    cf_json_add_rounded(m, "mtbf_hours", e->mtbf_h, 4);
    cf_json_add_rounded(m, "regime_sd_up", e->source.row->process.regime_sd_up, 4);
    cf_json_add_rounded(m, "regime_sd_down", e->source.row->process.regime_sd_down, 4);
    cJSON *ck = cJSON_AddObjectToObject(o, "checkpoint");
    cf_json_add_rounded(ck, "write_minutes", e->checkpoint_h * 60, 4);
    cf_json_add_rounded(ck, "restart_minutes", e->restart_h * 60, 4);
    cf_json_add_rounded(ck, "interval_minutes", e->interval_h * 60, 4);
    cJSON_AddStringToObject(ck, "interval_rule", "Daly");
    cf_json_add_rounded(o, "throughput_sigma", e->work_sigma, 4);
    cf_json_add_rounded(o, "throughput_sigma_up", e->work_sigma_up > e->work_sigma ? e->work_sigma_up : e->work_sigma,
                        4);
    cJSON_AddItemToObject(o, "spot_alone", spread_json(&e->spot, 1));
    cJSON_AddNumberToObject(o, "confidence", e->confidence);
    cJSON_AddNumberToObject(o, "check_quantile", e->check_quantile);
    if (e->deadline_h > 0) {
        cJSON_AddBoolToObject(o, "meets_deadline_alone", e->meets_deadline);
        cJSON_AddNumberToObject(o, "simulated_share_by_deadline", cf_json_round(e->spot_met_share, 3));
    }
    cJSON_AddStringToObject(o, "plan", c->mixed ? "mixed" : "spot");
    if (e->has_mixed) {
        cJSON *x = spread_json(&e->mixed, 0);
        cJSON_AddStringToObject(x, "policy", e->mixed_policy == CF_MIXED_UNIFORM ? "uniform" : "greedy");
        cJSON_AddBoolToObject(x, "meets_deadline", e->mixed_meets);
        cJSON_AddNumberToObject(x, "simulated_share_by_deadline", cf_json_round(e->mixed_met_share, 3));
        cf_json_add_rounded(x, "mean_ondemand_node_hours", e->mixed.mean_node_h[1], 4);
        cJSON_AddItemToObject(o, "mixed", x);
    }
    cJSON_AddNumberToObject(o, "monte_carlo_starts", (double)e->spot.n);
    return o;
}

static void spread_text(const cf_spot_spread *s, cf_buf *out)
{
    char a[24], b[24], c[24], x[24], y[24], z[24];
    fmt_hours(a, sizeof a, s->p10_h);
    fmt_hours(b, sizeof b, s->p50_h);
    fmt_hours(c, sizeof c, s->p90_h);
    fmt_usd(x, sizeof x, s->p10_usd);
    fmt_usd(y, sizeof y, s->p50_usd);
    fmt_usd(z, sizeof z, s->p90_usd);
    cf_buf_printf(out, "%s / %s / %s, %s / %s / %s", a, b, c, x, y, z);
}

/* "the 24 h deadline at 90 % (q0.90 23.1 h; 93 % of simulated starts
 * finish by then)" */
void cf_report_quantile_text(double q, char *out, size_t n)
{
    snprintf(out, n, fabs(100 * q - round(100 * q)) < 1e-9 ? "q%.2f" : "q%.4g", q);
}

static void deadline_text(const cf_spot_estimate *e, const cf_spot_spread *s, int meets, double share, cf_buf *out)
{
    char q[24], conf[16], quantile[24], starts[16];
    fmt_hours(q, sizeof q, s->q_h);
    cf_number_percent_text(e->confidence, conf, sizeof conf);
    cf_report_quantile_text(e->check_quantile, quantile, sizeof quantile);
    cf_number_share_text(share, starts, sizeof starts); /* a miss said "100 % of starts finish" */
    char deadline[48];
    cf_number_plain_text(e->deadline_h, CF_NUMBER_AS_GIVEN, deadline, sizeof deadline);
    cf_buf_printf(out, "%s the %s h deadline at %s (its %s %s; %s of simulated starts finish by then)",
                  meets ? "meets" : "misses", deadline, conf, quantile, q, starts);
}

void cf_report_spot_text(const cf_report *r, const cf_config *c, cf_buf *out)
{
    const cf_spot_estimate *e = &c->spot_est;
    if (!c->spot || !e->valid)
        return;
    char band[192] = "", q[24], ck[24], iv[24], rs[24];
    cf_vm_interruptions_origin(r->catalog, c->vm, band, sizeof band);
    if (c->nodes == 1)
        cf_buf_printf(out, "  - spot preemption model (%s): %s; the VM held %.0f%% of the time, %.1f preemptions per "
                           "VM-day held\n",
                      cf_provenance_name(e->source.provenance), e->source.text, 100 * e->model.availability,
                      e->model.rate_per_node_day);
    else
        cf_buf_printf(out, "  - spot preemption model (%s): %s; all %d VMs held %.0f%% of the time, %.1f preemptions "
                           "per VM-day held, a cluster preemption every %.1f h of running\n",
                      cf_provenance_name(e->source.provenance), e->source.text, c->nodes, 100 * e->model.availability,
                      e->model.rate_per_node_day, e->mtbf_h);
    if (band[0])
        cf_buf_printf(out, "    (the catalog's interruption band, %g%%/month from %s, is shown for information only: "
                           "it counts AWS-initiated interruptions per month, 300–7,000× fewer than the traces' "
                           "preemptions)\n", c->vm->interruptions_pct_per_month, band);
    /* the Monte Carlo draws the work above its median with σ_up (the step's two-piece log-normal): one σ
     * alone understated a plan beyond its measured node count (σ 0.05 printed, 0.30 drawn) */
    if (e->work_sigma_up > e->work_sigma + 0.005)
        cf_buf_printf(out, "  - spot alone, p10 / p50 / p90 over the model and the throughput uncertainty (σ %.2f below, "
                           "%.2f above): ", e->work_sigma, e->work_sigma_up);
    else
        cf_buf_printf(out, "  - spot alone, p10 / p50 / p90 over the model and the throughput uncertainty (σ %.2f): ",
                      e->work_sigma);
    spread_text(&e->spot, out);
    cf_buf_puts(out, "; ");
    if (e->deadline_h > 0) {
        deadline_text(e, &e->spot, e->meets_deadline, e->spot_met_share, out);
    } else {
        char quantile[24];
        fmt_hours(q, sizeof q, e->spot.q_h);
        cf_report_quantile_text(e->check_quantile, quantile, sizeof quantile);
        cf_buf_printf(out, "%s %s", quantile, q);
    }
    cf_buf_puts(out, "\n");
    fmt_hours(ck, sizeof ck, e->checkpoint_h);
    fmt_hours(iv, sizeof iv, e->interval_h);
    fmt_hours(rs, sizeof rs, e->restart_h);
    cf_buf_printf(out, "  - checkpoint: %s to write every %s of work (Daly), restart %s; on average %.1f preemptions, "
                       "%.1f h of work lost, %.1f h %s\n",
                  ck, iv, rs, e->spot.mean_preemptions, e->spot.mean_lost_h, e->spot.mean_below_h,
                  c->nodes == 1 ? "without the VM" : "below the requested VMs");
    if (e->has_mixed) {
        cf_buf_printf(out, "  - mixed plan (spot, then on demand when the deadline comes close; %s): ",
                      e->mixed_policy == CF_MIXED_UNIFORM ? "uniform progress" : "greedy");
        spread_text(&e->mixed, out);
        cf_buf_puts(out, "; ");
        deadline_text(e, &e->mixed, e->mixed_meets, e->mixed_met_share, out);
        cf_buf_printf(out, "%s\n", c->mixed ? ": chosen, spot alone misses it and this is cheaper than on demand" : "");
    }
}

/* The best on-demand and the best spot configuration, side by side. */
void cf_report_side_by_side_text(const cf_report *r, cf_buf *out)
{
    const cf_advice *a = r->advice;
    if (r->spec->search.spot == CF_SPOT_NEVER || (!a->have_best_ondemand && !a->have_best_spot))
        return;
    cf_buf_puts(out, "\nBest on-demand and best spot plan (spot: p10 / p50 / p90 of its distribution):\n");
    for (int k = 0; k < 2; k++) {
        const cf_config *c = k == 0 ? &a->best_ondemand : &a->best_spot;
        int have = k == 0 ? a->have_best_ondemand : a->have_best_spot;
        if (!have && k == 0 && r->spec->search.spot == CF_SPOT_ONLY) {
            cf_buf_puts(out, "  on-demand not searched (--spot only)\n"); /* not "none meets the constraints" */
            continue;
        }
        if (!have) {
            cf_buf_printf(out, "  %-9s none meets the constraints%s\n", k == 0 ? "on-demand" : "spot",
                          k == 1 ? " at the stated confidence" : "");
            continue;
        }
        char usd[24], h[24];
        cf_buf_printf(out, "  %-9s %s/%s %s × %d: ", k == 0 ? "on-demand" : c->mixed ? "mixed" : "spot", c->vm->cloud,
                      c->vm->region, c->vm->instance_type, c->nodes);
        if (k == 0 || !c->spot_est.valid) {
            fmt_hours(h, sizeof h, c->hours);
            fmt_usd(usd, sizeof usd, c->total_usd);
            cf_buf_printf(out, "%s, %s\n", h, usd);
        } else {
            spread_text(c->mixed ? &c->spot_est.mixed : &c->spot_est.spot, out);
            cf_buf_puts(out, "\n");
        }
    }
}

cJSON *cf_report_side_by_side_json(const cf_report *r)
{
    const cf_advice *a = r->advice;
    cJSON *o = cJSON_CreateObject();
    if (a->have_best_ondemand)
        cJSON_AddItemToObject(o, "on_demand", cf_config_json(&a->best_ondemand));
    else
        cJSON_AddNullToObject(o, "on_demand");
    if (a->have_best_spot) {
        cJSON *spot = cf_config_json(&a->best_spot);
        cJSON_AddItemToObject(spot, "elastic", cf_report_elastic_json(r, &a->best_spot));
        cJSON_AddItemToObject(o, "spot", spot);
    } else {
        cJSON_AddNullToObject(o, "spot");
    }
    cJSON_AddNumberToObject(o, "spot_configurations_simulated", (double)a->n_spot_simulated);
    return o;
}

void cf_report_side_by_side_markdown(const cf_report *r, cf_buf *out)
{
    const cf_advice *a = r->advice;
    if (r->spec->search.spot == CF_SPOT_NEVER || (!a->have_best_ondemand && !a->have_best_spot))
        return;
    /* times as the text writes them ("10 min / 41 min / 25.8 h"): in bare hours a 10-minute plan read "0.2";
     * the three quantiles are the spot plan's, as the text's heading says: under "time (p10 / p50 / p90)" the
     * on-demand plan's one figure (its median) read as all three */
    cf_buf_puts(out, "\n### Best on-demand and best spot plan\n\n| plan | configuration | time (spot: p10 / p50 / p90) "
                     "| total $ (spot: p10 / p50 / p90) |\n|---|---|---|---|\n");
    for (int k = 0; k < 2; k++) {
        const cf_config *c = k == 0 ? &a->best_ondemand : &a->best_spot;
        char h[3][24];
        if (!(k == 0 ? a->have_best_ondemand : a->have_best_spot)) { /* the rows the text gives, not none */
            if (k == 0 && r->spec->search.spot == CF_SPOT_ONLY)
                cf_buf_puts(out, "| on-demand | not searched (--spot only) | | |\n");
            else
                cf_buf_printf(out, "| %s | none meets the constraints%s | | |\n", k == 0 ? "on-demand" : "spot",
                              k == 1 ? " at the stated confidence" : "");
            continue;
        }
        cf_buf_printf(out, "| %s | %s/%s `%s` × %d | ", k == 0 ? "on-demand" : c->mixed ? "mixed" : "spot",
                      c->vm->cloud, c->vm->region, c->vm->instance_type, c->nodes);
        if (k == 0 || !c->spot_est.valid) {
            fmt_hours(h[0], sizeof h[0], c->hours);
            cf_buf_printf(out, "%s | %.2f |\n", h[0], c->total_usd);
        } else {
            const cf_spot_spread *s = c->mixed ? &c->spot_est.mixed : &c->spot_est.spot;
            fmt_hours(h[0], sizeof h[0], s->p10_h);
            fmt_hours(h[1], sizeof h[1], s->p50_h);
            fmt_hours(h[2], sizeof h[2], s->p90_h);
            cf_buf_printf(out, "%s / %s / %s | %.2f / %.2f / %.2f |\n", h[0], h[1], h[2], s->p10_usd, s->p50_usd,
                          s->p90_usd);
        }
    }
}

/* ---- two GPU types in one job (--mix) ------------------------------------------------ */

const char *cf_report_hetero_why_not(const cf_hetero_advice *h)
{
    switch (h->why_not) {
    case CF_HETERO_SPOT_ONLY:
        return "not evaluated with --spot only: a mix of spot VMs of two types needs a preemption model of both "
               "together, and cloudfit's is fitted per VM type (`cloudfit simulate --trace A --trace B` replays a "
               "mix on two traces)";
    case CF_HETERO_NO_ONDEMAND_PRICE:
        return "the top plans' offers are sold as spot only, and a spot mix has no preemption model (it is fitted "
               "per VM type)";
    case CF_HETERO_NO_PARTNER:
        return "no other GPU type with a throughput model is offered in the regions of the top plans";
    case CF_HETERO_NOTHING_FITS:
        return "no global batch fits the memory of any pair within the batch and accumulation limits";
    case CF_HETERO_CONSTRAINTS: return "no mix meets the deadline and budget";
    case CF_HETERO_NOT_FASTER:
        return "mixes meet the deadline and budget, but none is faster than the same VMs of one type";
    case CF_HETERO_LIMITS:
        return "a mix needs VMs of two types, and search.max_nodes or search.max_gpus (--max-nodes, --max-gpus) "
               "leaves no room for them";
    case CF_HETERO_FOUND: break;
    }
    return "";
}

void cf_report_hetero_text(const cf_report *r, cf_buf *out)
{
    if (!r->hetero)
        return;
    const cf_hetero_advice *h = r->hetero;
    if (!h->have) {
        cf_buf_printf(out, "\nMixed GPU types (--mix): none: %s", cf_report_hetero_why_not(h));
        if (h->why_not != CF_HETERO_SPOT_ONLY)
            cf_buf_printf(out, " (%zu offer pairs, %zu mixes evaluated)", h->n_pairs, h->n_evaluated);
        cf_buf_puts(out, "\n");
        return;
    }
    const cf_hetero_plan *p = &h->best;
    const cf_config *best = &r->advice->ranked[0];
    cf_buf_printf(out, "\nMixed GPU types (--mix): %s/%s %d × %s (%d×%s) + %d × %s (%d×%s)\n", p->vm[0]->cloud,
                  p->vm[0]->region, p->nodes[0], p->vm[0]->instance_type, p->gpus_per_node[0], p->vm[0]->gpu_model,
                  p->nodes[1], p->vm[1]->instance_type, p->gpus_per_node[1], p->vm[1]->gpu_model);
    cf_buf_printf(out, "  - per-worker batch: %d on each %s GPU%s, %d on each %s GPU%s (equal predicted compute times "
                       "%.3f s / %.3f s), × %d accumulation = global batch %ld, LR %.4g\n",
                  p->batch[0], p->vm[0]->gpu_model, p->batch_spread[0] ? " (±1)" : "", p->batch[1],
                  p->vm[1]->gpu_model, p->batch_spread[1] ? " (±1)" : "", p->compute_s[0], p->compute_s[1],
                  p->accumulation, p->global_batch, p->lr.lr);
    char hours[32], chosen_hours[32], alone[2][32], training[32];
    fmt_hours(hours, sizeof hours, p->hours);
    fmt_hours(training, sizeof training, p->train_hours);
    fmt_hours(chosen_hours, sizeof chosen_hours, best->hours);
    for (int t = 0; t < 2; t++)
        fmt_hours(alone[t], sizeof alone[t], p->single_hours[t]);
    char lo[32], hi[32], at[32], conf[16];
    fmt_hours(lo, sizeof lo, p->hours_p10);
    fmt_hours(hi, sizeof hi, p->hours_p90);
    fmt_hours(at, sizeof at, p->hours_at_confidence);
    cf_number_percent_text(r->spec->search.confidence > 0 ? r->spec->search.confidence : CF_DEFAULT_CONFIDENCE, conf,
                    sizeof conf);
    cf_buf_printf(out, "  - step %.3f s (all-reduce %.3f s at the slowest link, each VM on its own network), %s "
                       "(80%%: %s–%s), $%.2f (on demand); at %s confidence %s, $%.2f, held to the limits as the "
                       "single-type plans are\n",
                  p->step_time_s, p->sync_s, hours, lo, hi, p->total_usd, conf, at, p->usd_at_confidence);
    int faster = p->hours < best->hours, cheaper = p->total_usd < best->total_usd;
    cf_buf_printf(out, "  - against the chosen single-type plan (%s, $%.2f): %.2f× its speed, %s\n", chosen_hours,
                  best->total_usd, p->speedup_over_chosen,
                  faster && cheaper ? "faster and cheaper"
                  : faster          ? "faster, costs more"
                  : cheaper         ? "cheaper, slower"
                                    : "slower and costs more: shown for teams that have these VMs");
    if (p->equal_step_time_s > 0)
        cf_buf_printf(out, "  - against the same workers with equal per-worker batches (%d × %d accumulation, step "
                           "%.3f s): %.2f× faster\n",
                      p->equal_local_batch, p->equal_accumulation, p->equal_step_time_s, p->speedup_over_equal_batches);
    else
        cf_buf_puts(out, "  - equal per-worker batches do not fit the smaller GPU's memory at this global batch\n");
    /* training times on both sides: the mix's total above includes the start-up */
    cf_buf_printf(out, "  - against either type's VMs alone, training time (start-up aside): the mix %s, %.2f× faster "
                       "than the faster alone (%s alone %s, %s alone %s)\n",
                  training, p->speedup, p->vm[0]->gpu_model, alone[0], p->vm[1]->gpu_model, alone[1]);
    if (h->n_spot_priced_on_demand)
        cf_buf_puts(out, "  - the top plans include spot ones: their VMs are mixed on demand (a spot mix would need a "
                         "preemption model of two VM types together)\n");
    cf_buf_puts(out, "  - at run time 'cloudfit rebalance' keeps the workers' compute times equal (docs/spot.md)\n");
}

cJSON *cf_report_hetero_json(const cf_report *r)
{
    static const char *const why[] = {"", "spot_only", "no_on_demand_price", "no_other_gpu_type", "nothing_fits",
                                      "constraints", "not_faster", "limits"};
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "evaluated", (double)r->hetero->n_evaluated);
    if (!r->hetero->have) {
        cJSON_AddNullToObject(o, "best");
        cJSON_AddStringToObject(o, "none_because", why[r->hetero->why_not]);
        cJSON_AddStringToObject(o, "none_reason", cf_report_hetero_why_not(r->hetero));
        return o;
    }
    const cf_hetero_plan *p = &r->hetero->best;
    cJSON *b = cJSON_AddObjectToObject(o, "best");
    cJSON *types = cJSON_AddArrayToObject(b, "types");
    for (int t = 0; t < 2; t++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "cloud", p->vm[t]->cloud);
        cJSON_AddStringToObject(x, "region", p->vm[t]->region);
        cJSON_AddStringToObject(x, "instance_type", p->vm[t]->instance_type);
        cJSON_AddStringToObject(x, "gpu", p->vm[t]->gpu_model);
        cJSON_AddNumberToObject(x, "nodes", p->nodes[t]);
        cJSON_AddNumberToObject(x, "gpus_per_node", p->gpus_per_node[t]);
        cJSON_AddNumberToObject(x, "local_batch", p->batch[t]);
        cJSON_AddBoolToObject(x, "local_batch_varies_by_one", p->batch_spread[t]);
        cf_json_add_rounded(x, "compute_s", p->compute_s[t], 4);
        cf_json_add_rounded(x, "single_type_train_hours", p->single_hours[t], 6);
        cJSON_AddItemToArray(types, x);
    }
    cJSON_AddNumberToObject(b, "accumulation", p->accumulation);
    cJSON_AddNumberToObject(b, "global_batch", (double)p->global_batch);
    cf_json_add_rounded(b, "lr", p->lr.lr, 4);
    cf_json_add_rounded(b, "step_time_s", p->step_time_s, 4);
    cf_json_add_rounded(b, "sync_s", p->sync_s, 4);
    /* hours and dollars with 6 significant digits, as every configuration's
     * (docs/output.md): with 4, a mix held to a 17.159 h deadline read 17.16 */
    cf_json_add_rounded(b, "hours", p->hours, 6);
    cf_json_add_rounded(b, "usd_per_hour", p->usd_per_hour, 6);
    cf_json_add_rounded(b, "total_usd", p->total_usd, 6);
    cf_json_add_rounded(b, "hours_p10", p->hours_p10, 6);
    cf_json_add_rounded(b, "hours_p90", p->hours_p90, 6);
    cf_json_add_rounded(b, "hours_at_confidence", p->hours_at_confidence, 6);
    cf_json_add_rounded(b, "total_usd_at_confidence", p->usd_at_confidence, 6);
    cf_json_add_rounded(b, "speedup_over_chosen", p->speedup_over_chosen, 4);
    if (p->equal_step_time_s > 0) {
        cf_json_add_rounded(b, "speedup_over_equal_batches", p->speedup_over_equal_batches, 4);
        cJSON *e = cJSON_AddObjectToObject(b, "equal_batches");
        cJSON_AddNumberToObject(e, "local_batch", p->equal_local_batch);
        cJSON_AddNumberToObject(e, "accumulation", p->equal_accumulation);
        cf_json_add_rounded(e, "step_time_s", p->equal_step_time_s, 4);
    } else {
        cJSON_AddNullToObject(b, "speedup_over_equal_batches");
        cJSON_AddNullToObject(b, "equal_batches");
    }
    cf_json_add_rounded(b, "speedup_over_best_single_type", p->speedup, 4);
    cJSON_AddBoolToObject(b, "spot_plans_mixed_on_demand", r->hetero->n_spot_priced_on_demand > 0);
    return o;
}
