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
 * 2026-11), equal counts in the order chosen when the list was written
 * (Lambda offers every type in each of its five regions: us-east-1,
 * us-west-1, us-south-1). A region missing from the list comes after every
 * listed one. */
#include "cloudfit/pricing/regions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_internal.h"

/* Every region the lists know, sorted by (cloud, region) for bsearch:
 * its place in the cloud's default order (-1: not in it) and whether it
 * needs an access request. The default order of a cloud is its regions by
 * `rank`; docs/pricing.md prints it. */
typedef struct {
    const char *cloud, *region;
    int rank;
    int restricted;
} region_info;

static const region_info REGIONS[] = {
    {"aws", "af-south-1", 21, 0},
    {"aws", "ap-east-1", 16, 0},
    {"aws", "ap-northeast-1", 12, 0},
    {"aws", "ap-northeast-2", 13, 0},
    {"aws", "ap-northeast-3", 19, 0},
    {"aws", "ap-south-1", 15, 0},
    {"aws", "ap-southeast-1", 17, 0},
    {"aws", "ap-southeast-2", 14, 0},
    {"aws", "ap-southeast-3", 18, 0},
    {"aws", "ca-central-1", 3, 0},
    {"aws", "eu-central-1", 5, 0},
    {"aws", "eu-north-1", 6, 0},
    {"aws", "eu-south-1", 11, 0},
    {"aws", "eu-south-2", 9, 0},
    {"aws", "eu-west-1", 8, 0},
    {"aws", "eu-west-2", 7, 0},
    {"aws", "eu-west-3", 10, 0},
    {"aws", "me-central-1", 20, 0},
    {"aws", "me-south-1", 22, 0},
    {"aws", "us-east-1", 0, 0},
    {"aws", "us-east-2", 1, 0},
    {"aws", "us-west-1", 4, 0},
    {"aws", "us-west-2", 2, 0},
    {"azure", "australiacentral", 40, 0},
    {"azure", "australiacentral2", 41, 1},
    {"azure", "australiaeast", 27, 0},
    {"azure", "australiasoutheast", 42, 0},
    {"azure", "brazilsouth", 43, 0},
    {"azure", "brazilsoutheast", -1, 1},
    {"azure", "canadacentral", 7, 0},
    {"azure", "canadaeast", 11, 0},
    {"azure", "centralindia", 30, 0},
    {"azure", "centralus", 5, 0},
    {"azure", "eastasia", 35, 0},
    {"azure", "eastus", 3, 0},
    {"azure", "eastus2", 1, 0},
    {"azure", "francecentral", 15, 0},
    {"azure", "francesouth", -1, 1},
    {"azure", "germanynorth", 25, 1},
    {"azure", "germanywestcentral", 18, 0},
    {"azure", "indonesiacentral", 38, 0},
    {"azure", "israelcentral", 45, 0},
    {"azure", "italynorth", 20, 0},
    {"azure", "japaneast", 28, 0},
    {"azure", "japanwest", 36, 0},
    {"azure", "jioindiacentral", 34, 0},
    {"azure", "jioindiawest", 32, 0},
    {"azure", "koreacentral", 31, 0},
    {"azure", "koreasouth", 37, 0},
    {"azure", "malaysiawest", 33, 0},
    {"azure", "mexicocentral", 9, 0},
    {"azure", "northcentralus", 8, 0},
    {"azure", "northeurope", 14, 0},
    {"azure", "norwayeast", 22, 0},
    {"azure", "norwaywest", 23, 1},
    {"azure", "polandcentral", 19, 0},
    {"azure", "qatarcentral", 47, 0},
    {"azure", "southafricanorth", 46, 0},
    {"azure", "southafricawest", 48, 1},
    {"azure", "southcentralus", 0, 0},
    {"azure", "southeastasia", 29, 0},
    {"azure", "southindia", 39, 0},
    {"azure", "spaincentral", 21, 0},
    {"azure", "swedencentral", 16, 0},
    {"azure", "swedensouth", -1, 1},
    {"azure", "switzerlandnorth", 17, 0},
    {"azure", "switzerlandwest", 26, 1},
    {"azure", "uaecentral", 49, 1},
    {"azure", "uaenorth", 44, 0},
    {"azure", "uksouth", 13, 0},
    {"azure", "ukwest", 24, 0},
    {"azure", "westcentralus", 10, 0},
    {"azure", "westeurope", 12, 0},
    {"azure", "westus", 4, 0},
    {"azure", "westus2", 2, 0},
    {"azure", "westus3", 6, 0},
    {"gcp", "asia-east1", 21, 0},
    {"gcp", "asia-east2", 27, 0},
    {"gcp", "asia-northeast1", 22, 0},
    {"gcp", "asia-northeast3", 23, 0},
    {"gcp", "asia-south1", 24, 0},
    {"gcp", "asia-south2", 26, 0},
    {"gcp", "asia-southeast1", 20, 0},
    {"gcp", "asia-southeast2", 28, 0},
    {"gcp", "australia-southeast1", 25, 0},
    {"gcp", "europe-central2", 18, 0},
    {"gcp", "europe-north1", 16, 0},
    {"gcp", "europe-west1", 12, 0},
    {"gcp", "europe-west2", 14, 0},
    {"gcp", "europe-west3", 13, 0},
    {"gcp", "europe-west4", 11, 0},
    {"gcp", "europe-west6", 15, 0},
    {"gcp", "europe-west8", 19, 0},
    {"gcp", "europe-west9", 17, 0},
    {"gcp", "me-central2", 29, 0},
    {"gcp", "me-west1", 30, 0},
    {"gcp", "northamerica-northeast1", 5, 0},
    {"gcp", "northamerica-northeast2", 7, 0},
    {"gcp", "southamerica-east1", 31, 0},
    {"gcp", "us-central1", 0, 0},
    {"gcp", "us-east1", 3, 0},
    {"gcp", "us-east4", 2, 0},
    {"gcp", "us-east5", 6, 0},
    {"gcp", "us-south1", 10, 0},
    {"gcp", "us-west1", 1, 0},
    {"gcp", "us-west2", 9, 0},
    {"gcp", "us-west3", 8, 0},
    {"gcp", "us-west4", 4, 0},
    {"lambda", "asia-northeast-1", 4, 0},
    {"lambda", "europe-central-1", 3, 0},
    {"lambda", "us-east-1", 0, 0},
    {"lambda", "us-south-1", 2, 0},
    {"lambda", "us-west-1", 1, 0},
};

