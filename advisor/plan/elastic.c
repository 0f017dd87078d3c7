#include "cloudfit/advisor/elastic.h"

#include <math.h>
#include <string.h>

#include "cloudfit/advisor/stateff.h"
#include "../model/perf_internal.h"
#include "../model/stateff_internal.h"
#include "elastic_internal.h"

static int adam_family(cf_optimizer o) { return o == CF_OPT_ADAM || o == CF_OPT_ADAMW || o == CF_OPT_LAMB; }

cf_lr_function cf_lr_function_of(const cf_job *job, const cf_noise_model *noise)
{
    cf_lr_function f = {.rule = job->lr_rule == CF_LR_AUTO ? CF_LR_GAIN : job->lr_rule, .lr0 = job->lr,
                        .m0 = job->batch, .b_noise = noise->b_noise_effective, .noise = noise,
                        .exponent = adam_family(job->optimizer) ? 0.5 : 1.0};
    return f;
}

double cf_lr_optimal(const cf_lr_function *f, double m)
{
    return f->lr0 * pow(cf_lr_gain(f->b_noise, f->m0, m), f->exponent);
}

double cf_lr_optimal_at(const cf_lr_function *f, double m, double progress)
{
    double b = f->noise ? cf_noise_at_progress(f->noise, progress) : f->b_noise;
    return f->lr0 * pow(cf_lr_gain(b, f->m0, m), f->exponent);
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

double cf_lr_function_eval_at(const cf_lr_function *f, double m, double progress)
{
    return f->rule == CF_LR_GAIN || f->rule == CF_LR_AUTO ? cf_lr_optimal_at(f, m, progress)
                                                          : cf_lr_function_eval(f, m);
}

/* The LR of the plan's own rule as cf_stat_efficiency_lr takes it: a
 * multiple `scale` of the optimum at batch m_ref (the gain rule: the
 * optimum at M; the others: a multiple of lr0 = lr_opt(M0)). */
static void rule_as_reference(const cf_lr_function *f, double m, double *m_ref, double *scale)
{
    *m_ref = f->m0;
    switch (f->rule) {
    case CF_LR_LINEAR: *scale = m / f->m0; return;
    case CF_LR_SQRT: *scale = sqrt(m / f->m0); return;
    case CF_LR_NONE: *scale = 1; return;
    case CF_LR_GAIN:
    case CF_LR_AUTO: break;
    }
    *m_ref = m;
    *scale = 1;
}

/* Per-GPU batch, accumulation and global batch at n nodes under the batch
 * policy. Hold: of every (m, s) within the limits (memory, max_accumulation,
 * max_global_batch: the nearest per-GPU batch may round past it), the product closest to
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
        if (r->max_global_batch > 0 && per * mm > r->max_global_batch)
            mm = r->max_global_batch / per; /* rounded up past the limit: the largest within it */
        if (mm < 1)
            continue;
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
    out->lr = cf_lr_function_of(r->job, r->noise);
    out->warmup_factor = CF_ELASTIC_WARMUP_FACTOR;
    out->warmup_steps = CF_ELASTIC_WARMUP_STEPS;
    int acc_n, loc_n;
    long m_n;
    batch_at(r, r->nodes, &loc_n, &acc_n, &m_n);
    double m_ref, scale;
    rule_as_reference(&out->lr, (double)m_n, &m_ref, &scale);
    double full = throughput(r, r->nodes, loc_n, acc_n, m_n) *
                  cf_stat_efficiency_lr(r->noise, (double)m_n, m_ref, scale, out->lr.exponent, NULL);
    out->hold_min_nodes = out->min_nodes = r->nodes;
    int hold_run = r->batch == CF_ELASTIC_HOLD, valid_run = 1;
    for (int n = r->nodes; n >= 1; n--) {
        cf_elastic_point *p = &out->points[n - 1];
        p->nodes = n;
        batch_at(r, n, &p->local_batch, &p->accumulation, &p->global_batch);
        double m = (double)p->global_batch;
        p->lr = cf_lr_function_eval(&out->lr, m);
        p->lr_start = cf_lr_function_eval_at(&out->lr, m, 0);
        p->lr_end = cf_lr_function_eval_at(&out->lr, m, 1);
        p->samples_per_s = throughput(r, n, p->local_batch, p->accumulation, p->global_batch);
        rule_as_reference(&out->lr, m, &m_ref, &scale);
        double value = cf_stat_efficiency_lr(r->noise, m, m_ref, scale, out->lr.exponent, &p->x);
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
    cf_lr_function f = cf_lr_function_of(r->job, r->noise);
    int acc_n, loc_n;
    long m_full;
    batch_at(r, r->nodes, &loc_n, &acc_n, &m_full);
    double mn = (double)m_full;
    /* The plan runs at the optimum on all N at every point of training
     * (AdaScale with the noise-scale trace); on n VMs the rule's LR is a
     * multiple of the optimum at some batch (cf_stat_efficiency_lr). */
    double x_full_tput = throughput(r, r->nodes, loc_n, acc_n, m_full);
    double full = x_full_tput * cf_stat_efficiency(r->noise, mn);
    int no_progress = 0;
    rate[0] = samples[0] = 0;
    for (int n = 1; n <= r->nodes; n++) {
        int acc, loc;
        long m_long;
        batch_at(r, n, &loc, &acc, &m_long);
        double m = (double)m_long, m_ref = m, scale = 1;
        if (!(r->batch == CF_ELASTIC_HOLD && fabs(m / mn - 1) <= CF_ELASTIC_HOLD_TOLERANCE)) {
            switch (rule) { /* the batch is not held: the rule sets the LR */
            case CF_LR_NONE: m_ref = mn; break; /* "fixed": the full plan's LR */
            case CF_LR_LINEAR: m_ref = mn, scale = m / mn; break;
            case CF_LR_SQRT: m_ref = mn, scale = sqrt(m / mn); break;
            default: break; /* gain: the optimum at this batch */
            }
        }
        double tput = throughput(r, n, loc, acc, m_long);
        double value = cf_stat_efficiency_lr(r->noise, m, m_ref, scale, f.exponent, NULL);
        rate[n] = full > 0 ? tput * value / full : 0;
        samples[n] = x_full_tput > 0 ? tput / x_full_tput : 0;
        if (!(value > 0))
            no_progress = n;
    }
    return no_progress;
}
