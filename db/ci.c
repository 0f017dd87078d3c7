/* Schema-2 rows written with a recommendation, inside its transaction:
 * ranked alternatives, CI metadata and gate outcomes. */
#include <math.h>

#include "cloudfit/db/history.h"
#include "db_internal.h"

static cf_status step_done(cf_db_stmt *stmt, const char *what)
{
    cf_status st = cf_db_step_done(stmt, what);
    cf_db_reset(stmt);
    return st;
}

static cf_status insert_alternatives(cf_db *db, const cf_history_record *rec, long long id)
{
    static const char sql[] =
        "INSERT INTO alternatives(recommendation_id, rank, cloud, region, instance_type, gpu, gpus_per_node, nodes,"
        " local_batch, accumulation, global_batch, lr, spot, step_time_s, hours, total_usd, usd_per_node_hour)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)";
    cf_db_stmt *stmt = NULL;
    if (cf_db_prepare(db, sql, &stmt) != CF_OK)
        return cf_db_error(db, "cannot prepare insert into");
    cf_status st = CF_OK;
    for (size_t i = 0; i < rec->n_alternatives && st == CF_OK; i++) {
        const cf_history_config *c = &rec->alternatives[i];
        cf_db_bind_int64(stmt, 1, id);
        cf_db_bind_int64(stmt, 2, c->rank);
        cf_db_bind_text(stmt, 3, c->cloud);
        cf_db_bind_text(stmt, 4, c->region);
        cf_db_bind_text(stmt, 5, c->instance_type);
        cf_db_bind_text(stmt, 6, c->gpu);
        cf_db_bind_int64(stmt, 7, c->gpus_per_node);
        cf_db_bind_int64(stmt, 8, c->nodes);
        cf_db_bind_int64(stmt, 9, c->local_batch);
        cf_db_bind_int64(stmt, 10, c->accumulation);
        cf_db_bind_int64(stmt, 11, c->global_batch);
        cf_db_bind_double(stmt, 12, c->lr);
        cf_db_bind_int64(stmt, 13, c->spot ? (c->mixed ? 2 : 1) : 0);
        cf_db_bind_double(stmt, 14, c->step_time_s);
        cf_db_bind_double(stmt, 15, c->hours);
        cf_db_bind_double(stmt, 16, c->total_usd);
        cf_db_bind_double(stmt, 17, c->usd_per_node_hour);
        st = step_done(stmt, "cannot write alternatives to");
    }
    cf_db_finalize(stmt);
    return st;
}

static cf_status insert_ci(cf_db *db, const cf_ci_info *ci, long long id)
{
    static const char sql[] =
        "INSERT INTO ci_runs(recommendation_id, provider, commit_sha, branch, base_branch, pull_request, run_id,"
        " run_url) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
    cf_db_stmt *stmt = NULL;
    if (cf_db_prepare(db, sql, &stmt) != CF_OK)
        return cf_db_error(db, "cannot prepare insert into");
    cf_db_bind_int64(stmt, 1, id);
    const char *texts[] = {ci->provider, ci->commit, ci->branch, ci->base_branch, ci->pull_request, ci->run_id,
                           ci->run_url};
    for (int i = 0; i < 7; i++)
        cf_db_bind_text(stmt, i + 2, texts[i]);
    cf_status st = step_done(stmt, "cannot write CI metadata to");
    cf_db_finalize(stmt);
    return st;
}

static cf_status insert_gates(cf_db *db, const cf_history_record *rec, long long id)
{
    static const char sql[] =
        "INSERT INTO gate_results(recommendation_id, name, limit_value, value, passed, note, seq)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
    cf_db_stmt *stmt = NULL;
    if (cf_db_prepare(db, sql, &stmt) != CF_OK)
        return cf_db_error(db, "cannot prepare insert into");
    cf_status st = CF_OK;
    for (size_t i = 0; i < rec->n_gates && st == CF_OK; i++) {
        const cf_history_gate *g = &rec->gates[i];
        cf_db_bind_int64(stmt, 1, id);
        cf_db_bind_text(stmt, 2, g->name);
        cf_db_bind_double(stmt, 3, g->limit);
        cf_db_bind_double(stmt, 4, g->value); /* NULL when there was no baseline */
        cf_db_bind_int64(stmt, 5, g->passed);
        cf_db_bind_text(stmt, 6, g->note);
        cf_db_bind_int64(stmt, 7, (long long)i + 1);
        st = step_done(stmt, "cannot write gate results to");
    }
    cf_db_finalize(stmt);
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
