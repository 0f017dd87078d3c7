/* Shared by the files of db/ only.
 *
 * One storage interface, two backends: every query of db/ is written once,
 * in the SQL both backends understand, against the statement functions
 * below (cf_db_prepare, cf_db_bind_*, cf_db_step, cf_db_column_*), which
 * call the open database's driver — a struct of function pointers:
 * db/db.c (SQLite, the embedded default) or db/postgres.c (PostgreSQL
 * through libpq, chosen by a postgresql:// URL).
 *
 * The portable SQL (docs/history.md, "Choosing a backend"): numbered
 * parameters ?1, ?2 (or bare ?), INSERT … ON CONFLICT … DO NOTHING/UPDATE
 * (never INSERT OR …), RETURNING id for a new row's id, lower() for case-
 * insensitive matches, CAST(? AS TEXT) where a parameter's type cannot be
 * inferred, no rowid, no PRAGMA. The migrations are written in SQLite's
 * type names; the PostgreSQL driver maps them (db/postgres_sql.c). */
#ifndef CLOUDFIT_DB_INTERNAL_H
#define CLOUDFIT_DB_INTERNAL_H
#include <sqlite3.h>
#include <stddef.h>

#include "cloudfit/db/history.h"

typedef struct cf_db_stmt cf_db_stmt;

/* What cf_db_step answers. */
enum { CF_DB_ROW = 1, CF_DB_DONE = 2, CF_DB_FAILED = 3 };

typedef struct {
    const char *name; /* "sqlite" | "postgresql" */
    void (*close)(cf_db *db);
    /* SQL without results (one or more statements). */
    cf_status (*exec)(cf_db *db, const char *sql, const char *what);
    /* A write transaction (SQLite: BEGIN IMMEDIATE, one writer at a time;
     * PostgreSQL: BEGIN, rows locked as written). */
    cf_status (*begin)(cf_db *db);
    cf_status (*commit)(cf_db *db);
    void (*rollback)(cf_db *db);
    int (*schema_version)(cf_db *db);
    cf_status (*prepare)(cf_db *db, const char *sql, cf_db_stmt **out);
    void (*bind_text)(cf_db_stmt *s, int index, const char *text, size_t len);
    void (*bind_int64)(cf_db_stmt *s, int index, long long v);
    void (*bind_double)(cf_db_stmt *s, int index, double v); /* finite */
    void (*bind_null)(cf_db_stmt *s, int index, int is_number);
    int (*step)(cf_db_stmt *s);
    void (*reset)(cf_db_stmt *s); /* also clears the bindings */
    void (*finalize)(cf_db_stmt *s);
    int (*column_is_null)(cf_db_stmt *s, int col);
    const char *(*column_text)(cf_db_stmt *s, int col, size_t *len); /* never NULL */
    long long (*column_int64)(cf_db_stmt *s, int col);
    double (*column_double)(cf_db_stmt *s, int col);
    long long (*changes)(cf_db_stmt *s); /* rows written by the last step */
    /* "WHAT 'name': the backend's last error" as CF_ERR_DB, with a hint. */
    cf_status (*error)(cf_db *db, const char *what);
} cf_db_driver;

extern const cf_db_driver cf_db_sqlite_driver;
extern const cf_db_driver cf_db_postgres_driver;

struct cf_db {
    const cf_db_driver *driver;
    sqlite3 *handle;     /* SQLite */
    struct pg_conn *pg;  /* PostgreSQL (libpq's PGconn) */
    char path[1024];     /* what messages name: the file, or the URL with its password redacted */
    int readonly;        /* opened by cf_db_open_readonly */
    int created;         /* SQLite: this open made the file (cf_db_close_discard_new) */
    char made_dir[1024]; /* SQLite: the outermost folder cf_db_open_in_folder made for it, "" (discarded with it) */
    int held;            /* inside cf_db_hold's transaction: cf_db_transaction joins it */
    double busy_since_s, waited_s; /* SQLite: the current lock wait: when it began, how long it lasted (monotonic s) */
    char copy_dir[512];  /* SQLite: "" or the private folder holding the copy that is read (db.c: open_copy) */
    /* PostgreSQL: the last failure (message without the password, SQLSTATE) */
    char pg_error[640];
    char pg_sqlstate[6];
    char *pg_secret[3];  /* the password as written in the URL and as used, to scrub from any message; owned */
};

/* A statement of either backend. */
struct cf_db_stmt {
    cf_db *db;
    sqlite3_stmt *sqlite;
    /* PostgreSQL: the translated SQL, its parameters as text, the result */
    char *pg_sql;
    int n_params;
    char **pg_values;
    unsigned int *pg_types;
    struct pg_result *pg_result;
    int pg_row, pg_rows, pg_done;
    long long pg_changes;
    int stream;       /* cf_db_stream: rows handed over as the server sends them */
    int pg_streaming; /* PostgreSQL: a streamed query whose rows are still coming */
};

/* Numbered migrations: entry i brings the schema version from i to i+1.
 * Never edit one that has been released; append a new one. */
extern const char *const cf_db_migrations[];
extern const int cf_db_migration_count;

/* The profile cache's order (migration 9; docs/profiler.md, "The profile
 * cache"): newest first, by created_at (whole seconds), then, of the same
 * second, the one stored last: seq, which every write of a row sets to
 * CF_DB_PROFILE_NEXT_SEQ, one more than the largest of its spec key (?1).
 * seq counts within a spec key, so of the rows of the two keys a spec is
 * read under (cf_profile_cache_get_either) those of the current key (?1)
 * come first in their second: the other key is the one older versions
 * stored under, before any of the current key (history migrate gives the
 * copies of both seq 1, and the older had won on its backend's name).
 * Backend and device only order rows that tie on all of these (older
 * rows, seq 0; on PostgreSQL two written at once). */
