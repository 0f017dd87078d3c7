#include "cloudfit/advisor/validate.h"

#include "cloudfit/advisor.h"
#include "cloudfit/advisor/carry.h"
#include "../model/model_sizes.h"
#include "cloudfit/advisor/search.h"
#include "cloudfit/common/buf.h"
#include "cloudfit/common/names.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "../model/carry_internal.h"
#include "../model/perf_internal.h"
#include "../model/stateff_internal.h"
#include "../search/search_internal.h"
#include "validate_internal.h"

static int double_order(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

cf_ape_stats cf_ape_summarise(const double *errors, size_t n)
{
    cf_ape_stats s = {0};
    s.n = n;
    s.interval_coverage = -1;
    if (n == 0)
        return s;
    double *abs_err = malloc(n * sizeof *abs_err);
    if (!abs_err)
        return s;
    for (size_t i = 0; i < n; i++)
        abs_err[i] = fabs(errors[i]);
    qsort(abs_err, n, sizeof *abs_err, double_order);
    s.median_ape = n % 2 ? abs_err[n / 2] : 0.5 * (abs_err[n / 2 - 1] + abs_err[n / 2]);
    size_t rank = (size_t)ceil(0.9 * (double)n); /* nearest rank, 1-based */
    s.p90_ape = abs_err[rank - 1];
    s.max_ape = abs_err[n - 1];
    s.interval_coverage = -1;
    free(abs_err);
    return s;
}

/* ---- step times ------------------------------------------------------------ */

static int same_group(const cf_validate_group *g, const cf_measurement *r)
{
    return strcmp(g->model, r->model) == 0 && strcmp(g->gpu, r->gpu) == 0 && strcmp(g->profile, r->profile) == 0 &&
           g->has_precision == r->has_precision && (!g->has_precision || g->precision == r->precision);
}

cf_status cf_validate_find_groups(const cf_measurement *rows, size_t n_rows, cf_validate_group **out, size_t *n_out)
{
    *out = calloc(n_rows ? n_rows : 1, sizeof **out);
    *n_out = 0;
    if (!*out)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n_rows; i++) {
        size_t g;
        for (g = 0; g < *n_out; g++)
            if (same_group(&(*out)[g], &rows[i]))
                break;
        if (g == *n_out) {
            cf_validate_group *grp = &(*out)[(*n_out)++];
            snprintf(grp->model, sizeof grp->model, "%s", rows[i].model);
            snprintf(grp->gpu, sizeof grp->gpu, "%s", rows[i].gpu);
            snprintf(grp->profile, sizeof grp->profile, "%s", rows[i].profile);
            grp->has_precision = rows[i].has_precision;
            grp->precision = rows[i].has_precision ? rows[i].precision : CF_PREC_FP32;
            snprintf(grp->label, sizeof grp->label, "%s/%s/%s%s%s", grp->model, grp->gpu, grp->profile,
                     grp->has_precision ? " " : "", grp->has_precision ? cf_precision_name(grp->precision) : "");
        }
    }
    return CF_OK;
}

/* A row of the 2-node × 1-GPU probe (placement "11", or unknown). */
static int is_probe_row(const cf_measurement *r)
{
    return r->num_nodes == 2 && r->num_gpus == 2 && (!r->placement[0] || strcmp(r->placement, "11") == 0);
}

static int in_training_subset(const cf_validate_options *o, const cf_measurement *r)
{
    if (r->num_nodes <= (o->train_max_nodes > 0 ? o->train_max_nodes : 1))
        return 1;
    return o->with_2node_probe && is_probe_row(r);
}

static int is_train_gpu(const cf_validate_options *o, const char *gpu)
{
    if (o->n_train_gpus == 0)
        return 1;
    for (size_t i = 0; i < o->n_train_gpus; i++)
        if (strcasecmp(o->train_gpus[i], gpu) == 0)
            return 1;
    return 0;
}

/* Node-count buckets for the error split: 1, 2, 3, 4, 5–8, 9–16, 17+. */
static const int bucket_lower[] = {1, 2, 3, 4, 5, 9, 17};
#define N_BUCKETS ((int)(sizeof bucket_lower / sizeof *bucket_lower))

static int bucket_of(int nodes)
{
    int b = 0;
    while (b + 1 < N_BUCKETS && nodes >= bucket_lower[b + 1])
        b++;
    return b;
}

