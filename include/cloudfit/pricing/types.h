/* Offers and GPUs (docs/architecture.md): the catalog's rows as pricing/
 * fills them and every module reads them. Any module may include this
 * header (the layout rule for `<module>/types.h`); the GPU look-ups are in
 * common/types.c and common/gpu_resolve.c, the ground every module links. */
#ifndef CLOUDFIT_PRICING_TYPES_H
#define CLOUDFIT_PRICING_TYPES_H
#include <stddef.h>
#include "cloudfit/common/shared_types.h"

/* Where a price comes from (docs/catalog.md): every price carries its kind
 * and date, and the output says which one it used. */
typedef enum {
    CF_PRICE_NONE = 0,   /* no such price (not offered, or not known) */
    CF_PRICE_LISTED,     /* a published price list or API (on-demand; GCP/Azure spot) */
    CF_PRICE_OBSERVED,   /* a market price seen (AWS spot: lowest over the region's zones) */
    CF_PRICE_ESTIMATED,  /* derived: AWS on-demand × (1 − Spot Advisor savings) */
    CF_PRICE_GIVEN,      /* the user's own (a --price-overrides instance rule): no catalog date, never stored */
} cf_price_kind;

/* One VM offer: an instance type in a region at a price. */
typedef struct {
    char cloud[CF_CLOUD_NAME_MAX];      /* aws | gcp | azure | lambda */
    char region[CF_REGION_NAME_MAX];
    char instance_type[CF_INSTANCE_TYPE_MAX];
    char gpu_model[CF_GPU_NAME_MAX];    /* key into the GPU table */
    int gpu_count;                      /* GPUs per VM (whole GPUs; fractional sizes are not in the catalog) */
    double gpu_memory_gib;              /* per GPU */
    int vcpus;
    double memory_gib;
    double network_gbps;                /* 0 = not recorded */
    double price_ondemand_usd_per_hr;   /* whole VM; 0 = not offered on demand (spot / flex-start only) */
    double price_spot_usd_per_hr;       /* whole VM; 0 = no spot offer known */
    int spot_price_estimated;           /* 1 when spot_kind is CF_PRICE_ESTIMATED */
    double interruptions_pct_per_month; /* spot interruption frequency; < 0 = unknown (the advisor's default applies) */
    int source_index;                   /* index into the catalog's sources */
    /* Provenance of each price and where the offer can be launched. */
    cf_price_kind ondemand_kind, spot_kind;          /* CF_PRICE_NONE exactly when the price is 0 */
    char ondemand_date[CF_DATE_MAX], spot_date[CF_DATE_MAX]; /* YYYY-MM-DD of the price; "" = not recorded */
    double spot_savings_pct;            /* estimated spot: the advisor savings % it used */
    int interruption_band;              /* AWS Spot Advisor band 0..4 behind the rate; -1 = none */
    char zones[128];                    /* space-separated zones it can be launched in; "" = not recorded */
    int spot_regional;                  /* observed spot: one price for the whole region (the AWS spot feed), not
                                         * the lowest of the zones' prices */
    int has_spot_source;                /* the spot price comes from another source than the row ... */
    int spot_source_index;              /* ... this one (index into the catalog's sources) */
} cf_vm;

/* One GPU model of the GPU table. */
typedef struct {
    char model[CF_GPU_NAME_MAX];
    char architecture[32];
    char form_factor[64];               /* "SXM5", "PCIe workstation (Quadro RTX 6000)"; "" = not recorded */
    char memory_type[16];               /* "HBM3", "GDDR6"; "" = not recorded */
    double memory_gib;
    double memory_bandwidth_gbs;        /* GB/s */
    double fp32_tflops;                 /* 0 = not known */
    double tf32_tflops;                 /* dense tensor; 0 = none */
    double fp16_tflops;                 /* dense tensor (or packed FP16); 0 = none */
    double bf16_tflops;                 /* dense tensor; 0 = none */
    char interconnect[64];              /* intra-node: "PCIe", "NVLink 3.0 ..." */
    double interconnect_gbs_per_gpu;    /* GB/s per GPU, nominal */
} cf_gpu;

/* Peak dense TFLOP/s for a precision, falling back to FP32 when the GPU has
 * no tensor rate for it. 0 when unknown or gpu is NULL. */