#define CF_DB_PROFILES_NEWEST_FIRST "created_at DESC, spec_key = ?1 DESC, " CF_DB_PROFILE_SEQ " DESC, backend, device"
/* A seq as it orders and counts: one outside 0 to CF_DB_PROFILE_SEQ_MAX
 * (2^62), not a whole number, or text (a hand-edited or damaged row; SQLite
 * stores what it is given) counts as 0, as the rows older than the column,
 * and the next seq stops at the bound. A seq of 2^63 - 1 made the next one
 * overflow: PostgreSQL refused every later write of a profile of that spec
 * ("bigint out of range", exit 1), SQLite stored a REAL; text won every tie
 * in SQLite. Every write of a row sets a sound one again. */
#define CF_DB_PROFILE_SEQ_MAX "4611686018427387904"
#define CF_DB_PROFILE_SEQ                                                                                              \
    "(CASE WHEN seq BETWEEN 0 AND " CF_DB_PROFILE_SEQ_MAX " AND seq = CAST(seq AS BIGINT) THEN seq ELSE 0 END)"
#define CF_DB_PROFILE_NEXT_SEQ                                                                                         \
    "(SELECT CASE WHEN COALESCE(MAX(" CF_DB_PROFILE_SEQ "), 0) < " CF_DB_PROFILE_SEQ_MAX " THEN COALESCE(MAX("         \
    CF_DB_PROFILE_SEQ "), 0) + 1 ELSE " CF_DB_PROFILE_SEQ_MAX " END FROM profiles WHERE spec_key = ?1)"

/* "WHAT 'name': backend message" as CF_ERR_DB. */
cf_status cf_db_error(cf_db *db, const char *what);
/* Runs body(db, ctx) inside one write transaction: committed when body
 * returns CF_OK, rolled back when it fails or the commit does, so a writer
 * killed or failing halfway leaves nothing behind. Inside cf_db_hold the
 * body joins the held transaction (committed by cf_db_release; a failing
 * body rolls the hold back). */
cf_status cf_db_transaction(cf_db *db, cf_status (*body)(cf_db *db, void *ctx), void *ctx);
/* Runs SQL without results; errors as above. */
cf_status cf_db_exec(cf_db *db, const char *sql, const char *what);

/* ---- statements (db/stmt.c): the driver's, one name for both ---------- */
cf_status cf_db_prepare(cf_db *db, const char *sql, cf_db_stmt **out);
/* Text (NULL as ""), copied. */
void cf_db_bind_text(cf_db_stmt *s, int index, const char *text);
void cf_db_bind_blob_text(cf_db_stmt *s, int index, const char *text, size_t len);
void cf_db_bind_int64(cf_db_stmt *s, int index, long long v);
/* A number; NaN is stored as NULL (as SQLite itself does). */
void cf_db_bind_double(cf_db_stmt *s, int index, double v);
void cf_db_bind_null(cf_db_stmt *s, int index);
/* Asks for the rows of `s` as they are read, never the whole result at
 * once (history list, prune --dry-run: a history too long to hold), before
 * its first step. SQLite always reads a row at a time; PostgreSQL then
 * uses libpq's single-row mode, where the connection serves this query
 * alone until its last row is read, or it is reset or finalized (which
 * read and drop the rows left): nothing else may run on the database
 * between its first step and then (libpq refuses it, an error). */
void cf_db_stream(cf_db_stmt *s);
int cf_db_step(cf_db_stmt *s);
/* Steps a statement that returns no row: CF_OK, or the error for `what`. */
cf_status cf_db_step_done(cf_db_stmt *s, const char *what);
void cf_db_reset(cf_db_stmt *s);
void cf_db_finalize(cf_db_stmt *s);
int cf_db_column_is_null(cf_db_stmt *s, int col);
const char *cf_db_column_text(cf_db_stmt *s, int col);
size_t cf_db_column_bytes(cf_db_stmt *s, int col);
long long cf_db_column_int64(cf_db_stmt *s, int col);
int cf_db_column_int(cf_db_stmt *s, int col);
double cf_db_column_double(cf_db_stmt *s, int col);
/* The column as a number, NaN when NULL. */
double cf_db_column_number(cf_db_stmt *s, int col);
/* Copies a text column into out (truncated to n). */
void cf_db_column_copy(cf_db_stmt *s, int col, char *out, size_t n);
long long cf_db_changes(cf_db_stmt *s);

/* Writes a record's schema-2 rows (alternatives, CI, gates) for
 * recommendation `id`; called inside cf_history_insert's transaction. */
cf_status cf_db_insert_extras(cf_db *db, const cf_history_record *rec, long long id);
/* A new row's unique id (32 hex digits from the system's random source),
 * for `history migrate` to recognise rows it has already copied. */
cf_status cf_db_new_uid(char out[33]);

/* ---- opening (db/db.c, db/postgres.c) ---------------------------------- */
/* The errors of a schema this cloudfit cannot use: newer than it knows
 * (any command), or not its version (a read command, which never migrates). */
cf_status cf_db_schema_newer(cf_db *db, int version);
cf_status cf_db_schema_unreadable(cf_db *db, int version);
/* How long a writer waits for another's lock (CLOUDFIT_DB_LOCK_TIMEOUT_S). */
double cf_db_lock_timeout_s(void);
cf_status cf_db_sqlite_open(const char *path, int readonly, cf_db **out);
cf_status cf_db_postgres_open(const char *url, int readonly, cf_db **out);

/* Whether a URL query parameter's name, key[0..len), is libpq's
 * `password` once percent-decoded (db/backend.c). */
int cf_db_url_is_password_key(const char *key, size_t len);

#endif