static void start_params(const cf_validate_options *o, const cf_validate_group *g, cf_perf_params *p)
{
    *p = cf_perf_defaults(g->gpu_info);
    if (o->constants)
        p->k = *o->constants;
    p->gradient_bytes = g->gradient_bytes;
}

/* Scores every row of `g` that is not in `fitted` with params `p`: the
 * error of the point prediction and whether its 80 % interval holds the
 * measurement. */
static cf_status score_group(const cf_measurement *rows, size_t n_rows, cf_validate_group *g, const char *fitted,
                             double *all_errors, size_t *n_all, size_t *n_all_covered,
                             cf_validate_row_prediction *per_row)
{
    double *errs = malloc((n_rows ? n_rows : 1) * sizeof *errs);
    double *bucket_errs = malloc((n_rows ? n_rows : 1) * N_BUCKETS * sizeof *bucket_errs);
    size_t n = 0, n_bucket[N_BUCKETS] = {0}, covered = 0, bucket_covered[N_BUCKETS] = {0};
    if (!errs || !bucket_errs) {
        free(errs);
        free(bucket_errs);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    double z80 = cf_normal_two_sided_z(CF_INTERVAL_LEVEL);
    for (size_t i = 0; i < n_rows; i++) {
        if (!same_group(g, &rows[i]) || (fitted && fitted[i]))
            continue;
        cf_step pred = cf_perf_predict_measurement(&g->params, &rows[i], g->gradient_bytes);
        double e = pred.step_s / rows[i].step_time_s - 1.0;
        double log_e = log1p(e); /* > 0: the prediction was slower than measured */
        int inside = log_e <= z80 * pred.sigma && -log_e <= z80 * pred.sigma_up;
        if (per_row)
            per_row[i] = (cf_validate_row_prediction){.scored = 1, .predicted_s = pred.step_s,
                                                      .p10_s = pred.step_s * exp(-z80 * pred.sigma),
                                                      .p90_s = pred.step_s * exp(z80 * pred.sigma_up),
                                                      .sigma = pred.sigma,
                                                      .gpus_per_node = cf_measurement_gpus_per_node(&rows[i]),
                                                      .network_share = pred.visible_s / pred.step_s,
                                                      .carried_from = g->carried_from[0] ? g->carried_from : NULL};
        errs[n++] = e;
        covered += inside;
        all_errors[(*n_all)++] = e;
        *n_all_covered += inside;
        int b = bucket_of(rows[i].num_nodes);
        bucket_covered[b] += inside;
        bucket_errs[(size_t)b * n_rows + n_bucket[b]++] = e;
    }
    g->n_pred = n;
    g->all = cf_ape_summarise(errs, n);
    if (n)
        g->all.interval_coverage = (double)covered / (double)n;
    g->n_buckets = 0;
    for (int b = 0; b < N_BUCKETS; b++) {
        if (!n_bucket[b])
            continue;
        g->bucket_nodes[g->n_buckets] = bucket_lower[b];
        g->by_nodes[g->n_buckets] = cf_ape_summarise(&bucket_errs[(size_t)b * n_rows], n_bucket[b]);
        g->by_nodes[g->n_buckets++].interval_coverage = (double)bucket_covered[b] / (double)n_bucket[b];
    }
    free(errs);
    free(bucket_errs);
    return CF_OK;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* A row of g on one node with `gpus` GPUs, or (gpus 0) of its probe. */
static int of_shape(const cf_measurement *r, const cf_validate_group *g, int gpus)
{
    return same_group(g, r) && (gpus ? r->num_nodes == 1 && r->num_gpus == gpus : is_probe_row(r));
}

/* Marks the rows of g of that shape whose batch is one of the light
 * profile's `want` picks (cf_search_spread over the shape's batches). */
static cf_status mark_light(const cf_measurement *rows, size_t n_rows, const cf_validate_group *g, int gpus, int want,
                            char *fitted)
{
    int *batches = malloc((n_rows ? n_rows : 1) * sizeof *batches);
    if (!batches)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < n_rows; i++)
        if (of_shape(&rows[i], g, gpus))
            batches[n++] = rows[i].local_bsz;
    qsort(batches, n, sizeof *batches, cmp_int);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || batches[k - 1] != batches[i])
            batches[k++] = batches[i];
    size_t pos[3];
    size_t n_pick = cf_search_spread(k, want, pos);
    for (size_t i = 0; i < n_rows; i++) {
        if (!of_shape(&rows[i], g, gpus))
            continue;
        for (size_t j = 0; j < n_pick; j++)
            fitted[i] |= rows[i].local_bsz == batches[pos[j]];
    }
    free(batches);
    return CF_OK;
}

