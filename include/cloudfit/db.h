/* The db module's front door (db/db.c, db/migrations.c): one SQLite file
 * holds the history of recommendations, cached profiles, price snapshots
 * and search runs. Schema by numbered migrations applied on open; WAL and
 * a busy timeout so several processes (CI jobs) can write at once. The
 * tables are reached through db/history.h, db/profiles.h,
 * db/snapshots.h and db/search_runs.h. */
#ifndef CLOUDFIT_DB_H
#define CLOUDFIT_DB_H
#include <stddef.h>
#include "cloudfit/status.h"

typedef struct cf_db cf_db;

/* Opens (creating when missing) and migrates the database at `path`. */
cf_status cf_db_open(const char *path, cf_db **out);
void cf_db_close(cf_db *db);
/* Schema version after migrations (PRAGMA user_version). */
int cf_db_schema_version(cf_db *db);
/* Default path: $XDG_DATA_HOME/cloudfit/history.db, else
 * $HOME/.local/share/cloudfit/history.db. */
cf_status cf_db_default_path(char *out, size_t n);

#endif
