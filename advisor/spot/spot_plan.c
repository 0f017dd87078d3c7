#include "cloudfit/advisor/spot_plan.h"
#include "cloudfit/common/parallel.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "spot_plan_internal.h"
#include "spot_replay_internal.h"

double cf_spot_check_quantile(double confidence)
{
    double c = confidence > 0 && confidence < 1 ? confidence : CF_SPOT_CONFIDENCE;
    return 1 - (1 - c) * CF_SPOT_MISS_FACTOR;
}

cf_status cf_spot_spread_of(const cf_spot_run *runs, size_t n, const double *usd_per_node_h, double q,
                            cf_spot_spread *out)
{
    memset(out, 0, sizeof *out);
    out->n = n;
    out->q = q;
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
            out->n_unfinished_passes += r->stop == CF_SPOT_STOP_PASSES;
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
    const double qs[] = {0.10, 0.50, 0.90, q};
    cf_quantiles_place(h, n, qs, 4);
    cf_quantiles_place(usd, n, qs, 4);
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

/* ---- the Monte Carlo context ------------------------------------------------------- */

/* The replays of one plan on an entry's path, kept for a later request
 * with the same plan (recommend asks again for the same VM type and node
 * count in another region or at another price: the replays do not depend
 * on the price, only the spread's cost does). */
typedef struct {
    double work_h, work_sigma, work_sigma_up, checkpoint_h, restart_h, interval_h, deadline_h;
    cf_spot_semantics semantics;
    cf_mixed_policy mixed_policy;
    cf_spot_run *spot, *mixed;   /* n_starts each; mixed made on first use */
} mc_memo;

typedef struct {
    cf_spot_process process;
    int nodes;
    cf_spot_path path;
    cf_spot_path_stats stats;
    size_t *seg;
    double *off;
    double *z;          /* per start: a standard normal draw, W × exp(σ·z) its work */
    size_t n_starts;
    mc_memo *memo;
    size_t n_memo, cap_memo;
} mc_entry;

struct cf_spot_mc {
    cf_spot_mc_settings settings;
    mc_entry **entries;   /* each allocated once: paths handed out stay valid */
    size_t n, cap;
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
    *out = mc;
    return CF_OK;
}

void cf_spot_mc_free(cf_spot_mc *mc)
{
    if (!mc)
        return;
    for (size_t i = 0; i < mc->n; i++) {
        mc_entry *e = mc->entries[i];
        for (size_t j = 0; j < e->n_memo; j++) {
            free(e->memo[j].spot);
            free(e->memo[j].mixed);
        }
        free(e->memo);
        cf_spot_path_free(&e->path);
        free(e->seg);
        free(e->off);
        free(e->z);
        free(e);
    }
    free(mc->entries);
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

static mc_entry *find_entry(const cf_spot_mc *mc, const cf_spot_process *process, int nodes)
{
    for (size_t i = 0; i < mc->n; i++) {
        mc_entry *e = mc->entries[i];
        if (e->nodes == nodes && memcmp(&e->process, process, sizeof *process) == 0)
            return e;
    }
    return NULL;
}

/* A new entry for (process, N), its path not made yet (n_starts 0). */
static cf_status add_entry(cf_spot_mc *mc, const cf_spot_process *process, int nodes, mc_entry **out)
{
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
    mc->entries[mc->n++] = e;
    *out = e;
    return CF_OK;
}

/* The entry's path, its statistics and its starts; touches nothing else
 * (entries are made in parallel by cf_spot_mc_estimate_many). */
static cf_status make_path(const cf_spot_mc_settings *settings, mc_entry *e)
{
    unsigned long seed = path_seed(settings->seed, &e->process, e->nodes);
    cf_status st = cf_spot_path_generate(&e->process, e->nodes, settings->path_hours, seed, &e->path);
    if (st != CF_OK)
        return st;
    cf_spot_path_stats_of(&e->path, e->nodes, &e->stats);
    size_t n = (size_t)settings->starts;
    e->seg = malloc(n * sizeof *e->seg);
    e->off = malloc(n * sizeof *e->off);
    e->z = malloc(n * sizeof *e->z);
    st = e->seg && e->off && e->z
             ? cf_spot_starts_random(&e->path, n, CF_SPOT_START_FRACTION, seed + 1, e->seg, e->off)
             : cf_error_set(CF_ERR_NOMEM, "out of memory");
    gsl_rng *rng = st == CF_OK ? gsl_rng_alloc(gsl_rng_mt19937) : NULL;
    if (st == CF_OK && !rng)
        st = cf_error_set(CF_ERR_NOMEM, "out of memory");
    if (rng) {
        gsl_rng_set(rng, seed + 2);
        for (size_t i = 0; i < n; i++)
            e->z[i] = gsl_ran_gaussian_ziggurat(rng, 1.0);
        gsl_rng_free(rng);
    }
    if (st != CF_OK) {
        cf_spot_path_free(&e->path);
        free(e->seg);
        free(e->off);
        free(e->z);
        e->seg = NULL;
        e->off = NULL;
        e->z = NULL;
        return st;
    }
    e->n_starts = n;
    return CF_OK;
}

static cf_status entry_for(cf_spot_mc *mc, const cf_spot_process *process, int nodes, mc_entry **out)
{
    mc_entry *e = find_entry(mc, process, nodes);
    cf_status st = e ? CF_OK : add_entry(mc, process, nodes, &e);
    if (st == CF_OK && e->n_starts == 0)
        st = make_path(&mc->settings, e);
    *out = e;
    return st;
}

cf_status cf_spot_mc_path(cf_spot_mc *mc, const cf_spot_process *process, int nodes, const cf_spot_path **out_path,
                          const cf_spot_path_stats **out_stats)
{
    mc_entry *e = NULL;
    cf_status st = entry_for(mc, process, nodes, &e);
    if (st != CF_OK)
        return st;
    *out_path = &e->path;
    if (out_stats)
        *out_stats = &e->stats;
    return CF_OK;
}

/* The plan a request means on e's path: the checkpoint interval by Daly
 * from the path's time between failures. */
static cf_spot_plan plan_of(const mc_entry *e, const cf_spot_request *req, double *out_mtbf_h)
{
    double mtbf = req->semantics == CF_SPOT_GANG ? e->stats.mtbf_gang_h : e->stats.mtbf_h;
    if (out_mtbf_h)
        *out_mtbf_h = mtbf;
    return (cf_spot_plan){.n_types = 1, .nodes = {req->nodes, 0}, .work_h = req->work_h,
                          .checkpoint_h = req->checkpoint_h, .restart_h = req->restart_h,
                          .interval_h = cf_daly_interval_h(req->checkpoint_h, mtbf), .semantics = req->semantics};
}

/* The memo of `plan` with the request's deadline and policy: found, or
 * added with no replays yet. */
static double work_sigma_up(const cf_spot_request *req)
{
    return req->work_sigma_up > req->work_sigma ? req->work_sigma_up : req->work_sigma;
}

static cf_status memo_slot(mc_entry *e, const cf_spot_plan *plan, const cf_spot_request *req, mc_memo **out)
{
    for (size_t i = 0; i < e->n_memo; i++) {
        mc_memo *m = &e->memo[i];
        if (m->work_h == plan->work_h && m->work_sigma == req->work_sigma &&
            m->work_sigma_up == work_sigma_up(req) && m->checkpoint_h == plan->checkpoint_h &&
            m->restart_h == plan->restart_h &&
            m->interval_h == plan->interval_h && m->semantics == plan->semantics && m->deadline_h == req->deadline_h &&
            m->mixed_policy == req->mixed_policy) {
            *out = m;
            return CF_OK;
        }
    }
    if (e->n_memo == e->cap_memo) {
        size_t cap = e->cap_memo ? 2 * e->cap_memo : 4;
        mc_memo *grown = realloc(e->memo, cap * sizeof *grown);
        if (!grown)
            return cf_error_set(CF_ERR_NOMEM, "out of memory");
        e->memo = grown;
        e->cap_memo = cap;
    }
    mc_memo *m = &e->memo[e->n_memo++];
    *m = (mc_memo){.work_h = plan->work_h, .work_sigma = req->work_sigma, .work_sigma_up = work_sigma_up(req),
                   .checkpoint_h = plan->checkpoint_h,
                   .restart_h = plan->restart_h,
                   .interval_h = plan->interval_h, .deadline_h = req->deadline_h, .semantics = plan->semantics,
                   .mixed_policy = req->mixed_policy};
    *out = m;
    return CF_OK;
}

/* Start i's plan: the work drawn from its spread. */
static cf_spot_plan start_plan(const mc_entry *e, const mc_memo *m, const cf_spot_plan *plan, size_t i)
{
    cf_spot_plan p = *plan;
    double sigma = e->z[i] > 0 ? m->work_sigma_up : m->work_sigma;
    if (sigma > 0)
        p.work_h = plan->work_h * exp(sigma * e->z[i]);
    return p;
}

static cf_status fill_spot(const mc_entry *e, mc_memo *m, const cf_spot_plan *plan)
{
    if (m->spot)
        return CF_OK;
    cf_spot_run *runs = malloc(e->n_starts * sizeof *runs);
    if (!runs)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < e->n_starts; i++) {
        cf_spot_plan p = start_plan(e, m, plan, i);
        cf_spot_replay(&e->path, e->seg[i], e->off[i], &p, &runs[i]);
    }
    m->spot = runs;
    return CF_OK;
}

/* The mixed plan switches on its own progress: the job knows how much of
 * its work is left (its measured step time), so each start's switch uses
 * that start's work. */
static cf_status fill_mixed(const mc_entry *e, mc_memo *m, const cf_spot_plan *plan)
{
    if (m->mixed)
        return CF_OK;
    cf_spot_run *runs = malloc(e->n_starts * sizeof *runs);
    if (!runs)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < e->n_starts; i++) {
        cf_spot_plan p = start_plan(e, m, plan, i);
        cf_spot_replay_mixed(&e->path, e->seg[i], e->off[i], &p, m->deadline_h, m->mixed_policy, &runs[i]);
    }
    m->mixed = runs;
    return CF_OK;
}

