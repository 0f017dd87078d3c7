/* Tests of advisor/plan/next_measurement.c: which measurement is worth buying,
 * what it costs, how much it narrows the chosen plan, and whether it can
 * change the choice (a ranking that can flip, one that cannot, a plan held
 * back by its uncertainty, nothing left to measure). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../advisor/plan/next_measurement.h"
#include "../advisor/model/perf_internal.h"

typedef struct {
    cf_job job;
    cf_constraints limits;
    cf_vm vm_a, vm_b;
    const cf_vm *vms[2];
    cf_gpu_perf perf[2];
    cf_advisor_input in;
    cf_config chosen, other;
    cf_advice advice;
} fixture;

static cf_gpu_perf perf_of(const char *gpu)
{
    cf_gpu_perf p;
    memset(&p, 0, sizeof p);
    snprintf(p.gpu, sizeof p.gpu, "%s", gpu);
    p.params = cf_perf_defaults(NULL);
    p.params.alpha_s = 0.02;
    p.params.beta_s = 0.001;
    p.params.max_local_batch = 128;
    return p;
}

static cf_vm vm_of(const char *type, const char *gpu, double price)
{
    cf_vm v;
    memset(&v, 0, sizeof v);
    snprintf(v.cloud, sizeof v.cloud, "aws");
    snprintf(v.region, sizeof v.region, "us-east-1");
    snprintf(v.instance_type, sizeof v.instance_type, "%s", type);
    snprintf(v.gpu_model, sizeof v.gpu_model, "%s", gpu);
    v.gpu_count = 1;
    v.network_gbps = 25;
    v.price_ondemand_usd_per_hr = price;
    return v;
}

/* A plan of `hours` (10 min start-up) at $10/h whose step carries the
 * given log sds. */
static cf_config plan_of(const cf_vm *vm, double hours, double sigma_compute, double sigma_rest)
{
    cf_config c;
    memset(&c, 0, sizeof c);
    c.vm = vm;
    c.nodes = 1;
    c.gpus_per_node = 1;
    c.hours = hours;
    c.usd_per_hour = 10;
    c.total_usd = 10 * hours;
    c.step_sigma_compute = sigma_compute;
    c.step_sigma = c.step_sigma_up = hypot(sigma_compute, sigma_rest);
    c.prov_throughput = sigma_compute > 0 ? CF_PROV_ESTIMATED : CF_PROV_FITTED;
    return c;
}

static void setup(fixture *f, double other_hours)
{
    memset(f, 0, sizeof *f);
    f->job.parameters = 25e6;
    f->job.gradient_bytes = 4;
    f->limits.objective = CF_OBJ_COST;
    f->limits.deadline_hours = 100;
    f->limits.confidence = 0.9;
    f->limits.startup_minutes = 10;
    f->vm_a = vm_of("a.xlarge", "A", 4);
    f->vm_b = vm_of("b.xlarge", "B", 3);
    f->vms[0] = &f->vm_a;
    f->vms[1] = &f->vm_b;
    f->perf[0] = perf_of("A");
    f->perf[1] = perf_of("B");
    f->in = (cf_advisor_input){.job = &f->job, .constraints = &f->limits, .vms = f->vms, .n_vms = 2,
                               .perf = f->perf, .n_perf = 2};
    /* chosen: GPU A carried over (σ 0.3); the runner-up: GPU B measured */
    f->chosen = plan_of(&f->vm_a, 10, 0.3, 0.05);
    f->other = plan_of(&f->vm_b, other_hours, 0, 0.05);
    static cf_config ranked[2];
    ranked[0] = f->chosen;
    ranked[1] = f->other;
    f->advice.ranked = ranked;
    f->advice.n_ranked = 2;
}

/* The share of the 13-point quadrature of cf_expected_improvement (z from
 * −3 to 3 by 0.5, normal weights) where the chosen plan revealed at z
 * (10 h, 10 min start-up, log sd `part` on the run) costs more than `other`. */
