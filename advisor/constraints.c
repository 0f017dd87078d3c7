/* The one feasibility test of the advisor and the one message that says
 * why nothing met the constraints (recommend and search share both). */
#include <stdio.h>

#include "cloudfit/advisor.h"

int cf_constraints_met(const cf_constraints *c, double hours, double usd, double slack)
{
    if (c->deadline_hours > 0 && hours > c->deadline_hours * (1 + slack))
        return 0;
    if (c->budget_usd > 0 && usd > c->budget_usd * (1 + slack))
        return 0;
    return 1;
}

cf_status cf_infeasible_error(const cf_constraints *c, const char *where, const cf_config *fastest,
                              const cf_config *cheapest, const char *qualifier)
{
    const char *q = qualifier ? qualifier : "";
    if (fastest && c->deadline_hours > 0 && fastest->hours_at_confidence > c->deadline_hours &&
        fastest->hours <= c->deadline_hours)
        cf_error_set(CF_ERR_INFEASIBLE,
                     "%s: no configuration finishes within %g h%s at the confidence: the fastest, %d × %s (%d×%s) on "
                     "%s%s, takes %.1f h, %.1f h at the confidence",
                     where, c->deadline_hours, q, fastest->nodes, fastest->vm->instance_type, fastest->gpus_per_node,
                     fastest->vm->gpu_model, fastest->vm->cloud, fastest->spot ? " (spot)" : "", fastest->hours,
                     fastest->hours_at_confidence);
    else if (fastest && c->deadline_hours > 0 && fastest->hours > c->deadline_hours)
        cf_error_set(CF_ERR_INFEASIBLE,
                     "%s: no configuration finishes within %g h%s: the fastest, %d × %s (%d×%s) on %s, takes %.1f h",
                     where, c->deadline_hours, q, fastest->nodes, fastest->vm->instance_type, fastest->gpus_per_node,
                     fastest->vm->gpu_model, fastest->vm->cloud, fastest->hours);
    else if (cheapest && c->budget_usd > 0 && cheapest->total_usd > c->budget_usd)
        cf_error_set(CF_ERR_INFEASIBLE, "%s: no configuration stays within $%g%s: the cheapest, %d × %s on %s, costs $%.0f",
                     where, c->budget_usd, q, cheapest->nodes, cheapest->vm->instance_type, cheapest->vm->cloud,
                     cheapest->total_usd);
    else if (c->deadline_hours > 0 && c->budget_usd > 0)
        cf_error_set(CF_ERR_INFEASIBLE, "%s: no configuration meets the deadline (%g h) and the budget ($%g)%s", where,
                     c->deadline_hours, c->budget_usd, q);
    else if (c->deadline_hours > 0)
        cf_error_set(CF_ERR_INFEASIBLE, "%s: no configuration meets the deadline (%g h)%s", where, c->deadline_hours, q);
    else
        cf_error_set(CF_ERR_INFEASIBLE, "%s: no configuration meets the budget ($%g)%s", where, c->budget_usd, q);
    if (c->spot == CF_SPOT_ONLY)
        cf_error_hint("spot only offers no plan that falls back to on-demand VMs near the deadline: allow them with "
                      "--spot allow (a mixed plan), or raise search.deadline_hours or search.budget_usd");
    else
        cf_error_hint("raise search.deadline_hours or search.budget_usd, or allow more nodes, GPUs, clouds or spot VMs");
    return CF_ERR_INFEASIBLE;
}
