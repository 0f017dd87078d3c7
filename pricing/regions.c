/* Regions: which ones need an access request, and in which order equal
 * prices are broken (docs/pricing.md, "Regions").
 *
 * Restricted regions: Azure's regions marked "access restricted to support
 * specific customer scenarios, such as disaster recovery" in the Azure
 * regions list (MicrosoftDocs/reliability-docs,
 * articles/reliability/regions-list.md, ms.date 2025-09-23; access is
 * requested through a support request, "Azure region access request
 * process"). No other cloud of the catalog documents regions that need a
 * request: AWS opt-in regions (af-south-1, ap-east-1, me-south-1, ...) are
 * enabled by the account owner in the console, without asking anyone.
 *
 * Default order: each cloud's regions by geography (North America, Europe,
 * Asia-Pacific, the rest), within one by the number of distinct GPU
 * machine types the embedded catalog offers there (data/gpu_vms.csv,
 * 2026-11), equal counts in the order written here (Lambda offers every
 * type in each of its five regions). A region missing from the list comes
 * after every listed one. */
#include "cloudfit/pricing/regions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_internal.h"

static const struct {
    const char *cloud, *region;
} RESTRICTED[] = {
    {"azure", "australiacentral2"}, {"azure", "brazilsoutheast"}, {"azure", "francesouth"},
    {"azure", "germanynorth"},      {"azure", "norwaywest"},      {"azure", "southafricawest"},
    {"azure", "swedensouth"},       {"azure", "switzerlandwest"}, {"azure", "uaecentral"},
};

static const char *const DEFAULT_AWS[] = {
    "us-east-1", "us-east-2", "us-west-2", "ca-central-1", "us-west-1", "eu-central-1", "eu-north-1",
    "eu-west-2", "eu-west-1", "eu-south-2", "eu-west-3", "eu-south-1", "ap-northeast-1", "ap-northeast-2",
    "ap-southeast-2", "ap-south-1", "ap-east-1", "ap-southeast-1", "ap-southeast-3", "ap-northeast-3",
    "me-central-1", "af-south-1", "me-south-1",
    NULL,
};
static const char *const DEFAULT_GCP[] = {
    "us-central1", "us-west1", "us-east4", "us-east1", "us-west4", "northamerica-northeast1", "us-east5",
    "northamerica-northeast2", "us-west3", "us-west2", "us-south1", "europe-west4", "europe-west1",
    "europe-west3", "europe-west2", "europe-west6", "europe-north1", "europe-west9", "europe-central2",
    "europe-west8", "asia-southeast1", "asia-east1", "asia-northeast1", "asia-northeast3", "asia-south1",
    "australia-southeast1", "asia-south2", "asia-east2", "asia-southeast2", "me-central2", "me-west1",
    "southamerica-east1",
    NULL,
};
static const char *const DEFAULT_AZURE[] = {
    "southcentralus", "eastus2", "westus2", "eastus", "westus", "centralus", "westus3", "canadacentral",
    "northcentralus", "mexicocentral", "westcentralus", "canadaeast", "westeurope", "uksouth", "northeurope",
    "francecentral", "swedencentral", "switzerlandnorth", "germanywestcentral", "polandcentral", "italynorth",
    "spaincentral", "norwayeast", "norwaywest", "ukwest", "germanynorth", "switzerlandwest", "australiaeast",
    "japaneast", "southeastasia", "centralindia", "koreacentral", "jioindiawest", "malaysiawest",
    "jioindiacentral", "eastasia", "japanwest", "koreasouth", "indonesiacentral", "southindia",
    "australiacentral", "australiacentral2", "australiasoutheast", "brazilsouth", "uaenorth", "israelcentral",
    "southafricanorth", "qatarcentral", "southafricawest", "uaecentral",
    NULL,
};
static const char *const DEFAULT_LAMBDA[] = {
    "us-east-1", "us-west-1", "us-south-1", "europe-central-1", "asia-northeast-1",
    NULL,
};

static const struct {
    const char *cloud;
    const char *const *regions;
} DEFAULTS[] = {
    {"aws", DEFAULT_AWS}, {"gcp", DEFAULT_GCP}, {"azure", DEFAULT_AZURE}, {"lambda", DEFAULT_LAMBDA},
};

