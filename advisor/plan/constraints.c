/* The one feasibility test of the advisor and the one message that says
 * why nothing met the constraints (recommend and search share both). */
#include <stdio.h>
#include <stdlib.h>

#include "cloudfit/advisor.h"
#include "../advisor_internal.h"

int cf_constraints_met(const cf_constraints *c, double hours, double usd, double slack)
{
    if (c->deadline_hours > 0 && hours > c->deadline_hours * (1 + slack))
        return 0;
    if (c->budget_usd > 0 && usd > c->budget_usd * (1 + slack))
        return 0;
    return 1;
}

/* v with `decimals` decimals (-1: dollars, with cents below $100) or,
 * from a million on, 1.23e+06: never hundreds of digits; more where fewer
 * would put v on the other side of `limit` (the deadline or budget it is
 * set against) than it is. Whole dollars read $0.65 against a $0.60
 * budget as "$1", and $0.65 and $0.69 at the confidence against $0.68 as
 * "$1, $1 at the confidence". */
static void fmt_amount(char *out, size_t n, double v, int decimals, double limit)
{
    if (decimals < 0) /* dollars: cents below $100 */
        decimals = v < 100 ? 2 : 0;
    for (int extra = 0; extra <= 8; extra++) {
        if (v < 1e6)
            snprintf(out, n, "%.*f", decimals + extra, v);
        else
            snprintf(out, n, "%.*g", 3 + extra, v);
        if (!(limit > 0) || (strtod(out, NULL) > limit) == (v > limit))
            return;
    }
}

/* "2 × p3.8xlarge (4×V100) on aws (spot)": the plan a message names. */
static void plan_name(const cf_config *cfg, char *out, size_t n)
{
    snprintf(out, n, "%d × %s (%d×%s) on %s%s", cfg->nodes, cfg->vm->instance_type, cfg->gpus_per_node,
             cfg->vm->gpu_model, cfg->vm->cloud, cfg->spot ? " (spot)" : "");
}

/* "PLAN, costs $X, $Y at the confidence", each figure on the side of the budget it is on. */
static void cost_at_confidence(const cf_config *cfg, double budget_usd, char *out, size_t n)
{
    char amount[32], at[32], plan[320];
    fmt_amount(amount, sizeof amount, cfg->total_usd, -1, budget_usd);
    fmt_amount(at, sizeof at, cfg->usd_at_confidence, -1, budget_usd);
    plan_name(cfg, plan, sizeof plan);
    snprintf(out, n, "%s, costs $%s, $%s at the confidence", plan, amount, at);
}

