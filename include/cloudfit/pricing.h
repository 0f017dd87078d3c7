/* The pricing module's front door (pricing/catalog*.c): the VM price
 * catalog and the GPU table (docs/catalog.md); offers (cf_vm) and GPUs
 * (cf_gpu) are the plain structs of cloudfit/pricing/types.h.
 *
 * The default catalog is compiled into the binary from data/gpu_vms.csv,
 * data/gpus.csv and data/aws_spot_advisor.csv, so it works offline. */
#ifndef CLOUDFIT_PRICING_H
#define CLOUDFIT_PRICING_H
#include <stddef.h>
#include "cloudfit/status.h"
#include "cloudfit/pricing/types.h"
#include "cloudfit/spec/types.h"

typedef struct {
    cf_vm *vms;
    size_t n_vms;
    cf_gpu *gpus;
    size_t n_gpus;
    char **sources;                     /* distinct provenance strings of rows */
    size_t n_sources;
    char name[64];                      /* "embedded" or a snapshot name */
    char data_date[16];                 /* newest date of the data, YYYY-MM-DD */
    char oldest_date[16];               /* oldest date of the data, YYYY-MM-DD */
    size_t n_undated_prices;            /* listed/observed prices whose source records no date */
    char advisor_date[16];              /* date of the Spot Advisor data behind estimates; "" = none */
    size_t n_not_launchable;            /* snapshot rows left out: not offered where they can be launched */
} cf_catalog;

typedef struct {
    const char *const *clouds;   size_t n_clouds;    /* empty = all */
    const char *const *regions;  size_t n_regions;   /* empty = all */
    const char *const *gpus;     size_t n_gpus;      /* empty = all; case-insensitive */
    cf_spot_policy spot;         /* only: rows without a spot price are dropped; never: rows without an on-demand price */
    int include_restricted;      /* 0: rows in regions that need an access request (pricing/regions.h) are
                                  * dropped unless `regions` names them; 1: kept */
} cf_catalog_filter;

/* "listed", "observed", "estimated", "none". */
const char *cf_price_kind_name(cf_price_kind kind);
/* Where one price of `vm` (spot = 0: on-demand, 1: spot) comes from, for
 * people: "listed, 2026-07-30", "observed, lowest of 3 zones, date not
 * recorded", "estimated: on-demand × (1 − 62% AWS Spot Advisor savings of
 * 2025-06-28)". */
void cf_vm_price_origin(const cf_vm *vm, int spot, char *out, size_t cap);
/* The provenance text of one price of `vm` (spot = 0: on-demand, 1:
 * spot): the row's source, or for a spot price refreshed or kept apart
 * from the on-demand price, its own ("unknown" when out of range). */
const char *cf_vm_price_source(const cf_catalog *catalog, const cf_vm *vm, int spot);
/* Where the spot interruption rate of `vm` comes from: "AWS Spot Advisor
 * band 10-15% (2025-06-28)", or "" when the catalog has none (then the
 * advisor module's default applies and the caller says so). `catalog` may
 * be NULL (the advisor's date is then left out). */
void cf_vm_interruptions_origin(const cf_catalog *catalog, const cf_vm *vm, char *out, size_t cap);

/* Loads the catalog compiled into the binary. */
cf_status cf_catalog_load_embedded(cf_catalog *out);
/* Loads catalog CSV texts (columns as data/gpu_vms.csv, data/gpus.csv,
 * data/aws_spot_advisor.csv; spot_csv may be NULL). Names are for messages. */
cf_status cf_catalog_load_csv(const char *vms_csv, size_t vms_len, const char *vms_name,
                              const char *gpus_csv, size_t gpus_len, const char *gpus_name,
                              const char *spot_csv, size_t spot_len, const char *spot_name,
                              cf_catalog *out);
void cf_catalog_free(cf_catalog *catalog);

