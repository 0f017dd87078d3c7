#include "cloudfit/advisor/spot_calibrate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/advisor/spot_plan.h"
#include "cloudfit/common/parallel.h"
#include "spot_calibrate_internal.h"
#include "spot_plan_internal.h"
#include "spot_replay_internal.h"

void cf_spot_path_truncate(cf_spot_path *p, double hours)
{
    double t = 0;
    size_t i = 0;
    while (i < p->n && t + p->d_h[i] < hours) {
        t += p->d_h[i];
        i++;
    }
    if (i < p->n) {
        p->d_h[i] = hours - t;
        p->n = i + 1;
        p->total_h = hours;
    }
}

void cf_calibrate_result_free(cf_calibrate_result *r)
{
    free(r->items);
    free(r->replicate_shares);
    memset(r, 0, sizeof *r);
}

/* Without wall times only the counts are wanted, so a replay may stop once
 * it is past the item's largest quantile (cf_spot_replay_until: the counts
 * are the same). */
static double stop_of(const cf_calibrate_item *it, int want_wall)
{
    double stop_h = want_wall ? INFINITY : -INFINITY;
    for (int q = 0; q < CF_CAL_N && !want_wall; q++)
        if (!(it->model_h[q] <= stop_h)) /* larger, or NaN: no stop */
            stop_h = isnan(it->model_h[q]) ? INFINITY : it->model_h[q];
    return stop_h;
}

/* The replays of trace j's items (all, or the scored ones) on path p from n
 * starts: for the k-th of them, the counts of wall times at or below each
 * model quantile added to below[k·CF_CAL_N + q], and the wall times into
 * wall[k·n + i] when wall is not NULL. The lengths of one start are
 * replayed together (cf_spot_replay_lengths: the items of a trace share
 * the plan but for the work, longest first). Returns the items taken. */
static size_t score_trace(const cf_calibrate_trace *t, const cf_calibrate_result *res, size_t j, int scored_only,
                          const cf_spot_path *p, const size_t *seg, const double *off, size_t n, size_t *below,
                          double *wall)
{
    const cf_calibrate_item *mine[CF_CALIBRATE_LENGTHS];
    size_t m = 0;
    for (size_t k = 0; k < res->n_items && m < CF_CALIBRATE_LENGTHS; k++)
        if (res->items[k].trace == j && (res->items[k].scored || !scored_only))
            mine[m++] = &res->items[k];
    if (!m)
        return 0;
    cf_spot_plan plan = {.n_types = 1, .nodes = {t->nodes, 0}, .work_h = mine[0]->work_h,
                         .checkpoint_h = t->checkpoint_h, .restart_h = t->restart_h, .interval_h = mine[0]->interval_h,
                         .semantics = CF_SPOT_ELASTIC};
    double work[CF_CALIBRATE_LENGTHS], stop_h[CF_CALIBRATE_LENGTHS];
    int together = 1; /* one plan but for the work, longest first (as model_items makes them) */
    for (size_t k = 0; k < m; k++) {
        work[k] = mine[k]->work_h;
        stop_h[k] = stop_of(mine[k], wall != NULL);
        together &= mine[k]->interval_h == mine[0]->interval_h && (k == 0 || work[k] <= work[k - 1]);
    }
    for (size_t i = 0; i < n; i++) {
        cf_spot_run runs[CF_CALIBRATE_LENGTHS];
        if (together) {
            cf_spot_replay_lengths(p, seg[i], off[i], &plan, work, stop_h, m, runs);
        } else {
            for (size_t k = 0; k < m; k++) {
                cf_spot_plan one = plan;
                one.work_h = work[k];
                one.interval_h = mine[k]->interval_h;
                cf_spot_replay_until(p, seg[i], off[i], &one, stop_h[k], &runs[k]);
            }
        }
        for (size_t k = 0; k < m; k++) {
            for (int q = 0; q < CF_CAL_N; q++)
                below[k * CF_CAL_N + (size_t)q] += runs[k].wall_h <= mine[k]->model_h[q];
            if (wall)
                wall[k * n + i] = runs[k].wall_h;
        }
    }
    return m;
}

