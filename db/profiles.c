/* The profile cache (include/cloudfit/profile_cache.h; migration 4). */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/db/profiles.h"
#include "db_internal.h"

static cf_status put_body(cf_db *db, void *data)
{
    static const char sql[] =
        "INSERT OR REPLACE INTO profiles(spec_key, backend, device, spec_name, created_at, is_gpu, b_noise,"
        " max_local_batch, profile_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
    const cf_cached_profile *row = data;
    sqlite3_stmt *stmt = NULL;
    if (sqlite3_prepare_v2(db->handle, sql, -1, &stmt, NULL) != SQLITE_OK)
        return cf_db_error(db, "cannot prepare insert into");
    const char *texts[] = {row->spec_key, row->backend, row->device, row->spec_name, row->created_at};
    for (int i = 0; i < 5; i++)
        cf_db_bind_text(stmt, i + 1, texts[i]);
    sqlite3_bind_int(stmt, 6, row->is_gpu ? 1 : 0);
    if (row->b_noise > 0)
        sqlite3_bind_double(stmt, 7, row->b_noise);
    else
        sqlite3_bind_null(stmt, 7);
    sqlite3_bind_int(stmt, 8, row->max_local_batch);
    cf_db_bind_text(stmt, 9, row->profile_json);
    int rc = sqlite3_step(stmt);
    sqlite3_finalize(stmt);
    return rc == SQLITE_DONE ? CF_OK : cf_db_error(db, "cannot write profile to");
}

cf_status cf_profile_cache_put(cf_db *db, const cf_cached_profile *row)
{
    return cf_db_transaction(db, put_body, (void *)row);
}

static char *dup_column(sqlite3_stmt *stmt, int col)
{
    const unsigned char *text = sqlite3_column_text(stmt, col);
    return strdup(text ? (const char *)text : "");
}

static void free_row(cf_cached_profile *r)
{
    free((char *)r->spec_key);
    free((char *)r->backend);
    free((char *)r->device);
    free((char *)r->spec_name);
    free((char *)r->created_at);
    free((char *)r->profile_json);
}

void cf_profile_cache_list_free(cf_cached_profile_list *list)
{
    for (size_t i = 0; i < list->n; i++)
        free_row(&list->rows[i]);
    free(list->rows);
    memset(list, 0, sizeof *list);
}

cf_status cf_profile_cache_get(cf_db *db, const char *spec_key, cf_cached_profile_list *out)
{
    static const char sql[] =
        "SELECT spec_key, backend, device, spec_name, created_at, is_gpu, b_noise, max_local_batch, profile_json"
        " FROM profiles WHERE spec_key = ?1 ORDER BY created_at DESC, backend, device";
    memset(out, 0, sizeof *out);
    sqlite3_stmt *stmt = NULL;
    if (sqlite3_prepare_v2(db->handle, sql, -1, &stmt, NULL) != SQLITE_OK)
        return cf_db_error(db, "cannot read profiles from");
    cf_db_bind_text(stmt, 1, spec_key);
    cf_status st = CF_OK;
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        if (out->n == cap) {
            cap = cap ? 2 * cap : 4;
            cf_cached_profile *grown = realloc(out->rows, cap * sizeof *grown);
            if (!grown) {
                st = cf_error_set(CF_ERR_NOMEM, "out of memory");
                break;
            }
            out->rows = grown;
        }
        cf_cached_profile *r = &out->rows[out->n];
        memset(r, 0, sizeof *r);
        r->spec_key = dup_column(stmt, 0);
        r->backend = dup_column(stmt, 1);
        r->device = dup_column(stmt, 2);
        r->spec_name = dup_column(stmt, 3);
        r->created_at = dup_column(stmt, 4);
        r->is_gpu = sqlite3_column_int(stmt, 5);
        r->b_noise = sqlite3_column_type(stmt, 6) == SQLITE_NULL ? 0 : sqlite3_column_double(stmt, 6);
        r->max_local_batch = sqlite3_column_int(stmt, 7);
        r->profile_json = dup_column(stmt, 8);
        out->n++;
        if (!r->spec_key || !r->backend || !r->device || !r->spec_name || !r->created_at || !r->profile_json) {
            st = cf_error_set(CF_ERR_NOMEM, "out of memory");
            break;
        }
    }
    if (st == CF_OK && rc != SQLITE_DONE)
        st = cf_db_error(db, "cannot read profiles from");
    sqlite3_finalize(stmt);
    if (st != CF_OK)
        cf_profile_cache_list_free(out);
    return st;
}
