/* The views of `cloudfit prices` over a catalog (cloudfit/pricing/price_views.h). */
#include "cloudfit/pricing/price_views.h"
#include "cloudfit/pricing/regions.h"
#include "cloudfit/common/number.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { MAX_FAMILY_MODELS = 64 };

size_t cf_gpu_family_models(const cf_catalog *catalog, const char *name, const char **out, size_t cap)
{
    if (!name || cap == 0)
        return 0;
    if (cf_catalog_gpu(catalog, name)) {
        out[0] = name;
        return 1;
    }
    size_t n = 0, len = strlen(name);
    for (size_t i = 0; i < catalog->n_gpus && n < cap; i++)
        if (strncasecmp(catalog->gpus[i].model, name, len) == 0 && catalog->gpus[i].model[len] == '-' &&
            cf_catalog_sells_gpu(catalog, catalog->gpus[i].model)) /* not a row no offer sells */
            out[n++] = catalog->gpus[i].model;
    if (n == 0) {
        /* a family after a maker's name ("NVIDIA A100") is the family as
         * "A100" is, never the resolver's first row of it */
        const cf_gpu *rows[MAX_FAMILY_MODELS];
        size_t n_rows = cf_gpu_family_rows(catalog->gpus, catalog->n_gpus, name, rows, MAX_FAMILY_MODELS);
        for (size_t i = 0; n_rows > 1 && i < n_rows && n < cap; i++)
            if (cf_catalog_sells_gpu(catalog, rows[i]->model))
                out[n++] = rows[i]->model;
    }
    /* the name a tool prints for a row ("Tesla T4"), else unknown:
     * cf_catalog_check_filter explains */
    if (n == 0)
        out[n++] = cf_catalog_gpu_filter_model(catalog, name);
    return n;
}

void cf_vm_list_free(cf_vm_list *list)
{
    free(list->items);
    list->items = NULL;
    list->n = 0;
}

/* Whether `vm` sells one of the `n` GPU entries (expanded[k] is a model of
 * entry entry_of[k]) with that entry's GPU count. */
static int sells_entry(const cf_vm *vm, const char *const *expanded, const size_t *entry_of, size_t n_expanded,
                       const int *counts)
{
    for (size_t k = 0; k < n_expanded; k++)
        if (strcasecmp(vm->gpu_model, expanded[k]) == 0 &&
            (!counts || counts[entry_of[k]] <= 0 || vm->gpu_count == counts[entry_of[k]]))
            return 1;
    return 0;
}

cf_status cf_price_select(const cf_catalog *catalog, const cf_price_query *q, cf_vm_list *out)
{
    out->items = NULL;
    out->n = 0;
    /* One GPU is a list of one: each entry's models (a family is several). */
    const char *const one[1] = {q->gpu};
    const int one_count[1] = {q->gpu_count};
    const char *const *names = q->gpu ? one : q->gpus;
    const int *counts = q->gpu ? one_count : q->gpu_counts;
    size_t n_names = q->gpu ? 1 : q->n_gpus;
    const char *gpus[MAX_FAMILY_MODELS];
    size_t entry_of[MAX_FAMILY_MODELS], n_gpus = 0;
    for (size_t i = 0; i < n_names; i++) {
        size_t n = cf_gpu_family_models(catalog, names[i], gpus + n_gpus, MAX_FAMILY_MODELS - n_gpus);
        for (size_t k = 0; k < n; k++)
            entry_of[n_gpus + k] = i;
        n_gpus += n;
        if (n == 0 && names[i]) /* no room left */
            return cf_error_set(CF_ERR_USAGE, "too many GPU models asked for (at most %d)", MAX_FAMILY_MODELS);
    }
    cf_catalog_filter f = {q->clouds, q->n_clouds, q->regions, q->n_regions, gpus, n_gpus,
                           q->spot_only ? CF_SPOT_ONLY : CF_SPOT_ALLOW, q->include_restricted};
    cf_status st = cf_catalog_check_filter(catalog, &f);
    if (st != CF_OK)
        return st;
    out->items = malloc((catalog->n_vms + 1) * sizeof *out->items);
    if (!out->items)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    out->n = cf_catalog_filter_rows(catalog, &f, out->items);
    /* Each filter names something on offer, but not together (--cloud
     * lambda --spot; T4 --cloud lambda): said as recommend says it, not an
     * empty summary (exit 0) or "no offer of T4 matches", naming no filter. */
    if (out->n == 0 && (q->n_clouds || q->n_regions || n_gpus || q->spot_only)) {
        cf_vm_list_free(out);
        return cf_catalog_explain_empty_as(catalog, &f, "--spot");
    }
    out->n_restricted_left_out = cf_catalog_filter_restricted(catalog, &f);
    size_t n = 0;
    for (size_t i = 0; i < out->n; i++)
        if (n_gpus == 0 || sells_entry(out->items[i], gpus, entry_of, n_gpus, counts))
            out->items[n++] = out->items[i];
    out->n = n;
    return cf_rows_order_by_region(out->items, out->n, q->preferred, q->n_preferred);
}

static const cf_price_query *sort_query; /* the region preference of the sort in progress */