typedef struct {
    const cf_calibrate_trace *traces;
    size_t n_traces;
    const cf_calibrate_result *res;
    unsigned long seed;
    double *shares;     /* replicates × CF_CAL_N */
    cf_status *status;  /* per replicate */
    char (*error)[200];
} boot_ctx;

/* One bootstrap replicate: a trace of each real trace's length drawn from
 * its model row, scored like the real one (windows every
 * CF_CALIBRATE_BOOT_STEP_H). */
static void boot_one(void *data, size_t b, int thread)
{
    (void)thread;
    boot_ctx *c = data;
    size_t below[CF_CAL_N] = {0}, windows = 0;
    cf_status st = CF_OK;
    for (size_t j = 0; j < c->n_traces && st == CF_OK; j++) {
        const cf_calibrate_trace *t = &c->traces[j];
        int any = 0;
        for (size_t k = 0; k < c->res->n_items; k++)
            any |= c->res->items[k].trace == j && c->res->items[k].scored;
        if (!any)
            continue;
        cf_spot_path path;
        unsigned long seed = c->seed ^ (0x9e3779b97f4a7c15ULL * (b + 1)) ^ (0xc2b2ae3d27d4eb4fULL * (j + 1));
        if ((st = cf_spot_path_generate(t->process, t->nodes, t->path->total_h, seed, &path)) != CF_OK)
            break;
        cf_spot_path_truncate(&path, t->path->total_h);
        double step = cf_spot_start_step(&path, CF_CALIBRATE_BOOT_STEP_H);
        size_t cap = (size_t)(path.total_h / step) + 2;
        size_t *seg = malloc(cap * sizeof *seg);
        double *off = malloc(cap * sizeof *off);
        size_t n = seg && off ? cf_spot_starts_grid(&path, step, seg, off) : 0;
        if (!n)
            st = cf_error_set(CF_ERR_NOMEM, "out of memory");
        if (st == CF_OK) {
            size_t here[CF_CALIBRATE_LENGTHS * CF_CAL_N] = {0};
            size_t m = score_trace(t, c->res, j, 1, &path, seg, off, n, here, NULL);
            for (size_t k = 0; k < m; k++)
                for (int q = 0; q < CF_CAL_N; q++)
                    below[q] += here[k * CF_CAL_N + (size_t)q];
            windows += m * n;
        }
        free(seg);
        free(off);
        cf_spot_path_free(&path);
    }
    c->status[b] = st;
    if (st != CF_OK)
        snprintf(c->error[b], sizeof c->error[b], "%s", cf_error_message());
    for (int q = 0; q < CF_CAL_N; q++)
        c->shares[b * CF_CAL_N + (size_t)q] = windows ? (double)below[q] / (double)windows : NAN;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The model's quantiles and interval for each (trace, length). */
static cf_status model_items(const cf_calibrate_trace *traces, size_t n, const cf_calibrate_settings *cs,
                             double confidence, cf_calibrate_result *out)
{
    cf_spot_mc_settings settings = {cs->mc_path_hours > 0 ? cs->mc_path_hours : CF_CALIBRATE_MC_PATH_HOURS,
                                    cs->mc_starts > 0 ? cs->mc_starts : CF_CALIBRATE_MC_STARTS, CF_SPOT_SEED};
    cf_spot_mc *mc = NULL;
    cf_status st = cf_spot_mc_new(&settings, &mc);
    for (size_t j = 0; j < n && st == CF_OK; j++) {
        const cf_calibrate_trace *t = &traces[j];
        for (int k = 0; k < CF_CALIBRATE_LENGTHS && st == CF_OK; k++) {
            double w = t->work_h / pow(4, k);
            if (k > 0 && w < CF_CALIBRATE_MIN_WORK_H)
                break;
            cf_spot_request req = {.process = t->process, .nodes = t->nodes, .work_h = w, .confidence = confidence,
                                   .checkpoint_h = t->checkpoint_h, .restart_h = t->restart_h,
                                   .semantics = CF_SPOT_ELASTIC};
            cf_spot_estimate e;
            if ((st = cf_spot_mc_estimate(mc, &req, &e)) != CF_OK)
                break;
            cf_calibrate_item *it = &out->items[out->n_items++];
            *it = (cf_calibrate_item){.trace = j, .work_h = w, .interval_h = e.interval_h};
            it->model_h[CF_CAL_P10] = e.spot.p10_h;
            it->model_h[CF_CAL_P50] = e.spot.p50_h;
            it->model_h[CF_CAL_P90] = e.spot.p90_h;
            it->model_h[CF_CAL_CHECK] = e.spot.q_h;
            it->scored = w <= t->path->total_h / CF_CALIBRATE_TRACE_PER_WORK;
            out->quantile[CF_CAL_CHECK] = e.check_quantile;
        }
    }
    cf_spot_mc_free(mc);
    return st;
}

/* The share of replicates with a share outside the band the other
 * replicates give (leave-one-out: a replicate is not scored against a band
 * it helped to draw). */
static cf_status outside_any_band(const double *shares, int replicates, double *rate)
{
    *rate = NAN;
    if (replicates < 3)
        return CF_OK;
    size_t r = (size_t)replicates;
    double *col = malloc(r * sizeof *col), *rest = malloc(r * sizeof *rest);
    char *out = calloc(r, 1);
    if (!col || !rest || !out) {
        free(col);
        free(rest);
        free(out);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    for (int q = 0; q < CF_CAL_N; q++) {
        for (size_t b = 0; b < r; b++)
            col[b] = shares[b * CF_CAL_N + (size_t)q];
        qsort(col, r, sizeof *col, cmp_double);
        for (size_t b = 0; b < r; b++) {
            double v = shares[b * CF_CAL_N + (size_t)q];
            size_t k = 0, skipped = 0;
            for (size_t i = 0; i < r; i++) {
                if (!skipped && col[i] == v) {
                    skipped = 1;
                    continue;
                }
                rest[k++] = col[i];
            }
            if (v < cf_quantile_sorted(rest, k, CF_CALIBRATE_BAND_LO) || v > cf_quantile_sorted(rest, k, CF_CALIBRATE_BAND_HI))
                out[b] = 1;
        }
    }
    size_t any = 0;
    for (size_t b = 0; b < r; b++)
        any += out[b];
    *rate = (double)any / (double)r;
    free(col);
    free(rest);
    free(out);
    return CF_OK;
}

cf_status cf_spot_calibrate(const cf_calibrate_trace *traces, size_t n, const cf_calibrate_settings *settings,
                            cf_calibrate_result *out)
{
    memset(out, 0, sizeof *out);
    double confidence = settings->confidence > 0 ? settings->confidence : CF_SPOT_CONFIDENCE;
    double step = settings->step_h > 0 ? settings->step_h : CF_SPOT_REPLAY_STEP_H;
    int replicates = settings->replicates > 0 ? settings->replicates : CF_CALIBRATE_REPLICATES;
    out->replicates = replicates;
    out->quantile[CF_CAL_P10] = 0.1;
    out->quantile[CF_CAL_P50] = 0.5;
    out->quantile[CF_CAL_P90] = 0.9;
    out->quantile[CF_CAL_CHECK] = cf_spot_check_quantile(confidence);
    out->items = calloc(n * CF_CALIBRATE_LENGTHS + 1, sizeof *out->items);
    if (!out->items)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    cf_status st = model_items(traces, n, settings, confidence, out);
    /* the real traces */
    size_t below[CF_CAL_N] = {0};
    for (size_t j = 0; j < n && st == CF_OK; j++) {
        const cf_calibrate_trace *t = &traces[j];
        double step_j = cf_spot_start_step(t->path, step);
        size_t cap = (size_t)(t->path->total_h / step_j) + 2;
        size_t *seg = malloc(cap * sizeof *seg);
        double *off = malloc(cap * sizeof *off), *wall = malloc(cap * CF_CALIBRATE_LENGTHS * sizeof *wall);
        size_t m = seg && off && wall ? cf_spot_starts_grid(t->path, step_j, seg, off) : 0;
        if (!m)
            st = cf_error_set(CF_ERR_NOMEM, "out of memory");
        size_t here[CF_CALIBRATE_LENGTHS * CF_CAL_N] = {0};
        size_t mine = st == CF_OK ? score_trace(t, out, j, 0, t->path, seg, off, m, here, wall) : 0;
        for (size_t k = 0, r = 0; k < out->n_items && r < mine; k++) {
            cf_calibrate_item *it = &out->items[k];
            if (it->trace != j)
                continue;
            const size_t *counts = &here[r * CF_CAL_N];
            double *walls = &wall[r * m];
            r++;
            it->windows = m;
            for (int q = 0; q < CF_CAL_N; q++)
                it->share[q] = (double)counts[q] / (double)m;
            qsort(walls, m, sizeof *walls, cmp_double);
            it->replay_p50_h = cf_quantile_sorted(walls, m, 0.5);
            it->replay_p90_h = cf_quantile_sorted(walls, m, 0.9);
            if (!it->scored)
                continue;
            for (int q = 0; q < CF_CAL_N; q++)
                below[q] += counts[q];
            out->windows += m;
        }
        free(seg);
        free(off);
        free(wall);
    }
    if (st != CF_OK) {
        cf_calibrate_result_free(out);
        return st;
    }
    for (int q = 0; q < CF_CAL_N; q++)
        out->pooled[q].share = out->windows ? (double)below[q] / (double)out->windows : NAN;
    /* the band: the same pooled shares on traces drawn from the model */
    boot_ctx c = {.traces = traces, .n_traces = n, .res = out, .seed = settings->seed ? settings->seed : CF_SPOT_SEED};
    c.shares = malloc((size_t)replicates * CF_CAL_N * sizeof *c.shares);
    c.status = calloc((size_t)replicates, sizeof *c.status);
    c.error = calloc((size_t)replicates, sizeof *c.error);
    double *col = malloc((size_t)replicates * sizeof *col);
    if (!c.shares || !c.status || !c.error || !col)
        st = cf_error_set(CF_ERR_NOMEM, "out of memory");
    if (st == CF_OK && out->windows > 0) {
        cf_parallel_for((size_t)replicates, cf_parallel_threads(), boot_one, &c);
        for (int b = 0; b < replicates && st == CF_OK; b++)
            if (c.status[b] != CF_OK)
                st = cf_error_set(c.status[b], "%s", c.error[b]);
        for (int q = 0; q < CF_CAL_N && st == CF_OK; q++) {
            for (int b = 0; b < replicates; b++)
                col[b] = c.shares[(size_t)b * CF_CAL_N + (size_t)q];
            qsort(col, (size_t)replicates, sizeof *col, cmp_double);
            out->pooled[q].band_lo = cf_quantile_sorted(col, (size_t)replicates, CF_CALIBRATE_BAND_LO);
            out->pooled[q].band_hi = cf_quantile_sorted(col, (size_t)replicates, CF_CALIBRATE_BAND_HI);
        }
        if (st == CF_OK)
            st = outside_any_band(c.shares, replicates, &out->replicates_outside_any_band);
        if (st == CF_OK) {
            out->replicate_shares = c.shares; /* handed over */
            c.shares = NULL;
        }
    } else if (st == CF_OK) {
        for (int q = 0; q < CF_CAL_N; q++)
            out->pooled[q].band_lo = out->pooled[q].band_hi = NAN;
        out->replicates_outside_any_band = NAN;
    }
    free(c.shares);
    free(c.status);
    free(c.error);
    free(col);
    if (st != CF_OK)
        cf_calibrate_result_free(out);
    return st;
}
