/* Copying one database into another (cloudfit/db/history_copy.h): `cloudfit
 * history migrate --to postgresql://…`. Rows that carry a uid
 * (recommendations, measurements, search runs) are recognised by it,
 * price snapshots by their time and content hash, specs and profiles by
 * their keys; so a second copy adds only what is new. The ids of the
 * destination are its own: the children of a copied row (alternatives, CI
 * row, gates; snapshot rows; probes; a measurement's recommendation) follow
 * their parent's new id, and a name of a copied snapshot ("snapshot-N": a
 * recommendation's catalog, a snapshot's base) its new name. A profile
 * newer than the destination's of the same triple replaces it. Everything
 * is written in one transaction. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/db/history_copy.h"
#include "db_internal.h"
#include "cloudfit/common/escape.h"
#include "cloudfit/common/proc.h"

/* Column types of a copied table: t text, i integer, r real (NULL kept). */
typedef struct {
    const char *table;
    const char *columns; /* comma-separated */
    const char *types;   /* one letter per column */
} table_desc;

static const table_desc specs_t = {"specs", "hash, name, json, first_seen", "tttt"};
static const table_desc recommendations_t = {
    "recommendations",
    "created_at, tool_version, spec_hash, spec_name, objective, catalog_name, catalog_date, cloud, region,"
    " instance_type, gpu, gpus_per_node, nodes, local_batch, accumulation, global_batch, lr, spot, step_time_s, hours,"
    " total_usd, usd_per_node_hour, result_json, source_hash, identity, uid, hours_p10, hours_p90, total_usd_p10,"
    " total_usd_p90",
    "tttttttttttiiiiirirrrrttttrrrr"};
static const table_desc alternatives_t = {
    "alternatives",
    "recommendation_id, rank, cloud, region, instance_type, gpu, gpus_per_node, nodes, local_batch, accumulation,"
    " global_batch, lr, spot, step_time_s, hours, total_usd, usd_per_node_hour",
    "iittttiiiiirirrrr"};
static const table_desc ci_runs_t = {
    "ci_runs", "recommendation_id, provider, commit_sha, branch, base_branch, pull_request, run_id, run_url", "ittttttt"};
static const table_desc gates_t = {"gate_results", "recommendation_id, name, limit_value, value, passed, note, seq",
                                   "itrriti"};
static const table_desc measurements_t = {
    "measurements",
    "recommendation_id, recorded_at, spec_hash, spec_name, cloud, instance_type, gpu, gpus_per_node, nodes,"
    " local_batch, accumulation, step_time_s, total_hours, total_usd, predicted_step_time_s, predicted_hours,"
    " predicted_total_usd, note, after_recommendation, source_hash, uid",
    "ittttttiiiirrrrrrtitt"};
static const table_desc profiles_t = {
    "profiles", "spec_key, backend, device, spec_name, created_at, is_gpu, b_noise, max_local_batch, profile_json",
    "tttttirit"};
static const table_desc snapshots_t = {
    "price_snapshots", "fetched_at, sources, base, row_count, content_hash, status, vms_csv, report", "tttitttt"};
static const table_desc snapshot_rows_t = {
    "price_snapshot_rows",
    "snapshot_id, cloud, region, instance_type, gpu_model, gpu_count, price_ondemand_usd_per_hr, price_spot_usd_per_hr",
    "ittttirr"};
static const table_desc search_runs_t = {
    "search_runs",
    "created_at, tool_version, spec_hash, spec_name, runner, method, objective, seed, chosen_cloud,"
    " chosen_instance_type, chosen_gpu, chosen_gpus_per_node, chosen_nodes, chosen_local_batch, chosen_step_time_s,"
    " chosen_hours, chosen_usd, probe_count, profile_cost_usd, probe_cost_usd, overhead_usd, regret_pct,"
    " result_json, uid",
    "tttttttitttiiirrrirrrrtt"};
