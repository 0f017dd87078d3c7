#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cloudfit/advisor.h"
#include "cloudfit/common/json.h"
#include "cloudfit/common/parallel.h"
#include "enumerate_internal.h"
#include "cloudfit/advisor/explain.h"
#include "next_measurement.h"
#include "../advisor_internal.h"
#include "../model/perf_internal.h"
#include "../model/stateff_internal.h"
#include "explain_internal.h"

static double gradient_bytes(const cf_job *job) { return job->parameters * job->gradient_bytes; }

static double confidence_of(const cf_constraints *c)
{
    return c->confidence > 0 && c->confidence < 1 ? c->confidence : CF_DEFAULT_CONFIDENCE;
}

static const cf_gpu_perf *find_perf(const cf_advisor_input *in, const char *gpu)
{
    for (size_t i = 0; i < in->n_perf; i++)
        if (strcasecmp(in->perf[i].gpu, gpu) == 0)
            return &in->perf[i];
    return NULL;
}

/* One offer: the same machine in any region of the same cloud. */
static int same_vm_offer(const cf_vm *x, const cf_vm *y)
{
    return strcmp(x->cloud, y->cloud) == 0 && strcmp(x->instance_type, y->instance_type) == 0 &&
           strcmp(x->gpu_model, y->gpu_model) == 0 && x->gpu_count == y->gpu_count;
}

static void shape_network(shape *sh)
{
    sh->params = cf_gpu_perf_on_vm(sh->perf, sh->network_gbps);
}

int cf_default_max_local_batch(const cf_job *job)
{
    if (job->has_current && job->current_nodes > 0 && job->current_gpus_per_node > 0) {
        int m = job->batch / (job->current_nodes * job->current_gpus_per_node);
        return m > 0 ? m : 1;
    }
    return job->batch;
}

/* Per-GPU batches to try: 1,2,3,4,6,8,12,... up to the ceiling, and the
 * ceiling itself. Returns the count (out has room for 64). */
static int batch_grid(int max_m, int *out)
{
    int n = 0;
    /* p doubles while it fits: p <= max_m / 2 before doubling, so no step
     * passes INT_MAX (max_m may be the largest accepted batch, 2^31 - 1). */
    for (int p = 1; n < 62; p *= 2) {
        out[n++] = p;
        if (p >= 2 && p / 2 <= max_m - p)
            out[n++] = p + p / 2;
        if (p > max_m / 2)
            break;
    }
    if (n == 0 || out[n - 1] != max_m)
        out[n++] = max_m;
    return n;
}

/* Samples to target by global batch, memoised: the same global batches
 * recur across VM shapes and node counts, and each costs an interpolation
 * in log M. Open addressing; a full table just computes. */
#define MEMO_SLOTS 8192
typedef struct {
    long key[MEMO_SLOTS];          /* 0 = empty */
    double value[MEMO_SLOTS];
} samples_memo;

static double samples_for(samples_memo *memo, const cf_noise_model *noise, double e0, long global)
{
    size_t slot = ((unsigned long)global * 2654435761u) & (MEMO_SLOTS - 1);
    for (int probe = 0; memo && probe < 16; probe++, slot = (slot + 1) & (MEMO_SLOTS - 1)) {
        if (memo->key[slot] == global)
            return memo->value[slot];
        if (memo->key[slot] == 0) {
            memo->key[slot] = global;
            return memo->value[slot] = cf_samples_to_target(noise, e0, (double)global);
        }
    }
    return cf_samples_to_target(noise, e0, (double)global);
}

