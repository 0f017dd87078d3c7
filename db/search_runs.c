#include <math.h>

#include "cloudfit/db/search_runs.h"
#include "db_internal.h"

static void bind_real_or_null(cf_db_stmt *stmt, int index, double v) { cf_db_bind_double(stmt, index, isfinite(v) ? v : NAN); }

static cf_status insert_run(cf_db *db, const cf_search_record *r, long long *out_id)
{
    static const char sql[] =
        "INSERT INTO search_runs(created_at, tool_version, spec_hash, spec_name, runner, method, objective, seed,"
        " chosen_cloud, chosen_instance_type, chosen_gpu, chosen_gpus_per_node, chosen_nodes, chosen_local_batch,"
        " chosen_step_time_s, chosen_hours, chosen_usd, probe_count, profile_cost_usd, probe_cost_usd,"
        " overhead_usd, regret_pct, result_json, uid)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21,"
        " ?22, ?23, ?24) RETURNING id";
    char uid[33];
    cf_status st = cf_db_new_uid(uid);
    if (st != CF_OK)
        return st;
    cf_db_stmt *stmt = NULL;
    if (cf_db_prepare(db, sql, &stmt) != CF_OK)
        return cf_db_error(db, "cannot prepare insert into");
    const char *texts[] = {r->created_at, r->tool_version, r->spec_hash, r->spec_name, r->runner, r->method,
                           r->objective};
    for (int i = 0; i < 7; i++)
        cf_db_bind_text(stmt, i + 1, texts[i]);
    cf_db_bind_int64(stmt, 8, r->seed);
    if (r->has_chosen) {
        cf_db_bind_text(stmt, 9, r->cloud);
        cf_db_bind_text(stmt, 10, r->instance_type);
        cf_db_bind_text(stmt, 11, r->gpu);
        cf_db_bind_int64(stmt, 12, r->gpus_per_node);
        cf_db_bind_int64(stmt, 13, r->nodes);
        cf_db_bind_int64(stmt, 14, r->local_batch);
        bind_real_or_null(stmt, 15, r->step_time_s);
        bind_real_or_null(stmt, 16, r->hours);
        bind_real_or_null(stmt, 17, r->total_usd);
    } /* else: NULLs (unbound parameters) */
    cf_db_bind_int64(stmt, 18, r->probe_count);
    cf_db_bind_double(stmt, 19, r->profile_cost_usd);
    cf_db_bind_double(stmt, 20, r->probe_cost_usd);
    cf_db_bind_double(stmt, 21, r->overhead_usd);
    bind_real_or_null(stmt, 22, r->regret_pct);
    cf_db_bind_text(stmt, 23, r->result_json);
    cf_db_bind_text(stmt, 24, uid);
    if (cf_db_step(stmt) == CF_DB_ROW)
        *out_id = cf_db_column_int64(stmt, 0);
    else
        st = cf_db_error(db, "cannot write search run to");
    cf_db_finalize(stmt);
    return st;
}

static cf_status insert_probes(cf_db *db, long long id, const cf_search_probe_record *p, size_t n)
{
    static const char sql[] =
        "INSERT INTO search_probes(search_id, seq, kind, cloud, region, instance_type, gpu, gpus_per_node, nodes,"
        " local_batch, steps, attempts, measured_step_time_s, predicted_step_time_s, cost_usd, error)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)";
    cf_db_stmt *stmt = NULL;
    if (cf_db_prepare(db, sql, &stmt) != CF_OK)
        return cf_db_error(db, "cannot prepare insert into");
    for (size_t i = 0; i < n; i++) {
        cf_db_reset(stmt);
        cf_db_bind_int64(stmt, 1, id);
        cf_db_bind_int64(stmt, 2, (long long)i + 1);
        const char *texts[] = {p[i].kind, p[i].cloud, p[i].region, p[i].instance_type, p[i].gpu};
        for (int k = 0; k < 5; k++)
            cf_db_bind_text(stmt, 3 + k, texts[k]);
        cf_db_bind_int64(stmt, 8, p[i].gpus_per_node);
        cf_db_bind_int64(stmt, 9, p[i].nodes);
        cf_db_bind_int64(stmt, 10, p[i].local_batch);
        cf_db_bind_int64(stmt, 11, p[i].steps);
        cf_db_bind_int64(stmt, 12, p[i].attempts);
        bind_real_or_null(stmt, 13, p[i].measured_step_time_s);
        bind_real_or_null(stmt, 14, p[i].predicted_step_time_s);
        cf_db_bind_double(stmt, 15, p[i].cost_usd);
        cf_db_bind_text(stmt, 16, p[i].error);
        if (cf_db_step(stmt) != CF_DB_DONE) {
            cf_db_finalize(stmt);
            return cf_db_error(db, "cannot write search probe to");
        }
    }
    cf_db_finalize(stmt);
    return CF_OK;
}

typedef struct {
    const cf_search_record *rec;
    const cf_search_probe_record *probes;
    size_t n_probes;
    long long id;
} run_ctx;

static cf_status insert_body(cf_db *db, void *data)
{
    run_ctx *x = data;
    cf_status st = insert_run(db, x->rec, &x->id);
    return st == CF_OK ? insert_probes(db, x->id, x->probes, x->n_probes) : st;
}

cf_status cf_search_history_insert(cf_db *db, const cf_search_record *rec, const cf_search_probe_record *probes,
                                   size_t n_probes, long long *out_id)
{
    run_ctx x = {rec, probes, n_probes, 0};
    cf_status st = cf_db_transaction(db, insert_body, &x);
    if (st == CF_OK && out_id)
        *out_id = x.id;
    return st;
}

cf_status cf_search_history_count(cf_db *db, long long *out_runs, long long *out_probes)
{
    *out_runs = *out_probes = 0;
    cf_db_stmt *stmt = NULL;
    if (cf_db_prepare(db, "SELECT (SELECT count(*) FROM search_runs), (SELECT count(*) FROM search_probes)", &stmt) != CF_OK)
        return cf_db_error(db, "cannot query");
    int rc = cf_db_step(stmt);
    if (rc == CF_DB_ROW) {
        *out_runs = cf_db_column_int64(stmt, 0);
        *out_probes = cf_db_column_int64(stmt, 1);
    }
    cf_status st = rc == CF_DB_ROW ? CF_OK : cf_db_error(db, "cannot query");
    cf_db_finalize(stmt);
    return st;
}
