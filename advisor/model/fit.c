/* Fitting the step-time model to measured rows (include/cloudfit/advisor/perf.h,
 * docs/model.md "Fitting"): the single-node rows become the profile curves
 * T1(g, m); the multi-node rows fit the network (BW_eff, ρ, c0, b2) by an
 * exhaustive grid — least squares sticks at the hinge max(0, A − ρ·T1).
 * The grid, its order and its tie-breaks are those of bench/step_model_lab.py. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/advisor/perf.h"
#include "cloudfit/common/parallel.h"
#include "cloudfit/common/shared_types.h"
#include "cloudfit/profiler/types.h"
#include "cloudfit/status.h"
#include "perf_internal.h"

double cf_perf_curve_at(const cf_perf_curve *c, double m);

static int double_order(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* numpy's median: the mean of the middle two for an even count; sorts v. */
static double median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, double_order);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ---- the profile curves -------------------------------------------------------------------------- */

typedef struct {
    int g;
    double m, t;
} point;

static int point_order(const void *pa, const void *pb)
{
    const point *a = pa, *b = pb;
    if (a->g != b->g)
        return a->g - b->g;
    if (a->m != b->m)
        return a->m < b->m ? -1 : 1;
    return (a->t > b->t) - (a->t < b->t);
}

static cf_status build_curves(const cf_measurement *rows, size_t n_rows, cf_perf_params *p)
{
    point *pts = malloc((n_rows ? n_rows : 1) * sizeof *pts);
    double *tmp = malloc((n_rows ? n_rows : 1) * sizeof *tmp);
    if (!pts || !tmp) {
        free(pts);
        free(tmp);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    size_t n = 0;
    for (size_t i = 0; i < n_rows; i++)
        if (rows[i].num_nodes == 1)
            pts[n++] = (point){cf_measurement_gpus_per_node(&rows[i]), rows[i].local_bsz, rows[i].step_time_s};
    qsort(pts, n, sizeof *pts, point_order);
    p->n_curves = 0;
    cf_status st = CF_OK;
    for (size_t i = 0; i < n && st == CF_OK;) {
        size_t j = i;
        while (j < n && pts[j].g == pts[i].g && pts[j].m == pts[i].m)
            tmp[j - i] = pts[j].t, j++;
        double t = median(tmp, j - i);
        cf_perf_curve *c = p->n_curves ? &p->curves[p->n_curves - 1] : NULL;
        if (!c || c->gpus != pts[i].g) {
            if (p->n_curves == CF_PERF_MAX_CURVES) {
                st = cf_error_set(CF_ERR_INVALID, "more than %d GPU counts in the single-node rows", CF_PERF_MAX_CURVES);
                break;
            }
            c = &p->curves[p->n_curves++];
            c->gpus = pts[i].g;
            c->n = 0;
        }
        if (c->n == CF_PERF_MAX_POINTS) {
            st = cf_error_set(CF_ERR_INVALID, "more than %d batch sizes at %d GPU(s) in the single-node rows",
                              CF_PERF_MAX_POINTS, c->gpus);
            break;
        }
        c->batch[c->n] = pts[i].m;
        c->step_s[c->n++] = t;
        i = j;
    }
    free(pts);
    free(tmp);
    return st;
}

/* κ from the curves: the median over every profiled (g > 1, m) of
 * (T1(g, m)/T1(1, m) − 1)/(g − 1); −1 (the class default) without a 1-GPU
 * curve and another. */
static double curves_contention(const cf_perf_params *p)
{
    if (p->n_curves < 2 || p->curves[0].gpus != 1)
        return -1;
    size_t cap = 0;
    for (int i = 1; i < p->n_curves; i++)
        cap += (size_t)p->curves[i].n;
    double *k = malloc((cap ? cap : 1) * sizeof *k);
    if (!k)
        return -1;
    size_t n = 0;
    for (int i = 1; i < p->n_curves; i++) {
        const cf_perf_curve *c = &p->curves[i];
        for (int j = 0; j < c->n; j++)
            k[n++] = (c->step_s[j] / cf_perf_curve_at(&p->curves[0], c->batch[j]) - 1) / (c->gpus - 1);
    }
    double v = median(k, n);
    free(k);
    return v;
}

/* σ_T: the noise of one profiled step time, from the profile itself —
 * second differences across GPU counts at equal batch, or, with fewer than
 * 5, leave-one-out across batches (docs/model.md "Intervals"). */
static double curves_roughness(const cf_perf_params *p)
{
    size_t cap = 0;
    for (int i = 0; i < p->n_curves; i++)
        cap += (size_t)p->curves[i].n;
    double *r = malloc((cap ? cap : 1) * sizeof *r);
    if (!r)
        return 0;
    size_t n = 0;
    for (int i = 0; i < p->n_curves; i++) {
        const cf_perf_curve *c = &p->curves[i];
        const cf_perf_curve *below = NULL, *above = NULL;
        for (int j = 0; j < p->n_curves; j++) {
            if (p->curves[j].gpus == c->gpus - 1)
                below = &p->curves[j];
            if (p->curves[j].gpus == c->gpus + 1)
                above = &p->curves[j];
        }
        if (!below || !above)
            continue;
        for (int j = 0; j < c->n; j++) {
            double tb = NAN, ta = NAN;
            for (int q = 0; q < below->n; q++)
                if (below->batch[q] == c->batch[j])
                    tb = below->step_s[q];
            for (int q = 0; q < above->n; q++)
                if (above->batch[q] == c->batch[j])
                    ta = above->step_s[q];
            if (isfinite(tb) && isfinite(ta))
                r[n++] = (log(c->step_s[j]) - 0.5 * (log(tb) + log(ta))) / sqrt(1.5);
        }
    }
    if (n < 5) {
        n = 0;
        for (int i = 0; i < p->n_curves; i++) {
            const cf_perf_curve *c = &p->curves[i];
            for (int j = 1; j + 1 < c->n; j++) {
                cf_perf_curve without = *c;
                memmove(&without.batch[j], &without.batch[j + 1], (size_t)(c->n - j - 1) * sizeof *c->batch);
                memmove(&without.step_s[j], &without.step_s[j + 1], (size_t)(c->n - j - 1) * sizeof *c->step_s);
                without.n--;
                r[n++] = log(c->step_s[j] / cf_perf_curve_at(&without, c->batch[j])) / sqrt(1.5);
            }
        }
    }
    double sigma = 0; /* fewer than 3 residuals tell nothing: the default (CF_PERF_SIGMA_PROFILE_NONE) */
    if (n >= 3) {
        double med = median(r, n);
        for (size_t i = 0; i < n; i++)
            r[i] = fabs(r[i] - med);
        sigma = fmax(0.005, 1.4826 * median(r, n));
    }
    free(r);
    return sigma;
}

/* ---- the network grid ----------------------------------------------------------------------------- */

/* Multi-node training rows with what the grid needs precomputed. */
typedef struct {
    size_t n;
    double *t, *t1, *growth, *lat_n, *floor_s;
    int *nodes, *g;
    double lat2, bits, nic;
    int distinct_batches;
} net_rows;

static void net_rows_free(net_rows *x)
{
    free(x->t);
    free(x->t1);
    free(x->growth);
    free(x->lat_n);
    free(x->floor_s);
    free(x->nodes);
    free(x->g);
}

static double ring(double n) { return n > 1 ? 2.0 * (n - 1) / n : 0.0; }

/* `nic` 0 = unknown: the hop latency of the default NIC, the bandwidth
 * bounded only by CF_UNKNOWN_NIC_FIT_BOUND_GBPS and no floor. */
static cf_status net_rows_build(const cf_perf_params *p, const cf_measurement *rows, size_t n_rows, double bytes,
                                double nic, net_rows *x)
{
    memset(x, 0, sizeof *x);
    size_t n = 0;
    for (size_t i = 0; i < n_rows; i++)
        n += rows[i].num_nodes > 1;
    size_t cap = n ? n : 1;
    x->t = malloc(cap * sizeof *x->t);
    x->t1 = malloc(cap * sizeof *x->t1);
    x->growth = malloc(cap * sizeof *x->growth);
    x->lat_n = malloc(cap * sizeof *x->lat_n);
    x->floor_s = malloc(cap * sizeof *x->floor_s);
    x->nodes = malloc(cap * sizeof *x->nodes);
    x->g = malloc(cap * sizeof *x->g);
    if (!x->t || !x->t1 || !x->growth || !x->lat_n || !x->floor_s || !x->nodes || !x->g) {
        net_rows_free(x);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    x->bits = 8.0 * bytes;
    double latency_nic = nic > 0 ? nic : CF_DEFAULT_UNKNOWN_NETWORK_GBPS;
    x->nic = nic > 0 ? nic : CF_UNKNOWN_NIC_FIT_BOUND_GBPS;
    x->lat2 = cf_perf_hop_latency_s(&p->k, latency_nic, bytes, 2);
    double first_m = -1;
    for (size_t i = 0; i < n_rows; i++) {
        const cf_measurement *r = &rows[i];
        if (r->num_nodes < 2)
            continue;
        size_t j = x->n++;
        int g = cf_measurement_gpus_per_node(r);
        x->t[j] = r->step_time_s;
        x->t1[j] = cf_perf_compute_s(p, r->local_bsz, g);
        x->nodes[j] = r->num_nodes;
        x->g[j] = g;
        double rn = ring(r->num_nodes), rk = ring(r->num_gpus);
        x->growth[j] = pow(rn, p->k.growth_nodes) * (p->k.growth_gpus != 0 ? pow(rk / rn, p->k.growth_gpus) : 1.0);
        x->lat_n[j] = cf_perf_hop_latency_s(&p->k, latency_nic, bytes, r->num_nodes);
        x->floor_s[j] = nic > 0 ? rk * x->bits / (nic * 1e9) : 0;
        if (first_m < 0)
            first_m = r->local_bsz;
        else if (r->local_bsz != first_m)
            x->distinct_batches = 2;
    }
    if (x->n && !x->distinct_batches)
        x->distinct_batches = 1;
    return CF_OK;
}

typedef struct {
    double obj, a2, rho, c0, b2;
} net_fit;

#define C0_PENALTY 0.002 /* per row, per unit of c0/emax: among equal fits, the smallest fixed overhead */

/* The grid of docs/model.md "Step time": ρ (21 values, or ρ_def with one batch),
 * A2 (A2min, then 70 log steps of emax·[0.02, 4] above it), c0 (0, then
 * 12 log steps of emax·[0.01, 0.6]); `coarse` (only to choose b2): ρ step
 * 0.1, 25 A2 steps, 7 c0 steps. Ties: the smallest ρ, A2, c0. */
/* The grid search at one ρ: the best (a₂, c₀) cell and its objective. */
typedef struct {
    double obj;
    int i, j;
} rho_result;

typedef struct {
    const net_rows *x;
    const double *growth, *a2g, *c0g, *rhos;
    int n_a, n_c;
    double psi, pen_unit;
    double *base[CF_PARALLEL_MAX_THREADS]; /* scratch per thread */
    rho_result *results;
} rho_ctx;

static void fit_one_rho(void *data, size_t r, int thread)
{
    const rho_ctx *c = data;
    const net_rows *x = c->x;
    double *base = c->base[thread], rho = c->rhos[r], obj_best = INFINITY;
    int bi = 0, bj = 0;
    for (int i = 0; i <= c->n_a; i++) {
        double a2 = c->a2g[i];
        for (size_t q = 0; q < x->n; q++) {
            double a = fmax(fmax(a2 - x->lat2, 0.0) * c->growth[q] + x->lat_n[q], x->floor_s[q]);
            double h = rho * x->t1[q];
            base[q] = x->t1[q] + fmax(0.0, a - h) + c->psi * fmin(a, h);
        }
        /* The objective is convex in c0 (a sum of |affine| plus a linear penalty) and c0g rises, so
         * once it has risen clearly no later c0 can be lower: every later rise is at least as
         * steep. "Clearly" (1e-9 relative) is far above the sum's rounding (n · 1e-16), so the
         * pick is the one the whole loop makes, bit for bit. */
        double obj_prev = INFINITY;
        for (int j = 0; j <= c->n_c; j++) {
            double obj = 0;
            for (size_t q = 0; q < x->n; q++)
                obj += fabs((base[q] + c->c0g[j]) / x->t[q] - 1);
            obj += c->pen_unit * c->c0g[j];
            if (obj < obj_best) {
                obj_best = obj;
                bi = i;
                bj = j;
            }
            if (obj > obj_prev + 1e-9 * fabs(obj_prev))
                break;
            obj_prev = obj;
        }
    }
    c->results[r] = (rho_result){obj_best, bi, bj};
}

static cf_status grid_fit(const cf_perf_params *p, const net_rows *x, double b2, int coarse, net_fit *out)
{
    double emax = 1e-6;
    for (size_t i = 0; i < x->n; i++)
        emax = fmax(emax, x->t[i] - x->t1[i]);
    double a2min = x->bits / (x->nic * 1e9) + x->lat2;
    int n_a = coarse ? 25 : 70, n_c = coarse ? 7 : 12;
    double dr = coarse ? 0.1 : 0.05;
    double a2g[71], c0g[13], rhos[21];
    a2g[0] = a2min;
    for (int i = 0; i < n_a; i++)
        a2g[i + 1] = a2min + emax * 0.02 * pow(200.0, (double)i / (n_a - 1));
    c0g[0] = 0;
    for (int i = 0; i < n_c; i++)
        c0g[i + 1] = emax * 0.01 * pow(60.0, (double)i / (n_c - 1));
    int n_rho = 0;
    if (x->distinct_batches >= 2) {
        for (int i = 0; i * dr <= 1.0001; i++)
            rhos[n_rho++] = round(i * dr * 1000) / 1000;
    } else {
        rhos[n_rho++] = p->k.hide_default;
    }
    double *growth = malloc((x->n ? x->n : 1) * sizeof *growth);
    rho_result *results = malloc((size_t)n_rho * sizeof *results);
    rho_ctx ctx = {.x = x, .growth = growth, .a2g = a2g, .c0g = c0g, .rhos = rhos, .n_a = n_a, .n_c = n_c,
                   .psi = p->k.interference, .pen_unit = C0_PENALTY * (double)x->n / emax, .results = results};
    int threads = cf_parallel_threads();
    for (int t = 0; t < threads; t++)
        ctx.base[t] = malloc((x->n ? x->n : 1) * sizeof *ctx.base[t]);
    int ok = growth && results;
    for (int t = 0; t < threads; t++)
        ok &= ctx.base[t] != NULL;
    if (ok) {
        for (size_t i = 0; i < x->n; i++)
            growth[i] = x->growth[i] * (b2 != 0 && x->nodes[i] == 2 ? pow((double)x->g[i], b2) : 1.0);
        /* each ρ on its own (on every core), then the best in ρ order, as one loop would */
        cf_parallel_for((size_t)n_rho, threads, fit_one_rho, &ctx);
    }
    net_fit best = {INFINITY, a2min, rhos[0], 0, b2};
    for (int r = 0; ok && r < n_rho; r++)
        if (results[r].obj < best.obj - 1e-12)
            best = (net_fit){results[r].obj, a2g[results[r].i], rhos[r], c0g[results[r].j], b2};
    for (int t = 0; t < threads; t++)
        free(ctx.base[t]);
    free(growth);
    free(results);
    if (!ok)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    *out = best;
    return CF_OK;
}

/* ---- the fit ---------------------------------------------------------------------------------------- */

cf_status cf_perf_fit(const cf_measurement *rows, size_t n_rows, double bytes, double nic_gbps,
                      const cf_perf_params *start, cf_perf_params *out, cf_perf_fit_report *report)
{
    cf_perf_fit_report rep;
    memset(&rep, 0, sizeof rep);
    rep.n_rows = n_rows;
    rep.r2_single_gpu = NAN;
    cf_perf_params p = *start;
    p.gradient_bytes = bytes;
    p.compute_scale = 1;
    p.sigma_compute = 0;
    for (size_t i = 0; i < n_rows; i++) {
        if (rows[i].num_nodes > 1)
            rep.n_multi_node++;
        else if (rows[i].num_gpus > 1)
            rep.n_multi_gpu_node++;
        else
            rep.n_single_gpu++;
    }
    if (rep.n_single_gpu + rep.n_multi_gpu_node == 0)
        return cf_error_set(CF_ERR_INVALID,
                            "need single-node measurements (one VM, any GPU count) to fit the step time; have only "
                            "multi-node rows");
    cf_status st = build_curves(rows, n_rows, &p);
    if (st != CF_OK)
        return st;
    rep.n_curves = p.n_curves;
    /* For reports: the least-squares line of the 1-GPU curve (the model
     * itself uses the curves). */
    p.alpha_s = p.beta_s = 0;
    if (p.n_curves && p.curves[0].gpus == 1 && p.curves[0].n >= 2) {
        const cf_perf_curve *c = &p.curves[0];
        double mm = 0, mt = 0, sxx = 0, sxy = 0;
        for (int i = 0; i < c->n; i++)
            mm += c->batch[i] / c->n, mt += c->step_s[i] / c->n;
        for (int i = 0; i < c->n; i++)
            sxx += (c->batch[i] - mm) * (c->batch[i] - mm), sxy += (c->batch[i] - mm) * (c->step_s[i] - mt);
        p.beta_s = sxx > 0 ? sxy / sxx : 0;
        p.alpha_s = mt - p.beta_s * mm;
    }
    p.contention = curves_contention(&p);
    p.sigma_profile = curves_roughness(&p);
    p.compute_provenance = CF_PROV_FITTED;
    /* the network */
    p.nic_gbps = nic_gbps > 0 ? nic_gbps : 0; /* 0: unknown, bounds nothing (CF_UNKNOWN_NIC_FIT_BOUND_GBPS) */
    p.inter_gbps = 0;
    p.hide = -1;
    p.overhead_s = 0;
    p.two_vm_exponent = 0;
    p.sigma_fit = 0;
    p.bound_hit = 0;
    p.max_nodes_measured = 0;
    p.max_node_gpus_measured = 0;
    if (rep.n_multi_node > 0) {
        net_rows x;
        if ((st = net_rows_build(&p, rows, n_rows, bytes, p.nic_gbps, &x)) != CF_OK)
            return st;
        int two_vm = 0;
        for (size_t i = 0; i < x.n; i++)
            two_vm |= x.nodes[i] == 2 && x.g[i] > 1;
        net_fit best;
        double b2 = 0;
        if (two_vm) {
            /* the two-VM exponent: a coarse grid per b2, the least objective */
            net_fit coarse_best = {INFINITY, 0, 0, 0, 0};
            for (int i = 0; i <= 5 && st == CF_OK; i++) {
                net_fit f;
                st = grid_fit(&p, &x, 0.2 * i, 1, &f);
                if (st == CF_OK && f.obj < coarse_best.obj)
                    coarse_best = f;
            }
            b2 = coarse_best.b2;
            rep.fitted_two_vm = 1;
        }
        if (st == CF_OK)
            st = grid_fit(&p, &x, b2, 0, &best);
        if (st == CF_OK) {
            double a2min = x.bits / (x.nic * 1e9) + x.lat2;
            p.inter_gbps = x.bits / ((best.a2 - x.lat2) * 1e9);
            if (p.inter_gbps > x.nic)
                p.inter_gbps = x.nic;
            p.hide = best.rho;
            p.overhead_s = best.c0;
            p.two_vm_exponent = best.b2;
            p.bound_hit = best.a2 <= a2min * 1.0001;
            p.network_provenance = CF_PROV_FITTED;
            for (size_t i = 0; i < n_rows; i++) {
                if (rows[i].num_nodes > p.max_nodes_measured)
                    p.max_nodes_measured = rows[i].num_nodes;
                if (rows[i].num_nodes > 1 && cf_measurement_gpus_per_node(&rows[i]) > p.max_node_gpus_measured)
                    p.max_node_gpus_measured = cf_measurement_gpus_per_node(&rows[i]);
            }
            rep.fitted_inter = 1;
            rep.fitted_hide = x.distinct_batches >= 2;
            rep.bound_hit = p.bound_hit;
            if (x.n >= 3) {
                double *res = malloc(x.n * sizeof *res);
                if (!res) {
                    st = cf_error_set(CF_ERR_NOMEM, "out of memory");
                } else {
                    size_t k = 0;
                    for (size_t i = 0; i < n_rows; i++)
                        if (rows[i].num_nodes > 1)
                            res[k++] = fabs(log(cf_perf_predict_measurement(&p, &rows[i], bytes).step_s /
                                                rows[i].step_time_s));
                    p.sigma_fit = 1.4826 * median(res, k);
                    free(res);
                }
            }
        }
        net_rows_free(&x);
        if (st != CF_OK)
            return st;
    }
    double sum = 0;
    for (size_t i = 0; i < n_rows; i++) {
        double r = cf_perf_predict_measurement(&p, &rows[i], bytes).step_s / rows[i].step_time_s - 1;
        sum += r * r;
    }
    rep.rel_rmse = n_rows ? sqrt(sum / (double)n_rows) : 0;
    *out = p;
    if (report)
        *report = rep;
    return CF_OK;
}
