/* --emit skypilot: a SkyPilot task YAML. num_nodes and the batch/LR in
 * envs come from the chosen configuration; resources.ordered lists it
 * first, then the ranked alternatives with the same VM shape (GPU model and
 * GPUs per VM; on-demand ones only for an on-demand task) as fallbacks
 * SkyPilot tries in order: on the same hardware
 * the chosen node count, per-GPU batch and LR stay valid (num_nodes and
 * envs are per task, so other shapes would need another recipe).
 * Accelerator names are SkyPilot's for each cloud and instance type
 * (data/launch_accelerators.csv). A spot task is meant for managed jobs
 * (`sky jobs launch`), the only place where job_recovery applies. A mixed
 * plan (spot, then on demand near the deadline) is a managed-job pipeline
 * of two tasks on the same VMs, run one after the other: the spot task
 * until the switch-over (the training script leaves at it, docs/spot.md),
 * then the on-demand task to the end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/render/emit_common.h"
#include "cloudfit/common/yaml_out.h"

/* A fallback runs the same recipe (same GPU model and GPUs per VM); an
 * on-demand task takes no spot fallback, which `sky launch` would run
 * without recovery (a spot task is a managed job and may fall back to
 * on-demand VMs). */
static int fallback_ok(const cf_config *chosen, int spot, const cf_config *alt)
{
    return strcmp(chosen->vm->gpu_model, alt->vm->gpu_model) == 0 && chosen->gpus_per_node == alt->gpus_per_node &&
           (spot || !alt->spot);
}

/* The ranked configurations the fallbacks come from: a depth that does not
 * follow --top (cf_advice.n_ranked_launch). */
static size_t n_candidates(const cf_advice *a)
{
    return a->n_ranked_launch ? a->n_ranked_launch : a->n_ranked;
}

/* "NAME:COUNT" in SkyPilot's accelerator names for this VM. */
static cf_status accelerators(const cf_config *c, cf_buf *out)
{
    cf_emit_accelerator acc;
    cf_status st = cf_emit_accelerator_for(c->vm, &acc);
    if (st != CF_OK)
        return st;
    cf_buf_printf(out, "%s:%d", acc.skypilot, c->gpus_per_node);
    cf_emit_accelerator_free(&acc);
    return CF_OK;
}

static cf_status candidate(cf_yaml_out *y, const cf_config *c, int spot)
{
    cf_buf text = CF_BUF_INIT;
    cf_status st = accelerators(c, &text);
    if (st == CF_OK) {
        yo_map(y);
        cf_buf infra = CF_BUF_INIT;
        cf_buf_printf(&infra, "%s/%s", c->vm->cloud, c->vm->region);
        yo_kv_str(y, "infra", cf_buf_cstr(&infra));
        cf_buf_free(&infra);
        yo_kv_str(y, "instance_type", c->vm->instance_type);
        yo_kv_str(y, "accelerators", cf_buf_cstr(&text));
        yo_kv_bool(y, "use_spot", spot);
        yo_map_end(y);
    }
    cf_buf_free(&text);
    return st;
}

/* The run block: torchrun from SkyPilot's node variables (SkyPilot sets
 * SKYPILOT_NODE_RANK, SKYPILOT_NODE_IPS, SKYPILOT_NUM_NODES and
 * SKYPILOT_NUM_GPUS_PER_NODE on every node). torchrun's flags use the
 * underscore spelling, the one every torch release since 1.9 parses. */
static void run_block(const cf_shell_words *entry, cf_buf *run)
{
    cf_buf_puts(run, "MASTER_ADDR=$(echo \"$SKYPILOT_NODE_IPS\" | head -n1)\n"
                     "torchrun --nnodes=\"$SKYPILOT_NUM_NODES\" --nproc_per_node=\"$SKYPILOT_NUM_GPUS_PER_NODE\" \\\n"
                     "  --node_rank=\"$SKYPILOT_NODE_RANK\" --master_addr=\"$MASTER_ADDR\" --master_port=29500 \\\n"
                     " ");
    for (size_t i = 0; i < entry->n; i++) {
        cf_buf_puts(run, " ");
        cf_shell_quote(run, entry->words[i]);
    }
    cf_buf_puts(run, "\n");
}

/* One task document: the chosen VMs, on spot or on demand; `phase` is
 * CLOUDFIT_PHASE's value ("" for a plan of one kind); `task_name` NULL for
 * the job's own name. */