static const table_desc probes_t = {
    "search_probes",
    "search_id, seq, kind, cloud, region, instance_type, gpu, gpus_per_node, nodes, local_batch, steps, attempts,"
    " measured_step_time_s, predicted_step_time_s, cost_usd, error",
    "iitttttiiiiirrrt"};

/* The type letter of column i (the descriptors above list one per column). */
static char type_of(const table_desc *t, int i)
{
    return i < (int)strlen(t->types) ? t->types[i] : 't';
}

static int n_columns(const table_desc *t)
{
    int n = 1;
    for (const char *p = t->columns; *p; p++)
        n += *p == ',';
    return n;
}

/* Binds column `col` of the source row as parameter `index`, keeping its type and NULLs. */
static void copy_value(cf_db_stmt *from, int col, cf_db_stmt *to, int index, char type)
{
    if (cf_db_column_is_null(from, col))
        type == 'r' ? cf_db_bind_double(to, index, NAN) : cf_db_bind_null(to, index);
    else if (type == 'i')
        cf_db_bind_int64(to, index, cf_db_column_int64(from, col));
    else if (type == 'r')
        cf_db_bind_double(to, index, cf_db_column_double(from, col));
    else if (cf_utf8_invalid_at(cf_db_column_text(from, col)) < 0)
        cf_db_bind_blob_text(to, index, cf_db_column_text(from, col), cf_db_column_bytes(from, col));
    else { /* an older SQLite history kept raw bytes (a note); PostgreSQL takes text: \xNN as shown */
        cf_buf escaped = CF_BUF_INIT;
        cf_escape_output(cf_db_column_text(from, col), (size_t)cf_db_column_bytes(from, col), CF_ESCAPE_TEXT, NULL,
                         &escaped);
        cf_db_bind_blob_text(to, index, cf_buf_cstr(&escaped), escaped.len);
        cf_buf_free(&escaped);
    }
}

/* "INSERT INTO t(cols[, own]) VALUES (?1, …[, own_value])" + tail; caller
 * frees. own: NULL, or a column the destination sets itself, to the SQL
 * own_value. NULL when out of memory, or when the descriptor's types do
 * not match its columns (a bug: never copy a value with the wrong type). */
static char *insert_sql_own(const table_desc *t, const char *own, const char *own_value, const char *tail)
{
    int n = n_columns(t);
    if ((int)strlen(t->types) != n)
        return NULL;
    if (!own)
        own = own_value = "";
    size_t len = strlen(t->table) + strlen(t->columns) + strlen(own) + strlen(own_value) + strlen(tail) +
                 (size_t)n * 8 + 64;
    char *sql = malloc(len);
    if (!sql)
        return NULL;
    size_t k = (size_t)snprintf(sql, len, "INSERT INTO %s(%s%s%s) VALUES (", t->table, t->columns, *own ? ", " : "",
                                own);
    for (int i = 0; i < n; i++)
        k += (size_t)snprintf(sql + k, len - k, "%s?%d", i ? ", " : "", i + 1);
    snprintf(sql + k, len - k, "%s%s)%s", *own ? ", " : "", own_value, tail);
    return sql;
}

static char *insert_sql(const table_desc *t, const char *tail) { return insert_sql_own(t, NULL, NULL, tail); }

/* An old-id → new-id map of copied rows: recommendations (measurements
 * follow it) and price snapshots (what refers to one by name follows it). */
typedef struct {
    long long *old_ids, *new_ids;
    size_t n, cap;
} id_map;

static cf_status map_add(id_map *m, long long old_id, long long new_id)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 64;
        long long *a = realloc(m->old_ids, cap * sizeof *a);
        if (a)
            m->old_ids = a;
        long long *b = a ? realloc(m->new_ids, cap * sizeof *b) : NULL;
        if (!a || !b)
            return cf_error_set(CF_ERR_NOMEM, "out of memory");
        m->new_ids = b;
        m->cap = cap;
    }
    m->old_ids[m->n] = old_id;
    m->new_ids[m->n++] = new_id;
    return CF_OK;
}

