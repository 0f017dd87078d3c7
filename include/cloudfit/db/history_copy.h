/* Copying a whole database into another (db/history_copy.c):
 * `cloudfit history migrate --to postgresql://…` (docs/history.md). */
#ifndef CLOUDFIT_DB_HISTORY_COPY_H
#define CLOUDFIT_DB_HISTORY_COPY_H
#include "cloudfit/db.h"
#include "cloudfit/status.h"

typedef struct {
    long long specs, recommendations, recommendations_present, measurements, profiles, snapshots, search_runs;
    /* of `profiles`: those that replaced an older profile of the same
     * (spec key, backend, device); and the source's profiles left out
     * because the destination's of the triple is newer */
    long long profiles_replaced, profiles_older;
} cf_history_copy_counts;

/* Copies what `from` holds and `to` does not yet: specs, recommendations
 * with their alternatives, CI rows and gates, recorded measurements,
 * cached profiles, price snapshots with their rows, and search runs with
 * their probes, in one transaction on `to` (all or nothing). A row copied
 * before (the same uid; for snapshots the same fetch time and content)
 * is not copied again, so running it twice copies nothing the second
 * time. Copied rows get `to`'s ids; a name of a copied snapshot (a
 * recommendation's catalog_name, a snapshot's base: "snapshot-N") is
 * renamed to its copy's id. A cached profile replaces the destination's
 * of the same (spec key, backend, device) only when it is newer, as a new
 * profile does in the cache. Both databases must have this cloudfit's schema (open `to` with
 * cf_db_open, which migrates it). counts: what was copied
 * (recommendations_present: recommendations that were there already). */
cf_status cf_history_copy(cf_db *from, cf_db *to, cf_history_copy_counts *counts);

#endif
