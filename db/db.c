#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/fileio.h"
#include "cloudfit/history.h"

struct cf_db {
    sqlite3 *handle;
    char path[1024];
};

/* Numbered migrations: migration i brings user_version from i to i+1.
 * Never edit a released migration; append a new one. */
static const char *const migrations[] = {
    /* 1: specs and recommendations */
    "CREATE TABLE specs ("
    "  hash TEXT PRIMARY KEY,"
    "  name TEXT NOT NULL,"
    "  json TEXT NOT NULL,"
    "  first_seen TEXT NOT NULL);"
    "CREATE TABLE recommendations ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  created_at TEXT NOT NULL,"
    "  tool_version TEXT NOT NULL,"
    "  spec_hash TEXT NOT NULL REFERENCES specs(hash),"
    "  spec_name TEXT NOT NULL,"
    "  objective TEXT NOT NULL,"
    "  catalog_name TEXT NOT NULL,"
    "  catalog_date TEXT NOT NULL,"
    "  cloud TEXT NOT NULL, region TEXT NOT NULL, instance_type TEXT NOT NULL, gpu TEXT NOT NULL,"
    "  gpus_per_node INTEGER NOT NULL, nodes INTEGER NOT NULL,"
    "  local_batch INTEGER NOT NULL, accumulation INTEGER NOT NULL, global_batch INTEGER NOT NULL,"
    "  lr REAL NOT NULL, spot INTEGER NOT NULL,"
    "  step_time_s REAL NOT NULL, hours REAL NOT NULL, total_usd REAL NOT NULL,"
    "  usd_per_node_hour REAL NOT NULL,"
    "  result_json TEXT NOT NULL);"
    "CREATE INDEX recommendations_spec ON recommendations(spec_hash, created_at);",
};

#define N_MIGRATIONS ((int)(sizeof migrations / sizeof *migrations))

static cf_status db_error(cf_db *db, const char *what)
{
    return cf_error_set(CF_ERR_DB, "%s '%s': %s", what, db->path, sqlite3_errmsg(db->handle));
}

