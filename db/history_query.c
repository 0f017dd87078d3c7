/* Reading the history back: list with filters, one row, its alternatives
 * and gates, the newest row for a spec, prune, and recorded measurements.
 * Every value reaches SQLite as a bound parameter; filters are built from
 * fixed SQL fragments only. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/buf.h"
#include "cloudfit/db/history.h"
#include "db_internal.h"

#define ROW_LISTED                                                                                              \
    "r.id, r.created_at, r.tool_version, r.spec_hash, r.spec_name, r.objective, r.catalog_name, r.catalog_date," \
    " r.cloud, r.region, r.instance_type, r.gpu, r.gpus_per_node, r.nodes, r.local_batch, r.accumulation,"     \
    " r.global_batch, r.lr, r.spot, r.step_time_s, r.hours, r.total_usd, r.usd_per_node_hour,"                 \
    " c.provider, c.commit_sha, c.branch, c.base_branch, c.pull_request, c.run_id, c.run_url"
/* These follow result_json in each row: reading them reads through the
 * stored document (a list of 100,000 rows took 1.3 s longer with them) */
#define ROW_EXTRA " r.identity, r.hours_p10, r.hours_p90, r.total_usd_p10, r.total_usd_p90"
#define ROW_COLUMNS ROW_LISTED "," ROW_EXTRA
#define ROW_FROM " FROM recommendations r LEFT JOIN ci_runs c ON c.recommendation_id = r.id"

static void copy_text(char *out, size_t n, cf_db_stmt *stmt, int col) { cf_db_column_copy(stmt, col, out, n); }

static double column_number(cf_db_stmt *stmt, int col) { return cf_db_column_number(stmt, col); }

/* Columns `first`.. of an alternatives-shaped row (cloud .. usd_per_node_hour). */
static void read_config(cf_db_stmt *stmt, int first, cf_history_config *c)
{
    copy_text(c->cloud, sizeof c->cloud, stmt, first);
    copy_text(c->region, sizeof c->region, stmt, first + 1);
    copy_text(c->instance_type, sizeof c->instance_type, stmt, first + 2);
    copy_text(c->gpu, sizeof c->gpu, stmt, first + 3);
    c->gpus_per_node = cf_db_column_int(stmt, first + 4);
    c->nodes = cf_db_column_int(stmt, first + 5);
    c->local_batch = cf_db_column_int(stmt, first + 6);
    c->accumulation = cf_db_column_int(stmt, first + 7);
    c->global_batch = (long)cf_db_column_int64(stmt, first + 8);
    c->lr = cf_db_column_double(stmt, first + 9);
    int spot = cf_db_column_int(stmt, first + 10); /* 2: spot+od (cf_history_config.mixed) */
    c->spot = spot != 0;
    c->mixed = spot == 2;
    c->step_time_s = cf_db_column_double(stmt, first + 11);
    c->hours = cf_db_column_double(stmt, first + 12);
    c->total_usd = cf_db_column_double(stmt, first + 13);
    c->usd_per_node_hour = cf_db_column_double(stmt, first + 14);
}

static void read_row(cf_db_stmt *stmt, cf_history_row *r)
{
    memset(r, 0, sizeof *r);
    r->id = cf_db_column_int64(stmt, 0);
    copy_text(r->created_at, sizeof r->created_at, stmt, 1);
    copy_text(r->tool_version, sizeof r->tool_version, stmt, 2);
    copy_text(r->spec_hash, sizeof r->spec_hash, stmt, 3);
    copy_text(r->spec_name, sizeof r->spec_name, stmt, 4);
    copy_text(r->objective, sizeof r->objective, stmt, 5);
    copy_text(r->catalog_name, sizeof r->catalog_name, stmt, 6);
    copy_text(r->catalog_date, sizeof r->catalog_date, stmt, 7);
    r->chosen.rank = 1;
    read_config(stmt, 8, &r->chosen);
    cf_ci_info *ci = &r->ci;
    copy_text(ci->provider, sizeof ci->provider, stmt, 23);
    copy_text(ci->commit, sizeof ci->commit, stmt, 24);
    copy_text(ci->branch, sizeof ci->branch, stmt, 25);
    copy_text(ci->base_branch, sizeof ci->base_branch, stmt, 26);
    copy_text(ci->pull_request, sizeof ci->pull_request, stmt, 27);
    copy_text(ci->run_id, sizeof ci->run_id, stmt, 28);
    copy_text(ci->run_url, sizeof ci->run_url, stmt, 29);
    copy_text(r->identity, sizeof r->identity, stmt, 30);
    r->hours_p10 = column_number(stmt, 31);
    r->hours_p90 = column_number(stmt, 32);
    r->total_usd_p10 = column_number(stmt, 33);
    r->total_usd_p90 = column_number(stmt, 34);
}

