/* Catalog helpers shared inside pricing/ (not part of the library API). */
#ifndef CLOUDFIT_PRICING_CATALOG_INTERNAL_H
#define CLOUDFIT_PRICING_CATALOG_INTERNAL_H
#include "cloudfit/pricing.h"

/* Keeps only the GCP and AWS rows of `cat` that `launchable` (the embedded,
 * availability-joined catalog) also has — same cloud, region, instance type,
 * GPU model and count — and gives them its zones when they have none. Rows
 * of clouds without an availability table (Azure, Lambda) are kept. Sets
 * cat->n_not_launchable and recomputes the catalog's dates. This is how a
 * snapshot stored before a cloudfit with the availability tables (or
 * before newer ones) stops offering machines where they cannot be
 * launched. */
cf_status cf_catalog_keep_launchable(cf_catalog *cat, const cf_catalog *launchable);

/* Space-separated words in `text` (zones of an offer). */
size_t cf_count_words(const char *text);

#endif
