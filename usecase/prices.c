#include "cloudfit/usecase/prices.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/clock.h"
#include "cloudfit/db/snapshots.h"
#include "cloudfit/usecase/recommend.h"

cf_status cf_prices_query(const cf_prices_request *req, cf_prices_result *out)
{
    memset(out, 0, sizeof *out);
    const cf_catalog *catalog = &req->catalog_source->catalog;
    cf_status st = req->gpu ? cf_price_parse_gpu(req->gpu, out->gpu, sizeof out->gpu, &out->gpu_count) : CF_OK;
    if (st != CF_OK)
        return st;
    const char *prefer[32];
    size_t n_prefer = cf_region_preference(req->prefer_regions, req->n_prefer_regions, req->regions, req->n_regions,
                                           prefer, 32);
    cf_price_query q = {req->clouds, req->n_clouds, req->regions, req->n_regions, req->gpu ? out->gpu : NULL,
                        out->gpu_count, req->spot_only, req->include_restricted_regions, prefer, n_prefer};
    if (req->gpu) {
        st = cf_price_offers(catalog, &q, &out->offers);
        if (st == CF_ERR_INFEASIBLE && out->gpu_count)
            cf_error_hint("see 'cloudfit prices %s' for the GPU counts on offer", out->gpu);
    } else {
        st = cf_price_select(catalog, &q, &out->offers);
        if (st == CF_OK)
            st = cf_price_summary(&out->offers, &out->summary_rows, &out->summary.n_rows);
    }
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
