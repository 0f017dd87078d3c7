/* The profile cache (include/cloudfit/db/profiles.h; migrations 4 and 9). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/db/profiles.h"
#include "db_internal.h"

static cf_status put_body(cf_db *db, void *data)
{
    static const char sql[] =
        "INSERT INTO profiles(spec_key, backend, device, spec_name, created_at, is_gpu, b_noise,"
        " max_local_batch, profile_json, seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, " CF_DB_PROFILE_NEXT_SEQ ")"
        " ON CONFLICT (spec_key, backend, device) DO UPDATE SET spec_name = excluded.spec_name,"
        " created_at = excluded.created_at, is_gpu = excluded.is_gpu, b_noise = excluded.b_noise,"
        " max_local_batch = excluded.max_local_batch, profile_json = excluded.profile_json, seq = excluded.seq";
    const cf_cached_profile *row = data;
    cf_db_stmt *stmt = NULL;
    if (cf_db_prepare(db, sql, &stmt) != CF_OK)
        return cf_db_error(db, "cannot prepare insert into");
    const char *texts[] = {row->spec_key, row->backend, row->device, row->spec_name, row->created_at};
    for (int i = 0; i < 5; i++)
        cf_db_bind_text(stmt, i + 1, texts[i]);
    cf_db_bind_int64(stmt, 6, row->is_gpu ? 1 : 0);
    cf_db_bind_double(stmt, 7, row->b_noise > 0 ? row->b_noise : NAN); /* NULL: not measured */
    cf_db_bind_int64(stmt, 8, row->max_local_batch);
    cf_db_bind_text(stmt, 9, row->profile_json);
    cf_status st = cf_db_step_done(stmt, "cannot write profile to");
    cf_db_finalize(stmt);
    return st;
}

cf_status cf_profile_cache_put(cf_db *db, const cf_cached_profile *row)
{
    return cf_db_transaction(db, put_body, (void *)row);
}

static char *dup_column(cf_db_stmt *stmt, int col) { return strdup(cf_db_column_text(stmt, col)); }

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
    return cf_profile_cache_get_either(db, spec_key, NULL, out);
}

cf_status cf_profile_cache_get_either(cf_db *db, const char *spec_key, const char *other_key,
                                      cf_cached_profile_list *out)
{
    static const char sql[] =
        "SELECT spec_key, backend, device, spec_name, created_at, is_gpu, b_noise, max_local_batch, profile_json"
        " FROM profiles WHERE spec_key = ?1 OR spec_key = ?2 ORDER BY " CF_DB_PROFILES_NEWEST_FIRST;
    memset(out, 0, sizeof *out);
    cf_db_stmt *stmt = NULL;
    if (cf_db_prepare(db, sql, &stmt) != CF_OK)
        return cf_db_error(db, "cannot read profiles from");
    cf_db_bind_text(stmt, 1, spec_key);
    cf_db_bind_text(stmt, 2, other_key && other_key[0] ? other_key : spec_key);
    cf_status st = CF_OK;
    size_t cap = 0;
    int rc;
    while ((rc = cf_db_step(stmt)) == CF_DB_ROW) {
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
        r->is_gpu = cf_db_column_int(stmt, 5);
        r->b_noise = cf_db_column_is_null(stmt, 6) ? 0 : cf_db_column_double(stmt, 6);
        r->max_local_batch = cf_db_column_int(stmt, 7);
        r->profile_json = dup_column(stmt, 8);
        out->n++;
        if (!r->spec_key || !r->backend || !r->device || !r->spec_name || !r->created_at || !r->profile_json) {
            st = cf_error_set(CF_ERR_NOMEM, "out of memory");
            break;
        }
    }
    if (st == CF_OK && rc != CF_DB_DONE)
        st = cf_db_error(db, "cannot read profiles from");
    cf_db_finalize(stmt);
    if (st != CF_OK)
        cf_profile_cache_list_free(out);
    return st;
}