static int shape_evaluate(const cf_advisor_input *in, shape *sh, int max_nodes, size_t *evals, samples_memo *memo)
{
    const cf_job *job = in->job;
    const cf_constraints *limits = in->constraints;
    double e0 = job->total_samples, s_bytes = gradient_bytes(job);
    int grid[64], n_grid = batch_grid(sh->max_local_batch, grid);
    sh->best_m = calloc((size_t)max_nodes, sizeof *sh->best_m);
    sh->best_s = calloc((size_t)max_nodes, sizeof *sh->best_s);
    sh->best_train_h = malloc((size_t)max_nodes * sizeof *sh->best_train_h);
    sh->best_step_s = malloc((size_t)max_nodes * sizeof *sh->best_step_s);
    sh->best_sigma = calloc((size_t)max_nodes, sizeof *sh->best_sigma);
    sh->best_sigma_up = calloc((size_t)max_nodes, sizeof *sh->best_sigma_up);
    if (!sh->best_m || !sh->best_s || !sh->best_train_h || !sh->best_step_s || !sh->best_sigma || !sh->best_sigma_up)
        return 0;
    /* The single-node step depends on the batch only, the inter-node term
     * on the node count only: each is evaluated once. */
    cf_step node[64];
    for (int i = 0; i < n_grid; i++)
        node[i] = cf_perf_node_step(&sh->params, s_bytes, sh->gpus_per_vm, grid[i]);
    for (int n = 1; n <= max_nodes; n++) {
        double best = INFINITY;
        sh->best_train_h[n - 1] = INFINITY;
        if (n * sh->gpus_per_vm > limits->max_gpus)
            continue;
        long k = (long)n * sh->gpus_per_vm;
        cf_perf_net net = cf_perf_network_term(&sh->params, s_bytes, n, sh->gpus_per_vm, n * sh->gpus_per_vm);
        int best_i = -1;
        for (int i = 0; i < n_grid; i++) {
            if (k * grid[i] > limits->max_global_batch)
                break; /* the grid ascends: no accumulation of this or a larger batch fits */
            /* step(s) = (s−1)·t_c + step(1): one combination per batch,
             * not per accumulation. */
            cf_step one = cf_perf_combine_point(&sh->params, node[i], &net, 1);
            double step_1 = one.step_s, t_c = one.compute_s;
            for (int s = 1; s <= limits->max_accumulation; s *= 2) {
                long global = k * grid[i] * s;
                if (global > limits->max_global_batch)
                    break;
                double step = step_1 + (s - 1) * t_c;
                double steps = samples_for(memo, in->noise, e0, global) / (double)global;
                double train_s = steps * step;
                (*evals)++;
                if (train_s < best) {
                    best = train_s;
                    sh->best_m[n - 1] = grid[i];
                    sh->best_s[n - 1] = s;
                    sh->best_step_s[n - 1] = step;
                    sh->best_train_h[n - 1] = train_s / 3600.0;
                    best_i = i;
                }
            }
        }
        if (best_i >= 0) { /* the interval of the best alone; the network's share shrinks with accumulation */
            cf_step one = cf_perf_combine_point(&sh->params, node[best_i], &net, 1);
            cf_perf_network_percentiles(&sh->params, &net, &one);
            cf_perf_step_sigmas(&one, sh->best_step_s[n - 1], &sh->best_sigma[n - 1], &sh->best_sigma_up[n - 1],
                                NULL, NULL);
        }
    }
    return 1;
}

static void shapes_free(shape *shapes, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(shapes[i].best_m);
        free(shapes[i].best_s);
        free(shapes[i].best_train_h);
        free(shapes[i].best_step_s);
        free(shapes[i].best_sigma);
        free(shapes[i].best_sigma_up);
    }
    free(shapes);
}

