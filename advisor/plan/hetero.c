#include "cloudfit/advisor/hetero.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cloudfit/advisor/elastic.h"
#include "../advisor_internal.h"
#include "../model/perf_internal.h"
#include "../model/stateff_internal.h"
#include "hetero_internal.h"

/* ---- the closed-form split -------------------------------------------------------- */

typedef struct {
    double frac;
    int index;
} frac_part;

static int remainder_order(const void *pa, const void *pb)
{
    const frac_part *a = pa, *b = pb;
    if (a->frac != b->frac)
        return a->frac > b->frac ? -1 : 1;
    return a->index - b->index;
}

cf_status cf_hetero_split(const double *alpha, const double *beta, const int *max_b, int n, long m, int *out_b,
                          double *out_t)
{
    if (n < 1)
        return cf_error_set(CF_ERR_INVALID, "no workers to split a batch over");
    double cap_total = 0;
    for (int i = 0; i < n; i++) {
        if (!(beta[i] > 0))
            return cf_error_set(CF_ERR_INVALID, "worker %d: time per sample must be positive", i);
        cap_total += max_b && max_b[i] > 0 ? max_b[i] : INFINITY;
    }
    if (m < n || (double)m > cap_total)
        return cf_error_set(CF_ERR_INFEASIBLE, "a global batch of %ld does not fit %d workers (1 to %.0f)", m, n,
                            cap_total);
    double *b = malloc((size_t)n * sizeof *b);
    signed char *fixed = calloc((size_t)n, 1); /* 0 free, 1 at its limit, -1 at 1 */
    frac_part *rem = malloc((size_t)n * sizeof *rem);
    if (!b || !fixed || !rem) {
        free(b);
        free(fixed);
        free(rem);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    /* Equal times over the free workers; clamp the ones past a limit (all
     * upper violators first, then lower), until none is. */
    for (int round = 0; round <= 2 * n; round++) {
        double left = (double)m, num = 0, den = 0;
        for (int i = 0; i < n; i++) {
            if (fixed[i] > 0)
                left -= max_b[i];
            else if (fixed[i] < 0)
                left -= 1;
            else {
                num += alpha[i] / beta[i];
                den += 1.0 / beta[i];
            }
        }
        double t = den > 0 ? (left + num) / den : 0;
        int upper = 0, lower = 0;
        for (int i = 0; i < n; i++) {
            if (fixed[i])
                continue;
            b[i] = (t - alpha[i]) / beta[i];
            upper |= max_b && max_b[i] > 0 && b[i] > max_b[i];
            lower |= b[i] < 1;
        }
        if (!upper && !lower)
            break;
        for (int i = 0; i < n; i++) {
            if (fixed[i])
                continue;
            if (upper && max_b && max_b[i] > 0 && b[i] > max_b[i])
                fixed[i] = 1;
            else if (!upper && b[i] < 1)
                fixed[i] = -1;
        }
    }
    long sum = 0;
    for (int i = 0; i < n; i++) {
        if (fixed[i] > 0)
            b[i] = max_b[i];
        else if (fixed[i] < 0)
            b[i] = 1;
        double fl = floor(b[i] + 1e-9);
        if (fl < 1)
            fl = 1;
        if (max_b && max_b[i] > 0 && fl > max_b[i])
            fl = max_b[i];
        out_b[i] = (int)fl;
        sum += out_b[i];
        rem[i] = (frac_part){b[i] - fl, i};
    }
    qsort(rem, (size_t)n, sizeof *rem, remainder_order);
    /* Hand the rest out by largest frac_part, never over a limit; take any
     * excess back from the smallest remainders, never under 1. */
    for (int pass = 0; sum < m && pass < 64; pass++)
        for (int k = 0; k < n && sum < m; k++) {
            int i = rem[k].index;
            if (!(max_b && max_b[i] > 0 && out_b[i] >= max_b[i])) {
                out_b[i]++;
                sum++;
            }
        }
    for (int pass = 0; sum > m && pass < 64; pass++)
        for (int k = n - 1; k >= 0 && sum > m; k--) {
            int i = rem[k].index;
            if (out_b[i] > 1) {
                out_b[i]--;
                sum--;
            }
        }
    if (out_t) {
        double t = 0;
        for (int i = 0; i < n; i++)
            t = fmax(t, alpha[i] + beta[i] * out_b[i]);
        *out_t = t;
    }
    free(b);
    free(fixed);
    free(rem);
    return sum == m ? CF_OK : cf_error_set(CF_ERR_INTERNAL, "batch split did not sum to %ld", m);
}

/* ---- a two-type job ------------------------------------------------------------------ */

typedef struct {
    const cf_perf_params *perf[2];
    int nodes[2], gpus[2];
    int max_b[2];
} mix;

/* Each type's single-node step T1(g, m) (in-node sync included) as the
 * line through its values at the smallest and the largest batch: the
 * split's closed form needs t_i(b) = α_i + β_i·b. */
static void type_lines(const mix *x, double alpha[2], double beta[2])
{
    for (int t = 0; t < 2; t++) {
        const cf_perf_params *p = x->perf[t];
        int g = x->gpus[t], hi = x->max_b[t] > 1 ? x->max_b[t] : 2;
        double t_lo = cf_perf_compute_s(p, 1, g), t_hi = cf_perf_compute_s(p, hi, g);
        beta[t] = fmax((t_hi - t_lo) / (hi - 1), 1e-12);
        alpha[t] = fmax(t_lo - beta[t], 0);
    }
}

/* The step from the slowest worker's compute time t_c per micro-batch:
 * the in-node sync is inside T1; across VMs the all-reduce runs at the
 * slowest link: each type's inter-node term for the whole job on its own
 * VM's network figures (cf_gpu_perf_on_vm), the larger one, hidden behind
 * compute as that type's model hides it. */
static double step_of(const mix *x, double gradient_bytes, double t_c, int s, const int batch[2], double *sync_out)
{
    int k_total = x->nodes[0] * x->gpus[0] + x->nodes[1] * x->gpus[1];
    int nodes = x->nodes[0] + x->nodes[1], slow = -1;
    cf_perf_net net = {.nodes = 1};
    for (int t = 0; t < 2; t++) {
        if (x->nodes[t] == 0)
            continue;
        cf_perf_net n_t = cf_perf_network_term(x->perf[t], gradient_bytes, nodes, x->gpus[t], k_total);
        if (slow < 0 || n_t.allreduce_s > net.allreduce_s) {
            net = n_t;
            slow = t;
        }
    }
    if (sync_out)
        *sync_out = nodes > 1 ? net.allreduce_s : 0;
    if (slow < 0 || k_total <= 1)
        return s * t_c;
    cf_step node = cf_perf_node_step(x->perf[slow], gradient_bytes, x->gpus[slow], batch[slow] > 0 ? batch[slow] : 1);
    node.compute_s = node.step_s = t_c;
    return cf_perf_combine(x->perf[slow], node, &net, s).step_s;
}

/* Step time of the mix at micro-batch total mb (the split of M/s) and
 * accumulation s; per-type batches out. CF_ERR_INFEASIBLE when it does not fit. */
static cf_status mix_step(const mix *x, double gradient_bytes, long mb, int s, int *batch, int *spread,
                          double *compute, double *sync_out, double *step)
{
    int k_total = x->nodes[0] * x->gpus[0] + x->nodes[1] * x->gpus[1];
    if (k_total < 1 || k_total > 4096)
        return CF_ERR_INFEASIBLE;
    double alpha[4096], beta[4096], line_a[2], line_b[2];
    int maxb[4096], b[4096], w = 0;
    type_lines(x, line_a, line_b);
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < x->nodes[t] * x->gpus[t]; i++, w++) {
            alpha[w] = line_a[t];
            beta[w] = line_b[t];
            maxb[w] = x->max_b[t];
        }
    double t_c = 0;
    cf_status st = cf_hetero_split(alpha, beta, maxb, k_total, mb, b, &t_c);
    if (st != CF_OK) {
        cf_error_clear();
        return CF_ERR_INFEASIBLE;
    }
    int top[2] = {0, 0};
    w = 0;
    for (int t = 0; t < 2; t++) {
        int lo = 1 << 30, hi = 0;
        for (int i = 0; i < x->nodes[t] * x->gpus[t]; i++, w++) {
            lo = b[w] < lo ? b[w] : lo;
            hi = b[w] > hi ? b[w] : hi;
        }
        top[t] = hi;
        if (batch)
            batch[t] = hi;
        if (spread)
            spread[t] = hi > lo && hi;
        if (compute)
            compute[t] = hi ? cf_perf_compute_s(x->perf[t], hi, x->gpus[t]) : 0;
    }
    *step = step_of(x, gradient_bytes, t_c, s, top, sync_out);
    return CF_OK;
}

