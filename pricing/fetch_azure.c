/* Azure Retail Prices API (no auth): one listing per region,
 *   GET {base}?api-version=2023-01-01-preview&$filter=serviceName eq 'Virtual Machines'
 *       and armRegionName eq '{region}'
 * following NextPageLink until null (a page without it is malformed: the
 * listing's end is not known). Kept: type "Consumption", hourly meters, not
 * Windows products, not Low Priority meters, the region's
 * primary meter (isPrimaryMeterRegion; a non-primary item repeats a meter
 * of another region); a skuName ending " Spot" is the spot price. Prices
 * must be in USD: an item in another currency fails the listing (a price
 * in the wrong unit must never be stored). Reservation and
 * DevTestConsumption items and the savingsPlan arrays are ignored. A spot
 * price equal to on-demand is kept out by the merge (no discount is not a
 * spot price).
 *
 * The API can list one meter twice, an old and a new price, each with the
 * date it took effect (effectiveStartDate): the price in effect now is the
 * one with the latest effectiveStartDate not after the fetch, whatever the
 * order of the items (an item without a date counts as the oldest). Two
 * kept items of the same date that disagree leave the size unpriced in
 * that region (noted). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "price_source.h"

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static const char *str_of(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* NextPageLink is absolute and points at prices.azure.com; keep its query
 * and send it to the configured base URL (so mirrors and tests work), with
 * its raw spaces and quotes percent-encoded. */
static void next_url(const cf_fetch_ctx *ctx, const char *link, cf_buf *out)
{
    const char *query = strchr(link, '?');
    cf_buf raw = CF_BUF_INIT;
    cf_buf_puts(&raw, ctx->base_url);
    cf_buf_puts(&raw, query ? query : "");
    out->len = 0;
    cf_url_encode_query(cf_buf_cstr(&raw), out);
    cf_buf_free(&raw);
}

/* One kept price of a size (on-demand or spot) while a region is read. */
typedef struct {
    char sku[48];
    int spot;
    double usd_per_hr;
    char effective[32];   /* effectiveStartDate as sent; "" = none */
    int conflict;         /* items of the same date disagree */
} meter_price;

typedef struct {
    meter_price *items;
    size_t n, cap;
    size_t n_superseded;  /* older duplicates left out */
    size_t n_future;      /* prices not yet in effect */
} meter_table;

static cf_status keep_price(meter_table *t, const char *sku, int spot, double usd, const char *effective)
{
    for (size_t i = 0; i < t->n; i++) {
        meter_price *m = &t->items[i];
        if (m->spot != spot || strcmp(m->sku, sku) != 0)
            continue;
        int c = strcmp(effective, m->effective);
        if (c > 0) { /* newer: it replaces the older price */
            m->usd_per_hr = usd;
            snprintf(m->effective, sizeof m->effective, "%s", effective);
            m->conflict = 0;
            t->n_superseded++;
        } else if (c == 0) {
            m->conflict |= m->usd_per_hr != usd;
        } else {
            t->n_superseded++;
        }
        return CF_OK;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        meter_price *grown = realloc(t->items, cap * sizeof *grown);
        if (!grown)
            return cf_error_set(CF_ERR_NOMEM, "out of memory");
        t->items = grown;
        t->cap = cap;
    }
    meter_price *m = &t->items[t->n++];
    memset(m, 0, sizeof *m);
    snprintf(m->sku, sizeof m->sku, "%s", sku);
    m->spot = spot;
    m->usd_per_hr = usd;
    snprintf(m->effective, sizeof m->effective, "%s", effective);
    return CF_OK;
}

