/* The measurement worth buying (include/cloudfit/advisor/next_measurement.h,
 * docs/model.md "The measurement worth buying"). */
#include "cloudfit/advisor/next_measurement.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cloudfit/advisor/search.h"
#include "cloudfit/common/buf.h"

/* A plan's ranking is in doubt when the other plan beats it with at least
 * this probability under the present uncertainty. */
#define FLIP_WORTH_MEASURING 0.10
/* A measurement bears on a comparison when the source it removes is at
 * least this share of the comparison's variance. */
#define SHARE_THAT_MATTERS 0.25

static const cf_gpu_perf *perf_of(const cf_advisor_input *in, const char *gpu)
{
    for (size_t i = 0; i < in->n_perf; i++)
        if (strcasecmp(in->perf[i].gpu, gpu) == 0)
            return &in->perf[i];
    return NULL;
}

/* The cheapest on-demand VM of `gpu` with `gpus` GPUs (0: the fewest). */
static const cf_vm *cheapest_vm(const cf_advisor_input *in, const char *gpu, int gpus)
{
    const cf_vm *best = NULL;
    for (size_t v = 0; v < in->n_vms; v++) {
        const cf_vm *vm = in->vms[v];
        if (strcasecmp(vm->gpu_model, gpu) != 0 || vm->price_ondemand_usd_per_hr <= 0 ||
            (gpus > 0 && vm->gpu_count != gpus))
            continue;
        if (!best || (gpus == 0 && vm->gpu_count < best->gpu_count) ||
            ((gpus > 0 || vm->gpu_count == best->gpu_count) &&
             vm->price_ondemand_usd_per_hr < best->price_ondemand_usd_per_hr))
            best = vm;
    }
    return best;
}

/* Seconds of `steps` steps at the light profile's batches of one shape
 * (cf_search_spread over the powers of two up to the memory ceiling). */
static double runs_s(const cf_perf_params *p, double bytes, int nodes, int g, int want, int steps)
{
    int ceiling = p->max_local_batch > 0 ? p->max_local_batch : 256, grid[32], n = 0;
    for (int m = 8; m <= ceiling && n < 32; m *= 2)
        grid[n++] = m;
    if (n == 0)
        grid[n++] = ceiling;
    size_t pos[3], k = cf_search_spread((size_t)n, want, pos);
    double s = 0;
    for (size_t i = 0; i < k; i++)
        s += steps * cf_perf_step_s(p, bytes, nodes, g, grid[pos[i]], 1);
    return s;
}

/* The chosen plan's cost quantile at two-sided level 0.8 with log sds
 * (lower, upper) on its training part. */
static double usd_at(const cf_config *c, double startup_h, double sigma, double z)
{
    double run_h = c->hours - startup_h;
    if (!(c->hours > 0) || run_h < 0)
        return c->total_usd;
    return c->total_usd * (startup_h + run_h * exp(z * sigma)) / c->hours;
}

static double minus(double total, double part) { return sqrt(fmax(0.0, total * total - part * part)); }

/* log of the plan's objective value and the log sd it carries. */
static double objective_log(const cf_config *c, cf_objective obj)
{
    switch (obj) {
    case CF_OBJ_TIME: return log(c->hours);
    case CF_OBJ_BALANCED: return log(c->hours) + log(c->total_usd);
    case CF_OBJ_COST: break;
    }
    return log(c->total_usd);
}

/* Variance of ln(objective_other / objective_chosen): the compute parts of
 * one GPU type are the same error in both (they cancel), the rest are
 * independent; `removed` says which part a measurement takes away. */
