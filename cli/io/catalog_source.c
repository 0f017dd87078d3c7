#include "io/catalog_source.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cloudfit/common/clock.h"
#include "exit_codes.h"
#include "log.h"
#include "commands.h"
#include "io/db_open.h"
#include "cloudfit/usecase/catalog.h"
#include "cloudfit/usecase/recommend.h"
#include "io/evidence.h"

int cf_cli_catalog_read(const cf_cli_options *o, cf_db *db, const char *db_name, int with_overrides,
                        cf_catalog_source *out)
{
    cf_status st = cf_catalog_source_read(db, db_name, o->max_catalog_age_days,
                                          with_overrides ? o->price_overrides : NULL, cf_cli_note, NULL, out);
    return st == CF_OK ? 0 : cf_report_error();
}

int cf_cli_catalog_open(const cf_cli_options *o, int with_overrides, cf_catalog_source *out)
{
    memset(out, 0, sizeof *out);
    char db_name[1024];
    cf_db *db = NULL;
    if (cf_cli_db_open_existing(o, &db, db_name, sizeof db_name) != CF_OK)
        return cf_report_error();
    int rc = cf_cli_catalog_read(o, db, db_name, with_overrides, out);
    if (db)
        cf_db_close(db);
    return rc;
}

void cf_cli_catalog_warn(const cf_catalog_source *s)
{
    if (!s->too_old || cf_log_verbosity() < 0) /* informational: -q silences it (the result says it too) */
        return;
    char stale[512];
    cf_catalog_source_stale(s, stale, sizeof stale);
    cf_log_warning("prices in use (%s) are up to %.0f days old, more than %g days: %s", s->snapshot,
                   floor(s->age_days), s->max_age_days, stale);
    cf_log_hint("run 'cloudfit prices update' to fetch current prices (or raise --max-catalog-age-days)");
}

/* One option's values checked alone: "option '--gpu': unknown GPU model ..." (exit 2). */
static int check_option(const cf_catalog *catalog, const cf_catalog_filter *f, const char *option)
{
    if (cf_catalog_check_filter(catalog, f) == CF_OK)
        return 0;
    cf_log_error("option '--%s': %s", option, cf_error_message());
    if (cf_error_hint_text()[0])
        cf_log_hint("%s", cf_error_hint_text());
    cf_error_clear();
    return CF_EXIT_USAGE;
}

int cf_cli_check_search_options(const cf_cli_options *o, const cf_catalog *catalog)
{
    cf_catalog_filter clouds = {.clouds = o->clouds.items, .n_clouds = (size_t)o->clouds.n, .spot = CF_SPOT_ALLOW};
    cf_catalog_filter gpus = {.gpus = o->gpus.items, .n_gpus = (size_t)o->gpus.n, .spot = CF_SPOT_ALLOW};
    cf_catalog_filter regions = clouds;
    regions.regions = o->regions.items;
    regions.n_regions = (size_t)o->regions.n;
    int rc = o->clouds.n ? check_option(catalog, &clouds, "cloud") : 0;
    if (rc == 0 && o->gpus.n)
        rc = check_option(catalog, &gpus, "gpu");
    if (rc == 0 && o->regions.n)
        rc = check_option(catalog, &regions, "region");
    /* A preference names regions of any cloud (the config file's list
     * serves every --cloud), so it is checked against the whole catalog:
     * a region no cloud has is a typo that would drop the preference
     * without a word, as --region's would match nothing. */
    cf_catalog_filter preferred = {.regions = o->prefer_regions.items, .n_regions = (size_t)o->prefer_regions.n,
                                   .spot = CF_SPOT_ALLOW};
    if (rc == 0 && o->prefer_regions.n)
        rc = check_option(catalog, &preferred, "prefer-region");
    return rc;
}