static double switch_probability(double part, double other_usd)
{
    double sum = 0, wsum = 0, startup = 10.0 / 60;
    for (int i = -6; i <= 6; i++) {
        double z = 0.5 * i, w = exp(-0.5 * z * z);
        wsum += w;
        sum += w * (10 * (startup + (10 - startup) * exp(z * part)) > other_usd);
    }
    return sum / wsum;
}

/* The runner-up costs 5 % more: with the chosen GPU carried over (σ 0.3),
 * profiling A reveals whether it costs more than the runner-up — the
 * choice flips in the quadrature's share of outcomes where it does. */
static void test_ranking_can_flip(void **state)
{
    (void)state;
    fixture f;
    setup(&f, 10.5);
    cf_next_measurement m;
    cf_next_measurement_choose(&f.in, &f.advice, &m);
    assert_int_equal(m.kind, CF_MEASURE_PROFILE);
    assert_string_equal(m.gpu, "A");
    assert_string_equal(m.instance_type, "a.xlarge");
    assert_int_equal(m.about, CF_MEASURE_FOR_RUNNER_UP);
    assert_true(m.could_change_choice);
    assert_true(fabs(m.flip_probability - switch_probability(0.3, 105)) < 1e-9);
    assert_true(m.flip_probability > 0.3 && m.flip_probability < 0.5);
    /* the chosen plan's cost interval narrows to the part left: σ 0.05 */
    double z = 1.2815515655446004, startup = 10.0 / 60, run = 10 - startup;
    assert_true(fabs(m.usd_p90_after - 10 * (startup + run * exp(z * 0.05))) < 1e-6);
    assert_true(fabs(m.usd_p90 - 10 * (startup + run * exp(z * hypot(0.3, 0.05)))) < 1e-6);
    assert_true(m.usd_p10_after > m.usd_p10);
    /* its price: one start-up plus the light profile's runs at $4/h */
    assert_true(m.est_minutes > 10 && m.est_minutes < 11);
    assert_true(fabs(m.est_usd - 4 * m.est_minutes / 60) < 1e-9);
    if (!strstr(m.reason, "depends on it"))
        fail_msg("reason: %s", m.reason);
    /* its value: E[max(0, C(z) − R)] over the same quadrature, relative to C's $100 */
    double sum = 0, wsum = 0;
    for (int i = -6; i <= 6; i++) {
        double zz = 0.5 * i, w = exp(-0.5 * zz * zz), c = 10 * (startup + run * exp(zz * 0.3));
        wsum += w;
        sum += w * (c > 105 ? c - 105 : 0);
    }
    assert_true(fabs(m.expected_gain - sum / wsum / 100) < 1e-9);
}

/* The runner-up costs 3× as much: no uncertainty here makes it the better
 * plan; profiling A only narrows the chosen plan. */
static void test_ranking_cannot_flip(void **state)
{
    (void)state;
    fixture f;
    setup(&f, 30);
    cf_next_measurement m;
    cf_next_measurement_choose(&f.in, &f.advice, &m);
    assert_int_equal(m.kind, CF_MEASURE_PROFILE);
    assert_string_equal(m.gpu, "A");
    assert_false(m.could_change_choice);
    assert_true(m.flip_probability < 1e-3);
    assert_true(m.expected_gain == 0); /* no outcome changes the choice: not a rounding's 1e-17 */
    assert_true(m.usd_p90_after < m.usd_p90);
    assert_non_null(strstr(m.reason, "would narrow"));
}

/* A cheaper plan on GPU B fails the 90 % deadline only because B was
 * carried over: measured, its quantile would pass. That beats narrowing the
 * chosen plan. */
