/* The db module's front door (db/backend.c, db/migrations.c): one
 * database holds the history of recommendations, cached profiles, price
 * snapshots and search runs. Two backends behind one storage interface
 * (db/db_internal.h): an SQLite file (the embedded default: WAL and a busy
 * timeout so several processes can write at once; db/db.c) or a
 * PostgreSQL database named by a postgresql:// URL (a team's shared
 * history; db/postgres.c). Schema by the same numbered migrations on
 * both, applied on open. The tables are reached through db/history.h,
 * db/profiles.h, db/snapshots.h and db/search_runs.h. */
#ifndef CLOUDFIT_DB_H
#define CLOUDFIT_DB_H
#include <stddef.h>
#include "cloudfit/status.h"

typedef struct cf_db cf_db;

/* Whether `target` names a PostgreSQL database (postgresql:// or
 * postgres://, libpq's URI form) rather than an SQLite file. */
int cf_db_is_postgresql(const char *target);
/* CF_ERR_USAGE when `target` is meant for libpq but is not one of the two
 * URL forms: a key=value connection string ("dbname=x host=y") or a URL of
 * another spelling (POSTGRESQL://, postgresql:/x). Taken for a file name,
 * it made a local SQLite file named after the credentials. The message
 * ("option '--OPTION': takes a file name or a URL ..., not ...", with a
 * hint) never quotes the value. */
cf_status cf_db_check_target(const char *target, const char *option);
/* Whether two targets name the same database: the same text, or two
 * spellings of one existing SQLite file (relative and absolute paths, a
 * symlink, a hard link: the same device and inode). URLs compare as text. */
int cf_db_same_target(const char *a, const char *b);
/* `target` as it may be shown or stored: a URL's password (user:PASSWORD@
 * or password=...) replaced by "***"; a path as it is. */
void cf_db_redact(const char *target, char *out, size_t n);
/* `target` as a command line given to the user may name it: a URL's
 * password and its key dropped (libpq then reads it from PGPASSFILE,
 * ~/.pgpass or a service entry), not "***", which would be tried as the
 * password; otherwise as cf_db_redact. */
void cf_db_shareable(const char *target, char *out, size_t n);

/* Opens (creating when missing, mode 0600 whatever the umask) and
 * migrates the database at `path`, or connects to the PostgreSQL URL and
 * migrates it (the database must exist; its password, from the URL,
 * PGPASSFILE or a PGSERVICE entry, never appears in a message). A file that is not an SQLite database,
 * or is cut short, is an error with a hint ("damaged"), never replaced.
 * Waiting for another process's write lock is bounded by
 * CLOUDFIT_DB_LOCK_TIMEOUT_S (default 30 s), then an error naming the lock. */
cf_status cf_db_open(const char *path, cf_db **out);
/* Opens an existing database for reading only (read commands): no write,
 * no migration, no lock taken, so it works on a read-only file or folder
 * and never waits behind a writer (WAL). Its schema must be this
 * cloudfit's (else an error saying how to upgrade it). */
cf_status cf_db_open_readonly(const char *path, cf_db **out);
/* 1 when the last cf_db_open_readonly on this thread failed because the
 * database's schema is older than this cloudfit's (a read-only open never
 * upgrades it), else 0: a command that only consults the history (cached
 * profiles, price snapshots) goes on without it and says so. */
int cf_db_open_failed_on_older_schema(void);
/* The schema version that made the last cf_db_open_readonly on this thread
 * fail (0: no cloudfit history in it), or -1 when it failed otherwise or
 * did not fail. */
int cf_db_open_failed_schema_version(void);
/* Why there is no SQLite database at `target` yet, for "no history
 * database at …": no file (strerror(errno)), or an empty one (what a
 * command stopped while it created the file leaves, or `touch`; SQLite
 * makes a database of it on the first write, as of a missing file). NULL
 * when there is one, and for a PostgreSQL URL. */
