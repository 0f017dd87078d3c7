/* Spot candidates in the enumeration (docs/spot.md, "In recommend"):
 * every spot (offer, N) point is screened with the closed-form mean of the
 * preemption model; the most promising ones get the Monte Carlo, one
 * distribution of wall time and cost per plan (preemptions and the
 * throughput uncertainty together): its median becomes their hours and
 * cost, its quantile at the confidence decides whether they meet the
 * deadline and budget — alone, or (unless spot only) as a mixed plan with
 * an on-demand fallback near the deadline when that is cheaper than
 * running on demand. The rest are not offered. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/parallel.h"
#include "../plan/enumerate_internal.h"
#include "../advisor_internal.h"
#include "spot_model_internal.h"
#include "spot_plan_internal.h"
#include "spot_replay_internal.h"
#include "spot_table_internal.h"

/* How many spot candidates get the Monte Carlo, and at most how many of
 * them per offer (the table shows one row per offer). */
#define SPOT_SIMULATE_MAX 8
#define SPOT_SIMULATE_PER_OFFER 2

struct spot_cache {
    const cf_advisor_input *in;
    int max_nodes;
    double checkpoint_h, restart_h;
    cf_spot_offer_rows *rows_of_vm;       /* per vm index */
    unsigned char *have_rows;
    /* screen per table row × node count, made on first use */
    cf_spot_screen *screens;
    unsigned char *have_screen;
};