static void test_held_back_plan(void **state)
{
    (void)state;
    fixture f;
    setup(&f, 30);
    f.limits.deadline_hours = 10;
    f.advice.held_back = plan_of(&f.vm_b, 8, 0.4, 0.05); /* 8 h; at 90 %: 8·e^(1.28·0.40) ≈ 13 h > 10 */
    f.advice.have_held_back = 1;
    cf_next_measurement m;
    cf_next_measurement_choose(&f.in, &f.advice, &m);
    assert_int_equal(m.kind, CF_MEASURE_PROFILE);
    assert_string_equal(m.gpu, "B");
    assert_int_equal(m.about, CF_MEASURE_FOR_HELD_BACK);
    assert_true(m.could_change_choice);
    assert_true(fabs(m.plan_usd - 80) < 1e-9);
    assert_non_null(strstr(m.reason, "only because"));
    /* B has no profile to be carried over from (estimated from the FLOPs per sample): the reason said
     * "carried over from another GPU type" all the same */
    if (!strstr(m.reason, "B's throughput is an estimate from the model's FLOPs per sample"))
        fail_msg("reason: %s", m.reason);
    snprintf(f.perf[1].carried_from, sizeof f.perf[1].carried_from, "A");
    cf_next_measurement_choose(&f.in, &f.advice, &m);
    if (!strstr(m.reason, "B's throughput is an estimate carried over from another GPU type"))
        fail_msg("reason: %s", m.reason);
    /* with more left than the limits allow even as estimated (8·e^(1.28·0.2) ≈ 10.3 h > 10), the measurement
     * can still pass it (measured faster), but not "only because" B was carried over */
    f.advice.held_back = plan_of(&f.vm_b, 8, 0.4, 0.2);
    cf_next_measurement_choose(&f.in, &f.advice, &m);
    assert_int_equal(m.about, CF_MEASURE_FOR_HELD_BACK);
    assert_true(m.could_change_choice);
    if (strstr(m.reason, "only because") || !strstr(m.reason, "partly because"))
        fail_msg("reason: %s", m.reason);
    /* with so much left after the measurement that it passes only on a rare lucky outcome (z < −1.7), it
     * cannot be expected to change the choice */
    f.advice.held_back = plan_of(&f.vm_b, 8, 0.4, 0.7);
    cf_next_measurement_choose(&f.in, &f.advice, &m);
    assert_false(m.about == CF_MEASURE_FOR_HELD_BACK && m.could_change_choice);
}

/* The chosen plan made a spot plan with its Monte Carlo's cost (0: the
 * plan's own) and 80 % interval. */
static void choose_spot(fixture *f, double total_usd, double usd_p10, double usd_p90)
{
    f->advice.ranked[0].spot = 1;
    if (total_usd > 0)
        f->advice.ranked[0].total_usd = total_usd;
    f->advice.ranked[0].total_usd_p10 = usd_p10;
    f->advice.ranked[0].total_usd_p90 = usd_p90;
}

/* A spot plan chosen (its spread is the preemptions', not a measurement's):
 * compared at its point, and a carried-over runner-up still valued. */
static void test_spot_chosen(void **state)
{
    (void)state;
    fixture f;
    setup(&f, 10.5);
    choose_spot(&f, 0, 60, 400); /* the Monte Carlo's 80 % interval, far wider than the throughput's alone */
    f.advice.ranked[1] = plan_of(&f.vm_b, 10.5, 0.3, 0.05);
    cf_next_measurement m;
    cf_next_measurement_choose(&f.in, &f.advice, &m);
    assert_int_equal(m.kind, CF_MEASURE_PROFILE);
    assert_string_equal(m.gpu, "B");
    assert_int_equal(m.about, CF_MEASURE_FOR_RUNNER_UP);
    assert_true(m.flip_probability > 0.1 && m.flip_probability < 0.5);
    /* the spot plan's cost interval is its own, as printed, and not narrowed by it (it was the throughput
     * band priced at the spot rate: a second, different 80 % interval for the same plan) */
    assert_true(fabs(m.usd_p10 - 60) < 1e-9 && fabs(m.usd_p10_after - 60) < 1e-9);
    assert_true(fabs(m.usd_p90 - 400) < 1e-9 && fabs(m.usd_p90_after - 400) < 1e-9);
}

/* A spot plan chosen on the GPU type the runner-up's profile measures: the
 * profile moves both (one GPU type's carry-over error moves all its plans),
 * so the on-demand runner-up, 5 % dearer at the same σ, never overtakes it.
 * Held at its point while the runner-up moved, the spot plan was overtaken
 * whenever A proved faster: "changes with probability 40 %". */
