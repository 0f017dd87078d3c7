#include "cloudfit/advisor/spot_simulate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    for (size_t i = 0; i < n; i++)
        cf_spot_replay(req->trace, seg[i], off[i], plan, &runs[i]);
    cf_status st = cf_spot_spread_of(runs, n, req->usd_per_node_h, CF_SPOT_DEADLINE_QUANTILE, &row->spread);
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
        double step = req->start_step_h > 0 ? req->start_step_h : CF_SPOT_REPLAY_STEP_H;
        size_t cap = (size_t)(p->total_h / step) + 2;
        seg = malloc(cap * sizeof *seg);
        off = malloc(cap * sizeof *off);
        n = seg && off ? cf_spot_starts_grid(p, step, seg, off) : 0;
    }
    int states = (req->nodes[0] + 1) * (req->n_types > 1 ? req->nodes[1] + 1 : 1);
    cf_spot_run *runs = malloc((n ? n : 1) * sizeof *runs);
    double *rate = malloc((size_t)states * sizeof *rate), *samples = malloc((size_t)states * sizeof *samples);
    cf_status st = seg && off && runs && rate && samples && n ? CF_OK : cf_error_set(CF_ERR_NOMEM, "out of memory");
    out->n_starts = n;
    if (st == CF_OK)
        cf_spot_path_stats_of(p, req->nodes[0], &out->trace_stats);
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
            row->diverges_at_nodes = cf_elastic_rule_rates(&er, RULES[k].rule, rate, samples);
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
