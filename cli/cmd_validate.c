/* cloudfit validate: how well the models predict real measurements. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cloudfit/buf.h"
#include "cloudfit/catalog.h"
#include "cloudfit/exit_codes.h"
#include "cloudfit/log.h"
#include "cloudfit/model_sizes.h"
#include "cloudfit/validate.h"
#include "cloudfit/crossgpu.h"
#include "commands.h"

static int usage(const char *fmt, const char *arg) CF_PRINTF(1, 0);
static int usage(const char *fmt, const char *arg)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    cf_log_error(fmt, arg); /* every caller passes a literal with one %s */
#pragma GCC diagnostic pop
    cf_log_hint("usage: cloudfit validate MEASUREMENTS.csv | --gns TRACES.csv --models MODELS.csv | --crossgpu FILE");
    return CF_EXIT_USAGE;
}

/* --params NAME=COUNT, else the built-in table. */
static int model_parameters(const cf_cli_options *o, const char *model, double *out)
{
    for (int i = 0; i < o->params.n; i++) {
        const char *eq = strchr(o->params.items[i], '=');
        if (!eq || eq == o->params.items[i])
            return usage("option '--params' expects NAME=COUNT, got '%s'", o->params.items[i]);
        if ((size_t)(eq - o->params.items[i]) != strlen(model) || strncmp(o->params.items[i], model, strlen(model)))
            continue;
        char *end = NULL;
        double v = strtod(eq + 1, &end);
        if (end == eq + 1 || *end || !(v >= 1))
            return usage("option '--params' expects a positive parameter count, got '%s'", o->params.items[i]);
        *out = v;
        return 0;
    }
    const cf_model_size *known = cf_model_size_find(model);
    if (!known) {
        cf_log_error("model '%s' has no known parameter count (needed for the communication term)", model);
        cf_log_hint("pass --params %s=COUNT", model);
        return CF_EXIT_DATA;
    }
    *out = known->parameters;
    return 0;
}

/* The catalog VM for a measured (GPU, GPUs per node): one of the
 * campaign's cloud when the profile names one ("aws"), and among several
 * the smallest NIC figure (the conservative reading). NULL when none. */
static const cf_vm *catalog_vm(const cf_catalog *catalog, const cf_gpu *gpu, int gpus_per_vm, const char *profile)
{
    const cf_vm *best = NULL;
    int best_same_cloud = 0;
    for (size_t i = 0; gpu && i < catalog->n_vms; i++) {
        const cf_vm *vm = &catalog->vms[i];
        if (strcmp(vm->gpu_model, gpu->model) != 0 || vm->gpu_count != gpus_per_vm || !(vm->network_gbps > 0))
            continue;
        int same_cloud = strcasecmp(vm->cloud, profile) == 0;
        if (!best || same_cloud > best_same_cloud ||
            (same_cloud == best_same_cloud && vm->network_gbps < best->network_gbps)) {
            best = vm;
            best_same_cloud = same_cloud;
        }
    }
    return best;
}

/* Where a group's inter-node bandwidth came from, for the output. */
static void network_source(const cf_cli_options *o, const cf_vm *vm, const cf_validate_group *g, char *out,
                           size_t n)
{
    if (g->carried_from[0])
        snprintf(out, n, "as for %s (same network assumed)", g->carried_from);
    else if (g->params.network_provenance == CF_PROV_FITTED)
        snprintf(out, n, "fitted from the multi-node rows");
    else if (o->inter_node_gbps > 0)
        snprintf(out, n, "--inter-node-gbps %g with the default efficiency", o->inter_node_gbps);
    else if (vm)
        snprintf(out, n, "catalog VM %s %s (%g Gbit/s NIC) with the default efficiency", vm->cloud,
                 vm->instance_type, vm->network_gbps);
    else if (!g->gpu_info)
        snprintf(out, n, "GPU not in the GPU table: default network (pass --inter-node-gbps)");
    else
        snprintf(out, n, "no catalog VM with %s × this many GPUs: default network (pass --inter-node-gbps)",
                 g->gpu_info->model);
}

