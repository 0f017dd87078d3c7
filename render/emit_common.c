#include "cloudfit/common/number.h"
#include "cloudfit/render/emit_common.h"

#include "cloudfit/common/escape.h"
#include "cloudfit/common/json.h"
#include "cloudfit/render/text_table.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ---- environment ------------------------------------------------------------- */

/* Takes `value` (a cf_buf) into the list. */
static cf_status add_env(cf_emit_env_list *list, const char *name, cf_buf *value)
{
    cf_buf_append(value, "", 0); /* allocates an empty value too */
    if (cf_buf_failed(value)) {
        cf_buf_free(value);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    list->items[list->n].name = name;
    list->items[list->n].value = value->data;
    list->n++;
    *value = (cf_buf)CF_BUF_INIT;
    return CF_OK;
}

static cf_status add_env_long(cf_emit_env_list *list, const char *name, long v)
{
    cf_buf text = CF_BUF_INIT;
    cf_buf_printf(&text, "%ld", v);
    return add_env(list, name, &text);
}

cf_status cf_emit_envs(const cf_report *r, cf_emit_env_list *out)
{
    const cf_config *c = &r->advice->ranked[0];
    memset(out, 0, sizeof *out);
    cf_buf text = CF_BUF_INIT;
    cf_buf_puts(&text, r->spec->job.name);
    cf_status st = add_env(out, "CLOUDFIT_SPEC", &text);
    if (st == CF_OK) st = add_env_long(out, "CLOUDFIT_NODES", c->nodes);
    if (st == CF_OK) st = add_env_long(out, "CLOUDFIT_GPUS_PER_NODE", c->gpus_per_node);
    if (st == CF_OK) st = add_env_long(out, "CLOUDFIT_LOCAL_BATCH", c->local_batch);
    if (st == CF_OK) st = add_env_long(out, "CLOUDFIT_ACCUMULATION", c->accumulation);
    if (st == CF_OK) st = add_env_long(out, "CLOUDFIT_GLOBAL_BATCH", c->global_batch);
    if (st == CF_OK) {
        /* 6 significant digits, rounded as the JSON's chosen.lr is (one number in both) */
        cf_buf_printf(&text, "%.6g", cf_json_round(c->lr.lr, 6));
        st = add_env(out, "CLOUDFIT_LR", &text);
    }
    if (st == CF_OK) st = add_env_long(out, "CLOUDFIT_WARMUP", c->lr.warmup_recommended ? 1 : 0);
    const cf_elastic_plan *e = st == CF_OK ? cf_report_elastic(r, c) : NULL;
    if (st == CF_OK && !e) /* why the library made none (cloudfit/advisor/explain.h) */
        st = r->advice->explained ? cf_error_set(r->advice->explained->elastic_status, "%s",
                                                 r->advice->explained->elastic_error)
                                  : cf_error_set(CF_ERR_INTERNAL, "no elastic plan: the advice was not explained");
    if (st == CF_OK) {
        /* "nodes:lr,..." for every node count up to the chosen one: with
         * spot/elastic training the node count changes at run time, and
         * with it the global batch where it cannot be held, and so the LR. */
        for (int k = 1; k <= e->max_nodes; k++)
            cf_buf_printf(&text, "%s%d:%.6g", k > 1 ? "," : "", k, cf_json_round(e->points[k - 1].lr, 6));
        st = add_env(out, "CLOUDFIT_LR_BY_NODES", &text);
    }
    if (st == CF_OK) {
        /* "nodes:per_gpu_batch:accumulation:global_batch,...": the batch is
         * held while memory and max_accumulation allow (docs/spot.md). */
        for (int k = 1; k <= e->max_nodes; k++)
            cf_buf_printf(&text, "%s%d:%d:%d:%ld", k > 1 ? "," : "", k, e->points[k - 1].local_batch,
                          e->points[k - 1].accumulation, e->points[k - 1].global_batch);
        st = add_env(out, "CLOUDFIT_BATCH_BY_NODES", &text);
    }
    if (st == CF_OK) {
        /* The LR as a function of the global batch, for any batch the job
         * ends up with: lr(M) = lr0·((B+M0)·M/((B+M)·M0))^exponent (gain),
         * lr0·M/M0 (linear), lr0·√(M/M0) (sqrt), lr0 (none); a jump of the
         * LR by warmup_factor or more is reached linearly over warmup_steps. */
        cf_buf_printf(&text, "{\"rule\":\"%s\",\"lr0\":%.9g,\"m0\":%.9g,\"b_noise\":%.9g,\"exponent\":%g,"
                             "\"warmup_factor\":%g,\"warmup_steps\":%d,\"min_nodes\":%d,\"max_nodes\":%d",
                      cf_lr_rule_name(e->lr.rule), e->lr.lr0, e->lr.m0, e->lr.b_noise, e->lr.exponent,
                      e->warmup_factor, e->warmup_steps, e->min_nodes, e->max_nodes);
        /* the gain rule follows B(p), the noise scale at the current
         * training progress p (AdaScale with the trace; docs/spot.md) */
        const cf_noise_model *nm = e->lr.noise;
        cf_buf_puts(&text, ",\"b_noise_by_progress\":[");
        for (int i = 0; nm && i < nm->n_points; i++)
            cf_buf_printf(&text, "%s[%.6g,%.9g]", i ? "," : "", nm->points[i].progress_fraction, nm->points[i].b_noise);
        cf_buf_printf(&text, "],\"b_noise_trend_per_progress\":%.9g}", nm ? nm->trend_per_progress : 0.0);
        st = add_env(out, "CLOUDFIT_LR_FUNCTION", &text);
    }
    if (st == CF_OK && c->mixed && c->spot_est.valid) {
        /* The greedy switch-over (advisor/spot/spot_replay.c): leave spot at the
         * latest time on demand still finishes, now ≥ deadline −
         * (left × (1 + C/τ_od) + R + C), `left` the work still to do in
         * hours on all the VMs. */
        const cf_spot_estimate *m = &c->spot_est;
        double tau_od = m->interval_h > CF_SPOT_OD_INTERVAL_H ? m->interval_h : CF_SPOT_OD_INTERVAL_H;
        cf_buf_printf(&text, "{\"policy\":\"greedy\",\"deadline_hours\":%.9g,\"work_hours\":%.9g,"
                             "\"restart_hours\":%.9g,\"checkpoint_hours\":%.9g,"
                             "\"ondemand_checkpoint_interval_hours\":%.9g,\"deadline_at_env\":\"CLOUDFIT_DEADLINE_AT\"}",
                      m->deadline_h, c->train_hours, m->restart_h, m->checkpoint_h, tau_od);
        st = add_env(out, "CLOUDFIT_MIXED_PLAN", &text);
    }
    cf_buf_free(&text);
    if (st != CF_OK)
        cf_emit_envs_free(out);
    return st;
}

void cf_emit_envs_free(cf_emit_env_list *list)
{
    for (size_t i = 0; i < list->n; i++)
        free(list->items[i].value);
    memset(list, 0, sizeof *list);
}

int cf_emit_min_nodes(const cf_report *r, const cf_config *c)
{
    if (!c->spot)
        return c->nodes;
    const cf_elastic_plan *e = cf_report_elastic(r, c);
    return e ? e->min_nodes : c->nodes;
}

/* ---- entry point words ---------------------------------------------------------- */

/* torchrun's options (torch.distributed.run: torch 1.13, and 2.x with its
 * hyphenated aliases and the options it added, up to --event-log-handler,
 * --numa-binding, --duplicate-stdout-filters, --signals-to-handle,
 * --shutdown-timeout and --virtual-local-rank; the PyTorchJob's images
 * carry PyTorch 2.x): whether each takes a value, and whether the launch specs
 * set it themselves from the recommendation (the shape and the
 * rendezvous). The entry point follows those flags on torchrun's command
 * line, and torchrun's argparse keeps the last value of an option (and
 * takes an unambiguous prefix of its name), so an entry point starting
 * with "--nnodes=1" ran another shape than the one recommended. */
static const struct {
    const char *name; /* without the leading "--" */
    int takes_value, set_by_cloudfit;
} torchrun_options[] = {
    {"nnodes", 1, 1}, {"nproc_per_node", 1, 1}, {"nproc-per-node", 1, 1}, {"node_rank", 1, 1},
    {"node-rank", 1, 1}, {"master_addr", 1, 1}, {"master-addr", 1, 1}, {"master_port", 1, 1},
    {"master-port", 1, 1}, {"rdzv_backend", 1, 1}, {"rdzv-backend", 1, 1}, {"rdzv_endpoint", 1, 1},
    {"rdzv-endpoint", 1, 1}, {"rdzv_id", 1, 1}, {"rdzv-id", 1, 1}, {"max_restarts", 1, 1},
    {"max-restarts", 1, 1}, {"standalone", 0, 1}, {"rdzv_conf", 1, 0}, {"rdzv-conf", 1, 0},
    {"monitor_interval", 1, 0}, {"monitor-interval", 1, 0}, {"start_method", 1, 0}, {"start-method", 1, 0},
    {"role", 1, 0}, {"module", 0, 0}, {"no_python", 0, 0}, {"no-python", 0, 0}, {"run_path", 0, 0},
    {"run-path", 0, 0}, {"log_dir", 1, 0}, {"log-dir", 1, 0}, {"redirects", 1, 0}, {"tee", 1, 0},
    {"local_addr", 1, 0}, {"local-addr", 1, 0}, {"logs_specs", 1, 0}, {"logs-specs", 1, 0},
    {"local-ranks-filter", 1, 0}, {"local_ranks_filter", 1, 0}, {"event-log-handler", 1, 0},
    {"event_log_handler", 1, 0}, {"duplicate-stdout-filters", 1, 0}, {"duplicate_stdout_filters", 1, 0},
    {"duplicate-stderr-filters", 1, 0}, {"duplicate_stderr_filters", 1, 0}, {"numa-binding", 1, 0},
    {"numa_binding", 1, 0}, {"signals-to-handle", 1, 0}, {"signals_to_handle", 1, 0},
    {"shutdown-timeout", 1, 0}, {"shutdown_timeout", 1, 0}, {"virtual-local-rank", 0, 0},
    {"virtual_local_rank", 0, 0}, {"help", 0, 0},
};
#define N_TORCHRUN_OPTIONS (sizeof torchrun_options / sizeof torchrun_options[0])

/* The words before the training script are torchrun's options: refuses
 * one that sets what the launch specs set (by its name or a prefix
 * argparse would take for it). */
static cf_status check_torchrun_options(const cf_shell_words *w)
{
    for (size_t i = 0; i < w->n; i++) {
        const char *word = w->words[i];
        if (word[0] != '-' || !word[1] || strcmp(word, "--") == 0)
            return CF_OK; /* the script (or "--", then the script): the rest is its own */
        if (word[1] != '-') {
            /* -m, -r X, -t X, or a cluster of them as argparse reads one
             * (-mr X: -m, then -r with the next word): none of them sets
             * the shape, but the -r or -t that ends a cluster takes the
             * next word as its value, and what follows is torchrun's again */
            for (const char *p = word + 1; *p; p++)
                if (*p == 'r' || *p == 't') {
                    i += !p[1]; /* else the rest of the word is its value */
                    break;
                }
            continue;
        }
        const char *name = word + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        int exact = -1, n_prefix = 0, n_set = 0, first_set = -1, last = -1;
        for (size_t k = 0; k < N_TORCHRUN_OPTIONS; k++) {
            const char *opt = torchrun_options[k].name;
            if (strncmp(opt, name, len) != 0)
                continue;
            if (!opt[len])
                exact = (int)k;
            n_prefix++;
            last = (int)k;
            if (torchrun_options[k].set_by_cloudfit && n_set++ == 0)
                first_set = (int)k;
        }
        /* argparse: the exact name, else the one option a prefix names
         * (two spellings of one option count as one here) */
        int k = exact >= 0 ? exact : n_prefix > 0 && n_set == n_prefix ? first_set : n_prefix == 1 ? last : -1;
        if (k >= 0 && torchrun_options[k].set_by_cloudfit) {
            cf_error_set(CF_ERR_USAGE,
                         "option '--entrypoint': the word '%s' before the training script sets torchrun's --%s, "
                         "which the launch specs set from the recommendation",
                         word, torchrun_options[k].name);
            cf_error_hint("torchrun keeps the last value of an option, so the job would run another shape than the "
                          "recommended one; cloudfit writes --nnodes, --nproc_per_node, --node_rank, --master_addr, "
                          "--master_port, --rdzv_backend, --rdzv_endpoint, --rdzv_id, --max_restarts and --standalone "
                          "itself; change the search instead (--max-nodes, --gpu, ...; docs/launch.md)");
            return CF_ERR_USAGE;
        }
        /* its value; an option this table does not know (a later torch's,
         * or an ambiguous prefix) may take one too: the next word is then
         * read as its value, not as the script, so a shape flag after it
         * is still found (torch 1.13 refuses an unknown option anyway) */
        if ((k < 0 || torchrun_options[k].takes_value) && !eq)
            i++;
    }
    return CF_OK;
}

cf_status cf_emit_split_words(const char *text, cf_shell_words *out)
{
    /* Launch specs are UTF-8 text (YAML, a shell script): a byte that is
     * not is refused here, not found by libyaml after the recommendation
     * (it was reported as "out of memory", exit 70, or written raw into
     * the torchrun script). */
    long bad = cf_utf8_invalid_at(text);
    if (bad >= 0) {
        memset(out, 0, sizeof *out);
        cf_error_set(CF_ERR_USAGE, "option '--entrypoint' is not valid UTF-8 (byte %ld)", bad + 1);
        cf_error_hint("launch specs are UTF-8 text; give the entry point in UTF-8");
        return CF_ERR_USAGE;
    }
    cf_status st = cf_shell_split_words(text, out);
    if (st == CF_ERR_USAGE) {
        cf_error_prefix("option '--entrypoint'");
        cf_error_hint("the entry point is split into words like a POSIX shell command line but nothing is "
                      "expanded; put text that a shell would act on in single quotes (docs/launch.md)");
    } else if (st == CF_OK && out->n == 0) {
        cf_shell_words_free(out);
        st = cf_error_set(CF_ERR_USAGE, "option '--entrypoint': no words in '%s'", text);
    } else if (st == CF_OK && (st = check_torchrun_options(out)) != CF_OK) {
        cf_shell_words_free(out);
    }
    return st;
}

cf_status cf_emit_job_begin(const cf_report *r, const char *entrypoint, cf_emit_job *out)
{
    memset(out, 0, sizeof *out);
    cf_status st = cf_emit_split_words(entrypoint, &out->entry);
    if (st != CF_OK)
        return st;
    if ((st = cf_names_dns_label(r->spec->job.name, CF_EMIT_NAME_MAX_CHARS, &out->name)) == CF_OK &&
        (st = cf_emit_envs(r, &out->env)) == CF_OK)
        return CF_OK;
    cf_emit_job_free(out);
    return st;
}

void cf_emit_job_free(cf_emit_job *job)
{
    cf_emit_envs_free(&job->env);
    free(job->name);
    job->name = NULL;
    cf_shell_words_free(&job->entry);
}

/* ---- header ------------------------------------------------------------------- */

void cf_emit_header(const cf_report *r, const char *what, cf_buf *out)
{
    const cf_config *c = &r->advice->ranked[0];
    /* one comment line each: names escaped (the catalog refuses a line end
     * in one; this holds for any source) */
    char type[160], gpu[96], cloud[64], region[96];
    cf_escape_into(c->vm->instance_type, type, sizeof type);
    cf_escape_into(c->vm->gpu_model, gpu, sizeof gpu);
    cf_escape_into(c->vm->cloud, cloud, sizeof cloud);
    cf_escape_into(c->vm->region, region, sizeof region);
    cf_buf_printf(out, "# %s for %s, generated by cloudfit at %s\n", what, r->spec->job.name, r->created_at);
    char time[32]; /* as the table writes it: "18.9 h", "12 min" */
    cf_text_duration(c->hours, time, sizeof time);
    cf_buf_printf(out, "# chosen: %d × %s (%d×%s) on %s/%s%s; predicted %s%s, $%.2f\n", c->nodes, type,
                  c->gpus_per_node, gpu, cloud, region,
                  !c->spot ? "" : c->mixed ? ", spot, then on demand near the deadline (a mixed plan)" : ", spot",
                  c->spot ? "p50 " : "", time, c->total_usd);
    cf_buf_puts(out, "# The training script reads CLOUDFIT_LOCAL_BATCH, CLOUDFIT_ACCUMULATION and CLOUDFIT_LR\n"
                     "# (CLOUDFIT_BATCH_BY_NODES and CLOUDFIT_LR_BY_NODES when the node count changes at run\n"
                     "# time; CLOUDFIT_LR_FUNCTION gives the LR for any global batch, examples/elastic/).\n");
}

void cf_emit_mixed_note(const cf_report *r, long long deadline_at, cf_buf *out)
{
    const cf_config *c = &r->advice->ranked[0];
    if (!c->mixed)
        return;
    cf_buf_printf(out, "# Mixed plan: %d spot VMs first; when the deadline comes close, the same %d VMs on demand.\n",
                  c->nodes, c->nodes);
    char seconds[32], deadline[48];
    cf_number_plain_text(c->spot_est.deadline_h, CF_NUMBER_AS_GIVEN, deadline, sizeof deadline);
    if (deadline_at)
        cf_buf_printf(out, "# Switch-over (docs/spot.md \"Mixed plans\"): every pod has CLOUDFIT_DEADLINE_AT=%lld, the\n"
                           "# deadline in epoch seconds (%s h after this file was written); at each checkpoint the\n",
                      deadline_at, deadline);
    else
        cf_buf_printf(out, "# Switch-over (docs/spot.md \"Mixed plans\"): launch with CLOUDFIT_DEADLINE_AT set to the\n"
                           "# deadline (epoch seconds, e.g. $(( $(date +%%s) + %s ))); at each checkpoint the\n",
                      cf_emit_deadline_seconds(c->spot_est.deadline_h, seconds, sizeof seconds));
    cf_buf_puts(out, "# training script asks cloudfit_elastic.MixedPlan.from_env().switch_due(work_left_hours) and,\n"
                     "# when it is due, saves a checkpoint and exits 0 in the spot phase (CLOUDFIT_PHASE=spot); the\n"
                     "# on-demand phase (CLOUDFIT_PHASE=ondemand) resumes from that checkpoint to the end.\n");
}

const char *cf_emit_deadline_seconds(double hours, char *buf, size_t size)
{
    if (hours == floor(hours))
        snprintf(buf, size, "%.0f * 3600", hours);
    else
        snprintf(buf, size, "%.0f", round(hours * 3600.0));
    return buf;
}