/* old ids are added in ascending order (the copy reads ORDER BY id) */
static long long map_find(const id_map *m, long long old_id)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->old_ids[mid] < old_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->n && m->old_ids[lo] == old_id ? m->new_ids[lo] : 0;
}

/* The new id of the newest copied row whose old id is at most `old_id`
 * (0 when none): what a measurement's after_recommendation becomes. */
static long long map_floor(const id_map *m, long long old_id)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->old_ids[mid] <= old_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 ? m->new_ids[lo - 1] : 0;
}

/* The open statements of a copy. */
typedef struct {
    cf_db *from, *to;
    cf_history_copy_counts *counts;
    const id_map *snapshots; /* source → destination ids of the price snapshots, copied first */
} copy_ctx;

/* Copies every row of `select` (its columns those of t, in order; the
 * first `skip` result columns are extra: the source's id first) into t,
 * with the parent id column 0 replaced by `parent_id` when it is > 0.
 * With `returning`, the first row inserted answers its new id (*new_id, 0
 * when the conflict clause skipped it). Counts inserted and skipped rows. */
static cf_status copy_rows(copy_ctx *x, const table_desc *t, const char *select, long long bind_id, const char *tail,
                           long long parent_id, int skip, long long *n_new, long long *n_old)
{
    cf_db_stmt *src = NULL, *dst = NULL;
    char *sql = insert_sql(t, tail);
    if (!sql)
        return cf_error_set(CF_ERR_INTERNAL, "cannot copy table %s (out of memory, or its description is wrong)",
                            t->table);
    cf_status st = CF_OK;
    if (cf_db_prepare(x->from, select, &src) != CF_OK)
        st = cf_db_error(x->from, "cannot read");
    else if (cf_db_prepare(x->to, sql, &dst) != CF_OK)
        st = cf_db_error(x->to, "cannot prepare insert into");
    free(sql);
    if (st == CF_OK && bind_id > 0)
        cf_db_bind_int64(src, 1, bind_id);
    int n = n_columns(t), rc;
    while (st == CF_OK && (rc = cf_db_step(src)) == CF_DB_ROW && (st = cf_interrupt_check()) == CF_OK) {
        cf_db_reset(dst);
        for (int i = 0; i < n; i++) {
            if (i == 0 && parent_id > 0)
                cf_db_bind_int64(dst, 1, parent_id);
            else
                copy_value(src, skip + i, dst, i + 1, type_of(t, i));
        }
        rc = cf_db_step(dst);
        if (rc == CF_DB_FAILED)
            st = cf_db_error(x->to, "cannot copy into");
        else if (cf_db_changes(dst) > 0 || rc == CF_DB_ROW)
            (*n_new)++;
        else if (n_old)
            (*n_old)++;
    }
    if (st == CF_OK && rc == CF_DB_FAILED)
        st = cf_db_error(x->from, "cannot read");
    cf_db_finalize(src);
    cf_db_finalize(dst);
    return st;
}

/* A parent row (with uid or natural key) and its children. `find`
 * (binding the copied row's key columns) gives the existing id; only a
 * row not found is inserted, since an insert its conflict clause skips
 * still uses up an AUTOINCREMENT id (SQLite) or a sequence value
 * (PostgreSQL): a second migrate left a gap of every copied row's size.
 * insert_tail returns the new id, or no row when a concurrent writer put
 * the row there after the look-up; then `find` gives its id. */
typedef struct {
    const table_desc *t;
    const char *insert_tail; /* " ON CONFLICT … DO NOTHING RETURNING id" */
    const char *find;        /* SELECT id FROM t WHERE key = ?1 [AND …]: the key columns as parameters */
    const int key_cols[2];   /* columns of t (0-based) bound to find's ?1, ?2; -1 = none */
    const int snapshot_col;  /* column of t naming a price snapshot ("snapshot-N"), -1 = none */
} parent_desc;

