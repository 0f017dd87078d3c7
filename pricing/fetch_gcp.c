/* GCP Cloud Billing Catalog API (needs an API key: CLOUDFIT_GCP_API_KEY).
 *
 *   {base}/v1/services?key=K[&pageToken=T]         find "Compute Engine" (every page)
 *   {base}/v1/services/{id}/skus?key=K&currencyCode=USD&pageSize=5000[&pageToken=T]
 *
 * GCP bills a VM by its parts: vCPU-hours and GiB-hours of RAM of the
 * machine series, each attached or bundled GPU, and the Local SSD some
 * accelerator-optimized types bundle (billed per GiB-month; 730 hours a
 * month, as Google's calculator counts). Kept SKUs: category.resourceFamily
 * "Compute" (the Local SSD SKU: "Storage"), usageType OnDemand or
 * Preemptible (= spot); price = units + nanos/1e9 of the first tiered
 * rate; regions from serviceRegions.
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
 * there (noted), so the SKU list's order can never decide a price. A SKU
 * that quotes zero (or less) is not a price: its part is not priced in the
 * SKU's regions, and the warning names the SKU.
 *
 * A catalog row is re-priced only when every part of its machine type is
 * found (MACHINES below); machine types of no known composition keep their
 * catalog price, and the update says how many rows that is. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "price_source.h"
#include "cloudfit/common/number.h"
#include "cloudfit/common/shared_types.h"
#include "cloudfit/pricing/types.h"
#include "cloudfit/status.h"

typedef enum { PART_CORE, PART_RAM, PART_GPU, PART_SSD } part_kind;

typedef struct {
    part_kind kind;
    char key[32];        /* series ("n1", "a2"), GPU part ("T4", "H100-MEGA") or "local-ssd" */
    char region[CF_REGION_NAME_MAX];
    int preemptible;
    double usd_per_hr;   /* per vCPU, per GiB, per GPU; Local SSD: per GiB-hour */
    int ambiguous;       /* two list-price SKUs disagree: not used */
    int rejected;        /* a SKU quoted no positive price: not used */
} part_rate;

typedef struct {
    part_rate *items;
    size_t n, cap;
    size_t not_list_price;   /* SKUs of our parts that are not list prices (DWS, flex, commitments ...) */
    char not_list_example[160];
} rate_table;

/* GPU SKU description names → the GPU part they price. The names are the
 * real SKUs' (Cyclenerd/google-cloud-pricing-cost-calculator
 * build/mapping.csv; SkyPilot's sky/catalog/data_fetchers/fetch_gcp.py for
 * H100 Mega's other spellings, H200 and B200). A4's B200 SKU is priced per
 * "gpu slice": one GPU's share of the whole machine (SkyPilot's fetcher: A4
 * has no core or RAM SKUs). */
static const char *const GPU_NAMES[][2] = {
    {"Nvidia Tesla T4 GPU", "T4"},
    {"Nvidia Tesla V100 GPU", "V100"},
    {"Nvidia Tesla P100 GPU", "P100"},
    {"Nvidia Tesla P4 GPU", "P4"},
    {"Nvidia Tesla K80 GPU", "K80"},
    {"Nvidia Tesla A100 GPU", "A100-40GB"},
    {"Nvidia Tesla A100 80GB GPU", "A100-80GB"},
    {"Nvidia L4 GPU", "L4"},
    {"Nvidia H100 80GB GPU", "H100"},
    {"Nvidia H100 80GB Mega GPU", "H100-MEGA"},
    {"Nvidia H100 Mega 80GB GPU", "H100-MEGA"},
    {"Nvidia H100 80GB Plus GPU", "H100-MEGA"},
    {"Nvidia H200 141GB GPU", "H200"},
    {"Nvidia B200 (1 gpu slice)", "B200"},
};

