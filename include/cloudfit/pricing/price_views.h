/* What `cloudfit prices` shows of a catalog (pricing/price_views.c): the
 * offers a view selects, every offer of one GPU cheapest first, and the
 * cheapest $/GPU-hour per GPU model and cloud. Pure computation over a
 * loaded catalog (no files, no network); rows are borrowed from it. */
#ifndef CLOUDFIT_PRICING_PRICE_VIEWS_H
#define CLOUDFIT_PRICING_PRICE_VIEWS_H
#include <stddef.h>

#include "cloudfit/pricing.h"
#include "cloudfit/status.h"

/* A GPU name that is not a model of the GPU table may name a family:
 * "A100" is A100-40GB, A100-80GB and A100-80GB-PCIE (the models that start
 * with the name, any case, then '-', and that an offer of the catalog
 * sells: the table's A100-40GB-PCIE is on no VM). Writes up to `cap` model names: the
 * name itself when it is a model, else the family's models, else the row a
 * tool's spelling of it names ("Tesla T4": T4), else the name as given (so
 * that cf_catalog_check_filter can explain), and returns how many (0 when
 * `name` is NULL). */
size_t cf_gpu_family_models(const cf_catalog *catalog, const char *name, const char **out, size_t cap);

/* "GPU" or "GPU:N" (N GPUs per VM, 1 to 1024) into `gpu` (room for `cap`
 * bytes) and *count (0 = any). CF_ERR_USAGE naming the text otherwise. */
cf_status cf_price_parse_gpu(const char *text, char *gpu, size_t cap, int *count);

typedef struct {
    const char *const *clouds;  size_t n_clouds;   /* empty = all */
    const char *const *regions; size_t n_regions;  /* empty = all */
    const char *gpu;            /* NULL = every GPU (or those of `gpus`); a model or a family */
    int gpu_count;              /* GPUs per VM; 0 = any */
    const char *const *gpus;    /* without `gpu`: several GPUs, each a model or a family (none = every GPU), */
    const int *gpu_counts;      /*   each with its GPUs per VM (0 = any; NULL = any for all) */
    size_t n_gpus;
    int spot_only;              /* only offers with a spot price (and, in cf_price_offers, by it) */
    int include_restricted;     /* also regions that need an access request (pricing/regions.h) */
    const char *const *preferred; size_t n_preferred; /* regions that come first among equal prices */
} cf_price_query;

typedef struct {
    const cf_vm **items;        /* rows of the catalog */
    size_t n;
    size_t n_restricted_left_out; /* offers that matched but are in regions that need an access request */
} cf_vm_list;

void cf_vm_list_free(cf_vm_list *list);

/* The offers that match `query`, in catalog order but for the regions of
 * one offer, preferred first (cf_rows_order_by_region). An unknown cloud
 * or GPU is CF_ERR_INVALID with a hint (cf_catalog_check_filter). With
 * `gpus`, an offer matches when it sells one of them with that entry's
 * GPU count. */
cf_status cf_price_select(const cf_catalog *catalog, const cf_price_query *query, cf_vm_list *out);
/* The offers that match `query`, cheapest first: by on-demand price per
 * VM-hour, or by spot price with spot_only; offers without that price
 * last; equal prices by cloud, then region preference (cf_region_rank),
 * then catalog order. No offer is CF_ERR_INFEASIBLE
 * ("no offer of A100 with 3 matches") and *out is empty. */
cf_status cf_price_offers(const cf_catalog *catalog, const cf_price_query *query, cf_vm_list *out);

/* The cheapest prices of one GPU model on one cloud. */
typedef struct {
    const char *gpu;                      /* GPU model */
    const char *cloud;
    unsigned gpu_counts_mask;             /* bit k set: a VM with k GPUs (1 <= k < 32) */
    int gpu_counts_32_plus;               /* a VM with 32 or more GPUs */
    size_t n_offers;
    double cheapest_usd_per_gpu_hr;       /* on-demand; 0 = none (spot or flex-start only) */
    const cf_vm *cheapest;                /* its offer; NULL = none */
    cf_price_kind cheapest_kind;
    double cheapest_spot_usd_per_gpu_hr;  /* 0 = none */
    const cf_vm *cheapest_spot;           /* NULL = none */
    cf_price_kind cheapest_spot_kind;     /* listed, observed or estimated; none */
} cf_gpu_cloud_prices;

/* One entry per GPU model and cloud among `offers`, ordered by GPU model
 * (any case), then aws, azure, gcp, lambda, other clouds by name. The
 * caller frees *out. */
cf_status cf_price_summary(const cf_vm_list *offers, cf_gpu_cloud_prices **out, size_t *n_out);

#endif
