#include "cloudfit/render/validate_report.h"

#include "cloudfit/common/escape.h"
#include "cloudfit/common/csvwrite.h"
#include "cloudfit/common/json.h"
#include "cloudfit/common/number.h"
#include "cloudfit/version.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* An error of no scored row is no error: null, not 0 (a group whose every
 * row was in the training subset read as a perfect score). */
static void add_ape(cJSON *o, const char *key, const cf_ape_stats *s, double value)
{
    if (s->n)
        cJSON_AddNumberToObject(o, key, round(value * 1e5) / 1e5);
    else
        cJSON_AddNullToObject(o, key);
}

static cJSON *stats_json(const cf_ape_stats *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "n", (double)s->n);
    add_ape(o, "median_ape", s, s->median_ape);
    add_ape(o, "p90_ape", s, s->p90_ape);
    add_ape(o, "max_ape", s, s->max_ape);
    if (s->interval_coverage >= 0)
        cJSON_AddNumberToObject(o, "interval_coverage", round(s->interval_coverage * 1e5) / 1e5);
    return o;
}

/* A fraction as a percentage with one decimal, sane at any magnitude (an
 * extreme input's error printed hundreds of digits). */
typedef struct {
    char text[32];
} pct_text;

static pct_text pct(double fraction, int sign)
{
    pct_text t;
    cf_number_fixed_text(100 * fraction, 1, sign, t.text, sizeof t.text);
    return t;
}

static void print_stats_row(cf_buf *out, const char *label, size_t n_fit, const cf_ape_stats *s)
{
    if (!s->n) { /* nothing scored: no error to show (it printed 0.0 %, a perfect score) */
        cf_buf_printf(out, "  %-28s %7zu %9zu %9s %9s %9s %9s  (every row was fitted: nothing left to predict)\n",
                      label, n_fit, s->n, "-", "-", "-", "-");
        return;
    }
    cf_buf_printf(out, "  %-28s %7zu %9zu %8s%% %8s%% %8s%%", label, n_fit, s->n, pct(s->median_ape, 0).text,
                  pct(s->p90_ape, 0).text, pct(s->max_ape, 0).text);
    if (s->interval_coverage >= 0)
        cf_buf_printf(out, " %8s%%", pct(s->interval_coverage, 0).text);
    cf_buf_puts(out, "\n");
}

static void bucket_label(const cf_validate_group *g, int b, char *out, size_t n)
{
    int lo = g->bucket_nodes[b];
    static const int upper[] = {1, 2, 3, 4, 8, 16, 0};
    static const int lower[] = {1, 2, 3, 4, 5, 9, 17};
    for (int i = 0; i < 7; i++)
        if (lower[i] == lo) {
            if (upper[i] == lo)
                snprintf(out, n, "%d", lo);
            else if (upper[i])
                snprintf(out, n, "%d-%d", lo, upper[i]);
            else
                snprintf(out, n, "%d+", lo);
            return;
        }
    snprintf(out, n, "%d", lo);
}

static void group_label(const cf_validate_group *g, char *out, size_t n)
{
    char raw[512];
    snprintf(raw, sizeof raw, "%s%s%s", g->label, g->carried_from[0] ? " from " : "", g->carried_from);
    cf_escape_into(raw, out, n); /* names from the CSV: never raw control characters */
}

/* ---- step times ---------------------------------------------------------------------- */