/* Machine series priced by cores and RAM, with their SKU names. */
static const char *const SERIES[][3] = {
    /* series, core SKU, ram SKU */
    {"n1", "N1 Predefined Instance Core", "N1 Predefined Instance Ram"},
    {"a2", "A2 Instance Core", "A2 Instance Ram"},
    {"a3", "A3 Instance Core", "A3 Instance Ram"},
    {"g2", "G2 Instance Core", "G2 Instance Ram"},
};

static const char LOCAL_SSD[] = "SSD backed Local Storage";
enum { HOURS_PER_MONTH = 730 }; /* Google's pricing calculator's month */

/* How each machine type the catalog offers is billed: cores and RAM of a
 * series (NULL: none, the GPU SKU carries the machine), its GPUs (NULL:
 * the GPU attached to an N1 host, the row's model), and the Local SSD it
 * bundles per GPU. Sources: docs/pricing.md ("GCP machine types"). */
typedef struct {
    const char *prefix;
    const char *series;
    const char *gpu_part;
    int local_ssd_gib_per_gpu;
} machine_parts;

static const machine_parts MACHINES[] = {
    {"n1-", "n1", NULL, 0},
    {"g2-standard-", "g2", "L4", 0},
    {"a2-highgpu-", "a2", "A100-40GB", 0},
    {"a2-megagpu-", "a2", "A100-40GB", 0},
    {"a2-ultragpu-", "a2", "A100-80GB", 375},
    {"a3-highgpu-", "a3", "H100", 750},
    {"a3-megagpu-", "a3", "H100-MEGA", 750},
    {"a3-ultragpu-", "a3", "H200", 0},
    {"a4-highgpu-", NULL, "B200", 0},
};

static int starts_with(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

static const machine_parts *parts_of(const char *instance_type)
{
    for (size_t i = 0; i < sizeof MACHINES / sizeof *MACHINES; i++)
        if (starts_with(instance_type, MACHINES[i].prefix))
            return &MACHINES[i];
    return NULL;
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
        if (strncmp(d, GPU_NAMES[i][0], n) == 0 && (d[n] == ' ' || d[n] == '\0')) {
            *kind = PART_GPU;
            *key = GPU_NAMES[i][1];
            tail = d + n;
        }
    }
    for (size_t i = 0; i < sizeof SERIES / sizeof *SERIES && !tail; i++) {
        for (int part = 1; part <= 2 && !tail; part++) {
            size_t n = strlen(SERIES[i][part]);
            if (strncmp(d, SERIES[i][part], n) == 0 && (d[n] == ' ' || d[n] == '\0')) {
                *kind = part == 1 ? PART_CORE : PART_RAM;
                *key = SERIES[i][0];
                tail = d + n;
            }
        }
    }
    if (!tail && starts_with(d, LOCAL_SSD) && (d[strlen(LOCAL_SSD)] == ' ' || d[strlen(LOCAL_SSD)] == '\0')) {
        *kind = PART_SSD;
        *key = "local-ssd";
        tail = d + strlen(LOCAL_SSD);
    }
    if (!tail) {
        /* "Commitment v1: Nvidia Tesla A100 GPU ...", "DWS ... A2 Instance Core": ours, but not list prices. */
        for (size_t i = 0; i < sizeof GPU_NAMES / sizeof *GPU_NAMES; i++)
            if (strstr(description, GPU_NAMES[i][0]))
                return -1;
        for (size_t i = 0; i < sizeof SERIES / sizeof *SERIES; i++)
            if (strstr(description, SERIES[i][1]) || strstr(description, SERIES[i][2]))
                return -1;
        return 0;
    }
    for (size_t i = 0; i < sizeof NOT_LIST_PRICE / sizeof *NOT_LIST_PRICE; i++)
        if (strstr(description, NOT_LIST_PRICE[i]))
            return -1;
    return plain_tail(tail, prefix, preemptible) ? 1 : -1;
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
            x->rejected |= r->rejected;
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
            return x->ambiguous || x->rejected ? NULL : x;
    }
    return NULL;
}

