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

/* Opens (creating when missing, mode 0600 whatever the umask) and
 * migrates the database at `path`. A file that is not an SQLite database,
 * or is cut short, is an error with a hint ("damaged"), never replaced.
 * Waiting for another process's write lock is bounded by
 * CLOUDFIT_DB_LOCK_TIMEOUT_S (default 30 s), then an error naming the lock. */
cf_status cf_db_open(const char *path, cf_db **out);
/* Opens an existing database for reading only (read commands): no write,
 * no migration, no lock taken, so it works on a read-only file or folder
 * and never waits behind a writer (WAL). Its schema must be this
 * cloudfit's (else an error saying how to upgrade it). */
cf_status cf_db_open_readonly(const char *path, cf_db **out);
void cf_db_close(cf_db *db);
/* Schema version after migrations (PRAGMA user_version). */
int cf_db_schema_version(cf_db *db);
/* Default path: $XDG_DATA_HOME/cloudfit/history.db, else
 * $HOME/.local/share/cloudfit/history.db. */
cf_status cf_db_default_path(char *out, size_t n);

#endif
