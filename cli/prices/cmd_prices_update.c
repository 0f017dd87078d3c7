/* cloudfit prices update [--cloud aws|azure|gcp]... [--region R]... [--db PATH]
 *
 * The library fetches, merges and stores (cf_prices_update_run over
 * pricing/update.c and db/snapshots.c, docs/pricing.md); here the
 * options, the database, the progress, each cloud's outcome said, and the
 * report (render/prices_report.c) delivered before the snapshot commits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cloudfit/usecase/prices.h"
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

/* Says which clouds were skipped or failed. */
static void print_cloud_outcomes(const cf_price_update_result *res)
{
    for (size_t i = 0; i < res->n_clouds; i++) {
        const cf_cloud_update *c = &res->clouds[i];
        if (c->outcome == CF_CLOUD_SKIPPED)
            cf_log_warning("%s skipped: %s", c->cloud, c->message);
        else if (c->outcome == CF_CLOUD_FAILED)
            cf_log_error("%s not updated: %s", c->cloud, c->message);
        if (c->outcome != CF_CLOUD_UPDATED && c->hint[0])
            cf_log_hint("%s", c->hint);
    }
}

int cf_cli_prices_update(const cf_cli_options *o, int n_positional)
{
    if (n_positional != 1) {
        /* the options in the hint: an error line naming --cloud would be
         * put down to a configuration file's "cloud" (cli/log.c) */
        cf_log_error("'prices update' takes no arguments, got %d", n_positional - 1);
        cf_log_hint("fetch some clouds or regions only with --cloud and --region");
        return CF_EXIT_USAGE;
    }
    /* A factor of 1 or less would keep out every change: refused, not
     * replaced by the default (it was, silently). */
    if (o->max_price_change > 0 && !(o->max_price_change > 1)) {
        cf_log_error("option '--max-price-change' expects a factor above 1 (3 keeps out a price that fell below a third "
                     "or rose above three times the last one), got '%g'",
                     o->max_price_change);
        cf_log_hint("see 'cloudfit prices --help'");
        return CF_EXIT_USAGE;
    }
    /* --cloud and --region checked as prices' are, before the database is
     * opened (an unknown region was exit 6 after four "skipped" lines) */
    cf_catalog known;
    if (cf_catalog_load_embedded(&known) != CF_OK)
        return cf_report_error();
    /* --gpu says what prices shows (noted as ignored, cmd_prices); update fetches every GPU */
    cf_cli_options without_gpu = *o;
    without_gpu.gpus.n = 0;
    int checked = cf_cli_check_search_options(&without_gpu, &known);
    cf_catalog_free(&known);
    if (checked)
        return checked;
    /* a cloud of the catalog without a price source: a usage error naming the option */
    if (cf_prices_update_check_clouds((const char *const *)o->clouds.items, (size_t)o->clouds.n) != CF_OK) {
        cf_log_error("option '--cloud': %s", cf_error_message());
        cf_log_hint("%s", cf_error_hint_text());
        cf_error_clear();
        return CF_EXIT_USAGE;
    }
    /* One handle: the base is the catalog in use from it (without
     * overrides: a stored snapshot holds list prices only), the snapshot
     * goes into it. */
    char path[1024];
    cf_db *db = NULL;
    /* a history this command creates is removed again when it stores nothing (cf_db_close_discard_new) */
    if (cf_cli_db_open(o, 1, &db, path, sizeof path) != CF_OK)
        return cf_report_error();
    cf_catalog_source base;
    int rc = cf_cli_catalog_read(o, db, path, 0, &base);
    if (rc) {
        cf_db_close_discard_new(db);
        return rc;
    }
    cf_prices_update_request req = {
        .base = &base, .db = db,
        .options = {.clouds = (const char *const *)o->clouds.items, .n_clouds = (size_t)o->clouds.n,
                    .regions = (const char *const *)o->regions.items, .n_regions = (size_t)o->regions.n,
                    .clouds_explicit = o->clouds.n > 0,
                    .max_change_factor = o->max_price_change > 0 ? o->max_price_change : 3.0}};
    cf_cli_progress progress; /* lines of each step, a bar for each download (term/progress.c) */
    cf_cli_progress_begin(&progress, o, "prices update");
    req.options.progress = cf_cli_progress_line_cb;
    req.options.progress_data = &progress;
    req.options.transfer = cf_cli_progress_count_cb;
    req.options.transfer_data = &progress;
    cf_prices_update_run_result res;
    cf_status st = cf_prices_update_run(&req, &res);
    cf_cli_progress_end(&progress);
    print_update_warnings(res.result.warnings);
    print_cloud_outcomes(&res.result);
    res.report.db_path = path;
    if (res.fetch_status != CF_OK && res.any_cloud_failed) {
        rc = cf_exit_code_for(st); /* each failure was printed above */
        cf_log_info("nothing stored; the catalog in use is still %s", base.snapshot);
    } else if (st != CF_OK) {
        rc = cf_report_error();
        cf_log_info("nothing stored; the catalog in use is still %s", base.snapshot);
    } else { /* the snapshot is committed only once its report was written (term/output.h) */
        cf_buf text = CF_BUF_INIT;
        cf_prices_update_table(&res.report, &text);
        rc = cf_cli_deliver_held(o, db, 0, &text);
        if (rc)
            cf_log_info("nothing stored; the catalog in use is still %s", base.snapshot);
        else if (res.any_cloud_failed)
            rc = cf_exit_code_for(CF_ERR_NETWORK);
    }
    cf_prices_update_run_free(&res);
    cf_db_close_discard_new(db);
    cf_catalog_source_close(&base);
    return rc;
}
