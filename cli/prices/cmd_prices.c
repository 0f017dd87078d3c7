/* cloudfit prices [GPU[:N]] [--cloud C] [--region R] [--spot] [--format table|json|csv]
 *
 * Without a GPU: the cheapest $/GPU-hour per GPU model and cloud, like
 * `sky show-gpus`. With GPU[:N]: every offer of that GPU (or family) and
 * count. Both read the catalog in use (newest price snapshot, else
 * embedded), compute through the pricing module (price_views.h) and render
 * with render/prices_report.c. `prices update` is cmd_prices_update.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "exit_codes.h"
#include "io/catalog_source.h"
#include "log.h"
#include "prices/cmd_prices_update.h"
#include "cloudfit/render/prices_report.h"
#include "term/output.h"

typedef enum { FMT_TABLE, FMT_JSON, FMT_CSV } out_format;

static int parse_format(const cf_cli_options *o, out_format *out)
{
    *out = FMT_TABLE;
    if (!o->format || strcmp(o->format, "table") == 0)
        return 0;
    if (strcmp(o->format, "json") == 0)
        *out = FMT_JSON;
    else if (strcmp(o->format, "csv") == 0)
        *out = FMT_CSV;
    else {
        cf_log_error("option '--format' does not accept '%s'", o->format);
        cf_log_hint("use one of: table, json, csv");
        return CF_EXIT_USAGE;
    }
    return 0;
}

/* Writes the rendered result (JSON document or text) and frees both. */
static int emit(const cf_cli_options *o, cJSON *doc, cf_buf *text)
{
    if (cf_cli_format_is(o, "table"))
        cf_cli_fit_text(cf_cli_output_width(o), text);
    int rc = cf_cli_emit(o, doc, text);
    cJSON_Delete(doc);
    cf_buf_free(text);
    return rc;
}

/* The query of --cloud, --region, --spot, --prefer-region and
 * --include-restricted-regions; `prefer` has room for 32. */
static cf_price_query query_of(const cf_cli_options *o, const char *gpu, int count, const char **prefer)
{
    size_t n_prefer = cf_cli_region_preference(o, (const char *const *)o->regions.items, (size_t)o->regions.n,
                                               prefer, 32);
    return (cf_price_query){o->clouds.items, (size_t)o->clouds.n, o->regions.items, (size_t)o->regions.n, gpu, count,
                            o->spot_only, o->include_restricted_regions, prefer, n_prefer};
}

/* The catalog's age is that of the prices shown. */
static void warn_for(cf_catalog_source *src, const cf_cli_options *o, const cf_vm_list *offers)
{
    cf_catalog_source_set_in_use(src, offers->items, offers->n, o->spot_only ? CF_SPOT_ONLY : CF_SPOT_ALLOW,
                                 offers->n_restricted_left_out);
    cf_cli_catalog_warn(src);
}

static int show_summary(cf_catalog_source *src, const cf_cli_options *o, out_format fmt)
{
    const char *prefer[32];
    cf_price_query q = query_of(o, NULL, 0, prefer);
    cf_vm_list offers = {0};
    cf_gpu_cloud_prices *rows = NULL;
    cf_prices_summary_report r = {.source = src, .width = cf_cli_output_width(o)};
    if (cf_price_select(&src->catalog, &q, &offers) != CF_OK ||
        cf_price_summary(&offers, &rows, &r.n_rows) != CF_OK) {
        cf_vm_list_free(&offers);
        return cf_report_error();
    }
    warn_for(src, o, &offers);
    r.rows = rows;
    r.n_offers = offers.n;
    cf_buf text = CF_BUF_INIT;
    if (fmt == FMT_CSV)
        cf_prices_summary_csv(&r, &text);
    else if (fmt == FMT_TABLE)
        cf_prices_summary_table(&r, &text);
    int rc = emit(o, fmt == FMT_JSON ? cf_prices_summary_json(&r) : NULL, &text);
    free(rows);
    cf_vm_list_free(&offers);
    return rc;
}

static int show_offers(cf_catalog_source *src, const cf_cli_options *o, out_format fmt, const char *arg)
{
    char gpu[32];
    int count = 0;
    if (cf_price_parse_gpu(arg, gpu, sizeof gpu, &count) != CF_OK)
        return cf_report_error();
    const char *prefer[32];
    cf_price_query q = query_of(o, gpu, count, prefer);
    cf_vm_list offers = {0};
    cf_status st = cf_price_offers(&src->catalog, &q, &offers);
    if (st != CF_OK) {
        if (st == CF_ERR_INFEASIBLE && count)
            cf_error_hint("see 'cloudfit prices %s' for the GPU counts on offer", gpu);
        cf_vm_list_free(&offers);
        return cf_report_error();
    }
    warn_for(src, o, &offers);
    cf_prices_offers_report r = {.source = src, .gpu = gpu, .gpu_count = count, .offers = offers.items,
                                 .n_offers = offers.n, .width = cf_cli_output_width(o)};
    cf_buf text = CF_BUF_INIT;
    if (fmt == FMT_CSV)
        cf_prices_offers_csv(&r, &text);
    else if (fmt == FMT_TABLE)
        cf_prices_offers_table(&r, &text);
    int rc = emit(o, fmt == FMT_JSON ? cf_prices_offers_json(&r) : NULL, &text);
    cf_vm_list_free(&offers);
    return rc;
}

int cmd_prices(int argc, char **argv, const cf_cli_options *o, int n_positional)
{
    (void)argc;
    out_format fmt;
    int rc = parse_format(o, &fmt);
    if (rc)
        return rc;
    if (n_positional >= 1 && strcmp(argv[1], "update") == 0)
        return cf_cli_prices_update(o, n_positional);
    if (o->max_price_change > 0) /* a default from the configuration file, or a slip: nothing to change */
        cf_log_info("note: --max-price-change applies to 'prices update' only; ignored");
    if (n_positional > 1) {
        cf_log_error("prices takes at most one GPU[:N], got %d arguments", n_positional);
        cf_log_hint("usage: cloudfit prices [GPU[:N]] [--cloud C] [--region R] [--spot] [--format table|json|csv]");
        return CF_EXIT_USAGE;
    }
    cf_catalog_source src;
    if ((rc = cf_cli_catalog_open(o, 1, &src)))
        return rc;
    rc = n_positional == 1 ? show_offers(&src, o, fmt, argv[1]) : show_summary(&src, o, fmt);
    cf_catalog_source_close(&src);
    return rc;
}
