/* The measurement worth buying (advisor/plan/next_measurement.h,
 * docs/model.md "The measurement worth buying"). */
#include "next_measurement.h"
#include "cloudfit/common/number.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cloudfit/advisor/search.h"
#include "cloudfit/common/buf.h"
#include "../advisor_internal.h"
#include "../model/perf_internal.h"
#include "../search/search_internal.h"

/* A measurement can change the choice when, with this probability or
 * more, its outcome makes another plan the better one. */
#define FLIP_WORTH_MEASURING 0.10

static const cf_gpu_perf *perf_of(const cf_advisor_input *in, const char *gpu)
{
    for (size_t i = 0; i < in->n_perf; i++)
        if (strcasecmp(in->perf[i].gpu, gpu) == 0)
            return &in->perf[i];
    return NULL;
}

/* The cheapest on-demand VM of `gpu` with `gpus` GPUs (0: the fewest);
 * with `like`, only one on its cloud and of its fabric (TCP, RDMA). */
static const cf_vm *cheapest_vm(const cf_advisor_input *in, const char *gpu, int gpus, const cf_vm *like)
{
    const cf_vm *best = NULL;
    for (size_t v = 0; v < in->n_vms; v++) {
        const cf_vm *vm = in->vms[v];
        if (strcasecmp(vm->gpu_model, gpu) != 0 || vm->price_ondemand_usd_per_hr <= 0 ||
            (gpus > 0 && vm->gpu_count != gpus))
            continue;
        if (like && (strcmp(vm->cloud, like->cloud) != 0 ||
                     cf_perf_nic_is_rdma(vm->network_gbps) != cf_perf_nic_is_rdma(like->network_gbps)))
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

static double plan_hours_at(const cf_config *c, double startup_h, double z_sigma)
{
    return startup_h + (c->hours - startup_h) * exp(z_sigma);
}

/* A plan's cost when it takes `hours`: its own cost scaled with its time.
 * For an on-demand plan that is hours × its cluster's price; a spot plan's
 * cost is its Monte Carlo's (no VM is billed while preempted or waiting
 * for capacity), far below hours × the spot price, at which it read as
 * dearer than it is and lost to plans worse by the objective. */
static double plan_usd_at(const cf_config *c, double hours)
{
    return c->hours > 0 ? c->total_usd * hours / c->hours : hours * c->usd_per_hour;
}

static double objective(cf_objective obj, double hours, double usd)
{
    return obj == CF_OBJ_TIME ? hours : obj == CF_OBJ_BALANCED ? hours * usd : usd;
}

enum { PLANS = 3 };

/* A measurement's outcome at z standard deviations: every plan whose
 * uncertainty it removes (log sd part[i] > 0) moves by z·part[i] and then
 * meets the limits at the confidence with what is left (rest_up[i]); the
 * others stay at their point, the chosen and the runner-up feasible, the
 * held-back one not. The choice after it is the best feasible plan. */
typedef struct {
    const cf_constraints *limits;
    double startup_h, zq;
    const cf_config *plan[PLANS];       /* chosen, runner-up, held back (NULL when none) */
    double part[PLANS], rest_up[PLANS];
    int count_changes;                  /* report 1 when the choice changes (for its probability) */
    int count_plan;                     /* with count_changes: only when it changes to this plan (−1: any) */
} outcome;

/* The plan chosen after the outcome z, and the objective of it and of the
 * chosen plan at z. */
static int choice_at(const outcome *o, double z, double *best_value, double *chosen_value)
{
    int best = -1;
    *best_value = INFINITY;
    *chosen_value = INFINITY;
    for (int i = 0; i < PLANS; i++) {
        const cf_config *p = o->plan[i];
        if (!p)
            continue;
        double h = plan_hours_at(p, o->startup_h, z * o->part[i]);
        double v = objective(o->limits->objective, h, plan_usd_at(p, h));
        int feasible = i < 2;
        /* a spot plan moves with its GPU type's throughput, but its spread is the preemptions' (its Monte
         * Carlo met the limits): it stays feasible */
        if (o->part[i] > 0 && !p->spot) {
            double hq = plan_hours_at(p, o->startup_h, z * o->part[i] + o->zq * o->rest_up[i]);
            feasible = cf_constraints_met(o->limits, hq, hq * p->usd_per_hour, 0);
        }
        if (i == 0)
            *chosen_value = v;
        if (feasible && v < *best_value) {
            *best_value = v;
            best = i;
        }
    }
    return best;
}

static double outcome_value(void *ctx, double z, int *ok)
{
    const outcome *o = ctx;
    double best, chosen;
    int i = choice_at(o, z, &best, &chosen);
    *ok = 1;
    if (o->count_changes) {
        *ok = i > 0 && (o->count_plan < 0 || i == o->count_plan);
        return 0;
    }
    if (i < 0)
        return objective(o->limits->objective, o->plan[0]->hours, o->plan[0]->total_usd);
    /* improvement = chosen(z) − best(z) over the chosen plan's point */
    return best + objective(o->limits->objective, o->plan[0]->hours, o->plan[0]->total_usd) - chosen;
}

typedef struct {
    cf_next_measurement m;
    double gain;               /* expected improvement of the choice it unlocks, relative to the chosen plan */
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
    int probe_nodes = 0, probe_gpus = 1;
    if (kind == CF_MEASURE_PROFILE) {
        /* the cheapest VM of the type; the probe is the 2-node × 1-GPU one (cf_search_two_node_probe), within
         * the node limit */
        vm = cheapest_vm(in, plan->vm->gpu_model, 0, NULL);
        if (!vm)
            return 0;
        if (in->constraints->max_nodes >= 2)
            probe_nodes = 2;
    } else {
        /* the plan's own shape, on its own cloud and fabric: the cheapest VM of that shape elsewhere (another
         * cloud's, a TCP VM for an InfiniBand plan) measures another network than the plan's */
        vm = cheapest_vm(in, plan->vm->gpu_model, plan->vm->gpu_count, plan->vm);
        if (!vm)
            vm = plan->vm;
        probe_nodes = plan->nodes;
        probe_gpus = plan->gpus_per_node;
        m->max_nodes = in->constraints->max_nodes;
        m->max_gpus = in->constraints->max_gpus;
    }
    /* what the printed `profile --runner` command runs (docs/profiler.md "The runs"), either kind: the light
     * profile on one VM — one GPU at three batches, the full VM at two, 20 steps each — then the probe, two
     * batches of 50 steps on its VMs; one start-up, of the VMs of the largest shape */
    cf_perf_params p = cf_gpu_perf_on_vm(perf, vm->network_gbps);
    double light_s = runs_s(&p, bytes, 1, 1, CF_SEARCH_PROFILE_BATCHES_ONE, CF_SEARCH_DEFAULT_PROFILE_STEPS);
    if (vm->gpu_count > 1)
        light_s += runs_s(&p, bytes, 1, vm->gpu_count, CF_SEARCH_PROFILE_BATCHES_FULL, CF_SEARCH_DEFAULT_PROFILE_STEPS);
    double probe_s =
        probe_nodes > 0 ? runs_s(&p, bytes, probe_nodes, probe_gpus, CF_SEARCH_PROBE_BATCHES, CF_SEARCH_DEFAULT_PROBE_STEPS)
                        : 0;
    int nodes = kind == CF_MEASURE_PROFILE ? 1 : probe_nodes;
    m->gpus_per_node = kind == CF_MEASURE_PROFILE ? vm->gpu_count : probe_gpus;
    m->probe_nodes = kind == CF_MEASURE_PROFILE ? probe_nodes : 0;
    int most = probe_nodes > 1 ? probe_nodes : 1;
    double price = vm->price_ondemand_usd_per_hr > 0 ? vm->price_ondemand_usd_per_hr : vm->price_spot_usd_per_hr;
    m->kind = kind;
    m->nodes = nodes;
    snprintf(m->gpu, sizeof m->gpu, "%s", plan->vm->gpu_model);
    snprintf(m->cloud, sizeof m->cloud, "%s", vm->cloud);
    snprintf(m->region, sizeof m->region, "%s", vm->region);
    snprintf(m->instance_type, sizeof m->instance_type, "%s", vm->instance_type);
    m->est_minutes = (startup_s + light_s + probe_s) / 60.0;
    m->est_usd = price * (most * startup_s + light_s + probe_nodes * probe_s) / 3600.0;
    /* a run that never ends (a network of next to nothing given in the spec) cannot be priced, nor bought */
    return isfinite(m->est_minutes) && isfinite(m->est_usd);
}

/* The reason: what, where, what it costs, and why it is worth it. `measured`
 * is the plan whose uncertainty it removes; `other` the plan it concerns
 * besides the chosen one (NULL: only the chosen plan). */
static void describe(cf_next_measurement *m, const cf_gpu_perf *perf, const cf_config *chosen,
                     const cf_config *measured, const cf_config *other, const cf_constraints *limits, int alone)
{
    cf_buf out = CF_BUF_INIT, why = CF_BUF_INIT;
    if (m->kind == CF_MEASURE_PROFILE) {
        if (m->probe_nodes > 0)
            cf_buf_printf(&out, "profile %s (1 VM %s, then %d for the network probe, ~%.0f min, ~$%.2f): ", m->gpu,
                          m->instance_type, m->probe_nodes, m->est_minutes, m->est_usd);
        else
            cf_buf_printf(&out, "profile %s (1 VM %s, ~%.0f min, ~$%.2f): ", m->gpu, m->instance_type, m->est_minutes,
                          m->est_usd);
        /* an estimate is carried over from a profiled GPU type, or without one from the FLOPs per sample; a
         * fitted profile leaves compute uncertainty only when it was measured in another precision than the
         * job's (advisor/model/inputs.c: moved by the peak ratio, with the carry-over's uncertainty) */
        cf_buf_printf(&why, "%s's throughput is %s", m->gpu,
                      measured->prov_throughput == CF_PROV_FITTED
                          ? "measured in another precision than the job trains in (model.precision), and moved to it"
                      : measured->prov_throughput != CF_PROV_ESTIMATED ? "not measured"
                      : perf && perf->carried_from[0]                  ? "an estimate carried over from another GPU type"
                                                                       : "an estimate from the model's FLOPs per sample");
    } else {
        cf_buf_printf(&out, "run %d × %s for %d GPU%s each, after the light profile on 1 (~%.0f min, ~$%.2f): ",
                      m->nodes, m->instance_type, m->gpus_per_node, m->gpus_per_node == 1 ? "" : "s", m->est_minutes,
                      m->est_usd);
        if (measured->prov_network == CF_PROV_DEFAULT) /* nothing measured it: not "beyond" a measurement */
            cf_buf_printf(&why, "the all-reduce of %d VMs × %d GPU%s runs on a default network, never measured",
                          m->nodes, m->gpus_per_node, m->gpus_per_node == 1 ? "" : "s");
        else
            cf_buf_printf(&why, "the all-reduce of %d VMs × %d GPU%s is beyond what its network was measured at",
                          m->nodes, m->gpus_per_node, m->gpus_per_node == 1 ? "" : "s");
    }
    const char *better = limits->objective == CF_OBJ_COST ? "cheaper" : limits->objective == CF_OBJ_TIME ? "faster"
                                                                                                         : "better";
    const char *gain = limits->objective == CF_OBJ_COST ? "cost" : limits->objective == CF_OBJ_TIME ? "time"
                                                                                                     : "time × cost";
    char conf[16];
    cf_number_percent_text(limits->confidence > 0 ? limits->confidence : CF_DEFAULT_CONFIDENCE, conf, sizeof conf);
    if (m->about == CF_MEASURE_FOR_HELD_BACK && alone)
        cf_buf_printf(&out, "the %s plan %d × %s ($%.2f, %.1f h) fails the limits at %s confidence only because %s",
                      better, other->nodes, other->vm->instance_type, other->total_usd, other->hours, conf, why.data);
    else if (m->about == CF_MEASURE_FOR_HELD_BACK) /* what the measurement leaves fails it even as estimated */
        cf_buf_printf(&out, "the %s plan %d × %s ($%.2f, %.1f h) fails the limits at %s confidence, partly because %s: "
                            "the rest of its uncertainty fails them too, so it passes only if measured faster than "
                            "estimated", better, other->nodes, other->vm->instance_type, other->total_usd, other->hours,
                      conf, why.data);
    else if (m->about == CF_MEASURE_FOR_RUNNER_UP)
        cf_buf_printf(&out, "%s; the choice between %d × %s ($%.2f) and %d × %s ($%.2f) %s", why.data,
                      chosen->nodes, chosen->vm->instance_type, chosen->total_usd, other->nodes,
                      other->vm->instance_type, other->total_usd,
                      m->could_change_choice ? "depends on it" : "hardly does");
    else {
        /* cents, or as many decimals as tell each range's ends apart: a $0.09 job read "$0.09–0.09 would narrow
         * to about $0.09–0.09", a narrowing the figures did not show */
        double narrowest = fmin(m->usd_p90 - m->usd_p10, m->usd_p90_after - m->usd_p10_after);
        int decimals = 2;
        while (decimals < 6 && narrowest > 0 && narrowest < 2 * pow(10, -decimals))
            decimals++;
        cf_buf_printf(&out, "%s; the plan's cost range $%.*f–%.*f would narrow to about $%.*f–%.*f", why.data,
                      decimals, m->usd_p10, decimals, m->usd_p90, decimals, m->usd_p10_after, decimals,
                      m->usd_p90_after);
    }
    if (m->about != CF_MEASURE_FOR_CHOSEN)
        cf_buf_printf(&out, "; measured, the choice changes with probability %.0f%% (expected gain %.1f%% of the "
                            "chosen plan's %s)", 100 * m->flip_probability, 100 * m->expected_gain, gain);
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
    const cf_config *plans[PLANS] = {chosen, runner_up, held};
    double z80 = cf_normal_two_sided_z(CF_INTERVAL_LEVEL), startup_h = limits->startup_minutes / 60.0;
    double zq = cf_normal_quantile(limits->confidence > 0 ? limits->confidence : CF_DEFAULT_CONFIDENCE);
    double c0 = objective(limits->objective, chosen->hours, chosen->total_usd);
    option best;
    memset(&best, 0, sizeof best);
    int have = 0;
    /* Each measurement of a plan's source: profiling its GPU type (every plan of that type moves with it) or
     * running its shape (that plan alone). */
    for (int r = 0; r < PLANS; r++) {
        const cf_config *plan = plans[r];
        if (!plan || plan->spot)
            continue;
        for (int kind = CF_MEASURE_PROFILE; kind <= CF_MEASURE_NETWORK; kind++) {
            double part = kind == CF_MEASURE_PROFILE ? plan->step_sigma_compute : plan->step_sigma_network_up;
            if (!(part > 1e-9))
                continue;
            /* measured by recorded runs that disagree (advisor/model/inputs.c): they take precedence over a
             * profile, so profiling would not narrow it */
            if (kind == CF_MEASURE_PROFILE && plan->prov_throughput == CF_PROV_MEASURED)
                continue;
            int duplicate = 0;
            for (int q = 0; q < r && kind == CF_MEASURE_PROFILE; q++)
                duplicate |= plans[q] && !plans[q]->spot && plans[q]->step_sigma_compute > 1e-9 &&
                             strcasecmp(plans[q]->vm->gpu_model, plan->vm->gpu_model) == 0;
            if (duplicate)
                continue; /* the same profile, valued already */
            option o;
            memset(&o, 0, sizeof o);
            cf_next_measurement *m = &o.m;
            if (!price_it(in, plan, (cf_measure_kind)kind, m))
                continue;
            outcome oc = {.limits = limits, .startup_h = startup_h, .zq = zq, .count_plan = -1};
            for (int i = 0; i < PLANS; i++) {
                const cf_config *p = plans[i];
                oc.plan[i] = p;
                if (!p)
                    continue;
                /* a profile moves every plan of its GPU type, a spot plan too (its step is the same estimate:
                 * held at its point, the other plans of the type moved against it — a flip that cannot
                 * happen); a network measurement moves its own plan, never a spot one */
                double moved = kind == CF_MEASURE_PROFILE
                                   ? (strcasecmp(p->vm->gpu_model, plan->vm->gpu_model) == 0 ? p->step_sigma_compute : 0)
                                   : (p == plan && !p->spot ? p->step_sigma_network_up : 0);
                oc.part[i] = moved;
                oc.rest_up[i] = minus(p->step_sigma_up, moved);
            }
            /* what it does to the chosen plan's cost interval */
            double lo = chosen->step_sigma, up = chosen->step_sigma_up;
            double lo_after = oc.part[0] > 0 ? minus(lo, kind == CF_MEASURE_PROFILE ? chosen->step_sigma_compute
                                                                                     : chosen->step_sigma_network)
                                             : lo;
            double up_after = minus(up, oc.part[0]);
            m->usd_p10 = usd_at(chosen, startup_h, lo, -z80);
            m->usd_p90 = usd_at(chosen, startup_h, up, z80);
            m->usd_p10_after = usd_at(chosen, startup_h, lo_after, -z80);
            m->usd_p90_after = usd_at(chosen, startup_h, up_after, z80);
            if (chosen->spot) {
                /* a spot plan's interval is its Monte Carlo's (preemptions and throughput together), as printed;
                 * nothing here narrows it */
                m->usd_p10 = m->usd_p10_after = chosen->total_usd_p10;
                m->usd_p90 = m->usd_p90_after = chosen->total_usd_p90;
            }
            o.narrowing = chosen->spot ? 0 : up - up_after;
            /* the value of the measurement: the expected improvement of the choice made after it */
            o.gain = m->expected_gain = cf_expected_improvement(outcome_value, &oc, c0) / c0;
            /* a gain below 1e-9 of the plan's value is the arithmetic's rounding, not a gain (the JSON said
             * 1.52e-17, another build 5.77e-17, where the choice changes at no outcome) */
            if (fabs(o.gain) < 1e-9)
                o.gain = m->expected_gain = 0;
            oc.count_changes = 1;
            m->flip_probability = cf_expected_improvement(outcome_value, &oc, INFINITY);
            m->could_change_choice = m->flip_probability >= FLIP_WORTH_MEASURING;
            /* the plan it would most often change the choice to */
            const cf_config *other = NULL;
            double most = 0;
            for (int i = 1; i < PLANS; i++) {
                if (!oc.plan[i])
                    continue;
                oc.count_plan = i;
                double share = cf_expected_improvement(outcome_value, &oc, INFINITY);
                if (share > most) {
                    most = share;
                    other = oc.plan[i];
                }
            }
            m->about = !m->could_change_choice || !other ? (oc.part[0] > 0 && !chosen->spot ? CF_MEASURE_FOR_CHOSEN
                                                                            : CF_MEASURE_FOR_RUNNER_UP)
                       : other == held                   ? CF_MEASURE_FOR_HELD_BACK
                                                         : CF_MEASURE_FOR_RUNNER_UP;
            if (m->about == CF_MEASURE_FOR_RUNNER_UP && !other)
                other = runner_up ? runner_up : plan;
            if (m->about == CF_MEASURE_FOR_CHOSEN)
                other = NULL;
            const cf_config *concerned = other ? other : plan;
            m->plan_usd = concerned->total_usd;
            m->plan_hours = concerned->hours;
            m->plan_nodes = concerned->nodes;
            snprintf(m->plan_instance_type, sizeof m->plan_instance_type, "%s", concerned->vm->instance_type);
            /* "only because": as estimated (z = 0), with what the measurement leaves, the held-back plan
             * meets the limits at the confidence */
            int alone = 1;
            if (m->about == CF_MEASURE_FOR_HELD_BACK) {
                double hq = plan_hours_at(held, startup_h, zq * oc.rest_up[2]);
                alone = cf_constraints_met(limits, hq, hq * held->usd_per_hour, 0);
            }
            describe(m, perf_of(in, plan->vm->gpu_model), chosen, plan, other, limits, alone);
            if (!have || option_better(&o, &best)) {
                best = o;
                have = 1;
            }
        }
    }
    if (have)
        *out = best.m;
}
