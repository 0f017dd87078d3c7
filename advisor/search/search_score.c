/* The search's arithmetic of time, cost and objective, and its score
 * against known step times (regret, misses, overhead; docs/search.md). */
#include <math.h>
#include <string.h>

#include "search_internal.h"
#include "../advisor_internal.h"
#include "../model/perf_internal.h"
#include "../model/stateff_internal.h"

void cf_search_options_init(cf_search_options *o)
{
    memset(o, 0, sizeof *o);
    o->method = CF_SEARCH_CLOUDFIT;
    o->margin = 0.03;
    o->max_probes = 12;
    o->probe_steps = CF_SEARCH_DEFAULT_PROBE_STEPS;
    o->profile_steps = CF_SEARCH_DEFAULT_PROFILE_STEPS;
    o->noise_sd = 0.02;
    o->safety_sds = 1.2815515655446004; /* the 0.9 quantile: constraints held at 90 % confidence */
    o->probe_startup_s = 0;
    o->seed = 1;
}

void cf_search_options_for(cf_search_options *o, const cf_job *job, const cf_constraints *limits,
                           const cf_noise_model *noise)
{
    cf_search_options_init(o);
    o->job = job;
    o->constraints = limits;
    o->noise = noise;
    /* the deadline and budget hold at the stated confidence: that quantile
     * of the estimate's uncertainty */
    o->safety_sds = cf_normal_quantile(limits->confidence > 0 ? limits->confidence : 0.9);
}

void cf_search_job(const cf_search_options *o, const cf_search_candidate *c, double step_s, double *out_hours,
                   double *out_usd)
{
    double m = (double)c->nodes * c->gpus_per_node * c->local_batch;
    double steps = cf_samples_to_target(o->noise, o->job->total_samples, m) / m;
    double hours = o->constraints->startup_minutes / 60.0 + steps * step_s / 3600.0;
    *out_hours = hours;
    *out_usd = hours * c->nodes * c->usd_per_node_hr;
}

double cf_search_objective(const cf_search_options *o, double hours, double usd)
{
    switch (o->constraints->objective) {
    case CF_OBJ_TIME: return hours;
    case CF_OBJ_BALANCED: return hours * usd; /* ranks as (h/h_min)·(usd/usd_min) does */
    case CF_OBJ_COST: break;
    }
    return usd;
}

int cf_search_feasible(const cf_search_options *o, double hours, double usd, double slack)
{
    return cf_constraints_met(o->constraints, hours, usd, slack);
}

/* Cost of the runs beyond what `pick_train_usd` (the pick's training cost
 * without start-up) spends for the same progress; a run cheaper per unit of
 * progress than the pick is not counted as a gain. */
static double overhead(const cf_search_result *r, double pick_train_usd)
{
    double sum = 0;
    for (size_t i = 0; i < r->n_runs; i++) {
        double extra = r->runs[i].cost_usd - r->runs[i].progress * pick_train_usd;
        if (extra > 0)
            sum += extra;
    }
    return sum;
}

double cf_search_overhead_usd(const cf_search_options *o, const cf_search_result *r, size_t pick, double step_s)
{
    const cf_search_candidate *c = &o->candidates[pick];
    double hours, usd;
    cf_search_job(o, c, step_s, &hours, &usd);
    double train_usd = usd - o->constraints->startup_minutes / 60.0 * c->nodes * c->usd_per_node_hr;
    return overhead(r, train_usd);
}

cf_status cf_search_infeasible_error(const cf_search_options *o, const cf_search_result *r, const char *where)
{
    /* the closest candidates by the search's estimates, within the node,
     * GPU and batch limits, as recommend's message names its own: the
     * fastest and the cheapest at their points and at the confidence (the
     * search's safety margin), the cheapest that meets the deadline there */
    enum { FASTEST, FASTEST_Q, CHEAPEST, CHEAPEST_Q, CHEAPEST_IN_DEADLINE, N_CLOSEST };
    cf_config best[N_CLOSEST];
    int have[N_CLOSEST] = {0};
    const cf_constraints *k = o->constraints;
    for (size_t i = 0; r->est_step_s && i < o->n_candidates; i++) {
        const cf_search_candidate *c = &o->candidates[i];
        if (!isfinite(r->est_step_s[i]) || !c->vm || c->nodes > k->max_nodes || c->nodes * c->gpus_per_node > k->max_gpus ||
            (long)c->nodes * c->gpus_per_node * c->local_batch > k->max_global_batch)
            continue;
        cf_config cfg;
        cf_search_config(o, r, o->noise, i, &cfg);
        double key[N_CLOSEST] = {cfg.hours, cfg.hours_at_confidence, cfg.total_usd, cfg.usd_at_confidence,
                                 k->deadline_hours > 0 && cfg.hours_at_confidence <= k->deadline_hours
                                     ? cfg.usd_at_confidence : INFINITY};
        const double was[N_CLOSEST] = {best[FASTEST].hours, best[FASTEST_Q].hours_at_confidence,
                                       best[CHEAPEST].total_usd, best[CHEAPEST_Q].usd_at_confidence,
                                       best[CHEAPEST_IN_DEADLINE].usd_at_confidence};
        for (int q = 0; q < N_CLOSEST; q++)
            if (isfinite(key[q]) && (!have[q] || key[q] < was[q])) {
                best[q] = cfg;
                have[q] = 1;
            }
    }
    return cf_infeasible_error(k, where, have[FASTEST] ? &best[FASTEST] : NULL, have[FASTEST_Q] ? &best[FASTEST_Q] : NULL,
                               have[CHEAPEST] ? &best[CHEAPEST] : NULL, have[CHEAPEST_Q] ? &best[CHEAPEST_Q] : NULL,
                               have[CHEAPEST_IN_DEADLINE] ? &best[CHEAPEST_IN_DEADLINE] : NULL,
                               " by the search's estimates");
}