static cf_status task_doc(const cf_report *r, const cf_emit_job *job, const char *task_name, int spot,
                          const char *phase, cf_buf *out)
{
    const cf_advice *a = r->advice;
    const cf_config *c = &a->ranked[0];
    cf_buf acc = CF_BUF_INIT, run = CF_BUF_INIT;
    cf_status st = accelerators(c, &acc);
    if (st != CF_OK) {
        cf_buf_free(&acc);
        return st;
    }
    cf_yaml_out y;
    yo_begin(&y, out);
    yo_map(&y);
    yo_kv_str(&y, "name", task_name ? task_name : job->name);
    yo_kv_int(&y, "num_nodes", c->nodes);
    yo_str(&y, "resources", 0);
    yo_map(&y);
    yo_kv_str(&y, "accelerators", cf_buf_cstr(&acc));
    yo_kv_bool(&y, "use_spot", spot);
    if (spot)
        yo_kv_str(&y, "job_recovery", "FAILOVER");
    yo_str(&y, "ordered", 0);
    yo_seq(&y);
    st = candidate(&y, c, spot);
    for (size_t i = 1; st == CF_OK && i < n_candidates(a); i++)
        if (fallback_ok(c, spot, &a->ranked[i]))
            st = candidate(&y, &a->ranked[i], spot && a->ranked[i].spot);
    yo_seq_end(&y);
    yo_map_end(&y);
    yo_str(&y, "envs", 0);
    yo_map(&y);
    for (size_t i = 0; i < job->env.n; i++)
        yo_kv_quoted(&y, job->env.items[i].name, job->env.items[i].value);
    if (phase[0])
        yo_kv_quoted(&y, "CLOUDFIT_PHASE", phase);
    yo_map_end(&y);
    run_block(&job->entry, &run);
    yo_str(&y, "run", 0);
    yo_literal(&y, cf_buf_failed(&run) ? "" : cf_buf_cstr(&run));
    yo_map_end(&y);
    cf_status yst = yo_end(&y);
    if (st == CF_OK)
        st = cf_buf_failed(&run) ? cf_error_set(CF_ERR_NOMEM, "out of memory") : yst;
    cf_buf_free(&run);
    cf_buf_free(&acc);
    return st;
}

cf_status cf_emit_skypilot(const cf_report *r, const char *entrypoint, cf_buf *out)
{
    const cf_advice *a = r->advice;
    const cf_config *c = &a->ranked[0];
    cf_emit_job job;
    cf_status st = cf_emit_job_begin(r, entrypoint, &job);
    if (st != CF_OK)
        return st;
    const char *name = job.name;
    size_t n_fallbacks = 0;
    for (size_t i = 1; i < n_candidates(a); i++)
        n_fallbacks += fallback_ok(c, c->spot, &a->ranked[i]);
    cf_emit_header(r, c->mixed ? "SkyPilot managed-job pipeline" : "SkyPilot task", out);
    cf_buf_printf(out, "# resources.ordered: the chosen offer, then %zu ranked alternative(s) with the same GPU model and\n"
                       "# GPUs per VM, which run the same recipe%s (%zu others are left out; see --format json).\n",
                  n_fallbacks, c->spot ? "" : ", on demand", n_candidates(a) - 1 - n_fallbacks);
    if (c->mixed) {
        char seconds[32];
        cf_emit_mixed_note(r, 0, out);
        cf_buf_printf(out, "# Two tasks run one after the other: %s-sp on spot VMs (recovered from preemptions), then\n"
                           "# %s-od on demand. Launch the pipeline as a managed job with the deadline:\n"
                           "#   sky jobs launch -n %s --env CLOUDFIT_DEADLINE_AT=$(( $(date +%%s) + %s )) THIS_FILE\n",
                      name, name, name, cf_emit_deadline_seconds(c->spot_est.deadline_h, seconds, sizeof seconds));
    } else if (c->spot) {
        cf_buf_printf(out, "# Spot: launch as a managed job, which recovers from preemptions (job_recovery):\n"
                           "#   sky jobs launch -n %s THIS_FILE\n",
                      name);
    } else {
        cf_buf_printf(out, "# Launch: sky launch -c %s THIS_FILE\n", name);
    }
    if (!c->mixed) {
        st = task_doc(r, &job, NULL, c->spot, "", out);
    } else {
        /* The pipeline: a first document with only its name, then the tasks. */
        cf_buf task = CF_BUF_INIT;
        cf_buf_printf(&task, "%s-sp", name);
        cf_yaml_out y;
        yo_begin(&y, out);
        yo_map(&y);
        yo_kv_str(&y, "name", name);
        yo_map_end(&y);
        st = yo_end(&y);
        cf_buf_puts(out, "---\n");
        if (st == CF_OK)
            st = task_doc(r, &job, cf_buf_cstr(&task), 1, "spot", out);
        cf_buf_puts(out, "---\n");
        task.len = 0;
        cf_buf_printf(&task, "%s-od", name);
        if (st == CF_OK)
            st = task_doc(r, &job, cf_buf_cstr(&task), 0, "ondemand", out);
        if (st == CF_OK && cf_buf_failed(&task))
            st = cf_error_set(CF_ERR_NOMEM, "out of memory");
        cf_buf_free(&task);
    }
    cf_emit_job_free(&job);
    return st;
}