void cf_history_rows_free(cf_history_row *rows, size_t n)
{
    if (!rows)
        return;
    for (size_t i = 0; i < n; i++)
        free(rows[i].result_json);
    free(rows);
}

/* cf_history_list's callback: every row into a growing array. */
typedef struct {
    cf_history_row *rows;
    size_t n, cap;
} collected_rows;

static cf_status collect_row(void *ctx, const cf_history_row *row)
{
    collected_rows *c = ctx;
    if (c->n == c->cap) {
        size_t new_cap = c->cap ? 2 * c->cap : 16;
        cf_history_row *grown = realloc(c->rows, new_cap * sizeof *c->rows);
        if (!grown)
            return cf_error_set(CF_ERR_NOMEM, "out of memory reading the history");
        c->rows = grown;
        c->cap = new_cap;
    }
    c->rows[c->n++] = *row;
    return CF_OK;
}

cf_status cf_history_list(cf_db *db, const cf_history_filter *f, cf_history_row **out, size_t *n_out)
{
    collected_rows c = {0};
    cf_status st = cf_history_each(db, f, collect_row, &c);
    if (st != CF_OK) {
        free(c.rows);
        c.rows = NULL;
        c.n = 0;
    }
    *out = c.rows;
    *n_out = c.n;
    return st;
}

/* " AND (lower(r.COLUMN) = lower(CAST(? AS TEXT)) OR …)": one value of
 * `one` or of the list (any of them); nothing when neither is given. */
static void any_of(cf_buf *sql, const char **values, int *n_values, const char *column, const char *one,
                   const char *const *list, size_t n_list)
{
    if (one) {
        list = &one;
        n_list = 1;
    }
    for (size_t i = 0; i < n_list; i++) {
        cf_buf_printf(sql, "%slower(r.%s) = lower(CAST(? AS TEXT))", i ? " OR " : " AND (", column);
        values[(*n_values)++] = list[i];
    }
    if (n_list)
        cf_buf_puts(sql, ")");
}

cf_status cf_history_each(cf_db *db, const cf_history_filter *f, cf_history_row_fn fn, void *ctx)
{
    /* Fixed fragments, one per filter given; the values are bound below in
     * the same order. */
    size_t n_clouds = f->cloud ? 1 : f->n_clouds, n_gpus = f->gpu ? 1 : f->n_gpus;
    const char **values = malloc((16 + n_clouds + n_gpus) * sizeof *values);
    int n_values = 0;
    cf_buf sql = CF_BUF_INIT;
    if (!values)
        return cf_error_set(CF_ERR_NOMEM, "out of memory reading the history");
    cf_buf_puts(&sql, f->listed_only ? "SELECT " ROW_LISTED ", NULL, NULL, NULL, NULL, NULL" ROW_FROM " WHERE 1 = 1"
                                     : "SELECT " ROW_COLUMNS ROW_FROM " WHERE 1 = 1");
    struct {
        const char *value;
        const char *fragment;
        int uses;                /* how many '?' the fragment holds (all bound to value) */
    } clauses[] = {
        {f->spec_name, " AND r.spec_name = ?", 1},
        {f->spec_hash, " AND substr(r.spec_hash, 1, length(CAST(? AS TEXT))) = CAST(? AS TEXT)", 2},
        {f->identity && f->source_hash ? NULL : f->source_hash, " AND coalesce(r.source_hash, r.spec_hash) = ?", 1},
        {f->since, " AND r.created_at >= ?", 1},
        {f->until, " AND r.created_at < ?", 1},
        {f->branch, f->branch_runs_only ? " AND c.branch = ? AND coalesce(c.pull_request, '') = ''" : " AND c.branch = ?",
         1},
        {f->identity && !f->source_hash ? f->identity : NULL, " AND r.identity = ?", 1},
    };
    for (size_t i = 0; i < sizeof clauses / sizeof *clauses; i++) {
        if (!clauses[i].value)
            continue;
        for (int k = 0; k < clauses[i].uses; k++)
            values[n_values++] = clauses[i].value;
        cf_buf_puts(&sql, clauses[i].fragment);
    }
    any_of(&sql, values, &n_values, "cloud", f->cloud, f->clouds, f->n_clouds);
    any_of(&sql, values, &n_values, "gpu", f->gpu, f->gpus, f->n_gpus);
    if (f->identity && f->source_hash) {
        /* the identity, or a row from before identities of the same spec file */
        values[n_values++] = f->identity;
        values[n_values++] = f->source_hash;
        cf_buf_puts(&sql, " AND (r.identity = ? OR (r.identity IS NULL AND coalesce(r.source_hash, r.spec_hash) = ?))");
    }
    if (f->later_last) {
        values[n_values++] = f->later_last;
        cf_buf_puts(&sql, " ORDER BY (r.created_at > ?) ASC, r.created_at DESC, r.id DESC");
    } else {
        cf_buf_puts(&sql, " ORDER BY r.created_at DESC, r.id DESC");
    }
    if (f->limit > 0)
        cf_buf_printf(&sql, " LIMIT %d", f->limit);
    cf_db_stmt *stmt = NULL;
    cf_status st = CF_OK;
    if (cf_buf_failed(&sql))
        st = cf_error_set(CF_ERR_NOMEM, "out of memory reading the history");
    else if (cf_db_prepare(db, sql.data, &stmt) != CF_OK)
        st = cf_db_error(db, "cannot query");
    for (int i = 0; st == CF_OK && i < n_values; i++)
        cf_db_bind_text(stmt, i + 1, values[i]);
    if (st == CF_OK)
        cf_db_stream(stmt); /* fn must not use the database meanwhile */
    free(values);
    cf_buf_free(&sql);
    /* One row at a time, handed over as it is read (on PostgreSQL too, in
     * libpq's single-row mode): nothing here grows with the number of rows. */
    int rc = CF_DB_DONE;
    cf_history_row row;
    while (st == CF_OK && (rc = cf_db_step(stmt)) == CF_DB_ROW) {
        read_row(stmt, &row);
        st = fn(ctx, &row);
    }
    if (st == CF_OK && rc != CF_DB_DONE)
        st = cf_db_error(db, "cannot read history from");
    cf_db_finalize(stmt);
    return st;
}

