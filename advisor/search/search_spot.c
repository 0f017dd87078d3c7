/* The search's candidates as spot plans (cf_search_spot, docs/spot.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/advisor/search.h"
#include "cloudfit/advisor/spot_plan.h"
#include "search_internal.h"
#include "../advisor_internal.h"
#include "../spot/spot_model_internal.h"
#include "../spot/spot_plan_internal.h"
#include "../spot/spot_replay_internal.h"
#include "../spot/spot_table_internal.h"

#define SEARCH_SPOT_SIMULATE_MAX 8

typedef struct {
    size_t index;
    double score;
} scored;

static int by_score(const void *a, const void *b)
{
    const scored *x = a, *y = b;
    if (x->score != y->score)
        return x->score < y->score ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

static cf_status spot_plans(const cf_search_options *o, const cf_search_result *r, const cf_noise_model *noise,
                            cf_spot_policy policy, cf_advice *advice)
{
    if (policy == CF_SPOT_NEVER)
        return CF_OK;
    const cf_constraints *k = o->constraints;
    double startup_h = k->startup_minutes / 60.0, c_h, r_h;
    cf_checkpoint_costs(cf_checkpoint_bytes(o->job->parameters, o->job->optimizer), k->storage_mb_per_s,
                        k->checkpoint_minutes, k->startup_minutes, &c_h, &r_h);
    scored *list = malloc((o->n_candidates ? o->n_candidates : 1) * sizeof *list);
    if (!list)
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < o->n_candidates; i++) {
        const cf_search_candidate *c = &o->candidates[i];
        if (!c->vm || c->vm->price_spot_usd_per_hr <= 0 || r->failed[i] || !isfinite(r->est_step_s[i]))
            continue;
        double hours, usd;
        cf_search_job(o, c, r->est_step_s[i], &hours, &usd);
        cf_spot_lookup l;
        cf_spot_model_lookup(c->vm->cloud, c->vm->gpu_model, c->vm->gpu_count, c->vm->region, c->nodes, &l);
        cf_spot_screen sc;
        cf_spot_screen_of(&l.row->process, c->nodes, &sc);
        double h = cf_spot_screen_hours(&sc, hours - startup_h, c_h, r_h, NULL);
        double u = h * c->nodes * c->vm->price_spot_usd_per_hr;
        if (isfinite(h))
            list[n++] = (scored){i, cf_search_objective(o, h, u)};
    }
    qsort(list, n, sizeof *list, by_score);
    cf_spot_mc_settings settings = {CF_SPOT_RECOMMEND_PATH_HOURS, CF_SPOT_RECOMMEND_STARTS, CF_SPOT_SEED};
    cf_spot_mc *mc = NULL;
    cf_status st = cf_spot_mc_new(&settings, &mc);
    int have = 0;
    cf_config best;
    double best_score = INFINITY;
    for (size_t j = 0; j < n && j < SEARCH_SPOT_SIMULATE_MAX && st == CF_OK; j++) {
        size_t i = list[j].index;
        const cf_search_candidate *c = &o->candidates[i];
        double hours, usd;
        cf_search_job(o, c, r->est_step_s[i], &hours, &usd);
        cf_spot_lookup l;
        cf_spot_model_lookup(c->vm->cloud, c->vm->gpu_model, c->vm->gpu_count, c->vm->region, c->nodes, &l);
        cf_config cfg;
        cf_search_config(o, r, noise, i, &cfg);
        cf_spot_request req = {.process = &l.row->process, .nodes = c->nodes, .work_h = hours - startup_h,
                               .work_sigma = cfg.step_sigma, .work_sigma_up = cfg.step_sigma_up,
                               .confidence = k->confidence,
                               .no_mixed = policy == CF_SPOT_ONLY, .checkpoint_h = c_h, .restart_h = r_h,
                               .spot_usd_per_node_h = c->vm->price_spot_usd_per_hr,
                               .ondemand_usd_per_node_h = c->vm->price_ondemand_usd_per_hr,
                               .deadline_h = k->deadline_hours, .mixed_policy = CF_MIXED_GREEDY,
                               .semantics = CF_SPOT_ELASTIC};
        cf_spot_estimate e;
        if ((st = cf_spot_mc_estimate(mc, &req, &e)) != CF_OK)
            break;
        e.source = l;
        int mixed = 0;
        const cf_spot_spread *plan = &e.spot;
        if (k->deadline_hours > 0 && !e.meets_deadline) {
            if (!(e.has_mixed && e.mixed_meets && e.mixed.p50_usd < usd))
                continue;
            mixed = 1;
            plan = &e.mixed;
        }
        double h = plan->p50_h, u = plan->p50_usd;
        if (!isfinite(h) || !cf_constraints_met(k, plan->q_h, plan->q_usd, 0))
            continue;
        double score = cf_search_objective(o, h, u);
        if (score >= best_score)
            continue;
        best_score = score;
        best = cfg;
        best.spot = 1;
        best.mixed = mixed;
        best.spot_est = e;
        best.usd_per_hour = c->nodes * c->vm->price_spot_usd_per_hr;
        best.checkpoint_interval_hours = e.interval_h;
        cf_config_spot_quantiles(&best);
        best.spot_factor = best.hours / hours;
        have = 1;
    }
    cf_spot_mc_free(mc);
    free(list);
    if (st != CF_OK)
        return st;
    advice->n_spot_simulated = n < SEARCH_SPOT_SIMULATE_MAX ? n : SEARCH_SPOT_SIMULATE_MAX;
    if (advice->n_ranked > 0) {
        advice->best_ondemand = advice->ranked[0];
        advice->have_best_ondemand = 1;
    }
    if (!have)
        return CF_OK;
    advice->best_spot = best;
    advice->have_best_spot = 1;
    int spot_first = policy == CF_SPOT_ONLY || advice->n_ranked == 0 ||
                     best_score < cf_search_objective(o, advice->ranked[0].hours, advice->ranked[0].total_usd);
    if (spot_first) {
        cf_config *grown = realloc(advice->ranked, (advice->n_ranked + 1) * sizeof *grown);
        if (!grown)
            return cf_error_set(CF_ERR_NOMEM, "out of memory");
        advice->ranked = grown;
        memmove(&advice->ranked[1], &advice->ranked[0], advice->n_ranked * sizeof *grown);
        advice->ranked[0] = best;
        advice->n_ranked++;
        advice->n_feasible++;
    }
    return CF_OK;
}

cf_status cf_search_spot(const cf_search_options *o, const cf_search_result *r, const cf_noise_model *noise,
                         cf_spot_policy policy, cf_advice *advice)
{
    if (policy == CF_SPOT_NEVER)
        return CF_OK;
    cf_status st = spot_plans(o, r, noise, policy, advice);
    return st == CF_OK ? cf_search_explain(o, r, noise, advice) : st; /* the pick may have changed */
}