static int region_info_cmp(const void *key, const void *item)
{
    const region_info *k = key, *x = item;
    int c = strcmp(k->cloud, x->cloud);
    return c ? c : strcmp(k->region, x->region);
}

static const region_info *find_region(const char *cloud, const char *region)
{
    region_info key = {cloud, region, 0, 0};
    return bsearch(&key, REGIONS, sizeof REGIONS / sizeof *REGIONS, sizeof *REGIONS, region_info_cmp);
}

const char *cf_region_restriction(const char *cloud, const char *region)
{
    const region_info *r = find_region(cloud, region);
    return r && r->restricted ? "Azure restricted-access region: request access through an Azure support request "
                                "(Azure region access request process)"
                              : NULL;
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
    const region_info *r = find_region(cloud, region);
    return r && r->rank >= 0 ? (int)n_preferred + r->rank : NOT_LISTED;
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

static const cf_vm *const *head_rows; /* the rows of the run-head sort in progress */

static int by_head_offer(const void *a, const void *b)
{
    return offer_cmp(head_rows[*(const size_t *)a], head_rows[*(const size_t *)b]);
}

static void rank_sort_run(ranked_row *r, size_t n)
{
    for (size_t i = 1; i < n; i++) { /* insertion sort: runs are short (a few dozen regions) */
        ranked_row x = r[i];
        size_t j = i;
        while (j > 0 && by_group_rank(&r[j - 1], &x) > 0) {
            r[j] = r[j - 1];
            j--;
        }
        r[j] = x;
    }
}

/* The rows of one offer are almost always adjacent (a catalog lists an
 * offer's regions one after another): then each run is put in rank order
 * in place. Only when an offer's rows are split into several runs are all
 * rows regrouped, offer by offer, by two sorts. */
cf_status cf_rows_order_by_region(const cf_vm **rows, size_t n, const char *const *preferred, size_t n_preferred)
{
    ranked_row *r = malloc((n ? n : 1) * sizeof *r);
    size_t *heads = malloc((n ? n : 1) * sizeof *heads);
    if (!r || !heads) {
        free(r);
        free(heads);
        return cf_error_set(CF_ERR_NOMEM, "out of memory ordering offers");
    }
    size_t n_heads = 0;
    for (size_t i = 0; i < n; i++) {
        r[i] = (ranked_row){rows[i], 0, cf_region_rank(rows[i]->cloud, rows[i]->region, preferred, n_preferred), i};
        if (i == 0 || offer_cmp(rows[i - 1], rows[i]) != 0)
            heads[n_heads++] = i;
    }
    /* Is every offer one run? Sort the runs' first rows by offer: no two
     * may be equal. */
    head_rows = rows;
    qsort(heads, n_heads, sizeof *heads, by_head_offer);
    int grouped = 1;
    for (size_t i = 1; i < n_heads && grouped; i++)
        grouped = offer_cmp(rows[heads[i - 1]], rows[heads[i]]) != 0;
    if (grouped) {
        for (size_t start = 0; start < n;) {
            size_t end = start + 1;
            while (end < n && offer_cmp(r[start].vm, r[end].vm) == 0)
                end++;
            rank_sort_run(r + start, end - start);
            start = end;
        }
    } else {
        /* Each offer's rows go where the offer first appears (the search
         * reads the catalog offer by offer); inside an offer, the
         * preferred region first. */
        qsort(r, n, sizeof *r, by_offer);
        for (size_t i = 0; i < n; i++)
            r[i].group = i > 0 && offer_cmp(r[i - 1].vm, r[i].vm) == 0 ? r[i - 1].group : r[i].index;
        qsort(r, n, sizeof *r, by_group_rank);
    }
    for (size_t i = 0; i < n; i++)
        rows[i] = r[i].vm;
    free(r);
    free(heads);
    return CF_OK;
}