cf_status cf_history_get(cf_db *db, long long id, cf_history_row *out)
{
    cf_db_stmt *stmt = NULL;
    if (cf_db_prepare(db, "SELECT " ROW_COLUMNS ", r.result_json" ROW_FROM " WHERE r.id = ?1", &stmt) != CF_OK)
        return cf_db_error(db, "cannot query");
    cf_db_bind_int64(stmt, 1, id);
    int rc = cf_db_step(stmt);
    cf_status st = CF_OK;
    if (rc == CF_DB_ROW) {
        read_row(stmt, out);
        out->result_json = strdup(cf_db_column_text(stmt, 35));
        if (!out->result_json)
            st = cf_error_set(CF_ERR_NOMEM, "out of memory");
    } else if (rc == CF_DB_DONE) {
        cf_error_set(CF_ERR_INVALID, "no recommendation %lld in '%s'", id, db->path);
        cf_error_hint("see 'cloudfit history' for the stored ids");
        st = CF_ERR_INVALID;
    } else {
        st = cf_db_error(db, "cannot read history from");
    }
    cf_db_finalize(stmt);
    return st;
}

cf_status cf_history_alternatives(cf_db *db, long long id, cf_history_config **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    cf_db_stmt *stmt = NULL;
    if (cf_db_prepare(db,
                      "SELECT rank, cloud, region, instance_type, gpu, gpus_per_node, nodes, local_batch,"
                      " accumulation, global_batch, lr, spot, step_time_s, hours, total_usd, usd_per_node_hour"
                      " FROM alternatives WHERE recommendation_id = ?1 ORDER BY rank",
                      &stmt) != CF_OK)
        return cf_db_error(db, "cannot query");
    cf_db_bind_int64(stmt, 1, id);
    size_t n = 0, cap = 0;
    cf_history_config *rows = NULL;
    int rc;
    cf_status st = CF_OK;
    while ((rc = cf_db_step(stmt)) == CF_DB_ROW) {
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            cf_history_config *grown = realloc(rows, cap * sizeof *rows);
            if (!grown) {
                st = cf_error_set(CF_ERR_NOMEM, "out of memory");
                break;
            }
            rows = grown;
        }
        memset(&rows[n], 0, sizeof rows[n]);
        rows[n].rank = cf_db_column_int(stmt, 0);
        read_config(stmt, 1, &rows[n]);
        n++;
    }
    if (st == CF_OK && rc != CF_DB_DONE)
        st = cf_db_error(db, "cannot read alternatives from");
    cf_db_finalize(stmt);
    if (st != CF_OK) {
        free(rows);
        return st;
    }
    *out = rows;
    *n_out = n;
    return CF_OK;
}

