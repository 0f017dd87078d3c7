/* Price sources: one backend per cloud, a struct of function pointers
 * (private to pricing/). A source fetches the public price API for the
 * regions it is given and returns filtered quotes; update.c joins them to
 * the catalog's machine shapes, validates and merges. */
#ifndef CLOUDFIT_PRICING_PRICE_SOURCE_H
#define CLOUDFIT_PRICING_PRICE_SOURCE_H
#include <cjson/cJSON.h>

#include "cloudfit/common/buf.h"
#include "cloudfit/pricing.h"
#include "cloudfit/pricing/update.h"
#include "http.h"

typedef struct {
    const cf_http_config *http;
    const char *base_url;                 /* configured, no trailing '/' */
    const cf_catalog *base;               /* shapes the quotes will be joined to */
    const char *cloud;
    const char *const *regions;           /* regions to fetch for this cloud */
    size_t n_regions;
    const char **known_types;             /* sorted instance types of this cloud in `base` */
    size_t n_known_types;
    int max_pages;                        /* per paginated listing; more is an error */
    const char *fetched_at;               /* ISO 8601 UTC time of this update */
    cf_buf *notes;                        /* non-fatal notes, one per line */
} cf_fetch_ctx;

typedef struct {
    const char *cloud;
    const char *url_env;                  /* environment variable overriding the base URL */
    const char *default_url;
    const char *label;                    /* written into refreshed rows' source */
    const char *spot_label;               /* the source of its spot prices when not `label`; NULL = label */
    cf_price_kind spot_kind;              /* what its spot prices are: listed, or observed (a market feed) */
    int spot_regional;                    /* observed spot prices are one per region, not per zone */
    /* Fills `out` with quotes. All-or-nothing: on failure the caller drops
     * whatever was added. CF_ERR_UNAVAILABLE = cannot run here (no API key). */
    cf_status (*fetch)(const cf_fetch_ctx *ctx, cf_price_list *out);
} cf_price_source;

extern const cf_price_source cf_price_source_azure;
extern const cf_price_source cf_price_source_aws;
extern const cf_price_source cf_price_source_gcp;
extern const cf_price_source cf_price_source_lambda;

/* Whether `region` is one of ctx->regions. */
int cf_fetch_wants_region(const cf_fetch_ctx *ctx, const char *region);
/* The API key in environment variable `env`: missing is CF_ERR_UNAVAILABLE
 * ("CLOUD: no API key: the API needs one", hint "set ENV to HINT"); a
 * character other than letters, digits and `punctuation` is CF_ERR_USAGE
 * (a key goes into a URL or a header: it must not change their meaning). */
cf_status cf_fetch_api_key(const char *cloud, const char *env, const char *api, const char *hint,
                           const char *punctuation, const char **out);
/* Whether the base catalog has `instance_type` for ctx->cloud (any region). */
int cf_fetch_knows_type(const cf_fetch_ctx *ctx, const char *instance_type);
/* GETs `url` and parses JSON; a body that does not parse is an error
 * naming `what` and the URL (truncated responses land here). */
cf_status cf_fetch_json(const cf_fetch_ctx *ctx, const char *url, const char *what, cJSON **out);
/* Finds the quote for (region, type, model, count) or appends an empty one. */
cf_price_quote *cf_fetch_quote_slot(cf_price_list *list, const char *cloud, const char *region, const char *type,
                                    const char *gpu_model, int gpu_count);
/* One answer quoting one price twice: `usd` quoted for (region, type) is
 * remembered in `seen`; when it differs from an earlier quote of the same
 * (region, type) the pair goes into `conflicts` (price_ondemand_usd_per_hr
 * the first price, price_spot_usd_per_hr the other). Returns 1 when the pair
 * is in conflict, 0 when not, -1 out of memory (error set). Such a price is
 * not known: the caller drops it (cf_fetch_drop_conflicts) and notes it,
 * whatever the order of the answer. */
int cf_fetch_check_price(cf_price_list *seen, cf_price_list *conflicts, const char *region, const char *type,
                         double usd);
/* Removes from out->items[from..] the spot (spot = 1) or on-demand prices of
 * the quotes whose (region, type) is in `conflicts` (a conflict with region
 * "" matches every region); a quote left with no price goes. */
void cf_fetch_drop_conflicts(cf_price_list *out, size_t from, const cf_price_list *conflicts, int spot);

#endif
