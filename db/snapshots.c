/* Price snapshots (see cloudfit/snapshot.h; schema: migration 3). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/clock.h"
#include "cloudfit/common/hash.h"
#include "cloudfit/db/snapshots.h"
#include "db_internal.h"

static cf_status insert_header(cf_db *db, const cf_snapshot_new *s, const char *hash, long long *out_id)
{
    static const char sql[] =
        "INSERT INTO price_snapshots(fetched_at, sources, base, row_count, content_hash, status, vms_csv, report)"
        " VALUES (?1, ?2, ?3, ?4, ?5, 'good', ?6, ?7) RETURNING id";
    cf_db_stmt *stmt = NULL;
    if (cf_db_prepare(db, sql, &stmt) != CF_OK)
        return cf_db_error(db, "cannot prepare snapshot insert into");
    cf_db_bind_text(stmt, 1, s->fetched_at);
    cf_db_bind_text(stmt, 2, s->sources);
    cf_db_bind_text(stmt, 3, s->base);
    cf_db_bind_int64(stmt, 4, s->row_count);
    cf_db_bind_text(stmt, 5, hash);
    cf_db_bind_blob_text(stmt, 6, s->vms_csv, s->vms_csv_len);
    cf_db_bind_text(stmt, 7, s->report);
    cf_status st = CF_OK;
    if (cf_db_step(stmt) == CF_DB_ROW)
        *out_id = cf_db_column_int64(stmt, 0);
    else
        st = cf_db_error(db, "cannot write price snapshot to");
    cf_db_finalize(stmt);
    return st;
}

static cf_status insert_prices(cf_db *db, const cf_snapshot_new *s, long long id)
{
    static const char sql[] =
        "INSERT INTO price_snapshot_rows(snapshot_id, cloud, region, instance_type, gpu_model, gpu_count,"
        " price_ondemand_usd_per_hr, price_spot_usd_per_hr) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
    cf_db_stmt *stmt = NULL;
    if (cf_db_prepare(db, sql, &stmt) != CF_OK)
        return cf_db_error(db, "cannot prepare snapshot rows insert into");
    cf_status st = CF_OK;
    for (size_t i = 0; i < s->n_prices && st == CF_OK; i++) {
        const cf_snapshot_price *p = &s->prices[i];
        cf_db_reset(stmt);
        cf_db_bind_int64(stmt, 1, id);
        cf_db_bind_text(stmt, 2, p->cloud);
        cf_db_bind_text(stmt, 3, p->region);
        cf_db_bind_text(stmt, 4, p->instance_type);
        cf_db_bind_text(stmt, 5, p->gpu_model);
        cf_db_bind_int64(stmt, 6, p->gpu_count);
        cf_db_bind_double(stmt, 7, p->price_ondemand_usd_per_hr);
        cf_db_bind_double(stmt, 8, p->price_spot_usd_per_hr > 0 ? p->price_spot_usd_per_hr : NAN);
        if (cf_db_step(stmt) != CF_DB_DONE)
            st = cf_db_error(db, "cannot write snapshot rows to");
    }
    cf_db_finalize(stmt);
    return st;
}

typedef struct {
    const cf_snapshot_new *s;
    const char *hash;
    long long id;
} snapshot_ctx;

static cf_status insert_body(cf_db *db, void *data)
{
    snapshot_ctx *x = data;
    cf_status st = insert_header(db, x->s, x->hash, &x->id);
    return st == CF_OK ? insert_prices(db, x->s, x->id) : st;
}

cf_status cf_snapshot_insert(cf_db *db, const cf_snapshot_new *s, long long *out_id)
{
    char hash[CF_SHA256_HEX_LEN + 1];
    cf_status st = cf_sha256_hex(s->vms_csv, s->vms_csv_len, hash);
    if (st != CF_OK)
        return st;
    snapshot_ctx x = {s, hash, 0};
    if ((st = cf_db_transaction(db, insert_body, &x)) != CF_OK)
        return st;
    if (out_id)
        *out_id = x.id;
    return CF_OK;
}

static void copy_col(cf_db_stmt *stmt, int col, char *dst, size_t cap) { cf_db_column_copy(stmt, col, dst, cap); }

static void read_row(cf_db_stmt *stmt, cf_snapshot *s)
{
    memset(s, 0, sizeof *s);
    s->id = cf_db_column_int64(stmt, 0);
    snprintf(s->name, sizeof s->name, "snapshot-%lld", s->id);
    copy_col(stmt, 1, s->fetched_at, sizeof s->fetched_at);
    copy_col(stmt, 2, s->sources, sizeof s->sources);
    copy_col(stmt, 3, s->base, sizeof s->base);
    s->row_count = (long)cf_db_column_int64(stmt, 4);
    copy_col(stmt, 5, s->content_hash, sizeof s->content_hash);
}

/* Newest = fetched last, not inserted last: `history migrate` inserts an
 * older database's snapshots with the destination's next ids, and one
 * fetched half a year ago must not become the catalog in use. fetched_at
 * is ISO 8601 UTC ("2026-11-18T06:13:20Z"), so text order is time order;
 * snapshots fetched in the same second go by id (the later insert). A
 * snapshot fetched after the current time (?1; a clock that was ahead at
 * that update) comes after every other: else it would outrank each update
 * made with a right clock until the clock caught up with it. */