static void test_spot_chosen_same_gpu(void **state)
{
    (void)state;
    fixture f;
    setup(&f, 10.5);
    choose_spot(&f, 0, 60, 400);
    f.advice.ranked[1] = plan_of(&f.vm_a, 10.5, 0.3, 0.05);
    f.advice.ranked[1].nodes = 2; /* another node count: the runner-up */
    cf_next_measurement m;
    cf_next_measurement_choose(&f.in, &f.advice, &m);
    assert_int_equal(m.kind, CF_MEASURE_PROFILE);
    assert_string_equal(m.gpu, "A");
    if (m.could_change_choice || m.flip_probability > 1e-9 || m.expected_gain > 1e-9)
        fail_msg("flip %g, gain %g: %s", m.flip_probability, m.expected_gain, m.reason);
    assert_int_equal(m.about, CF_MEASURE_FOR_RUNNER_UP);
    assert_non_null(strstr(m.reason, "hardly does"));
    /* the spot plan's interval stays its Monte Carlo's */
    assert_true(fabs(m.usd_p10_after - 60) < 1e-9 && fabs(m.usd_p90_after - 400) < 1e-9);
}

/* A spot plan chosen at its Monte Carlo's cost, $50 for a median 10 h on a
 * $10/h cluster (no VM is billed while preempted or waiting), against an
 * on-demand runner-up of 8 h, $80, on a carried-over GPU: profiling B
 * changes the choice only where B proves cheaper than $50. Valued at
 * hours × $/h, the spot plan read as $100 and the runner-up overtook it at
 * most outcomes: "changes with probability 78 % (expected gain 41.9 %)". */
static void test_spot_chosen_at_its_own_cost(void **state)
{
    (void)state;
    fixture f;
    setup(&f, 10.5);
    choose_spot(&f, 50, 30, 200);
    f.advice.ranked[1] = plan_of(&f.vm_b, 8, 0.3, 0.05);
    cf_next_measurement m;
    cf_next_measurement_choose(&f.in, &f.advice, &m);
    assert_int_equal(m.kind, CF_MEASURE_PROFILE);
    assert_string_equal(m.gpu, "B");
    double sum = 0, wsum = 0, startup = 10.0 / 60;
    for (int i = -6; i <= 6; i++) {
        double z = 0.5 * i, w = exp(-0.5 * z * z);
        wsum += w;
        sum += w * (10 * (startup + (8 - startup) * exp(z * 0.3)) < 50);
    }
    if (fabs(m.flip_probability - sum / wsum) > 1e-9 || m.expected_gain >= 1)
        fail_msg("flip %g (expected %g), gain %g: %s", m.flip_probability, sum / wsum, m.expected_gain, m.reason);
    assert_false(m.could_change_choice);
}

/* The chosen plan's all-reduce on 3 VMs of one GPU is beyond what its
 * network was measured at: the measurement runs that shape; the reason
 * said "3 VMs × 1 GPUs". */
static void test_network_measurement(void **state)
{
    (void)state;
    fixture f;
    setup(&f, 30);
    f.limits.max_nodes = 8;
    f.limits.max_gpus = 8;
    cf_config *c = &f.advice.ranked[0];
    *c = plan_of(&f.vm_a, 10, 0, 0.05);
    c->nodes = 3;
    c->step_sigma_network = c->step_sigma_network_up = 0.2;
    c->step_sigma = c->step_sigma_up = hypot(0.2, 0.05);
    c->prov_network = CF_PROV_FITTED;
    cf_next_measurement m;
    cf_next_measurement_choose(&f.in, &f.advice, &m);
    assert_int_equal(m.kind, CF_MEASURE_NETWORK);
    assert_int_equal(m.nodes, 3);
    assert_int_equal(m.gpus_per_node, 1);
    /* the limits the plan was found within, for the command (render_measure.c) */
    assert_int_equal(m.max_nodes, 8);
    assert_int_equal(m.max_gpus, 8);
    if (!strstr(m.reason, "the all-reduce of 3 VMs × 1 GPU is beyond what its network was measured at"))
        fail_msg("reason: %s", m.reason);
}

