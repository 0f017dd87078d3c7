/* The storage interface's statement functions (db/db_internal.h): one
 * name for both backends, each a call through the open database's driver. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cloudfit/common/proc.h"
#include "db_internal.h"

/* The driver's COMMIT, marked for the stop signals: from here a stop can no
 * longer promise that nothing was stored (common/proc.h). */
static cf_status commit_marked(cf_db *db)
{
    cf_proc_commit_begin();
    cf_status st = db->driver->commit(db);
    cf_proc_commit_end(st == CF_OK);
    return st;
}

cf_status cf_db_error(cf_db *db, const char *what) { return db->driver->error(db, what); }

cf_status cf_db_exec(cf_db *db, const char *sql, const char *what) { return db->driver->exec(db, sql, what); }

cf_status cf_db_transaction(cf_db *db, cf_status (*body)(cf_db *db, void *ctx), void *ctx)
{
    if (db->held) {
        cf_status st = body(db, ctx);
        if (st != CF_OK) {
            db->driver->rollback(db);
            db->held = 0;
        }
        return st;
    }
    cf_status st = db->driver->begin(db);
    if (st != CF_OK)
        return st;
    if ((st = body(db, ctx)) == CF_OK)
        st = commit_marked(db);
    if (st != CF_OK)
        db->driver->rollback(db);
    return st;
}

cf_status cf_db_hold(cf_db *db)
{
    if (db->held)
        return cf_error_set(CF_ERR_INTERNAL, "'%s' is already held", db->path);
    cf_status st = db->driver->begin(db);
    db->held = st == CF_OK;
    return st;
}

cf_status cf_db_read_snapshot(cf_db *db, cf_status (*body)(cf_db *db, void *ctx), void *ctx)
{
    if (db->held)
        return body(db, ctx);
    /* SQLite: a deferred BEGIN takes its snapshot at the first read and
     * no lock (WAL); PostgreSQL: one snapshot for the transaction */
    cf_status st = cf_db_exec(db, strcmp(cf_db_backend(db), "postgresql") == 0 ? "BEGIN ISOLATION LEVEL REPEATABLE READ"
                                                                                  : "BEGIN",
                              "cannot read");
    if (st != CF_OK)
        return st;
    st = body(db, ctx);
    db->driver->rollback(db); /* nothing was written */
    return st;
}

cf_status cf_db_release(cf_db *db, int commit)
{
    if (!db || !db->held)
        return CF_OK;
    db->held = 0;
    if (!commit) {
        db->driver->rollback(db);
        return CF_OK;
    }
    cf_status st = commit_marked(db);
    if (st != CF_OK)
        db->driver->rollback(db);
    return st;
}

cf_status cf_db_prepare(cf_db *db, const char *sql, cf_db_stmt **out) { return db->driver->prepare(db, sql, out); }

void cf_db_bind_text(cf_db_stmt *s, int index, const char *text)
{
    text = text ? text : "";
    s->db->driver->bind_text(s, index, text, strlen(text));
}

void cf_db_bind_blob_text(cf_db_stmt *s, int index, const char *text, size_t len)
{
    s->db->driver->bind_text(s, index, text ? text : "", text ? len : 0);
}

void cf_db_bind_int64(cf_db_stmt *s, int index, long long v) { s->db->driver->bind_int64(s, index, v); }

void cf_db_bind_double(cf_db_stmt *s, int index, double v)
{
    if (isnan(v))
        s->db->driver->bind_null(s, index, 1);
    else
        s->db->driver->bind_double(s, index, v);
}

void cf_db_bind_null(cf_db_stmt *s, int index) { s->db->driver->bind_null(s, index, 0); }

void cf_db_stream(cf_db_stmt *s) { s->stream = 1; }

int cf_db_step(cf_db_stmt *s) { return s->db->driver->step(s); }

cf_status cf_db_step_done(cf_db_stmt *s, const char *what)
{
    int rc = cf_db_step(s);
    return rc == CF_DB_DONE ? CF_OK : cf_db_error(s->db, what);
}

void cf_db_reset(cf_db_stmt *s) { s->db->driver->reset(s); }

void cf_db_finalize(cf_db_stmt *s)
{
    if (s)
        s->db->driver->finalize(s);
}

int cf_db_column_is_null(cf_db_stmt *s, int col) { return s->db->driver->column_is_null(s, col); }

const char *cf_db_column_text(cf_db_stmt *s, int col)
{
    size_t len;
    return s->db->driver->column_text(s, col, &len);
}

size_t cf_db_column_bytes(cf_db_stmt *s, int col)
{
    size_t len;
    s->db->driver->column_text(s, col, &len);
    return len;
}

long long cf_db_column_int64(cf_db_stmt *s, int col) { return s->db->driver->column_int64(s, col); }

int cf_db_column_int(cf_db_stmt *s, int col) { return (int)s->db->driver->column_int64(s, col); }

double cf_db_column_double(cf_db_stmt *s, int col) { return s->db->driver->column_double(s, col); }

double cf_db_column_number(cf_db_stmt *s, int col)
{
    return cf_db_column_is_null(s, col) ? NAN : cf_db_column_double(s, col);
}

void cf_db_column_copy(cf_db_stmt *s, int col, char *out, size_t n)
{
    snprintf(out, n, "%s", cf_db_column_text(s, col));
}

long long cf_db_changes(cf_db_stmt *s) { return s->db->driver->changes(s); }
