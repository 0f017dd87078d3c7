/* The search's result as `recommend` configurations (the pick first, then
 * what meets the constraints with the margin, and the Pareto front), and
 * the candidate that is today's set-up. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cloudfit/advisor/explain.h"
#include "cloudfit/advisor/search.h"
#include "search_internal.h"
#include "../advisor_internal.h"
#include "../model/perf_internal.h"
#include "../model/stateff_internal.h"
#include "../plan/explain_internal.h"
#include "../validate/validate_internal.h"

static const cf_gpu_perf *fitted_for(const cf_search_result *r, const char *gpu)
{
    for (size_t i = 0; i < r->n_fitted; i++)
        if (strcasecmp(r->fitted[i].gpu, gpu) == 0)
            return &r->fitted[i];
    return NULL;
}

void cf_search_config(const cf_search_options *o, const cf_search_result *r, const cf_noise_model *noise, size_t i,
                      cf_config *cfg)
{
    const cf_job *job = o->job;
    const cf_search_candidate *c = &o->candidates[i];
    memset(cfg, 0, sizeof *cfg);
    cfg->vm = c->vm;
    cfg->nodes = c->nodes;
    cfg->gpus_per_node = c->gpus_per_node;
    cfg->local_batch = c->local_batch;
    cfg->accumulation = 1;
    cfg->global_batch = (long)c->nodes * c->gpus_per_node * c->local_batch;
    double m = (double)cfg->global_batch;
    cfg->lr = cf_lr_for_batch(job->lr_rule, job->optimizer, job->lr, job->batch, noise->b_noise_effective, m);
    cfg->step_time_s = r->est_step_s[i];
    const cf_gpu_perf *perf = fitted_for(r, c->gpu);
    if (perf) {
        cf_perf_params p = cf_gpu_perf_on_vm(perf, c->network_gbps);
        double bytes = job->parameters * job->gradient_bytes;
        cf_step st = cf_perf_predict(&p, bytes, c->nodes, c->gpus_per_node, c->nodes * c->gpus_per_node,
                                     c->local_batch, 1);
        cfg->compute_s = st.compute_s;
        cfg->sync_s = st.allreduce_s;
        double single = c->local_batch / cf_perf_compute_s(&p, c->local_batch, 1);
        cfg->parallel_efficiency = (m / cfg->step_time_s) / ((double)c->nodes * c->gpus_per_node * single);
        cfg->prov_network = p.network_provenance;
        cfg->network_measured_max_nodes = r->measured[i] ? 0 : cf_network_extrapolated_from(&p, cfg->nodes);
    }
    cfg->samples_per_s = m / cfg->step_time_s;
    cfg->samples_to_target = cf_samples_to_target(noise, job->total_samples, m);
    cfg->steps = ceil(cfg->samples_to_target / m);
    cfg->stat_efficiency = cf_stat_efficiency(noise, m);
    cf_search_job(o, c, cfg->step_time_s, &cfg->hours, &cfg->total_usd);
    cfg->train_hours = cfg->hours - o->constraints->startup_minutes / 60.0;
    /* the search's own uncertainty of the step (the GP posterior over the model) */
    cfg->step_sigma = cfg->step_sigma_up = r->est_sd[i] > 0 ? r->est_sd[i] : 0;
    double z80 = cf_normal_two_sided_z(CF_INTERVAL_LEVEL), startup_h = o->constraints->startup_minutes / 60.0;
    cfg->hours_p10 = startup_h + cfg->train_hours * exp(-z80 * cfg->step_sigma);
    cfg->hours_p90 = startup_h + cfg->train_hours * exp(z80 * cfg->step_sigma);
    cfg->total_usd_p10 = cfg->hours_p10 * c->nodes * c->usd_per_node_hr;
    cfg->total_usd_p90 = cfg->hours_p90 * c->nodes * c->usd_per_node_hr;
    cf_search_job(o, c, cfg->step_time_s * exp(o->safety_sds * cfg->step_sigma), &cfg->hours_at_confidence,
                  &cfg->usd_at_confidence);
    cfg->spot_factor = 1;
    cfg->usd_per_hour = c->nodes * c->usd_per_node_hr;
    cfg->prov_throughput = r->measured[i] ? CF_PROV_MEASURED : CF_PROV_FITTED;
    cfg->prov_noise = noise->provenance;
    cfg->prov_price = c->vm && strstr(c->vm->instance_type, "(--price)") ? CF_PROV_DEFAULT : CF_PROV_MEASURED;
}

typedef struct {
    size_t index;
    double value;
} ranked_item;