static void fill_config(const cf_advisor_input *in, const shape *sh, const candidate *c, const cf_spot_estimate *est,
                        cf_config *cfg)
{
    const cf_job *job = in->job;
    const cf_constraints *limits = in->constraints;
    const cf_vm *vm = in->vms[c->vm];
    int n = c->nodes, m = sh->best_m[n - 1], s = sh->best_s[n - 1], g = sh->gpus_per_vm;
    memset(cfg, 0, sizeof *cfg);
    cfg->vm = vm;
    cfg->spot = c->spot;
    cfg->nodes = n;
    cfg->gpus_per_node = g;
    cfg->local_batch = m;
    cfg->accumulation = s;
    cfg->global_batch = (long)n * g * m * s;
    double M = (double)cfg->global_batch;
    cfg->lr = cf_lr_for_batch(job->lr_rule, job->optimizer, job->lr, job->batch,
                              in->noise->b_noise_effective, M);
    cfg->step_time_s = sh->best_step_s[n - 1];
    cfg->step_sigma = sh->best_sigma[n - 1];
    cfg->step_sigma_up = sh->best_sigma_up[n - 1];
    cf_step one = cf_perf_predict(&sh->params, gradient_bytes(job), n, g, n * g, m, 1);
    cfg->compute_s = one.compute_s;
    cfg->sync_s = one.allreduce_s;
    cfg->step_sigma_compute = sh->params.sigma_compute;
    cf_perf_step_sigmas(&one, cfg->step_time_s, NULL, NULL, &cfg->step_sigma_network, &cfg->step_sigma_network_up);
    cfg->samples_per_s = M / cfg->step_time_s;
    cfg->samples_to_target = cf_samples_to_target(in->noise, job->total_samples, M);
    cfg->steps = ceil(cfg->samples_to_target / M);
    cfg->stat_efficiency = cf_stat_efficiency(in->noise, M);
    double single = m / cf_perf_compute_s(&sh->params, m, 1);
    cfg->parallel_efficiency = cfg->samples_per_s / ((double)n * g * single);
    cfg->train_hours = sh->best_train_h[n - 1];
    cfg->spot_factor = 1.0;
    if (c->spot && c->spot_est >= 0) {
        cfg->spot_est = est[c->spot_est];
        cfg->mixed = c->mixed;
        cfg->checkpoint_interval_hours = cfg->spot_est.interval_h;
        cfg->spot_factor = c->hours / (limits->startup_minutes / 60.0 + cfg->train_hours);
    }
    cfg->hours = c->hours;
    cfg->usd_per_hour = n * (c->spot ? vm->price_spot_usd_per_hr : vm->price_ondemand_usd_per_hr);
    cfg->total_usd = c->usd;
    if (c->spot && c->spot_est >= 0) {
        cf_config_spot_quantiles(cfg); /* the plan's own distribution */
    } else {
        double z80 = cf_normal_two_sided_z(CF_INTERVAL_LEVEL), startup_h = limits->startup_minutes / 60.0;
        double run_h = c->hours - startup_h;
        cfg->hours_p10 = startup_h + run_h * exp(-z80 * cfg->step_sigma);
        cfg->hours_p90 = startup_h + run_h * exp(z80 * cfg->step_sigma_up);
        cfg->total_usd_p10 = cfg->hours_p10 * cfg->usd_per_hour;
        cfg->total_usd_p90 = cfg->hours_p90 * cfg->usd_per_hour;
        cfg->hours_at_confidence = c->hours_q;
        cfg->usd_at_confidence = c->usd_q;
    }
    cfg->prov_throughput = sh->params.compute_provenance;
    cfg->prov_noise = in->noise->provenance;
    cfg->prov_network = sh->params.network_provenance;
    cfg->network_measured_max_nodes = cf_network_extrapolated_from(&sh->params, cfg->nodes);
    cfg->prov_price = c->spot && vm->spot_price_estimated ? CF_PROV_ESTIMATED : CF_PROV_MEASURED;
}

typedef struct {
    double x, y;
    size_t index;
} point;

static int point_order(const void *pa, const void *pb)
{
    const point *a = pa, *b = pb;
    if (a->x != b->x)
        return a->x < b->x ? -1 : 1;
    if (a->y != b->y)
        return a->y < b->y ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* Buckets of x for the pre-filter below. */
#define FRONT_BUCKETS 1024

size_t cf_pareto_front(const double *x, const double *y, size_t n, size_t *order)
{
    point *pts = malloc((n ? n : 1) * sizeof *pts);
    double *bucket_min = malloc(FRONT_BUCKETS * sizeof *bucket_min);
    if (!pts || !bucket_min) {
        free(pts);
        free(bucket_min);
        return 0;
    }
    /* Pre-filter: a point is left out when some point in a strictly lower
     * x bucket (so with a strictly smaller x) has a y no larger: the sweep
     * below would drop it anyway. Only the few that remain are sorted. */
    double x_min = INFINITY, x_max = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        x_min = fmin(x_min, x[i]);
        x_max = fmax(x_max, x[i]);
    }
    double scale = x_max > x_min && isfinite(x_max - x_min) ? (FRONT_BUCKETS - 1) / (x_max - x_min) : 0;
    for (int b = 0; b < FRONT_BUCKETS; b++)
        bucket_min[b] = INFINITY;
    for (size_t i = 0; i < n; i++) {
        int b = (int)((x[i] - x_min) * scale);
        if (y[i] < bucket_min[b])
            bucket_min[b] = y[i];
    }
    double below = INFINITY; /* min y over the buckets before b */
    for (int b = 0; b < FRONT_BUCKETS; b++) {
        double here = bucket_min[b];
        bucket_min[b] = below;
        below = fmin(below, here);
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (y[i] < bucket_min[(int)((x[i] - x_min) * scale)])
            pts[m++] = (point){x[i], y[i], i};
    free(bucket_min);
    n = m;
    qsort(pts, n, sizeof *pts, point_order);
    /* Sweep by x: a point is on the front when its y beats every point
     * with a smaller (or equal) x. */
    size_t kept = 0;
    double best_y = INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (pts[i].y < best_y) {
            best_y = pts[i].y;
            order[kept++] = pts[i].index;
        }
    }
    free(pts);
    return kept;
}

