#include "cloudfit/advisor/elastic.h"

#include <math.h>
#include <string.h>

#include "cloudfit/advisor/stateff.h"

static int adam_family(cf_optimizer o) { return o == CF_OPT_ADAM || o == CF_OPT_ADAMW || o == CF_OPT_LAMB; }

cf_lr_function cf_lr_function_of(const cf_job *job, double b_noise)
{
    cf_lr_function f = {.rule = job->lr_rule == CF_LR_AUTO ? CF_LR_GAIN : job->lr_rule, .lr0 = job->lr,
                        .m0 = job->batch, .b_noise = b_noise, .exponent = adam_family(job->optimizer) ? 0.5 : 1.0};
    return f;
}

double cf_lr_optimal(const cf_lr_function *f, double m)
{
    return f->lr0 * pow(cf_lr_gain(f->b_noise, f->m0, m), f->exponent);
}

double cf_lr_function_eval(const cf_lr_function *f, double m)
{
    switch (f->rule) {
    case CF_LR_LINEAR: return f->lr0 * m / f->m0;
    case CF_LR_SQRT: return f->lr0 * sqrt(m / f->m0);
    case CF_LR_NONE: return f->lr0;
    case CF_LR_GAIN:
    case CF_LR_AUTO: break;
    }
    return cf_lr_optimal(f, m);
}

double cf_sample_value(double b, double m0, double m, double x)
{
    double q = x * (2 - x);
    return (b + m0) / (b + m) * (q > 0 ? q : 0);
}

/* Per-GPU batch, accumulation and global batch at n nodes under the batch
 * policy. Hold: of every (m, s) within the limits, the product closest to
 * the plan's global batch (ties: the smaller accumulation, then the
 * larger m); the plan's own (m, s) at n = N. */
static void batch_at(const cf_elastic_request *r, int n, int *local, int *acc, long *m)
{
    *local = r->local_batch;
    *acc = r->accumulation;
    *m = (long)n * r->gpus_per_node * r->local_batch * r->accumulation;
    if (r->batch != CF_ELASTIC_HOLD || n == r->nodes)
        return;
    long want = (long)r->nodes * r->gpus_per_node * r->local_batch * r->accumulation;
    int max_m = r->max_local_batch > r->local_batch ? r->max_local_batch : r->local_batch;
    int max_s = r->max_accumulation > 0 ? r->max_accumulation : r->accumulation;
    long best_gap = -1;
    for (int s = 1; s <= max_s; s++) {
        long per = (long)n * r->gpus_per_node * s;
        long mm = (want + per / 2) / per; /* nearest per-GPU batch */
        if (mm < 1)
            mm = 1;
        if (mm > max_m)
            mm = max_m;
        long got = per * mm, gap = got > want ? got - want : want - got;
        if (best_gap < 0 || gap < best_gap) {
            best_gap = gap;
            *local = (int)mm;
            *acc = s;
            *m = got;
        }
    }
}

static double throughput(const cf_elastic_request *r, int n, int local, int acc, long m)
{
    double step = cf_perf_step_s(r->perf, r->gradient_bytes, n, r->gpus_per_node, local, acc);
    return step > 0 ? (double)m / step : 0;
}

cf_status cf_elastic_plan_for(const cf_elastic_request *r, cf_elastic_plan *out)
{
    memset(out, 0, sizeof *out);
    if (r->nodes < 1 || r->nodes > CF_ELASTIC_MAX_NODES)
        return cf_error_set(CF_ERR_INVALID, "an elastic plan needs 1 to %d nodes, got %d", CF_ELASTIC_MAX_NODES,
                            r->nodes);
    out->max_nodes = r->nodes;
    out->batch = r->batch;
    out->lr = cf_lr_function_of(r->job, r->b_noise);
    out->warmup_factor = CF_ELASTIC_WARMUP_FACTOR;
    out->warmup_steps = CF_ELASTIC_WARMUP_STEPS;
    int acc_n, loc_n;
    long m_n;
    batch_at(r, r->nodes, &loc_n, &acc_n, &m_n);
    double x_full = cf_lr_function_eval(&out->lr, (double)m_n) / cf_lr_optimal(&out->lr, (double)m_n);
    double full = throughput(r, r->nodes, loc_n, acc_n, m_n) *
                  cf_sample_value(r->b_noise, out->lr.m0, (double)m_n, x_full);
    out->hold_min_nodes = out->min_nodes = r->nodes;
    int hold_run = r->batch == CF_ELASTIC_HOLD, valid_run = 1;
    for (int n = r->nodes; n >= 1; n--) {
        cf_elastic_point *p = &out->points[n - 1];
        p->nodes = n;
        batch_at(r, n, &p->local_batch, &p->accumulation, &p->global_batch);
        double m = (double)p->global_batch;
        p->lr = cf_lr_function_eval(&out->lr, m);
        p->x = p->lr / cf_lr_optimal(&out->lr, m);
        p->samples_per_s = throughput(r, n, p->local_batch, p->accumulation, p->global_batch);
        double value = cf_sample_value(r->b_noise, out->lr.m0, m, p->x);
        p->progress_rate = full > 0 ? p->samples_per_s * value / full : 0;
        p->valid = p->x < 2 && value > 0;
        if (hold_run && fabs((double)p->global_batch / (double)m_n - 1) <= CF_ELASTIC_HOLD_TOLERANCE)
            out->hold_min_nodes = n;
        else
            hold_run = 0;
        if (valid_run && p->valid)
            out->min_nodes = n;
        else
            valid_run = 0;
    }
    return CF_OK;
}

int cf_elastic_rule_rates(const cf_elastic_request *r, cf_lr_rule rule, double *rate, double *samples)
{
    cf_lr_function f = cf_lr_function_of(r->job, r->b_noise);
    int acc_n, loc_n;
    long m_full;
    batch_at(r, r->nodes, &loc_n, &acc_n, &m_full);
    double mn = (double)m_full;
    double opt_full = cf_lr_optimal(&f, mn);
    double x_full = 1.0; /* the plan runs at the optimum on all N */
    double x_full_tput = throughput(r, r->nodes, loc_n, acc_n, m_full);
    double full = x_full_tput * cf_sample_value(r->b_noise, f.m0, mn, x_full);
    int diverges = 0;
    rate[0] = samples[0] = 0;
    for (int n = 1; n <= r->nodes; n++) {
        int acc, loc;
        long m_long;
        batch_at(r, n, &loc, &acc, &m_long);
        double m = (double)m_long, lr;
        if (r->batch == CF_ELASTIC_HOLD && fabs(m / mn - 1) <= CF_ELASTIC_HOLD_TOLERANCE) {
            lr = cf_lr_optimal(&f, m); /* batch held: the plan's LR */
        } else {
            double s = m / mn;
            switch (rule) {
            case CF_LR_NONE: lr = opt_full; break; /* "fixed": the full plan's LR */
            case CF_LR_LINEAR: lr = opt_full * s; break;
            case CF_LR_SQRT: lr = opt_full * sqrt(s); break;
            default: lr = cf_lr_optimal(&f, m); break;
            }
        }
        double x = lr / cf_lr_optimal(&f, m);
        double tput = throughput(r, n, loc, acc, m_long);
        double value = cf_sample_value(r->b_noise, f.m0, m, x);
        rate[n] = full > 0 ? tput * value / full : 0;
        samples[n] = x_full_tput > 0 ? tput / x_full_tput : 0;
        if (x >= 2 && !diverges)
            diverges = n;
    }
    return diverges;
}
