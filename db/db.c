#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/fileio.h"
#include "cloudfit/db/history.h"
#include "db_internal.h"


cf_status cf_db_error(cf_db *db, const char *what)
{
    return cf_error_set(CF_ERR_DB, "%s '%s': %s", what, db->path, sqlite3_errmsg(db->handle));
}

cf_status cf_db_exec(cf_db *db, const char *sql, const char *what)
{
    char *err = NULL;
    if (sqlite3_exec(db->handle, sql, NULL, NULL, &err) != SQLITE_OK) {
        cf_status st = cf_error_set(CF_ERR_DB, "%s '%s': %s", what, db->path, err ? err : "unknown error");
        sqlite3_free(err);
        return st;
    }
    return CF_OK;
}

cf_status cf_db_transaction(cf_db *db, cf_status (*body)(cf_db *db, void *ctx), void *ctx)
{
    cf_status st = cf_db_exec(db, "BEGIN IMMEDIATE", "cannot lock database");
    if (st != CF_OK)
        return st;
    if ((st = body(db, ctx)) == CF_OK)
        st = cf_db_exec(db, "COMMIT", "cannot commit to");
    if (st != CF_OK)
        sqlite3_exec(db->handle, "ROLLBACK", NULL, NULL, NULL);
    return st;
}

int cf_db_schema_version(cf_db *db)
{
    sqlite3_stmt *stmt = NULL;
    int version = -1;
    if (sqlite3_prepare_v2(db->handle, "PRAGMA user_version", -1, &stmt, NULL) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW)
        version = sqlite3_column_int(stmt, 0);
    sqlite3_finalize(stmt);
    return version;
}

/* Applies pending migrations, each in its own IMMEDIATE transaction so two
 * processes opening a new database at once cannot both apply one. */
static cf_status migrate(cf_db *db)
{
    for (;;) {
        cf_status st = cf_db_exec(db, "BEGIN IMMEDIATE", "cannot lock database");
        if (st != CF_OK)
            return st;
        int version = cf_db_schema_version(db);
        if (version < 0) {
            cf_db_exec(db, "ROLLBACK", "rollback");
            return cf_db_error(db, "cannot read schema version of");
        }
        if (version > cf_db_migration_count) {
            cf_db_exec(db, "ROLLBACK", "rollback");
            cf_error_set(CF_ERR_DB, "database '%s' has schema version %d, newer than this cloudfit knows (%d)",
                         db->path, version, cf_db_migration_count);
            cf_error_hint("upgrade cloudfit, or use another database with --db");
            return CF_ERR_DB;
        }
        if (version == cf_db_migration_count)
            return cf_db_exec(db, "COMMIT", "cannot commit");
        char bump[64];
        snprintf(bump, sizeof bump, "PRAGMA user_version = %d", version + 1);
        if ((st = cf_db_exec(db, cf_db_migrations[version], "cannot migrate database")) != CF_OK ||
            (st = cf_db_exec(db, bump, "cannot migrate database")) != CF_OK ||
            (st = cf_db_exec(db, "COMMIT", "cannot commit migration of")) != CF_OK) {
            sqlite3_exec(db->handle, "ROLLBACK", NULL, NULL, NULL);
            return st;
        }
    }
}

cf_status cf_db_open(const char *path, cf_db **out)
{
    *out = NULL;
    cf_db *db = calloc(1, sizeof *db);
    if (!db)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    snprintf(db->path, sizeof db->path, "%s", path);
    if (sqlite3_open_v2(path, &db->handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        cf_status st = cf_error_set(CF_ERR_DB, "cannot open database '%s': %s", path,
                                    db->handle ? sqlite3_errmsg(db->handle) : "out of memory");
        sqlite3_close(db->handle);
        free(db);
        return st;
    }
    sqlite3_busy_timeout(db->handle, 30000);
    cf_status st = cf_db_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;",
                            "cannot configure database");
    if (st == CF_OK)
        st = migrate(db);
    if (st != CF_OK) {
        sqlite3_close(db->handle);
        free(db);
        return st;
    }
    *out = db;
    return CF_OK;
}

void cf_db_close(cf_db *db)
{
    if (!db)
        return;
    sqlite3_close(db->handle);
    free(db);
}

cf_status cf_db_default_path(char *out, size_t n)
{
    const char *xdg = getenv("XDG_DATA_HOME");
    const char *home = getenv("HOME");
    int written;
    if (xdg && *xdg == '/')
        written = snprintf(out, n, "%s/cloudfit/history.db", xdg);
    else if (home && *home)
        written = snprintf(out, n, "%s/.local/share/cloudfit/history.db", home);
    else {
        cf_error_set(CF_ERR_DB, "cannot find a place for the history database: neither XDG_DATA_HOME nor HOME is set");
        cf_error_hint("pass --db PATH or --no-history");
        return CF_ERR_DB;
    }
    if (written < 0 || (size_t)written >= n)
        return cf_error_set(CF_ERR_DB, "history database path is too long");
    return CF_OK;
}