static void split_list(const cf_cli_list *in, const char **out, size_t *n_out, char *storage, size_t cap)
{
    size_t used = 0;
    *n_out = 0;
    for (int i = 0; i < in->n; i++) {
        size_t len = strlen(in->items[i]);
        if (used + len + 1 > cap)
            break;
        memcpy(storage + used, in->items[i], len + 1);
        for (char *tok = strtok(storage + used, ","); tok && *n_out < 64; tok = strtok(NULL, ","))
            out[(*n_out)++] = tok;
        used += len + 1;
    }
}

static cJSON *stats_json(const cf_ape_stats *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "n", (double)s->n);
    cJSON_AddNumberToObject(o, "median_ape", round(s->median_ape * 1e5) / 1e5);
    cJSON_AddNumberToObject(o, "p90_ape", round(s->p90_ape * 1e5) / 1e5);
    cJSON_AddNumberToObject(o, "max_ape", round(s->max_ape * 1e5) / 1e5);
    return o;
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

static void print_stats_row(cf_buf *out, const char *label, size_t n_fit, const cf_ape_stats *s)
{
    cf_buf_printf(out, "  %-28s %7zu %9zu %8.1f%% %8.1f%% %8.1f%%\n", label, n_fit, s->n, 100 * s->median_ape,
                  100 * s->p90_ape, 100 * s->max_ape);
}

static int emit(const cf_cli_options *o, cJSON *doc, cf_buf *table)
{
    if (o->format && strcmp(o->format, "json") == 0) {
        char *text = cJSON_Print(doc);
        if (!text) {
            cf_error_set(CF_ERR_NOMEM, "out of memory");
            return cf_report_error();
        }
        puts(text);
        free(text);
    } else {
        fputs(cf_buf_cstr(table), stdout);
    }
    return CF_EXIT_OK;
}