static double comparison_var(const cf_config *chosen, const cf_config *other, cf_objective obj,
                             const cf_measure_kind removed, const char *removed_gpu, const cf_config *removed_plan)
{
    double k = obj == CF_OBJ_BALANCED ? 2.0 : 1.0;
    const cf_config *pl[2] = {chosen, other};
    double cmp[2], net[2], rest[2];
    for (int i = 0; i < 2; i++) {
        /* `other` is the better one if it wins: its lower side, the chosen plan's upper side */
        double total = i == 0 ? chosen->step_sigma_up : other->step_sigma;
        double network = i == 0 ? pl[i]->step_sigma_network_up : pl[i]->step_sigma_network;
        cmp[i] = pl[i]->step_sigma_compute;
        net[i] = network;
        rest[i] = minus(minus(total, cmp[i]), net[i]);
        if (removed == CF_MEASURE_PROFILE && strcasecmp(pl[i]->vm->gpu_model, removed_gpu) == 0)
            cmp[i] = 0;
        if (removed == CF_MEASURE_NETWORK && pl[i] == removed_plan)
            net[i] = 0;
    }
    int same_gpu = strcasecmp(chosen->vm->gpu_model, other->vm->gpu_model) == 0;
    double compute = same_gpu ? (cmp[0] - cmp[1]) * (cmp[0] - cmp[1]) : cmp[0] * cmp[0] + cmp[1] * cmp[1];
    return k * k * (compute + net[0] * net[0] + net[1] * net[1] + rest[0] * rest[0] + rest[1] * rest[1]);
}

static double normal_cdf(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }

typedef struct {
    cf_next_measurement m;
    double gain;               /* flip probability × relative difference, or the held-back saving */
    double narrowing;          /* chosen plan: σ_up before − after */
} option;

static int option_better(const option *a, const option *b)
{
    if (a->m.could_change_choice != b->m.could_change_choice)
        return a->m.could_change_choice > b->m.could_change_choice;
    if (fabs(a->gain - b->gain) > 1e-12)
        return a->gain > b->gain;
    if (fabs(a->narrowing - b->narrowing) > 1e-12)
        return a->narrowing > b->narrowing;
    return a->m.est_usd < b->m.est_usd;
}

/* Fills where, how long and how much for measurement kind `kind` of `plan`;
 * 0 when no VM can run it. */
static int price_it(const cf_advisor_input *in, const cf_config *plan, cf_measure_kind kind, cf_next_measurement *m)
{
    const cf_gpu_perf *perf = perf_of(in, plan->vm->gpu_model);
    if (!perf)
        return 0;
    double bytes = in->job->parameters * in->job->gradient_bytes, startup_s = in->constraints->startup_minutes * 60;
    const cf_vm *vm;
    double run_s;
    int nodes;
    if (kind == CF_MEASURE_PROFILE) {
        /* the light profile on one VM: one GPU at three batches, the full VM at two */
        vm = cheapest_vm(in, plan->vm->gpu_model, 0);
        if (!vm)
            return 0;
        cf_perf_params p = cf_gpu_perf_on_vm(perf, vm->network_gbps);
        nodes = 1;
        run_s = runs_s(&p, bytes, 1, 1, CF_SEARCH_PROFILE_BATCHES_ONE, CF_SEARCH_DEFAULT_PROBE_STEPS);
        if (vm->gpu_count > 1)
            run_s += runs_s(&p, bytes, 1, vm->gpu_count, CF_SEARCH_PROFILE_BATCHES_FULL, CF_SEARCH_DEFAULT_PROBE_STEPS);
        m->gpus_per_node = vm->gpu_count;
    } else {
        /* the plan's own shape on its VM type: two batches */
        vm = cheapest_vm(in, plan->vm->gpu_model, plan->vm->gpu_count);
        if (!vm)
            vm = plan->vm;
        cf_perf_params p = cf_gpu_perf_on_vm(perf, vm->network_gbps);
        nodes = plan->nodes;
        run_s = runs_s(&p, bytes, nodes, plan->gpus_per_node, CF_SEARCH_PROBE_BATCHES, CF_SEARCH_DEFAULT_PROBE_STEPS);
        m->gpus_per_node = plan->gpus_per_node;
    }
    double price = vm->price_ondemand_usd_per_hr > 0 ? vm->price_ondemand_usd_per_hr : vm->price_spot_usd_per_hr;
    m->kind = kind;
    m->nodes = nodes;
    snprintf(m->gpu, sizeof m->gpu, "%s", plan->vm->gpu_model);
    snprintf(m->cloud, sizeof m->cloud, "%s", vm->cloud);
    snprintf(m->region, sizeof m->region, "%s", vm->region);
    snprintf(m->instance_type, sizeof m->instance_type, "%s", vm->instance_type);
    m->est_minutes = (startup_s + run_s) / 60.0;
    m->est_usd = nodes * price * m->est_minutes / 60.0;
    return 1;
}

