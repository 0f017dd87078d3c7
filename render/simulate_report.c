#include "cloudfit/render/simulate_report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cloudfit/common/json.h"
#include "cloudfit/common/number.h"

#include "cloudfit/common/fileio.h"
#include "cloudfit/version.h"

/* A trace's file name (a merged trace's name is already "A + B"). */
static const char *base_name(const char *p) { return strstr(p, " + ") ? p : cf_basename(p); }

static void hours_cell(char *out, size_t n, double h)
{
    if (isfinite(h))
        snprintf(out, n, "%.1f", h);
    else
        snprintf(out, n, "never");
}

/* A row's batch policy, in the table's column, its notes and the JSON
 * alike: the mixed-types row holds the batch where memory allows ("hold";
 * its column said "-" while its notes said "hold, mixed-types"). */
static const char *batch_name(cf_elastic_batch b) { return b == CF_ELASTIC_HOLD ? "hold" : "shrink"; }

void cf_simulate_stop_text(const cf_spot_spread *sp, double trace_h, char *out, size_t out_size)
{
    size_t by_passes = sp->n_unfinished_passes, by_hours = sp->n_unfinished - by_passes;
    if (!by_passes)
        snprintf(out, out_size, "within %.0f h", CF_SPOT_MAX_HOURS);
    else if (!by_hours)
        snprintf(out, out_size, "within %d passes over the trace (about %.0f h)", CF_SPOT_MAX_PASSES,
                 CF_SPOT_MAX_PASSES * trace_h);
    else
        snprintf(out, out_size, "within %.0f h (%zu starts) or %d passes over the trace (about %.0f h; %zu starts)",
                 CF_SPOT_MAX_HOURS, by_hours, CF_SPOT_MAX_PASSES, CF_SPOT_MAX_PASSES * trace_h, by_passes);
}

static void plan_lines(const cf_simulate_report *r, cf_buf *out)
{
    const cf_simulate_setup *s = r->setup;
    const cf_simulate_request *q = &s->req;
    if (s->n_types == 1) {
        const cf_config *c = &s->config;
        char samples[48]; /* "504321 samples", not "5.04e+05" */
        cf_number_plain_text(q->target_samples, 3, samples, sizeof samples);
        cf_buf_printf(out, "plan: %s/%s %s × %d (%d×%d %s), global batch %ld = %d per GPU × %d accumulation, LR %.4g "
                           "(%s rule at full size); %.1f h of work on all %d VMs, %s samples to the target\n",
                      c->vm->cloud, c->vm->region, c->vm->instance_type, c->nodes, c->nodes, c->gpus_per_node,
                      c->vm->gpu_model, c->global_batch, c->local_batch, c->accumulation, c->lr.lr,
                      cf_lr_rule_name(c->lr.rule_used), q->work_h, c->nodes, samples);
    } else {
        const cf_hetero_plan *h = &s->hetero;
        /* each type's cloud/region when they differ (two traces from two regions) */
        char where2[96] = "";
        if (strcmp(h->vm[0]->cloud, h->vm[1]->cloud) || strcmp(h->vm[0]->region, h->vm[1]->region))
            snprintf(where2, sizeof where2, "%s/%s ", h->vm[1]->cloud, h->vm[1]->region);
        cf_buf_printf(out, "plan: %s/%s %s × %d + %s%s × %d (mixed GPU types %s + %s), global batch %ld split %d / %d "
                           "per GPU × %d accumulation; %.1f h of work on all VMs\n",
                      h->vm[0]->cloud, h->vm[0]->region, h->vm[0]->instance_type, h->nodes[0], where2,
                      h->vm[1]->instance_type, h->nodes[1], h->vm[0]->gpu_model, h->vm[1]->gpu_model, h->global_batch,
                      h->batch[0], h->batch[1], h->accumulation, q->work_h);
    }
    char price[64];
    if (s->n_types > 1)
        snprintf(price, sizeof price, "$%.4g + $%.4g/VM-h", q->usd_per_node_h[0], q->usd_per_node_h[1]);
    else
        snprintf(price, sizeof price, "$%.4g/VM-h", q->usd_per_node_h[0]);
    cf_buf_printf(out, "checkpoint %.3g s every %.1f min of work (Daly, MTBF %.2f h from the preemption model: %s), "
                       "restart %.1f min; %s; price %s %s\n",
                  q->checkpoint_h * 3600, q->interval_h * 60, s->model_mtbf_h, s->model.text, q->restart_h * 60,
                  q->semantics == CF_SPOT_GANG ? "gang (runs only with every VM)" : "elastic (runs on the VMs it holds)",
                  s->n_types == 1 && s->config.vm->price_spot_usd_per_hr > 0 ? "spot" : "per VM", price);
    const cf_simulate_result *res = r->result;
    char requested[32];
    if (s->n_types > 1) /* the statistics are over both types (cf_spot_path_stats_all) */
        snprintf(requested, sizeof requested, "%d + %d requested;", q->nodes[0], q->nodes[1]);
    else
        snprintf(requested, sizeof requested, "%d requested;", q->nodes[0]);
    cf_buf_printf(out, "trace: %s, %.1f days, %s all held %.0f%% of the time, %.1f preemptions per VM-day "
                       "held, %.1f cluster preemption events per day; %zu starts every %.0f min (circular)\n",
                  base_name(r->trace->name), r->path->total_h / 24, requested,
                  100 * res->trace_stats.availability, res->trace_stats.rate_per_node_day,
                  res->trace_stats.events_per_day, res->n_starts,
                  res->start_step_h * 60);
}