static cf_status take_sku(const cf_fetch_ctx *ctx, const char *what, const cJSON *sku, rate_table *rates)
{
    const cJSON *category = cJSON_GetObjectItemCaseSensitive(sku, "category");
    const char *usage = str_of(category, "usageType");
    const char *family = str_of(category, "resourceFamily");
    if ((strcmp(family, "Compute") != 0 && strcmp(family, "Storage") != 0) ||
        (strcmp(usage, "OnDemand") != 0 && strcmp(usage, "Preemptible") != 0))
        return CF_OK;
    part_kind kind;
    const char *key = NULL;
    int preemptible = 0;
    const char *description = str_of(sku, "description");
    int meaning = classify(description, &kind, &key, &preemptible);
    /* Local SSD is the one Storage SKU a machine bundles. */
    if (meaning == 0 || (strcmp(family, "Storage") == 0) != (meaning > 0 && kind == PART_SSD))
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
    double whole = 0;
    cf_number_result parsed = cf_number_double(units->valuestring, 0, HUGE_VAL, &whole);
    if (parsed != CF_NUMBER_OK)
        return cf_error_set(CF_ERR_NETWORK, "%s: SKU '%s': units '%s' is not a price (%s)", what, str_of(sku, "skuId"),
                            units->valuestring, cf_number_why(parsed));
    double price = whole + (nanos ? nanos->valuedouble / 1e9 : 0);
    /* Per hour (cores, GPUs), per GiB-hour (RAM) or per GiB-month (Local
     * SSD); anything else is not a VM part we can add up. */
    static const char *const UNIT[] = {[PART_CORE] = "h", [PART_RAM] = "GiBy.h", [PART_GPU] = "h",
                                       [PART_SSD] = "GiBy.mo"};
    if (strcmp(unit, UNIT[kind]) != 0)
        return CF_OK;
    if (kind == PART_SSD)
        price /= HOURS_PER_MONTH;
    /* Zero is not a price: a machine priced without that part would look
     * cheap (an N1 + T4 at its host's price). The part is not priced in
     * the SKU's regions; its rows keep their previous price. */
    int rejected = !(price > 0);
    cf_buf regions = CF_BUF_INIT;
    const cJSON *region;
    cJSON_ArrayForEach(region, cJSON_GetObjectItemCaseSensitive(sku, "serviceRegions"))
    {
        if (!cJSON_IsString(region) || !cf_fetch_wants_region(ctx, region->valuestring))
            continue;
        part_rate r = {.kind = kind, .preemptible = preemptible, .usd_per_hr = price, .rejected = rejected};
        snprintf(r.key, sizeof r.key, "%s", key);
        snprintf(r.region, sizeof r.region, "%s", region->valuestring);
        cf_status st = add_rate(rates, &r);
        if (st != CF_OK) {
            cf_buf_free(&regions);
            return st;
        }
        cf_buf_printf(&regions, "%s%s", regions.len ? ", " : "", region->valuestring);
    }
    if (rejected && regions.len)
        cf_buf_printf(ctx->notes, "gcp: SKU %s '%s' quotes %g $/%s: not a price; %s %s are not re-priced in %s (their "
                      "rows keep their previous price)\n", str_of(sku, "skuId"), description, whole +
                      (nanos ? nanos->valuedouble / 1e9 : 0), unit, key, kind == PART_GPU ? "GPUs" : "parts",
                      cf_buf_cstr(&regions));
    cf_buf_free(&regions);
    return CF_OK;
}

/* One element of a listed array (a SKU, a service). */
typedef cf_status (*item_fn)(const cf_fetch_ctx *ctx, const char *what, const cJSON *item, void *data);

/* Lists every page of `first_url` (which already has a '?'), following
 * nextPageToken, calling `take` for each element of `array_key`. Loops and
 * runaway pagination are errors: a truncated listing is never used. */