cf_status cf_search_score_against(const cf_search_options *o, const double *true_step_s,
                                  const cf_search_result *r, cf_search_score *out)
{
    memset(out, 0, sizeof *out);
    out->oracle = -1;
    out->fastest_hours = INFINITY;
    out->cheapest_usd = INFINITY;
    double best = INFINITY;
    for (size_t i = 0; i < o->n_candidates; i++) {
        const cf_search_candidate *c = &o->candidates[i];
        if (!isfinite(true_step_s[i]) || c->nodes > o->constraints->max_nodes ||
            c->nodes * c->gpus_per_node > o->constraints->max_gpus ||
            (long)c->nodes * c->gpus_per_node * c->local_batch > o->constraints->max_global_batch)
            continue;
        double h, u;
        cf_search_job(o, c, true_step_s[i], &h, &u);
        if (h < out->fastest_hours)
            out->fastest_hours = h;
        if (u < out->cheapest_usd)
            out->cheapest_usd = u;
        if (!cf_search_feasible(o, h, u, 0))
            continue;
        double v = cf_search_objective(o, h, u);
        if (v < best) {
            best = v;
            out->oracle = (long)i;
            out->oracle_hours = h;
            out->oracle_usd = u;
        }
    }
    out->regret = NAN;
    out->over_deadline = out->over_budget = NAN;
    out->overhead_frac = NAN;
    out->profile_frac = NAN;
    if (r->chosen < 0 || !isfinite(true_step_s[r->chosen])) {
        out->miss = out->oracle >= 0; /* nothing picked although something was feasible */
        return CF_OK;
    }
    cf_search_job(o, &o->candidates[r->chosen], true_step_s[r->chosen], &out->chosen_hours, &out->chosen_usd);
    out->miss = !cf_search_feasible(o, out->chosen_hours, out->chosen_usd, CF_SEARCH_MISS_TOLERANCE);
    /* a pick over a limit by less than the tolerance is no miss, yet can
     * beat the oracle (which meets the limits exactly): regret below 0,
     * said with how far it is over (docs/search.md) */
    const cf_constraints *k = o->constraints;
    out->over_deadline = k->deadline_hours > 0 ? fmax(0, out->chosen_hours / k->deadline_hours - 1) : 0;
    out->over_budget = k->budget_usd > 0 ? fmax(0, out->chosen_usd / k->budget_usd - 1) : 0;
    if (out->oracle >= 0)
        out->regret = cf_search_objective(o, out->chosen_hours, out->chosen_usd) / best - 1;
    out->overhead_frac = cf_search_overhead_usd(o, r, (size_t)r->chosen, true_step_s[r->chosen]) / out->chosen_usd;
    out->profile_frac = r->profile_cost_usd / out->chosen_usd;
    return CF_OK;
}

const char *cf_search_method_name(cf_search_method m)
{
    switch (m) {
    case CF_SEARCH_MODEL_ONLY: return "model";
    case CF_SEARCH_PLAIN_BO: return "bo";
    case CF_SEARCH_CLOUDFIT: break;
    }
    return "cloudfit";
}

const char *cf_search_stop_name(cf_search_stop s)
{
    switch (s) {
    case CF_STOP_MAX_PROBES: return "max-probes";
    case CF_STOP_EXHAUSTED: return "no candidate left";
    case CF_STOP_NO_PROBES: return "model only";
    case CF_STOP_MARGIN: break;
    }
    return "margin";
}
