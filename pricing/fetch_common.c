/* Helpers shared by the price sources. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "price_source.h"

#include "cloudfit/common/json.h"

/* Responses larger than this are refused: the paginated JSON APIs send at
 * most a few MB per page. The AWS offer file is streamed instead. */
enum { MAX_JSON_BYTES = 64u << 20 };

cf_status cf_price_list_add(cf_price_list *list, const cf_price_quote *quote)
{
    if (list->n == list->cap) {
        size_t cap = list->cap ? list->cap * 2 : 64;
        cf_price_quote *grown = realloc(list->items, cap * sizeof *grown);
        if (!grown)
            return cf_error_set(CF_ERR_NOMEM, "out of memory collecting prices");
        list->items = grown;
        list->cap = cap;
    }
    list->items[list->n++] = *quote;
    return CF_OK;
}

void cf_price_list_free(cf_price_list *list)
{
    free(list->items);
    memset(list, 0, sizeof *list);
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int cf_fetch_knows_type(const cf_fetch_ctx *ctx, const char *instance_type)
{
    return instance_type &&
           bsearch(&instance_type, ctx->known_types, ctx->n_known_types, sizeof *ctx->known_types, str_cmp) != NULL;
}

cf_status cf_fetch_json(const cf_fetch_ctx *ctx, const char *url, const char *what, cJSON **out)
{
    *out = NULL;
    cf_buf body = CF_BUF_INIT;
    cf_status st = cf_http_get_buf(ctx->http, url, what, MAX_JSON_BYTES, &body);
    if (st != CF_OK) {
        cf_buf_free(&body);
        return st;
    }
    const char *text = body.data;
    /* The AWS spot feed also comes as JSONP: callback({...}); */
    const char *open = strchr(text, '(');
    if (strncmp(text, "callback(", 9) == 0 && open) {
        char *close = strrchr(body.data, ')');
        if (close)
            *close = '\0';
        text = open + 1;
    }
    if (cf_json_read(text, strlen(text), "response", out) != CF_OK) {
        char why[300], shown[2048];
        snprintf(why, sizeof why, "%s", cf_error_message());
        cf_http_redact(url, shown, sizeof shown);
        /* called truncated only when it ends early: a price of 1e400 was "truncated or corrupt" */
        st = cf_error_set(CF_ERR_NETWORK, "%s: the response from %s is not valid JSON (%zu bytes; %s)%s", what, shown,
                          body.len, why, strstr(why, "end of input") ? ": truncated" : "");
        cf_error_hint("nothing from this response was used; run the update again later");
    }
    cf_buf_free(&body);
    return st;
}

cf_price_quote *cf_fetch_quote_slot(cf_price_list *list, const char *cloud, const char *region, const char *type,
                                    const char *gpu_model, int gpu_count)
{
    for (size_t i = list->n; i-- > 0;) {
        cf_price_quote *q = &list->items[i];
        if (strcmp(q->region, region) == 0 && strcmp(q->instance_type, type) == 0 &&
            strcmp(q->gpu_model, gpu_model) == 0 && q->gpu_count == gpu_count)
            return q;
    }
    cf_price_quote q;
    memset(&q, 0, sizeof q);
    snprintf(q.cloud, sizeof q.cloud, "%s", cloud);
    snprintf(q.region, sizeof q.region, "%s", region);
    snprintf(q.instance_type, sizeof q.instance_type, "%s", type);
    snprintf(q.gpu_model, sizeof q.gpu_model, "%s", gpu_model);
    q.gpu_count = gpu_count;
    if (cf_price_list_add(list, &q) != CF_OK)
        return NULL;
    return &list->items[list->n - 1];
}

int cf_fetch_check_price(cf_price_list *seen, cf_price_list *conflicts, const char *region, const char *type,
                         double usd)
{
    cf_price_quote *q = cf_fetch_quote_slot(seen, "", region, type, "", 0);
    if (!q)
        return -1;
    if (!q->has_ondemand) {
        q->has_ondemand = 1;
        q->price_ondemand_usd_per_hr = usd;
    } else if (q->price_ondemand_usd_per_hr != usd) {
        cf_price_quote *c = cf_fetch_quote_slot(conflicts, "", region, type, "", 0);
        if (!c)
            return -1;
        if (!c->has_ondemand) {
            c->has_ondemand = c->has_spot = 1;
            c->price_ondemand_usd_per_hr = q->price_ondemand_usd_per_hr;
            c->price_spot_usd_per_hr = usd;
        }
    }
    for (size_t i = 0; i < conflicts->n; i++)
        if (strcmp(conflicts->items[i].region, region) == 0 && strcmp(conflicts->items[i].instance_type, type) == 0)
            return 1;
    return 0;
}

void cf_fetch_drop_conflicts(cf_price_list *out, size_t from, const cf_price_list *conflicts, int spot)
{
    for (size_t c = 0; c < conflicts->n; c++) {
        const cf_price_quote *x = &conflicts->items[c];
        for (size_t k = from; k < out->n;) {
            cf_price_quote *q = &out->items[k];
            if (strcmp(q->instance_type, x->instance_type) != 0 || (x->region[0] && strcmp(q->region, x->region) != 0)) {
                k++;
                continue;
            }
            if (spot) {
                q->has_spot = 0;
                q->price_spot_usd_per_hr = 0;
                q->spot_date[0] = '\0';
            } else {
                q->has_ondemand = 0;
                q->price_ondemand_usd_per_hr = 0;
            }
            if (!q->has_ondemand && !q->has_spot)
                out->items[k] = out->items[--out->n]; /* k now holds the last one: look at it again */
            else
                k++;
        }
    }
}

int cf_fetch_wants_region(const cf_fetch_ctx *ctx, const char *region)
{
    for (size_t i = 0; i < ctx->n_regions; i++)
        if (strcmp(ctx->regions[i], region) == 0)
            return 1;
    return 0;
}

cf_status cf_fetch_api_key(const char *cloud, const char *env, const char *api, const char *hint,
                           const char *punctuation, const char **out)
{
    const char *key = getenv(env);
    *out = NULL;
    if (!key || !*key) {
        cf_error_set(CF_ERR_UNAVAILABLE, "%s: no API key: the %s needs one", cloud, api);
        cf_error_hint("set %s to %s", env, hint);
        return CF_ERR_UNAVAILABLE;
    }
    for (const char *p = key; *p; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
              strchr(punctuation, *p)))
            return cf_error_set(CF_ERR_USAGE, "%s: %s contains characters an API key never has", cloud, env);
    *out = key;
    return CF_OK;
}
