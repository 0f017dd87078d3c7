/* Shared by the files of db/ only. */
#ifndef CLOUDFIT_DB_INTERNAL_H
#define CLOUDFIT_DB_INTERNAL_H
#include <sqlite3.h>

#include "cloudfit/db/history.h"

struct cf_db {
    sqlite3 *handle;
    char path[1024];
    int readonly;     /* opened by cf_db_open_readonly */
    double busy_since_s, waited_s; /* the current lock wait: when it began, how long it lasted (monotonic s) */
    char copy_dir[512];   /* "" or the private folder holding the copy that is read (db.c: open_copy) */
};

/* Numbered migrations: entry i brings user_version from i to i+1. Never
 * edit one that has been released; append a new one. */
extern const char *const cf_db_migrations[];
extern const int cf_db_migration_count;

/* "WHAT 'path': sqlite message" as CF_ERR_DB. */
cf_status cf_db_error(cf_db *db, const char *what);
/* Runs body(db, ctx) inside one BEGIN IMMEDIATE transaction: committed when
 * body returns CF_OK, rolled back when it fails or the commit does, so a
 * writer killed or failing halfway leaves nothing behind. */
cf_status cf_db_transaction(cf_db *db, cf_status (*body)(cf_db *db, void *ctx), void *ctx);
/* Runs SQL without results; errors as above. */
cf_status cf_db_exec(cf_db *db, const char *sql, const char *what);
/* Binds text (NULL as ""), copying it. */
int cf_db_bind_text(sqlite3_stmt *stmt, int index, const char *text);
/* Writes a record's schema-2 rows (alternatives, CI, gates) for
 * recommendation `id`; called inside cf_history_insert's transaction. */
cf_status cf_db_insert_extras(cf_db *db, const cf_history_record *rec, long long id);

#endif
