/* Schema-2 rows written with a recommendation, inside its transaction:
 * ranked alternatives, CI metadata and gate outcomes. */
#include <math.h>
#include <sqlite3.h>

#include "cloudfit/db/history.h"
#include "db_internal.h"

static cf_status step_done(cf_db *db, sqlite3_stmt *stmt, const char *what)
{
    int rc = sqlite3_step(stmt);
    sqlite3_reset(stmt);
    return rc == SQLITE_DONE ? CF_OK : cf_db_error(db, what);
}

static cf_status insert_alternatives(cf_db *db, const cf_history_record *rec, long long id)
{
    static const char sql[] =
        "INSERT INTO alternatives(recommendation_id, rank, cloud, region, instance_type, gpu, gpus_per_node, nodes,"
        " local_batch, accumulation, global_batch, lr, spot, step_time_s, hours, total_usd, usd_per_node_hour)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)";
    sqlite3_stmt *stmt = NULL;
    if (sqlite3_prepare_v2(db->handle, sql, -1, &stmt, NULL) != SQLITE_OK)
        return cf_db_error(db, "cannot prepare insert into");
    cf_status st = CF_OK;
    for (size_t i = 0; i < rec->n_alternatives && st == CF_OK; i++) {
        const cf_history_config *c = &rec->alternatives[i];
        sqlite3_bind_int64(stmt, 1, id);
        sqlite3_bind_int(stmt, 2, c->rank);
        cf_db_bind_text(stmt, 3, c->cloud);
        cf_db_bind_text(stmt, 4, c->region);
        cf_db_bind_text(stmt, 5, c->instance_type);
        cf_db_bind_text(stmt, 6, c->gpu);
        sqlite3_bind_int(stmt, 7, c->gpus_per_node);
        sqlite3_bind_int(stmt, 8, c->nodes);
        sqlite3_bind_int(stmt, 9, c->local_batch);
        sqlite3_bind_int(stmt, 10, c->accumulation);
        sqlite3_bind_int64(stmt, 11, c->global_batch);
        sqlite3_bind_double(stmt, 12, c->lr);
        sqlite3_bind_int(stmt, 13, c->spot);
        sqlite3_bind_double(stmt, 14, c->step_time_s);
        sqlite3_bind_double(stmt, 15, c->hours);
        sqlite3_bind_double(stmt, 16, c->total_usd);
        sqlite3_bind_double(stmt, 17, c->usd_per_node_hour);
        st = step_done(db, stmt, "cannot write alternatives to");
    }
    sqlite3_finalize(stmt);
    return st;
}

static cf_status insert_ci(cf_db *db, const cf_ci_info *ci, long long id)
{
    static const char sql[] =
        "INSERT INTO ci_runs(recommendation_id, provider, commit_sha, branch, base_branch, pull_request, run_id,"
        " run_url) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
    sqlite3_stmt *stmt = NULL;
    if (sqlite3_prepare_v2(db->handle, sql, -1, &stmt, NULL) != SQLITE_OK)
        return cf_db_error(db, "cannot prepare insert into");
    sqlite3_bind_int64(stmt, 1, id);
    const char *texts[] = {ci->provider, ci->commit, ci->branch, ci->base_branch, ci->pull_request, ci->run_id,
                           ci->run_url};
    for (int i = 0; i < 7; i++)
        cf_db_bind_text(stmt, i + 2, texts[i]);
    cf_status st = step_done(db, stmt, "cannot write CI metadata to");
    sqlite3_finalize(stmt);
    return st;
}

static cf_status insert_gates(cf_db *db, const cf_history_record *rec, long long id)
{
    static const char sql[] =
        "INSERT INTO gate_results(recommendation_id, name, limit_value, value, passed, note)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
    sqlite3_stmt *stmt = NULL;
    if (sqlite3_prepare_v2(db->handle, sql, -1, &stmt, NULL) != SQLITE_OK)
        return cf_db_error(db, "cannot prepare insert into");
    cf_status st = CF_OK;
    for (size_t i = 0; i < rec->n_gates && st == CF_OK; i++) {
        const cf_history_gate *g = &rec->gates[i];
        sqlite3_bind_int64(stmt, 1, id);
        cf_db_bind_text(stmt, 2, g->name);
        sqlite3_bind_double(stmt, 3, g->limit);
        if (isnan(g->value))
            sqlite3_bind_null(stmt, 4);
        else
            sqlite3_bind_double(stmt, 4, g->value);
        sqlite3_bind_int(stmt, 5, g->passed);
        cf_db_bind_text(stmt, 6, g->note);
        st = step_done(db, stmt, "cannot write gate results to");
    }
    sqlite3_finalize(stmt);
    return st;
}

cf_status cf_db_insert_extras(cf_db *db, const cf_history_record *rec, long long id)
{
    cf_status st = CF_OK;
    if (rec->n_alternatives)
        st = insert_alternatives(db, rec, id);
    if (st == CF_OK && rec->ci && rec->ci->provider[0])
        st = insert_ci(db, rec->ci, id);
    if (st == CF_OK && rec->n_gates)
        st = insert_gates(db, rec, id);
    return st;
}
