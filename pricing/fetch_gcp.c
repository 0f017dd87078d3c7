/* GCP Cloud Billing Catalog API (needs an API key: CLOUDFIT_GCP_API_KEY).
 *
 *   {base}/v1/services?key=K                       find "Compute Engine"
 *   {base}/v1/services/{id}/skus?key=K&currencyCode=USD&pageSize=5000[&pageToken=T]
 *
 * GCP prices a VM by its parts: vCPU-hours and GiB-hours of RAM of the
 * machine family, plus each attached/bundled GPU. Kept SKUs:
 * category.resourceFamily "Compute", usageType OnDemand or Preemptible
 * (= spot); price = units + nanos/1e9 of the first tiered rate; regions
 * from serviceRegions. A catalog row is re-priced only when every part is
 * found: vcpus × core + memory_gib × ram + gpu_count × gpu. Families whose
 * price also bundles local SSD or has no per-part SKUs here (a2-ultragpu,
 * a3, a4, g4) keep their catalog price, and the update says so. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "price_source.h"

typedef enum { PART_CORE, PART_RAM, PART_GPU } part_kind;

typedef struct {
    part_kind kind;
    char key[32];        /* family ("n1", "a2") or GPU model ("T4") */
    char region[32];
    int preemptible;
    double usd_per_hr;   /* per vCPU, per GiB, or per GPU */
} part_rate;

typedef struct {
    part_rate *items;
    size_t n, cap;
} rate_table;

/* SKU description name of a GPU → catalog GPU model. */
static const char *const GPU_NAMES[][2] = {
    {"Nvidia Tesla T4", "T4"},     {"Nvidia Tesla V100", "V100"},   {"Nvidia Tesla P100", "P100"},
    {"Nvidia Tesla P4", "P4"},     {"Nvidia Tesla K80", "K80"},     {"Nvidia Tesla A100", "A100-40GB"},
    {"Nvidia A100 80GB", "A100-80GB"}, {"Nvidia L4", "L4"},         {"Nvidia H100 80GB", "H100"},
};

/* Machine families priced by parts, with their SKU description prefixes. */
static const char *const FAMILIES[][3] = {
    /* family, core SKU, ram SKU */
    {"n1", "N1 Predefined Instance Core", "N1 Predefined Instance Ram"},
    {"a2", "A2 Instance Core", "A2 Instance Ram"},
    {"g2", "G2 Instance Core", "G2 Instance Ram"},
};