/* The light profile's rows of g (cf_validate_options.light_profile). */
static cf_status light_profile_rows(const cf_measurement *rows, size_t n_rows, const cf_validate_options *o,
                                    const cf_validate_group *g, char *fitted)
{
    int g_full = 1;
    for (size_t i = 0; i < n_rows; i++) {
        fitted[i] = 0;
        if (same_group(g, &rows[i]) && rows[i].num_nodes == 1 && rows[i].num_gpus > g_full)
            g_full = rows[i].num_gpus;
    }
    cf_status st = mark_light(rows, n_rows, g, 1, CF_SEARCH_PROFILE_BATCHES_ONE, fitted);
    if (st == CF_OK && g_full > 1)
        st = mark_light(rows, n_rows, g, g_full, CF_SEARCH_PROFILE_BATCHES_FULL, fitted);
    if (st == CF_OK && o->with_2node_probe)
        st = mark_light(rows, n_rows, g, 0, CF_SEARCH_PROBE_BATCHES, fitted);
    return st;
}

/* A group left on the default network: the slowest NIC it may have, the
 * interval spanning the fastest (cf_perf_network_term). */
static void span_default_network(cf_validate_group *g)
{
    if (g->nominal_inter_gbps > 0)
        g->params.nic_gbps = g->nominal_inter_gbps; /* the fit was bounded by the fastest */
    if (g->nic_span_gbps[1] > g->nic_span_gbps[0] && g->nic_span_gbps[0] > 0) {
        g->params.nic_span_gbps[0] = g->nic_span_gbps[0];
        g->params.nic_span_gbps[1] = g->nic_span_gbps[1];
    }
}

static cf_status fit_group(const cf_measurement *rows, size_t n_rows, const cf_validate_options *o,
                           cf_validate_group *g, char *fitted)
{
    cf_measurement *train = malloc((n_rows ? n_rows : 1) * sizeof *train);
    if (!train)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    size_t n = 0;
    cf_status lst = o->light_profile ? light_profile_rows(rows, n_rows, o, g, fitted) : CF_OK;
    if (lst != CF_OK) {
        free(train);
        return lst;
    }
    for (size_t i = 0; i < n_rows; i++) {
        if (!o->light_profile)
            fitted[i] = same_group(g, &rows[i]) && in_training_subset(o, &rows[i]);
        /* --fit-all-rows: the fit also sees the rows it is scored on. */
        if (fitted[i] || (o->fit_all_rows && same_group(g, &rows[i])))
            train[n++] = rows[i];
    }
    g->n_fit = n;
    cf_perf_params start;
    start_params(o, g, &start);
    /* A network fitted on the rows is bounded by the fastest NIC the
     * cluster may have (the slowest would cap a fast cluster measured as
     * fast); a default one is the slowest's, its interval spanning both. */
    double fit_nic = g->nic_span_gbps[1] > g->nominal_inter_gbps ? g->nic_span_gbps[1] : g->nominal_inter_gbps;
    cf_status st = cf_perf_fit(train, n, g->gradient_bytes, fit_nic, &start, &g->params, &g->fit);
    free(train);
    if (st == CF_OK && g->params.network_provenance == CF_PROV_DEFAULT)
        span_default_network(g);
    return st;
}

/* Carries the fit of `ref` (same model, a training GPU) to `g`'s GPU: the
 * single-node step by the carry-over rule at each side's precision, the
 * network as measured when both ran on one fabric (else the default). */
static cf_status carry_group(const cf_validate_group *ref, cf_validate_group *g)
{
    /* names the one that is not ("GPU 'T4' or 'RTX 2080 Ti'" left it to guess) */
    if (!g->gpu_info)
        return cf_error_set(CF_ERR_INVALID, "GPU '%s' is not in the GPU table: %s's fit cannot be carried to it",
                            g->gpu, ref->gpu);
    if (!ref->gpu_info)
        return cf_error_set(CF_ERR_INVALID, "the fitted GPU '%s' is not in the GPU table: its fit cannot be carried "
                            "to %s", ref->gpu, g->gpu);
    cf_perf_params p = cf_perf_on_network(&ref->params, ref->nominal_inter_gbps, g->nominal_inter_gbps);
    double ratio = cf_gpu_time_ratio_between(ref->gpu_info, ref->precision, g->gpu_info, g->precision);
    p.compute_scale = (p.compute_scale > 0 ? p.compute_scale : 1.0) * ratio;
    p.sigma_compute = hypot(p.sigma_compute, cf_carry_sigma(ref->gpu_info, ref->precision, g->gpu_info, g->precision, NULL));
    p.compute_provenance = CF_PROV_ESTIMATED;
    cf_perf_params here = cf_perf_defaults(g->gpu_info); /* the target's in-node hardware */
    p.intra_gbps = here.intra_gbps;
    p.nvlink = here.nvlink;
    if (p.network_provenance == CF_PROV_FITTED)
        p.network_provenance = CF_PROV_ESTIMATED;
    g->params = p;
    if (p.network_provenance == CF_PROV_DEFAULT)
        span_default_network(g);
    snprintf(g->carried_from, sizeof g->carried_from, "%s", ref->gpu);
    return CF_OK;
}

