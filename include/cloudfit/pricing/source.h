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

typedef struct {
    cf_catalog catalog;
    char source[16];         /* "snapshot" | "embedded" */
    char snapshot[32];       /* "snapshot-7" | "embedded" */
    char fetched_at[32];     /* snapshot: fetch time (ISO 8601); embedded: newest data date */
    char refreshed[64];      /* snapshot: clouds it refreshed ("aws,azure"); "" for embedded */
    char base[64];           /* snapshot: where its other rows came from */
    double age_days;
    double max_age_days;
    int too_old;
    cf_price_overrides overrides;   /* n == 0 when none */
    int *override_rule;             /* per catalog row: 0 or the 1-based rule that set its price */
    size_t n_rows_overridden;
} cf_catalog_source;

/* The catalog in use: `snapshot` when given (NULL: the embedded catalog);
 * too old beyond `max_age_days` (<= 0: the default); the overrides file
 * `overrides_path` applied (NULL: none). */
cf_status cf_catalog_source_open(const cf_snapshot_text *snapshot, double max_age_days, const char *overrides_path,
                                 cf_catalog_source *out);
void cf_catalog_source_close(cf_catalog_source *src);
/* "snapshot-7 fetched 2026-11-20T10:00:00Z (1 day old; refreshed aws,azure)" */
void cf_catalog_source_describe(const cf_catalog_source *src, char *out, size_t n);
/* 0, or the 1-based override rule that set the price of `vm` (a row of src->catalog). */
int cf_catalog_source_rule_of(const cf_catalog_source *src, const cf_vm *vm);

#endif
