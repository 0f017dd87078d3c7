#include "cloudfit/advisor/spot_simulate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "../advisor_internal.h"
#include "../model/stateff_internal.h"
#include "../plan/elastic_internal.h"
#include "../plan/hetero_internal.h"
#include "spot_plan_internal.h"
#include "spot_replay_internal.h"
#include "spot_table_internal.h"

static const struct {
    unsigned bit;
    cf_lr_rule rule;
    const char *name;
} RULES[] = {{CF_SIM_FIXED, CF_LR_NONE, "fixed"},
             {CF_SIM_LINEAR, CF_LR_LINEAR, "linear"},
             {CF_SIM_SQRT, CF_LR_SQRT, "sqrt"},
             {CF_SIM_GAIN, CF_LR_GAIN, "gain"}};

static cf_status run_rows(const cf_simulate_request *req, const cf_spot_plan *plan, const size_t *seg,
                          const double *off, size_t n, cf_spot_run *runs, cf_simulate_row *row)
{
    cf_spot_replay_many(req->trace, seg, off, n, plan, runs, NULL);
    cf_status st = cf_spot_spread_of(runs, n, req->usd_per_node_h, CF_SPOT_CONFIDENCE, &row->spread);
    if (st != CF_OK)
        return st;
    double samples = 0, stalled = 0;
    for (size_t i = 0; i < n; i++) {
        samples += runs[i].samples_h * req->full_samples_per_s * 3600.0;
        stalled += runs[i].stalled_h;
    }
    row->mean_samples = samples / (double)n;
    row->mean_stalled_h = stalled / (double)n;
    row->progress_per_usd = isfinite(row->spread.mean_usd) && row->spread.mean_usd > 0
                                ? req->target_samples / row->spread.mean_usd
                                : 0;
    return CF_OK;
}

cf_status cf_simulate(const cf_simulate_request *req, cf_simulate_result *out)
{
    memset(out, 0, sizeof *out);
    const cf_spot_path *p = req->trace;
    if (req->n_types != p->n_types)
        return cf_error_set(CF_ERR_INVALID, "the trace has %d VM type(s), the plan %d", p->n_types, req->n_types);
    size_t n;
    size_t *seg;
    double *off;
    out->start_step_h = cf_spot_start_step(p, req->start_step_h > 0 ? req->start_step_h : CF_SPOT_REPLAY_STEP_H);
    if (req->single_start_h >= 0) {
        n = 1;
        seg = malloc(sizeof *seg);
        off = malloc(sizeof *off);
        if (seg && off) {
            double s = fmod(req->single_start_h, p->total_h), acc = 0;
            size_t i = 0;
            while (i + 1 < p->n && acc + p->d_h[i] <= s)
                acc += p->d_h[i++];
            seg[0] = i;
            off[0] = s - acc;
        }
    } else {
        double step = out->start_step_h;
        size_t cap = (size_t)(p->total_h / step) + 2;
        seg = malloc(cap * sizeof *seg);
        off = malloc(cap * sizeof *off);
        n = seg && off ? cf_spot_starts_grid(p, step, seg, off) : 0;
    }
    int states = (req->nodes[0] + 1) * (req->n_types > 1 ? req->nodes[1] + 1 : 1);
    cf_spot_run *runs = malloc((n ? n : 1) * sizeof *runs);
    double *rate = malloc((size_t)states * sizeof *rate), *samples = malloc((size_t)states * sizeof *samples);
    cf_status st = !(seg && off && runs && rate && samples) ? cf_error_set(CF_ERR_NOMEM, "out of memory")
                   : n == 0 ? cf_error_set(CF_ERR_INVALID, "the trace (%g s) is too short to start a job on",
                                           p->total_h * 3600.0)
                            : CF_OK;
    out->n_starts = n;
    if (st == CF_OK)
        cf_spot_path_stats_all(p, req->nodes, &out->trace_stats); /* a mix: over both types */
    cf_spot_plan plan = {.n_types = req->n_types, .nodes = {req->nodes[0], req->nodes[1]}, .work_h = req->work_h,
                         .checkpoint_h = req->checkpoint_h, .restart_h = req->restart_h,
                         .interval_h = req->interval_h, .semantics = req->semantics, .rate = rate,
                         .samples = samples};
    if (st == CF_OK && req->n_types > 1) {
        memcpy(rate, req->rate2, (size_t)states * sizeof *rate);
        memcpy(samples, req->samples2, (size_t)states * sizeof *samples);
        cf_simulate_row *row = &out->rows[out->n_rows++];
        row->rule = "mixed-types";
        row->batch = CF_ELASTIC_HOLD;
        st = run_rows(req, &plan, seg, off, n, runs, row);
    }
    unsigned rules = req->rules ? req->rules : CF_SIM_ALL_RULES;
    unsigned batches = req->batches ? req->batches : CF_SIM_HOLD | CF_SIM_SHRINK;
    for (int b = 0; b < 2 && st == CF_OK && req->n_types == 1; b++) {
        if (!(batches & (b == 0 ? CF_SIM_HOLD : CF_SIM_SHRINK)))
            continue;
        cf_elastic_request er = req->elastic;
        er.batch = b == 0 ? CF_ELASTIC_HOLD : CF_ELASTIC_SHRINK;
        for (size_t k = 0; k < sizeof RULES / sizeof *RULES && st == CF_OK; k++) {
            if (!(rules & RULES[k].bit) || out->n_rows == CF_SIMULATE_MAX_ROWS)
                continue;
            cf_simulate_row *row = &out->rows[out->n_rows++];
            row->rule = RULES[k].name;
            row->batch = er.batch;
            row->no_progress_max_nodes = cf_elastic_rule_rates(&er, RULES[k].rule, rate, samples);
            st = run_rows(req, &plan, seg, off, n, runs, row);
        }
    }
    free(seg);
    free(off);
    free(runs);
    free(rate);
    free(samples);
    return st;
}

