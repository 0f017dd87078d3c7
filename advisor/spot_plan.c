#include "cloudfit/advisor/spot_plan.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

cf_status cf_spot_spread_of(const cf_spot_run *runs, size_t n, const double *usd_per_node_h, double q,
                            cf_spot_spread *out)
{
    memset(out, 0, sizeof *out);
    out->n = n;
    if (n == 0)
        return CF_OK;
    double *h = malloc(n * sizeof *h), *usd = malloc(n * sizeof *usd);
    if (!h || !usd) {
        free(h);
        free(usd);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    size_t finished = 0;
    for (size_t i = 0; i < n; i++) {
        const cf_spot_run *r = &runs[i];
        h[i] = r->wall_h;
        usd[i] = 0;
        for (int k = 0; k < CF_SPOT_MAX_TYPES; k++) {
            usd[i] += r->node_h[k] * usd_per_node_h[k];
            out->mean_node_h[k] += r->node_h[k];
        }
        if (!isfinite(r->wall_h)) {
            out->n_unfinished++;
            usd[i] = INFINITY; /* never finishes: the cost is unbounded too */
        } else {
            out->mean_h += r->wall_h;
            out->mean_usd += usd[i];
            finished++;
        }
        out->mean_preemptions += r->preemptions;
        out->mean_checkpoints += r->checkpoints;
        out->mean_restarts += r->restarts;
        out->mean_lost_h += r->lost_h;
        out->mean_below_h += r->below_h;
    }
    out->mean_h = finished ? out->mean_h / (double)finished : INFINITY;
    out->mean_usd = finished ? out->mean_usd / (double)finished : INFINITY;
    if (out->n_unfinished) { /* the mean of a distribution with mass at infinity */
        out->mean_h = INFINITY;
        out->mean_usd = INFINITY;
    }
    out->mean_preemptions /= (double)n;
    out->mean_checkpoints /= (double)n;
    out->mean_restarts /= (double)n;
    out->mean_lost_h /= (double)n;
    out->mean_below_h /= (double)n;
    for (int k = 0; k < CF_SPOT_MAX_TYPES; k++)
        out->mean_node_h[k] /= (double)n;
    qsort(h, n, sizeof *h, cmp_double);
    qsort(usd, n, sizeof *usd, cmp_double);
    out->p10_h = cf_quantile_sorted(h, n, 0.10);
    out->p50_h = cf_quantile_sorted(h, n, 0.50);
    out->p90_h = cf_quantile_sorted(h, n, 0.90);
    out->q_h = cf_quantile_sorted(h, n, q);
    out->p10_usd = cf_quantile_sorted(usd, n, 0.10);
    out->p50_usd = cf_quantile_sorted(usd, n, 0.50);
    out->p90_usd = cf_quantile_sorted(usd, n, 0.90);
    out->q_usd = cf_quantile_sorted(usd, n, q);
    free(h);
    free(usd);
    return CF_OK;
}

void cf_spot_replay_many(const cf_spot_path *p, const size_t *seg, const double *off, size_t n,
                         const cf_spot_plan *plan, cf_spot_run *runs)
{
    for (size_t i = 0; i < n; i++)
        cf_spot_replay(p, seg[i], off[i], plan, &runs[i]);
}

/* ---- the Monte Carlo context ------------------------------------------------------- */

typedef struct {
    cf_spot_process process;
    int nodes;
    cf_spot_path path;
    cf_spot_path_stats stats;
    size_t *seg;
    double *off;
    size_t n_starts;
} mc_entry;

struct cf_spot_mc {
    cf_spot_mc_settings settings;
    mc_entry **entries;   /* each allocated once: paths handed out stay valid */
    size_t n, cap;
    cf_spot_run *runs;   /* scratch: one per start */
};

cf_status cf_spot_mc_new(const cf_spot_mc_settings *settings, cf_spot_mc **out)
{
    cf_spot_mc *mc = calloc(1, sizeof *mc);
    if (!mc)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    mc->settings = *settings;
    if (mc->settings.path_hours <= 0)
        mc->settings.path_hours = CF_SPOT_MC_PATH_HOURS;
    if (mc->settings.starts <= 0)
        mc->settings.starts = CF_SPOT_MC_STARTS;
    mc->runs = calloc((size_t)mc->settings.starts, sizeof *mc->runs);
    if (!mc->runs) {
        free(mc);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    *out = mc;
    return CF_OK;
}

void cf_spot_mc_free(cf_spot_mc *mc)
{
    if (!mc)
        return;
    for (size_t i = 0; i < mc->n; i++) {
        cf_spot_path_free(&mc->entries[i]->path);
        free(mc->entries[i]->seg);
        free(mc->entries[i]->off);
        free(mc->entries[i]);
    }
    free(mc->entries);
    free(mc->runs);
    free(mc);
}

/* A stream per (row, N), so a path does not depend on which other paths
 * were made before it: FNV-1a over the process's numbers and N. */
static unsigned long path_seed(unsigned long seed, const cf_spot_process *p, int nodes)
{
    uint64_t h = 1469598103934665603ULL;
    const double v[] = {p->up_median_h, p->up_sigma, p->down_median_h, p->down_sigma,
                        p->kd_per_h,    p->kr_per_h, p->qf,            p->qr,
                        (double)nodes};
    const unsigned char *b = (const unsigned char *)v;
    for (size_t i = 0; i < sizeof v; i++) {
        h ^= b[i];
        h *= 1099511628211ULL;
    }
    return (unsigned long)(seed ^ h);
}

cf_status cf_spot_mc_path(cf_spot_mc *mc, const cf_spot_process *process, int nodes, const cf_spot_path **out_path,
                          const cf_spot_path_stats **out_stats)
{
    for (size_t i = 0; i < mc->n; i++) {
        mc_entry *e = mc->entries[i];
        if (e->nodes == nodes && memcmp(&e->process, process, sizeof *process) == 0) {
            *out_path = &e->path;
            if (out_stats)
                *out_stats = &e->stats;
            return CF_OK;
        }
    }
    if (mc->n == mc->cap) {
        size_t cap = mc->cap ? 2 * mc->cap : 8;
        mc_entry **grown = realloc(mc->entries, cap * sizeof *grown);
        if (!grown)
            return cf_error_set(CF_ERR_NOMEM, "out of memory");
        mc->entries = grown;
        mc->cap = cap;
    }
    mc_entry *e = calloc(1, sizeof *e);
    if (!e)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    e->process = *process;
    e->nodes = nodes;
    unsigned long seed = path_seed(mc->settings.seed, process, nodes);
    cf_status st = cf_spot_path_generate(process, nodes, mc->settings.path_hours, seed, &e->path);
    if (st != CF_OK) {
        free(e);
        return st;
    }
    cf_spot_path_stats_of(&e->path, nodes, &e->stats);
    e->n_starts = (size_t)mc->settings.starts;
    e->seg = malloc(e->n_starts * sizeof *e->seg);
    e->off = malloc(e->n_starts * sizeof *e->off);
    st = e->seg && e->off ? cf_spot_starts_random(&e->path, e->n_starts, CF_SPOT_START_FRACTION, seed + 1, e->seg, e->off)
                          : cf_error_set(CF_ERR_NOMEM, "out of memory");
    if (st != CF_OK) {
        cf_spot_path_free(&e->path);
        free(e->seg);
        free(e->off);
        free(e);
        return st;
    }
    mc->entries[mc->n++] = e;
    *out_path = &e->path;
    if (out_stats)
        *out_stats = &e->stats;
    return CF_OK;
}

static mc_entry *entry_of(cf_spot_mc *mc, const cf_spot_path *path)
{
    for (size_t i = 0; i < mc->n; i++)
        if (&mc->entries[i]->path == path)
            return mc->entries[i];
    return NULL;
}

cf_status cf_spot_mc_estimate(cf_spot_mc *mc, const cf_spot_request *req, cf_spot_estimate *out)
{
    memset(out, 0, sizeof *out);
    const cf_spot_path *path = NULL;
    const cf_spot_path_stats *stats = NULL;
    cf_status st = cf_spot_mc_path(mc, req->process, req->nodes, &path, &stats);
    if (st != CF_OK)
        return st;
    mc_entry *e = entry_of(mc, path);
    out->model = *stats;
    out->checkpoint_h = req->checkpoint_h;
    out->restart_h = req->restart_h;
    out->mtbf_h = req->semantics == CF_SPOT_GANG ? stats->mtbf_gang_h : stats->mtbf_h;
    out->interval_h = cf_daly_interval_h(req->checkpoint_h, out->mtbf_h);
    out->deadline_h = req->deadline_h;
    cf_spot_plan plan = {.n_types = 1, .nodes = {req->nodes, 0}, .work_h = req->work_h,
                         .checkpoint_h = req->checkpoint_h, .restart_h = req->restart_h,
                         .interval_h = out->interval_h, .semantics = req->semantics};
    cf_spot_replay_many(path, e->seg, e->off, e->n_starts, &plan, mc->runs);
    double price[CF_SPOT_MAX_TYPES] = {req->spot_usd_per_node_h, 0};
    if ((st = cf_spot_spread_of(mc->runs, e->n_starts, price, CF_SPOT_DEADLINE_QUANTILE, &out->spot)) != CF_OK)
        return st;
    if (req->deadline_h > 0) {
        size_t met = 0;
        for (size_t i = 0; i < e->n_starts; i++)
            met += mc->runs[i].wall_h <= req->deadline_h;
        out->spot_met_share = (double)met / (double)e->n_starts;
        out->meets_deadline = out->spot.q_h <= req->deadline_h;
    }
    if (req->deadline_h > 0 && req->ondemand_usd_per_node_h > 0 && req->semantics == CF_SPOT_ELASTIC &&
        (req->always_mixed || !out->meets_deadline)) {
        out->has_mixed = 1;
        out->mixed_policy = req->mixed_policy;
        for (size_t i = 0; i < e->n_starts; i++)
            cf_spot_replay_mixed(path, e->seg[i], e->off[i], &plan, req->deadline_h, req->mixed_policy, &mc->runs[i]);
        double prices[CF_SPOT_MAX_TYPES] = {req->spot_usd_per_node_h, req->ondemand_usd_per_node_h};
        if ((st = cf_spot_spread_of(mc->runs, e->n_starts, prices, CF_SPOT_DEADLINE_QUANTILE, &out->mixed)) != CF_OK)
            return st;
        size_t met = 0;
        for (size_t i = 0; i < e->n_starts; i++)
            met += mc->runs[i].wall_h <= req->deadline_h + 1e-6;
        out->mixed_met_share = (double)met / (double)e->n_starts;
        out->mixed_meets = out->mixed.q_h <= req->deadline_h + 1e-6;
    }
    out->valid = 1;
    return CF_OK;
}
