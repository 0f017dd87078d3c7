/* The catalog a use case prices with, read through the caller's database
 * handle: the newest good price snapshot stored there (`prices update`),
 * else the embedded catalog; the age limit and the overrides file on top
 * (cf_catalog_source_open, pricing/source.h). */
#ifndef CLOUDFIT_USECASE_CATALOG_H
#define CLOUDFIT_USECASE_CATALOG_H
#include "cloudfit/db.h"
#include "cloudfit/pricing/source.h"
#include "cloudfit/usecase/evidence.h"

/* `db` NULL: no database yet (the embedded catalog); `db_name` is how it
 * may be shown. An override that matches no catalog row is a warning
 * through `note` (which may be NULL). On failure `out` holds nothing to
 * close. */
cf_status cf_catalog_source_read(cf_db *db, const char *db_name, double max_age_days, const char *overrides_path,
                                 cf_note_fn note, void *note_ctx, cf_catalog_source *out);

#endif