/* Where a group's inter-node bandwidth came from, once it is fitted or carried. */
static void source_text(const cf_validate_group *g, char *out, size_t n)
{
    const cf_vm *vm = g->network_vm;
    if (g->carried_from[0] && g->params.network_provenance != CF_PROV_DEFAULT)
        snprintf(out, n, "as fitted for %s (one fabric: carried in proportion to the NIC)", g->carried_from);
    else if (g->params.network_provenance == CF_PROV_FITTED)
        snprintf(out, n, "fitted from the multi-node rows (%.0f%% of the step hides it, %.3g s per-step overhead)",
                 100 * (g->params.hide >= 0 ? g->params.hide : g->params.k.hide_default), g->params.overhead_s);
    else if (g->given_inter_gbps > 0)
        snprintf(out, n, "--inter-node-gbps %g with the default efficiency", g->given_inter_gbps);
    else if (vm && g->params.nic_span_gbps[1] > g->params.nic_span_gbps[0])
        snprintf(out, n, "catalog VM %s %s (%g Gbit/s NIC, the slowest of the catalog's %s × %d VMs: the interval "
                         "spans theirs, to %g Gbit/s) with the default efficiency (pass --inter-node-gbps)",
                 vm->cloud, vm->instance_type, vm->network_gbps, g->gpu_info ? g->gpu_info->model : g->gpu,
                 g->hw_gpus_per_node, g->params.nic_span_gbps[1]);
    else if (vm)
        snprintf(out, n, "catalog VM %s %s (%g Gbit/s NIC) with the default efficiency", vm->cloud, vm->instance_type,
                 vm->network_gbps);
    else if (!g->gpu_info)
        snprintf(out, n, "GPU not in the GPU table, NIC unknown: default network, %g Gbit/s guessed (pass "
                         "--inter-node-gbps)", CF_DEFAULT_UNKNOWN_NETWORK_GBPS);
    else
        snprintf(out, n, "no catalog VM with %s × this many GPUs, NIC unknown: default network, %g Gbit/s guessed "
                         "(pass --inter-node-gbps)", g->gpu_info->model, CF_DEFAULT_UNKNOWN_NETWORK_GBPS);
}

/* With with_2node_probe, a group left on the default network says why: its
 * rows hold no 2-node × 1-GPU run to fit the probe on. */
static void network_source(const cf_validate_group *g, const cf_validate_options *o, char *out, size_t n)
{
    if (o->with_2node_probe && !g->carried_from[0] && g->params.network_provenance == CF_PROV_DEFAULT) {
        char rest[448];
        source_text(g, rest, sizeof rest);
        snprintf(out, n, "no 2-node × 1-GPU row to fit the probe on: %.440s", rest);
        return;
    }
    source_text(g, out, n);
}