cf_status cf_history_gates(cf_db *db, long long id, cf_history_gate **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    cf_db_stmt *stmt = NULL;
    if (cf_db_prepare(db,
                      "SELECT name, limit_value, value, passed, note FROM gate_results"
                      " WHERE recommendation_id = ?1 ORDER BY seq, name",
                      &stmt) != CF_OK)
        return cf_db_error(db, "cannot query");
    cf_db_bind_int64(stmt, 1, id);
    size_t n = 0;
    cf_history_gate *rows = NULL;
    int rc;
    cf_status st = CF_OK;
    while ((rc = cf_db_step(stmt)) == CF_DB_ROW) {
        cf_history_gate *grown = realloc(rows, (n + 1) * sizeof *rows);
        if (!grown) {
            st = cf_error_set(CF_ERR_NOMEM, "out of memory");
            break;
        }
        rows = grown;
        cf_history_gate *g = &rows[n++];
        copy_text(g->name, sizeof g->name, stmt, 0);
        g->limit = cf_db_column_double(stmt, 1);
        g->value = column_number(stmt, 2);
        g->passed = cf_db_column_int(stmt, 3);
        copy_text(g->note, sizeof g->note, stmt, 4);
    }
    if (st == CF_OK && rc != CF_DB_DONE)
        st = cf_db_error(db, "cannot read gates from");
    cf_db_finalize(stmt);
    if (st != CF_OK) {
        free(rows);
        return st;
    }
    *out = rows;
    *n_out = n;
    return CF_OK;
}

cf_status cf_history_latest(cf_db *db, const char *identity, const char *source_hash, const char *branch,
                            const char *now, cf_history_row *out, int *found)
{
    *found = 0;
    cf_history_filter f = {.identity = identity, .source_hash = source_hash, .branch = branch, .branch_runs_only = 1,
                           .limit = 1, .later_last = now};
    cf_history_row *rows = NULL;
    size_t n = 0;
    cf_status st = cf_history_list(db, &f, &rows, &n);
    if (st != CF_OK)
        return st;
    if (n == 1) {
        *out = rows[0];
        out->result_json = NULL;
        *found = 1;
    }
    cf_history_rows_free(rows, n);
    return CF_OK;
}

typedef struct {
    const char *before;
    long long deleted;
} prune_ctx;

/* On PostgreSQL, prune first waits for every transaction that wrote to
 * specs (recommend, history migrate: each inserts its spec before the
 * rows that reference it) and keeps new ones out until it commits:
 * SHARE ROW EXCLUSIVE conflicts with the ROW EXCLUSIVE lock each INSERT
 * takes on the table (also one its ON CONFLICT DO NOTHING skipped), with
 * the one a record takes (wait_for_prune) and with itself (two prunes).
 * Then its DELETE sees every committed recommendation, and no writer can
 * be between its spec and its recommendation: without the lock, a writer
 * whose spec was there already (the insert skipped, nothing locked) lost
 * it to the prune, which could not see the uncommitted recommendation,
 * and failed on the foreign key
 * (the recommendation lost); or prune failed on it, when the writer
 * committed between prune's look and its delete. The writers lock nothing
 * more: they do not wait for each other. Bounded like any lock wait
 * (lock_timeout). SQLite has one writer at a time (BEGIN IMMEDIATE). */
static cf_status lock_out_spec_writers(cf_db *db)
{
    if (strcmp(cf_db_backend(db), "postgresql") != 0)
        return CF_OK;
    return cf_db_exec(db, "LOCK TABLE specs IN SHARE ROW EXCLUSIVE MODE", "cannot prune");
}

static cf_status prune_body(cf_db *db, void *data)
{
    prune_ctx *x = data;
    cf_status st = lock_out_spec_writers(db);
    if (st != CF_OK)
        return st;
    cf_db_stmt *stmt = NULL;
    int ok = cf_db_prepare(db, "DELETE FROM recommendations WHERE created_at < ?1", &stmt) == CF_OK;
    if (ok) {
        cf_db_bind_text(stmt, 1, x->before);
        ok = cf_db_step(stmt) == CF_DB_DONE;
        x->deleted = cf_db_changes(stmt);
    }
    cf_db_finalize(stmt);
    if (!ok)
        return cf_db_error(db, "cannot prune");
    return cf_db_exec(db, "DELETE FROM specs WHERE hash NOT IN (SELECT spec_hash FROM recommendations)",
                      "cannot prune");
}

