/* Live price updates (docs/pricing.md).
 *
 * cf_prices_update fetches current prices from the public pricing APIs with
 * libcurl (Azure Retail Prices, AWS bulk price list + spot feed, GCP Cloud
 * Billing Catalog, Lambda Cloud API), joins them to the machine shapes of a base catalog,
 * rejects nonsense and returns the merged catalog as gpu_vms.csv text. It
 * never touches the database: the CLI stores the result as a snapshot.
 *
 * Each cloud is all-or-nothing: a cloud whose fetch fails part-way (HTTP
 * error after retries, truncated body, stalled stream, pagination loop or
 * cap) or yields no usable price contributes no prices, so a partial or
 * empty answer can never replace good prices. Quotes refresh the catalog's
 * rows only: no offer is added from a price sheet. */
#ifndef CLOUDFIT_PRICING_UPDATE_H
#define CLOUDFIT_PRICING_UPDATE_H
#include <stddef.h>

#include "cloudfit/common/progress.h"
#include "cloudfit/pricing.h"
#include "cloudfit/status.h"
#include "cloudfit/common/shared_types.h"

/* Progress lines for a person watching (the CLI prints them on stderr). */
typedef void (*cf_progress_fn)(void *data, const char *line);

/* One price the API quoted, or (in results) one refreshed catalog row. */
typedef struct {
    char cloud[CF_CLOUD_NAME_MAX];
    char region[CF_REGION_NAME_MAX];
    char instance_type[CF_INSTANCE_TYPE_MAX];
    char gpu_model[CF_GPU_NAME_MAX];    /* "" = every catalog row of this type */
    int gpu_count;                      /* 0 = any */
    int has_ondemand, has_spot;         /* which prices the API quoted */
    double price_ondemand_usd_per_hr;   /* whole VM, as quoted (validated later) */
    double price_spot_usd_per_hr;
    char spot_date[CF_DATE_MAX];        /* YYYY-MM-DD the source dates its spot price by; "" = the fetch date */
} cf_price_quote;

typedef struct {
    cf_price_quote *items;
    size_t n, cap;
} cf_price_list;

cf_status cf_price_list_add(cf_price_list *list, const cf_price_quote *quote);
void cf_price_list_free(cf_price_list *list);

#define CF_PRICE_MAX_CLOUDS 4

typedef struct {
    const char *const *clouds;  size_t n_clouds;   /* empty = aws, azure, gcp, lambda; any case */
    const char *const *regions; size_t n_regions;  /* empty = regions of the base catalog */
    int clouds_explicit;        /* 1: a missing GCP or Lambda key is an error, not a skip */
    double max_change_factor;   /* a price moving more than this × (or 1/×) is kept out; <= 1 → 3 */
    const char *fetched_at;     /* ISO 8601 UTC; written into each refreshed row's source */
    cf_progress_fn progress;    /* may be NULL */
    void *progress_data;
    cf_progress_count_fn transfer; /* bytes of each download as they arrive (may be NULL) */
    void *transfer_data;
} cf_price_update_options;

typedef enum { CF_CLOUD_UPDATED, CF_CLOUD_FAILED, CF_CLOUD_SKIPPED } cf_cloud_outcome;

typedef struct {
    char cloud[CF_CLOUD_NAME_MAX];
    cf_cloud_outcome outcome;
    cf_status status;           /* of the fetch */
    char message[768];          /* failure or skip reason; "" when updated */
    char hint[256];
    size_t n_quotes;            /* prices the API returned after filtering */
    size_t n_rows_updated;      /* catalog rows whose prices were refreshed */
} cf_cloud_update;

typedef struct {
    cf_cloud_update clouds[CF_PRICE_MAX_CLOUDS];
    size_t n_clouds;
    char *warnings;             /* '\n'-separated rejected prices; "" when none */
    size_t n_rejected;
    char *vms_csv;              /* the merged catalog (data/gpu_vms.csv columns) */
    size_t vms_csv_len;
    size_t n_rows;              /* rows in vms_csv */
    cf_price_list refreshed;    /* final values of every refreshed or added row */
} cf_price_update_result;

/* CF_ERR_USAGE (message and hint set) when a cloud has no price source;
 * names ignore case ("LAMBDA" is lambda), as the catalog's filters do.
 * cf_prices_update checks it too; the CLI checks first to name --cloud. */
cf_status cf_prices_update_check_clouds(const char *const *clouds, size_t n_clouds);
/* Fetches and merges. CF_OK when at least one cloud updated (see
 * result->clouds for the others); otherwise the first failure's status and
 * message. `base` is the catalog now in use (newest snapshot or embedded). */
cf_status cf_prices_update(const cf_catalog *base, const cf_price_update_options *opts,
                           cf_price_update_result *out);
void cf_price_update_result_free(cf_price_update_result *result);

/* Writes the VM rows of `catalog` as gpu_vms.csv text. Spot prices that
 * were only estimated from the AWS Spot Advisor are written empty, so
 * loading the text again re-derives them instead of freezing them. */
cf_status cf_catalog_write_vms_csv(const cf_catalog *catalog, char **out_text, size_t *out_len);
/* Loads VM rows from gpu_vms.csv text with the embedded GPU table and
 * Spot Advisor (how a stored snapshot becomes a catalog). GCP and AWS rows
 * the embedded catalog does not offer (not launchable there) are left out
 * and counted in n_not_launchable; rows without zones get the embedded
 * row's. */
cf_status cf_catalog_load_with_vms(const char *vms_csv, size_t vms_len, const char *vms_name, cf_catalog *out);

#endif