const char *cf_db_absent(const char *target);
/* Opens `target` read-only when there is a database there (the file
 * exists; the PostgreSQL database has cloudfit's tables): for a command
 * that only consults it (cached profiles, price snapshots, a baseline).
 * CF_OK with *out NULL when there is none yet, and also when its schema is
 * older than this cloudfit's (a read-only open never upgrades it): then
 * `older_schema` (room for n) says so, for a warning; "" otherwise. */
cf_status cf_db_open_existing(const char *target, cf_db **out, char *older_schema, size_t n);
/* Called for each file made private: its path and modes. */
typedef void (*cf_db_private_fn)(void *ctx, const char *path, unsigned mode_before, unsigned mode_after);
/* Makes the SQLite database at `path` private to its owner: the file and
 * its -wal, -shm and -journal (and, with `own_folder`, its folder) lose
 * their group and other bits when this user owns them and they had any;
 * each change is said through `said` (may be NULL). Earlier versions made
 * them 0644 in a 0755 folder, and a history holds specs, costs and CI
 * metadata. */
void cf_db_make_private(const char *path, int own_folder, cf_db_private_fn said, void *ctx);
void cf_db_close(cf_db *db);
/* Removes the SQLite history at `path` (and its -wal, -shm) when none of
 * its tables holds a row: one a command created and then stored nothing
 * in (prices update that fetched nothing). Only when no other connection
 * has it open (another command that opened it meanwhile and will write to
 * it later keeps it) and under its exclusive lock, both taken without
 * waiting. */
void cf_db_remove_unused(const char *path);
/* cf_db_close, and then, when this handle's open created the SQLite file
 * (cf_db_open on a path where there was none) and none of its tables holds
 * a row, its removal as cf_db_remove_unused: a command that failed before
 * it stored anything (a bad spec or option, nothing feasible, a result
 * that could not be written) leaves no history behind. A file that was
 * there before, and a PostgreSQL database, are only closed. NULL: nothing. */
void cf_db_close_discard_new(cf_db *db);
/* cf_db_open of the SQLite file `target` in `folder`, which it first makes
 * with its missing parents (private: cf_mkdir_private) when they are not
 * there: the default history on first use. The folders it made go again
 * when the open fails, and with the file in cf_db_close_discard_new, each
 * only while empty: a first command that fails leaves nothing behind. */
cf_status cf_db_open_in_folder(const char *target, const char *folder, cf_db **out);
/* What messages call the database: its path, or its URL redacted. */
const char *cf_db_name(const cf_db *db);
/* "sqlite" or "postgresql". */
const char *cf_db_backend(const cf_db *db);
/* Schema version after migrations (SQLite: PRAGMA user_version;
 * PostgreSQL: the table cloudfit_schema). */
int cf_db_schema_version(cf_db *db);
/* Holds the writes that follow on `db` in one transaction until
 * cf_db_release: each write (a recommendation, a measurement, a profile, a
 * snapshot, a prune) joins it instead of committing alone. A command holds
 * the database while it stores its result and delivers it to its reader,
 * then releases with commit = whether the delivery worked, so a result
 * that could not be written leaves nothing in the history. A write that
 * fails inside the hold rolls the whole hold back and ends it. */
cf_status cf_db_hold(cf_db *db);
/* Commits (commit != 0) or rolls back what was written since cf_db_hold.
 * Without a hold: CF_OK, nothing done. */
cf_status cf_db_release(cf_db *db, int commit);
/* Runs `body` on one snapshot of `db`: every query it makes sees the same
 * rows, whatever is committed meanwhile (a read transaction, ended whatever
 * `body` returns; it takes no lock a writer waits for). Inside a hold,
 * `body` just runs. Returns what `body` returned, or the error of starting
 * the transaction. */
cf_status cf_db_read_snapshot(cf_db *db, cf_status (*body)(cf_db *db, void *ctx), void *ctx);
/* Default path: $XDG_DATA_HOME/cloudfit/history.db, else
 * $HOME/.local/share/cloudfit/history.db. */
cf_status cf_db_default_path(char *out, size_t n);

#endif
