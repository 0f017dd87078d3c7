/* The catalog a use case prices with (docs/pricing.md): the newest good
 * price snapshot in the database, else the embedded catalog, with the
 * age limit and the price overrides applied (cf_catalog_source_open). */
#ifndef CLOUDFIT_USECASE_CATALOG_H
#define CLOUDFIT_USECASE_CATALOG_H
#include "cloudfit/db.h"
#include "cloudfit/pricing/source.h"

/* Opens the catalog in use from `db` (NULL: no database yet, the embedded
 * catalog), naming a snapshot "DB_NAME:snapshot-N"; `max_age_days` <= 0 is
 * the default limit, `overrides_path` NULL applies none. CF_OK, or a
 * status with the last error set (the snapshot cannot be read, an
 * overrides file that does not parse); on failure `out` holds nothing. */
cf_status cf_catalog_in_use(cf_db *db, const char *db_name, double max_age_days, const char *overrides_path,
                            cf_catalog_source *out);

#endif