#define NEWEST_FIRST "ORDER BY (fetched_at > ?1) ASC, fetched_at DESC, id DESC"

cf_status cf_snapshot_latest(cf_db *db, cf_snapshot *out, int *found)
{
    *found = 0;
    memset(out, 0, sizeof *out);
    cf_db_stmt *stmt = NULL;
    if (cf_db_prepare(db, "SELECT id, fetched_at, sources, base, row_count, content_hash, vms_csv FROM price_snapshots"
                           " WHERE status = 'good' " NEWEST_FIRST " LIMIT 1", &stmt) != CF_OK)
        return cf_db_error(db, "cannot query price snapshots in");
    char now[32];
    cf_now_iso8601(now, sizeof now);
    cf_db_bind_text(stmt, 1, now);
    int rc = cf_db_step(stmt);
    cf_status st = CF_OK;
    if (rc == CF_DB_ROW) {
        read_row(stmt, out);
        const char *text = cf_db_column_text(stmt, 6);
        size_t len = cf_db_column_bytes(stmt, 6);
        out->vms_csv = malloc((size_t)len + 1);
        if (!out->vms_csv) {
            st = cf_error_set(CF_ERR_NOMEM, "out of memory reading a price snapshot");
        } else {
            memcpy(out->vms_csv, text ? text : "", (size_t)len);
            out->vms_csv[len] = '\0';
            out->vms_csv_len = (size_t)len;
            /* A stored snapshot whose text no longer hashes to its recorded
             * hash was altered: refuse it rather than price with it. */
            char hash[CF_SHA256_HEX_LEN + 1];
            st = cf_sha256_hex(out->vms_csv, out->vms_csv_len, hash);
            if (st == CF_OK && strcmp(hash, out->content_hash) != 0) {
                st = cf_error_set(CF_ERR_DB, "price snapshot %lld in '%s' does not match its content hash", out->id,
                                  db->path);
                cf_error_hint("run 'cloudfit prices update' to store a fresh snapshot");
            }
            *found = st == CF_OK;
        }
    } else if (rc != CF_DB_DONE) {
        st = cf_db_error(db, "cannot read price snapshots from");
    }
    cf_db_finalize(stmt);
    if (st != CF_OK)
        cf_snapshot_free(out);
    return st;
}

cf_status cf_snapshot_list(cf_db *db, cf_snapshot *out, size_t cap, size_t *out_n)
{
    *out_n = 0;
    cf_db_stmt *stmt = NULL;
    if (cf_db_prepare(db, "SELECT id, fetched_at, sources, base, row_count, content_hash FROM price_snapshots"
                           " WHERE status = 'good' " NEWEST_FIRST, &stmt) != CF_OK)
        return cf_db_error(db, "cannot query price snapshots in");
    char now[32];
    cf_now_iso8601(now, sizeof now);
    cf_db_bind_text(stmt, 1, now);
    int rc;
    while (*out_n < cap && (rc = cf_db_step(stmt)) == CF_DB_ROW)
        read_row(stmt, &out[(*out_n)++]);
    cf_db_finalize(stmt);
    return CF_OK;
}

void cf_snapshot_free(cf_snapshot *snap)
{
    free(snap->vms_csv);
    snap->vms_csv = NULL;
    snap->vms_csv_len = 0;
}
