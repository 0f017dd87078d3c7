#include <math.h>

#include "cloudfit/db/history.h"
#include "db_internal.h"

static cf_status insert_spec(cf_db *db, const cf_history_record *rec)
{
    cf_db_stmt *stmt = NULL;
    if (cf_db_prepare(db,
                      "INSERT INTO specs(hash, name, json, first_seen) VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING",
                      &stmt) != CF_OK)
        return cf_db_error(db, "cannot prepare insert into");
    cf_db_bind_text(stmt, 1, rec->spec_hash);
    cf_db_bind_text(stmt, 2, rec->spec_name);
    cf_db_bind_text(stmt, 3, rec->spec_json);
    cf_db_bind_text(stmt, 4, rec->created_at);
    cf_status st = cf_db_step_done(stmt, "cannot write spec to");
    cf_db_finalize(stmt);
    return st;
}

static cf_status insert_recommendation(cf_db *db, const cf_history_record *rec, long long *out_id)
{
    static const char sql[] =
        "INSERT INTO recommendations(created_at, tool_version, spec_hash, spec_name, objective, catalog_name,"
        " catalog_date, cloud, region, instance_type, gpu, gpus_per_node, nodes, local_batch, accumulation,"
        " global_batch, lr, spot, step_time_s, hours, total_usd, usd_per_node_hour, result_json, source_hash,"
        " uid, identity, hours_p10, hours_p90, total_usd_p10, total_usd_p90)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20,"
        " ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30) RETURNING id";
    char uid[33];
    cf_status st = rec->uid ? CF_OK : cf_db_new_uid(uid);
    if (st != CF_OK)
        return st;
    cf_db_stmt *stmt = NULL;
    if (cf_db_prepare(db, sql, &stmt) != CF_OK)
        return cf_db_error(db, "cannot prepare insert into");
    const char *texts[] = {rec->created_at, rec->tool_version, rec->spec_hash, rec->spec_name, rec->objective,
                           rec->catalog_name, rec->catalog_date, rec->cloud, rec->region, rec->instance_type,
                           rec->gpu};
    for (int i = 0; i < 11; i++)
        cf_db_bind_text(stmt, i + 1, texts[i]);
    cf_db_bind_int64(stmt, 12, rec->gpus_per_node);
    cf_db_bind_int64(stmt, 13, rec->nodes);
    cf_db_bind_int64(stmt, 14, rec->local_batch);
    cf_db_bind_int64(stmt, 15, rec->accumulation);
    cf_db_bind_int64(stmt, 16, rec->global_batch);
    cf_db_bind_double(stmt, 17, rec->lr);
    cf_db_bind_int64(stmt, 18, rec->spot);
    cf_db_bind_double(stmt, 19, rec->step_time_s);
    cf_db_bind_double(stmt, 20, rec->hours);
    cf_db_bind_double(stmt, 21, rec->total_usd);
    cf_db_bind_double(stmt, 22, rec->usd_per_node_hour);
    cf_db_bind_text(stmt, 23, rec->result_json);
    cf_db_bind_text(stmt, 24, rec->source_hash && rec->source_hash[0] ? rec->source_hash : rec->spec_hash);
    cf_db_bind_text(stmt, 25, rec->uid ? rec->uid : uid);
    if (rec->identity && rec->identity[0])
        cf_db_bind_text(stmt, 26, rec->identity);
    else
        cf_db_bind_null(stmt, 26);
    /* an interval not given (NaN, or left 0 by an initializer) is stored as unknown */
    int have_hours = rec->hours_p90 > 0, have_usd = rec->total_usd_p90 > 0;
    cf_db_bind_double(stmt, 27, have_hours ? rec->hours_p10 : NAN);
    cf_db_bind_double(stmt, 28, have_hours ? rec->hours_p90 : NAN);
    cf_db_bind_double(stmt, 29, have_usd ? rec->total_usd_p10 : NAN);
    cf_db_bind_double(stmt, 30, have_usd ? rec->total_usd_p90 : NAN);
    if (cf_db_step(stmt) == CF_DB_ROW) {
        if (out_id)
            *out_id = cf_db_column_int64(stmt, 0);
    } else {
        st = cf_db_error(db, "cannot write recommendation to");
    }
    cf_db_finalize(stmt);
    return st;
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
    cf_db_stmt *stmt = NULL;
    *out_count = 0;
    if (cf_db_prepare(db, "SELECT count(*) FROM recommendations", &stmt) != CF_OK)
        return cf_db_error(db, "cannot query");
    int rc = cf_db_step(stmt);
    if (rc == CF_DB_ROW)
        *out_count = cf_db_column_int64(stmt, 0);
    cf_status st = rc == CF_DB_ROW ? CF_OK : cf_db_error(db, "cannot query");
    cf_db_finalize(stmt);
    return st;
}
