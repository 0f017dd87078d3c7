#include "cloudfit/usecase/prices.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cloudfit/common/clock.h"
#include "cloudfit/db/snapshots.h"
#include "cloudfit/usecase/recommend.h"

enum { MAX_MODELS = 64 };

/* GPU[:N] `name` names GPUs of the catalog: "unknown GPU" with a hint otherwise. */
static cf_status check_known(const cf_catalog *catalog, const char *name)
{
    const char *models[MAX_MODELS];
    size_t n = cf_gpu_family_models(catalog, name, models, MAX_MODELS);
    cf_catalog_filter f = {.gpus = models, .n_gpus = n, .spot = CF_SPOT_ALLOW, .include_restricted = 1};
    return cf_catalog_check_filter(catalog, &f);
}

/* Whether two parsed GPU[:N] name the same offers: the same models (a
 * family, a tool's spelling resolved) and the same GPUs per VM. */
static int same_gpu(const cf_catalog *catalog, const char *a, int a_count, const char *b, int b_count)
{
    const char *ma[MAX_MODELS], *mb[MAX_MODELS];
    size_t na = cf_gpu_family_models(catalog, a, ma, MAX_MODELS), nb = cf_gpu_family_models(catalog, b, mb, MAX_MODELS);
    if (a_count != b_count || na != nb)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (strcasecmp(ma[i], mb[i]) != 0)
            return 0;
    return 1;
}

/* req->gpus parsed as the argument is (names[i], counts[i]), and checked
 * against req->gpu: the argument and --gpu may name one GPU twice, never two. */
static cf_status parse_gpus(const cf_prices_request *req, const cf_prices_result *out, char (*names)[CF_GPU_NAME_MAX],
                            const char **name_ptrs, int *counts)
{
    const cf_catalog *catalog = &req->catalog_source->catalog;
    for (size_t i = 0; i < req->n_gpus; i++) {
        cf_status st = cf_price_parse_gpu(req->gpus[i], names[i], CF_GPU_NAME_MAX, &counts[i]);
        if (st != CF_OK)
            return st;
        name_ptrs[i] = names[i];
        if (!req->gpu)
            continue;
        if ((st = check_known(catalog, names[i])) != CF_OK || (st = check_known(catalog, out->gpu)) != CF_OK)
            return st;
        if (!same_gpu(catalog, out->gpu, out->gpu_count, names[i], counts[i])) {
            cf_error_set(CF_ERR_USAGE, "the GPU argument '%s' and --gpu '%s' name different GPUs", req->gpu,
                         req->gpus[i]);
            cf_error_hint("name the GPU once: 'cloudfit prices %s' for its offers, or --gpu for each of several "
                          "GPUs (the summary of those)", req->gpu);
            return CF_ERR_USAGE;
        }
    }
    return CF_OK;
}

/* Says which of several --gpu match no offer the others left (T4:3: T4 is
 * sold, never 3 per VM): the summary would leave them out without a word. */
static void note_unmatched(const cf_prices_request *req, const cf_vm_list *offers, const char (*names)[CF_GPU_NAME_MAX],
                           const int *counts)
{
    const cf_catalog *catalog = &req->catalog_source->catalog;
    for (size_t i = 0; req->note && i < req->n_gpus; i++) {
        const char *models[MAX_MODELS];
        size_t n = cf_gpu_family_models(catalog, names[i], models, MAX_MODELS), hits = 0;
        for (size_t k = 0; k < offers->n && !hits; k++)
            for (size_t m = 0; m < n && !hits; m++)
                hits = strcasecmp(offers->items[k]->gpu_model, models[m]) == 0 &&
                       (counts[i] <= 0 || offers->items[k]->gpu_count == counts[i]);
        if (hits)
            continue;
        char text[CF_GPU_NAME_MAX + 160];
        snprintf(text, sizeof text, "--gpu %s: no offer matches%s%s; the summary leaves it out", req->gpus[i],
                 req->spot_only ? " with a spot price" : "",
                 req->n_clouds || req->n_regions ? " under the --cloud and --region filters" : "");
        req->note(req->note_ctx, CF_NOTE_WARNING, text);
    }
}