const char *cf_region_restriction(const char *cloud, const char *region)
{
    for (size_t i = 0; i < sizeof RESTRICTED / sizeof *RESTRICTED; i++)
        if (strcmp(RESTRICTED[i].cloud, cloud) == 0 && strcmp(RESTRICTED[i].region, region) == 0)
            return "Azure restricted-access region: request access through an Azure support request (Azure region "
                   "access request process)";
    return NULL;
}

int cf_vm_availability(const cf_vm *vm, char *out, size_t cap)
{
    /* GCP and AWS rows are joined to availability tables (docs/catalog.md);
     * Azure and Lambda publish none. */
    int table = strcmp(vm->cloud, "gcp") == 0 || strcmp(vm->cloud, "aws") == 0;
    size_t zones = cf_count_words(vm->zones);
    int n;
    if (table && zones)
        n = snprintf(out, cap, "availability: launchable in %zu zone%s (%s) per the availability table; capacity on "
                     "the day is not known", zones, zones == 1 ? "" : "s", vm->zones);
    else if (strcmp(vm->cloud, "lambda") == 0)
        n = snprintf(out, cap, "availability not known for lambda/%s %s: capacity varies (Lambda publishes no "
                     "availability table)", vm->region, vm->instance_type);
    else if (strcmp(vm->cloud, "azure") == 0)
        n = snprintf(out, cap, "availability not known for azure/%s %s: the Retail Prices API lists prices, not "
                     "capacity or quota", vm->region, vm->instance_type);
    else
        n = snprintf(out, cap, "availability not known for %s/%s %s: no availability table", vm->cloud, vm->region,
                     vm->instance_type);
    const char *restricted = cf_region_restriction(vm->cloud, vm->region);
    if (restricted && n >= 0 && (size_t)n < cap)
        snprintf(out + n, cap - (size_t)n, "; the region needs an access request (%s)", restricted);
    return table && zones;
}

enum { NOT_LISTED = 1 << 20 };

int cf_region_rank(const char *cloud, const char *region, const char *const *preferred, size_t n_preferred)
{
    for (size_t i = 0; i < n_preferred; i++)
        if (preferred[i] && strcmp(preferred[i], region) == 0)
            return (int)i;
    for (size_t c = 0; c < sizeof DEFAULTS / sizeof *DEFAULTS; c++) {
        if (strcmp(DEFAULTS[c].cloud, cloud) != 0)
            continue;
        for (int i = 0; DEFAULTS[c].regions[i]; i++)
            if (strcmp(DEFAULTS[c].regions[i], region) == 0)
                return (int)n_preferred + i;
    }
    return NOT_LISTED;
}

typedef struct {
    const cf_vm *vm;
    size_t group;      /* first position of the row's offer (cloud, type, GPU, count) */
    int rank;
    size_t index;      /* position before ordering: keeps the sort stable */
} ranked_row;

static int offer_cmp(const cf_vm *x, const cf_vm *y)
{
    int c = strcmp(x->cloud, y->cloud);
    if (!c) c = strcmp(x->instance_type, y->instance_type);
    if (!c) c = strcmp(x->gpu_model, y->gpu_model);
    return c ? c : (x->gpu_count > y->gpu_count) - (x->gpu_count < y->gpu_count);
}

static int by_offer(const void *a, const void *b)
{
    const ranked_row *x = a, *y = b;
    int c = offer_cmp(x->vm, y->vm);
    return c ? c : (x->index > y->index) - (x->index < y->index);
}

static int by_group_rank(const void *a, const void *b)
{
    const ranked_row *x = a, *y = b;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

cf_status cf_rows_order_by_region(const cf_vm **rows, size_t n, const char *const *preferred, size_t n_preferred)
{
    ranked_row *r = malloc((n ? n : 1) * sizeof *r);
    if (!r)
        return cf_error_set(CF_ERR_NOMEM, "out of memory ordering offers");
    for (size_t i = 0; i < n; i++)
        r[i] = (ranked_row){rows[i], 0, cf_region_rank(rows[i]->cloud, rows[i]->region, preferred, n_preferred), i};
    /* Each offer's rows stay where the offer first appears (the search
     * reads the catalog offer by offer); inside an offer, the preferred
     * region first. */
    qsort(r, n, sizeof *r, by_offer);
    for (size_t i = 0; i < n; i++)
        r[i].group = i > 0 && offer_cmp(r[i - 1].vm, r[i].vm) == 0 ? r[i - 1].group : r[i].index;
    qsort(r, n, sizeof *r, by_group_rank);
    for (size_t i = 0; i < n; i++)
        rows[i] = r[i].vm;
    free(r);
    return CF_OK;
}
