/* cloudfit prices update [--cloud aws|azure|gcp]... [--region R]... [--db PATH]
 *
 * A thin sequence: the catalog in use is the base, the pricing module
 * fetches and merges live prices (pricing/update.c, docs/pricing.md), the
 * db module stores the result as a snapshot (db/snapshots.c), and
 * render/prices_report.c renders the outcome. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/clock.h"
#include "cloudfit/db/snapshots.h"
#include "cloudfit/pricing/update.h"
#include "commands.h"
#include "exit_codes.h"
#include "io/catalog_source.h"
#include "io/db_open.h"
#include "log.h"
#include "prices/cmd_prices_update.h"
#include "cloudfit/render/prices_report.h"
#include "term/output.h"
#include "term/progress.h"

static void print_update_warnings(const char *text)
{
    while (text && *text) {
        const char *nl = strchr(text, '\n');
        int len = nl ? (int)(nl - text) : (int)strlen(text);
        if (len)
            cf_log_warning("%.*s", len, text);
        text += len + (nl != NULL);
    }
}

/* Says which clouds were skipped or failed; 1 when one failed. */
static int print_cloud_outcomes(const cf_price_update_result *res)
{
    int any_failed = 0;
    for (size_t i = 0; i < res->n_clouds; i++) {
        const cf_cloud_update *c = &res->clouds[i];
        if (c->outcome == CF_CLOUD_SKIPPED)
            cf_log_warning("%s skipped: %s", c->cloud, c->message);
        else if (c->outcome == CF_CLOUD_FAILED)
            cf_log_error("%s not updated: %s", c->cloud, c->message);
        if (c->outcome != CF_CLOUD_UPDATED && c->hint[0])
            cf_log_hint("%s", c->hint);
        any_failed |= c->outcome == CF_CLOUD_FAILED;
    }
    return any_failed;
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

int cf_cli_prices_update(const cf_cli_options *o, int n_positional)
{
    if (n_positional != 1) {
        cf_log_error("'prices update' takes no arguments (use --cloud and --region)");
        return CF_EXIT_USAGE;
    }
    /* The base is the catalog in use, without overrides: a stored snapshot
     * holds list prices only. */
    cf_catalog_source base;
    int rc = cf_cli_catalog_open(o, 0, &base);
    if (rc)
        return rc;
    char path[1024], fetched_at[32];
    cf_db *db = NULL;
    if (cf_cli_db_open(o, 1, &db, path, sizeof path) != CF_OK) {
        cf_catalog_source_close(&base);
        return cf_report_error();
    }
    cf_now_iso8601(fetched_at, sizeof fetched_at);
    cf_price_update_options uo = {.clouds = o->clouds.items, .n_clouds = (size_t)o->clouds.n,
                                  .regions = o->regions.items, .n_regions = (size_t)o->regions.n,
                                  .clouds_explicit = o->clouds.n > 0,
                                  .max_change_factor = o->max_price_change > 0 ? o->max_price_change : 3.0,
                                  .fetched_at = fetched_at};
    cf_cli_progress progress; /* lines of each step, a bar for each download (term/progress.c) */
    cf_cli_progress_begin(&progress, o, "prices update");
    uo.progress = cf_cli_progress_line_cb;
    uo.progress_data = &progress;
    uo.transfer = cf_cli_progress_count_cb;
    uo.transfer_data = &progress;
    cf_price_update_result res;
    cf_status st = cf_prices_update(&base.catalog, &uo, &res);
    cf_cli_progress_end(&progress);
    print_update_warnings(res.warnings);
    int any_failed = print_cloud_outcomes(&res);
    cf_prices_update_report r = {.result = &res, .fetched_at = fetched_at, .db_path = path};
    if (st != CF_OK && any_failed) {
        rc = cf_exit_code_for(st); /* each failure was printed above */
        cf_log_info("nothing stored; the catalog in use is still %s", base.snapshot);
    } else if (st != CF_OK || (st = cf_db_hold(db)) != CF_OK ||
               (st = store_snapshot(db, &base, &res, fetched_at, &r.snapshot_id)) != CF_OK) {
        rc = cf_report_error();
        cf_log_info("nothing stored; the catalog in use is still %s", base.snapshot);
    } else { /* the snapshot is committed only once its report was written (term/output.h) */
        cf_buf text = CF_BUF_INIT;
        cf_prices_update_table(&r, &text);
        cf_cli_result result;
        rc = cf_cli_result_stage_buf(o, &text, &result);
        if (rc == 0)
            rc = cf_cli_result_deliver(&result);
        rc = cf_cli_result_release(db, rc);
        cf_cli_result_discard(&result);
        cf_buf_free(&text);
        if (rc)
            cf_log_info("nothing stored; the catalog in use is still %s", base.snapshot);
        else if (any_failed)
            rc = cf_exit_code_for(CF_ERR_NETWORK);
    }
    cf_price_update_result_free(&res);
    cf_db_close(db);
    cf_catalog_source_close(&base);
    return rc;
}