void cf_validate_steps_table(const cf_validate_steps_report *r, cf_buf *out)
{
    const cf_validate_options *vo = r->options;
    if (vo->light_profile)
        cf_buf_printf(out, "step-time validation of %s (%zu rows): %s the search's light profile%s\n", r->path,
                      r->n_rows, vo->fit_all_rows ? "fitted on every row, scored on all but" : "fitted on",
                      vo->with_2node_probe ? " and the 2-node × 1-GPU probe" : "");
    else
        cf_buf_printf(out, "step-time validation of %s (%zu rows): %s rows with ≤ %d node%s%s\n", r->path, r->n_rows,
                      vo->fit_all_rows ? "fitted on every row, scored on all but the" : "fitted on",
                      vo->train_max_nodes, vo->train_max_nodes == 1 ? "" : "s",
                      vo->with_2node_probe ? " and the 2-node × 1-GPU probe" : "");
    if (vo->fit_all_rows)
        cf_buf_printf(out, "(in-sample: the model's fit error on the scored rows, not a prediction)\n");
    cf_buf_printf(out, "\n  %-28s %7s %9s %9s %9s %9s %9s\n", "GROUP / NODES", "FITTED", "PREDICTED", "MEDIAN", "P90",
                  "MAX", "IN 80%");
    for (size_t k = 0; k < r->n_groups; k++) {
        const cf_validate_group *g = &r->groups[k];
        char label[200];
        group_label(g, label, sizeof label);
        if (g->failed || g->skipped) {
            cf_buf_printf(out, "  %-28s %s: %s\n", label, g->skipped ? "skipped" : "not fitted", g->message);
            continue;
        }
        print_stats_row(out, label, g->n_fit, &g->all);
        const cf_perf_params *p = &g->params;
        const char *bound = !p->bound_hit         ? ""
                            : p->nic_gbps > 0      ? " (the NIC's nominal rate: the fit reached the bound)"
                                                   : " (the fastest NIC any catalog VM has: the network does not show; "
                                                     "the NIC is not in the catalog)";
        cf_buf_printf(out, "      inter-node all-reduce %.3g Gbit/s%s: %s\n", g->inter_gbps, bound, g->network_source);
        for (int b = 0; b < g->n_buckets; b++) {
            char nodes[16], sub[64];
            bucket_label(g, b, nodes, sizeof nodes);
            snprintf(sub, sizeof sub, "    %s node%s", nodes, strcmp(nodes, "1") ? "s" : "");
            print_stats_row(out, sub, 0, &g->by_nodes[b]);
        }
    }
    size_t fitted = 0; /* the groups' (it printed 0) */
    for (size_t k = 0; k < r->n_groups; k++)
        if (!r->groups[k].failed && !r->groups[k].skipped)
            fitted += (size_t)r->groups[k].n_fit;
    print_stats_row(out, "overall", fitted, &r->overall);
}

static cJSON *group_json(const cf_validate_group *g)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "model", g->model);
    cJSON_AddStringToObject(j, "gpu", g->gpu);
    cJSON_AddStringToObject(j, "profile", g->profile);
    if (g->gpu_info)
        cJSON_AddStringToObject(j, "gpu_table_entry", g->gpu_info->model);
    else
        cJSON_AddNullToObject(j, "gpu_table_entry");
    if (g->has_precision)
        cJSON_AddStringToObject(j, "precision", cf_precision_name(g->precision));
    if (g->failed || g->skipped) {
        cJSON_AddStringToObject(j, "error", g->message);
        cJSON_AddBoolToObject(j, "skipped", g->skipped);
        return j;
    }
    cJSON_AddNumberToObject(j, "fitted", (double)g->n_fit);
    cJSON_AddNumberToObject(j, "predicted", (double)g->n_pred);
    if (g->carried_from[0])
        cJSON_AddStringToObject(j, "carried_from", g->carried_from);
    cJSON_AddItemToObject(j, "errors", stats_json(&g->all));
    cJSON *jb = cJSON_AddArrayToObject(j, "by_nodes");
    for (int b = 0; b < g->n_buckets; b++) {
        char nodes[16];
        bucket_label(g, b, nodes, sizeof nodes);
        cJSON *x = stats_json(&g->by_nodes[b]);
        cJSON_AddStringToObject(x, "nodes", nodes);
        cJSON_AddItemToArray(jb, x);
    }
    cJSON *jp = cJSON_AddObjectToObject(j, "model_parameters");
    const cf_perf_params *p = &g->params;
    cJSON_AddNumberToObject(jp, "profiled_gpu_counts", p->n_curves);
    cJSON_AddNumberToObject(jp, "contention", p->contention >= 0 ? p->contention
                                              : p->nvlink ? p->k.contention_nvlink : p->k.contention_pcie);
    cJSON_AddNumberToObject(jp, "profile_sigma", p->sigma_profile);
    cJSON_AddNumberToObject(jp, "nic_gbps", p->nic_gbps);
    cJSON_AddNumberToObject(jp, "inter_gbps", g->inter_gbps);
    /* what the interval spans: the catalog's NICs on an unknown one too (it was null there, while the
     * warning said "their 80 % interval spans the catalog's NICs, 2.5 to 6400 Gbit/s") */
    if (g->interval_span_gbps[1] > 0) {
        cJSON_AddItemToObject(jp, "nic_span_gbps", cJSON_CreateDoubleArray(g->interval_span_gbps, 2));
    } else {
        cJSON_AddNullToObject(jp, "nic_span_gbps");
    }
    cJSON_AddBoolToObject(jp, "nic_bound_hit", p->bound_hit);
    cJSON_AddNumberToObject(jp, "hide_fraction", p->hide >= 0 ? p->hide : p->k.hide_default);
    cJSON_AddNumberToObject(jp, "overhead_s", p->overhead_s);
    cJSON_AddNumberToObject(jp, "two_vm_exponent", p->two_vm_exponent);
    cJSON_AddNumberToObject(jp, "fit_sigma", p->sigma_fit);
    cJSON_AddStringToObject(j, "inter_node_source", g->network_source);
    return j;
}

