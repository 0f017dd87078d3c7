/* Search runs and their probes in the history database (db/search_runs.c,
 * schema migration 5; docs/history.md, docs/search.md). */
#ifndef CLOUDFIT_DB_SEARCH_RUNS_H
#define CLOUDFIT_DB_SEARCH_RUNS_H
#include <stddef.h>
#include "cloudfit/db.h"

typedef struct {
    const char *created_at, *tool_version, *spec_hash, *spec_name;
    const char *runner;              /* "trace:FILE" or "exec:TEMPLATE" */
    const char *method, *objective;
    long seed;
    int has_chosen;
    const char *cloud, *instance_type, *gpu;
    int gpus_per_node, nodes, local_batch;
    double step_time_s, hours, total_usd;
    int probe_count;
    double profile_cost_usd, probe_cost_usd, overhead_usd;
    double regret_pct;               /* NAN = unknown (no oracle) */
    const char *result_json;
} cf_search_record;

typedef struct {
    const char *kind;                /* "profile" | "probe" */
    const char *cloud, *region, *instance_type, *gpu;
    int gpus_per_node, nodes, local_batch, steps, attempts;
    double measured_step_time_s;     /* NAN = failed */
    double predicted_step_time_s;    /* NAN = no estimate yet */
    double cost_usd;
    const char *error;               /* "" when it ran */
} cf_search_probe_record;

/* Writes the run and all its probes in one transaction. */
cf_status cf_search_history_insert(cf_db *db, const cf_search_record *rec, const cf_search_probe_record *probes,
                                   size_t n_probes, long long *out_id);
cf_status cf_search_history_count(cf_db *db, long long *out_runs, long long *out_probes);

#endif