static int validate_steps(const cf_cli_options *o, const char *path)
{
    cf_measurement_set set;
    if (cf_measurements_load(path, &set) != CF_OK)
        return cf_report_error();
    cf_catalog catalog;
    if (cf_catalog_load_embedded(&catalog) != CF_OK) {
        cf_measurements_free(&set);
        return cf_report_error();
    }
    cf_validate_group *groups = NULL;
    const cf_vm **vms = NULL;
    size_t n_groups = 0;
    int rc = 0;
    if (cf_validate_find_groups(set.rows, set.n_rows, &groups, &n_groups) != CF_OK)
        rc = cf_report_error();
    else if (!(vms = calloc(n_groups ? n_groups : 1, sizeof *vms)))
        rc = (cf_error_set(CF_ERR_NOMEM, "out of memory"), cf_report_error());
    for (size_t g = 0; rc == 0 && g < n_groups; g++) {
        double params = 0;
        if ((rc = model_parameters(o, groups[g].model, &params)))
            break;
        groups[g].gradient_bytes = params * 4.0; /* fp32 gradients, as DDP all-reduces them */
        int hw = 0;
        for (size_t i = 0; i < set.n_rows && !hw; i++)
            if (!strcmp(set.rows[i].model, groups[g].model) && !strcmp(set.rows[i].gpu, groups[g].gpu))
                hw = set.rows[i].hw_gpus_per_node;
        groups[g].gpu_info = cf_catalog_gpu_resolve(&catalog, groups[g].gpu);
        vms[g] = catalog_vm(&catalog, groups[g].gpu_info, hw, groups[g].profile);
        groups[g].nominal_inter_gbps = o->inter_node_gbps > 0 ? o->inter_node_gbps : vms[g] ? vms[g]->network_gbps : 0;
    }
    char storage[1024];
    const char *train_gpus[64];
    size_t n_train = 0;
    split_list(&o->train_gpus, train_gpus, &n_train, storage, sizeof storage);
    cf_validate_options vo = {.train_max_nodes = o->train_max_nodes > 0 ? o->train_max_nodes : 1,
                              .with_2node_probe = o->with_2node_probe, .train_gpus = train_gpus,
                              .n_train_gpus = n_train, .fit_all_rows = o->fit_all_rows};
    cf_ape_stats overall = {0};
    if (rc == 0 && cf_validate_steps(set.rows, set.n_rows, &vo, groups, n_groups, &overall) != CF_OK)
        rc = cf_report_error();
    if (rc == 0) {
        cf_buf table = CF_BUF_INIT;
        cJSON *doc = cJSON_CreateObject(), *jg = cJSON_CreateArray();
        cJSON_AddStringToObject(doc, "version", "1");
        cJSON_AddStringToObject(doc, "kind", "step_time");
        cJSON_AddStringToObject(doc, "file", path);
        cJSON *jo = cJSON_AddObjectToObject(doc, "options");
        cJSON_AddNumberToObject(jo, "train_max_nodes", vo.train_max_nodes);
        cJSON_AddBoolToObject(jo, "with_2node_probe", vo.with_2node_probe);
        cJSON_AddBoolToObject(jo, "fit_all_rows", vo.fit_all_rows);
        cf_buf_printf(&table, "step-time validation of %s (%zu rows): %s rows with ≤ %d node%s%s\n", path,
                      set.n_rows, vo.fit_all_rows ? "fitted on every row, scored on all but the" : "fitted on",
                      vo.train_max_nodes, vo.train_max_nodes == 1 ? "" : "s",
                      vo.with_2node_probe ? " and the 2-node × 1-GPU probe" : "");
        if (vo.fit_all_rows)
            cf_buf_printf(&table, "(in-sample: the model's fit error on the scored rows, not a prediction)\n");
        cf_buf_printf(&table, "\n");
        cf_buf_printf(&table, "  %-28s %7s %9s %9s %9s %9s\n", "GROUP / NODES", "FITTED", "PREDICTED", "MEDIAN",
                      "P90", "MAX");
        for (size_t g = 0; g < n_groups; g++) {
            cf_validate_group *grp = &groups[g];
            char label[200];
            snprintf(label, sizeof label, "%s/%s/%s%s%s", grp->model, grp->gpu, grp->profile,
                     grp->carried_from[0] ? " from " : "", grp->carried_from);
            cJSON *j = cJSON_CreateObject();
            cJSON_AddStringToObject(j, "model", grp->model);
            cJSON_AddStringToObject(j, "gpu", grp->gpu);
            cJSON_AddStringToObject(j, "profile", grp->profile);
            if (grp->failed) {
                cf_buf_printf(&table, "  %-28s not fitted: %s\n", label, grp->message);
                cJSON_AddStringToObject(j, "error", grp->message);
                cJSON_AddItemToArray(jg, j);
                continue;
            }
            char network[200];
            network_source(o, vms[g], grp, network, sizeof network);
            print_stats_row(&table, label, grp->n_fit, &grp->all);
            cf_buf_printf(&table, "      inter-node all-reduce %.3g Gbit/s: %s\n", grp->params.inter_gbps, network);
            cJSON_AddNumberToObject(j, "fitted", (double)grp->n_fit);
            cJSON_AddNumberToObject(j, "predicted", (double)grp->n_pred);
            if (grp->carried_from[0])
                cJSON_AddStringToObject(j, "carried_from", grp->carried_from);
            cJSON_AddItemToObject(j, "errors", stats_json(&grp->all));
            cJSON *jb = cJSON_AddArrayToObject(j, "by_nodes");
            for (int b = 0; b < grp->n_buckets; b++) {
                char nodes[16], sub[64];
                bucket_label(grp, b, nodes, sizeof nodes);
                snprintf(sub, sizeof sub, "    %s node%s", nodes, strcmp(nodes, "1") ? "s" : "");
                print_stats_row(&table, sub, 0, &grp->by_nodes[b]);
                cJSON *x = stats_json(&grp->by_nodes[b]);
                cJSON_AddStringToObject(x, "nodes", nodes);
                cJSON_AddItemToArray(jb, x);
            }
            cJSON *jp = cJSON_AddObjectToObject(j, "model_parameters");
            cJSON_AddNumberToObject(jp, "alpha_s", grp->params.alpha_s);
            cJSON_AddNumberToObject(jp, "beta_s", grp->params.beta_s);
            cJSON_AddNumberToObject(jp, "contention", grp->params.contention);
            cJSON_AddNumberToObject(jp, "intra_gbps", grp->params.intra_gbps);
            cJSON_AddNumberToObject(jp, "inter_gbps", grp->params.inter_gbps);
            cJSON_AddNumberToObject(jp, "latency_s", grp->params.latency_s);
            cJSON_AddNumberToObject(jp, "gamma", grp->params.gamma);
            cJSON_AddStringToObject(j, "inter_node_source", network);
            cJSON_AddItemToArray(jg, j);
        }
        print_stats_row(&table, "overall", 0, &overall);
        cJSON_AddItemToObject(doc, "groups", jg);
        cJSON_AddItemToObject(doc, "overall", stats_json(&overall));
        rc = emit(o, doc, &table);
        cJSON_Delete(doc);
        cf_buf_free(&table);
    }
    free(vms);
    free(groups);
    cf_catalog_free(&catalog);
    cf_measurements_free(&set);
    return rc;
}