double cf_gpu_peak_tflops(const cf_gpu *gpu, cf_precision precision);
/* The GPU named `model` (case-insensitive), or NULL. */
const cf_gpu *cf_gpu_find(const cf_gpu *gpus, size_t n_gpus, const char *model);
/* The GPU a name from outside the table means: what nvidia-smi,
 * torch.cuda.get_device_name(), rocm-smi/amd-smi or a measurements CSV
 * print ("NVIDIA H100 80GB HBM3", "Tesla V100-SXM2-32GB", "QuadroRTX6000",
 * "AMD Instinct MI300X OAM", "a100 40gb"); NULL when the table has no row
 * for that product. Rules, in order (common/gpu_resolve.c; docs/catalog.md
 * lists the spellings):
 *   1. a model of the table, ignoring case;
 *   2. NULL for a spelling the driver gives another product whose words
 *      match a row ("NVIDIA H100" is the 94 GB H100 SXM5);
 *   3. the row all of whose words are in the name (separators and case
 *      ignored, "RTX 6000" is the word RTX6000) while every other word of
 *      the name only describes that row: a maker or product line (NVIDIA,
 *      AMD, Tesla, Quadro, GeForce, Instinct, GRID, also glued on:
 *      "QuadroRTX6000"; another word below glued in front of a model
 *      word counts as apart: "rtxa6000" is RTX A6000), its memory size
 *      ("80GB", "144G"), memory type,
 *      architecture or a word of its form factor ("SXM4", "PCIe", "OAM",
 *      "Server Edition"), a word the driver adds to it ("480GB" of the
 *      GH200's LPDDR5X), or a vGPU profile of its whole memory ("24Q" of
 *      "NVIDIA A10-24Q") when no other row is of its family (vGPU names
 *      tell boards apart by letters: "H100-80C" is the H100 PCIe). The
 *      row with most words wins;
 *   4. a bare family name is the table's first row of that family ("A100"
 *      is A100-40GB, "V100S" is V100S-PCIE).
 * So "Tesla V100-SXM2-32GB" is V100-32GB, never V100; "NVIDIA H100 PCIe"
 * is H100-PCIE; "NVIDIA RTX 6000 Ada Generation", "NVIDIA H200 NVL",
 * "NVIDIA A100-PCIE-40GB" and "NVIDIA GH200 144G HBM3e" give NULL, and so
 * does a name holding a control character or a byte that is not UTF-8
 * ("T\xff4", "T4\x01": never skipped as a separator). */
const cf_gpu *cf_gpu_resolve(const cf_gpu *gpus, size_t n_gpus, const char *name);
/* The GPU model a name stands for where it is compared with the catalog's
 * models (a GPU filter's word, a trace row's gpu column, a --price name):
 * the name itself when it is a model of the table or a bare family name of
 * several rows ("A100": never narrowed to the first of them); else the
 * model of the one row it names ("Tesla T4" → "T4", "Quadro RTX 6000" →
 * "RTX6000", a family of one row → that row); else the name itself, which
 * names no row. Points into the table or at `name`. */
const char *cf_gpu_model_name(const cf_gpu *gpus, size_t n_gpus, const char *name);
/* The rows a bare family name stands for when cf_gpu_resolve answers it
 * by rule 4 alone ("A100": A100-40GB, A100-80GB, A100-80GB-PCIE, ... in
 * table order, the first being cf_gpu_resolve's answer), at most max_rows
 * of them; 0 when the name names one row by rules 1 to 3 ("V100", "Tesla
 * V100-SXM2-32GB") or none. For callers that must not guess a member of
 * the family (the GPU a spot trace was recorded on). */
size_t cf_gpu_family_rows(const cf_gpu *gpus, size_t n_gpus, const char *name, const cf_gpu **rows, size_t max_rows);
/* For a name that names no row (cf_gpu_resolve gives NULL, or rule 4's
 * guess): the rows of the families its words name, those with most of
 * their model words in the name first, then in table order ("A100 PCIe":
 * A100-80GB-PCIE, A100-40GB-PCIE, then A100-40GB, A100-80GB), at most
 * max_rows; 0 when the name names one row or no family. For the "did you
 * mean" of an unknown GPU: the rows a name is one word short of. */
size_t cf_gpu_near_rows(const cf_gpu *gpus, size_t n_gpus, const char *name, const cf_gpu **rows, size_t max_rows);

#endif