static cf_status take_item(const cf_fetch_ctx *ctx, const char *region, const cJSON *item, meter_table *kept)
{
    const char *type = str_of(item, "type");
    const char *sku = str_of(item, "armSkuName");
    const char *sku_name = str_of(item, "skuName");
    const char *meter = str_of(item, "meterName");
    const char *product = str_of(item, "productName");
    if (strcmp(type, "Consumption") != 0 || strcmp(str_of(item, "unitOfMeasure"), "1 Hour") != 0)
        return CF_OK;
    if (ends_with(product, " Windows") || strstr(sku_name, "Low Priority") || strstr(meter, "Low Priority"))
        return CF_OK;
    if (!cf_fetch_knows_type(ctx, sku))
        return CF_OK; /* not a GPU VM the catalog knows */
    const char *item_region = str_of(item, "armRegionName");
    if (*item_region && strcmp(item_region, region) != 0)
        return CF_OK;
    const cJSON *primary = cJSON_GetObjectItemCaseSensitive(item, "isPrimaryMeterRegion");
    if (cJSON_IsFalse(primary))
        return CF_OK;
    const char *currency = str_of(item, "currencyCode");
    if (strcmp(currency, "USD") != 0) {
        cf_error_set(CF_ERR_NETWORK, "azure %s: item for '%s' is priced in '%s', not USD", region, sku,
                     *currency ? currency : "(no currencyCode)");
        cf_error_hint("cloudfit's prices are USD; the API answers in USD unless asked otherwise (check the base URL)");
        return CF_ERR_NETWORK;
    }
    const cJSON *price = cJSON_GetObjectItemCaseSensitive(item, "retailPrice");
    if (!cJSON_IsNumber(price)) /* a malformed answer, like every other the fetchers meet: exit 1 */
        return cf_error_set(CF_ERR_NETWORK, "azure %s: item for '%s' has no numeric retailPrice", region, sku);
    int spot = ends_with(sku_name, " Spot") || ends_with(meter, " Spot");
    const char *effective = str_of(item, "effectiveStartDate");
    /* ISO 8601 UTC compares as text; a price that takes effect after the
     * fetch is not the price now. */
    if (*effective && ctx->fetched_at && *ctx->fetched_at && strcmp(effective, ctx->fetched_at) > 0) {
        kept->n_future++;
        return CF_OK;
    }
    return keep_price(kept, sku, spot, price->valuedouble, effective);
}

/* The region's kept prices as quotes; sizes whose prices conflict are left
 * out and noted. */
static cf_status quote_region(const cf_fetch_ctx *ctx, const char *region, const meter_table *kept,
                              cf_price_list *out)
{
    for (size_t i = 0; i < kept->n; i++) {
        const meter_price *m = &kept->items[i];
        if (m->conflict) {
            cf_buf_printf(ctx->notes, "azure %s: %s has several %s prices effective from %s; not re-priced\n", region,
                          m->sku, m->spot ? "spot" : "on-demand", m->effective[0] ? m->effective : "(no date)");
            continue;
        }
        cf_price_quote *q = cf_fetch_quote_slot(out, "azure", region, m->sku, "", 0);
        if (!q)
            return CF_ERR_NOMEM;
        if (m->spot) {
            q->has_spot = 1;
            q->price_spot_usd_per_hr = m->usd_per_hr;
        } else {
            q->has_ondemand = 1;
            q->price_ondemand_usd_per_hr = m->usd_per_hr;
        }
    }
    if (kept->n_superseded)
        cf_buf_printf(ctx->notes, "azure %s: %zu older price%s of the same meter left out (the latest "
                      "effectiveStartDate is in effect)\n", region, kept->n_superseded,
                      kept->n_superseded == 1 ? "" : "s");
    if (kept->n_future)
        cf_buf_printf(ctx->notes, "azure %s: %zu price%s effective after this fetch left out\n", region,
                      kept->n_future, kept->n_future == 1 ? "" : "s");
    return CF_OK;
}

static int seen_before(char **seen, int n, const char *url)
{
    for (int i = 0; i < n; i++)
        if (strcmp(seen[i], url) == 0)
            return 1;
    return 0;
}