static int validate_gns(const cf_cli_options *o)
{
    if (!o->models_path)
        return usage("option '--gns' needs '--models MODELS.csv'%s", "");
    cf_gns_traces traces;
    if (cf_gns_traces_load(o->gns_path, o->models_path, &traces) != CF_OK)
        return cf_report_error();
    cf_gns_validate_options vo = {.train_epochs = o->train_epochs > 0 ? o->train_epochs : 0};
    cf_gns_prediction *pred = NULL;
    size_t n = 0;
    cf_ape_stats overall;
    int rc = 0;
    if (cf_validate_gns(&traces, &vo, &pred, &n, &overall) != CF_OK) {
        rc = cf_report_error();
    } else {
        cf_buf table = CF_BUF_INIT;
        cJSON *doc = cJSON_CreateObject(), *rows = cJSON_CreateArray();
        cJSON_AddStringToObject(doc, "version", "1");
        cJSON_AddStringToObject(doc, "kind", "iterations_to_target");
        cJSON_AddNumberToObject(doc, "train_epochs", vo.train_epochs);
        cf_buf_printf(&table,
                      "iterations to target from the M0 run's noise trace%s; the larger runs' noise scale is "
                      "predicted from it, not read\n\n",
                      vo.train_epochs > 0 ? " (first epochs only, then its trend)" : "");
        cf_buf_printf(&table, "  %-10s %7s %7s %10s %12s %12s %8s\n", "MODEL", "M0", "BATCH", "TARGET", "MEASURED",
                      "PREDICTED", "ERROR");
        for (size_t i = 0; i < n; i++) {
            cf_buf_printf(&table, "  %-10s %7d %7d %10.4g %12.0f %12.0f %+7.1f%%\n", pred[i].model, pred[i].m0,
                          pred[i].batch, pred[i].target, pred[i].measured_iterations, pred[i].predicted_iterations,
                          100 * pred[i].error);
            cJSON *r = cJSON_CreateObject();
            cJSON_AddStringToObject(r, "model", pred[i].model);
            cJSON_AddNumberToObject(r, "m0", pred[i].m0);
            cJSON_AddNumberToObject(r, "batch", pred[i].batch);
            cJSON_AddNumberToObject(r, "target", pred[i].target);
            cJSON_AddNumberToObject(r, "measured_iterations", round(pred[i].measured_iterations));
            cJSON_AddNumberToObject(r, "predicted_iterations", round(pred[i].predicted_iterations));
            cJSON_AddNumberToObject(r, "error", round(pred[i].error * 1e5) / 1e5);
            cJSON_AddItemToArray(rows, r);
        }
        cf_buf_printf(&table, "\n  overall: n %zu, median %.1f%%, p90 %.1f%%, max %.1f%%\n", overall.n,
                      100 * overall.median_ape, 100 * overall.p90_ape, 100 * overall.max_ape);
        cJSON_AddItemToObject(doc, "predictions", rows);
        cJSON_AddItemToObject(doc, "overall", stats_json(&overall));
        rc = emit(o, doc, &table);
        cJSON_Delete(doc);
        cf_buf_free(&table);
    }
    free(pred);
    cf_gns_traces_free(&traces);
    return rc;
}

