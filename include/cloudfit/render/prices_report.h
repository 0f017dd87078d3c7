/* The results of `cloudfit prices`, computed by cli/prices/cmd_prices.c through the
 * pricing module (cloudfit/pricing/price_views.h) and rendered here as a
 * table, JSON or CSV (docs/pricing.md). */
#ifndef CLOUDFIT_RENDER_PRICES_REPORT_H
#define CLOUDFIT_RENDER_PRICES_REPORT_H
#include <cjson/cJSON.h>

#include "cloudfit/common/buf.h"
#include "cloudfit/pricing/price_views.h"
#include "cloudfit/pricing/update.h"
#include "cloudfit/render/render_catalog.h"

/* Without a GPU: the cheapest prices per GPU model and cloud. */
typedef struct {
    const cf_catalog_source *source;
    const cf_gpu_cloud_prices *rows;
    size_t n_rows;
    size_t n_offers;              /* offers the summary is over */
    int width;                    /* fit the table to this many columns; 0 = no limit */
} cf_prices_summary_report;

/* With GPU[:N]: every offer of it, cheapest first. */
typedef struct {
    const cf_catalog_source *source;
    const char *gpu;              /* as asked: a model or a family */
    int gpu_count;                /* 0 = any */
    const cf_vm *const *offers;
    size_t n_offers;
    int width;                    /* fit the table to this many columns; 0 = no limit */
} cf_prices_offers_report;

/* `prices update` once its snapshot is stored. */
typedef struct {
    const cf_price_update_result *result;
    long long snapshot_id;
    const char *fetched_at;
    const char *db_path;
} cf_prices_update_report;

void cf_prices_summary_table(const cf_prices_summary_report *r, cf_buf *out);
void cf_prices_summary_csv(const cf_prices_summary_report *r, cf_buf *out);
cJSON *cf_prices_summary_json(const cf_prices_summary_report *r);

void cf_prices_offers_table(const cf_prices_offers_report *r, cf_buf *out);
void cf_prices_offers_csv(const cf_prices_offers_report *r, cf_buf *out);
cJSON *cf_prices_offers_json(const cf_prices_offers_report *r);

void cf_prices_update_table(const cf_prices_update_report *r, cf_buf *out);

#endif