void cf_simulate_table(const cf_simulate_report *r, cf_buf *out)
{
    cf_buf_printf(out, "simulate %s against %s\n", r->spec->job.name, base_name(r->trace->name));
    if (r->note && r->note[0])
        cf_buf_printf(out, "note: %s\n", r->note);
    plan_lines(r, out);
    cf_buf_puts(out, "\n BATCH   RULE         WALL h p10 / p50 / p90      COST $ p50 / p90   CKPTS  RESTARTS  PREEMPT  "
                     "LOST h  BELOW h  SAMPLES (M)  M0-SAMPLES/$\n");
    const cf_simulate_result *res = r->result;
    for (int i = 0; i < res->n_rows; i++) {
        const cf_simulate_row *row = &res->rows[i];
        const cf_spot_spread *sp = &row->spread;
        char a[16], b[16], c[16], cost[40];
        hours_cell(a, sizeof a, sp->p10_h);
        hours_cell(b, sizeof b, sp->p50_h);
        hours_cell(c, sizeof c, sp->p90_h);
        if (isfinite(sp->p90_usd))
            snprintf(cost, sizeof cost, "%.2f / %.2f", sp->p50_usd, sp->p90_usd);
        else if (isfinite(sp->p50_usd))
            snprintf(cost, sizeof cost, "%.2f / never", sp->p50_usd);
        else
            snprintf(cost, sizeof cost, "never");
        char ppd[32];
        if (row->progress_per_usd > 0)
            cf_number_plain_text(row->progress_per_usd, 4, ppd, sizeof ppd);
        else
            snprintf(ppd, sizeof ppd, "0 (never ends)");
        char wall[64];
        snprintf(wall, sizeof wall, "%s / %s / %s", a, b, c);
        cf_buf_printf(out, " %-7s %-11s  %-24s  %-18s %6.1f  %8.1f  %7.1f  %6.2f  %7.1f  %11.1f  %s\n",
                      batch_name(row->batch), row->rule, wall, cost,
                      sp->mean_checkpoints, sp->mean_restarts, sp->mean_preemptions, sp->mean_lost_h, sp->mean_below_h,
                      row->mean_samples / 1e6, ppd);
    }
    cf_buf_puts(out, "\n");
    for (int i = 0; i < res->n_rows; i++) {
        const cf_simulate_row *row = &res->rows[i];
        if (row->no_progress_max_nodes)
            cf_buf_printf(out, "  note: %s, %s: no expected progress on %d VM%s or fewer (the rule's LR reaches 2× the "
                               "optimum for that batch during training, where the quadratic model's progress per step "
                               "is 0; a real run may stall, spike or diverge there): %.1f h on average\n",
                          batch_name(row->batch), row->rule, row->no_progress_max_nodes,
                          row->no_progress_max_nodes == 1 ? "" : "s", row->mean_stalled_h);
        if (row->spread.n_unfinished) {
            char why[160];
            cf_simulate_stop_text(&row->spread, r->path->total_h, why, sizeof why);
            cf_buf_printf(out, "  note: %s, %s: %zu of %zu starts do not finish %s\n", batch_name(row->batch), row->rule,
                          row->spread.n_unfinished, row->spread.n, why);
        }
    }
    cf_buf_puts(out, "Means over the starts except the quantiles. LOST h: work lost to preemptions (hours of the full "
                     "plan); BELOW h: time with fewer VMs than requested. M0-SAMPLES/$: the recipe's samples (statistical "
                     "progress to the target) per dollar of the mean cost. hold: accumulation keeps the global batch "
                     "while it can and the rule applies below that; shrink: the batch follows the VMs. fixed: the full "
                     "plan's LR whatever the batch; linear, sqrt: scaled from it; gain: the AdaScale optimum at each "
                     "batch and point of training (docs/spot.md).\n");
}