static int by_value(const void *a, const void *b)
{
    const ranked_item *x = a, *y = b;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

cf_status cf_search_advice(const cf_search_options *o, const cf_search_result *r, const cf_noise_model *noise, size_t top,
                           cf_advice *out)
{
    memset(out, 0, sizeof *out);
    size_t n = o->n_candidates;
    ranked_item *items = malloc((n ? n : 1) * sizeof *items);
    double *hx = malloc((n ? n : 1) * sizeof *hx), *uy = malloc((n ? n : 1) * sizeof *uy);
    size_t *usable = malloc((n ? n : 1) * sizeof *usable), *order = malloc((n ? n : 1) * sizeof *order);
    out->ranked = calloc(top + 1, sizeof *out->ranked);
    if (!items || !hx || !uy || !usable || !order || !out->ranked) {
        free(items), free(hx), free(uy), free(usable), free(order);
        cf_advice_free(out);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    size_t n_items = 0, n_usable = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(r->est_step_s[i]) || r->failed[i])
            continue;
        double h, u;
        cf_search_job(o, &o->candidates[i], r->est_step_s[i], &h, &u);
        hx[n_usable] = h;
        uy[n_usable] = u;
        usable[n_usable++] = i;
        /* The margin on the upper end, as the search applied it (its
         * noise floor shrinks with repeats; the single-measurement floor
         * here is the conservative reading). */
        double sd = r->est_sd[i] > o->noise_sd ? r->est_sd[i] : o->noise_sd, hs, us;
        cf_search_job(o, &o->candidates[i], r->est_step_s[i] * exp(o->safety_sds * sd), &hs, &us);
        if (cf_search_feasible(o, hs, us, 0) && (long)i != r->chosen)
            items[n_items++] = (ranked_item){i, cf_search_objective(o, h, u)};
    }
    out->n_feasible = n_items + (r->chosen >= 0);
    qsort(items, n_items, sizeof *items, by_value);
    if (r->chosen >= 0)
        cf_search_config(o, r, noise, (size_t)r->chosen, &out->ranked[out->n_ranked++]);
    for (size_t k = 0; k < n_items && out->n_ranked < top; k++)
        cf_search_config(o, r, noise, items[k].index, &out->ranked[out->n_ranked++]);
    size_t n_front = cf_pareto_front_printed(hx, uy, n_usable, order);
    out->pareto = calloc(n_front ? n_front : 1, sizeof *out->pareto);
    for (size_t k = 0; out->pareto && k < n_front; k++)
        cf_search_config(o, r, noise, usable[order[k]], &out->pareto[out->n_pareto++]);
    out->n_evaluated = n;
    out->n_candidates = n;
    free(items), free(hx), free(uy), free(usable), free(order);
    return cf_search_explain(o, r, noise, out);
}

cf_status cf_search_explain(const cf_search_options *o, const cf_search_result *r, const cf_noise_model *noise,
                            cf_advice *advice)
{
    cf_advisor_input in = {.job = o->job, .constraints = o->constraints, .perf = r->fitted, .n_perf = r->n_fitted,
                           .noise = noise};
    return cf_advice_explain(&in, advice);
}

/* The candidate that is the spec's training.current: same GPU, GPUs per
 * node and nodes, the per-GPU batch nearest the recipe's split. */
long cf_search_find_current(const cf_job *job, const cf_search_options *so, const cf_search_result *r, char *note,
                            size_t n)
{
    note[0] = '\0';
    if (!job->has_current)
        return -1;
    int k = job->current_nodes * job->current_gpus_per_node;
    double want = k > 0 ? (double)job->batch / k : 0;
    long best = -1;
    for (size_t i = 0; i < so->n_candidates; i++) {
        const cf_search_candidate *c = &so->candidates[i];
        if (strcasecmp(c->gpu, job->current_gpu) || c->nodes != job->current_nodes ||
            c->gpus_per_node != job->current_gpus_per_node || !isfinite(r->est_step_s[i]))
            continue;
        if (best < 0 || fabs(c->local_batch - want) < fabs(so->candidates[best].local_batch - want))
            best = (long)i;
    }
    if (best < 0)
        snprintf(note, n, "not available: %d × %d %s is not among the candidates", job->current_nodes,
                 job->current_gpus_per_node, job->current_gpu);
    else
        snprintf(note, n, "%d × %d %s, m=%d", job->current_nodes, job->current_gpus_per_node, job->current_gpu,
                 so->candidates[best].local_batch);
    return best;
}

cf_status cf_search_summarise(const cf_job *job, const cf_search_options *o, const cf_search_result *r,
                              cf_search_summary *out)
{
    memset(out, 0, sizeof *out);
    if (r->chosen >= 0) {
        cf_config cfg;
        cf_search_config(o, r, o->noise, (size_t)r->chosen, &cfg);
        out->chosen_hours_p10 = cfg.hours_p10;
        out->chosen_hours_p90 = cfg.hours_p90;
        out->chosen_usd_p10 = cfg.total_usd_p10;
        out->chosen_usd_p90 = cfg.total_usd_p90;
    }
    out->current = cf_search_find_current(job, o, r, out->current_note, sizeof out->current_note);
    if (out->current >= 0)
        cf_search_job(o, &o->candidates[out->current], r->est_step_s[out->current], &out->current_hours,
                      &out->current_usd);
    double *errors = malloc((r->n_runs ? r->n_runs : 1) * sizeof *errors);
    if (!errors)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < r->n_runs; i++) {
        const cf_search_step *st = &r->runs[i];
        if (isfinite(st->predicted_step_s) && isfinite(st->measured_step_s))
            errors[n++] = st->predicted_step_s / st->measured_step_s - 1;
    }
    out->prediction = cf_ape_summarise(errors, n);
    free(errors);
    return CF_OK;
}