/* The reason: what, where, what it costs, and why it is worth it. `measured`
 * is the plan whose uncertainty it removes; `other` the plan it concerns
 * besides the chosen one (NULL: only the chosen plan). */
static void describe(cf_next_measurement *m, const cf_config *chosen, const cf_config *measured,
                     const cf_config *other, const cf_constraints *limits)
{
    cf_buf out = CF_BUF_INIT, why = CF_BUF_INIT;
    if (m->kind == CF_MEASURE_PROFILE) {
        cf_buf_printf(&out, "profile %s (1 VM %s, ~%.0f min, ~$%.2f): ", m->gpu, m->instance_type, m->est_minutes,
                      m->est_usd);
        cf_buf_printf(&why, "%s's throughput is %s", m->gpu,
                      measured->prov_throughput == CF_PROV_ESTIMATED ? "an estimate carried over from another GPU type"
                                                                     : "not measured");
    } else {
        cf_buf_printf(&out, "run %d × %s for %d GPUs each (~%.0f min, ~$%.2f): ", m->nodes, m->instance_type,
                      m->gpus_per_node, m->est_minutes, m->est_usd);
        cf_buf_printf(&why, "the all-reduce of %d VMs × %d GPUs is beyond what its network was measured at",
                      m->nodes, m->gpus_per_node);
    }
    const char *better = limits->objective == CF_OBJ_COST ? "cheaper" : limits->objective == CF_OBJ_TIME ? "faster"
                                                                                                         : "better";
    if (m->about == CF_MEASURE_FOR_HELD_BACK)
        cf_buf_printf(&out,
                      "the %s plan %d × %s ($%.2f, %.1f h) fails the limits at %.0f%% confidence only because "
                      "%s%s",
                      better, other->nodes, other->vm->instance_type, other->total_usd, other->hours,
                      100 * limits->confidence, why.data,
                      m->could_change_choice ? ": measured, it would pass if its prediction holds" : "");
    else if (m->about == CF_MEASURE_FOR_RUNNER_UP)
        cf_buf_printf(&out,
                      "%s; the choice between %d × %s ($%.2f) and %d × %s ($%.2f) %s (%.0f%% that the runner-up "
                      "is better)",
                      why.data, chosen->nodes, chosen->vm->instance_type, chosen->total_usd, other->nodes,
                      other->vm->instance_type, other->total_usd,
                      m->could_change_choice ? "depends on it" : "hardly does", 100 * m->flip_probability);
    else
        cf_buf_printf(&out, "%s; the plan's cost range $%.2f–%.2f would narrow to about $%.2f–%.2f", why.data,
                      m->usd_p10, m->usd_p90, m->usd_p10_after, m->usd_p90_after);
    size_t n = out.data ? strlen(out.data) : 0;
    if (n >= sizeof m->reason) {
        n = sizeof m->reason - 1;
        while (n > 0 && ((unsigned char)out.data[n] & 0xC0) == 0x80)
            n--; /* not inside a UTF-8 sequence */
    }
    if (n)
        memcpy(m->reason, out.data, n);
    m->reason[n] = '\0';
    cf_buf_free(&out);
    cf_buf_free(&why);
}

