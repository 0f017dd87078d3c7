#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/advisor/perf.h"

/* Residual scale of the robust loss: errors well beyond 5 % count
 * linearly, not quadratically. */
#define CF_FIT_SOFT_L1_SCALE 0.05
/* Upper bound of a fitted bandwidth, Gbit/s. */
#define CF_FIT_MAX_GBPS 1e5

/* Free parameters of the nonlinear fit, each through a transform that keeps
 * it in its physical range. */
enum { P_ALPHA, P_BETA, P_CONTENTION, P_INTRA, P_INTER, P_LATENCY, P_GAMMA, P_COUNT };

typedef struct {
    const cf_measurement *rows;
    size_t n_rows;
    double gradient_bytes;
    cf_perf_params base;
    int free_index[P_COUNT]; /* position in the GSL vector, or -1 when held */
} fit_ctx;

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

static void unpack(const fit_ctx *ctx, const gsl_vector *x, cf_perf_params *p)
{
    *p = ctx->base;
    const int *f = ctx->free_index;
    if (f[P_ALPHA] >= 0) p->alpha_s = exp(gsl_vector_get(x, f[P_ALPHA]));
    if (f[P_BETA] >= 0) p->beta_s = exp(gsl_vector_get(x, f[P_BETA]));
    if (f[P_CONTENTION] >= 0) p->contention = exp(gsl_vector_get(x, f[P_CONTENTION]));
    /* Bandwidths that the rows cannot bound (all sync hidden) run off to
     * infinity; cap them at a figure no interconnect reaches. */
    if (f[P_INTRA] >= 0) p->intra_gbps = fmin(exp(gsl_vector_get(x, f[P_INTRA])), CF_FIT_MAX_GBPS);
    if (f[P_INTER] >= 0) p->inter_gbps = fmin(exp(gsl_vector_get(x, f[P_INTER])), CF_FIT_MAX_GBPS);
    if (f[P_LATENCY] >= 0) p->latency_s = exp(gsl_vector_get(x, f[P_LATENCY]));
    if (f[P_GAMMA] >= 0) p->gamma = 1.0 + 9.0 * sigmoid(gsl_vector_get(x, f[P_GAMMA]));
}

static double logit_gamma(double gamma)
{
    double u = (gamma - 1.0) / 9.0;
    if (u < 0.01) u = 0.01;
    if (u > 0.99) u = 0.99;
    return log(u / (1.0 - u));
}

static void pack(const fit_ctx *ctx, const cf_perf_params *p, gsl_vector *x)
{
    const int *f = ctx->free_index;
    if (f[P_ALPHA] >= 0) gsl_vector_set(x, f[P_ALPHA], log(fmax(p->alpha_s, 1e-6)));
    if (f[P_BETA] >= 0) gsl_vector_set(x, f[P_BETA], log(fmax(p->beta_s, 1e-9)));
    if (f[P_CONTENTION] >= 0) gsl_vector_set(x, f[P_CONTENTION], log(fmax(p->contention, 1e-3)));
    if (f[P_INTRA] >= 0) gsl_vector_set(x, f[P_INTRA], log(fmax(p->intra_gbps, 1e-3)));
    if (f[P_INTER] >= 0) gsl_vector_set(x, f[P_INTER], log(fmax(p->inter_gbps, 1e-3)));
    if (f[P_LATENCY] >= 0) gsl_vector_set(x, f[P_LATENCY], log(fmax(p->latency_s, 1e-5)));
    if (f[P_GAMMA] >= 0) gsl_vector_set(x, f[P_GAMMA], logit_gamma(p->gamma));
}

int cf_measurement_gpus_per_node(const cf_measurement *row)
{
    /* Uneven placements ("1124"): the busiest node bounds compute
     * contention and NIC sharing. */
    if (row->placement[0]) {
        int busiest = 0;
        for (const char *c = row->placement; *c; c++)
            if (*c >= '0' && *c <= '9' && *c - '0' > busiest)
                busiest = *c - '0';
        if (busiest > 0)
            return busiest;
    }
    return (row->num_gpus + row->num_nodes - 1) / row->num_nodes;
}

double cf_perf_predict_measurement(const cf_perf_params *p, const cf_measurement *row, double gradient_bytes)
{
    return cf_perf_step_s(p, gradient_bytes, row->num_nodes, cf_measurement_gpus_per_node(row), row->local_bsz, 1);
}