/* Binds column `col` of the source row, a catalog name, as parameter
 * `index`: "snapshot-N" becomes the name of snapshot N's copy, since the
 * destination numbers the snapshots it copies itself and its own
 * "snapshot-N" is another one (or none); other names ("embedded", a
 * snapshot the source no longer holds) are copied as they are. */
static void copy_snapshot_name(const copy_ctx *x, cf_db_stmt *src, int col, cf_db_stmt *dst, int index)
{
    const char *name = cf_db_column_is_null(src, col) ? NULL : cf_db_column_text(src, col);
    long long old_id = 0, new_id = 0;
    int end = 0;
    if (name && x->snapshots && sscanf(name, "snapshot-%lld%n", &old_id, &end) == 1 && name[end] == '\0' &&
        (new_id = map_find(x->snapshots, old_id)) > 0) {
        char renamed[32];
        snprintf(renamed, sizeof renamed, "snapshot-%lld", new_id);
        cf_db_bind_text(dst, index, renamed);
        return;
    }
    copy_value(src, col, dst, index, 't');
}

/* The destination's id of the row with src's key, 0 when there is none. */
static cf_status find_existing(copy_ctx *x, const parent_desc *p, cf_db_stmt *src, long long *id)
{
    *id = 0;
    cf_db_stmt *find = NULL;
    if (cf_db_prepare(x->to, p->find, &find) != CF_OK)
        return cf_db_error(x->to, "cannot query");
    for (int k = 0; k < 2 && p->key_cols[k] >= 0; k++)
        copy_value(src, p->key_cols[k] + 1, find, k + 1, type_of(p->t, p->key_cols[k]));
    int rc = cf_db_step(find);
    cf_status st = CF_OK;
    if (rc == CF_DB_ROW)
        *id = cf_db_column_int64(find, 0);
    else if (rc == CF_DB_FAILED)
        st = cf_db_error(x->to, "cannot query");
    cf_db_finalize(find);
    return st;
}

/* Copies one parent row (already stepped in src); *new_id = its id in the
 * destination, *is_new whether it was inserted now. */
static cf_status copy_parent(copy_ctx *x, const parent_desc *p, cf_db_stmt *src, long long *new_id, int *is_new)
{
    *new_id = 0;
    *is_new = 0;
    cf_status st = find_existing(x, p, src, new_id);
    if (st != CF_OK || *new_id)
        return st;
    char *sql = insert_sql(p->t, p->insert_tail);
    if (!sql)
        return cf_error_set(CF_ERR_INTERNAL, "cannot copy table %s (out of memory, or its description is wrong)",
                            p->t->table);
    cf_db_stmt *dst = NULL;
    st = cf_db_prepare(x->to, sql, &dst) == CF_OK ? CF_OK : cf_db_error(x->to, "cannot prepare insert into");
    free(sql);
    int n = n_columns(p->t);
    for (int i = 0; st == CF_OK && i < n; i++) {
        if (i == p->snapshot_col)
            copy_snapshot_name(x, src, i + 1, dst, i + 1);
        else
            copy_value(src, i + 1, dst, i + 1, type_of(p->t, i));
    }
    int rc = st == CF_OK ? cf_db_step(dst) : CF_DB_FAILED;
    if (st == CF_OK && rc == CF_DB_ROW) {
        *new_id = cf_db_column_int64(dst, 0);
        *is_new = 1;
    } else if (st == CF_OK && rc == CF_DB_FAILED) {
        st = cf_db_error(x->to, "cannot copy into");
    }
    cf_db_finalize(dst);
    if (st != CF_OK || *is_new)
        return st;
    return find_existing(x, p, src, new_id); /* skipped by its conflict clause: there already */
}

