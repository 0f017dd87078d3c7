/* The linear compute fit of a profile. */
#include "cloudfit/profiler.h"

#include <gsl/gsl_fit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


cf_status cf_profile_fit(cf_profile *p)
{
    int n = p->n_points;
    p->has_fit = 0;
    if (n < 2)
        return cf_error_set(CF_ERR_INVALID, "profile: a fit needs at least 2 batch sizes, got %d", n);
    double m[CF_PROFILE_MAX_POINTS], t[CF_PROFILE_MAX_POINTS];
    for (int i = 0; i < n; i++) {
        m[i] = p->points[i].local_batch;
        t[i] = p->points[i].step_time_s;
        if (i > 0 && m[i] <= m[i - 1])
            return cf_error_set(CF_ERR_INVALID, "profile: batch sizes must be distinct and increasing");
    }
    double c0, c1, cov00, cov01, cov11, ss_res;
    if (gsl_fit_linear(m, 1, t, 1, (size_t)n, &c0, &c1, &cov00, &cov01, &cov11, &ss_res) != 0)
        return cf_error_set(CF_ERR_INTERNAL, "profile: the linear fit failed");
    double mean = 0, ss_tot = 0, rel = 0;
    for (int i = 0; i < n; i++)
        mean += t[i] / n;
    for (int i = 0; i < n; i++) {
        ss_tot += (t[i] - mean) * (t[i] - mean);
        p->points[i].residual_s = t[i] - (c0 + c1 * m[i]);
        rel += pow(p->points[i].residual_s / t[i], 2);
    }
    p->alpha_s = c0;
    p->beta_s = c1;
    p->r2 = ss_tot > 0 ? 1.0 - ss_res / ss_tot : NAN;
    p->rel_rmse = sqrt(rel / n);
    p->has_fit = 1;
    return CF_OK;
}
