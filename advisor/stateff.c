#include "cloudfit/stateff.h"

#include <math.h>

static double trace_value(const cf_noise_point *trace, int n, double progress)
{
    if (progress <= trace[0].progress)
        return trace[0].b_noise;
    for (int i = 1; i < n; i++) {
        if (progress <= trace[i].progress) {
            double span = trace[i].progress - trace[i - 1].progress;
            double w = span > 0 ? (progress - trace[i - 1].progress) / span : 1.0;
            return trace[i - 1].b_noise + w * (trace[i].b_noise - trace[i - 1].b_noise);
        }
    }
    return trace[n - 1].b_noise;
}

/* ∫ dp/(B(p)+M0) over [0,1] by the composite Simpson rule on a fine grid;
 * B is piecewise linear, so 2048 intervals are far more than enough. */
static double trace_integral(const cf_noise_point *trace, int n, double m0)
{
    const int intervals = 2048;
    double h = 1.0 / intervals, sum = 0;
    for (int i = 0; i <= intervals; i++) {
        double f = 1.0 / (trace_value(trace, n, i * h) + m0);
        double w = (i == 0 || i == intervals) ? 1 : (i % 2 ? 4 : 2);
        sum += w * f;
    }
    return sum * h / 3.0;
}

void cf_noise_model_init(cf_noise_model *nm, double m0, double b_noise_const,
                         const cf_noise_point *trace, int n_trace, cf_provenance provenance)
{
    nm->m0 = m0;
    nm->provenance = provenance;
    if (n_trace > 0) {
        nm->inv_integral = trace_integral(trace, n_trace, m0);
        nm->b_noise_start = trace[0].b_noise;
        nm->b_noise_end = trace[n_trace - 1].b_noise;
    } else {
        nm->inv_integral = 1.0 / (b_noise_const + m0);
        nm->b_noise_start = nm->b_noise_end = b_noise_const;
    }
    nm->b_noise_effective = 1.0 / nm->inv_integral - m0;
}

double cf_samples_to_target(const cf_noise_model *nm, double e0_samples, double global_batch)
{
    return e0_samples * (1.0 + (global_batch - nm->m0) * nm->inv_integral);
}

double cf_stat_efficiency(const cf_noise_model *nm, double global_batch)
{
    return 1.0 / (1.0 + (global_batch - nm->m0) * nm->inv_integral);
}

double cf_lr_gain(double b_noise, double m0, double global_batch)
{
    return (b_noise + m0) * global_batch / ((b_noise + global_batch) * m0);
}

cf_lr_choice cf_lr_for_batch(cf_lr_rule rule, cf_optimizer optimizer, double lr0, double m0,
                             double b_noise, double global_batch)
{
    cf_lr_choice c = {0};
    int adam_family = optimizer == CF_OPT_ADAM || optimizer == CF_OPT_ADAMW || optimizer == CF_OPT_LAMB;
    double scale = global_batch / m0;
    c.rule_used = rule == CF_LR_AUTO ? CF_LR_GAIN : rule;
    switch (c.rule_used) {
    case CF_LR_LINEAR: c.factor = scale; break;
    case CF_LR_SQRT: c.factor = sqrt(scale); break;
    case CF_LR_NONE: c.factor = 1.0; break;
    case CF_LR_GAIN:
    case CF_LR_AUTO: {
        double r = cf_lr_gain(b_noise, m0, global_batch);
        c.factor = adam_family ? sqrt(r) : r;
        c.sqrt_form = adam_family;
        break;
    }
    }
    c.lr = lr0 * c.factor;
    c.warmup_recommended = c.factor >= 2.0;
    return c;
}
