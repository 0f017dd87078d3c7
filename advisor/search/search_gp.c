/* The search's error model: a Gaussian process over candidates, solved with
 * GSL's Cholesky decomposition. A handful of observations (≤ a few dozen)
 * against hundreds of candidates: O(n_obs³ + n_cand·n_obs²). */
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdlib.h>

#include "search_internal.h"

static double kernel(const cf_gp *gp, size_t a, size_t b)
{
    double d2 = 0;
    for (int k = 0; k < CF_GP_FEATURES; k++) {
        double d = (gp->x[a * CF_GP_FEATURES + k] - gp->x[b * CF_GP_FEATURES + k]) / gp->length[k];
        d2 += d * d;
    }
    double corr = exp(-0.5 * d2);
    if (gp->type[a] != gp->type[b])
        corr *= gp->cross_type_corr;
    return gp->prior_sd[a] * gp->prior_sd[b] * corr + (a == b ? gp->nugget_sd[a] * gp->nugget_sd[a] : 0);
}

cf_status cf_gp_posterior(const cf_gp *gp, const size_t *obs, const double *y, size_t n_obs, double *out_mean,
                          double *out_sd)
{
    if (n_obs == 0) {
        for (size_t c = 0; c < gp->n; c++) {
            out_mean[c] = 0;
            out_sd[c] = sqrt(gp->prior_sd[c] * gp->prior_sd[c] + gp->nugget_sd[c] * gp->nugget_sd[c]);
        }
        return CF_OK;
    }
    gsl_set_error_handler_off();
    gsl_matrix *k = gsl_matrix_alloc(n_obs, n_obs);
    gsl_vector *alpha = gsl_vector_alloc(n_obs), *v = gsl_vector_alloc(n_obs), *yv = gsl_vector_alloc(n_obs);
    cf_status st = CF_OK;
    if (!k || !alpha || !v || !yv) {
        st = cf_error_set(CF_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n_obs; i++) {
        for (size_t j = 0; j < n_obs; j++)
            gsl_matrix_set(k, i, j, kernel(gp, obs[i], obs[j]) + (i == j ? gp->noise_var : 0));
        gsl_vector_set(yv, i, y[i]);
    }
    if (gsl_linalg_cholesky_decomp1(k) != GSL_SUCCESS || gsl_linalg_cholesky_solve(k, yv, alpha) != GSL_SUCCESS) {
        st = cf_error_set(CF_ERR_INTERNAL, "search: the error model's covariance is not positive definite");
        goto done;
    }
    for (size_t c = 0; c < gp->n; c++) {
        double mean = 0;
        for (size_t i = 0; i < n_obs; i++) {
            double kc = kernel(gp, c, obs[i]);
            mean += kc * gsl_vector_get(alpha, i);
            gsl_vector_set(v, i, kc);
        }
        /* var = k(c,c) − k_cᵀ K⁻¹ k_c = k(c,c) − |L⁻¹ k_c|² */
        gsl_blas_dtrsv(CblasLower, CblasNoTrans, CblasNonUnit, k, v);
        double dot = 0;
        gsl_blas_ddot(v, v, &dot);
        double var = kernel(gp, c, c) - dot;
        out_mean[c] = mean;
        out_sd[c] = var > 1e-12 ? sqrt(var) : 1e-6;
    }
done:
    if (k) gsl_matrix_free(k);
    if (alpha) gsl_vector_free(alpha);
    if (v) gsl_vector_free(v);
    if (yv) gsl_vector_free(yv);
    return st;
}