static int residuals(const gsl_vector *x, void *data, gsl_vector *f)
{
    const fit_ctx *ctx = data;
    cf_perf_params p;
    unpack(ctx, x, &p);
    for (size_t i = 0; i < ctx->n_rows; i++) {
        double pred = cf_perf_predict_measurement(&p, &ctx->rows[i], ctx->gradient_bytes);
        gsl_vector_set(f, i, (pred - ctx->rows[i].step_time_s) / ctx->rows[i].step_time_s);
    }
    return GSL_SUCCESS;
}

static double rel_rmse(const fit_ctx *ctx, const cf_perf_params *p)
{
    double sum = 0;
    for (size_t i = 0; i < ctx->n_rows; i++) {
        double r = cf_perf_predict_measurement(p, &ctx->rows[i], ctx->gradient_bytes) / ctx->rows[i].step_time_s - 1.0;
        sum += r * r;
    }
    return ctx->n_rows ? sqrt(sum / ctx->n_rows) : 0;
}

/* Linear least squares of t = alpha + beta·m on single-GPU rows. */
static cf_status fit_single_gpu(const cf_measurement *rows, size_t n_rows, cf_perf_params *p,
                                cf_perf_fit_report *rep)
{
    double *m = malloc(n_rows * sizeof *m), *t = malloc(n_rows * sizeof *t);
    if (!m || !t) {
        free(m);
        free(t);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    size_t n = 0;
    double m_min = INFINITY, m_max = -INFINITY;
    for (size_t i = 0; i < n_rows; i++) {
        if (rows[i].num_gpus != 1)
            continue;
        m[n] = rows[i].local_bsz;
        t[n] = rows[i].step_time_s;
        m_min = fmin(m_min, m[n]);
        m_max = fmax(m_max, m[n]);
        n++;
    }
    rep->n_single_gpu = n;
    if (n < 2 || m_min == m_max) {
        free(m);
        free(t);
        return cf_error_set(CF_ERR_INVALID,
                            "need single-GPU measurements at two or more batch sizes to fit compute time (have %zu)",
                            n);
    }
    double c0, c1, cov00, cov01, cov11, sumsq;
    gsl_fit_linear(m, 1, t, 1, n, &c0, &c1, &cov00, &cov01, &cov11, &sumsq);
    double mean = 0, tss = 0;
    for (size_t i = 0; i < n; i++)
        mean += t[i] / n;
    for (size_t i = 0; i < n; i++)
        tss += (t[i] - mean) * (t[i] - mean);
    rep->r2_single_gpu = n >= 3 && tss > 0 ? 1.0 - sumsq / tss : NAN;
    free(m);
    free(t);
    if (c1 <= 0)
        return cf_error_set(CF_ERR_INVALID,
                            "single-GPU step time does not grow with the batch (slope %.3g s/sample)", c1);
    p->alpha_s = fmax(c0, 1e-5);
    p->beta_s = c1;
    return CF_OK;
}

cf_status cf_perf_fit(const cf_measurement *rows, size_t n_rows, double gradient_bytes,
                      const cf_perf_params *start, cf_perf_params *out, cf_perf_fit_report *report)
{
    cf_perf_fit_report rep;
    memset(&rep, 0, sizeof rep);
    rep.n_rows = n_rows;
    fit_ctx ctx = {.rows = rows, .n_rows = n_rows, .gradient_bytes = gradient_bytes, .base = *start};
    cf_status st = fit_single_gpu(rows, n_rows, &ctx.base, &rep);
    if (st != CF_OK)
        return st;
    int node_counts_multi = 0, seen[65] = {0};
    for (size_t i = 0; i < n_rows; i++) {
        if (rows[i].num_nodes == 1 && rows[i].num_gpus > 1)
            rep.n_multi_gpu_node++;
        if (rows[i].num_nodes > 1) {
            rep.n_multi_node++;
            int nn = rows[i].num_nodes > 64 ? 64 : rows[i].num_nodes;
            if (!seen[nn]++)
                node_counts_multi++;
        }
    }
    size_t n_free = 0;
    for (int k = 0; k < P_COUNT; k++)
        ctx.free_index[k] = -1;
    ctx.free_index[P_ALPHA] = (int)n_free++;
    ctx.free_index[P_BETA] = (int)n_free++;
    if (rep.n_multi_gpu_node >= 2) {
        ctx.free_index[P_CONTENTION] = (int)n_free++;
        ctx.free_index[P_INTRA] = (int)n_free++;
        rep.fitted_contention = rep.fitted_intra = 1;
    }
    if (rep.n_multi_node >= 2) {
        ctx.free_index[P_INTER] = (int)n_free++;
        rep.fitted_inter = 1;
        if (node_counts_multi >= 2)
            ctx.free_index[P_LATENCY] = (int)n_free++;
    }
    if (rep.n_multi_gpu_node + rep.n_multi_node >= 3) {
        ctx.free_index[P_GAMMA] = (int)n_free++;
        rep.fitted_gamma = 1;
    }
    /* Neutral starting points for parameters the caller left at zero. */
    if (ctx.base.contention <= 0)
        ctx.base.contention = 0.01;
    if (ctx.base.intra_gbps <= 0)
        ctx.base.intra_gbps = 100;
    if (ctx.base.inter_gbps <= 0 && rep.fitted_inter)
        ctx.base.inter_gbps = 10;
    if (ctx.base.latency_s <= 0)
        ctx.base.latency_s = 0.001;
    if (ctx.base.gamma < 1)
        ctx.base.gamma = 2.0;

    cf_perf_params best = ctx.base;
    if (n_rows > n_free) {
        gsl_set_error_handler_off();
        gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
        gsl_multifit_nlinear_workspace *w =
            gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, n_rows, n_free);
        gsl_vector *x = gsl_vector_alloc(n_free);
        if (!w || !x) {
            if (w) gsl_multifit_nlinear_free(w);
            if (x) gsl_vector_free(x);
            return cf_error_set(CF_ERR_NOMEM, "out of memory");
        }
        gsl_multifit_nlinear_fdf fdf = {.f = residuals, .df = NULL, .fvv = NULL,
                                        .n = n_rows, .p = n_free, .params = &ctx};
        /* Several starts for the overlap exponent and the inter-node
         * bandwidth: the surface has flat valleys and local minima. */
        static const double gamma_starts[] = {1.5, 3.0, 6.0};
        static const double inter_scale[] = {1.0, 0.2, 5.0};
        size_t n_inter = rep.fitted_inter ? 3 : 1;
        double best_err = rel_rmse(&ctx, &best);
        for (size_t s = 0; s < 3 * n_inter; s++) {
            cf_perf_params init = ctx.base;
            init.gamma = gamma_starts[s % 3];
            init.inter_gbps = ctx.base.inter_gbps * inter_scale[s / 3];
            pack(&ctx, &init, x);
            gsl_multifit_nlinear_init(x, &fdf, w);
            int info = 0;
            gsl_multifit_nlinear_driver(200, 1e-10, 1e-10, 1e-10, NULL, NULL, &info, w);
            cf_perf_params cand;
            unpack(&ctx, gsl_multifit_nlinear_position(w), &cand);
            double err = rel_rmse(&ctx, &cand);
            if (isfinite(err) && err < best_err) {
                best_err = err;
                best = cand;
            }
        }
        /* Robust refinement (soft-L1 loss by iteratively reweighted least
         * squares): measured step times have outliers — a slow network
         * minute, a straggler — that plain least squares chases. */
        gsl_vector *weights = gsl_vector_alloc(n_rows);
        for (int round = 0; weights && round < 3; round++) {
            for (size_t i = 0; i < n_rows; i++) {
                double r = cf_perf_predict_measurement(&best, &rows[i], gradient_bytes) / rows[i].step_time_s - 1.0;
                gsl_vector_set(weights, i, 1.0 / sqrt(1.0 + (r / CF_FIT_SOFT_L1_SCALE) * (r / CF_FIT_SOFT_L1_SCALE)));
            }
            pack(&ctx, &best, x);
            gsl_multifit_nlinear_winit(x, weights, &fdf, w);
            int info = 0;
            gsl_multifit_nlinear_driver(200, 1e-10, 1e-10, 1e-10, NULL, NULL, &info, w);
            cf_perf_params cand;
            unpack(&ctx, gsl_multifit_nlinear_position(w), &cand);
            if (isfinite(rel_rmse(&ctx, &cand)))
                best = cand;
        }
        if (weights)
            gsl_vector_free(weights);
        gsl_vector_free(x);
        gsl_multifit_nlinear_free(w);
    }
    best.compute_provenance = CF_PROV_FITTED;
    best.network_provenance = rep.fitted_inter ? CF_PROV_FITTED : start->network_provenance;
    rep.rel_rmse = rel_rmse(&ctx, &best);
    *out = best;
    if (report)
        *report = rep;
    return CF_OK;
}
