/* How the outputs describe the catalog in use (render_catalog.c): what
 * the recommendation, prices and search documents say about where their
 * prices came from. */
#ifndef CLOUDFIT_RENDER_RENDER_CATALOG_H
#define CLOUDFIT_RENDER_RENDER_CATALOG_H
#include <cjson/cJSON.h>

#include "cloudfit/common/buf.h"
#include "cloudfit/pricing.h"
#include "cloudfit/pricing/source.h"

/* The "catalog" object of a JSON document (docs/output.md): source,
 * snapshot, fetched_at, age_days, and the overrides applied. `src` may be
 * NULL (then the catalog's own name and date are used). */
cJSON *cf_catalog_source_json(const cf_catalog_source *src, const cf_catalog *catalog, double age_days,
                              const cf_vm *chosen);
/* " (182 days old)" for the price of `vm` a configuration pays (spot or
 * on-demand), "" when the price records no date or is an estimate. */
void cf_vm_price_age_text(const cf_vm *vm, int spot, char *out, size_t cap);
/* "prices in use are up to N days old (limit L): the stale clouds; run
 * 'cloudfit prices update'", or nothing when the prices are not too old:
 * the note of the table's Why lines and of the markdown comment. */
void cf_catalog_source_too_old_text(const cf_catalog_source *src, cf_buf *out);
/* Explanation lines for the table: catalog line, too-old note, overrides
 * and whether the chosen VM's price is an override. */
void cf_catalog_source_explain(const cf_catalog_source *src, const cf_catalog *catalog, double age_days,
                               const cf_vm *chosen, cf_buf *out);

#endif