cf_status cf_history_prune(cf_db *db, const char *before, long long *n_deleted)
{
    prune_ctx x = {before, 0};
    cf_status st = cf_db_transaction(db, prune_body, &x);
    *n_deleted = st == CF_OK ? x.deleted : 0;
    return st;
}

/* On PostgreSQL, a record waits for a prune running at that moment and
 * keeps the next one out until it commits: ROW EXCLUSIVE on specs, what
 * recommend's INSERT takes there (lock_out_spec_writers, above). Without
 * it a prune that had deleted the recommendation, not yet committed, let
 * the record's INSERT … SELECT see the row and fail on the foreign key
 * once the prune committed ("violates foreign key constraint", exit 1);
 * now its SELECT runs after the prune and finds no such recommendation,
 * as on SQLite (one writer at a time). */
static cf_status wait_for_prune(cf_db *db)
{
    if (strcmp(cf_db_backend(db), "postgresql") != 0)
        return CF_OK;
    return cf_db_exec(db, "LOCK TABLE specs IN ROW EXCLUSIVE MODE", "cannot write measurement to");
}

static cf_status record_body(cf_db *db, void *data)
{
    static const char sql[] =
        "INSERT INTO measurements(recommendation_id, recorded_at, spec_hash, spec_name, cloud, instance_type, gpu,"
        " gpus_per_node, nodes, local_batch, accumulation, step_time_s, total_hours, total_usd,"
        " predicted_step_time_s, predicted_hours, predicted_total_usd, note, source_hash, uid, after_recommendation)"
        " SELECT id, ?2, spec_hash, spec_name, cloud, instance_type, gpu, gpus_per_node, nodes, local_batch,"
        " accumulation, ?3, ?4, ?5, step_time_s, hours, total_usd, ?6, coalesce(source_hash, spec_hash), ?7,"
        " (SELECT max(newest.id) FROM recommendations newest)" /* the baselines this run comes after */
        " FROM recommendations WHERE id = ?1 RETURNING id";
    cf_history_measurement *m = data;
    char uid[33];
    cf_status st = cf_db_new_uid(uid);
    if (st == CF_OK)
        st = wait_for_prune(db);
    if (st != CF_OK)
        return st;
    cf_db_stmt *stmt = NULL;
    if (cf_db_prepare(db, sql, &stmt) != CF_OK)
        return cf_db_error(db, "cannot prepare insert into");
    cf_db_bind_int64(stmt, 1, m->recommendation_id);
    cf_db_bind_text(stmt, 2, m->recorded_at);
    cf_db_bind_double(stmt, 3, m->step_time_s);
    cf_db_bind_double(stmt, 4, m->total_hours);
    cf_db_bind_double(stmt, 5, m->total_usd);
    cf_db_bind_text(stmt, 6, m->note);
    cf_db_bind_text(stmt, 7, uid);
    int rc = cf_db_step(stmt);
    if (rc == CF_DB_ROW) {
        m->id = cf_db_column_int64(stmt, 0);
    } else if (rc == CF_DB_DONE) { /* the SELECT found no such recommendation */
        cf_error_set(CF_ERR_INVALID, "no recommendation %lld in '%s'", m->recommendation_id, db->path);
        cf_error_hint("see 'cloudfit history' for the stored ids");
        st = CF_ERR_INVALID;
    } else {
        st = cf_db_error(db, "cannot write measurement to");
    }
    cf_db_finalize(stmt);
    return st;
}

cf_status cf_history_record_measurement(cf_db *db, cf_history_measurement *m, long long *out_id)
{
    cf_status st = cf_db_transaction(db, record_body, m);
    if (st == CF_OK && out_id)
        *out_id = m->id;
    return st;
}

#define MEASUREMENT_COLUMNS                                                                                      \
    "SELECT id, coalesce(recommendation_id, 0), recorded_at, spec_hash, spec_name, cloud,"                      \
    " instance_type, gpu, gpus_per_node, nodes, local_batch, accumulation, step_time_s,"                        \
    " total_hours, total_usd, predicted_step_time_s, predicted_hours, predicted_total_usd,"                     \
    " note, coalesce(after_recommendation, 0) FROM measurements "