static double gradient_bytes(const cf_job *job) { return job->parameters * job->gradient_bytes; }

static int max_local(const cf_advisor_input *in, const cf_perf_params *p)
{
    if (p->max_local_batch > 0)
        return p->max_local_batch;
    return cf_default_max_local_batch(in->job); /* the enumeration's default when the ceiling is unknown */
}

cf_status cf_hetero_evaluate(const cf_advisor_input *in, const cf_perf_params *perf0, const cf_perf_params *perf1,
                             cf_hetero_plan *pl)
{
    mix x = {.perf = {perf0, perf1}, .nodes = {pl->nodes[0], pl->nodes[1]},
             .gpus = {pl->gpus_per_node[0], pl->gpus_per_node[1]},
             .max_b = {max_local(in, perf0), max_local(in, perf1)}};
    int s = pl->accumulation > 0 ? pl->accumulation : 1;
    if (pl->global_batch % s)
        return CF_ERR_INFEASIBLE;
    double step = 0;
    cf_status st = mix_step(&x, gradient_bytes(in->job), pl->global_batch / s, s, pl->batch, pl->batch_spread,
                            pl->compute_s, &pl->sync_s, &step);
    if (st != CF_OK)
        return st;
    double m = (double)pl->global_batch;
    pl->step_time_s = step;
    pl->samples_per_s = m / step;
    pl->train_hours = cf_samples_to_target(in->noise, in->job->total_samples, m) / pl->samples_per_s / 3600.0;
    pl->hours = in->constraints->startup_minutes / 60.0 + pl->train_hours;
    pl->usd_per_hour = 0;
    for (int t = 0; t < 2; t++)
        if (pl->vm[t])
            pl->usd_per_hour += pl->nodes[t] * pl->vm[t]->price_ondemand_usd_per_hr;
    pl->total_usd = pl->hours * pl->usd_per_hour;
    pl->lr = cf_lr_for_batch(in->job->lr_rule, in->job->optimizer, in->job->lr, in->job->batch,
                             in->noise->b_noise_effective, m);
    /* Held to the deadline and budget at the confidence, as single-type
     * plans are (the mix was held at its point: a 17.3 h mix "met" a
     * 17.4 h deadline whose single-type plans needed 18.2 h at 90 %). */
    const cf_perf_params *perf[2] = {perf0, perf1};
    int nodes_total = pl->nodes[0] + pl->nodes[1];
    int gpus_total = pl->nodes[0] * pl->gpus_per_node[0] + pl->nodes[1] * pl->gpus_per_node[1];
    pl->step_sigma = pl->step_sigma_up = 0;
    for (int t = 0; t < 2; t++) {
        if (pl->nodes[t] <= 0 || pl->batch[t] <= 0)
            continue;
        cf_step one = cf_perf_predict(perf[t], gradient_bytes(in->job), nodes_total, pl->gpus_per_node[t], gpus_total,
                                      pl->batch[t], s);
        pl->step_sigma = fmax(pl->step_sigma, one.sigma);
        pl->step_sigma_up = fmax(pl->step_sigma_up, one.sigma_up);
    }
    const cf_constraints *c = in->constraints;
    double z = cf_normal_quantile(c->confidence > 0 && c->confidence < 1 ? c->confidence : CF_DEFAULT_CONFIDENCE);
    double startup_h = c->startup_minutes / 60.0;
    pl->hours_p10 = startup_h + pl->train_hours * exp(-CF_INTERVAL_Z * pl->step_sigma);
    pl->hours_p90 = startup_h + pl->train_hours * exp(CF_INTERVAL_Z * pl->step_sigma_up);
    pl->hours_at_confidence = startup_h + pl->train_hours * exp(z * (z > 0 ? pl->step_sigma_up : pl->step_sigma));
    pl->usd_at_confidence = pl->hours_at_confidence * pl->usd_per_hour;
    pl->feasible = cf_constraints_met(c, pl->hours_at_confidence, pl->usd_at_confidence, 0);
    return CF_OK;
}