static int starts_with(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

static int priced_by_parts(const char *instance_type, const char **family)
{
    if (starts_with(instance_type, "a2-ultragpu"))
        return 0; /* bundles local SSD */
    for (size_t i = 0; i < sizeof FAMILIES / sizeof *FAMILIES; i++) {
        size_t n = strlen(FAMILIES[i][0]);
        if (strncmp(instance_type, FAMILIES[i][0], n) == 0 && instance_type[n] == '-') {
            *family = FAMILIES[i][0];
            return 1;
        }
    }
    return 0;
}

/* Classifies a SKU description: a core, RAM or GPU part, and its key. */
static int classify(const char *description, part_kind *kind, const char **key)
{
    const char *d = description;
    if (starts_with(d, "Spot Preemptible "))
        d += strlen("Spot Preemptible ");
    else if (starts_with(d, "Preemptible "))
        d += strlen("Preemptible ");
    for (size_t i = 0; i < sizeof GPU_NAMES / sizeof *GPU_NAMES; i++) {
        size_t n = strlen(GPU_NAMES[i][0]);
        if (strncmp(d, GPU_NAMES[i][0], n) == 0 && strncmp(d + n, " GPU", 4) == 0) {
            *kind = PART_GPU;
            *key = GPU_NAMES[i][1];
            return 1;
        }
    }
    for (size_t i = 0; i < sizeof FAMILIES / sizeof *FAMILIES; i++) {
        if (starts_with(d, FAMILIES[i][1]) && d[strlen(FAMILIES[i][1])] == ' ') {
            *kind = PART_CORE;
            *key = FAMILIES[i][0];
            return 1;
        }
        if (starts_with(d, FAMILIES[i][2]) && d[strlen(FAMILIES[i][2])] == ' ') {
            *kind = PART_RAM;
            *key = FAMILIES[i][0];
            return 1;
        }
    }
    return 0;
}

static int wanted_region(const cf_fetch_ctx *ctx, const char *region)
{
    for (size_t i = 0; i < ctx->n_regions; i++)
        if (strcmp(ctx->regions[i], region) == 0)
            return 1;
    return 0;
}

static const char *str_of(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static cf_status add_rate(rate_table *t, const part_rate *r)
{
    for (size_t i = 0; i < t->n; i++) {
        part_rate *x = &t->items[i];
        if (x->kind == r->kind && x->preemptible == r->preemptible && strcmp(x->key, r->key) == 0 &&
            strcmp(x->region, r->region) == 0)
            return CF_OK; /* first SKU wins */
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        part_rate *grown = realloc(t->items, cap * sizeof *grown);
        if (!grown)
            return cf_error_set(CF_ERR_NOMEM, "out of memory");
        t->items = grown;
        t->cap = cap;
    }
    t->items[t->n++] = *r;
    return CF_OK;
}

static const part_rate *find_rate(const rate_table *t, part_kind kind, const char *key, const char *region,
                                  int preemptible)
{
    for (size_t i = 0; i < t->n; i++) {
        const part_rate *x = &t->items[i];
        if (x->kind == kind && x->preemptible == preemptible && strcmp(x->key, key) == 0 &&
            strcmp(x->region, region) == 0)
            return x;
    }
    return NULL;
}

static cf_status take_sku(const cf_fetch_ctx *ctx, const char *what, const cJSON *sku, rate_table *rates)
{
    const cJSON *category = cJSON_GetObjectItemCaseSensitive(sku, "category");
    const char *usage = str_of(category, "usageType");
    if (strcmp(str_of(category, "resourceFamily"), "Compute") != 0 ||
        (strcmp(usage, "OnDemand") != 0 && strcmp(usage, "Preemptible") != 0))
        return CF_OK;
    part_kind kind;
    const char *key = NULL;
    if (!classify(str_of(sku, "description"), &kind, &key))
        return CF_OK;
    const cJSON *info = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(sku, "pricingInfo"), 0);
    const cJSON *expr = cJSON_GetObjectItemCaseSensitive(info, "pricingExpression");
    const cJSON *rate0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(expr, "tieredRates"), 0);
    const cJSON *unit_price = cJSON_GetObjectItemCaseSensitive(rate0, "unitPrice");
    const cJSON *units = cJSON_GetObjectItemCaseSensitive(unit_price, "units");
    const cJSON *nanos = cJSON_GetObjectItemCaseSensitive(unit_price, "nanos");
    const char *unit = str_of(expr, "usageUnit");
    if (!cJSON_IsString(units) || (nanos && !cJSON_IsNumber(nanos)))
        return cf_error_set(CF_ERR_NETWORK, "%s: SKU '%s': unitPrice needs 'units' (a string) and numeric 'nanos'",
                            what, str_of(sku, "skuId"));
    char *end = NULL;
    double whole = strtod(units->valuestring, &end);
    if (end == units->valuestring || *end)
        return cf_error_set(CF_ERR_NETWORK, "%s: SKU '%s': units '%s' is not a number", what, str_of(sku, "skuId"),
                            units->valuestring);
    double price = whole + (nanos ? nanos->valuedouble / 1e9 : 0);
    /* Per hour (cores, GPUs) or per GiB-hour (RAM); anything else is not a
     * VM part we can add up. */
    if ((kind == PART_RAM && strcmp(unit, "GiBy.h") != 0) || (kind != PART_RAM && strcmp(unit, "h") != 0))
        return CF_OK;
    const cJSON *region;
    cJSON_ArrayForEach(region, cJSON_GetObjectItemCaseSensitive(sku, "serviceRegions"))
    {
        if (!cJSON_IsString(region) || !wanted_region(ctx, region->valuestring))
            continue;
        part_rate r = {.kind = kind, .preemptible = strcmp(usage, "Preemptible") == 0, .usd_per_hr = price};
        snprintf(r.key, sizeof r.key, "%s", key);
        snprintf(r.region, sizeof r.region, "%s", region->valuestring);
        cf_status st = add_rate(rates, &r);
        if (st != CF_OK)
            return st;
    }
    return CF_OK;
}

/* Lists every page of `first_url` (which already has a '?'), calling
 * take_sku for each element of `array_key`. Loops and runaway pagination
 * are errors. */
static cf_status list_skus(const cf_fetch_ctx *ctx, const char *first_url, rate_table *rates)
{
    char url[4096], token[512] = "", what[64];
    cf_status st = CF_OK;
    char (*seen)[512] = calloc((size_t)ctx->max_pages, sizeof *seen);
    if (!seen)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (int page = 0; st == CF_OK; page++) {
        if (page == ctx->max_pages) {
            st = cf_error_set(CF_ERR_NETWORK, "gcp: more than %d SKU pages; stopping rather than keeping a truncated "
                              "price list", ctx->max_pages);
            break;
        }
        snprintf(what, sizeof what, "gcp SKUs page %d", page + 1);
        if (page == 0)
            snprintf(url, sizeof url, "%s", first_url);
        else
            snprintf(url, sizeof url, "%s&pageToken=%s", first_url, token);
        cJSON *doc = NULL;
        if ((st = cf_fetch_json(ctx, url, what, &doc)) != CF_OK)
            break;
        const cJSON *skus = cJSON_GetObjectItemCaseSensitive(doc, "skus");
        if (!cJSON_IsArray(skus))
            st = cf_error_set(CF_ERR_NETWORK, "%s: response has no 'skus' array", what);
        const cJSON *sku;
        if (st == CF_OK) {
            cJSON_ArrayForEach(sku, skus)
            {
                if ((st = take_sku(ctx, what, sku, rates)) != CF_OK)
                    break;
            }
        }
        const char *next = str_of(doc, "nextPageToken");
        snprintf(token, sizeof token, "%s", next);
        cJSON_Delete(doc);
        if (st != CF_OK || !*token)
            break;
        for (int i = 0; i < page; i++)
            if (strcmp(seen[i], token) == 0)
                st = cf_error_set(CF_ERR_NETWORK, "gcp: pagination loop: page %d returns page token '%s' again",
                                  page + 1, token);
        snprintf(seen[page], sizeof seen[page], "%s", token);
    }
    free(seen);
    return st;
}