cf_status cf_infeasible_error(const cf_constraints *c, const char *where, const cf_config *fastest,
                              const cf_config *fastest_at_confidence, const cf_config *cheapest,
                              const cf_config *cheapest_at_confidence, const cf_config *cheapest_in_deadline,
                              const char *qualifier)
{
    const char *q = qualifier ? qualifier : "";
    char amount[32], at[32], plan[320], cost[448];
    /* within the deadline at its point, over it at the confidence: every
     * configuration, as this one has the fewest hours there (the fastest
     * at its point may not: another whose hours are surer can meet the
     * deadline at the confidence and miss only the budget) */
    const cf_config *fq = fastest_at_confidence ? fastest_at_confidence : fastest;
    if (fastest && fastest->hours <= c->deadline_hours && fq && c->deadline_hours > 0 &&
        fq->hours_at_confidence > c->deadline_hours) {
        fmt_amount(amount, sizeof amount, fq->hours, 1, c->deadline_hours);
        fmt_amount(at, sizeof at, fq->hours_at_confidence, 1, c->deadline_hours);
        plan_name(fq, plan, sizeof plan);
        cf_error_set(CF_ERR_INFEASIBLE,
                     "%s: no configuration finishes within %g h%s at the confidence: the fastest there, %s, takes %s h, "
                     "%s h at the confidence",
                     where, c->deadline_hours, q, plan, amount, at);
    } else if (fastest && c->deadline_hours > 0 && fastest->hours > c->deadline_hours) {
        fmt_amount(amount, sizeof amount, fastest->hours, 1, c->deadline_hours);
        cf_error_set(CF_ERR_INFEASIBLE,
                     "%s: no configuration finishes within %g h%s: the fastest, %d × %s (%d×%s) on %s, takes %s h",
                     where, c->deadline_hours, q, fastest->nodes, fastest->vm->instance_type, fastest->gpus_per_node,
                     fastest->vm->gpu_model, fastest->vm->cloud, amount);
    } else if (cheapest && c->budget_usd > 0 && cheapest->total_usd > c->budget_usd) {
        fmt_amount(amount, sizeof amount, cheapest->total_usd, -1, c->budget_usd);
        cf_error_set(CF_ERR_INFEASIBLE, "%s: no configuration stays within $%g%s: the cheapest, %d × %s on %s, costs $%s",
                     where, c->budget_usd, q, cheapest->nodes, cheapest->vm->instance_type, cheapest->vm->cloud,
                     amount);
    } else if (cheapest_at_confidence && c->budget_usd > 0 &&
               cheapest_at_confidence->usd_at_confidence > c->budget_usd) {
        /* within the budget at its point, over it at the confidence: every
         * configuration, as this one has the lowest cost there */
        cost_at_confidence(cheapest_at_confidence, c->budget_usd, cost, sizeof cost);
        cf_error_set(CF_ERR_INFEASIBLE, "%s: no configuration stays within $%g%s at the confidence: the cheapest there, %s",
                     where, c->budget_usd, q, cost);
    } else if (cheapest_in_deadline && c->deadline_hours > 0 && c->budget_usd > 0 &&
               cheapest_in_deadline->usd_at_confidence > c->budget_usd) {
        /* each limit alone can be met, not both: how far the cheapest
         * plan within the deadline is over the budget */
        cost_at_confidence(cheapest_in_deadline, c->budget_usd, cost, sizeof cost);
        cf_error_set(CF_ERR_INFEASIBLE,
                     "%s: no configuration meets the deadline (%g h) and the budget ($%g)%s together: the cheapest "
                     "within the deadline at the confidence, %s",
                     where, c->deadline_hours, c->budget_usd, q, cost);
    } else if (c->deadline_hours > 0 && c->budget_usd > 0) {
        cf_error_set(CF_ERR_INFEASIBLE, "%s: no configuration meets the deadline (%g h) and the budget ($%g)%s", where,
                     c->deadline_hours, c->budget_usd, q);
    } else if (c->deadline_hours > 0) {
        cf_error_set(CF_ERR_INFEASIBLE, "%s: no configuration meets the deadline (%g h)%s", where, c->deadline_hours, q);
    } else if (c->budget_usd > 0) {
        cf_error_set(CF_ERR_INFEASIBLE, "%s: no configuration meets the budget ($%g)%s", where, c->budget_usd, q);
    } else { /* no deadline and no budget: nothing could run it at all */
        cf_error_set(CF_ERR_INFEASIBLE, "%s: no configuration can run the job%s: none of the offers that pass the "
                     "filters gives a finite time and cost (does the model fit in any GPU's memory?)", where, q);
        cf_error_hint("the weights, gradients and optimizer state (model.parameters, training.optimizer) and "
                      "the activations (model.memory_per_sample_mib, profile.gpus.*.max_local_batch) must fit one "
                      "GPU (docs/model.md \"Memory ceiling\"); or allow more GPUs, clouds or regions");
        return CF_ERR_INFEASIBLE;
    }
    if (c->spot == CF_SPOT_ONLY)
        cf_error_hint("spot only offers no plan that falls back to on-demand VMs near the deadline: allow them with "
                      "--spot allow (a mixed plan), or raise the deadline or the budget (--deadline-hours, "
                      "--budget-usd; search.deadline_hours, search.budget_usd in the spec)");
    else
        cf_error_hint("raise the deadline or the budget (--deadline-hours, --budget-usd; search.deadline_hours, "
                      "search.budget_usd in the spec), or allow more nodes, GPUs, clouds or spot VMs");
    return CF_ERR_INFEASIBLE;
}