static cf_status copy_measurements(copy_ctx *x, const id_map *map)
{
    char select[1024], *sql = insert_sql(&measurements_t, " ON CONFLICT (uid) DO NOTHING");
    snprintf(select, sizeof select, "SELECT %s FROM measurements ORDER BY id", measurements_t.columns);
    cf_db_stmt *src = NULL, *dst = NULL, *find = NULL;
    cf_status st = sql ? CF_OK : cf_error_set(CF_ERR_INTERNAL, "cannot copy table measurements");
    if (st == CF_OK && cf_db_prepare(x->from, select, &src) != CF_OK)
        st = cf_db_error(x->from, "cannot read");
    if (st == CF_OK && cf_db_prepare(x->to, sql, &dst) != CF_OK)
        st = cf_db_error(x->to, "cannot prepare insert into");
    /* looked up first: a skipped insert would use up an id (copy_parent) */
    if (st == CF_OK && cf_db_prepare(x->to, "SELECT 1 FROM measurements WHERE uid = ?1", &find) != CF_OK)
        st = cf_db_error(x->to, "cannot query");
    free(sql);
    int rc = CF_DB_DONE, n = n_columns(&measurements_t);
    while (st == CF_OK && (rc = cf_db_step(src)) == CF_DB_ROW && (st = cf_interrupt_check()) == CF_OK) {
        cf_db_reset(find);
        copy_value(src, n - 1, find, 1, type_of(&measurements_t, n - 1)); /* uid, the last column */
        int found = cf_db_step(find);
        if (found == CF_DB_FAILED) {
            st = cf_db_error(x->to, "cannot query");
            break;
        }
        if (found == CF_DB_ROW)
            continue;
        cf_db_reset(dst);
        long long parent = cf_db_column_is_null(src, 0) ? 0 : map_find(map, cf_db_column_int64(src, 0));
        if (parent > 0)
            cf_db_bind_int64(dst, 1, parent);
        else
            cf_db_bind_null(dst, 1); /* its recommendation was pruned */
        enum { AFTER = 18 }; /* after_recommendation: the source's ids, mapped as the recommendations were */
        long long after = cf_db_column_is_null(src, AFTER) ? 0 : map_floor(map, cf_db_column_int64(src, AFTER));
        for (int i = 1; i < n; i++)
            if (i != AFTER)
                copy_value(src, i, dst, i + 1, type_of(&measurements_t, i));
            else if (after > 0)
                cf_db_bind_int64(dst, i + 1, after);
            else
                cf_db_bind_null(dst, i + 1); /* not known: by time, as older rows */
        if (cf_db_step(dst) == CF_DB_FAILED)
            st = cf_db_error(x->to, "cannot copy into");
        else if (cf_db_changes(dst) > 0)
            x->counts->measurements++;
    }
    if (st == CF_OK && rc == CF_DB_FAILED)
        st = cf_db_error(x->from, "cannot read");
    cf_db_finalize(src);
    cf_db_finalize(dst);
    cf_db_finalize(find);
    return st;
}

/* Cached profiles: one per (spec key, backend, device), and a newer one
 * replaces the older (docs/profiler.md; db/profiles.c). So the source's
 * profile is copied when the destination has none of its triple, replaces
 * the destination's when it is newer (created_at), and is left out when
 * it is older (counted: the summary says so); one of the same time is
 * the same profile, copied before. The destination kept its own
 * whichever was newer (ON CONFLICT DO NOTHING), and recommend then used
 * the stale one. The look-up only sorts the counts: the upsert's WHERE
 * keeps the newer also against a profile written meanwhile. A copied
 * profile is the destination's last stored (seq), copied in the source's
 * order, so profiles of one second keep it. */