static cf_status read_measurements(cf_db *db, cf_db_stmt *stmt, cf_history_measurement **out, size_t *n_out);

cf_status cf_history_measurements_for_spec(cf_db *db, const char *source_hash, cf_history_measurement **out,
                                           size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    cf_db_stmt *stmt = NULL;
    if (cf_db_prepare(db,
                      MEASUREMENT_COLUMNS "WHERE coalesce(source_hash, spec_hash) = ?1"
                      " AND step_time_s IS NOT NULL ORDER BY id",
                      &stmt) != CF_OK)
        return cf_db_error(db, "cannot query");
    cf_db_bind_text(stmt, 1, source_hash);
    return read_measurements(db, stmt, out, n_out);
}

cf_status cf_history_measurements_of(cf_db *db, long long recommendation_id, cf_history_measurement **out,
                                     size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    cf_db_stmt *stmt = NULL;
    if (cf_db_prepare(db, MEASUREMENT_COLUMNS "WHERE recommendation_id = ?1 ORDER BY id", &stmt) != CF_OK)
        return cf_db_error(db, "cannot query");
    cf_db_bind_int64(stmt, 1, recommendation_id);
    return read_measurements(db, stmt, out, n_out);
}

/* The rows of a MEASUREMENT_COLUMNS query; finalizes it. */
static cf_status read_measurements(cf_db *db, cf_db_stmt *stmt, cf_history_measurement **out, size_t *n_out)
{
    size_t n = 0;
    cf_history_measurement *rows = NULL;
    int rc;
    cf_status st = CF_OK;
    while ((rc = cf_db_step(stmt)) == CF_DB_ROW) {
        cf_history_measurement *grown = realloc(rows, (n + 1) * sizeof *rows);
        if (!grown) {
            st = cf_error_set(CF_ERR_NOMEM, "out of memory");
            break;
        }
        rows = grown;
        cf_history_measurement *m = &rows[n++];
        memset(m, 0, sizeof *m);
        m->id = cf_db_column_int64(stmt, 0);
        m->recommendation_id = cf_db_column_int64(stmt, 1);
        copy_text(m->recorded_at, sizeof m->recorded_at, stmt, 2);
        copy_text(m->spec_hash, sizeof m->spec_hash, stmt, 3);
        copy_text(m->spec_name, sizeof m->spec_name, stmt, 4);
        copy_text(m->cloud, sizeof m->cloud, stmt, 5);
        copy_text(m->instance_type, sizeof m->instance_type, stmt, 6);
        copy_text(m->gpu, sizeof m->gpu, stmt, 7);
        m->gpus_per_node = cf_db_column_int(stmt, 8);
        m->nodes = cf_db_column_int(stmt, 9);
        m->local_batch = cf_db_column_int(stmt, 10);
        m->accumulation = cf_db_column_int(stmt, 11);
        m->step_time_s = column_number(stmt, 12);
        m->total_hours = column_number(stmt, 13);
        m->total_usd = column_number(stmt, 14);
        m->predicted_step_time_s = cf_db_column_double(stmt, 15);
        m->predicted_hours = cf_db_column_double(stmt, 16);
        m->predicted_total_usd = cf_db_column_double(stmt, 17);
        copy_text(m->note, sizeof m->note, stmt, 18);
        m->after_recommendation = cf_db_column_int64(stmt, 19);
    }
    if (st == CF_OK && rc != CF_DB_DONE)
        st = cf_db_error(db, "cannot read measurements from");
    cf_db_finalize(stmt);
    if (st != CF_OK) {
        free(rows);
        return st;
    }
    *out = rows;
    *n_out = n;
    return CF_OK;
}

cf_status cf_history_spec_json(cf_db *db, const char *spec_hash, char **json)
{
    *json = NULL;
    cf_db_stmt *stmt = NULL;
    if (cf_db_prepare(db, "SELECT json FROM specs WHERE hash = ?1", &stmt) != CF_OK)
        return cf_db_error(db, "cannot query");
    cf_db_bind_text(stmt, 1, spec_hash);
    int rc = cf_db_step(stmt);
    cf_status st = CF_OK;
    if (rc == CF_DB_ROW && !(*json = strdup(cf_db_column_text(stmt, 0))))
        st = cf_error_set(CF_ERR_NOMEM, "out of memory");
    else if (rc == CF_DB_FAILED)
        st = cf_db_error(db, "cannot read specs from");
    cf_db_finalize(stmt);
    return st;
}