cf_status cf__spot_cache_new(const cf_advisor_input *in, int max_nodes, spot_cache **out)
{
    spot_cache *c = calloc(1, sizeof *c);
    size_t n_vms = in->n_vms ? in->n_vms : 1, cells = cf_spot_table_count * (size_t)max_nodes;
    if (c) {
        c->rows_of_vm = calloc(n_vms, sizeof *c->rows_of_vm);
        c->have_rows = calloc(n_vms, 1);
        c->screens = calloc(cells, sizeof *c->screens);
        c->have_screen = calloc(cells, 1);
    }
    if (!c || !c->rows_of_vm || !c->have_rows || !c->screens || !c->have_screen) {
        cf__spot_cache_free(c);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    c->in = in;
    c->max_nodes = max_nodes;
    const cf_constraints *k = in->constraints;
    cf_checkpoint_costs(cf_checkpoint_bytes(in->job->parameters, in->job->optimizer), k->storage_mb_per_s,
                        k->checkpoint_minutes, k->startup_minutes, &c->checkpoint_h, &c->restart_h);
    *out = c;
    return CF_OK;
}

void cf__spot_cache_free(spot_cache *c)
{
    if (!c)
        return;
    free(c->rows_of_vm);
    free(c->have_rows);
    free(c->screens);
    free(c->have_screen);
    free(c);
}

/* The model rows of VM v, looked up once; the row at `nodes`. */
static const cf_spot_offer_rows *rows_of(spot_cache *c, size_t v)
{
    if (!c->have_rows[v]) {
        const cf_vm *vm = c->in->vms[v];
        cf_spot_offer_rows_in(cf_spot_table, cf_spot_table_count, vm->cloud, vm->gpu_model, vm->gpu_count, vm->region,
                              &c->rows_of_vm[v]);
        c->have_rows[v] = 1;
    }
    return &c->rows_of_vm[v];
}

static const cf_spot_table_row *row_of(spot_cache *c, size_t v, int nodes)
{
    return cf_spot_offer_row(rows_of(c, v), nodes, NULL);
}

typedef struct {
    spot_cache *c;
    const size_t *vm_shape;
} prefill_ctx;

static void prefill_one(void *data, size_t v, int thread)
{
    (void)thread;
    prefill_ctx *p = data;
    if (p->vm_shape[v] != SIZE_MAX && p->c->in->vms[v]->price_spot_usd_per_hr > 0)
        rows_of(p->c, v);
}

void cf__spot_rows_prefill(spot_cache *c, const size_t *vm_shape)
{
    if (c->in->constraints->spot == CF_SPOT_NEVER)
        return;
    prefill_ctx p = {c, vm_shape};
    cf_parallel_for(c->in->n_vms, cf_parallel_threads(), prefill_one, &p);
}

int cf__spot_same_row(spot_cache *c, size_t a, size_t b)
{
    const cf_spot_offer_rows *x = rows_of(c, a), *y = rows_of(c, b);
    return x->single == y->single && x->cluster == y->cluster && x->n_cluster == y->n_cluster;
}

double cf__spot_screen_hours(spot_cache *c, size_t v, int nodes, double train_h)
{
    const cf_spot_table_row *row = row_of(c, v, nodes);
    size_t cell = (size_t)(row - cf_spot_table) * (size_t)c->max_nodes + (size_t)(nodes - 1);
    if (!c->have_screen[cell]) {
        cf_spot_screen_of(&row->process, nodes, &c->screens[cell]);
        c->have_screen[cell] = 1;
    }
    return cf_spot_screen_hours(&c->screens[cell], train_h, c->checkpoint_h, c->restart_h, NULL);
}

typedef struct {
    size_t index;
    double score;
    int screen_ok;
} ranked;

/* A total order (the index breaks ties): screened feasible first, then by score. */
static int ranked_before(const ranked *a, const ranked *b)
{
    if (a->screen_ok != b->screen_ok)
        return a->screen_ok > b->screen_ok;
    if (a->score != b->score)
        return a->score < b->score;
    return a->index < b->index;
}

/* A binary min-heap by ranked_before: the few candidates the Monte Carlo
 * takes come off the top without sorting the tens of thousands of spot
 * candidates (a sort was a millisecond of every `recommend` with spot). */
static void sift_down(ranked *h, size_t n, size_t i)
{
    for (;;) {
        size_t least = i, l = 2 * i + 1, r = l + 1;
        if (l < n && ranked_before(&h[l], &h[least]))
            least = l;
        if (r < n && ranked_before(&h[r], &h[least]))
            least = r;
        if (least == i)
            return;
        ranked t = h[i];
        h[i] = h[least];
        h[least] = t;
        i = least;
    }
}

static ranked pop_first(ranked *h, size_t *n)
{
    ranked top = h[0];
    h[0] = h[--*n];
    sift_down(h, *n, 0);
    return top;
}

/* The screened score of a spot candidate by an objective. */
/* A spot candidate as the screen saw it, before any Monte Carlo replaced
 * its hours and cost with its plan's. */
typedef struct {
    size_t index;
    double hours, usd;
    int met;
} screened;

/* The best SPOT_SIMULATE_MAX spot candidates by the screen under one
 * objective (screened feasible first), at most SPOT_SIMULATE_PER_OFFER per
 * offer, into picks; how many. order has room for every spot candidate. */
static size_t pick_by_screen(const screened *spot, size_t n_spot, const candidate *cands, cf_objective objective,
                             ranked *order, size_t *picks)
{
    size_t m = 0, n_picks = 0;
    for (size_t i = 0; i < n_spot; i++) {
        const screened *sc = &spot[i];
        double score = objective == CF_OBJ_TIME ? sc->hours : objective == CF_OBJ_COST ? sc->usd : sc->hours * sc->usd;
        order[m++] = (ranked){sc->index, score, sc->met};
    }
    for (size_t i = m / 2; i-- > 0;)
        sift_down(order, m, i);
    while (m > 0 && n_picks < SPOT_SIMULATE_MAX) {
        size_t next = pop_first(order, &m).index;
        size_t same_offer = 0;
        for (size_t j = 0; j < n_picks; j++)
            same_offer += cands[picks[j]].vm == cands[next].vm;
        if (same_offer < SPOT_SIMULATE_PER_OFFER)
            picks[n_picks++] = next;
    }
    return n_picks;
}

/* The Monte Carlo for candidates pending[0..n_pending) (not yet simulated):
 * their estimates go to est from *n_est on, and each becomes its spot
 * plan (alone, or mixed), feasible or not. */
static cf_status simulate(spot_cache *c, const shape *shapes, candidate *cands, const size_t *pending, size_t n_pending,
                          cf_spot_estimate *est, size_t *n_est)
{
    const cf_advisor_input *in = c->in;
    const cf_constraints *k = in->constraints;
    if (n_pending == 0)
        return CF_OK;
    cf_spot_request *reqs = calloc(n_pending, sizeof *reqs);
    if (!reqs)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (size_t r = 0; r < n_pending; r++) {
        const candidate *cd = &cands[pending[r]];
        const cf_vm *vm = in->vms[cd->vm];
        reqs[r] = (cf_spot_request){.process = &row_of(c, cd->vm, cd->nodes)->process, .nodes = cd->nodes,
                                    .work_h = shapes[cd->shape].best_train_h[cd->nodes - 1],
                                    .work_sigma = shapes[cd->shape].best_sigma[cd->nodes - 1],
                                    .work_sigma_up = shapes[cd->shape].best_sigma_up[cd->nodes - 1],
                                    .confidence = k->confidence, .no_mixed = k->spot == CF_SPOT_ONLY,
                                    .checkpoint_h = c->checkpoint_h, .restart_h = c->restart_h,
                                    .spot_usd_per_node_h = vm->price_spot_usd_per_hr,
                                    .ondemand_usd_per_node_h = vm->price_ondemand_usd_per_hr,
                                    .deadline_h = k->deadline_hours, .mixed_policy = CF_MIXED_GREEDY,
                                    .semantics = CF_SPOT_ELASTIC};
    }
    cf_spot_mc_settings settings = {CF_SPOT_RECOMMEND_PATH_HOURS, CF_SPOT_RECOMMEND_STARTS, CF_SPOT_SEED};
    cf_spot_mc *mc = NULL;
    cf_status st = cf_spot_mc_new(&settings, &mc);
    if (st == CF_OK)
        st = cf_spot_mc_estimate_many(mc, reqs, n_pending, 0, est + *n_est);
    double startup_h = k->startup_minutes / 60.0;
    for (size_t r = 0; r < n_pending && st == CF_OK; r++) {
        candidate *cd = &cands[pending[r]];
        const cf_vm *vm = in->vms[cd->vm];
        double train_h = reqs[r].work_h;
        cf_spot_estimate *e = &est[*n_est];
        cf_spot_model_lookup(vm->cloud, vm->gpu_model, vm->gpu_count, vm->region, cd->nodes, &e->source);
        cd->spot_est = (int32_t)(*n_est)++;
        /* Spot alone when it meets the deadline at the stated confidence;
         * else the mixed plan when it does and costs less than the same
         * VMs on demand; else not offered. */
        double ondemand_usd = vm->price_ondemand_usd_per_hr > 0
                                  ? (startup_h + train_h) * cd->nodes * vm->price_ondemand_usd_per_hr
                                  : INFINITY;
        const cf_spot_spread *plan = &e->spot;
        if (!((k->deadline_hours <= 0 || e->meets_deadline) && isfinite(e->spot.p50_h)) && e->has_mixed &&
            e->mixed_meets && e->mixed.p50_usd < ondemand_usd) {
            cd->mixed = 1;
            plan = &e->mixed;
        }
        cd->hours = plan->p50_h;
        cd->usd = plan->p50_usd;
        cd->hours_q = plan->q_h;
        cd->usd_q = plan->q_usd;
        cd->feasible = isfinite(plan->p50_h) && cf_constraints_met(k, plan->q_h, plan->q_usd, 0);
    }
    cf_spot_mc_free(mc);
    free(reqs);
    return st;
}

cf_status cf__spot_refine(spot_cache *c, const shape *shapes, candidate *cands, size_t n, cf_spot_estimate **out_est,
                          size_t *out_n_est)
{
    const cf_constraints *k = c->in->constraints;
    *out_est = NULL;
    *out_n_est = 0;
    size_t n_spot = 0;
    for (size_t i = 0; i < n; i++) {
        n_spot += cands[i].spot;
        if (cands[i].spot)
            cands[i].feasible = 0; /* only a simulated candidate can be feasible */
    }
    if (n_spot == 0)
        return CF_OK;
    /* The best by the objective's screen (a screen mean past the deadline
     * or the budget ranks after the rest: its mixed plan may still work)
     * get the Monte Carlo. When none of them meets the limits, so do the
     * best by each objective's screen — the fastest, the cheapest and the
     * best by time × cost — before no spot plan is said to: whether one
     * does then never depends on the objective asked for (the screen mean
     * understates the quantile the limits are held to, so the cheapest by
     * the screen can all miss a deadline the fastest meet). Which
     * candidates are simulated does not depend on the Monte Carlo's
     * results within a round, so a round's estimates are made together, on
     * every core. */
    static const cf_objective by[] = {CF_OBJ_TIME, CF_OBJ_COST, CF_OBJ_BALANCED};
    enum { N_BY = sizeof by / sizeof by[0] };
    ranked *order = malloc(n_spot * sizeof *order);
    screened *spot = malloc(n_spot * sizeof *spot);
    cf_spot_estimate *est = calloc(SPOT_SIMULATE_MAX * (N_BY + 1), sizeof *est);
    size_t *picks = malloc(SPOT_SIMULATE_MAX * sizeof *picks);
    size_t *pending = malloc(SPOT_SIMULATE_MAX * sizeof *pending);
    cf_status st = order && spot && est && picks && pending ? CF_OK : cf_error_set(CF_ERR_NOMEM, "out of memory");
    /* the screen as it was before any Monte Carlo: every round picks on it */
    size_t m = 0;
    for (size_t i = 0; st == CF_OK && i < n; i++)
        if (cands[i].spot)
            spot[m++] = (screened){i, cands[i].hours, cands[i].usd, cf_constraints_met(k, cands[i].hours, cands[i].usd, 0)};
    size_t n_est = 0;
    for (size_t r = 0; st == CF_OK && r <= N_BY; r++) {
        size_t n_picks = pick_by_screen(spot, n_spot, cands, r == 0 ? k->objective : by[r - 1], order, picks);
        size_t n_pending = 0;
        for (size_t j = 0; j < n_picks; j++)
            if (cands[picks[j]].spot_est < 0)
                pending[n_pending++] = picks[j];
        st = simulate(c, shapes, cands, pending, n_pending, est, &n_est);
        int any_feasible = 0;
        for (size_t i = 0; i < n && !any_feasible; i++)
            any_feasible = cands[i].spot && cands[i].feasible;
        if (any_feasible)
            break;
    }
    free(spot);
    free(order);
    free(picks);
    free(pending);
    if (st != CF_OK) {
        free(est);
        return st;
    }
    *out_est = est;
    *out_n_est = n_est;
    return CF_OK;
}

const cf_spot_spread *cf_config_spot_spread(const cf_config *c)
{
    if (!c->spot || !c->spot_est.valid)
        return NULL;
    return c->mixed ? &c->spot_est.mixed : &c->spot_est.spot;
}

void cf_config_spot_quantiles(cf_config *c)
{
    const cf_spot_spread *s = cf_config_spot_spread(c);
    if (!s)
        return;
    c->hours = s->p50_h;
    c->total_usd = s->p50_usd;
    c->hours_p10 = s->p10_h;
    c->hours_p90 = s->p90_h;
    c->total_usd_p10 = s->p10_usd;
    c->total_usd_p90 = s->p90_usd;
    c->hours_at_confidence = s->q_h;
    c->usd_at_confidence = s->q_usd;
}