static cf_status exec_sql(cf_db *db, const char *sql, const char *what)
{
    char *err = NULL;
    if (sqlite3_exec(db->handle, sql, NULL, NULL, &err) != SQLITE_OK) {
        cf_status st = cf_error_set(CF_ERR_DB, "%s '%s': %s", what, db->path, err ? err : "unknown error");
        sqlite3_free(err);
        return st;
    }
    return CF_OK;
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
        cf_status st = exec_sql(db, "BEGIN IMMEDIATE", "cannot lock database");
        if (st != CF_OK)
            return st;
        int version = cf_db_schema_version(db);
        if (version < 0) {
            exec_sql(db, "ROLLBACK", "rollback");
            return db_error(db, "cannot read schema version of");
        }
        if (version > N_MIGRATIONS) {
            exec_sql(db, "ROLLBACK", "rollback");
            cf_error_set(CF_ERR_DB, "database '%s' has schema version %d, newer than this cloudfit knows (%d)",
                         db->path, version, N_MIGRATIONS);
            cf_error_hint("upgrade cloudfit, or use another database with --db");
            return CF_ERR_DB;
        }
        if (version == N_MIGRATIONS)
            return exec_sql(db, "COMMIT", "cannot commit");
        char bump[64];
        snprintf(bump, sizeof bump, "PRAGMA user_version = %d", version + 1);
        if ((st = exec_sql(db, migrations[version], "cannot migrate database")) != CF_OK ||
            (st = exec_sql(db, bump, "cannot migrate database")) != CF_OK ||
            (st = exec_sql(db, "COMMIT", "cannot commit migration of")) != CF_OK) {
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
    cf_status st = exec_sql(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;",
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

static int bind_text(sqlite3_stmt *stmt, int index, const char *text)
{
    return sqlite3_bind_text(stmt, index, text ? text : "", -1, SQLITE_TRANSIENT);
}

static cf_status insert_spec(cf_db *db, const cf_history_record *rec)
{
    sqlite3_stmt *stmt = NULL;
    if (sqlite3_prepare_v2(db->handle,
                           "INSERT OR IGNORE INTO specs(hash, name, json, first_seen) VALUES (?1, ?2, ?3, ?4)",
                           -1, &stmt, NULL) != SQLITE_OK)
        return db_error(db, "cannot prepare insert into");
    bind_text(stmt, 1, rec->spec_hash);
    bind_text(stmt, 2, rec->spec_name);
    bind_text(stmt, 3, rec->spec_json);
    bind_text(stmt, 4, rec->created_at);
    int rc = sqlite3_step(stmt);
    sqlite3_finalize(stmt);
    return rc == SQLITE_DONE ? CF_OK : db_error(db, "cannot write spec to");
}

static cf_status insert_recommendation(cf_db *db, const cf_history_record *rec, long long *out_id)
{
    static const char sql[] =
        "INSERT INTO recommendations(created_at, tool_version, spec_hash, spec_name, objective, catalog_name,"
        " catalog_date, cloud, region, instance_type, gpu, gpus_per_node, nodes, local_batch, accumulation,"
        " global_batch, lr, spot, step_time_s, hours, total_usd, usd_per_node_hour, result_json)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20,"
        " ?21, ?22, ?23)";
    sqlite3_stmt *stmt = NULL;
    if (sqlite3_prepare_v2(db->handle, sql, -1, &stmt, NULL) != SQLITE_OK)
        return db_error(db, "cannot prepare insert into");
    const char *texts[] = {rec->created_at, rec->tool_version, rec->spec_hash, rec->spec_name, rec->objective,
                           rec->catalog_name, rec->catalog_date, rec->cloud, rec->region, rec->instance_type,
                           rec->gpu};
    for (int i = 0; i < 11; i++)
        bind_text(stmt, i + 1, texts[i]);
    sqlite3_bind_int(stmt, 12, rec->gpus_per_node);
    sqlite3_bind_int(stmt, 13, rec->nodes);
    sqlite3_bind_int(stmt, 14, rec->local_batch);
    sqlite3_bind_int(stmt, 15, rec->accumulation);
    sqlite3_bind_int64(stmt, 16, rec->global_batch);
    sqlite3_bind_double(stmt, 17, rec->lr);
    sqlite3_bind_int(stmt, 18, rec->spot);
    sqlite3_bind_double(stmt, 19, rec->step_time_s);
    sqlite3_bind_double(stmt, 20, rec->hours);
    sqlite3_bind_double(stmt, 21, rec->total_usd);
    sqlite3_bind_double(stmt, 22, rec->usd_per_node_hour);
    bind_text(stmt, 23, rec->result_json);
    int rc = sqlite3_step(stmt);
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE)
        return db_error(db, "cannot write recommendation to");
    if (out_id)
        *out_id = sqlite3_last_insert_rowid(db->handle);
    return CF_OK;
}

cf_status cf_history_insert(cf_db *db, const cf_history_record *rec, long long *out_id)
{
    cf_status st = exec_sql(db, "BEGIN IMMEDIATE", "cannot lock database");
    if (st != CF_OK)
        return st;
    if ((st = insert_spec(db, rec)) != CF_OK || (st = insert_recommendation(db, rec, out_id)) != CF_OK) {
        sqlite3_exec(db->handle, "ROLLBACK", NULL, NULL, NULL);
        return st;
    }
    st = exec_sql(db, "COMMIT", "cannot commit to");
    if (st != CF_OK)
        sqlite3_exec(db->handle, "ROLLBACK", NULL, NULL, NULL);
    return st;
}

cf_status cf_history_count(cf_db *db, long long *out_count)
{
    sqlite3_stmt *stmt = NULL;
    *out_count = 0;
    if (sqlite3_prepare_v2(db->handle, "SELECT count(*) FROM recommendations", -1, &stmt, NULL) != SQLITE_OK)
        return db_error(db, "cannot query");
    if (sqlite3_step(stmt) == SQLITE_ROW)
        *out_count = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    return CF_OK;
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