/* The fastest (global batch, accumulation) for fixed VMs (the cheapest
 * too: the price per hour is fixed). */
static int best_batch(const cf_advisor_input *in, const cf_perf_params *p0, const cf_perf_params *p1,
                      cf_hetero_plan *pl, size_t *evals)
{
    const cf_constraints *k = in->constraints;
    int k_total = pl->nodes[0] * pl->gpus_per_node[0] + pl->nodes[1] * pl->gpus_per_node[1];
    cf_hetero_plan best = *pl, trial;
    best.train_hours = INFINITY;
    /* Global batches: the powers of two, and the workers × accumulation ×
     * the enumeration's per-GPU steps (1, 2, 3, 4, 6, 8, 12, …): powers of
     * two alone left 48 workers of batch 1 no batch at all ("never" alone,
     * a 3.9× speed-up where the truth was 1.04×). */
    long max_m = k->max_global_batch > 0 ? k->max_global_batch : 64L * in->job->batch;
    for (int s = 1; s <= (k->max_accumulation > 0 ? k->max_accumulation : 1); s *= 2) {
        long per_worker = 1, power = 1;
        for (;;) {
            long by_workers = (long)k_total * s * per_worker;
            long m = power <= by_workers ? power : by_workers;
            if (m > max_m)
                break;
            if (m == power)
                power *= 2;
            if (m == by_workers)
                per_worker = per_worker < 4 ? per_worker + 1 : per_worker % 3 == 0 ? per_worker / 3 * 4 : per_worker / 2 * 3;
            if (m < (long)k_total * s || m % s)
                continue;
            trial = *pl;
            trial.accumulation = s;
            trial.global_batch = m;
            (*evals)++;
            if (cf_hetero_evaluate(in, p0, p1, &trial) != CF_OK)
                continue;
            if (trial.train_hours < best.train_hours)
                best = trial;
        }
    }
    if (!isfinite(best.train_hours))
        return 0;
    *pl = best;
    return 1;
}

