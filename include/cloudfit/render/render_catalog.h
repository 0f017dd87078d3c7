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
 * NULL (then the catalog's own name and date are used). `chosen` (may be
 * NULL) is the chosen plan's VM, bought on spot (`spot`), with an
 * on-demand fallback (`mixed`), or on demand: chosen_price_rule names the
 * rule that changed the price it pays (its spot price for a spot or mixed
 * plan), chosen_fallback_price_rule a mixed plan's on-demand price. */
cJSON *cf_catalog_source_json(const cf_catalog_source *src, const cf_catalog *catalog, double age_days,
                              const cf_vm *chosen, int spot, int mixed);
/* " (182 days old)" for the price of `vm` a configuration pays (spot or
 * on-demand), "" when the price records no date or is an estimate. */
void cf_vm_price_age_text(const cf_vm *vm, int spot, char *out, size_t cap);
/* "prices in use are up to N days old (limit L): the stale clouds; run
 * 'cloudfit prices update'", or nothing when the prices are not too old:
 * the note of the table's Why lines and of the markdown comment. */
void cf_catalog_source_too_old_text(const cf_catalog_source *src, cf_buf *out);
/* "N offers in regions that need an access request left out
 * (--include-restricted-regions offers them)", or nothing when none were:
 * a line of the table's Why and of the markdown comment. No newline. */
void cf_catalog_source_restricted_text(const cf_catalog_source *src, cf_buf *out);
/* What the price overrides did, one line each, every line ending in '\n'
 * and without a list marker (the table's and the markdown's "why" lines):
 * how many rules changed how many rows, and which rule changed each price
 * the chosen plan pays (`chosen`, `spot`, `mixed` as for
 * cf_catalog_source_json): a rule that matched the VM but changed only a
 * price the plan does not pay (an `applies_to: ondemand` discount and a
 * spot plan) is not named. Nothing without overrides. */
void cf_catalog_source_overrides_text(const cf_catalog_source *src, const cf_vm *chosen, int spot, int mixed,
                                      cf_buf *out);
/* Explanation lines for the table: catalog line, too-old note, and the
 * overrides (cf_catalog_source_overrides_text). */
void cf_catalog_source_explain(const cf_catalog_source *src, const cf_catalog *catalog, double age_days,
                               const cf_vm *chosen, int spot, int mixed, cf_buf *out);

#endif