void cf_next_measurement_choose(const cf_advisor_input *in, const cf_advice *advice, cf_next_measurement *out)
{
    memset(out, 0, sizeof *out);
    if (advice->n_ranked == 0)
        return;
    const cf_constraints *limits = in->constraints;
    const cf_config *chosen = &advice->ranked[0], *runner_up = NULL;
    for (size_t i = 1; i < advice->n_ranked && !runner_up; i++) {
        const cf_config *c = &advice->ranked[i];
        if (c->nodes != chosen->nodes || strcasecmp(c->vm->gpu_model, chosen->vm->gpu_model) != 0)
            runner_up = c;
    }
    const cf_config *held = advice->have_held_back ? &advice->held_back : NULL;
    const cf_config *plans[3] = {chosen, runner_up, held};
    double z80 = cf_normal_two_sided_z(CF_INTERVAL_LEVEL), startup_h = limits->startup_minutes / 60.0;
    double zq = cf_normal_quantile(limits->confidence > 0 ? limits->confidence : CF_DEFAULT_CONFIDENCE);
    option best;
    memset(&best, 0, sizeof best);
    int have = 0;
    for (int r = 0; r < 3; r++) {
        const cf_config *plan = plans[r];
        if (!plan || plan->spot)
            continue;
        for (int kind = CF_MEASURE_PROFILE; kind <= CF_MEASURE_NETWORK; kind++) {
            double part = kind == CF_MEASURE_PROFILE ? plan->step_sigma_compute : plan->step_sigma_network_up;
            if (!(part > 1e-9))
                continue;
            option o;
            memset(&o, 0, sizeof o);
            cf_next_measurement *m = &o.m;
            if (!price_it(in, plan, (cf_measure_kind)kind, m))
                continue;
            /* what it does to the chosen plan's cost interval */
            double lo = chosen->step_sigma, up = chosen->step_sigma_up, lo_after = lo, up_after = up;
            int touches_chosen = kind == CF_MEASURE_PROFILE
                                     ? strcasecmp(chosen->vm->gpu_model, plan->vm->gpu_model) == 0
                                     : plan == chosen;
            if (touches_chosen) {
                lo_after = minus(lo, kind == CF_MEASURE_PROFILE ? chosen->step_sigma_compute
                                                                : chosen->step_sigma_network);
                up_after = minus(up, kind == CF_MEASURE_PROFILE ? chosen->step_sigma_compute
                                                                : chosen->step_sigma_network_up);
            }
            m->usd_p10 = usd_at(chosen, startup_h, lo, -z80);
            m->usd_p90 = usd_at(chosen, startup_h, up, z80);
            m->usd_p10_after = usd_at(chosen, startup_h, lo_after, -z80);
            m->usd_p90_after = usd_at(chosen, startup_h, up_after, z80);
            o.narrowing = up - up_after;
            const cf_config *other = NULL;
            if (plan == held) {
                /* would the held-back plan pass at the confidence, its point holding? */
                double run_h = plan->hours - startup_h;
                double hours_q = startup_h + run_h * exp(zq * minus(plan->step_sigma_up, part));
                double usd_q = plan->total_usd * hours_q / plan->hours;
                double d = objective_log(chosen, limits->objective) - objective_log(plan, limits->objective);
                m->about = CF_MEASURE_FOR_HELD_BACK;
                m->could_change_choice = cf_constraints_met(limits, hours_q, usd_q, 0);
                m->flip_probability = normal_cdf(d / sqrt(fmax(1e-12, comparison_var(chosen, plan, limits->objective,
                                                                                     CF_MEASURE_NONE, "", NULL))));
                o.gain = m->could_change_choice ? d : 0;
                other = plan;
            } else if (runner_up) {
                double d = objective_log(runner_up, limits->objective) - objective_log(chosen, limits->objective);
                double var = comparison_var(chosen, runner_up, limits->objective, CF_MEASURE_NONE, "", NULL);
                double var_after = comparison_var(chosen, runner_up, limits->objective, (cf_measure_kind)kind,
                                                  plan->vm->gpu_model, plan);
                int bears = var > 0 && (var - var_after) / var >= SHARE_THAT_MATTERS;
                m->flip_probability = normal_cdf(-d / sqrt(fmax(var, 1e-12)));
                m->could_change_choice = bears && m->flip_probability >= FLIP_WORTH_MEASURING;
                /* a choice that cannot flip: what the measurement does is narrow the chosen plan */
                m->about = m->could_change_choice || !touches_chosen ? CF_MEASURE_FOR_RUNNER_UP : CF_MEASURE_FOR_CHOSEN;
                o.gain = m->could_change_choice ? m->flip_probability * d : 0;
                if (m->about == CF_MEASURE_FOR_RUNNER_UP)
                    other = runner_up;
            } else {
                m->about = CF_MEASURE_FOR_CHOSEN;
            }
            m->plan_usd = plan->total_usd;
            m->plan_hours = plan->hours;
            m->plan_nodes = plan->nodes;
            snprintf(m->plan_instance_type, sizeof m->plan_instance_type, "%s", plan->vm->instance_type);
            describe(m, chosen, plan, other, limits);
            if (!have || option_better(&o, &best)) {
                best = o;
                have = 1;
            }
        }
    }
    if (have)
        *out = best.m;
}
