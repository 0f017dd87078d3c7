/* Which price catalog a command uses (pricing/source.c): the newest good
 * price snapshot (`prices update`, read from the database by the caller)
 * wins; without one, the catalog compiled into the binary. Its age is
 * measured against a limit, and price overrides (--price-overrides) are
 * applied on top, in memory only: they never end up in a stored snapshot. */
#ifndef CLOUDFIT_PRICING_SOURCE_H
#define CLOUDFIT_PRICING_SOURCE_H
#include <stddef.h>
#include "cloudfit/pricing.h"
#include "cloudfit/pricing/overrides.h"
#include "cloudfit/status.h"
#include "cloudfit/common/shared_types.h"
#include "cloudfit/pricing/types.h"
#include "cloudfit/spec/types.h"

#define CF_DEFAULT_MAX_CATALOG_AGE_DAYS 30.0

/* A stored snapshot as the database hands it over. */
typedef struct {
    const char *vms_csv;         /* the whole merged catalog (gpu_vms.csv columns) */
    size_t vms_csv_len;
    const char *where;           /* "history.db:snapshot-7", for messages */
    const char *name;            /* "snapshot-7" */
    const char *fetched_at;      /* ISO 8601 */
    const char *sources;         /* the clouds it refreshed ("aws,azure") */
    const char *base;            /* where its other rows came from */
} cf_snapshot_text;

/* How old the prices a result depends on are, per cloud. */
#define CF_PRICE_AGE_MAX_CLOUDS 8
typedef struct {
    char cloud[CF_CLOUD_NAME_MAX];
    size_t n_offers;             /* offers of this cloud in use */
    size_t n_stale_offers;       /* ... with a dated price older than the limit */
    size_t n_undated;            /* prices in use whose source records no date */
    char oldest_date[11];        /* oldest dated price in use; "" = none */
} cf_cloud_price_age;

typedef struct {
    char oldest_date[11];        /* oldest dated listed/observed price in use; "" = none dated */
    char newest_date[11];
    size_t n_offers, n_prices, n_undated;
    cf_cloud_price_age clouds[CF_PRICE_AGE_MAX_CLOUDS];
    size_t n_clouds;
    size_t n_restricted_left_out; /* offers left out: their region needs an access request */
} cf_prices_in_use;

typedef struct {
    cf_catalog catalog;
    char source[16];         /* "snapshot" | "embedded" */
    char snapshot[32];       /* "snapshot-7" | "embedded" */
    char fetched_at[32];     /* snapshot: fetch time (ISO 8601); embedded: newest data date */
    char refreshed[64];      /* snapshot: clouds it refreshed ("aws,azure"); "" for embedded */
    char base[64];           /* snapshot: where its other rows came from */
    cf_prices_in_use in_use;  /* the prices a result depends on (all of the catalog until narrowed) */
    double age_days;          /* of the oldest dated price in use, never of the last update */
    double max_age_days;
    int too_old;              /* floor(age_days) > max_age_days: whole days, as shown */
    cf_price_overrides overrides;   /* n == 0 when none */
    int *override_rule;             /* per catalog row: 0 or the 1-based rule that set its price */
    int *override_price_rule;       /* per catalog row, [2i] on-demand, [2i + 1] spot: 0 or the rule that set it */
    size_t n_rows_overridden;
} cf_catalog_source;

/* The catalog in use: `snapshot` when given (NULL: the embedded catalog);
 * too old beyond `max_age_days` (<= 0: the default); the overrides file
 * `overrides_path` applied (NULL: none). */
cf_status cf_catalog_source_open(const cf_snapshot_text *snapshot, double max_age_days, const char *overrides_path,
                                 cf_catalog_source *out);
void cf_catalog_source_close(cf_catalog_source *src);
/* Narrows the prices in use to those of `rows` (the offers a search
 * considers): on-demand prices unless spot is `only`, spot prices unless
 * it is `never`; estimates count as the on-demand price they derive from.
 * Recomputes age_days and too_old. `n_restricted_left_out` is only
 * reported. */
void cf_catalog_source_set_in_use(cf_catalog_source *src, const cf_vm *const *rows, size_t n, cf_spot_policy spot,
                                  size_t n_restricted_left_out);
/* "snapshot-7 fetched 2026-11-20T10:00:00Z (refreshed aws,azure, other rows
 * from snapshot-6); prices in use of 2026-05-20 to 2026-11-20, the oldest
 * 184 days old; 1058 undated" */
void cf_catalog_source_describe(const cf_catalog_source *src, char *out, size_t n);
/* The clouds whose prices in use are older than the limit, most stale
 * first: "lambda 115 offers (prices of 2026-05-20), azure 623 offers
 * (2026-05-20); aws 1058 prices undated"; "" when none. */
void cf_catalog_source_stale(const cf_catalog_source *src, char *out, size_t n);
/* 0, or the 1-based override rule that set the price of `vm` (a row of src->catalog). */
int cf_catalog_source_rule_of(const cf_catalog_source *src, const cf_vm *vm);
/* 0, or the 1-based override rule that set the on-demand (`spot` 0) or spot
 * price of `vm`: a rule that matched the row but left that price alone is
 * not it. */
int cf_catalog_source_price_rule_of(const cf_catalog_source *src, const cf_vm *vm, int spot);

#endif
