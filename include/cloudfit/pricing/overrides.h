/* Price overrides: a user's negotiated discounts and per-instance prices
 * (reservations, private offers), applied to a loaded catalog before the
 * search so recommendations use what the user really pays. Format in
 * docs/pricing.md:
 *
 *   {"discounts": [{"cloud": "aws", "percent": 12, "gpu": "H100", "applies_to": "ondemand", "note": "EDP"}],
 *    "instances": [{"cloud": "aws", "region": "us-east-1", "instance_type": "p5.48xlarge",
 *                   "price_ondemand_usd_per_hr": 40.0, "note": "1-year reservation"}]}
 *
 * Strict: unknown keys, wrong types and out-of-range values are errors that
 * name the file and key path; an instance override that matches no catalog
 * row is an error (a typo must not silently keep the list price). */
#ifndef CLOUDFIT_PRICING_OVERRIDES_H
#define CLOUDFIT_PRICING_OVERRIDES_H
#include <stddef.h>

#include "cloudfit/pricing.h"
#include "cloudfit/status.h"
#include "cloudfit/common/shared_types.h"

typedef enum { CF_OVERRIDE_DISCOUNT, CF_OVERRIDE_INSTANCE } cf_override_kind;

typedef struct {
    cf_override_kind kind;
    char key_path[32];                  /* "discounts[0]" — for messages and reports */
    /* match: empty = any */
    char cloud[CF_CLOUD_NAME_MAX], region[CF_REGION_NAME_MAX], instance_type[CF_INSTANCE_TYPE_MAX];
    char gpu[CF_GPU_NAME_MAX];
    /* discount */
    double percent;                     /* (0, 100) */
    int applies_ondemand, applies_spot;
    /* instance: <= 0 = leave that price as it is */
    double price_ondemand_usd_per_hr, price_spot_usd_per_hr;
    char note[128];
    size_t rows_matched;                /* set by cf_price_overrides_apply */
    /* discount: rows whose spot price it left at or above on-demand, so
     * left out (set by cf_price_overrides_apply), and the first of them */
    size_t spot_left_out;
    char spot_left_out_example[160];
} cf_price_override;

typedef struct {
    cf_price_override *items;
    size_t n;
    char path[512];
    /* SHA-256 of the file's bytes (cf_sha256_hex): its identity, which the
     * recommendation document stores (catalog.price_overrides.sha256), so
     * a CI gate names a changed file (docs/ci.md) */
    char sha256[65];
} cf_price_overrides;

cf_status cf_price_overrides_parse(const char *text, size_t len, const char *name, cf_price_overrides *out);
cf_status cf_price_overrides_load(const char *path, cf_price_overrides *out);
/* Applies discounts (in file order; they compound) then instance prices
 * (which replace, not compound). rule_of_row (n_vms entries, may be NULL)
 * gets, per catalog row, 0 = list price or k = last rule k (1-based) that
 * changed it. Fails without changing the catalog when an instance rule
 * matches nothing or would put spot above on-demand. A discount that
 * leaves a row's spot price at or above its on-demand price (an
 * on-demand-only discount) is no error: that spot price is left out, as
 * a spot price that is no discount is everywhere, and counted in the
 * rule's spot_left_out for a warning. */
cf_status cf_price_overrides_apply(cf_price_overrides *overrides, cf_catalog *catalog, int *rule_of_row);
/* cf_price_overrides_apply, and per price: rule_of_price (2 × n_vms
 * entries, may be NULL) gets [2i] = the rule that last changed row i's
 * on-demand price, [2i + 1] its spot price, 0 = the catalog's (or no such
 * price). A rule can match a row and change only one of its prices (an
 * `applies_to` discount, an instance rule giving one price): rule_of_row
 * names it for the row, rule_of_price only for the price it changed. */
cf_status cf_price_overrides_apply_rules(cf_price_overrides *overrides, cf_catalog *catalog, int *rule_of_row,
                                         int *rule_of_price);
void cf_price_overrides_free(cf_price_overrides *overrides);

#endif