/* An offer without the price sorted by sorts last. */
static int price_cmp(double px, double py, const cf_vm *x, const cf_vm *y)
{
    px = px > 0 ? px : HUGE_VAL;
    py = py > 0 ? py : HUGE_VAL;
    if (px != py)
        return px < py ? -1 : 1;
    int c = strcmp(x->cloud, y->cloud);
    if (c)
        return c;
    int rx = cf_region_rank(x->cloud, x->region, sort_query->preferred, sort_query->n_preferred);
    int ry = cf_region_rank(y->cloud, y->region, sort_query->preferred, sort_query->n_preferred);
    return rx != ry ? (rx < ry ? -1 : 1) : (x > y) - (x < y);
}

static int by_ondemand(const void *a, const void *b)
{
    const cf_vm *x = *(const cf_vm *const *)a, *y = *(const cf_vm *const *)b;
    return price_cmp(x->price_ondemand_usd_per_hr, y->price_ondemand_usd_per_hr, x, y);
}

static int by_spot(const void *a, const void *b)
{
    const cf_vm *x = *(const cf_vm *const *)a, *y = *(const cf_vm *const *)b;
    return price_cmp(x->price_spot_usd_per_hr, y->price_spot_usd_per_hr, x, y);
}

cf_status cf_price_offers(const cf_catalog *catalog, const cf_price_query *q, cf_vm_list *out)
{
    cf_status st = cf_price_select(catalog, q, out);
    if (st != CF_OK)
        return st;
    sort_query = q;
    qsort(out->items, out->n, sizeof *out->items, q->spot_only ? by_spot : by_ondemand);
    if (out->n == 0) {
        char count[24] = "";
        if (q->gpu_count > 0)
            snprintf(count, sizeof count, " with %d", q->gpu_count);
        return cf_error_set(CF_ERR_INFEASIBLE, "no offer of %s%s matches%s", q->gpu ? q->gpu : "any GPU", count,
                            q->spot_only ? " with a spot price" : "");
    }
    return CF_OK;
}

/* aws, azure, gcp, lambda, then any other cloud. */
static int cloud_rank(const char *cloud)
{
    static const char *const ORDER[] = {"aws", "azure", "gcp", "lambda"};
    for (int i = 0; i < 4; i++)
        if (strcmp(ORDER[i], cloud) == 0)
            return i;
    return 4;
}

static int summary_cmp(const void *a, const void *b)
{
    const cf_gpu_cloud_prices *x = a, *y = b;
    int c = strcasecmp(x->gpu, y->gpu);
    if (c)
        return c;
    c = cloud_rank(x->cloud) - cloud_rank(y->cloud);
    return c ? c : strcmp(x->cloud, y->cloud);
}

static void add_offer(cf_gpu_cloud_prices *g, const cf_vm *vm)
{
    g->n_offers++;
    if (vm->gpu_count < 32)
        g->gpu_counts_mask |= 1u << vm->gpu_count;
    else
        g->gpu_counts_32_plus = 1;
    double od = vm->price_ondemand_usd_per_hr / vm->gpu_count;
    double spot = vm->price_spot_usd_per_hr / vm->gpu_count;
    if (od > 0 && (!g->cheapest || od < g->cheapest_usd_per_gpu_hr)) {
        g->cheapest_usd_per_gpu_hr = od;
        g->cheapest = vm;
        g->cheapest_kind = vm->ondemand_kind;
    }
    if (spot > 0 && (!g->cheapest_spot || spot < g->cheapest_spot_usd_per_gpu_hr)) {
        g->cheapest_spot_usd_per_gpu_hr = spot;
        g->cheapest_spot = vm;
        g->cheapest_spot_kind = vm->spot_kind;
    }
}

cf_status cf_price_summary(const cf_vm_list *offers, cf_gpu_cloud_prices **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    cf_gpu_cloud_prices *g = calloc(offers->n + 1, sizeof *g);
    if (!g)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < offers->n; i++) {
        const cf_vm *vm = offers->items[i];
        cf_gpu_cloud_prices *e = NULL;
        for (size_t k = 0; k < n && !e; k++)
            if (strcmp(g[k].cloud, vm->cloud) == 0 && strcmp(g[k].gpu, vm->gpu_model) == 0)
                e = &g[k];
        if (!e) {
            e = &g[n++];
            e->gpu = vm->gpu_model;
            e->cloud = vm->cloud;
        }
        add_offer(e, vm);
    }
    qsort(g, n, sizeof *g, summary_cmp);
    *out = g;
    *n_out = n;
    return CF_OK;
}

cf_status cf_price_parse_gpu(const char *arg, char *gpu, size_t cap, int *count)
{
    *count = 0;
    const char *colon = strchr(arg, ':');
    size_t len = colon ? (size_t)(colon - arg) : strlen(arg);
    if (len == 0 || len >= cap)
        return cf_error_set(CF_ERR_USAGE, "expected GPU or GPU:N, got '%s'", arg);
    memcpy(gpu, arg, len);
    gpu[len] = '\0';
    if (colon) {
        int n = 0;
        if (cf_number_int(colon + 1, 1, 1024, &n) != CF_NUMBER_OK) {
            cf_error_set(CF_ERR_USAGE, "in '%s': the GPU count after ':' must be a positive integer", arg);
            cf_error_hint("e.g. 'cloudfit prices A100:8'");
            return CF_ERR_USAGE;
        }
        *count = (int)n;
    }
    return CF_OK;
}
