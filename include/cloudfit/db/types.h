/* A recommendation as the history stores it, a CI gate's outcome and what
 * a real run measured (docs/history.md, docs/ci.md): the advisor computes
 * them, db/ stores them. Any module may include this header (the layout
 * rule for `<module>/types.h`). */
#ifndef CLOUDFIT_DB_TYPES_H
#define CLOUDFIT_DB_TYPES_H
#include "cloudfit/common/shared_types.h"

/* ---- what a real run measured (cloudfit record) ------------------------------ */

typedef struct {
    char cloud[CF_CLOUD_NAME_MAX], instance_type[CF_INSTANCE_TYPE_MAX], gpu[CF_GPU_NAME_MAX];
    int gpus_per_node, nodes, local_batch, accumulation;
    double step_time_s;        /* NaN = not measured */
} cf_recorded_run;

/* ---- a recommendation as stored, and CI gates -------------------------------- */

/* One ranked configuration in the form the history stores it (rank 1 is
 * the chosen one): what a CI gate compares with (advisor/plan/gates.c) and a
 * history row holds (db/history.c). */
typedef struct {
    int rank;
    char cloud[CF_CLOUD_NAME_MAX], region[CF_REGION_NAME_MAX], instance_type[CF_INSTANCE_TYPE_MAX];
    char gpu[CF_GPU_NAME_MAX];
    int gpus_per_node, nodes, local_batch, accumulation;
    long global_batch;
    double lr;
    int spot;
    int mixed;                 /* with spot: an on-demand fallback near the deadline (spot+od); the history's
                                  spot column holds 2 then, so no schema change and earlier rows read as 0/1 */
    double step_time_s, hours, total_usd;
    double usd_per_node_hour;
} cf_history_config;

/* One CI gate's outcome (docs/ci.md). value is NaN when there was nothing
 * to compare with (the gate then passes and `note` says why). */
typedef struct {
    char name[32];             /* max_cost_usd | max_hours | max_cost_increase_pct | max_cost_increase_usd |
                                  require_baseline */
    double limit;
    double value;
    int passed;
    char note[1200];
} cf_history_gate;

#endif