/* A figure of the table in the JSON: 5 significant digits, never fewer
 * than the table prints (`decimals` after the point): the JSON said
 * progress_per_usd 1125200 where the table said 1125241, and would say
 * 12346 h where the table says 12345.7. */
static void add_shown(cJSON *o, const char *key, double v, int decimals)
{
    int digits = 5;
    if (isfinite(v) && v != 0) {
        int shown = (int)floor(log10(fabs(v))) + 1 + decimals;
        digits = shown > digits ? (shown < 17 ? shown : 17) : digits;
    }
    cf_json_add_rounded(o, key, v, digits);
}

cJSON *cf_simulate_json(const cf_simulate_report *r)
{
    const cf_simulate_setup *s = r->setup;
    const cf_simulate_request *q = &s->req;
    const cf_simulate_result *res = r->result;
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "version", CF_DOCUMENT_VERSION);
    cJSON_AddStringToObject(doc, "tool", "cloudfit " CF_VERSION);
    cJSON *spec = cJSON_AddObjectToObject(doc, "spec");
    cJSON_AddStringToObject(spec, "name", r->spec->job.name);
    cJSON_AddStringToObject(spec, "hash", r->spec->hash);
    cJSON *tr = cJSON_AddObjectToObject(doc, "trace");
    cJSON_AddStringToObject(tr, "file", base_name(r->trace->name));
    cf_json_add_rounded(tr, "days", r->path->total_h / 24, 5);
    cf_json_add_rounded(tr, "availability", res->trace_stats.availability, 5);
    cf_json_add_rounded(tr, "preemptions_per_node_day", res->trace_stats.rate_per_node_day, 5);
    cf_json_add_rounded(tr, "events_per_day", res->trace_stats.events_per_day, 5);
    cJSON_AddNumberToObject(tr, "starts", (double)res->n_starts);
    cJSON *plan = cJSON_AddObjectToObject(doc, "plan");
    cJSON *vms = cJSON_AddArrayToObject(plan, "vms");
    for (int t = 0; t < s->n_types; t++) {
        const cf_vm *vm = s->n_types == 1 ? s->config.vm : s->hetero.vm[t];
        cJSON *v = cJSON_CreateObject();
        cJSON_AddStringToObject(v, "cloud", vm->cloud);
        cJSON_AddStringToObject(v, "region", vm->region);
        cJSON_AddStringToObject(v, "instance_type", vm->instance_type);
        cJSON_AddStringToObject(v, "gpu", vm->gpu_model);
        cJSON_AddNumberToObject(v, "nodes", q->nodes[t]);
        cJSON_AddNumberToObject(v, "usd_per_node_hour", q->usd_per_node_h[t]);
        if (s->n_types > 1)
            cJSON_AddNumberToObject(v, "local_batch", s->hetero.batch[t]);
        cJSON_AddItemToArray(vms, v);
    }
    if (s->n_types == 1) {
        cJSON_AddNumberToObject(plan, "local_batch", s->config.local_batch);
        cJSON_AddNumberToObject(plan, "accumulation", s->config.accumulation);
        cJSON_AddNumberToObject(plan, "global_batch", (double)s->config.global_batch);
        cf_json_add_rounded(plan, "lr", s->config.lr.lr, 5);
    } else {
        cJSON_AddNumberToObject(plan, "accumulation", s->hetero.accumulation);
        cJSON_AddNumberToObject(plan, "global_batch", (double)s->hetero.global_batch);
    }
    cf_json_add_rounded(plan, "work_hours", q->work_h, 5);
    cJSON_AddNumberToObject(plan, "target_samples", round(q->target_samples)); /* whole, as the table says it */
    cf_json_add_rounded(plan, "checkpoint_minutes", q->checkpoint_h * 60, 5);
    cf_json_add_rounded(plan, "restart_minutes", q->restart_h * 60, 5);
    cf_json_add_rounded(plan, "interval_minutes", q->interval_h * 60, 5);
    cf_json_add_rounded(plan, "model_mtbf_hours", s->model_mtbf_h, 5);
    cJSON_AddStringToObject(plan, "model_source", s->model.text);
    cJSON_AddStringToObject(plan, "semantics", q->semantics == CF_SPOT_GANG ? "gang" : "elastic");
    if (r->note && r->note[0])
        cJSON_AddStringToObject(plan, "note", r->note);
    else
        cJSON_AddNullToObject(plan, "note");
    cJSON *warnings = cJSON_AddArrayToObject(doc, "warnings");
    for (int i = 0; i < r->n_warnings; i++)
        cJSON_AddItemToArray(warnings, cJSON_CreateString(r->warnings[i]));
    cJSON *rows = cJSON_AddArrayToObject(doc, "rules");
    for (int i = 0; i < res->n_rows; i++) {
        const cf_simulate_row *row = &res->rows[i];
        const cf_spot_spread *sp = &row->spread;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "rule", row->rule);
        cJSON_AddStringToObject(o, "batch", batch_name(row->batch));
        add_shown(o, "p10_hours", sp->p10_h, 1);
        add_shown(o, "p50_hours", sp->p50_h, 1);
        add_shown(o, "p90_hours", sp->p90_h, 1);
        add_shown(o, "p50_usd", sp->p50_usd, 2);
        add_shown(o, "p90_usd", sp->p90_usd, 2);
        cf_json_add_rounded(o, "mean_usd", sp->mean_usd, 5);
        add_shown(o, "mean_checkpoints", sp->mean_checkpoints, 1);
        add_shown(o, "mean_restarts", sp->mean_restarts, 1);
        add_shown(o, "mean_preemptions", sp->mean_preemptions, 1);
        add_shown(o, "mean_lost_work_hours", sp->mean_lost_h, 2);
        add_shown(o, "mean_hours_below_nodes", sp->mean_below_h, 1);
        add_shown(o, "mean_samples", row->mean_samples, -5);
        add_shown(o, "progress_per_usd", row->progress_per_usd, 0);
        cJSON_AddNumberToObject(o, "unfinished_starts", (double)sp->n_unfinished);
        cJSON_AddNumberToObject(o, "unfinished_starts_pass_cap", (double)sp->n_unfinished_passes);
        if (row->no_progress_max_nodes)
            cJSON_AddNumberToObject(o, "no_progress_at_or_below_nodes", row->no_progress_max_nodes);
        else
            cJSON_AddNullToObject(o, "no_progress_at_or_below_nodes");
        cJSON_AddItemToArray(rows, o);
    }
    return doc;
}
