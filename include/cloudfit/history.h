/* The SQLite history of recommendations (DESIGN.md §2, db/). Schema by
 * numbered migrations applied on open; WAL and a busy timeout so several
 * processes (CI jobs) can write at once. */
#ifndef CLOUDFIT_HISTORY_H
#define CLOUDFIT_HISTORY_H
#include <stddef.h>
#include "cloudfit/status.h"

typedef struct cf_db cf_db;

/* One recommendation as stored. Unit prices are copied in so old rows never
 * depend on today's catalog. Strings are borrowed for the insert. */
typedef struct {
    const char *created_at;       /* ISO 8601 UTC, e.g. 2026-11-21T23:30:00Z */
    const char *tool_version;
    const char *spec_hash;
    const char *spec_name;
    const char *spec_json;        /* the spec as given (canonical JSON) */
    const char *objective;
    const char *catalog_name;     /* "embedded" or a snapshot id */
    const char *catalog_date;     /* newest data date of the catalog */
    /* chosen configuration */
    const char *cloud, *region, *instance_type, *gpu;
    int gpus_per_node, nodes, local_batch, accumulation;
    long global_batch;
    double lr;
    int spot;
    double step_time_s, hours, total_usd;
    double usd_per_node_hour;     /* unit price used */
    const char *result_json;      /* the whole recommendation document */
} cf_history_record;

/* Opens (creating when missing) and migrates the database at `path`. */
cf_status cf_db_open(const char *path, cf_db **out);
void cf_db_close(cf_db *db);
/* Schema version after migrations (PRAGMA user_version). */
int cf_db_schema_version(cf_db *db);
/* Inserts one recommendation in a single transaction; *out_id gets its id. */
cf_status cf_history_insert(cf_db *db, const cf_history_record *rec, long long *out_id);
/* Number of stored recommendations (for tests and `history`). */
cf_status cf_history_count(cf_db *db, long long *out_count);
/* Default path: $XDG_DATA_HOME/cloudfit/history.db, else
 * $HOME/.local/share/cloudfit/history.db. */
cf_status cf_db_default_path(char *out, size_t n);

#endif