cf_status cf_validate_steps(const cf_measurement *rows, size_t n_rows, const cf_validate_options *options,
                            cf_validate_group *groups, size_t n_groups, cf_ape_stats *overall)
{
    char *fitted = calloc(n_rows ? n_rows : 1, 1);
    double *all_errors = malloc((n_rows ? n_rows : 1) * sizeof *all_errors);
    size_t n_all = 0, n_all_covered = 0;
    cf_status st = CF_OK;
    if (!fitted || !all_errors) {
        free(fitted);
        free(all_errors);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    /* Every training GPU must be one of the file's. */
    for (size_t t = 0; t < options->n_train_gpus; t++) {
        int found = 0;
        for (size_t k = 0; k < n_groups && !found; k++)
            found = strcasecmp(options->train_gpus[t], groups[k].gpu) == 0;
        if (!found) {
            char have[200] = "";
            size_t len = 0;
            for (size_t k = 0; k < n_groups && len < sizeof have; k++) {
                int seen = 0;
                for (size_t j = 0; j < k; j++)
                    seen |= strcmp(groups[j].gpu, groups[k].gpu) == 0;
                if (!seen)
                    len += (size_t)snprintf(have + len, sizeof have - len, "%s%s", len ? ", " : "", groups[k].gpu);
            }
            free(fitted);
            free(all_errors);
            cf_status bad = cf_error_set(CF_ERR_INVALID, "training GPU '%s' has no rows in the measurements (their "
                                         "GPUs: %s)", options->train_gpus[t], have);
            cf_error_hint("--train-gpus names GPUs of the file's gpu column");
            return bad;
        }
    }
    /* First the groups that are fitted, then the carried-over ones. */
    for (int pass = 0; pass < 2 && st == CF_OK; pass++) {
        for (size_t k = 0; k < n_groups && st == CF_OK; k++) {
            cf_validate_group *g = &groups[k];
            int train_gpu = is_train_gpu(options, g->gpu);
            if (train_gpu != (pass == 0) || g->skipped)
                continue;
            cf_status gst;
            if (train_gpu) {
                gst = fit_group(rows, n_rows, options, g, fitted);
            } else {
                const cf_validate_group *ref = NULL;
                for (size_t r = 0; r < n_groups && !ref; r++)
                    if (!groups[r].failed && is_train_gpu(options, groups[r].gpu) &&
                        strcmp(groups[r].model, g->model) == 0 && groups[r].n_fit > 0)
                        ref = &groups[r];
                gst = ref ? carry_group(ref, g)
                          : cf_error_set(CF_ERR_INVALID, "no fitted GPU type for model '%s' to carry over from", g->model);
                memset(fitted, 0, n_rows);
            }
            if (gst == CF_ERR_NOMEM) {
                st = gst;
                break;
            }
            if (gst != CF_OK) {
                g->failed = 1;
                snprintf(g->message, sizeof g->message, "%s", cf_error_message());
                continue;
            }
            st = score_group(rows, n_rows, g, train_gpu ? fitted : NULL, all_errors, &n_all, &n_all_covered,
                             options->per_row);
        }
    }
    for (size_t k = 0; st == CF_OK && k < n_groups; k++) { /* what the reports say of each group's network */
        cf_validate_group *g = &groups[k];
        g->inter_gbps = g->params.inter_gbps > 0 ? g->params.inter_gbps : cf_default_inter_gbps(g->params.nic_gbps);
        network_source(g, options, g->network_source, sizeof g->network_source);
        cf_perf_default_nic_span(&g->params, g->interval_span_gbps); /* the catalog's on an unknown NIC */
    }
    if (st == CF_OK && overall) {
        *overall = cf_ape_summarise(all_errors, n_all);
        if (n_all)
            overall->interval_coverage = (double)n_all_covered / (double)n_all;
    }
    free(fitted);
    free(all_errors);
    return st;
}

/* ---- the groups' inputs ------------------------------------------------- */

/* The offer for a measured (GPU, GPUs per node): one of the campaign's
 * cloud when the profile names one ("aws"), and among several the smallest
 * NIC figure (the conservative reading); span gets the smallest and
 * largest NIC among those it chose from (which of them the cluster is, the
 * rows do not say). NULL when none. */
static const cf_vm *measured_offer(const cf_validate_context *ctx, const cf_gpu *gpu, int gpus_per_vm,
                                   const char *profile, double span[2])
{
    const cf_vm *best = NULL;
    int best_same_cloud = 0;
    span[0] = span[1] = 0;
    for (size_t i = 0; gpu && i < ctx->n_vms; i++) {
        const cf_vm *vm = &ctx->vms[i];
        if (strcmp(vm->gpu_model, gpu->model) != 0 || vm->gpu_count != gpus_per_vm || !(vm->network_gbps > 0))
            continue;
        int same_cloud = strcasecmp(vm->cloud, profile) == 0;
        if (best && same_cloud < best_same_cloud)
            continue;
        if (!best || same_cloud > best_same_cloud) /* the campaign's cloud: only its VMs count */
            span[0] = span[1] = vm->network_gbps;
        span[0] = fmin(span[0], vm->network_gbps);
        span[1] = fmax(span[1], vm->network_gbps);
        if (!best || same_cloud > best_same_cloud || vm->network_gbps < best->network_gbps) {
            best = vm;
            best_same_cloud = same_cloud;
        }
    }
    return best;
}

/* The model's parameter count: the caller's figure, else the built-in
 * table; 0 when neither knows it. */
static double model_parameters(const cf_validate_context *ctx, const char *model)
{
    for (size_t i = ctx->n_params; i-- > 0;) /* the last one given wins */
        if (cf_names_equal(ctx->params[i].name, model, CF_MODEL_NAME_SEPARATORS))
            return ctx->params[i].parameters;
    const cf_model_size *known = cf_model_size_find(model);
    return known ? known->parameters : 0;
}

/* The group's VM size: that of its multi-node rows, which crossed the
 * NIC, else of its first row (a runner profile's 1-GPU runs may have used
 * a smaller VM); the first multi-node row of another size is kept. */
static void group_vm_size(const cf_measurement *rows, size_t n_rows, cf_validate_group *g)
{
    g->hw_gpus_per_node = g->hw_other = 0;
    g->hw_line = g->hw_other_line = 0;
    for (int multi = 1; multi >= 0 && !g->hw_gpus_per_node; multi--)
        for (size_t i = 0; i < n_rows; i++) {
            const cf_measurement *r = &rows[i];
            if (!same_group(g, r) || (multi && r->num_nodes < 2))
                continue;
            if (!g->hw_gpus_per_node) {
                g->hw_gpus_per_node = r->hw_gpus_per_node;
                g->hw_line = r->line;
            } else if (multi && r->hw_gpus_per_node != g->hw_gpus_per_node && !g->hw_other) {
                g->hw_other = r->hw_gpus_per_node;
                g->hw_other_line = r->line;
            }
        }
}

void cf_validate_prepare(const cf_measurement *rows, size_t n_rows, const cf_validate_context *ctx,
                         cf_validate_group *groups, size_t n_groups)
{
    for (size_t k = 0; k < n_groups; k++) {
        cf_validate_group *g = &groups[k];
        double params = model_parameters(ctx, g->model);
        if (!(params > 0)) {
            g->skipped = 1;
            snprintf(g->message, sizeof g->message,
                     "model '%s' has no known parameter count (needed for the communication term)", g->model);
            snprintf(g->hint, sizeof g->hint, "pass --params %s=COUNT", g->model);
            continue;
        }
        g->gradient_bytes = params * 4.0; /* fp32 gradients, as DDP all-reduces them */
        group_vm_size(rows, n_rows, g);
        g->gpu_info = cf_gpu_resolve(ctx->gpus, ctx->n_gpus, g->gpu);
        g->network_vm = measured_offer(ctx, g->gpu_info, g->hw_gpus_per_node, g->profile, g->nic_span_gbps);
        if (ctx->inter_node_gbps > 0)
            g->nic_span_gbps[0] = g->nic_span_gbps[1] = ctx->inter_node_gbps;
        g->given_inter_gbps = ctx->inter_node_gbps;
        g->nominal_inter_gbps = ctx->inter_node_gbps > 0 ? ctx->inter_node_gbps
                                : g->network_vm          ? g->network_vm->network_gbps
                                                         : 0;
    }
}

/* ---- iterations to target ----------------------------------------------- */

/* A file's name in a message; a set built without names says which file. */
static const char *file_of(const char *name, const char *what)
{
    return name ? name : what;
}

/* Rows of one (model, batch) run: [start, end) in the sorted row array. */
typedef struct {
    size_t start, end;
    int batch;
} run_span;

/* The next run of `model` at or after row *pos (rows are sorted by model,
 * then batch, so each run is contiguous); 0 when there is none. Any number
 * of runs: a fixed array of 64 left the rest of a model's runs unscored. */
static int next_run(const cf_gns_traces *t, const char *model, size_t *pos, run_span *out)
{
    for (size_t i = *pos; i < t->n_rows;) {
        size_t j = i;
        while (j < t->n_rows && strcmp(t->rows[j].model, t->rows[i].model) == 0 &&
               t->rows[j].batch_size == t->rows[i].batch_size)
            j++;
        if (strcmp(t->rows[i].model, model) == 0) {
            *out = (run_span){i, j, t->rows[i].batch_size};
            *pos = j;
            return 1;
        }
        i = j;
    }
    *pos = t->n_rows;
    return 0;
}

static int reached(double v, double target, int higher)
{
    return higher ? v >= target : v <= target;
}

cf_status cf_gns_target(const cf_gns_traces *traces, const cf_gns_model_info *model, double *out_target)
{
    run_span run;
    size_t pos = 0;
    if (!next_run(traces, model->model, &pos, &run))
        return cf_error_set(CF_ERR_INVALID, "%s: no trace rows for model '%s' (%s:%ld)",
                            file_of(traces->traces_name, "traces"), model->model,
                            file_of(traces->models_name, "models"), model->line);
    int have = 0;
    double target = 0;
    do {
        double best = traces->rows[run.start].metric;
        for (size_t i = run.start; i < run.end; i++)
            if (reached(traces->rows[i].metric, best, model->higher_is_better))
                best = traces->rows[i].metric;
        /* the weakest run's best value is reached by every run */
        if (!have || reached(target, best, model->higher_is_better))
            target = best;
        have = 1;
    } while (next_run(traces, model->model, &pos, &run));
    *out_target = target;
    return CF_OK;
}

/* Linear interpolation of `key` (progress or iteration) where the run first
 * reaches the target; NAN when it never does. */
static double first_reach(const cf_gns_traces *t, run_span run, double target, int higher, int by_iteration)
{
    double prev_metric = 0, prev_x = 0;
    for (size_t i = run.start; i < run.end; i++) {
        const cf_gns_row *r = &t->rows[i];
        double x = by_iteration ? r->iteration : r->progress;
        if (reached(r->metric, target, higher)) {
            if (i == run.start || r->metric == prev_metric)
                return x;
            double w = (target - prev_metric) / (r->metric - prev_metric);
            return prev_x + w * (x - prev_x);
        }
        prev_metric = r->metric;
        prev_x = x;
    }
    return NAN;
}

static cf_status predict_model(const cf_gns_traces *t, const cf_gns_model_info *info,
                               const cf_gns_validate_options *o, cf_gns_prediction *out, size_t *n_out)
{
    run_span run, base_run;
    const run_span *base = NULL;
    for (size_t pos = 0; next_run(t, info->model, &pos, &run);)
        if (run.batch == info->m0) {
            base_run = run;
            base = &base_run;
        }
    if (!base)
        return cf_error_set(CF_ERR_INVALID, "%s: no run of model '%s' at its M0 batch %d (%s:%ld)",
                            file_of(t->traces_name, "traces"), info->model, info->m0,
                            file_of(t->models_name, "models"), info->line);
    double target;
    cf_status st = cf_gns_target(t, info, &target);
    if (st != CF_OK)
        return st;
    double p0 = first_reach(t, *base, target, info->higher_is_better, 0);
    if (!isfinite(p0) || p0 <= 0)
        return cf_error_set(CF_ERR_INVALID, "%s:%ld: model '%s': the M0 run (batch %d) never reaches the target %g",
                            file_of(t->traces_name, "traces"), t->rows[base->start].line, info->model, info->m0,
                            target);
    /* The M0 run's noise scale over progress, as a fraction of the progress
     * that reaches the target: the same noise model `recommend` uses for a
     * spec's trace (continued along its trend where it ends early, as with
     * --train-epochs). Only the M0 run's trace is used: the noise scale the
     * larger runs measured is predicted (cf_noise_at_batch), not read.
     * Every row of it: only the first 256 (a spec's limit) were kept, and
     * the rest of training was their trend. */
    cf_noise_point *trace = malloc((base->end - base->start) * sizeof *trace);
    if (!trace)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    int n_trace = 0;
    for (size_t i = base->start; i < base->end; i++) {
        const cf_gns_row *r = &t->rows[i];
        if (r->b_noise <= 0 || (o->train_epochs > 0 && r->epoch > o->train_epochs))
            continue;
        if (n_trace > 0 && r->progress / p0 <= trace[n_trace - 1].progress_fraction)
            continue;
        trace[n_trace++] = (cf_noise_point){r->progress / p0, r->b_noise};
    }
    if (n_trace == 0) {
        free(trace);
        return cf_error_set(CF_ERR_INVALID,
                            "%s:%ld: model '%s': the M0 run (batch %d) has no noise-scale values (column 'b_noise') "
                            "in the epochs used",
                            file_of(t->traces_name, "traces"), t->rows[base->start].line, info->model, info->m0);
    }
    cf_noise_model nm;
    cf_noise_model_init_trend(&nm, info->m0, trace, n_trace, CF_PROV_MEASURED);
    free(trace);
    double e0 = p0 * info->m0;
    for (size_t pos = 0; next_run(t, info->model, &pos, &run);) {
        if (run.batch <= info->m0)
            continue;
        double measured = first_reach(t, run, target, info->higher_is_better, 1);
        if (!isfinite(measured))
            continue;
        cf_gns_prediction *p = &out[(*n_out)++];
        snprintf(p->model, sizeof p->model, "%s", info->model);
        p->batch = run.batch;
        p->m0 = info->m0;
        p->target = target;
        p->measured_iterations = measured;
        p->predicted_iterations = cf_samples_to_target(&nm, e0, run.batch) / run.batch;
        p->error = p->predicted_iterations / measured - 1.0;
    }
    return CF_OK;
}

cf_status cf_validate_gns(const cf_gns_traces *traces, const cf_gns_validate_options *options,
                          cf_gns_prediction **out, size_t *n_out, cf_ape_stats *overall)
{
    *n_out = 0;
    *out = calloc(traces->n_rows ? traces->n_rows : 1, sizeof **out);
    double *errors = malloc((traces->n_rows ? traces->n_rows : 1) * sizeof *errors);
    if (!*out || !errors) {
        free(*out);
        free(errors);
        *out = NULL;
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    cf_status st = CF_OK;
    for (size_t m = 0; m < traces->n_models && st == CF_OK; m++) {
        run_span run;
        size_t pos = 0;
        if (!next_run(traces, traces->models[m].model, &pos, &run))
            continue; /* a model without traces: nothing to score */
        st = predict_model(traces, &traces->models[m], options, *out, n_out);
    }
    if (st == CF_OK && *n_out == 0) { /* a score of nothing read "median 0.0%", exit 0 */
        st = cf_error_set(CF_ERR_INVALID, "%s: nothing could be predicted: no model has a run at a batch above its M0 "
                          "(%s)", file_of(traces->traces_name, "traces"), file_of(traces->models_name, "models"));
        cf_error_hint("the runs above M0 are predicted from the M0 run's noise trace; add runs at larger batches");
    }
    for (size_t i = 0; i < *n_out; i++)
        errors[i] = (*out)[i].error;
    if (st == CF_OK && overall)
        *overall = cf_ape_summarise(errors, *n_out);
    free(errors);
    if (st != CF_OK) {
        free(*out);
        *out = NULL;
        *n_out = 0;
    }
    return st;
}

/* No row was scored: say why (every group skipped or failed, or no row
 * outside the training subset) and fail. */
cf_status cf_validate_nothing_predicted(const char *path, const cf_validate_options *vo,
                                        const cf_validate_group *groups,
                                        size_t n_groups)
{
    for (size_t g = 0; g < n_groups; g++)
        if (groups[g].skipped || groups[g].failed) {
            cf_error_set(CF_ERR_INVALID, "%s: nothing could be predicted: %s/%s: %s", path, groups[g].model,
                         groups[g].gpu, groups[g].message);
            if (groups[g].hint[0])
                cf_error_hint("%s", groups[g].hint);
            return CF_ERR_INVALID;
        }
    if (vo->light_profile)
        cf_error_set(CF_ERR_INVALID, "%s: nothing could be predicted: every row is in the search's light profile%s",
                     path, vo->with_2node_probe ? " and the 2-node probe" : "");
    else
        cf_error_set(CF_ERR_INVALID,
                     "%s: nothing could be predicted: every row is in the training subset (≤ %d node%s%s)", path,
                     vo->train_max_nodes, vo->train_max_nodes == 1 ? "" : "s",
                     vo->with_2node_probe ? " and the 2-node probe" : "");
    /* What would leave rows to score, from the options in force: never
     * --fit-all-rows, which fits every row but scores the same ones. */
    cf_buf hint = CF_BUF_INIT;
    if (vo->fit_all_rows)
        cf_buf_puts(&hint, "--fit-all-rows does not change which rows are scored; ");
    cf_buf_printf(&hint, "add rows %s", vo->light_profile ? "beyond the light profile (other batches, GPU counts "
                                                              "or nodes)" : "with more nodes");
    if (!vo->light_profile && vo->train_max_nodes > 1)
        cf_buf_printf(&hint, ", lower --train-max-nodes (now %d)", vo->train_max_nodes);
    if (vo->with_2node_probe)
        cf_buf_puts(&hint, ", leave out --with-2node-probe");
    if (!vo->light_profile)
        cf_buf_puts(&hint, ", or fit only the search's light profile (--light-profile, without --train-max-nodes) "
                           "to score the other single-node rows");
    cf_error_hint("%s", cf_buf_cstr(&hint));
    cf_buf_free(&hint);
    return CF_ERR_INVALID;
}