cJSON *cf_validate_steps_json(const cf_validate_steps_report *r)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "version", CF_DOCUMENT_VERSION);
    cJSON_AddStringToObject(doc, "kind", "step_time");
    cJSON_AddStringToObject(doc, "file", r->path);
    cJSON *jo = cJSON_AddObjectToObject(doc, "options");
    cJSON_AddNumberToObject(jo, "train_max_nodes", r->options->train_max_nodes);
    cJSON_AddBoolToObject(jo, "with_2node_probe", r->options->with_2node_probe);
    cJSON_AddBoolToObject(jo, "light_profile", r->options->light_profile);
    cJSON_AddBoolToObject(jo, "fit_all_rows", r->options->fit_all_rows);
    cJSON *jg = cJSON_AddArrayToObject(doc, "groups");
    for (size_t k = 0; k < r->n_groups; k++)
        cJSON_AddItemToArray(jg, group_json(&r->groups[k]));
    cJSON_AddItemToObject(doc, "overall", stats_json(&r->overall));
    return doc;
}

/* ---- iterations to target ------------------------------------------------------------ */

void cf_validate_gns_table(const cf_validate_gns_report *r, cf_buf *out)
{
    cf_buf_printf(out,
                  "iterations to target from the M0 run's noise trace%s; the larger runs' noise scale is predicted "
                  "from it, not read\n\n",
                  r->train_epochs > 0 ? " (first epochs only, then its trend)" : "");
    cf_buf_printf(out, "  %-10s %7s %7s %10s %12s %12s %8s\n", "MODEL", "M0", "BATCH", "TARGET", "MEASURED",
                  "PREDICTED", "ERROR");
    for (size_t i = 0; i < r->n; i++) {
        const cf_gns_prediction *p = &r->predictions[i];
        char model[96];
        cf_escape_into(p->model, model, sizeof model);
        char measured[32], predicted[32];
        cf_number_fixed_text(p->measured_iterations, 0, 0, measured, sizeof measured);
        cf_number_fixed_text(p->predicted_iterations, 0, 0, predicted, sizeof predicted);
        cf_buf_printf(out, "  %-10s %7d %7d %10.4g %12s %12s %7s%%\n", model, p->m0, p->batch, p->target,
                      measured, predicted, pct(p->error, 1).text);
    }
    cf_buf_printf(out, "\n  overall: n %zu, median %s%%, p90 %s%%, max %s%%\n", r->overall.n,
                  pct(r->overall.median_ape, 0).text, pct(r->overall.p90_ape, 0).text, pct(r->overall.max_ape, 0).text);
    if (r->n_unlisted_rows) {
        char model[96], traces[300], models[300];
        cf_escape_into(r->first_unlisted, model, sizeof model);
        cf_escape_into(r->traces_name, traces, sizeof traces);
        cf_escape_into(r->models_name, models, sizeof models);
        cf_buf_printf(out, "  left out: %zu trace row%s of models %s does not list (the first: '%s', %s:%ld)\n",
                      r->n_unlisted_rows, r->n_unlisted_rows == 1 ? "" : "s", models, model, traces,
                      r->first_unlisted_line);
    }
}