static cf_status fetch_region(const cf_fetch_ctx *ctx, const char *region, cf_price_list *out)
{
    char first[512];
    snprintf(first, sizeof first,
             "?api-version=2023-01-01-preview&$filter=serviceName eq 'Virtual Machines' and armRegionName eq '%s'",
             region);
    cf_buf url = CF_BUF_INIT;
    next_url(ctx, first, &url);
    meter_table kept = {0};
    char **seen = calloc((size_t)ctx->max_pages, sizeof *seen);
    cf_status st = seen ? CF_OK : cf_error_set(CF_ERR_NOMEM, "out of memory");
    int page = 0;
    while (st == CF_OK) {
        if (page == ctx->max_pages) {
            st = cf_error_set(CF_ERR_NETWORK, "azure %s: more than %d pages; stopping rather than keeping a truncated "
                              "price list", region, ctx->max_pages);
            cf_error_hint("raise CLOUDFIT_MAX_PAGES if the listing really is that long");
            break;
        }
        if (seen_before(seen, page, cf_buf_cstr(&url))) {
            char shown[1024];
            cf_http_redact(cf_buf_cstr(&url), shown, sizeof shown);
            st = cf_error_set(CF_ERR_NETWORK, "azure %s: pagination loop: page %d links back to %s", region, page,
                              shown);
            break;
        }
        seen[page] = strdup(cf_buf_cstr(&url));
        char what[96];
        snprintf(what, sizeof what, "azure %s page %d", region, page + 1);
        cJSON *doc = NULL;
        if ((st = cf_fetch_json(ctx, cf_buf_cstr(&url), what, &doc)) != CF_OK)
            break;
        page++;
        const cJSON *items = cJSON_GetObjectItemCaseSensitive(doc, "Items");
        if (!cJSON_IsArray(items)) {
            st = cf_error_set(CF_ERR_NETWORK, "%s: response has no 'Items' array", what);
        } else {
            const cJSON *item;
            cJSON_ArrayForEach(item, items)
            {
                if ((st = take_item(ctx, region, item, &kept)) != CF_OK)
                    break;
            }
        }
        const cJSON *link = cJSON_GetObjectItemCaseSensitive(doc, "NextPageLink");
        int more = 0;
        if (st == CF_OK && cJSON_IsString(link) && *link->valuestring) {
            next_url(ctx, link->valuestring, &url);
            more = 1;
        } else if (st == CF_OK && !link) {
            /* The API always sends it (null on the last page): without it
             * the listing's end is not known, and a truncated price list is
             * never used. */
            st = cf_error_set(CF_ERR_NETWORK, "%s: response has no 'NextPageLink' (a URL, or null on the last page); "
                              "not using a listing that may be cut short", what);
        } else if (st == CF_OK && !cJSON_IsNull(link)) {
            st = cf_error_set(CF_ERR_NETWORK, "%s: 'NextPageLink' is neither a URL nor null", what);
        }
        cJSON_Delete(doc);
        if (!more)
            break;
    }
    if (st == CF_OK)
        st = quote_region(ctx, region, &kept, out);
    for (int i = 0; seen && i < ctx->max_pages; i++)
        free(seen[i]);
    free(seen);
    free(kept.items);
    cf_buf_free(&url);
    return st;
}

static cf_status fetch_azure(const cf_fetch_ctx *ctx, cf_price_list *out)
{
    for (size_t i = 0; i < ctx->n_regions; i++) {
        cf_status st = fetch_region(ctx, ctx->regions[i], out);
        if (st != CF_OK)
            return st;
    }
    return CF_OK;
}

const cf_price_source cf_price_source_azure = {
    .cloud = "azure",
    .url_env = "CLOUDFIT_AZURE_PRICES_URL",
    .default_url = "https://prices.azure.com/api/retail/prices",
    .label = "Azure Retail Prices API",
    .spot_kind = CF_PRICE_LISTED,
    .fetch = fetch_azure,
};
