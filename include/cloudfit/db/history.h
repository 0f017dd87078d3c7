/* The history of recommendations (db/history.c, db/history_query.c,
 * db/ci.c): inserts, queries, pruning and recorded measurements. */
#ifndef CLOUDFIT_DB_HISTORY_H
#define CLOUDFIT_DB_HISTORY_H
#include <stddef.h>
#include "cloudfit/db.h"
#include "cloudfit/common/ci_env.h"
#include "cloudfit/common/shared_types.h"
#include "cloudfit/db/types.h"
#include "cloudfit/status.h"

/* cf_history_config (one ranked configuration as stored) and
 * cf_history_gate (one CI gate's outcome) are plain structs of
 * cloudfit/db/types.h: the advisor computes them, this module stores them. */

/* One recommendation as stored. Unit prices are copied in so old rows never
 * depend on today's catalog. Strings are borrowed for the insert. */
typedef struct {
    const char *created_at;       /* ISO 8601 UTC, e.g. 2026-11-21T23:30:00Z */
    const char *tool_version;
    const char *spec_hash;        /* the effective spec's (command-line overrides included) */
    const char *source_hash;      /* the spec file's as given; NULL or "" = spec_hash */
    const char *spec_name;
    const char *spec_json;        /* the effective spec (canonical JSON) */
    const char *identity;         /* what baselines follow: "NAME@PATH" or --baseline-key (NULL = none) */
    const char *uid;              /* unique row id; NULL = a new random one (history migrate passes the source's) */
    const char *objective;
    const char *catalog_name;     /* "embedded" or a snapshot id */
    const char *catalog_date;     /* newest data date of the catalog */
    /* chosen configuration */
    const char *cloud, *region, *instance_type, *gpu;
    int gpus_per_node, nodes, local_batch, accumulation;
    long global_batch;
    double lr;
    int spot;                     /* 0 on demand, 1 spot, 2 spot with an on-demand fallback (spot+od): stored as is */
    double step_time_s, hours, total_usd;
    double usd_per_node_hour;     /* unit price used */
    double hours_p10, hours_p90;          /* 80 % intervals (NaN = unknown) */
    double total_usd_p10, total_usd_p90;
    const char *result_json;      /* the whole recommendation document */
    /* Optional (schema 2): ranked alternatives (rank ≥ 2), CI metadata
     * (NULL = none), gate outcomes. Written in the same transaction. */
    const cf_history_config *alternatives;
    size_t n_alternatives;
    const cf_ci_info *ci;
    const cf_history_gate *gates;
    size_t n_gates;
} cf_history_record;

/* Inserts one recommendation in a single transaction; *out_id gets its id. */
cf_status cf_history_insert(cf_db *db, const cf_history_record *rec, long long *out_id);
/* Number of stored recommendations (for tests and `history`). */
cf_status cf_history_count(cf_db *db, long long *out_count);

/* ---- queries (db/history_query.c) ----------------------------------------
 * All SQL binds its values; strings in filters are matched literally. */

/* A stored recommendation as read back. */
typedef struct {
    long long id;
    char created_at[32];
    char tool_version[32];
    char spec_hash[65];
    char spec_name[65];
    char objective[16];
    char catalog_name[64];
    char catalog_date[16];
    char identity[512];        /* "" in rows from before schema 7 */
    cf_history_config chosen;  /* rank 1 */
    double hours_p10, hours_p90, total_usd_p10, total_usd_p90; /* NaN in rows from before schema 7 */
    cf_ci_info ci;             /* all "" when the run was not in CI */
    char *result_json;         /* owned; only filled by cf_history_get */
} cf_history_row;

/* Filters of `cloudfit history`; NULL / 0 = any. since/until are compared
 * as text with created_at (UTC "YYYY-MM-DDTHH:MM:SSZ"): pass them in that
 * form (cf_iso8601_normalize, cloudfit/common/clock.h). */
typedef struct {
    const char *spec_name;
    const char *spec_hash;     /* full hash or a prefix */
    const char *source_hash;   /* the spec file's hash, exact (rows before schema 6: their spec hash) */
    const char *since;         /* created_at >= since */
    const char *until;         /* created_at < until */
    const char *cloud;
    const char *gpu;           /* case-insensitive */
    /* Any of several (when cloud / gpu is NULL): rows of any of these
     * clouds, of any of these GPUs; n = 0: any. */
    const char *const *clouds;
    size_t n_clouds;
    const char *const *gpus;
    size_t n_gpus;
    const char *branch;
    int branch_runs_only;      /* with branch: runs of the branch itself, not of a pull request from it */
    /* The spec's identity; rows from before identities (NULL identity)
     * match by source_hash instead when both are given. */
    const char *identity;
    int limit;                 /* 0 = no limit */
    int listed_only;           /* only what `history` lists: identity "" and the intervals NaN (faster) */
    /* With it, rows dated after it (a clock that was ahead when they were
     * recorded) come after every other row, newest first among them, as a
     * price snapshot fetched in the future does (db/snapshots.c). */
    const char *later_last;
} cf_history_filter;