static int validate_crossgpu(const cf_cli_options *o)
{
    cf_crossgpu_set set;
    if (cf_crossgpu_load(o->crossgpu_path, &set) != CF_OK)
        return cf_report_error();
    cf_catalog catalog;
    if (cf_catalog_load_embedded(&catalog) != CF_OK) {
        cf_crossgpu_free(&set);
        return cf_report_error();
    }
    /* GPU names as the file spells them ("Tesla V100-SXM2-16GB") map to
     * the GPU table; rows of GPUs it does not have cannot be carried. */
    size_t n_unknown = 0;
    for (size_t i = 0; i < set.n_rows; i++) {
        const cf_gpu *g = cf_catalog_gpu_resolve(&catalog, set.rows[i].gpu);
        if (g)
            snprintf(set.rows[i].gpu, sizeof set.rows[i].gpu, "%s", g->model);
        else
            n_unknown++;
    }
    if (n_unknown)
        cf_log_info("%zu of %zu rows name a GPU that is not in the GPU table (docs/catalog.md); they are left out",
                    n_unknown, set.n_rows);
    cf_carry_score scores[CF_CARRY_METHODS];
    size_t n_pairs = 0, n_models = 0;
    int rc = 0;
    if (cf_validate_crossgpu(&set, catalog.gpus, catalog.n_gpus, scores, &n_pairs, &n_models) != CF_OK) {
        rc = cf_report_error();
    } else {
        cf_buf table = CF_BUF_INIT;
        cJSON *doc = cJSON_CreateObject(), *methods = cJSON_CreateArray();
        cJSON_AddStringToObject(doc, "version", "1");
        cJSON_AddStringToObject(doc, "kind", "carry_over");
        cJSON_AddNumberToObject(doc, "pairs", (double)n_pairs);
        cJSON_AddNumberToObject(doc, "models", (double)n_models);
        cf_buf_printf(&table, "carrying single-GPU throughput across GPU types: %zu (GPU pair, model, precision, benchmark) "
                              "predictions over %zu models\n\n  %-14s %8s %8s %8s  %s\n",
                      n_pairs, n_models, "METHOD", "MEDIAN", "P90", "MAX", "RULE");
        for (int k = 0; k < CF_CARRY_METHODS; k++) {
            cf_buf_printf(&table, "  %-14s %7.1f%% %7.1f%% %7.1f%%  %s\n", scores[k].name,
                          100 * scores[k].stats.median_ape, 100 * scores[k].stats.p90_ape,
                          100 * scores[k].stats.max_ape, scores[k].description);
            cJSON *m = stats_json(&scores[k].stats);
            cJSON_AddStringToObject(m, "method", scores[k].name);
            cJSON_AddStringToObject(m, "rule", scores[k].description);
            cJSON_AddItemToArray(methods, m);
        }
        cJSON_AddItemToObject(doc, "methods", methods);
        cJSON_AddItemToObject(doc, "overall", stats_json(&scores[CF_CARRY_CLOUDFIT_LOMO].stats));
        rc = emit(o, doc, &table);
        cJSON_Delete(doc);
        cf_buf_free(&table);
    }
    cf_catalog_free(&catalog);
    cf_crossgpu_free(&set);
    return rc;
}

int cmd_validate(int argc, char **argv, const cf_cli_options *o, int n_positional)
{
    (void)argc;
    if (o->format && strcmp(o->format, "table") && strcmp(o->format, "json"))
        return usage("option '--format' does not accept '%s' (use table or json)", o->format);
    int modes = (o->gns_path != NULL) + (o->crossgpu_path != NULL) + (n_positional > 0);
    if (modes != 1)
        return usage(modes ? "give one of MEASUREMENTS.csv, --gns or --crossgpu%s" : "missing the measurements file%s",
                     "");
    if (n_positional > 1)
        return usage("validate takes one measurements file%s", "");
    if (o->gns_path)
        return validate_gns(o);
    if (o->crossgpu_path)
        return validate_crossgpu(o);
    return validate_steps(o, argv[1]);
}