/* No offer of the several GPUs asked for: "no offer of A100:3, T4:5 matches". */
static cf_status none_of(const cf_prices_request *req)
{
    char asked[256] = "";
    for (size_t i = 0; i < req->n_gpus && strlen(asked) + 8 < sizeof asked; i++)
        snprintf(asked + strlen(asked), sizeof asked - strlen(asked), "%s%s", i ? ", " : "", req->gpus[i]);
    cf_error_set(CF_ERR_INFEASIBLE, "no offer of %s matches%s", asked, req->spot_only ? " with a spot price" : "");
    cf_error_hint("see 'cloudfit prices' for the GPUs and GPU counts on offer");
    return CF_ERR_INFEASIBLE;
}

cf_status cf_prices_query(const cf_prices_request *req, cf_prices_result *out)
{
    memset(out, 0, sizeof *out);
    const cf_catalog *catalog = &req->catalog_source->catalog;
    /* One GPU, from the argument or a single --gpu: its offers. */
    const char *gpu = req->gpu ? req->gpu : req->n_gpus == 1 ? req->gpus[0] : NULL;
    cf_status st = gpu ? cf_price_parse_gpu(gpu, out->gpu, sizeof out->gpu, &out->gpu_count) : CF_OK;
    if (st != CF_OK)
        return st;
    out->one_gpu = gpu != NULL;
    size_t n = req->n_gpus;
    char (*names)[CF_GPU_NAME_MAX] = calloc(n + 1, sizeof *names);
    const char **name_ptrs = calloc(n + 1, sizeof *name_ptrs);
    int *counts = calloc(n + 1, sizeof *counts);
    if (!names || !name_ptrs || !counts)
        st = cf_error_set(CF_ERR_NOMEM, "out of memory");
    if (st == CF_OK)
        st = parse_gpus(req, out, names, name_ptrs, counts);
    const char *prefer[32];
    size_t n_prefer = cf_region_preference(req->prefer_regions, req->n_prefer_regions, req->regions, req->n_regions,
                                           prefer, 32);
    cf_price_query q = {.clouds = req->clouds, .n_clouds = req->n_clouds, .regions = req->regions,
                        .n_regions = req->n_regions, .gpu = gpu ? out->gpu : NULL, .gpu_count = out->gpu_count,
                        .gpus = gpu ? NULL : name_ptrs, .gpu_counts = counts, .n_gpus = gpu ? 0 : n,
                        .spot_only = req->spot_only, .include_restricted = req->include_restricted_regions,
                        .preferred = prefer, .n_preferred = n_prefer};
    if (st == CF_OK && gpu) {
        st = cf_price_offers(catalog, &q, &out->offers);
        if (st == CF_ERR_INFEASIBLE && out->gpu_count)
            cf_error_hint("see 'cloudfit prices %s' for the GPU counts on offer", out->gpu);
    } else if (st == CF_OK) {
        st = cf_price_select(catalog, &q, &out->offers);
        if (st == CF_OK && n > 0 && out->offers.n == 0)
            st = none_of(req);
        else if (st == CF_OK && n > 1)
            note_unmatched(req, &out->offers, names, counts);
        if (st == CF_OK)
            st = cf_price_summary(&out->offers, &out->summary_rows, &out->summary.n_rows);
    }
    free(names);
    free(name_ptrs);
    free(counts);
    if (st != CF_OK)
        return st;
    /* The catalog's age is that of the prices shown. */
    cf_catalog_source_set_in_use(req->catalog_source, out->offers.items, out->offers.n,
                                 req->spot_only ? CF_SPOT_ONLY : CF_SPOT_ALLOW, out->offers.n_restricted_left_out);
    if (req->note)
        req->note(req->note_ctx, CF_NOTE_PRICES_IN_USE, NULL);
    out->summary.source = req->catalog_source;
    out->summary.rows = out->summary_rows;
    out->summary.n_offers = out->offers.n;
    out->by_gpu = (cf_prices_offers_report){.source = req->catalog_source, .gpu = out->gpu,
                                            .gpu_count = out->gpu_count, .offers = out->offers.items,
                                            .n_offers = out->offers.n};
    return CF_OK;
}

void cf_prices_result_free(cf_prices_result *out)
{
    free(out->summary_rows);
    cf_vm_list_free(&out->offers);
    memset(out, 0, sizeof *out);
}