/* Rows matching `filter`, newest first, handed to `fn` one at a time as
 * they are read (the row is the callback's only for the call): memory does
 * not grow with the number of rows, on either backend (PostgreSQL sends
 * them as it reads them). `fn` must not query `db` itself: the query is
 * still running. A status other than CF_OK from `fn` stops the query and
 * is returned (its last error set by `fn`). */
typedef cf_status (*cf_history_row_fn)(void *ctx, const cf_history_row *row);
cf_status cf_history_each(cf_db *db, const cf_history_filter *filter, cf_history_row_fn fn, void *ctx);
/* Rows matching `filter`, newest first; caller frees with cf_history_rows_free. */
cf_status cf_history_list(cf_db *db, const cf_history_filter *filter, cf_history_row **out, size_t *n_out);
void cf_history_rows_free(cf_history_row *rows, size_t n);
/* One recommendation with its JSON document; CF_ERR_INVALID when absent. */
cf_status cf_history_get(cf_db *db, long long id, cf_history_row *out);
/* Its ranked alternatives (rank ≥ 2) in rank order; caller frees *out. */
cf_status cf_history_alternatives(cf_db *db, long long id, cf_history_config **out, size_t *n_out);
/* Its stored gate outcomes; caller frees *out. */
cf_status cf_history_gates(cf_db *db, long long id, cf_history_gate **out, size_t *n_out);
/* The newest recommendation for the spec `identity` (on `branch` when not
 * NULL: a run of that branch itself, never a pull request's run whose head
 * branch has the same name — a fork's `main` would become main's
 * baseline), whatever the command-line overrides were — or, for rows recorded
 * before identities existed, for the spec file `source_hash`; *found = 0
 * when there is none. `now` (ISO 8601 UTC, or NULL): rows dated after it
 * are taken only when there is no other (cf_history_filter.later_last). */
cf_status cf_history_latest(cf_db *db, const char *identity, const char *source_hash, const char *branch,
                            const char *now, cf_history_row *out, int *found);
/* The stored effective spec (canonical JSON) of `spec_hash`; *json = NULL
 * when the history does not hold it. Caller frees. */
cf_status cf_history_spec_json(cf_db *db, const char *spec_hash, char **json);
/* Deletes recommendations created before `before` (ISO 8601) with their
 * alternatives, CI rows and gates, and specs no longer referenced, in one
 * transaction. Recorded measurements stay (unlinked). */
cf_status cf_history_prune(cf_db *db, const char *before, long long *n_deleted);

/* ---- recorded measurements (cloudfit record) ----------------------------- */

/* What a real run measured, for a stored recommendation's configuration.
 * step_time_s / total_hours / total_usd: NaN = not measured. */
typedef struct {
    long long id;
    long long recommendation_id;   /* 0 once pruned */
    char recorded_at[32];
    char spec_hash[65], spec_name[65];
    char cloud[CF_CLOUD_NAME_MAX], instance_type[CF_INSTANCE_TYPE_MAX], gpu[CF_GPU_NAME_MAX];
    int gpus_per_node, nodes, local_batch, accumulation;
    double step_time_s, total_hours, total_usd;
    double predicted_step_time_s, predicted_hours, predicted_total_usd;
    char note[256];
    long long after_recommendation; /* the largest recommendation id when it was recorded; 0 = not known */
} cf_history_measurement;

/* Stores a measurement; the configuration and predictions are copied from
 * recommendation `m->recommendation_id` (which must exist). */
cf_status cf_history_record_measurement(cf_db *db, cf_history_measurement *m, long long *out_id);
/* Measurements with a step time for the spec file `source_hash` (whatever
 * the overrides of the recommendation they measured), oldest first; caller
 * frees. */
cf_status cf_history_measurements_for_spec(cf_db *db, const char *source_hash, cf_history_measurement **out,
                                           size_t *n_out);
/* Every measurement recorded against recommendation `recommendation_id`,
 * oldest first (history show); caller frees. */
cf_status cf_history_measurements_of(cf_db *db, long long recommendation_id, cf_history_measurement **out,
                                     size_t *n_out);

#endif