static cf_status copy_profiles(copy_ctx *x)
{
    static const char find_sql[] =
        "SELECT created_at FROM profiles WHERE spec_key = ?1 AND backend = ?2 AND device = ?3";
    char select[512];
    /* in the order they were stored, each written here as the last stored
     * (seq, db/profiles.c; spec_key is ?1): those of one second keep their
     * order */
    snprintf(select, sizeof select, "SELECT %s FROM profiles ORDER BY created_at, %s", profiles_t.columns,
             CF_DB_PROFILE_SEQ);
    char *sql = insert_sql_own(&profiles_t, "seq", CF_DB_PROFILE_NEXT_SEQ,
                               " ON CONFLICT (spec_key, backend, device) DO UPDATE SET"
                               " spec_name = excluded.spec_name, created_at = excluded.created_at,"
                               " is_gpu = excluded.is_gpu, b_noise = excluded.b_noise,"
                               " max_local_batch = excluded.max_local_batch,"
                               " profile_json = excluded.profile_json, seq = excluded.seq"
                               " WHERE excluded.created_at > profiles.created_at");
    cf_db_stmt *src = NULL, *dst = NULL, *find = NULL;
    cf_status st = sql ? CF_OK : cf_error_set(CF_ERR_INTERNAL, "cannot copy table profiles");
    if (st == CF_OK && cf_db_prepare(x->from, select, &src) != CF_OK)
        st = cf_db_error(x->from, "cannot read");
    if (st == CF_OK && cf_db_prepare(x->to, sql, &dst) != CF_OK)
        st = cf_db_error(x->to, "cannot prepare insert into");
    if (st == CF_OK && cf_db_prepare(x->to, find_sql, &find) != CF_OK)
        st = cf_db_error(x->to, "cannot query");
    free(sql);
    enum { CREATED_AT = 4 }; /* column of profiles_t */
    int rc = CF_DB_DONE, n = n_columns(&profiles_t);
    while (st == CF_OK && (rc = cf_db_step(src)) == CF_DB_ROW && (st = cf_interrupt_check()) == CF_OK) {
        cf_db_reset(find);
        for (int k = 0; k < 3; k++) /* spec_key, backend, device */
            copy_value(src, k, find, k + 1, 't');
        int found = cf_db_step(find);
        if (found == CF_DB_FAILED) {
            st = cf_db_error(x->to, "cannot query");
            break;
        }
        int order = found == CF_DB_ROW ? strcmp(cf_db_column_text(src, CREATED_AT), cf_db_column_text(find, 0)) : 1;
        if (order == 0)
            continue; /* the same profile: copied before */
        if (order < 0) {
            x->counts->profiles_older++;
            continue;
        }
        cf_db_reset(dst);
        for (int i = 0; i < n; i++)
            copy_value(src, i, dst, i + 1, type_of(&profiles_t, i));
        if (cf_db_step(dst) == CF_DB_FAILED) {
            st = cf_db_error(x->to, "cannot copy into");
        } else if (cf_db_changes(dst) > 0) {
            x->counts->profiles++;
            if (found == CF_DB_ROW)
                x->counts->profiles_replaced++;
        }
    }
    if (st == CF_OK && rc == CF_DB_FAILED)
        st = cf_db_error(x->from, "cannot read");
    cf_db_finalize(src);
    cf_db_finalize(dst);
    cf_db_finalize(find);
    return st;
}

/* A parent table row by row, each new row with the rows of its child
 * tables (`child_key` holds the parent's id there): recommendations (with
 * alternatives, CI rows, gates; *map gets old → new ids for the
 * measurements), price snapshots (by fetch time and content hash) with
 * their rows, search runs with their probes. */
