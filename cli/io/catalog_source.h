/* The catalog a command uses (the library decides: pricing/source.h), read
 * from the database. How the outputs describe it: render_catalog.h. */
#ifndef CLOUDFIT_CLI_CATALOG_SOURCE_H
#define CLOUDFIT_CLI_CATALOG_SOURCE_H
#include "cloudfit/db.h"
#include "cloudfit/pricing.h"
#include "cloudfit/pricing/source.h"
#include "cloudfit/spec.h"
#include "options.h"

/* Reads the newest good snapshot from the database (--db, never created)
 * and opens the catalog in use (cf_catalog_source_open: --max-catalog-age-
 * days and, when with_overrides, --price-overrides). Returns 0 or prints
 * the error and returns the exit code. */
int cf_cli_catalog_open(const cf_cli_options *o, int with_overrides, cf_catalog_source *out);
/* The same through the database handle the command opened for all it
 * reads (cf_cli_db_open_existing; NULL = none yet), shown as `db_name`. */
int cf_cli_catalog_read(const cf_cli_options *o, cf_db *db, const char *db_name, int with_overrides,
                        cf_catalog_source *out);
/* The --cloud, --gpu, --region and --prefer-region values (the last two
 * also from the configuration file) checked against the catalog on
 * their own, so a bad value is a usage error that names the option (exit
 * 2), not a fault of the spec. 0 or the exit code (message printed). */
int cf_cli_check_search_options(const cf_cli_options *o, const cf_catalog *catalog);
/* Prints the too-old warning on stderr when it applies to the prices in
 * use (cf_catalog_source_set_in_use), naming the stale clouds. */
void cf_cli_catalog_warn(const cf_catalog_source *src);

#endif