int cf_hetero_plan_best_batch(const cf_advisor_input *in, const cf_perf_params *p0, const cf_perf_params *p1,
                              cf_hetero_plan *plan)
{
    size_t evals = 0;
    return best_batch(in, p0, p1, plan, &evals);
}

cf_status cf_hetero_equal_batches(const cf_advisor_input *in, const cf_perf_params *perf0,
                                  const cf_perf_params *perf1, cf_hetero_plan *pl)
{
    pl->equal_step_time_s = 0;
    pl->equal_local_batch = pl->equal_accumulation = 0;
    pl->speedup_over_equal_batches = 0;
    mix x = {.perf = {perf0, perf1}, .nodes = {pl->nodes[0], pl->nodes[1]},
             .gpus = {pl->gpus_per_node[0], pl->gpus_per_node[1]},
             .max_b = {max_local(in, perf0), max_local(in, perf1)}};
    long k_total = (long)x.nodes[0] * x.gpus[0] + (long)x.nodes[1] * x.gpus[1];
    int max_s = in->constraints->max_accumulation > 0 ? in->constraints->max_accumulation : 1;
    int s0 = pl->accumulation > 0 ? pl->accumulation : 1;
    if (k_total < 1 || pl->step_time_s <= 0)
        return CF_ERR_INFEASIBLE;
    double alpha[2], beta[2];
    type_lines(&x, alpha, beta);
    /* The global batch held: the smallest accumulation from the plan's up
     * whose equal per-worker batch (rounded up: the largest share) fits
     * every used worker's memory. */
    for (int s = s0; s <= (max_s > s0 ? max_s : s0); s++) {
        if (pl->global_batch % s)
            continue;
        long mb = pl->global_batch / s, b = (mb + k_total - 1) / k_total;
        int fits = mb >= k_total;
        for (int t = 0; t < 2; t++)
            fits &= x.nodes[t] == 0 || x.max_b[t] <= 0 || b <= x.max_b[t];
        if (!fits)
            continue;
        double t_c = 0;
        for (int t = 0; t < 2; t++)
            if (x.nodes[t] > 0)
                t_c = fmax(t_c, alpha[t] + beta[t] * (double)b);
        int batch[2] = {(int)b, (int)b};
        pl->equal_step_time_s = step_of(&x, gradient_bytes(in->job), t_c, s, batch, NULL);
        pl->equal_local_batch = (int)b;
        pl->equal_accumulation = s;
        pl->speedup_over_equal_batches = pl->equal_step_time_s / pl->step_time_s;
        return CF_OK;
    }
    return CF_ERR_INFEASIBLE;
}