static cf_status find_compute_service(const cf_fetch_ctx *ctx, const char *key, char *service_id, size_t cap)
{
    char url[2048];
    snprintf(url, sizeof url, "%s/v1/services?key=%s", ctx->base_url, key);
    cJSON *doc = NULL;
    cf_status st = cf_fetch_json(ctx, url, "gcp services", &doc);
    if (st != CF_OK)
        return st;
    const cJSON *svc;
    service_id[0] = '\0';
    cJSON_ArrayForEach(svc, cJSON_GetObjectItemCaseSensitive(doc, "services"))
    {
        if (strcmp(str_of(svc, "displayName"), "Compute Engine") == 0)
            snprintf(service_id, cap, "%s", str_of(svc, "serviceId"));
    }
    cJSON_Delete(doc);
    if (!service_id[0])
        return cf_error_set(CF_ERR_NETWORK, "gcp services: no 'Compute Engine' service in the listing");
    return CF_OK;
}

/* Prices each catalog row of a part-priced family in the wanted regions. */
static cf_status compose(const cf_fetch_ctx *ctx, const rate_table *rates, cf_price_list *out)
{
    size_t skipped_families = 0;
    for (size_t i = 0; i < ctx->base->n_vms; i++) {
        const cf_vm *vm = &ctx->base->vms[i];
        if (strcmp(vm->cloud, "gcp") != 0 || !wanted_region(ctx, vm->region))
            continue;
        const char *family = NULL;
        if (!priced_by_parts(vm->instance_type, &family)) {
            skipped_families++;
            continue;
        }
        double price[2];
        int have[2];
        for (int pre = 0; pre < 2; pre++) {
            const part_rate *core = find_rate(rates, PART_CORE, family, vm->region, pre);
            const part_rate *ram = find_rate(rates, PART_RAM, family, vm->region, pre);
            const part_rate *gpu = find_rate(rates, PART_GPU, vm->gpu_model, vm->region, pre);
            have[pre] = core && ram && gpu;
            price[pre] = have[pre] ? vm->vcpus * core->usd_per_hr + vm->memory_gib * ram->usd_per_hr +
                                         vm->gpu_count * gpu->usd_per_hr
                                   : 0;
        }
        if (!have[0] && !have[1])
            continue;
        cf_price_quote *q = cf_fetch_quote_slot(out, "gcp", vm->region, vm->instance_type, vm->gpu_model,
                                                vm->gpu_count);
        if (!q)
            return CF_ERR_NOMEM;
        /* Round to micro-dollars: sums of nano-priced parts carry float noise. */
        q->has_ondemand = have[0];
        q->price_ondemand_usd_per_hr = round(price[0] * 1e6) / 1e6;
        q->has_spot = have[1];
        q->price_spot_usd_per_hr = round(price[1] * 1e6) / 1e6;
    }
    if (skipped_families)
        cf_buf_printf(ctx->notes, "gcp: %zu rows of a2-ultragpu/a3/a4/g4 machines keep their previous price "
                      "(bundled local SSD or GPU pricing not composed from SKUs here)\n", skipped_families);
    return CF_OK;
}

static cf_status fetch_gcp(const cf_fetch_ctx *ctx, cf_price_list *out)
{
    const char *key = getenv("CLOUDFIT_GCP_API_KEY");
    if (!key || !*key) {
        cf_error_set(CF_ERR_UNAVAILABLE, "gcp: no API key: the Cloud Billing Catalog API needs one");
        cf_error_hint("set CLOUDFIT_GCP_API_KEY to a Google Cloud API key with the Cloud Billing API enabled");
        return CF_ERR_UNAVAILABLE;
    }
    for (const char *p = key; *p; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' ||
              *p == '_'))
            return cf_error_set(CF_ERR_USAGE, "gcp: CLOUDFIT_GCP_API_KEY contains characters an API key never has");
    char service_id[64];
    cf_status st = find_compute_service(ctx, key, service_id, sizeof service_id);
    if (st != CF_OK)
        return st;
    char url[2048];
    snprintf(url, sizeof url, "%s/v1/services/%s/skus?key=%s&currencyCode=USD&pageSize=5000", ctx->base_url,
             service_id, key);
    rate_table rates = {0};
    st = list_skus(ctx, url, &rates);
    if (st == CF_OK)
        st = compose(ctx, &rates, out);
    free(rates.items);
    return st;
}

const cf_price_source cf_price_source_gcp = {
    .cloud = "gcp",
    .url_env = "CLOUDFIT_GCP_BILLING_URL",
    .default_url = "https://cloudbilling.googleapis.com",
    .label = "GCP Cloud Billing Catalog API",
    .spot_kind = CF_PRICE_LISTED,
    .fetch = fetch_gcp,
};
