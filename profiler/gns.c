/* Gradient noise scale: two-batch-size unbiased estimator with separately
 * smoothed numerator and denominator (see include/cloudfit/gns.h). */
#include "cloudfit/profiler/gns.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void cf_gns_init(cf_gns *gns, const cf_gns_config *config)
{
    memset(gns, 0, sizeof *gns);
    if (config)
        gns->config = *config;
    if (gns->config.ema_steps < 1 && gns->config.ema_steps != 0)
        gns->config.ema_steps = 1;
}

void cf_gns_free(cf_gns *gns)
{
    free(gns->g2);
    free(gns->trace_sigma);
    free(gns->points);
    memset(gns, 0, sizeof *gns);
}

/* Weight decay per step of the EMA; 1 = plain average. */
static double keep_factor(const cf_gns_config *c)
{
    return c->ema_steps > 0 ? 1.0 - 1.0 / c->ema_steps : 1.0;
}

static cf_status push_point(cf_gns *gns, double b_noise)
{
    if (gns->n_points == gns->cap_points) {
        size_t cap = gns->cap_points ? 2 * gns->cap_points : 64;
        cf_gns_point *p = realloc(gns->points, cap * sizeof *p);
        if (!p)
            return cf_error_set(CF_ERR_NOMEM, "out of memory");
        gns->points = p;
        gns->cap_points = cap;
    }
    gns->points[gns->n_points++] = (cf_gns_point){gns->samples_seen, b_noise};
    return CF_OK;
}

cf_status cf_gns_add_pair(cf_gns *gns, double small_batch, double small_sqnorm, double big_batch,
                          double big_sqnorm)
{
    if (!(small_batch >= 1) || !(big_batch > small_batch) || !isfinite(big_batch))
        return cf_error_set(CF_ERR_INVALID, "noise scale: expected batch sizes 1 ≤ b < B, got b = %g, B = %g",
                            small_batch, big_batch);
    if (!(small_sqnorm >= 0) || !(big_sqnorm >= 0) || !isfinite(small_sqnorm) || !isfinite(big_sqnorm))
        return cf_error_set(CF_ERR_INVALID,
                            "noise scale: expected finite non-negative squared norms, got %g (batch %g) and %g (batch %g)",
                            small_sqnorm, small_batch, big_sqnorm, big_batch);
    gns->steps_seen++;
    gns->samples_seen += big_batch;
    if (gns->steps_seen <= gns->config.skip_steps)
        return CF_OK;
    double g2 = (big_batch * big_sqnorm - small_batch * small_sqnorm) / (big_batch - small_batch);
    double sigma = (small_sqnorm - big_sqnorm) / (1.0 / small_batch - 1.0 / big_batch);
    if (gns->n == gns->cap) {
        size_t cap = gns->cap ? 2 * gns->cap : 64;
        double *a = realloc(gns->g2, cap * sizeof *a);
        if (!a)
            return cf_error_set(CF_ERR_NOMEM, "out of memory");
        gns->g2 = a;
        double *b = realloc(gns->trace_sigma, cap * sizeof *b);
        if (!b)
            return cf_error_set(CF_ERR_NOMEM, "out of memory");
        gns->trace_sigma = b;
        gns->cap = cap;
    }
    gns->g2[gns->n] = g2;
    gns->trace_sigma[gns->n] = sigma;
    gns->n++;
    double keep = keep_factor(&gns->config);
    gns->ema_g2 = keep * gns->ema_g2 + g2;
    gns->ema_sigma = keep * gns->ema_sigma + sigma;
    gns->ema_weight = keep * gns->ema_weight + 1.0;
    /* The weight normalisation cancels in the ratio. */
    return push_point(gns, gns->ema_g2 > 0 ? gns->ema_sigma / gns->ema_g2 : NAN);
}

cf_status cf_gns_add_micro(cf_gns *gns, int small_batch, const double *micro_sqnorms, int n_micro,
                           double mean_sqnorm)
{
    if (n_micro < 2)
        return cf_error_set(CF_ERR_INVALID,
                            "noise scale: a step needs at least 2 micro-batch gradients, got %d", n_micro);
    double sum = 0;
    for (int i = 0; i < n_micro; i++) {
        if (!(micro_sqnorms[i] >= 0) || !isfinite(micro_sqnorms[i]))
            return cf_error_set(CF_ERR_INVALID,
                                "noise scale: micro-batch %d: expected a finite non-negative squared norm, got %g",
                                i + 1, micro_sqnorms[i]);
        sum += micro_sqnorms[i];
    }
    return cf_gns_add_pair(gns, small_batch, sum / n_micro, (double)small_batch * n_micro, mean_sqnorm);
}

cf_status cf_gns_result(const cf_gns *gns, cf_gns_estimate *out)
{
    memset(out, 0, sizeof *out);
    out->n_steps = gns->n;
    if (gns->n < 2)
        return cf_error_set(CF_ERR_INVALID, "noise scale: %zu usable step(s), need at least 2", gns->n);
    double keep = keep_factor(&gns->config);
    /* Weights w_t = keep^(n−1−t): the EMA as a weighted mean. */
    double sw = 0, sw2 = 0, mg = 0, ms = 0, w = 1;
    for (size_t i = gns->n; i-- > 0; w *= keep) {
        sw += w;
        sw2 += w * w;
        mg += w * gns->g2[i];
        ms += w * gns->trace_sigma[i];
    }
    mg /= sw;
    ms /= sw;
    out->g2 = mg;
    out->trace_sigma = ms;
    out->n_effective = sw * sw / sw2;
    if (!(mg > 0))
        return cf_error_set(CF_ERR_INVALID,
                            "noise scale: the gradient is not resolved above the noise after %zu steps "
                            "(estimated |G|² = %.3g ≤ 0)", gns->n, mg);
    /* tr(Σ) ≤ 0 makes B_noise ≤ 0: no noise scale, not a negative one (a
     * stored profile with one is unreadable, its step times lost with it).
     * Real norms cannot get here (|mean g|² ≤ mean |g_i|²); a probe whose
     * mean_sqnorm exceeds its micro-batch norms can. */
    if (!(ms > 0))
        return cf_error_set(CF_ERR_INVALID,
                            "noise scale: the gradient noise is not resolved after %zu steps (estimated tr(Σ) = "
                            "%.3g ≤ 0: is mean_sqnorm the squared norm of the micro-batch gradients' mean?)",
                            gns->n, ms);
    double ratio = ms / mg;
    /* Delta method for a ratio of weighted means: residuals s_t − R·g_t. */
    double var = 0;
    w = 1;
    for (size_t i = gns->n; i-- > 0; w *= keep) {
        double r = gns->trace_sigma[i] - ratio * gns->g2[i];
        var += w * w * r * r;
    }
    var /= sw * sw * mg * mg;
    /* Small-sample correction n/(n−1) with the effective count. */
    if (out->n_effective > 1)
        var *= out->n_effective / (out->n_effective - 1);
    out->b_noise = ratio;
    /* Fewer than 2 steps in the average (a short run, or the EMA's window
     * clamped to one step): the residuals are those of the estimate itself,
     * and their spread, 0, says nothing. Not known: NAN ("± 0" was shown). */
    out->b_noise_stderr = out->n_effective >= 2 ? sqrt(var) : NAN;
    return CF_OK;
}