static cf_status copy_family(copy_ctx *x, const parent_desc *p, const table_desc *const *children, size_t n_children,
                             const char *child_key, id_map *map, long long *copied, long long *present)
{
    char select[1200];
    snprintf(select, sizeof select, "SELECT id, %s FROM %s ORDER BY id", p->t->columns, p->t->table);
    cf_db_stmt *src = NULL;
    if (cf_db_prepare(x->from, select, &src) != CF_OK)
        return cf_db_error(x->from, "cannot read");
    cf_status st = CF_OK;
    int rc;
    while (st == CF_OK && (rc = cf_db_step(src)) == CF_DB_ROW && (st = cf_interrupt_check()) == CF_OK) {
        long long old_id = cf_db_column_int64(src, 0), new_id = 0, n = 0;
        int is_new = 0;
        st = copy_parent(x, p, src, &new_id, &is_new);
        if (st == CF_OK && map)
            st = map_add(map, old_id, new_id);
        if (st != CF_OK)
            break;
        if (!is_new) {
            if (present)
                (*present)++;
            continue;
        }
        (*copied)++;
        for (size_t k = 0; st == CF_OK && k < n_children; k++) {
            char child[1200];
            snprintf(child, sizeof child, "SELECT %s FROM %s WHERE %s = ?1", children[k]->columns, children[k]->table,
                     child_key);
            st = copy_rows(x, children[k], child, old_id, "", new_id, 0, &n, NULL);
        }
    }
    if (st == CF_OK && rc == CF_DB_FAILED)
        st = cf_db_error(x->from, "cannot read");
    cf_db_finalize(src);
    return st;
}

static cf_status copy_body(cf_db *to, void *data)
{
    copy_ctx *x = data;
    (void)to;
    id_map map = {0}, snapshot_map = {0};
    long long ignored = 0;
    char select[1200];
    snprintf(select, sizeof select, "SELECT %s FROM specs", specs_t.columns);
    cf_status st = copy_rows(x, &specs_t, select, 0, " ON CONFLICT DO NOTHING", 0, 0, &x->counts->specs, &ignored);
    /* Snapshots before the recommendations, whose catalog_name names one:
     * both follow the snapshots' new ids (copy_snapshot_name), as does a
     * copied snapshot's base (an earlier snapshot: ids ascend). */
    if (st == CF_OK) {
        static const parent_desc snap = {&snapshots_t, " RETURNING id",
                                         "SELECT id FROM price_snapshots WHERE fetched_at = ?1 AND content_hash = ?2",
                                         {0, 4}, 2};
        static const table_desc *const rows[] = {&snapshot_rows_t};
        x->snapshots = &snapshot_map;
        st = copy_family(x, &snap, rows, 1, "snapshot_id", &snapshot_map, &x->counts->snapshots, NULL);
    }
    if (st == CF_OK) {
        static const parent_desc rec = {&recommendations_t, " ON CONFLICT (uid) DO NOTHING RETURNING id",
                                        "SELECT id FROM recommendations WHERE uid = ?1", {25, -1}, 5};
        static const table_desc *const children[] = {&alternatives_t, &ci_runs_t, &gates_t};
        st = copy_family(x, &rec, children, 3, "recommendation_id", &map, &x->counts->recommendations,
                         &x->counts->recommendations_present);
    }
    if (st == CF_OK)
        st = copy_measurements(x, &map);
    free(map.old_ids);
    free(map.new_ids);
    x->snapshots = NULL;
    free(snapshot_map.old_ids);
    free(snapshot_map.new_ids);
    if (st == CF_OK)
        st = copy_profiles(x);
    if (st == CF_OK) {
        static const parent_desc run = {&search_runs_t, " ON CONFLICT (uid) DO NOTHING RETURNING id",
                                        "SELECT id FROM search_runs WHERE uid = ?1", {23, -1}, -1};
        static const table_desc *const probes[] = {&probes_t};
        st = copy_family(x, &run, probes, 1, "search_id", NULL, &x->counts->search_runs, NULL);
    }
    return st;
}

cf_status cf_history_copy(cf_db *from, cf_db *to, cf_history_copy_counts *counts)
{
    memset(counts, 0, sizeof *counts);
    if (cf_db_schema_version(from) != cf_db_migration_count)
        return cf_error_set(CF_ERR_DB, "database '%s' has schema version %d; copying needs version %d", from->path,
                            cf_db_schema_version(from), cf_db_migration_count);
    copy_ctx x = {from, to, counts, NULL};
    cf_status st = cf_db_transaction(to, copy_body, &x);
    if (st != CF_OK) {
        cf_history_copy_counts none = {0};
        *counts = none; /* rolled back: nothing was copied */
    }
    return st;
}