/* GPU table look-up by model name (case-insensitive); NULL when unknown. */
const cf_gpu *cf_catalog_gpu(const cf_catalog *catalog, const char *model);
/* cf_gpu_resolve (cloudfit/pricing/types.h) over the catalog's GPU table. */
const cf_gpu *cf_catalog_gpu_resolve(const cf_catalog *catalog, const char *name);
/* The GPU model a word of a GPU filter stands for (recommend's and
 * search's --gpu, search.gpus, a configuration file's "gpu"; docs/catalog.md
 * "GPU names in filters"): a model of the GPU table, or a word naming a
 * family of several rows ("a100", "NVIDIA A100": cf_gpu_family_rows), as
 * written, so a family is never narrowed to its first row; else the model
 * of the one row cf_gpu_resolve reads in a tool's spelling ("Tesla T4" →
 * "T4", "NVIDIA H100 80GB HBM3" → "H100"); else the word itself, which
 * names no row.
 * Points into the catalog or at `word`. */
const char *cf_catalog_gpu_filter_model(const cf_catalog *catalog, const char *word);
/* Whether an offer of the catalog has this GPU model (case-insensitive): the
 * table also holds GPUs no offer sells (data/gpus_added.csv). */
int cf_catalog_sells_gpu(const cf_catalog *catalog, const char *model);

/* A filter over the search section of a spec (clouds, regions, GPUs, spot
 * policy), with the pointer arrays it needs. `spot` overrides c->spot. */
typedef struct {
    const char *clouds[CF_SPEC_MAX_LIST];
    const char *regions[CF_SPEC_MAX_LIST];
    const char *gpus[CF_SPEC_MAX_GPUS];
    cf_catalog_filter filter;
} cf_catalog_filter_storage;
void cf_catalog_filter_from(const cf_constraints *c, cf_spot_policy spot, cf_catalog_filter_storage *out);

/* Fills out[] (capacity catalog->n_vms) with the rows that pass the filter,
 * in catalog order; returns the count (out NULL: only counts). */
size_t cf_catalog_filter_rows(const cf_catalog *catalog, const cf_catalog_filter *filter,
                              const cf_vm **out);
/* The rows that would pass the filter but for being in a region that
 * needs an access request (0 when the filter includes such regions). */
size_t cf_catalog_filter_restricted(const cf_catalog *catalog, const cf_catalog_filter *filter);
/* For a filter whose values each pass cf_catalog_check_filter but leave
 * no row together (Lambda sells no spot VM; no H200 on Lambda): sets
 * CF_ERR_INFEASIBLE naming the filters, with a hint saying how many
 * offers each one dropped alone would leave; returns CF_ERR_INFEASIBLE. */
cf_status cf_catalog_explain_empty(const cf_catalog *catalog, const cf_catalog_filter *filter);
/* The same, with the option that turns "spot only" off as the command
 * spells it ("--spot allow" for recommend, "--spot" for prices, whose
 * --spot is a switch): "115 offers without --spot". */
cf_status cf_catalog_explain_empty_as(const cf_catalog *catalog, const cf_catalog_filter *filter,
                                      const char *spot_label);
/* The lists of `filter` that `vm` does not pass, as bits 1 << CF_FILTER_*
 * (CF_FILTER_CLOUDS, _REGIONS, _GPUS, _SPOT: the spot policy, which
 * cf_catalog_filter_rows applies as a price the VM must have); 0 when it
 * passes them all. The region restriction is not checked. */
unsigned cf_catalog_filter_misses(const cf_catalog *catalog, const cf_catalog_filter *filter, const cf_vm *vm);
/* Checks filter values against the catalog: an unknown cloud or GPU name is
 * CF_ERR_INVALID with a hint listing the known ones. */
cf_status cf_catalog_check_filter(const cf_catalog *catalog, const cf_catalog_filter *filter);
/* Which of a filter's lists a failed check is about, so that the caller
 * can name its source (e.g. the spec's search.gpus) without reading the
 * message. */
typedef enum {
    CF_FILTER_OK = 0,
    CF_FILTER_SPOT,     /* the spot policy */
    CF_FILTER_CLOUDS,
    CF_FILTER_GPUS,
    CF_FILTER_REGIONS
} cf_filter_field;
/* cf_catalog_check_filter, and *failed says which list failed (CF_FILTER_OK
 * when none did). */
cf_status cf_catalog_check_filter_field(const cf_catalog *catalog, const cf_catalog_filter *filter,
                                        cf_filter_field *failed);

#endif
