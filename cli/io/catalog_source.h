/* Which price catalog a command uses, and how it says so.
 *
 * The newest good price snapshot in the database (`prices update`) wins;
 * without one, the catalog compiled into the binary. A database is only
 * read here, never created. Overrides (--price-overrides) are applied on
 * top, in memory only: they never end up in a stored snapshot. */
#ifndef CLOUDFIT_CLI_CATALOG_SOURCE_H
#define CLOUDFIT_CLI_CATALOG_SOURCE_H
#include <cjson/cJSON.h>

#include "cloudfit/common/buf.h"
#include "cloudfit/pricing.h"
#include "cloudfit/pricing/overrides.h"
#include "options.h"

#define CF_DEFAULT_MAX_CATALOG_AGE_DAYS 30.0

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

/* Loads the catalog for `o` (its --db, --max-catalog-age-days and, when
 * with_overrides, --price-overrides). Returns 0 or prints the error and
 * returns the exit code. */
int cf_catalog_source_open(const cf_cli_options *o, int with_overrides, cf_catalog_source *out);
/* "snapshot-7 fetched 2026-11-20T10:00:00Z (1 day old; refreshed aws,azure)" */
void cf_catalog_source_describe(const cf_catalog_source *src, char *out, size_t n);
/* Prints the too-old warning on stderr when it applies. */
void cf_catalog_source_warn(const cf_catalog_source *src);
void cf_catalog_source_close(cf_catalog_source *src);
/* The "catalog" object of a JSON document (DESIGN.md §4.4): source,
 * snapshot, fetched_at, age_days, and the overrides applied. `src` may be
 * NULL (then the catalog's own name and date are used). */
cJSON *cf_catalog_source_json(const cf_catalog_source *src, const cf_catalog *catalog, double age_days,
                              const cf_vm *chosen);
/* 0, or the 1-based override rule that set the price of `vm` (a row of src->catalog). */
int cf_catalog_source_rule_of(const cf_catalog_source *src, const cf_vm *vm);
/* Explanation lines for the table: catalog line, too-old note, overrides
 * and whether the chosen VM's price is an override. */
void cf_catalog_source_explain(const cf_catalog_source *src, const cf_catalog *catalog, double age_days,
                               const cf_vm *chosen, cf_buf *out);

#endif