/* Whether the estimate replays the mixed plan: allowed, elastic, a
 * deadline, an on-demand price, and spot alone missing the deadline at its
 * check quantile (or asked for always). */
static int wants_mixed(const cf_spot_request *req, double spot_q_h)
{
    return !req->no_mixed && req->deadline_h > 0 && req->ondemand_usd_per_node_h > 0 &&
           req->semantics == CF_SPOT_ELASTIC && (req->always_mixed || !(spot_q_h <= req->deadline_h));
}

/* ---- estimates of many requests on several threads ---------------------------------- */

/* The requests of one (row, N): its path, then each request's replays and
 * summary in request order. Only this group touches its entry (path, starts,
 * memo array), so groups run in parallel; an entry's replays start as soon
 * as its own path is made, not when every path is. */
typedef struct {
    cf_spot_mc *mc;
    const cf_spot_request *reqs;
    cf_spot_estimate *out;
    const mc_entry **entry_of; /* per request */
    const mc_entry *entry;     /* this group's */
    size_t first, n_reqs;      /* the group's first request; the request count */
    size_t failed;             /* the first request that failed, or SIZE_MAX */
    cf_status st;
    char error[256];
} mc_group;

static void run_group(void *ctx, size_t i, int thread)
{
    (void)thread;
    mc_group *g = &((mc_group *)ctx)[i];
    for (size_t r = g->first; r < g->n_reqs && g->failed == SIZE_MAX; r++) {
        if (g->entry_of[r] != g->entry)
            continue;
        if ((g->st = cf_spot_mc_estimate(g->mc, &g->reqs[r], &g->out[r])) != CF_OK) {
            g->failed = r; /* the message is thread-local: keep it for the caller's thread */
            snprintf(g->error, sizeof g->error, "%s", cf_error_message());
        }
    }
}