/* A network measurement is run on the plan's own cloud and fabric: the
 * cheapest VM of the plan's GPU and size was taken from any cloud and any
 * NIC — an AWS plan's all-reduce "measured" on a cheaper GCP VM (another
 * network, perhaps no account there), the printed command naming it. Of
 * the plan's cloud, a cheaper VM of its fabric (TCP) is taken, one of
 * another fabric (RDMA) is not. */
static void test_network_measurement_on_the_plans_cloud(void **state)
{
    (void)state;
    fixture f;
    setup(&f, 30);
    cf_vm other_cloud = vm_of("c.cheap", "A", 1), rdma = vm_of("a.rdma", "A", 2), tcp = vm_of("a.tcp", "A", 3);
    snprintf(other_cloud.cloud, sizeof other_cloud.cloud, "gcp");
    snprintf(other_cloud.region, sizeof other_cloud.region, "us-central1");
    rdma.network_gbps = 400;
    tcp.network_gbps = 50;
    snprintf(tcp.region, sizeof tcp.region, "us-west-2");
    const cf_vm *vms[] = {&f.vm_a, &f.vm_b, &other_cloud, &rdma, &tcp};
    f.in.vms = vms;
    f.in.n_vms = 5;
    cf_config *c = &f.advice.ranked[0];
    *c = plan_of(&f.vm_a, 10, 0, 0.05);
    c->nodes = 3;
    c->step_sigma_network = c->step_sigma_network_up = 0.2;
    c->step_sigma = c->step_sigma_up = hypot(0.2, 0.05);
    c->prov_network = CF_PROV_FITTED;
    cf_next_measurement m;
    cf_next_measurement_choose(&f.in, &f.advice, &m);
    assert_int_equal(m.kind, CF_MEASURE_NETWORK);
    assert_string_equal(m.cloud, "aws");
    assert_string_equal(m.instance_type, "a.tcp");
    assert_string_equal(m.region, "us-west-2");
    /* priced on that VM at $3/h: the start-up and the probe on 3 VMs, the light profile (which the printed
     * command runs first: docs/profiler.md) on one, whose runs are the 3 single-VM ones of a profile */
    f.limits.max_nodes = 1;
    cf_next_measurement light;
    cf_config chosen = *c;
    *c = plan_of(&tcp, 10, 0.3, 0.05); /* a profile of A priced on a.tcp, the cheapest VM of A left */
    const cf_vm *only_tcp[] = {&tcp};
    f.in.vms = only_tcp;
    f.in.n_vms = 1;
    cf_next_measurement_choose(&f.in, &f.advice, &light);
    assert_int_equal(light.kind, CF_MEASURE_PROFILE);
    double light_min = light.est_minutes - 10;
    f.in.vms = vms;
    f.in.n_vms = 5;
    *c = chosen;
    assert_true(m.est_minutes > 10 + light_min);
    double probe_min = m.est_minutes - 10 - light_min;
    assert_true(fabs(m.est_usd - 3 * (3 * 10 + light_min + 3 * probe_min) / 60) < 1e-9);
    if (!strstr(m.reason, "run 3 × a.tcp for 1 GPU each, after the light profile on 1 ("))
        fail_msg("reason: %s", m.reason);
    /* the plan's VM itself when its cloud has no cheaper one of its fabric */
    f.in.n_vms = 4;
    cf_next_measurement_choose(&f.in, &f.advice, &m);
    assert_string_equal(m.cloud, "aws");
    assert_string_equal(m.instance_type, "a.xlarge");
}

/* A GPU type fitted to measurements in another precision than the job's
 * keeps the precision move's uncertainty: profiling it in the job's removes
 * it. The reason said "A's throughput is not measured" beside "A throughput
 * fitted: fitted to 56 measured step times". */
static void test_fitted_in_another_precision(void **state)
{
    (void)state;
    fixture f;
    setup(&f, 30);
    f.advice.ranked[0].prov_throughput = CF_PROV_FITTED;
    cf_next_measurement m;
    cf_next_measurement_choose(&f.in, &f.advice, &m);
    assert_int_equal(m.kind, CF_MEASURE_PROFILE);
    assert_string_equal(m.gpu, "A");
    if (strstr(m.reason, "not measured") || !strstr(m.reason, "measured in another precision"))
        fail_msg("reason: %s", m.reason);
}