static const cf_gpu_perf *find_perf(const cf_advisor_input *in, const char *gpu)
{
    for (size_t i = 0; i < in->n_perf; i++)
        if (strcasecmp(in->perf[i].gpu, gpu) == 0)
            return &in->perf[i];
    return NULL;
}

/* The type's parameters on that VM's NIC: the same per-VM network model
 * as single-type plans (a measured figure carried to the NIC, else the
 * NIC's default). */
static cf_perf_params params_for(const cf_gpu_perf *g, const cf_vm *vm)
{
    return cf_gpu_perf_on_vm(g, vm->network_gbps);
}

static double score(const cf_advisor_input *in, const cf_hetero_plan *p)
{
    switch (in->constraints->objective) {
    case CF_OBJ_TIME: return p->hours;
    case CF_OBJ_BALANCED: return p->hours * p->total_usd;
    case CF_OBJ_COST: break;
    }
    return p->total_usd;
}

static const int NODE_GRID[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64};

/* Whether `b` is the cheapest on-demand offer of its GPU type and size in
 * its cloud region (ties: the first). */
static int cheapest_of_kind(const cf_advisor_input *in, size_t v)
{
    const cf_vm *b = in->vms[v];
    for (size_t u = 0; u < in->n_vms; u++) {
        const cf_vm *o = in->vms[u];
        if (u != v && strcmp(o->cloud, b->cloud) == 0 && strcmp(o->region, b->region) == 0 &&
            strcasecmp(o->gpu_model, b->gpu_model) == 0 && o->gpu_count == b->gpu_count &&
            o->price_ondemand_usd_per_hr > 0 &&
            (o->price_ondemand_usd_per_hr < b->price_ondemand_usd_per_hr ||
             (o->price_ondemand_usd_per_hr == b->price_ondemand_usd_per_hr && u < v)))
            return 0;
    }
    return 1;
}

/* Every node count pair of offers a and b; the best feasible mix faster
 * than either type's VMs alone goes into `out`. */
static void search_pair(const cf_advisor_input *in, const cf_vm *a, const cf_perf_params *pa, const cf_vm *b,
                        const cf_perf_params *pb, cf_hetero_advice *out)
{
    const cf_constraints *k = in->constraints;
    int max_nodes = k->max_nodes > 0 ? k->max_nodes : CF_MAX_NODES_DEFAULT;
    for (size_t i = 0; i < sizeof NODE_GRID / sizeof *NODE_GRID; i++) {
        for (size_t j = 0; j < sizeof NODE_GRID / sizeof *NODE_GRID; j++) {
            int na = NODE_GRID[i], nb = NODE_GRID[j];
            if (na + nb > max_nodes || na * a->gpu_count + nb * b->gpu_count > k->max_gpus)
                continue;
            out->n_within_limits++;
            cf_hetero_plan p = {.vm = {a, b}, .nodes = {na, nb}, .gpus_per_node = {a->gpu_count, b->gpu_count}};
            if (!best_batch(in, pa, pb, &p, &out->n_evaluated))
                continue;
            out->n_fitting++;
            if (!p.feasible)
                continue;
            out->n_feasible++;
            if (out->have && score(in, &p) >= score(in, &out->best))
                continue;
            /* The same VMs of one type only. */
            for (int t = 0; t < 2; t++) {
                cf_hetero_plan one = p;
                one.nodes[1 - t] = 0;
                one.vm[1 - t] = NULL;
                p.single_hours[t] = best_batch(in, pa, pb, &one, &out->n_evaluated) ? one.train_hours : INFINITY;
            }
            p.speedup = fmin(p.single_hours[0], p.single_hours[1]) / p.train_hours;
            if (p.speedup <= 1.0)
                continue;
            out->best_perf[0] = *pa;
            out->best_perf[1] = *pb;
            out->best = p;
            out->have = 1;
        }
    }
}

