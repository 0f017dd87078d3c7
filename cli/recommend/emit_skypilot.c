/* --emit skypilot: a SkyPilot task YAML. num_nodes and the batch/LR in
 * envs come from the chosen configuration; resources.ordered lists it
 * first, then the ranked alternatives with the same VM shape (GPU model and
 * GPUs per VM) as fallbacks SkyPilot tries in order: on the same hardware
 * the chosen node count, per-GPU batch and LR stay valid (num_nodes and
 * envs are per task, so other shapes would need another recipe). */
#include <stdio.h>
#include <string.h>

#include "recommend/emit_common.h"
#include "render/yaml_out.h"

static int same_shape(const cf_config *a, const cf_config *b)
{
    return strcmp(a->vm->gpu_model, b->vm->gpu_model) == 0 && a->gpus_per_node == b->gpus_per_node;
}

static void candidate(cf_yaml_out *y, const cf_config *c)
{
    char text[128];
    yo_map(y);
    snprintf(text, sizeof text, "%s/%s", c->vm->cloud, c->vm->region);
    yo_kv_str(y, "infra", text);
    yo_kv_str(y, "instance_type", c->vm->instance_type);
    snprintf(text, sizeof text, "%s:%d", c->vm->gpu_model, c->gpus_per_node);
    yo_kv_str(y, "accelerators", text);
    yo_kv_bool(y, "use_spot", c->spot);
    yo_map_end(y);
}

cf_status cf_emit_skypilot(const cf_report *r, const char *entrypoint, cf_buf *out)
{
    const cf_advice *a = r->advice;
    const cf_config *c = &a->ranked[0];
    size_t n_fallbacks = 0;
    for (size_t i = 1; i < a->n_ranked; i++)
        n_fallbacks += same_shape(c, &a->ranked[i]);
    cf_emit_header(r, "SkyPilot task", out);
    cf_buf_printf(out, "# resources.ordered: the chosen offer, then %zu ranked alternative(s) with the same GPU model and\n"
                       "# GPUs per VM, which run the same recipe (%zu others need another one; see --format json).\n"
                       "# Launch: sky launch -c %s THIS_FILE\n",
                  n_fallbacks, a->n_ranked - 1 - n_fallbacks, r->spec->job.name);
    cf_yaml_out y;
    yo_begin(&y, out);
    yo_map(&y);
    yo_kv_str(&y, "name", r->spec->job.name);
    yo_kv_int(&y, "num_nodes", c->nodes);
    yo_str(&y, "resources", 0);
    yo_map(&y);
    char acc[64];
    snprintf(acc, sizeof acc, "%s:%d", c->vm->gpu_model, c->gpus_per_node);
    yo_kv_str(&y, "accelerators", acc);
    yo_kv_bool(&y, "use_spot", c->spot);
    if (c->spot)
        yo_kv_str(&y, "job_recovery", "FAILOVER");
    yo_str(&y, "ordered", 0);
    yo_seq(&y);
    candidate(&y, c);
    for (size_t i = 1; i < a->n_ranked; i++)
        if (same_shape(c, &a->ranked[i]))
            candidate(&y, &a->ranked[i]);
    yo_seq_end(&y);
    yo_map_end(&y);
    yo_str(&y, "envs", 0);
    yo_map(&y);
    cf_emit_env env[CF_EMIT_MAX_ENV];
    size_t n_env = cf_emit_envs(r, env);
    for (size_t i = 0; i < n_env; i++)
        yo_kv_quoted(&y, env[i].name, env[i].value);
    yo_map_end(&y);
    /* SkyPilot sets SKYPILOT_NODE_RANK, SKYPILOT_NODE_IPS and
     * SKYPILOT_NUM_GPUS_PER_NODE on every node. */
    cf_buf run = CF_BUF_INIT;
    cf_buf_printf(&run,
                  "MASTER_ADDR=$(echo \"$SKYPILOT_NODE_IPS\" | head -n1)\n"
                  "torchrun --nnodes=$SKYPILOT_NUM_NODES --nproc-per-node=$SKYPILOT_NUM_GPUS_PER_NODE \\\n"
                  "  --node-rank=$SKYPILOT_NODE_RANK --master-addr=$MASTER_ADDR --master-port=29500 \\\n"
                  "  %s\n",
                  entrypoint);
    yo_str(&y, "run", 0);
    yo_literal(&y, cf_buf_failed(&run) ? "" : run.data);
    cf_buf_free(&run);
    yo_map_end(&y);
    return yo_end(&y);
}