/* ---- the plan ------------------------------------------------------------------------ */

void cf_simulate_setup_free(cf_simulate_setup *s)
{
    free(s->rate2);
    free(s->samples2);
    memset(s, 0, sizeof *s);
}

static const cf_gpu_perf *perf_of(const cf_advisor_input *in, const char *gpu)
{
    for (size_t i = 0; i < in->n_perf; i++)
        if (strcasecmp(in->perf[i].gpu, gpu) == 0)
            return &in->perf[i];
    return NULL;
}

static double replay_price(const cf_vm *vm)
{
    return vm->price_spot_usd_per_hr > 0 ? vm->price_spot_usd_per_hr : vm->price_ondemand_usd_per_hr;
}

cf_status cf_simulate_prepare(const cf_advisor_input *in, const cf_vm *const *vms, const int *nodes, int n_types,
                              const cf_spot_path *trace, cf_spot_semantics semantics, cf_simulate_setup *out)
{
    memset(out, 0, sizeof *out);
    out->n_types = n_types;
    const cf_job *job = in->job;
    const cf_constraints *k = in->constraints;
    for (int t = 0; t < n_types; t++) {
        const cf_gpu_perf *g = perf_of(in, vms[t]->gpu_model);
        if (!g)
            return cf_error_set(CF_ERR_INVALID, "no throughput model for %s (the trace's GPU)", vms[t]->gpu_model);
        out->perf[t] = cf_gpu_perf_on_vm(g, vms[t]->network_gbps); /* each VM's own network (issue 30) */
    }
    cf_simulate_request *r = &out->req;
    r->trace = trace;
    r->n_types = n_types;
    r->semantics = semantics;
    r->single_start_h = -1;
    int total_nodes = 0;
    for (int t = 0; t < n_types; t++) {
        r->nodes[t] = nodes[t];
        r->usd_per_node_h[t] = replay_price(vms[t]);
        total_nodes += nodes[t];
    }
    cf_status st = CF_OK;
    if (n_types == 1 && nodes[0] > CF_ADVISE_MAX_NODES)
        return cf_error_set(CF_ERR_INVALID, "a plan of %d VMs: cloudfit plans at most %d VMs of one type", nodes[0],
                            CF_ADVISE_MAX_NODES);
    for (int t = 0; n_types > 1 && t < n_types; t++)
        if (nodes[t] > CF_SIMULATE_MAX_MIXED_NODES)
            return cf_error_set(CF_ERR_INVALID, "%d × %s: a replay that mixes two VM types holds at most %d VMs of "
                                "each", nodes[t], vms[t]->instance_type, CF_SIMULATE_MAX_MIXED_NODES);
    if (n_types == 1) {
        cf_constraints one = *k;
        one.min_nodes = one.max_nodes = nodes[0];
        if (one.max_gpus < nodes[0] * vms[0]->gpu_count)
            one.max_gpus = nodes[0] * vms[0]->gpu_count;
        one.deadline_hours = 0;
        one.budget_usd = 0;
        one.spot = vms[0]->price_ondemand_usd_per_hr > 0 ? CF_SPOT_NEVER : CF_SPOT_ONLY;
        cf_advisor_input single = *in;
        single.constraints = &one;
        single.vms = vms;
        single.n_vms = 1;
        single.top = 1;
        cf_advice advice;
        st = cf_advise(&single, &advice);
        if (st == CF_OK && (advice.n_ranked == 0 || advice.ranked[0].nodes != nodes[0]))
            st = cf_error_set(CF_ERR_INFEASIBLE, "no configuration of %d × %s fits the model (memory, max_gpus)",
                              nodes[0], vms[0]->instance_type);
        if (st == CF_OK) {
            out->config = advice.ranked[0];
            const cf_config *c = &out->config;
            r->work_h = c->train_hours;
            r->full_samples_per_s = c->samples_per_s;
            r->target_samples = c->samples_to_target;
            r->elastic = (cf_elastic_request){.job = job, .perf = &out->perf[0],
                                              .gradient_bytes = job->parameters * job->gradient_bytes,
                                              .nodes = nodes[0], .gpus_per_node = c->gpus_per_node,
                                              .local_batch = c->local_batch, .accumulation = c->accumulation,
                                              .max_accumulation = k->max_accumulation,
                                              .max_global_batch = k->max_global_batch,
                                              .max_local_batch = out->perf[0].max_local_batch > 0
                                                                     ? out->perf[0].max_local_batch
                                                                     : 0,
                                              .noise = in->noise};
        }
        cf_advice_free(&advice);
    } else {
        cf_hetero_plan *p = &out->hetero;
        *p = (cf_hetero_plan){.vm = {vms[0], vms[1]}, .nodes = {nodes[0], nodes[1]},
                              .gpus_per_node = {vms[0]->gpu_count, vms[1]->gpu_count}};
        if (!cf_hetero_plan_best_batch(in, &out->perf[0], &out->perf[1], p))
            st = cf_error_set(CF_ERR_INFEASIBLE, "no global batch fits %d × %s + %d × %s", nodes[0],
                              vms[0]->instance_type, nodes[1], vms[1]->instance_type);
        size_t states = (size_t)(nodes[0] + 1) * (size_t)(nodes[1] + 1);
        if (st == CF_OK) {
            out->rate2 = malloc(states * sizeof *out->rate2);
            out->samples2 = malloc(states * sizeof *out->samples2);
            st = out->rate2 && out->samples2 ? cf_hetero_state_rates(in, &out->perf[0], &out->perf[1], p,
                                                                     out->rate2, out->samples2)
                                             : cf_error_set(CF_ERR_NOMEM, "out of memory");
        }
        if (st == CF_OK) {
            r->rate2 = out->rate2;
            r->samples2 = out->samples2;
            r->work_h = p->train_hours;
            r->full_samples_per_s = p->samples_per_s;
            r->target_samples = cf_samples_to_target(in->noise, job->total_samples, (double)p->global_batch);
        }
    }
    if (st != CF_OK) {
        cf_simulate_setup_free(out);
        return st;
    }
    cf_checkpoint_costs(cf_checkpoint_bytes(job->parameters, job->optimizer), k->storage_mb_per_s,
                        k->checkpoint_minutes, k->startup_minutes, &r->checkpoint_h, &r->restart_h);
    /* The interval the plan would use: Daly with the model's MTBF. */
    cf_spot_model_lookup(vms[0]->cloud, vms[0]->gpu_model, vms[0]->gpu_count, vms[0]->region, total_nodes,
                         &out->model);
    cf_spot_mc_settings settings = {CF_SPOT_RECOMMEND_PATH_HOURS, CF_SPOT_RECOMMEND_STARTS, CF_SPOT_SEED};
    cf_spot_mc *mc = NULL;
    const cf_spot_path *path = NULL;
    const cf_spot_path_stats *stats = NULL;
    st = cf_spot_mc_new(&settings, &mc);
    if (st == CF_OK)
        st = cf_spot_mc_path(mc, &out->model.row->process, total_nodes, &path, &stats);
    if (st == CF_OK) {
        out->model_mtbf_h = semantics == CF_SPOT_GANG ? stats->mtbf_gang_h : stats->mtbf_h;
        r->interval_h = cf_daly_interval_h(r->checkpoint_h, out->model_mtbf_h);
    }
    cf_spot_mc_free(mc);
    if (st != CF_OK)
        cf_simulate_setup_free(out);
    return st;
}
