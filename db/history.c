#include <sqlite3.h>

#include "cloudfit/db/history.h"
#include "db_internal.h"

int cf_db_bind_text(sqlite3_stmt *stmt, int index, const char *text)
{
    return sqlite3_bind_text(stmt, index, text ? text : "", -1, SQLITE_TRANSIENT);
}

static cf_status insert_spec(cf_db *db, const cf_history_record *rec)
{
    sqlite3_stmt *stmt = NULL;
    if (sqlite3_prepare_v2(db->handle,
                           "INSERT OR IGNORE INTO specs(hash, name, json, first_seen) VALUES (?1, ?2, ?3, ?4)",
                           -1, &stmt, NULL) != SQLITE_OK)
        return cf_db_error(db, "cannot prepare insert into");
    cf_db_bind_text(stmt, 1, rec->spec_hash);
    cf_db_bind_text(stmt, 2, rec->spec_name);
    cf_db_bind_text(stmt, 3, rec->spec_json);
    cf_db_bind_text(stmt, 4, rec->created_at);
    int rc = sqlite3_step(stmt);
    sqlite3_finalize(stmt);
    return rc == SQLITE_DONE ? CF_OK : cf_db_error(db, "cannot write spec to");
}

static cf_status insert_recommendation(cf_db *db, const cf_history_record *rec, long long *out_id)
{
    static const char sql[] =
        "INSERT INTO recommendations(created_at, tool_version, spec_hash, spec_name, objective, catalog_name,"
        " catalog_date, cloud, region, instance_type, gpu, gpus_per_node, nodes, local_batch, accumulation,"
        " global_batch, lr, spot, step_time_s, hours, total_usd, usd_per_node_hour, result_json, source_hash)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20,"
        " ?21, ?22, ?23, ?24)";
    sqlite3_stmt *stmt = NULL;
    if (sqlite3_prepare_v2(db->handle, sql, -1, &stmt, NULL) != SQLITE_OK)
        return cf_db_error(db, "cannot prepare insert into");
    const char *texts[] = {rec->created_at, rec->tool_version, rec->spec_hash, rec->spec_name, rec->objective,
                           rec->catalog_name, rec->catalog_date, rec->cloud, rec->region, rec->instance_type,
                           rec->gpu};
    for (int i = 0; i < 11; i++)
        cf_db_bind_text(stmt, i + 1, texts[i]);
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
    cf_db_bind_text(stmt, 23, rec->result_json);
    cf_db_bind_text(stmt, 24, rec->source_hash && rec->source_hash[0] ? rec->source_hash : rec->spec_hash);
    int rc = sqlite3_step(stmt);
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE)
        return cf_db_error(db, "cannot write recommendation to");
    if (out_id)
        *out_id = sqlite3_last_insert_rowid(db->handle);
    return CF_OK;
}

typedef struct {
    const cf_history_record *rec;
    long long id;
} insert_ctx;

static cf_status insert_body(cf_db *db, void *data)
{
    insert_ctx *x = data;
    cf_status st;
    if ((st = insert_spec(db, x->rec)) != CF_OK || (st = insert_recommendation(db, x->rec, &x->id)) != CF_OK)
        return st;
    return cf_db_insert_extras(db, x->rec, x->id);
}

cf_status cf_history_insert(cf_db *db, const cf_history_record *rec, long long *out_id)
{
    insert_ctx x = {rec, 0};
    cf_status st = cf_db_transaction(db, insert_body, &x);
    if (st == CF_OK && out_id)
        *out_id = x.id;
    return st;
}

cf_status cf_history_count(cf_db *db, long long *out_count)
{
    sqlite3_stmt *stmt = NULL;
    *out_count = 0;
    if (sqlite3_prepare_v2(db->handle, "SELECT count(*) FROM recommendations", -1, &stmt, NULL) != SQLITE_OK)
        return cf_db_error(db, "cannot query");
    if (sqlite3_step(stmt) == SQLITE_ROW)
        *out_count = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    return CF_OK;
}