size_t cf_pareto_front_printed(const double *x, const double *y, size_t n, size_t *order)
{
    size_t n_front = cf_pareto_front(x, y, n, order), kept = 0;
    /* along the front x rises and y falls, and so do their rounded values (or they stay equal) */
    for (size_t i = 0; i < n_front; i++) {
        size_t k = order[i];
        if (kept > 0) {
            size_t last = order[kept - 1];
            int same_x = cf_json_round(x[k], 6) == cf_json_round(x[last], 6);
            int same_y = cf_json_round(y[k], 6) == cf_json_round(y[last], 6);
            if (same_y)
                continue; /* as dear as the last, and slower (or as fast: the same printed point) */
            if (same_x) {
                order[kept - 1] = k; /* as fast as the last, and cheaper */
                continue;
            }
        }
        order[kept++] = k;
    }
    return kept;
}

typedef struct {
    cf_objective objective;
    double hours_min, usd_min;
} rank_ctx;

static double score(const rank_ctx *r, const candidate *c)
{
    switch (r->objective) {
    case CF_OBJ_COST: return c->usd;
    case CF_OBJ_TIME: return c->hours;
    case CF_OBJ_BALANCED: return (c->hours / r->hours_min) * (c->usd / r->usd_min);
    }
    return c->usd;
}

static int better(const rank_ctx *r, const candidate *a, const candidate *b)
{
    double sa = score(r, a), sb = score(r, b);
    if (sa != sb)
        return sa < sb;
    if (r->objective == CF_OBJ_TIME)
        return a->usd < b->usd;
    return a->hours < b->hours;
}

/* offer_of: per VM, the index of its offer (cloud, instance type, GPUs),
 * equal for the same offer in any region (mark_cheapest_regions). */
static int same_offer(const size_t *offer_of, const candidate *a, const candidate *b)
{
    return a->spot == b->spot && offer_of[a->vm] == offer_of[b->vm];
}

enum { KEEP_ONDEMAND = 1, KEEP_SPOT = 2 };

static const cf_advisor_input *offer_sort_input;

static int offer_order(const void *pa, const void *pb)
{
    const cf_vm *a = offer_sort_input->vms[*(const size_t *)pa], *b = offer_sort_input->vms[*(const size_t *)pb];
    int c = strcmp(a->cloud, b->cloud);
    if (!c) c = strcmp(a->instance_type, b->instance_type);
    if (!c) c = strcmp(a->gpu_model, b->gpu_model);
    if (!c) c = a->gpu_count - b->gpu_count;
    if (!c) c = (*(const size_t *)pa > *(const size_t *)pb) - (*(const size_t *)pa < *(const size_t *)pb);
    return c;
}

/* Regions of one offer (cloud, instance type, GPUs) differ only in price
 * (and, for spot, preemption model), so only the cheapest region can win:
 * keep the cheapest on-demand row, and the cheapest spot row per row of
 * the preemption model. This cuts the priced points several-fold. */
static cf_status mark_cheapest_regions(const cf_advisor_input *in, const size_t *vm_shape, spot_cache *cache,
                                       unsigned char *keep, size_t *offer_of)
{
    size_t *idx = malloc((in->n_vms ? in->n_vms : 1) * sizeof *idx), n = 0;
    if (!idx)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (size_t v = 0; v < in->n_vms; v++) {
        keep[v] = 0;
        offer_of[v] = SIZE_MAX - v; /* not evaluated: an offer of its own */
        if (vm_shape[v] != SIZE_MAX)
            idx[n++] = v;
    }
    cf__spot_rows_prefill(cache, vm_shape); /* the spot rows compared below */
    offer_sort_input = in;
    qsort(idx, n, sizeof *idx, offer_order);
    for (size_t start = 0; start < n;) {
        size_t end = start + 1;
        while (end < n && same_vm_offer(in->vms[idx[start]], in->vms[idx[end]]))
            end++;
        size_t best_od = SIZE_MAX;
        for (size_t i = start; i < end; i++) {
            const cf_vm *vm = in->vms[idx[i]];
            offer_of[idx[i]] = start;
            /* 0 = not offered on demand (spot or flex-start only). */
            if (vm->price_ondemand_usd_per_hr > 0 &&
                (best_od == SIZE_MAX || vm->price_ondemand_usd_per_hr < in->vms[best_od]->price_ondemand_usd_per_hr))
                best_od = idx[i];
            if (vm->price_spot_usd_per_hr <= 0 || in->constraints->spot == CF_SPOT_NEVER)
                continue; /* no spot rows to keep (the row look-ups cost 2 ms) */
            int cheapest_spot = 1;
            for (size_t j = start; j < end && cheapest_spot; j++) {
                const cf_vm *other = in->vms[idx[j]];
                if (j != i && other->price_spot_usd_per_hr > 0 &&
                    (other->price_spot_usd_per_hr < vm->price_spot_usd_per_hr ||
                     (other->price_spot_usd_per_hr == vm->price_spot_usd_per_hr && idx[j] < idx[i])) &&
                    cf__spot_same_row(cache, idx[j], idx[i]))
                    cheapest_spot = 0;
            }
            if (cheapest_spot)
                keep[idx[i]] |= KEEP_SPOT;
        }
        if (best_od != SIZE_MAX)
            keep[best_od] |= KEEP_ONDEMAND;
        start = end;
    }
    free(idx);
    return CF_OK;
}