cJSON *cf_validate_gns_json(const cf_validate_gns_report *r)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "version", CF_DOCUMENT_VERSION);
    cJSON_AddStringToObject(doc, "kind", "iterations_to_target");
    cJSON_AddNumberToObject(doc, "train_epochs", r->train_epochs);
    cJSON *rows = cJSON_AddArrayToObject(doc, "predictions");
    for (size_t i = 0; i < r->n; i++) {
        const cf_gns_prediction *p = &r->predictions[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "model", p->model);
        cJSON_AddNumberToObject(o, "m0", p->m0);
        cJSON_AddNumberToObject(o, "batch", p->batch);
        cJSON_AddNumberToObject(o, "target", p->target);
        cJSON_AddNumberToObject(o, "measured_iterations", round(p->measured_iterations));
        cJSON_AddNumberToObject(o, "predicted_iterations", round(p->predicted_iterations));
        cJSON_AddNumberToObject(o, "error", round(p->error * 1e5) / 1e5);
        cJSON_AddItemToArray(rows, o);
    }
    cJSON_AddItemToObject(doc, "overall", stats_json(&r->overall));
    cJSON *left = cJSON_AddObjectToObject(doc, "unlisted_models");
    cJSON_AddNumberToObject(left, "rows_left_out", (double)r->n_unlisted_rows);
    if (r->n_unlisted_rows) {
        cJSON_AddStringToObject(left, "first_model", r->first_unlisted);
        cJSON_AddNumberToObject(left, "first_line", (double)r->first_unlisted_line);
    } else {
        cJSON_AddNullToObject(left, "first_model");
        cJSON_AddNullToObject(left, "first_line");
    }
    return doc;
}

/* ---- carry-over across GPU types ------------------------------------------------------ */

void cf_validate_crossgpu_table(const cf_validate_crossgpu_report *r, cf_buf *out)
{
    const cf_carry_validation *v = &r->v;
    cf_buf_printf(out,
                  "carrying single-GPU throughput across GPU types: %zu (GPU pair, model, precision, benchmark) "
                  "predictions over %zu models, %zu more across precisions\n\n  %-16s %8s %8s %8s %8s  %s\n",
                  v->n_pairs, v->n_models, v->n_cross_pairs, "METHOD", "MEDIAN", "P90", "MAX", "IN 80%", "RULE");
    for (int k = 0; k < CF_CARRY_METHODS; k++) {
        const cf_ape_stats *s = &v->scores[k].stats;
        cf_buf_printf(out, "  %-16s %7s%% %7s%% %7s%% ", v->scores[k].name, pct(s->median_ape, 0).text,
                      pct(s->p90_ape, 0).text, pct(s->max_ape, 0).text);
        if (s->interval_coverage >= 0)
            cf_buf_printf(out, "%7s%%", pct(s->interval_coverage, 0).text);
        else
            cf_buf_printf(out, "%8s", "-");
        cf_buf_printf(out, "  %s", v->scores[k].description);
        if (k == CF_CARRY_CROSS_PRECISION || k == CF_CARRY_CROSS_FP32)
            cf_buf_printf(out, " (%zu pairs)", s->n);
        cf_buf_puts(out, "\n");
    }
    cf_buf_printf(out,
                  "\nleaving one GPU type out, every pair (%zu): median %.1f%%, p90 %.1f%%, the 80%% interval covers "
                  "%.1f%%\n  interval constants fitted on those errors: s0 %.3f, half precision %.3f, per generation "
                  "%.3f, across precisions %.3f, per ln peak ratio %.3f (shipped: %.3f, %.3f, %.3f, %.3f, %.3f)\n",
                  v->overall.n, 100 * v->overall.median_ape, 100 * v->overall.p90_ape,
                  100 * v->overall.interval_coverage, v->sigma_fitted.base, v->sigma_fitted.half,
                  v->sigma_fitted.per_generation, v->sigma_fitted.precision, v->sigma_fitted.per_peak_log,
                  CF_CARRY_SIGMA_BASE, CF_CARRY_SIGMA_HALF, CF_CARRY_SIGMA_PER_GENERATION, CF_CARRY_SIGMA_PRECISION,
                  CF_CARRY_SIGMA_PER_PEAK_LOG);
}

