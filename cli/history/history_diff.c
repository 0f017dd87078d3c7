#include "history/history_diff.h"

#include <stdio.h>
#include <string.h>

void cf_history_config_from(const cf_config *c, int rank, cf_history_config *out)
{
    memset(out, 0, sizeof *out);
    out->rank = rank;
    snprintf(out->cloud, sizeof out->cloud, "%s", c->vm->cloud);
    snprintf(out->region, sizeof out->region, "%s", c->vm->region);
    snprintf(out->instance_type, sizeof out->instance_type, "%s", c->vm->instance_type);
    snprintf(out->gpu, sizeof out->gpu, "%s", c->vm->gpu_model);
    out->gpus_per_node = c->gpus_per_node;
    out->nodes = c->nodes;
    out->local_batch = c->local_batch;
    out->accumulation = c->accumulation;
    out->global_batch = c->global_batch;
    out->lr = c->lr.lr;
    out->spot = c->spot;
    out->step_time_s = c->step_time_s;
    out->hours = c->hours;
    out->total_usd = c->total_usd;
    out->usd_per_node_hour = c->nodes > 0 ? c->usd_per_hour / c->nodes : 0;
}