static cf_status price_candidates(const cf_advisor_input *in, const shape *shapes, const size_t *vm_shape,
                                  const unsigned char *keep, int max_nodes, spot_cache *cache, candidate **out,
                                  size_t *n_out)
{
    const cf_constraints *limits = in->constraints;
    size_t cap = in->n_vms * (size_t)max_nodes * 2, n = 0;
    candidate *cands = malloc((cap ? cap : 1) * sizeof *cands);
    if (!cands)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    double startup_h = limits->startup_minutes / 60.0;
    double z = cf_normal_quantile(confidence_of(limits));
    for (size_t v = 0; v < in->n_vms; v++) {
        if (vm_shape[v] == SIZE_MAX)
            continue;
        const cf_vm *vm = in->vms[v];
        const shape *sh = &shapes[vm_shape[v]];
        for (int nodes = limits->min_nodes > 1 ? limits->min_nodes : 1; nodes <= max_nodes; nodes++) {
            double train_h = sh->best_train_h[nodes - 1];
            if (!isfinite(train_h))
                continue;
            for (int spot = 0; spot <= 1; spot++) {
                if ((spot == 0 && limits->spot == CF_SPOT_ONLY) || (spot == 1 && limits->spot == CF_SPOT_NEVER))
                    continue;
                if (!(keep[v] & (spot ? KEEP_SPOT : KEEP_ONDEMAND)))
                    continue;
                double price = spot ? vm->price_spot_usd_per_hr : vm->price_ondemand_usd_per_hr;
                if (price <= 0)
                    continue;
                double hours = spot ? cf__spot_screen_hours(cache, v, nodes, train_h) : startup_h + train_h;
                if (!isfinite(hours))
                    continue;
                candidate *c = &cands[n++];
                c->vm = (uint32_t)v;
                c->shape = (uint32_t)vm_shape[v];
                c->nodes = (uint16_t)nodes;
                c->spot = (uint8_t)spot;
                c->mixed = 0;
                c->spot_est = -1;
                c->hours = hours;
                c->usd = c->hours * nodes * price;
                /* the model's own uncertainty on the training part */
                c->hours_q = startup_h + (hours - startup_h) *
                                             exp(z * (z > 0 ? sh->best_sigma_up : sh->best_sigma)[nodes - 1]);
                c->usd_q = c->hours_q * nodes * price;
                c->feasible = cf_constraints_met(limits, c->hours_q, c->usd_q, 0);
            }
        }
    }
    *out = cands;
    *n_out = n;
    return CF_OK;
}

typedef struct {
    const cf_advisor_input *in;
    shape *shapes;
    int max_nodes;
    samples_memo *memo[CF_PARALLEL_MAX_THREADS];
    size_t evals[CF_PARALLEL_MAX_THREADS];
    int failed[CF_PARALLEL_MAX_THREADS];
} evaluate_ctx;

static void evaluate_one(void *data, size_t i, int thread)
{
    evaluate_ctx *c = data;
    shape_network(&c->shapes[i]);
    if (!shape_evaluate(c->in, &c->shapes[i], c->max_nodes, &c->evals[thread], c->memo[thread]))
        c->failed[thread] = 1;
}

/* A shape is a GPU's parameters on one VM size and network. */
static int shape_is(const shape *sh, const cf_gpu_perf *perf, const cf_vm *vm)
{
    return sh->perf == perf && sh->gpus_per_vm == vm->gpu_count && sh->network_gbps == vm->network_gbps;
}

