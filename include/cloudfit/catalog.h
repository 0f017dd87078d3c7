/* The VM price catalog and the GPU table (DESIGN.md §5).
 *
 * The default catalog is compiled into the binary from data/gpu_vms.csv,
 * data/gpus.csv and data/aws_spot_advisor.csv, so it works offline. */
#ifndef CLOUDFIT_CATALOG_H
#define CLOUDFIT_CATALOG_H
#include <stddef.h>
#include "cloudfit/status.h"
#include "cloudfit/types.h"

/* Where a price comes from (DESIGN.md §5): every price carries its kind
 * and date, and the output says which one it used. */
typedef enum {
    CF_PRICE_NONE = 0,   /* no such price (not offered, or not known) */
    CF_PRICE_LISTED,     /* a published price list or API (on-demand; GCP/Azure spot) */
    CF_PRICE_OBSERVED,   /* a market price seen (AWS spot: lowest over the region's zones) */
    CF_PRICE_ESTIMATED,  /* derived: AWS on-demand × (1 − Spot Advisor savings) */
} cf_price_kind;

typedef struct {
    char cloud[8];                      /* aws | gcp | azure | lambda */
    char region[32];
    char instance_type[48];
    char gpu_model[32];                 /* key into the GPU table */
    int gpu_count;                      /* GPUs per VM (whole GPUs; fractional sizes are not in the catalog) */
    double gpu_memory_gib;              /* per GPU */
    int vcpus;
    double memory_gib;
    double network_gbps;                /* 0 = not recorded */
    double price_ondemand_usd_per_hr;   /* whole VM; 0 = not offered on demand (spot / flex-start only) */
    double price_spot_usd_per_hr;       /* whole VM; 0 = no spot offer known */
    int spot_price_estimated;           /* 1 when spot_kind is CF_PRICE_ESTIMATED */
    double interruptions_pct_per_month; /* spot interruption frequency; < 0 = unknown (the advisor's default applies) */
    int source_index;                   /* index into cf_catalog.sources */
    /* Provenance of each price and where the offer can be launched. */
    cf_price_kind ondemand_kind, spot_kind;          /* CF_PRICE_NONE exactly when the price is 0 */
    char ondemand_date[11], spot_date[11];           /* YYYY-MM-DD of the price; "" = not recorded */
    double spot_savings_pct;            /* estimated spot: the advisor savings % it used */
    int interruption_band;              /* AWS Spot Advisor band 0..4 behind the rate; -1 = none */
    char zones[128];                    /* space-separated zones it can be launched in; "" = not recorded */
} cf_vm;

typedef struct {
    char model[32];
    char architecture[32];
    double memory_gib;
    double memory_bandwidth_gbs;        /* GB/s */
    double fp32_tflops;                 /* 0 = not known */
    double tf32_tflops;                 /* dense tensor; 0 = none */
    double fp16_tflops;                 /* dense tensor (or packed FP16); 0 = none */
    double bf16_tflops;                 /* dense tensor; 0 = none */
    char interconnect[64];              /* intra-node: "PCIe", "NVLink 3.0 ..." */
    double interconnect_gbs_per_gpu;    /* GB/s per GPU, nominal */
} cf_gpu;

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
} cf_catalog_filter;

/* "listed", "observed", "estimated", "none". */
const char *cf_price_kind_name(cf_price_kind kind);
/* Where one price of `vm` (spot = 0: on-demand, 1: spot) comes from, for
 * people: "listed, 2026-07-30", "observed, lowest of 3 zones, date not
 * recorded", "estimated: on-demand × (1 − 62% AWS Spot Advisor savings of
 * 2025-06-28)". */
void cf_vm_price_origin(const cf_vm *vm, int spot, char *out, size_t cap);
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
/* The GPU a name from outside the catalog means (a measurements CSV,
 * nvidia-smi): exact match first, then ignoring case, separators and a
 * leading "NVIDIA ", "Tesla ", "AMD " or "Quadro ", then the family —
 * "A100" is the table's first A100 variant — then the entry whose words
 * are the name's up to words that do not tell products apart (vendor,
 * SXM form factor, HBM generation, a memory size the entry does not name):
 * "NVIDIA A100-SXM4-80GB" is A100-80GB, "Tesla V100-SXM2-16GB" is V100;
 * "A100-40GB-PCIE", "RTX6000-Ada" and "H200-NVL" are not in the table and
 * give NULL. */
const cf_gpu *cf_catalog_gpu_resolve(const cf_catalog *catalog, const char *name);
/* Peak dense TFLOP/s for a precision, falling back to FP32 when the GPU has
 * no tensor rate for it. 0 when unknown. */
double cf_gpu_peak_tflops(const cf_gpu *gpu, cf_precision precision);

/* Fills out[] (capacity catalog->n_vms) with the rows that pass the filter,
 * in catalog order; returns the count. */
size_t cf_catalog_filter_rows(const cf_catalog *catalog, const cf_catalog_filter *filter,
                              const cf_vm **out);
/* Checks filter values against the catalog: an unknown cloud or GPU name is
 * CF_ERR_INVALID with a hint listing the known ones. */
cf_status cf_catalog_check_filter(const cf_catalog *catalog, const cf_catalog_filter *filter);

#endif