cf_status cf_hetero_search(const cf_advisor_input *in, const cf_advice *advice, cf_hetero_advice *out)
{
    memset(out, 0, sizeof *out);
    if (in->constraints->spot == CF_SPOT_ONLY) {
        /* A spot mix needs the preemption of two VM types together; the
         * model is fitted per VM type (docs/spot.md). */
        out->why_not = CF_HETERO_SPOT_ONLY;
        return CF_OK;
    }
    const cf_vm *tried[5];
    size_t n_tried = 0;
    for (size_t r = 0; r < advice->n_ranked && r < 5; r++) {
        const cf_config *c = &advice->ranked[r];
        const cf_vm *a = c->vm;
        /* A spot plan's VMs are mixed on demand (the offer's on-demand
         * price), once per offer. */
        int seen = 0;
        for (size_t i = 0; i < n_tried; i++)
            seen |= tried[i] == a;
        if (seen)
            continue;
        tried[n_tried++] = a;
        if (a->price_ondemand_usd_per_hr <= 0) {
            out->n_spot_only_offers++;
            continue;
        }
        out->n_spot_priced_on_demand += c->spot;
        const cf_gpu_perf *ga = find_perf(in, a->gpu_model);
        if (!ga || ga->params.max_local_batch < 0)
            continue;
        cf_perf_params pa = params_for(ga, a);
        for (size_t v = 0; v < in->n_vms; v++) {
            const cf_vm *b = in->vms[v];
            if (strcmp(b->cloud, a->cloud) || strcmp(b->region, a->region) || strcasecmp(b->gpu_model, a->gpu_model) == 0 ||
                b->price_ondemand_usd_per_hr <= 0 || !cheapest_of_kind(in, v))
                continue;
            const cf_gpu_perf *gb = find_perf(in, b->gpu_model);
            if (!gb || gb->params.max_local_batch < 0)
                continue;
            out->n_pairs++;
            cf_perf_params pb = params_for(gb, b);
            search_pair(in, a, &pa, b, &pb, out);
        }
    }
    if (out->have) {
        cf_hetero_plan *p = &out->best;
        if (cf_hetero_equal_batches(in, &out->best_perf[0], &out->best_perf[1], p) != CF_OK)
            cf_error_clear();
        const cf_config *chosen = advice->n_ranked ? &advice->ranked[0] : NULL;
        p->speedup_over_chosen = chosen && p->hours > 0 ? chosen->hours / p->hours : 0;
    } else {
        out->why_not = n_tried == (size_t)out->n_spot_only_offers && n_tried ? CF_HETERO_NO_ONDEMAND_PRICE
                       : out->n_pairs == 0                           ? CF_HETERO_NO_PARTNER
                       : out->n_within_limits == 0                   ? CF_HETERO_LIMITS
                       : out->n_fitting == 0                         ? CF_HETERO_NOTHING_FITS
                       : out->n_feasible == 0                        ? CF_HETERO_CONSTRAINTS
                                                                     : CF_HETERO_NOT_FASTER;
    }
    return CF_OK;
}

cf_status cf_hetero_state_rates(const cf_advisor_input *in, const cf_perf_params *p0, const cf_perf_params *p1,
                                const cf_hetero_plan *plan, double *rate, double *samples)
{
    mix full = {.perf = {p0, p1}, .nodes = {plan->nodes[0], plan->nodes[1]},
                .gpus = {plan->gpus_per_node[0], plan->gpus_per_node[1]},
                .max_b = {max_local(in, p0), max_local(in, p1)}};
    /* the value of the samples: recommend's statistical efficiency (the
     * gain rule keeps the LR at the optimum where the batch shrinks) */
    double m_full = (double)plan->global_batch;
    double x_full = plan->samples_per_s, v_full = cf_stat_efficiency(in->noise, m_full);
    int s = plan->accumulation > 0 ? plan->accumulation : 1;
    for (int n1 = 0; n1 <= plan->nodes[1]; n1++) {
        for (int n0 = 0; n0 <= plan->nodes[0]; n0++) {
            int idx = n0 + (plan->nodes[0] + 1) * n1;
            rate[idx] = samples[idx] = 0;
            if (n0 + n1 == 0)
                continue;
            mix x = full;
            x.nodes[0] = n0;
            x.nodes[1] = n1;
            long cap = (long)n0 * x.gpus[0] * x.max_b[0] + (long)n1 * x.gpus[1] * x.max_b[1];
            long mb = plan->global_batch / s;
            if (mb > cap)
                mb = cap; /* the batch shrinks: the gain rule sets the LR (x = 1) */
            double step = 0;
            if (mix_step(&x, gradient_bytes(in->job), mb, s, NULL, NULL, NULL, NULL, &step) != CF_OK || step <= 0)
                continue;
            double m = (double)(mb * s), tput = m / step;
            samples[idx] = tput / x_full;
            rate[idx] = tput * cf_stat_efficiency(in->noise, m) / (x_full * v_full);
        }
    }
    return CF_OK;
}