static cf_status build_shapes(const cf_advisor_input *in, int max_nodes, shape **out_shapes, size_t *out_n,
                              size_t *vm_shape, size_t *evals)
{
    shape *shapes = calloc(in->n_vms ? in->n_vms : 1, sizeof *shapes);
    if (!shapes)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    size_t n = 0, last = SIZE_MAX;
    const char *last_gpu = NULL;
    const cf_gpu_perf *last_perf = NULL;
    for (size_t v = 0; v < in->n_vms; v++) {
        const cf_vm *vm = in->vms[v];
        vm_shape[v] = SIZE_MAX;
        /* The catalog lists an offer's regions one after another: the
         * previous VM's GPU and shape are tried first (a shape's key is
         * unique, so the one found is the one a scan finds). */
        const cf_gpu_perf *perf =
            last_gpu && strcmp(last_gpu, vm->gpu_model) == 0 ? last_perf : find_perf(in, vm->gpu_model);
        last_gpu = vm->gpu_model;
        last_perf = perf;
        if (!perf)
            continue;
        size_t s = last;
        if (!(last < n && shape_is(&shapes[last], perf, vm)))
            for (s = 0; s < n && !shape_is(&shapes[s], perf, vm); s++)
                ;
        last = s;
        if (s == n) {
            shape *sh = &shapes[n];
            sh->perf = perf; /* sh->params: made by shape_network on the evaluating thread */
            sh->gpus_per_vm = vm->gpu_count;
            sh->network_gbps = vm->network_gbps;
            sh->max_local_batch = perf->params.max_local_batch;
            sh->memory_provenance = perf->params.memory_provenance;
            if (sh->max_local_batch < 0)
                continue; /* the model does not fit this GPU */
            if (sh->max_local_batch == 0) {
                sh->max_local_batch = cf_default_max_local_batch(in->job);
                sh->memory_provenance = CF_PROV_DEFAULT;
            }
            n++; /* its network parameters are made on the evaluating thread */
        }
        vm_shape[v] = s;
    }
    /* The shapes are evaluated on every core: each writes only its own
     * results, with a samples memo and an evaluation count per thread. */
    int threads = cf_parallel_threads();
    evaluate_ctx ctx = {.in = in, .shapes = shapes, .max_nodes = max_nodes};
    for (int t = 0; t < threads; t++)
        ctx.memo[t] = calloc(1, sizeof *ctx.memo[t]); /* NULL: no memo, the same results */
    cf_parallel_for(n, threads, evaluate_one, &ctx);
    int failed = 0;
    for (int t = 0; t < threads; t++) {
        free(ctx.memo[t]);
        *evals += ctx.evals[t];
        failed |= ctx.failed[t];
    }
    if (failed) {
        shapes_free(shapes, n);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    *out_shapes = shapes;
    *out_n = n;
    return CF_OK;
}

static void pick_extremes(const cf_advisor_input *in, const shape *shapes, const candidate *cands, size_t n,
                          const cf_spot_estimate *est, cf_advice *advice)
{
    const candidate *fastest = NULL, *cheapest = NULL, *cheapest_q = NULL, *fastest_q = NULL, *in_deadline = NULL;
    double deadline = in->constraints->deadline_hours;
    for (size_t i = 0; i < n; i++) {
        if (cands[i].spot && cands[i].spot_est < 0)
            continue; /* not simulated: never offered, its screen is no plan */
        if (!fastest || cands[i].hours < fastest->hours)
            fastest = &cands[i];
        if (!cheapest || cands[i].usd < cheapest->usd)
            cheapest = &cands[i];
        if (!cheapest_q || cands[i].usd_q < cheapest_q->usd_q)
            cheapest_q = &cands[i];
        if (!fastest_q || cands[i].hours_q < fastest_q->hours_q)
            fastest_q = &cands[i];
        if (deadline > 0 && cands[i].hours_q <= deadline && (!in_deadline || cands[i].usd_q < in_deadline->usd_q))
            in_deadline = &cands[i];
    }
    if (fastest && cheapest) {
        fill_config(in, &shapes[fastest->shape], fastest, est, &advice->fastest);
        fill_config(in, &shapes[cheapest->shape], cheapest, est, &advice->cheapest);
        fill_config(in, &shapes[cheapest_q->shape], cheapest_q, est, &advice->cheapest_at_confidence);
        fill_config(in, &shapes[fastest_q->shape], fastest_q, est, &advice->fastest_at_confidence);
        advice->have_extremes = 1;
        if (in_deadline) {
            fill_config(in, &shapes[in_deadline->shape], in_deadline, est, &advice->cheapest_in_deadline);
            advice->have_cheapest_in_deadline = 1;
        }
    }
}

/* The objective's scale over the feasible candidates (`balanced` divides
 * by the best time and cost). */
static rank_ctx feasible_rank(const cf_advisor_input *in, const candidate *cands, size_t n)
{
    rank_ctx rc = {.objective = in->constraints->objective, .hours_min = INFINITY, .usd_min = INFINITY};
    for (size_t i = 0; i < n; i++) {
        if (!cands[i].feasible)
            continue;
        rc.hours_min = fmin(rc.hours_min, cands[i].hours);
        rc.usd_min = fmin(rc.usd_min, cands[i].usd);
    }
    return rc;
}

/* The best feasible on-demand and the best feasible spot configuration
 * by the objective, shown side by side. */
static void pick_best_kinds(const cf_advisor_input *in, const shape *shapes, const candidate *cands, size_t n,
                            const cf_spot_estimate *est, cf_advice *advice)
{
    rank_ctx rc = feasible_rank(in, cands, n);
    const candidate *best[2] = {NULL, NULL};
    for (size_t i = 0; i < n; i++)
        if (cands[i].feasible && (!best[cands[i].spot] || better(&rc, &cands[i], best[cands[i].spot])))
            best[cands[i].spot] = &cands[i];
    if (best[0]) {
        fill_config(in, &shapes[best[0]->shape], best[0], est, &advice->best_ondemand);
        advice->have_best_ondemand = 1;
    }
    if (best[1]) {
        fill_config(in, &shapes[best[1]->shape], best[1], est, &advice->best_spot);
        advice->have_best_spot = 1;
    }
}

/* advice->held_back: the best on-demand candidate by the objective, better
 * than every feasible one, that meets the deadline and budget at its point
 * values but not at the confidence quantiles. Before rank_and_front, which
 * drops the infeasible candidates. */
static void pick_held_back(const cf_advisor_input *in, const shape *shapes, const candidate *cands, size_t n,
                           const cf_spot_estimate *est, cf_advice *advice)
{
    rank_ctx rc = feasible_rank(in, cands, n);
    const candidate *pick = NULL, *held = NULL;
    for (size_t i = 0; i < n; i++)
        if (cands[i].feasible && (!pick || better(&rc, &cands[i], pick)))
            pick = &cands[i];
    if (!pick)
        return;
    for (size_t i = 0; i < n; i++) {
        const candidate *c = &cands[i];
        if (c->feasible || c->spot || !cf_constraints_met(in->constraints, c->hours, c->usd, 0))
            continue;
        if (better(&rc, c, pick) && (!held || better(&rc, c, held)))
            held = c;
    }
    if (held) {
        fill_config(in, &shapes[held->shape], held, est, &advice->held_back);
        advice->have_held_back = 1;
    }
}

static cf_status rank_and_front(const cf_advisor_input *in, const shape *shapes, const size_t *offer_of,
                                candidate *cands, size_t n, const cf_spot_estimate *est, cf_advice *advice)
{
    size_t n_feasible = 0;
    rank_ctx rc = {.objective = in->constraints->objective, .hours_min = INFINITY, .usd_min = INFINITY};
    for (size_t i = 0; i < n; i++) {
        if (!cands[i].feasible)
            continue;
        cands[n_feasible++] = cands[i];
        rc.hours_min = fmin(rc.hours_min, cands[i].hours);
        rc.usd_min = fmin(rc.usd_min, cands[i].usd);
    }
    advice->n_feasible = n_feasible;
    if (n_feasible == 0)
        return CF_ERR_INFEASIBLE;

    /* Ranked: best per offer (cloud, instance, spot), then the top ones. */
    size_t top = in->top ? in->top : 10;
    candidate *best = malloc(top * sizeof *best);
    double *hx = malloc(n_feasible * sizeof *hx), *cy = malloc(n_feasible * sizeof *cy);
    size_t *order = malloc(n_feasible * sizeof *order);
    if (!best || !hx || !cy || !order) {
        free(best); free(hx); free(cy); free(order);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    size_t n_best = 0;
    for (size_t i = 0; i < n_feasible; i++) {
        const candidate *c = &cands[i];
        size_t j;
        for (j = 0; j < n_best; j++)
            if (same_offer(offer_of, &best[j], c))
                break;
        if (j < n_best) {
            if (!better(&rc, c, &best[j]))
                continue;
            memmove(&best[j], &best[j + 1], (n_best - j - 1) * sizeof *best);
            n_best--;
        } else if (n_best == top && !better(&rc, c, &best[n_best - 1])) {
            continue;
        } else if (n_best == top) {
            n_best--; /* drop the worst; the new one ranks above it */
        }
        size_t k = n_best;
        while (k > 0 && better(&rc, c, &best[k - 1])) {
            best[k] = best[k - 1];
            k--;
        }
        best[k] = *c;
        n_best++;
    }
    for (size_t i = 0; i < n_feasible; i++) {
        hx[i] = cands[i].hours;
        cy[i] = cands[i].usd;
    }
    size_t n_front = cf_pareto_front_printed(hx, cy, n_feasible, order);
    advice->ranked = calloc(n_best, sizeof *advice->ranked);
    advice->pareto = calloc(n_front ? n_front : 1, sizeof *advice->pareto);
    cf_status st = CF_OK;
    if (!advice->ranked || !advice->pareto || n_front == 0) {
        st = cf_error_set(CF_ERR_NOMEM, "out of memory");
    } else {
        for (size_t i = 0; i < n_best; i++)
            fill_config(in, &shapes[best[i].shape], &best[i], est, &advice->ranked[i]);
        for (size_t i = 0; i < n_front; i++)
            fill_config(in, &shapes[cands[order[i]].shape], &cands[order[i]], est, &advice->pareto[i]);
        advice->n_ranked = n_best;
        advice->n_pareto = n_front;
    }
    free(best); free(hx); free(cy); free(order);
    return st;
}

cf_status cf_advise(const cf_advisor_input *in, cf_advice *advice)
{
    memset(advice, 0, sizeof *advice);
    const cf_constraints *limits = in->constraints;
    int max_nodes = limits->max_nodes > 0 ? limits->max_nodes : CF_MAX_NODES_DEFAULT;
    if (max_nodes > CF_ADVISE_MAX_NODES)
        max_nodes = CF_ADVISE_MAX_NODES;
    size_t *vm_shape = malloc((in->n_vms ? in->n_vms : 1) * sizeof *vm_shape);
    if (!vm_shape)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    shape *shapes = NULL;
    size_t n_shapes = 0;
    cf_status st = build_shapes(in, max_nodes, &shapes, &n_shapes, vm_shape, &advice->n_evaluated);
    if (st != CF_OK) {
        free(vm_shape);
        return st;
    }
    candidate *cands = NULL;
    size_t n = 0;
    unsigned char *keep = malloc(in->n_vms ? in->n_vms : 1);
    size_t *offer_of = malloc((in->n_vms ? in->n_vms : 1) * sizeof *offer_of);
    spot_cache *cache = NULL;
    st = keep && offer_of ? cf__spot_cache_new(in, max_nodes, &cache) : cf_error_set(CF_ERR_NOMEM, "out of memory");
    if (st == CF_OK)
        st = mark_cheapest_regions(in, vm_shape, cache, keep, offer_of);
    if (st == CF_OK)
        st = price_candidates(in, shapes, vm_shape, keep, max_nodes, cache, &cands, &n);
    free(keep);
    cf_spot_estimate *est = NULL;
    size_t n_est = 0;
    if (st == CF_OK)
        st = cf__spot_refine(cache, shapes, cands, n, &est, &n_est);
    cf__spot_cache_free(cache);
    if (st == CF_OK) {
        advice->n_candidates = n;
        advice->n_spot_simulated = n_est;
        pick_extremes(in, shapes, cands, n, est, advice);
        pick_best_kinds(in, shapes, cands, n, est, advice);
        pick_held_back(in, shapes, cands, n, est, advice);
        if (n == 0) {
            st = cf_error_set(CF_ERR_INFEASIBLE, "no configuration fits the search limits");
            cf_error_hint("check search.gpus, search.clouds, search.spot and the model's memory needs");
        } else {
            st = rank_and_front(in, shapes, offer_of, cands, n, est, advice);
            if (st == CF_OK)
                cf_next_measurement_choose(in, advice, &advice->next);
            if (st == CF_OK)
                st = cf_advice_explain(in, advice);
            if (st == CF_ERR_INFEASIBLE)
                cf_error_set(CF_ERR_INFEASIBLE, "no configuration meets the deadline and budget");
        }
    }
    free(est);
    free(cands);
    free(offer_of);
    shapes_free(shapes, n_shapes);
    free(vm_shape);
    return st;
}

void cf_advice_free(cf_advice *advice)
{
    cf_advice_explained_free(advice->explained);
    free(advice->ranked);
    free(advice->pareto);
    memset(advice, 0, sizeof *advice);
}
