/* Lambda Cloud API (needs an API key: CLOUDFIT_LAMBDA_API_KEY).
 *
 *   GET {base}/api/v1/instance-types     HTTP Basic auth, the key as user name
 *
 * The answer (Lambda Cloud API 1.10.0, operation listInstanceTypes) is
 *   {"data": {"gpu_1x_a10": {"instance_type": {"name": ..., "price_cents_per_hour": 129,
 *             "specs": {"vcpus": ..., "memory_gib": ..., "storage_gib": ..., "gpus": 1}, ...},
 *             "regions_with_capacity_available": [{"name": "us-east-1", "description": ...}]}, ...}}
 * One on-demand price per instance type, the same in every region: it
 * re-prices the type's rows in every region of the catalog. Lambda sells no
 * spot VMs. price_cents_per_hour must be a whole number of cents above
 * zero; anything else is not a price (the type is noted and keeps its
 * previous price), and so is a type listed twice at different prices
 * (whichever came last would win by order). regions_with_capacity_available
 * says where a type could be launched at the moment of the fetch; it
 * changes by the minute, so it is summarised in the notes, never stored as
 * availability. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "price_source.h"

/* Quotes `usd` for every wanted catalog region of `type`; returns how many. */
static size_t quote_type(const cf_fetch_ctx *ctx, const char *type, double usd, cf_price_list *out, cf_status *st)
{
    size_t n = 0;
    for (size_t i = 0; i < ctx->base->n_vms && *st == CF_OK; i++) {
        const cf_vm *vm = &ctx->base->vms[i];
        if (strcmp(vm->cloud, "lambda") != 0 || strcmp(vm->instance_type, type) != 0 ||
            !cf_fetch_wants_region(ctx, vm->region))
            continue;
        cf_price_quote *q = cf_fetch_quote_slot(out, "lambda", vm->region, type, "", 0);
        if (!q) {
            *st = cf_error_set(CF_ERR_NOMEM, "out of memory");
            break;
        }
        q->has_ondemand = 1;
        q->price_ondemand_usd_per_hr = usd;
        n++;
    }
    return n;
}

static cf_status fetch_lambda(const cf_fetch_ctx *ctx, cf_price_list *out)
{
    /* The key is the HTTP Basic user name: a ':' would end it. */
    const char *key;
    cf_status st = cf_fetch_api_key("lambda", "CLOUDFIT_LAMBDA_API_KEY", "Lambda Cloud API",
                                    "a Lambda Cloud API key (cloud.lambda.ai, API keys)", "-_.~+/=", &key);
    if (st != CF_OK)
        return st;
    cf_http_config http = *ctx->http;
    http.basic_auth_user = key;
    cf_fetch_ctx authed = *ctx;
    authed.http = &http;
    char url[2048];
    snprintf(url, sizeof url, "%s/api/v1/instance-types", ctx->base_url);
    cJSON *doc = NULL;
    if ((st = cf_fetch_json(&authed, url, "lambda instance types", &doc)) != CF_OK)
        return st;
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(doc, "data");
    if (!cJSON_IsObject(data)) {
        cJSON_Delete(doc);
        return cf_error_set(CF_ERR_NETWORK, "lambda instance types: response has no 'data' object");
    }
    size_t n_types = 0, n_with_capacity = 0, n_unknown = 0, start_n = out->n;
    cf_price_list seen = {0}, conflicts = {0}; /* a type listed twice at different prices */
    const cJSON *entry;
    cJSON_ArrayForEach(entry, data)
    {
        const cJSON *it = cJSON_GetObjectItemCaseSensitive(entry, "instance_type");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(it, "name");
        const char *type = cJSON_IsString(name) ? name->valuestring : entry->string;
        if (!type || !cf_fetch_knows_type(ctx, type)) {
            n_unknown++;
            continue;
        }
        const cJSON *cents = cJSON_GetObjectItemCaseSensitive(it, "price_cents_per_hour");
        int priced = cJSON_IsNumber(cents) && cents->valuedouble > 0 && cents->valuedouble == floor(cents->valuedouble);
        size_t n_seen = seen.n;
        /* one price per type: a type listed again at another price has no known price */
        if (priced && cf_fetch_check_price(&seen, &conflicts, "", type, cents->valuedouble / 100.0) < 0) {
            st = cf_error_status();
            break;
        }
        if (!priced || seen.n > n_seen) { /* each type counted once */
            n_types++;
            n_with_capacity +=
                cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(entry, "regions_with_capacity_available")) > 0;
        }
        if (!priced) {
            cf_buf_printf(ctx->notes, "lambda: %s: price_cents_per_hour is not a positive whole number of cents; "
                          "it keeps its previous price\n", type);
            continue;
        }
        quote_type(ctx, type, cents->valuedouble / 100.0, out, &st);
        if (st != CF_OK)
            break;
    }
    cJSON_Delete(doc);
    if (st == CF_OK)
        cf_fetch_drop_conflicts(out, start_n, &conflicts, 0);
    for (size_t i = 0; st == CF_OK && i < conflicts.n; i++)
        cf_buf_printf(ctx->notes, "lambda: %s is listed at different prices (%g and %g $/h); it keeps its previous "
                      "price\n", conflicts.items[i].instance_type, conflicts.items[i].price_ondemand_usd_per_hr,
                      conflicts.items[i].price_spot_usd_per_hr);
    cf_price_list_free(&seen);
    cf_price_list_free(&conflicts);
    if (st == CF_OK && n_types)
        cf_buf_printf(ctx->notes, "lambda: at the fetch, %zu of the catalog's %zu types listed had capacity in some "
                      "region (regions_with_capacity_available changes by the minute; not stored)\n", n_with_capacity,
                      n_types);
    if (st == CF_OK && n_unknown)
        cf_buf_printf(ctx->notes, "lambda: %zu instance type%s the catalog does not offer ignored\n", n_unknown,
                      n_unknown == 1 ? "" : "s");
    return st;
}

const cf_price_source cf_price_source_lambda = {
    .cloud = "lambda",
    .url_env = "CLOUDFIT_LAMBDA_API_URL",
    .default_url = "https://cloud.lambda.ai",
    .label = "Lambda Cloud API instance-types",
    .spot_kind = CF_PRICE_LISTED,
    .fetch = fetch_lambda,
};