/* A job of a few cents: the narrowing is said in as many decimals as show
 * it ("$0.09–0.09 would narrow to about $0.09–0.09" said nothing). */
static void test_narrowing_of_cents_is_visible(void **state)
{
    (void)state;
    fixture f;
    setup(&f, 30);
    cf_config *c = &f.advice.ranked[0];
    *c = plan_of(&f.vm_a, 0.2, 0.3, 0.05); /* 10 min start-up + 2 min of run */
    c->usd_per_hour = 0.45;
    c->total_usd = 0.09;
    f.advice.ranked[1].usd_per_hour = 0.45;
    f.advice.ranked[1].total_usd = 0.45 * f.advice.ranked[1].hours;
    cf_next_measurement m;
    cf_next_measurement_choose(&f.in, &f.advice, &m);
    assert_int_equal(m.about, CF_MEASURE_FOR_CHOSEN);
    assert_true(m.usd_p90_after < m.usd_p90);
    char before[64], after[64];
    snprintf(before, sizeof before, "$%.4f–%.4f would narrow", m.usd_p10, m.usd_p90);
    snprintf(after, sizeof after, "to about $%.4f–%.4f", m.usd_p10_after, m.usd_p90_after);
    if (!strstr(m.reason, before) || !strstr(m.reason, after))
        fail_msg("reason: %s", m.reason);
}

/* `profile --runner` runs the light profile and then the 2-node × 1-GPU
 * probe on two VMs (docs/profiler.md): the price is of both, the probe's
 * minutes on two VMs ("1 VM, ~10 min" priced the light profile alone). With
 * max_nodes 1 no probe runs. */
static void test_profile_price_has_its_probe(void **state)
{
    (void)state;
    fixture f;
    setup(&f, 10.5);
    f.limits.max_nodes = 1;
    cf_next_measurement alone, m;
    cf_next_measurement_choose(&f.in, &f.advice, &alone);
    assert_int_equal(alone.kind, CF_MEASURE_PROFILE);
    assert_int_equal(alone.probe_nodes, 0);
    assert_true(fabs(alone.est_usd - 4 * alone.est_minutes / 60) < 1e-9);
    f.limits.max_nodes = 16;
    cf_next_measurement_choose(&f.in, &f.advice, &m);
    assert_int_equal(m.kind, CF_MEASURE_PROFILE);
    assert_int_equal(m.nodes, 1);
    assert_int_equal(m.probe_nodes, 2);
    double probe_min = m.est_minutes - alone.est_minutes;
    assert_true(probe_min > 0);
    /* the light profile on one VM, the probe on two, the 10-minute start-up on both, at $4/h */
    assert_true(fabs(m.est_usd - 4 * (alone.est_minutes + 10 + 2 * probe_min) / 60) < 1e-9);
    if (!strstr(m.reason, "(1 VM a.xlarge, then 2 for the network probe,"))
        fail_msg("reason: %s", m.reason);
}

/* Everything measured: nothing to buy. */
static void test_nothing_to_measure(void **state)
{
    (void)state;
    fixture f;
    setup(&f, 10.5);
    f.advice.ranked[0] = plan_of(&f.vm_a, 10, 0, 0.05);
    cf_next_measurement m;
    cf_next_measurement_choose(&f.in, &f.advice, &m);
    assert_int_equal(m.kind, CF_MEASURE_NONE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ranking_can_flip),
        cmocka_unit_test(test_ranking_cannot_flip),
        cmocka_unit_test(test_held_back_plan),
        cmocka_unit_test(test_profile_price_has_its_probe),
        cmocka_unit_test(test_narrowing_of_cents_is_visible),
        cmocka_unit_test(test_spot_chosen),
        cmocka_unit_test(test_spot_chosen_same_gpu),
        cmocka_unit_test(test_spot_chosen_at_its_own_cost),
        cmocka_unit_test(test_network_measurement),
        cmocka_unit_test(test_network_measurement_on_the_plans_cloud),
        cmocka_unit_test(test_fitted_in_another_precision),
        cmocka_unit_test(test_nothing_to_measure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
