/* Regions (pricing/regions.c, docs/pricing.md "Regions"): the ones that
 * need an access request before anything can be launched there, and the
 * order in which regions break a tie between equal prices. */
#ifndef CLOUDFIT_PRICING_REGIONS_H
#define CLOUDFIT_PRICING_REGIONS_H
#include <stddef.h>

#include "cloudfit/status.h"
#include "cloudfit/pricing/types.h"

/* Why `region` of `cloud` cannot be used without asking the cloud first
 * (a documented restricted-access region), or NULL when it can. */
const char *cf_region_restriction(const char *cloud, const char *region);

/* What is known of where `vm` can be launched, for people: "availability:
 * launchable in 3 zones (use1-az1 use1-az2 use1-az4) per the availability
 * table; capacity on the day is not known", or "availability not known for
 * lambda/us-east-1 gpu_1x_a10: capacity varies (Lambda publishes no
 * availability table)"; plus the access request a restricted region
 * needs. Returns 1 when an availability table lists the offer, else 0. */
int cf_vm_availability(const cf_vm *vm, char *out, size_t cap);

/* The place of `region` in the tie-break order: its position in
 * `preferred` (the user's regions, any cloud), else after them in the
 * cloud's documented default list, else after every listed region. Lower
 * comes first. */
int cf_region_rank(const char *cloud, const char *region, const char *const *preferred, size_t n_preferred);

/* Reorders `rows` so that, where several regions of one offer (cloud,
 * instance type, GPU model and count) cost the same, the one of lower
 * rank comes first: the search keeps the first of equal prices. Offers
 * keep the place of their first row, rows of equal rank their order. */
cf_status cf_rows_order_by_region(const cf_vm **rows, size_t n, const char *const *preferred, size_t n_preferred);

#endif