cJSON *cf_validate_crossgpu_json(const cf_validate_crossgpu_report *r)
{
    const cf_carry_validation *v = &r->v;
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "version", CF_DOCUMENT_VERSION);
    cJSON_AddStringToObject(doc, "kind", "carry_over");
    cJSON_AddNumberToObject(doc, "pairs", (double)v->n_pairs);
    cJSON_AddNumberToObject(doc, "cross_precision_pairs", (double)v->n_cross_pairs);
    cJSON_AddNumberToObject(doc, "models", (double)v->n_models);
    cJSON_AddNumberToObject(doc, "rows_left_out", (double)r->rows_left_out);
    cJSON *methods = cJSON_AddArrayToObject(doc, "methods");
    for (int k = 0; k < CF_CARRY_METHODS; k++) {
        cJSON *m = stats_json(&v->scores[k].stats);
        cJSON_AddStringToObject(m, "method", v->scores[k].name);
        cJSON_AddStringToObject(m, "rule", v->scores[k].description);
        cJSON_AddItemToArray(methods, m);
    }
    cJSON *sigma = cJSON_AddObjectToObject(doc, "interval_constants_fitted");
    cJSON_AddNumberToObject(sigma, "base", v->sigma_fitted.base);
    cJSON_AddNumberToObject(sigma, "half_precision", v->sigma_fitted.half);
    cJSON_AddNumberToObject(sigma, "per_generation", v->sigma_fitted.per_generation);
    cJSON_AddNumberToObject(sigma, "across_precisions", v->sigma_fitted.precision);
    cJSON_AddNumberToObject(sigma, "per_log_peak_ratio", v->sigma_fitted.per_peak_log);
    cJSON *pairs = cJSON_AddArrayToObject(doc, "gpu_pairs");
    for (size_t i = 0; i < v->n_gpu_pairs; i++) {
        const cf_carry_gpu_pair *p = &v->gpu_pairs[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "from", p->from);
        cJSON_AddStringToObject(o, "to", p->to);
        cJSON_AddNumberToObject(o, "n", (double)p->n);
        cJSON_AddNumberToObject(o, "median_ape", cf_json_round(p->median_ape, 5));
        cJSON_AddNumberToObject(o, "interval_coverage", cf_json_round(p->interval_coverage, 5));
        cJSON_AddItemToArray(pairs, o);
    }
    cJSON_AddItemToObject(doc, "overall", stats_json(&v->overall));
    return doc;
}

void cf_validate_rows_csv(const cf_measurement *rows, size_t n_rows, const cf_validate_row_prediction *per_row,
                          cf_buf *out)
{
    static const char *const header[] = {"model", "gpu", "profile", "placement", "num_nodes", "num_gpus",
                                         "gpus_per_node", "local_bsz", "step_time_s", "predicted_s", "p10_s",
                                         "p90_s", "sigma", "network_share", "carried_from"};
    size_t n_cols = sizeof header / sizeof *header;
    for (size_t c = 0; c < n_cols; c++)
        cf_csv_put_text(out, header[c], c + 1 == n_cols);
    for (size_t i = 0; i < n_rows; i++) {
        const cf_validate_row_prediction *p = &per_row[i];
        if (!p->scored)
            continue;
        const cf_measurement *r = &rows[i];
        cf_csv_put_text(out, r->model, 0);
        cf_csv_put_text(out, r->gpu, 0);
        cf_csv_put_text(out, r->profile, 0);
        cf_csv_put_text(out, r->placement, 0);
        cf_csv_put_int(out, r->num_nodes, 0);
        cf_csv_put_int(out, r->num_gpus, 0);
        cf_csv_put_int(out, p->gpus_per_node, 0);
        cf_csv_put_int(out, r->local_bsz, 0);
        cf_csv_put_number(out, r->step_time_s, 0);
        cf_csv_put_number(out, p->predicted_s, 0);
        cf_csv_put_number(out, p->p10_s, 0);
        cf_csv_put_number(out, p->p90_s, 0);
        cf_csv_put_number(out, p->sigma, 0);
        cf_csv_put_number(out, p->network_share, 0);
        cf_csv_put_text(out, p->carried_from ? p->carried_from : "", 1);
    }
}