cf_status cf_spot_mc_estimate_many(cf_spot_mc *mc, const cf_spot_request *reqs, size_t n, int threads,
                                   cf_spot_estimate *out)
{
    if (n == 0)
        return CF_OK;
    if (threads <= 0)
        threads = cf_parallel_threads();
    const mc_entry **entry_of = calloc(n, sizeof *entry_of);
    mc_group *groups = calloc(n, sizeof *groups);
    cf_status st = entry_of && groups ? CF_OK : cf_error_set(CF_ERR_NOMEM, "out of memory");
    size_t n_groups = 0;
    /* Every entry is added here, before any thread runs: the threads only
     * look entries up. */
    for (size_t i = 0; i < n && st == CF_OK; i++) {
        mc_entry *e = find_entry(mc, reqs[i].process, reqs[i].nodes);
        if (!e)
            st = add_entry(mc, reqs[i].process, reqs[i].nodes, &e);
        if (st != CF_OK)
            break;
        entry_of[i] = e;
        size_t g = 0;
        while (g < n_groups && groups[g].entry != e)
            g++;
        if (g == n_groups)
            groups[n_groups++] = (mc_group){.mc = mc, .reqs = reqs, .out = out, .entry_of = entry_of, .entry = e,
                                            .first = i, .n_reqs = n, .failed = SIZE_MAX};
    }
    if (st == CF_OK) {
        cf_parallel_for(n_groups, threads, run_group, groups);
        /* the first request that failed, as one request after another would report it */
        size_t first_failed = SIZE_MAX, which = 0;
        for (size_t g = 0; g < n_groups; g++)
            if (groups[g].failed < first_failed) {
                first_failed = groups[g].failed;
                which = g;
            }
        if (first_failed != SIZE_MAX)
            st = cf_error_set(groups[which].st, "%s", groups[which].error);
    }
    free(entry_of);
    free(groups);
    return st;
}

