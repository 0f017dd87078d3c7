/* GCP Cloud Billing Catalog API (needs an API key: CLOUDFIT_GCP_API_KEY).
 *
 *   {base}/v1/services?key=K                       find "Compute Engine"
 *   {base}/v1/services/{id}/skus?key=K&currencyCode=USD&pageSize=5000[&pageToken=T]
 *
 * GCP prices a VM by its parts: vCPU-hours and GiB-hours of RAM of the
 * machine family, plus each attached/bundled GPU. Kept SKUs:
 * category.resourceFamily "Compute", usageType OnDemand or Preemptible
 * (= spot); price = units + nanos/1e9 of the first tiered rate; regions
 * from serviceRegions.
 *
 * SKUs are chosen by meaning, never by order: a part's list price is the
 * SKU whose description is the part name and a location only ("Nvidia
 * Tesla A100 GPU running in Americas"); spot adds only the preemptible
 * wording ("Spot Preemptible ... running in", "... attached to Spot
 * Preemptible VMs running in"). Any other qualifier — "attached to DWS
 * Defined Duration VMs", flex-start, commitments, reservations, calendar
 * mode, sole tenancy — is a discounted or different product, not the list
 * price, and is ignored (counted in the notes). When two SKUs that pass
 * still disagree for the same part and region, that part is not priced
 * there (noted), so the SKU list's order can never decide a price.
 *
 * A catalog row is re-priced only when every part is
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
    int ambiguous;       /* two list-price SKUs disagree: not used */
} part_rate;

typedef struct {
    part_rate *items;
    size_t n, cap;
    size_t not_list_price;   /* SKUs of our parts that are not list prices (DWS, flex, commitments ...) */
    char not_list_example[160];
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

/* Words that make a SKU something other than the list price of a part. */
static const char *const NOT_LIST_PRICE[] = {
    "DWS", "Defined Duration", "Flex", "Commit", "Reserv", "Calendar", "Sole Tenan", "Custom", "Extended",
};

/* What follows the part name in a list-price SKU: a location, or for spot
 * the preemptible wording and a location. */
static int plain_tail(const char *tail, int preemptible_prefix, int *preemptible)
{
    static const char *const attached[] = {" attached to Spot Preemptible VMs", " attached to Preemptible VMs"};
    *preemptible = preemptible_prefix;
    for (size_t i = 0; i < 2 && !preemptible_prefix; i++)
        if (starts_with(tail, attached[i])) {
            tail += strlen(attached[i]);
            *preemptible = 1;
        }
    return *tail == '\0' || starts_with(tail, " running in ") || starts_with(tail, " in ");
}

/* Classifies a SKU description: a core, RAM or GPU part, its key, and
 * whether it is the on-demand (0) or spot (1) list price of the part.
 * Returns 0 when it is not one of our parts, -1 when it is one of our parts
 * but not a list price. */
static int classify(const char *description, part_kind *kind, const char **key, int *preemptible)
{
    const char *d = description;
    int prefix = 0;
    if (starts_with(d, "Spot Preemptible "))
        d += strlen("Spot Preemptible "), prefix = 1;
    else if (starts_with(d, "Preemptible "))
        d += strlen("Preemptible "), prefix = 1;
    const char *tail = NULL;
    for (size_t i = 0; i < sizeof GPU_NAMES / sizeof *GPU_NAMES && !tail; i++) {
        size_t n = strlen(GPU_NAMES[i][0]);
        if (strncmp(d, GPU_NAMES[i][0], n) == 0 && strncmp(d + n, " GPU", 4) == 0) {
            *kind = PART_GPU;
            *key = GPU_NAMES[i][1];
            tail = d + n + 4;
        }
    }
    for (size_t i = 0; i < sizeof FAMILIES / sizeof *FAMILIES && !tail; i++) {
        for (int part = 1; part <= 2 && !tail; part++) {
            size_t n = strlen(FAMILIES[i][part]);
            if (strncmp(d, FAMILIES[i][part], n) == 0 && (d[n] == ' ' || d[n] == '\0')) {
                *kind = part == 1 ? PART_CORE : PART_RAM;
                *key = FAMILIES[i][0];
                tail = d + n;
            }
        }
    }
    if (!tail) {
        /* "Commitment v1: Nvidia Tesla A100 GPU ...", "DWS ... A2 Instance Core": ours, but not list prices. */
        for (size_t i = 0; i < sizeof GPU_NAMES / sizeof *GPU_NAMES; i++)
            if (strstr(description, GPU_NAMES[i][0]))
                return -1;
        for (size_t i = 0; i < sizeof FAMILIES / sizeof *FAMILIES; i++)
            if (strstr(description, FAMILIES[i][1]) || strstr(description, FAMILIES[i][2]))
                return -1;
        return 0;
    }
    for (size_t i = 0; i < sizeof NOT_LIST_PRICE / sizeof *NOT_LIST_PRICE; i++)
        if (strstr(description, NOT_LIST_PRICE[i]))
            return -1;
    return plain_tail(tail, prefix, preemptible) ? 1 : -1;
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
            strcmp(x->region, r->region) == 0) {
            x->ambiguous |= x->usd_per_hr != r->usd_per_hr;
            return CF_OK;
        }
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

/* The list price of a part in a region; NULL when none or ambiguous. */
static const part_rate *find_rate(const rate_table *t, part_kind kind, const char *key, const char *region,
                                  int preemptible)
{
    for (size_t i = 0; i < t->n; i++) {
        const part_rate *x = &t->items[i];
        if (x->kind == kind && x->preemptible == preemptible && strcmp(x->key, key) == 0 &&
            strcmp(x->region, region) == 0)
            return x->ambiguous ? NULL : x;
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
    int preemptible = 0;
    const char *description = str_of(sku, "description");
    int meaning = classify(description, &kind, &key, &preemptible);
    if (meaning == 0)
        return CF_OK;
    if (meaning < 0 || preemptible != (strcmp(usage, "Preemptible") == 0)) {
        if (!rates->not_list_price++)
            snprintf(rates->not_list_example, sizeof rates->not_list_example, "%s", description);
        return CF_OK;
    }
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
        part_rate r = {.kind = kind, .preemptible = preemptible, .usd_per_hr = price};
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
    if (st == CF_OK && rates.not_list_price)
        cf_buf_printf(ctx->notes, "gcp: ignored %zu SKU%s for priced parts that %s (e.g. '%s')\n",
                      rates.not_list_price, rates.not_list_price == 1 ? "" : "s",
                      rates.not_list_price == 1 ? "is not a list price" : "are not list prices",
                      rates.not_list_example);
    for (size_t i = 0; st == CF_OK && i < rates.n; i++)
        if (rates.items[i].ambiguous)
            cf_buf_printf(ctx->notes, "gcp %s: several %s list prices for %s %s; not re-priced there\n",
                          rates.items[i].region, rates.items[i].preemptible ? "spot" : "on-demand", rates.items[i].key,
                          rates.items[i].kind == PART_GPU ? "GPUs" : rates.items[i].kind == PART_CORE ? "cores" : "RAM");
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