static cf_status list_pages(const cf_fetch_ctx *ctx, const char *first_url, const char *listing,
                            const char *array_key, item_fn take, void *data)
{
    char url[4096], token[512] = "", what[64];
    cf_status st = CF_OK;
    char (*seen)[512] = calloc((size_t)ctx->max_pages, sizeof *seen);
    if (!seen)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (int page = 0; st == CF_OK; page++) {
        if (page == ctx->max_pages) {
            st = cf_error_set(CF_ERR_NETWORK, "gcp: more than %d %s pages; stopping rather than keeping a truncated "
                              "price list", ctx->max_pages, listing);
            break;
        }
        snprintf(what, sizeof what, "gcp %s page %d", listing, page + 1);
        if (page == 0)
            snprintf(url, sizeof url, "%s", first_url);
        else {
            cf_buf encoded = CF_BUF_INIT;
            cf_url_encode_value(token, &encoded);
            snprintf(url, sizeof url, "%s&pageToken=%s", first_url, cf_buf_cstr(&encoded));
            cf_buf_free(&encoded);
        }
        cJSON *doc = NULL;
        if ((st = cf_fetch_json(ctx, url, what, &doc)) != CF_OK)
            break;
        const cJSON *items = cJSON_GetObjectItemCaseSensitive(doc, array_key);
        if (!cJSON_IsArray(items))
            st = cf_error_set(CF_ERR_NETWORK, "%s: response has no '%s' array", what, array_key);
        const cJSON *item;
        if (st == CF_OK) {
            cJSON_ArrayForEach(item, items)
            {
                if ((st = take(ctx, what, item, data)) != CF_OK)
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
                st = cf_error_set(CF_ERR_NETWORK, "gcp: pagination loop: %s page %d returns page token '%s' again",
                                  listing, page + 1, token);
        snprintf(seen[page], sizeof seen[page], "%s", token);
    }
    free(seen);
    return st;
}

static cf_status take_sku_item(const cf_fetch_ctx *ctx, const char *what, const cJSON *sku, void *rates)
{
    return take_sku(ctx, what, sku, rates);
}

static cf_status take_service(const cf_fetch_ctx *ctx, const char *what, const cJSON *svc, void *service_id)
{
    (void)ctx;
    (void)what;
    if (strcmp(str_of(svc, "displayName"), "Compute Engine") == 0)
        snprintf(service_id, 64, "%s", str_of(svc, "serviceId"));
    return CF_OK;
}

/* The Compute Engine service, from every page of the services listing. */
static cf_status find_compute_service(const cf_fetch_ctx *ctx, const char *key, char service_id[64])
{
    char url[2048];
    snprintf(url, sizeof url, "%s/v1/services?key=%s", ctx->base_url, key);
    service_id[0] = '\0';
    cf_status st = list_pages(ctx, url, "services", "services", take_service, service_id);
    if (st == CF_OK && !service_id[0])
        st = cf_error_set(CF_ERR_NETWORK, "gcp services: no 'Compute Engine' service in the listing");
    return st;
}

/* The price of one catalog row from its parts (spot: the preemptible
 * rates); 0 when a part has no usable rate there. */
static double row_price(const rate_table *rates, const machine_parts *mp, const cf_vm *vm, int spot)
{
    double usd = 0;
    if (mp->series) {
        const part_rate *core = find_rate(rates, PART_CORE, mp->series, vm->region, spot);
        const part_rate *ram = find_rate(rates, PART_RAM, mp->series, vm->region, spot);
        if (!core || !ram)
            return 0;
        usd += vm->vcpus * core->usd_per_hr + vm->memory_gib * ram->usd_per_hr;
    }
    const part_rate *gpu = find_rate(rates, PART_GPU, mp->gpu_part ? mp->gpu_part : vm->gpu_model, vm->region, spot);
    if (!gpu)
        return 0;
    usd += vm->gpu_count * gpu->usd_per_hr;
    if (mp->local_ssd_gib_per_gpu) {
        const part_rate *ssd = find_rate(rates, PART_SSD, "local-ssd", vm->region, spot);
        if (!ssd)
            return 0;
        usd += (double)vm->gpu_count * mp->local_ssd_gib_per_gpu * ssd->usd_per_hr;
    }
    /* Round to micro-dollars: sums of nano-priced parts carry float noise. */
    return round(usd * 1e6) / 1e6;
}

/* Prices each catalog row of a machine type of known parts in the wanted
 * regions. A machine offered as spot or flex-start only (no on-demand
 * price in the catalog) gets no on-demand quote. */
static cf_status compose(const cf_fetch_ctx *ctx, const rate_table *rates, cf_price_list *out)
{
    size_t unknown = 0;
    char unknown_example[CF_INSTANCE_TYPE_MAX] = "";
    for (size_t i = 0; i < ctx->base->n_vms; i++) {
        const cf_vm *vm = &ctx->base->vms[i];
        if (strcmp(vm->cloud, "gcp") != 0 || !cf_fetch_wants_region(ctx, vm->region))
            continue;
        const machine_parts *mp = parts_of(vm->instance_type);
        if (!mp) {
            if (!unknown++)
                snprintf(unknown_example, sizeof unknown_example, "%s", vm->instance_type);
            continue;
        }
        double ondemand = vm->price_ondemand_usd_per_hr > 0 ? row_price(rates, mp, vm, 0) : 0;
        double spot = row_price(rates, mp, vm, 1);
        if (ondemand <= 0 && spot <= 0)
            continue;
        cf_price_quote *q = cf_fetch_quote_slot(out, "gcp", vm->region, vm->instance_type, vm->gpu_model,
                                                vm->gpu_count);
        if (!q)
            return CF_ERR_NOMEM;
        q->has_ondemand = ondemand > 0;
        q->price_ondemand_usd_per_hr = ondemand;
        q->has_spot = spot > 0;
        q->price_spot_usd_per_hr = spot;
    }
    if (unknown)
        cf_buf_printf(ctx->notes, "gcp: %zu rows of machine types whose parts are not known here (e.g. %s) keep their "
                      "previous price\n", unknown, unknown_example);
    return CF_OK;
}

static cf_status fetch_gcp(const cf_fetch_ctx *ctx, cf_price_list *out)
{
    const char *key;
    cf_status st = cf_fetch_api_key("gcp", "CLOUDFIT_GCP_API_KEY", "Cloud Billing Catalog API",
                                    "a Google Cloud API key with the Cloud Billing API enabled", "-_", &key);
    if (st != CF_OK)
        return st;
    char service_id[64];
    st = find_compute_service(ctx, key, service_id);
    if (st != CF_OK)
        return st;
    char url[2048];
    cf_buf id = CF_BUF_INIT; /* from the answer: a path segment, encoded */
    cf_url_encode_value(service_id, &id);
    snprintf(url, sizeof url, "%s/v1/services/%s/skus?key=%s&currencyCode=USD&pageSize=5000", ctx->base_url,
             cf_buf_cstr(&id), key);
    cf_buf_free(&id);
    rate_table rates = {0};
    st = list_pages(ctx, url, "SKUs", "skus", take_sku_item, &rates);
    if (st == CF_OK && rates.not_list_price)
        cf_buf_printf(ctx->notes, "gcp: ignored %zu SKU%s for priced parts that %s (e.g. '%s')\n",
                      rates.not_list_price, rates.not_list_price == 1 ? "" : "s",
                      rates.not_list_price == 1 ? "is not a list price" : "are not list prices",
                      rates.not_list_example);
    static const char *const PART_NAME[] = {[PART_CORE] = "cores", [PART_RAM] = "RAM", [PART_GPU] = "GPUs",
                                            [PART_SSD] = "Local SSD"};
    for (size_t i = 0; st == CF_OK && i < rates.n; i++)
        if (rates.items[i].ambiguous)
            cf_buf_printf(ctx->notes, "gcp %s: several %s list prices for %s %s; not re-priced there\n",
                          rates.items[i].region, rates.items[i].preemptible ? "spot" : "on-demand", rates.items[i].key,
                          PART_NAME[rates.items[i].kind]);
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