cf_status cf_spot_mc_estimate(cf_spot_mc *mc, const cf_spot_request *req, cf_spot_estimate *out)
{
    memset(out, 0, sizeof *out);
    mc_entry *e = NULL;
    cf_status st = entry_for(mc, req->process, req->nodes, &e);
    if (st != CF_OK)
        return st;
    out->model = e->stats;
    out->checkpoint_h = req->checkpoint_h;
    out->restart_h = req->restart_h;
    cf_spot_plan plan = plan_of(e, req, &out->mtbf_h);
    out->interval_h = plan.interval_h;
    out->deadline_h = req->deadline_h;
    out->work_sigma = req->work_sigma;
    out->work_sigma_up = work_sigma_up(req);
    out->confidence = req->confidence > 0 ? req->confidence : CF_SPOT_CONFIDENCE;
    out->check_quantile = cf_spot_check_quantile(out->confidence);
    mc_memo *memo = NULL;
    if ((st = memo_slot(e, &plan, req, &memo)) != CF_OK || (st = fill_spot(e, memo, &plan)) != CF_OK)
        return st;
    double price[CF_SPOT_MAX_TYPES] = {req->spot_usd_per_node_h, 0};
    if ((st = cf_spot_spread_of(memo->spot, e->n_starts, price, out->check_quantile, &out->spot)) != CF_OK)
        return st;
    if (req->deadline_h > 0) {
        size_t met = 0;
        for (size_t i = 0; i < e->n_starts; i++)
            met += memo->spot[i].wall_h <= req->deadline_h;
        out->spot_met_share = (double)met / (double)e->n_starts;
        out->meets_deadline = out->spot.q_h <= req->deadline_h;
    }
    if (wants_mixed(req, out->spot.q_h)) {
        out->has_mixed = 1;
        out->mixed_policy = req->mixed_policy;
        if ((st = fill_mixed(e, memo, &plan)) != CF_OK)
            return st;
        double prices[CF_SPOT_MAX_TYPES] = {req->spot_usd_per_node_h, req->ondemand_usd_per_node_h};
        if ((st = cf_spot_spread_of(memo->mixed, e->n_starts, prices, out->check_quantile, &out->mixed)) !=
            CF_OK)
            return st;
        size_t met = 0;
        for (size_t i = 0; i < e->n_starts; i++)
            met += memo->mixed[i].wall_h <= req->deadline_h + 1e-6;
        out->mixed_met_share = (double)met / (double)e->n_starts;
        out->mixed_meets = out->mixed.q_h <= req->deadline_h + 1e-6;
    }
    out->valid = 1;
    return CF_OK;
}