/* The pricing module's result in the db module's terms (the two do not
 * include each other). */
static cf_status store_snapshot(cf_db *db, const cf_catalog_source *base, const cf_price_update_result *res,
                                const char *fetched_at, long long *out_id)
{
    char sources[64] = "";
    for (size_t i = 0; i < res->n_clouds; i++)
        if (res->clouds[i].outcome == CF_CLOUD_UPDATED)
            snprintf(sources + strlen(sources), sizeof sources - strlen(sources), "%s%s", sources[0] ? "," : "",
                     res->clouds[i].cloud);
    cf_snapshot_price *prices = calloc(res->refreshed.n + 1, sizeof *prices);
    if (!prices)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    /* The table's on-demand column is required: rows sold as spot or
     * flex-start only are in the stored catalog (vms_csv), not listed here. */
    size_t n = 0;
    for (size_t i = 0; i < res->refreshed.n; i++) {
        const cf_price_quote *q = &res->refreshed.items[i];
        if (q->has_ondemand)
            prices[n++] = (cf_snapshot_price){q->cloud, q->region, q->instance_type, q->gpu_model, q->gpu_count,
                                              q->price_ondemand_usd_per_hr, q->has_spot ? q->price_spot_usd_per_hr : 0};
    }
    cf_snapshot_new snap = {.fetched_at = fetched_at, .sources = sources, .base = base->snapshot,
                            .vms_csv = res->vms_csv, .vms_csv_len = res->vms_csv_len, .row_count = (long)res->n_rows,
                            .report = res->warnings ? res->warnings : "", .prices = prices, .n_prices = n};
    cf_status st = cf_snapshot_insert(db, &snap, out_id);
    free(prices);
    return st;
}

cf_status cf_prices_update_run(const cf_prices_update_request *req, cf_prices_update_run_result *out)
{
    memset(out, 0, sizeof *out);
    cf_now_iso8601(out->fetched_at, sizeof out->fetched_at);
    cf_price_update_options options = req->options;
    options.fetched_at = out->fetched_at;
    cf_status st = out->fetch_status = cf_prices_update(&req->base->catalog, &options, &out->result);
    for (size_t i = 0; i < out->result.n_clouds; i++)
        out->any_cloud_failed |= out->result.clouds[i].outcome == CF_CLOUD_FAILED;
    out->report = (cf_prices_update_report){.result = &out->result, .fetched_at = out->fetched_at};
    if (st == CF_OK)
        st = cf_db_hold(req->db);
    if (st == CF_OK)
        st = store_snapshot(req->db, req->base, &out->result, out->fetched_at, &out->report.snapshot_id);
    return st;
}

void cf_prices_update_run_free(cf_prices_update_run_result *out)
{
    cf_price_update_result_free(&out->result);
    memset(out, 0, sizeof *out);
}

/* The one table of which of prices' forms takes which option (prices.h). */
static const struct {
    const char *option;
    const char *subcommands;
} sub_options[] = {
    {"gpu", "listing"},   {"spot", "listing"},  {"prefer-region", "listing"}, {"include-restricted-regions", "listing"},
    {"price-overrides", "listing"}, {"format", "listing"}, {"width", "listing"}, {"wide", "listing"},
    {"max-price-change", "update"},
};

const char *cf_prices_option_subcommands(const char *name)
{
    for (size_t i = 0; name && i < sizeof sub_options / sizeof *sub_options; i++)
        if (strcmp(sub_options[i].option, name) == 0)
            return sub_options[i].subcommands;
    return NULL;
}

cf_status cf_prices_check_options(const char *sub, const char *const *given, size_t n_given, cf_note_fn note,
                                  void *note_ctx)
{
    char text[160];
    for (size_t i = 0; note && i < n_given; i++) {
        const char *takes = cf_prices_option_subcommands(given[i]);
        if (!takes || strcmp(takes, sub) == 0)
            continue;
        if (strcmp(takes, "update") == 0)
            snprintf(text, sizeof text, "note: --%s applies to 'prices update' only; ignored", given[i]);
        else
            snprintf(text, sizeof text, "note: --%s applies to 'prices' only, not 'prices update'; ignored", given[i]);
        note(note_ctx, CF_NOTE_INFO, text);
    }
    return CF_OK;
}
