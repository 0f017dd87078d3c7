/* The online search (advisor/search*.c) on synthetic problems with known
 * optima: true step times from the throughput model with known parameters,
 * multi-node configurations made slower than any fit of single-node data
 * predicts, a runner of function pointers. Acquisition, stopping, the
 * final measurement, failures, determinism, scoring and the error model. */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../advisor/search/search_internal.h"
#include "cloudfit/advisor/explain.h"
#include "cloudfit/common/escape.h"
#include "cloudfit/advisor/search.h"
#include "cloudfit/spec.h"
#include "../advisor/model/perf_internal.h"
#include "../advisor/model/stateff_internal.h"
#include "../advisor/validate/validate_internal.h"

#define N_MAX 64

typedef struct {
    cf_search_candidate cands[N_MAX];
    double truth[N_MAX];
    size_t n;
    cf_spec spec;
    cf_noise_model noise;
} problem;

typedef enum { RUN_OK, RUN_FAIL_FIRST_PROFILE, RUN_FLAKY, RUN_FIRST_HIGH } run_mode;

typedef struct {
    const problem *p;
    gsl_rng *rng;
    double noise_sd;
    run_mode mode;
    int calls[N_MAX];
    int total_calls;
    long high_candidate;   /* RUN_FIRST_HIGH: its first high_runs runs (1 if 0) read high_factor × the truth */
    double high_factor;
    int high_runs;
    const char *fail_message; /* RUN_FAIL_FIRST_PROFILE: the failure's message, when not the default */
} runner_ctx;

static cf_status probe(void *ctx, const cf_search_candidate *c, int steps, double *out)
{
    runner_ctx *r = ctx;
    size_t i = (size_t)(c - r->p->cands);
    assert_true(i < r->p->n);
    assert_true(steps > 0);
    r->total_calls++;
    if (r->mode == RUN_FAIL_FIRST_PROFILE && c->nodes == 1 && c->gpus_per_node == 1 && c->local_batch == 16)
        return cf_error_set(CF_ERR_UNAVAILABLE, "%s",
                            r->fail_message ? r->fail_message : "'fake' exited with status 1");
    if (r->mode == RUN_FLAKY && r->calls[i]++ == 0)
        return cf_error_set(CF_ERR_UNAVAILABLE, "'fake' stdout line 1: not JSON");
    if (r->mode == RUN_FIRST_HIGH && (long)i == r->high_candidate && r->calls[i]++ < (r->high_runs ? r->high_runs : 1)) {
        *out = r->p->truth[i] * r->high_factor;
        return CF_OK;
    }
    *out = r->p->truth[i] * (r->rng ? exp(gsl_ran_gaussian(r->rng, r->noise_sd)) : 1.0);
    return CF_OK;
}

/* GPU "X": nodes 1..8, 1 or 4 GPUs per VM, batches 16..128; the 4-GPU VM
 * is cheaper per GPU. Beyond two nodes the truth is `multi_node_factor` slower
 * than the model with the true parameters. */
static void make_problem(problem *p, double multi_node_factor)
{
    memset(p, 0, sizeof *p);
    static const char spec_json[] =
        "{\"name\": \"synthetic\", \"model\": {\"parameters\": 25000000}, \"data\": {\"samples\": 1000000},"
        " \"training\": {\"epochs\": 20, \"batch\": 64, \"lr\": 0.1}}";
    assert_int_equal(cf_spec_parse(spec_json, strlen(spec_json), NULL, &p->spec), CF_OK);
    p->spec.search.startup_minutes = 0;
    cf_noise_model_init(&p->noise, 64, 4000, NULL, 0, CF_PROV_MEASURED);
    cf_perf_params truth = cf_perf_defaults(NULL);
    truth.alpha_s = 0.02;
    truth.beta_s = 0.002;
    truth.contention = 0.03;
    truth.intra_gbps = 80;
    truth.nic_gbps = 25;
    truth.inter_gbps = 4;
    truth.hide = 0.3;
    truth.overhead_s = 0.003;
    truth.network_provenance = CF_PROV_FITTED;
    static const int nodes[] = {1, 2, 4, 8}, gpus[] = {1, 4}, batches[] = {16, 32, 64, 128};
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 2; b++)
            for (int m = 0; m < 4; m++) {
                cf_search_candidate *c = &p->cands[p->n];
                snprintf(c->gpu, sizeof c->gpu, "X");
                c->nodes = nodes[a];
                c->gpus_per_node = gpus[b];
                c->local_batch = batches[m];
                c->usd_per_node_hr = gpus[b] == 1 ? 1.0 : 3.4;
                c->network_gbps = 25;
                double t = cf_perf_step_s(&truth, 25e6 * 4, c->nodes, c->gpus_per_node, c->local_batch, 1);
                p->truth[p->n++] = t * (c->nodes > 2 ? multi_node_factor : 1.0);
            }
}

static void options_for(const problem *p, cf_search_options *o)
{
    cf_search_options_init(o);
    o->job = &p->spec.job;
    o->constraints = &p->spec.search;
    o->noise = &p->noise;
    o->candidates = p->cands;
    o->n_candidates = p->n;
}

/* Deadline/budget at `factor` × the fastest time / cheapest cost. */
static void set_limit(problem *p, cf_objective objective, double factor)
{
    cf_search_options o;
    options_for(p, &o);
    cf_search_result empty = {.chosen = -1};
    cf_search_score sc;
    p->spec.search.deadline_hours = p->spec.search.budget_usd = 0;
    p->spec.search.objective = objective;
    assert_int_equal(cf_search_score_against(&o, p->truth, &empty, &sc), CF_OK);
    if (objective == CF_OBJ_COST)
        p->spec.search.deadline_hours = factor * sc.fastest_hours;
    else
        p->spec.search.budget_usd = factor * sc.cheapest_usd;
}

/* A problem with its deadline (cost) or budget (time) at `factor` × the
 * fastest time / cheapest cost; free with free_problem. */
static problem *new_problem(double multi_node_factor, cf_objective objective, double factor)
{
    problem *p = malloc(sizeof *p);
    assert_non_null(p);
    make_problem(p, multi_node_factor);
    set_limit(p, objective, factor);
    return p;
}

static void free_problem(problem *p)
{
    cf_spec_free(&p->spec);
    free(p);
}

static void test_finds_known_optimum(void **state)
{
    (void)state;
    static const double factors[] = {1.2, 2, 4};
    for (int obj = 0; obj < 2; obj++)
        for (int f = 0; f < 3; f++) {
            problem *p = new_problem(1.25, obj ? CF_OBJ_TIME : CF_OBJ_COST, factors[f]);
            cf_search_options o;
            options_for(p, &o);
            runner_ctx ctx = {.p = p};
            cf_search_runner runner = {&ctx, probe, NULL};
            cf_search_result r;
            assert_int_equal(cf_search_run(&o, &runner, &r), CF_OK);
            cf_search_score sc;
            assert_int_equal(cf_search_score_against(&o, p->truth, &r, &sc), CF_OK);
            assert_true(sc.oracle >= 0);
            assert_false(sc.miss);
            if (!(sc.regret <= 0.03))
                fail_msg("objective %d factor %g: regret %.1f%% (chosen %ld, oracle %ld)", obj, factors[f],
                         100 * sc.regret, r.chosen, sc.oracle);
            assert_true(r.chosen_measured);        /* measured before committing */
            assert_true(r.n_probes <= (size_t)o.max_probes);
            assert_int_equal(r.n_profile_runs, 7); /* 3 batches on 1 GPU, 2 on a full node, the 2 × 1 probe at 2 */
            for (size_t i = 0; i < r.n_runs; i++)
                if (r.runs[i].kind == CF_RUN_PROBE) /* every probe had an estimate first */
                    assert_true(isfinite(r.runs[i].predicted_step_s));
            cf_search_result_free(&r);
            free_problem(p);
        }
}

/* The progress display counts against an upper bound: the first one
 * reported bounds every run that follows (it left out the light profile's
 * 2-node probe: "0/≤ 7 runs" ... "8/≤ 9 runs"). */
typedef struct {
    double first_total, last_done;
    int calls;
} progress_seen;

static void note_progress(void *ctx, double done, double total, const char *unit, const char *what)
{
    (void)unit;
    (void)what;
    progress_seen *seen = ctx;
    if (seen->calls++ == 0)
        seen->first_total = total;
    seen->last_done = done;
}

static void test_progress_bound_holds(void **state)
{
    (void)state;
    problem *p = new_problem(1.25, CF_OBJ_COST, 2);
    cf_search_options o;
    options_for(p, &o);
    progress_seen seen = {0};
    o.progress = note_progress;
    o.progress_ctx = &seen;
    runner_ctx ctx = {.p = p};
    cf_search_runner runner = {&ctx, probe, NULL};
    cf_search_result r;
    assert_int_equal(cf_search_run(&o, &runner, &r), CF_OK);
    assert_int_equal(r.n_profile_runs, 7); /* the light profile with its 2-node probe */
    assert_true(seen.calls > 0);
    if (!((double)r.n_runs <= seen.first_total))
        fail_msg("the first progress line said at most %g runs; %zu ran", seen.first_total, r.n_runs);
    /* the light profile's 7 runs, then at most max_probes probes */
    if (seen.first_total != 7.0 + o.max_probes)
        fail_msg("the first progress line said at most %g runs, not 7 + %d", seen.first_total, o.max_probes);
    cf_search_result_free(&r);
    free_problem(p);
}

/* The model alone cannot see a slowdown beyond two nodes (the light
 * profile's 2-node probe does not show it); the search can (see
 * test_finds_known_optimum). Held at the stated confidence, as `recommend`
 * holds it, the model's interval absorbs a 25 % slowdown; at 40 % its pick
 * breaks the constraint or costs more than 3 % over the optimum in some
 * scenarios. */
static void test_model_alone_is_fooled(void **state)
{
    (void)state;
    static const double factors[] = {1.2, 2, 4};
    int fooled = 0;
    for (int obj = 0; obj < 2; obj++)
        for (int f = 0; f < 3; f++) {
            problem *p = new_problem(1.4, obj ? CF_OBJ_TIME : CF_OBJ_COST, factors[f]);
            cf_search_options o;
            options_for(p, &o);
            o.method = CF_SEARCH_MODEL_ONLY;
            runner_ctx ctx = {.p = p};
            cf_search_runner runner = {&ctx, probe, NULL};
            cf_search_result r;
            cf_status st = cf_search_run(&o, &runner, &r);
            assert_true(st == CF_OK || st == CF_ERR_INFEASIBLE);
            assert_int_equal(r.n_probes, 0);
            if (r.chosen >= 0) { /* held at the stated confidence with the model's interval, as recommend holds it */
                double h, u;
                cf_search_job(&o, &p->cands[r.chosen], r.est_step_s[r.chosen] * exp(o.safety_sds * r.est_sd[r.chosen]),
                              &h, &u);
                assert_true(cf_search_feasible(&o, h, u, 0));
            }
            cf_search_score sc;
            assert_int_equal(cf_search_score_against(&o, p->truth, &r, &sc), CF_OK);
            fooled += sc.miss || !(sc.regret <= 0.03);
            cf_search_result_free(&r);
            free_problem(p);
        }
    assert_true(fooled >= 1);
}

/* Nothing meets the limits by the model's estimate even 1.5 sd below it
 * (beyond two nodes the truth is 35 % faster than the model, and only
 * there is the deadline met): with no incumbent, any configuration with a
 * chance of meeting the limits over the posterior is probed before the
 * search calls them infeasible (it used to stop after its light profile). */
static void test_probes_before_calling_infeasible(void **state)
{
    (void)state;
    problem *p = new_problem(0.65, CF_OBJ_COST, 1.15);
    cf_search_options o;
    options_for(p, &o);
    runner_ctx ctx = {.p = p};
    cf_search_runner runner = {&ctx, probe, NULL};
    cf_search_result r;
    cf_status st = cf_search_run(&o, &runner, &r);
    assert_int_equal(st, CF_OK);
    assert_true(r.n_probes >= 1);
    cf_search_score sc;
    assert_int_equal(cf_search_score_against(&o, p->truth, &r, &sc), CF_OK);
    assert_false(sc.miss);
    cf_search_result_free(&r);
    free_problem(p);
}

static void test_stopping_rules(void **state)
{
    (void)state;
    problem *p = new_problem(1.25, CF_OBJ_COST, 2);
    cf_search_options o;
    options_for(p, &o);
    runner_ctx ctx = {.p = p};
    cf_search_runner runner = {&ctx, probe, NULL};
    cf_search_result r;
    /* At most one probe: it is the best estimate, measured. */
    o.max_probes = 1;
    assert_int_equal(cf_search_run(&o, &runner, &r), CF_OK);
    assert_int_equal(r.n_probes, 1);
    assert_int_equal(r.stop, CF_STOP_MAX_PROBES);
    cf_search_result_free(&r);
    /* A wide margin: nothing can beat the measured best by 90 %. */
    o.max_probes = 20;
    o.margin = 0.9;
    assert_int_equal(cf_search_run(&o, &runner, &r), CF_OK);
    assert_int_equal(r.stop, CF_STOP_MARGIN);
    assert_true(r.chosen_measured);
    size_t wide = r.n_probes;
    cf_search_result_free(&r);
    /* A tight margin probes at least as much. */
    o.margin = 0.0;
    assert_int_equal(cf_search_run(&o, &runner, &r), CF_OK);
    assert_true(r.n_probes >= wide);
    cf_search_result_free(&r);
    free_problem(p);
}

static void test_runner_failures(void **state)
{
    (void)state;
    problem *p = new_problem(1.1, CF_OBJ_COST, 2);
    cf_search_options o;
    options_for(p, &o);
    runner_ctx ctx = {.p = p, .mode = RUN_FAIL_FIRST_PROFILE};
    cf_search_runner runner = {&ctx, probe, NULL};
    cf_search_result r;
    assert_int_equal(cf_search_run(&o, &runner, &r), CF_OK);
    assert_int_equal(r.n_failed, 1);
    assert_true(r.runs[0].failed);
    assert_int_equal(r.runs[0].attempts, 2); /* retried once */
    assert_non_null(strstr(r.runs[0].error, "exited with status 1"));
    assert_true(r.failed[r.runs[0].candidate]);
    assert_true(r.chosen >= 0 && r.chosen != (long)r.runs[0].candidate);
    for (size_t i = 1; i < r.n_runs; i++)
        assert_false(r.runs[i].candidate == r.runs[0].candidate); /* never tried again */
    cf_search_result_free(&r);
    /* The message is stored (search_probes.error) as text: it quotes the
     * runner's output, raw (ESC, a byte that is not UTF-8) and long (cut
     * at the field's size inside an 'é', the row was not UTF-8). */
    for (int shift = 0; shift < 2; shift++) {
        char message[600];
        int n = snprintf(message, sizeof message, "%s'fake': got '\x1b[31m\xff': ", shift ? "x" : "");
        while (n + 2 < (int)sizeof message)
            n += snprintf(message + n, sizeof message - (size_t)n, "\xc3\xa9");
        runner_ctx text = {.p = p, .mode = RUN_FAIL_FIRST_PROFILE, .fail_message = message};
        runner.ctx = &text;
        assert_int_equal(cf_search_run(&o, &runner, &r), CF_OK);
        assert_true(r.runs[0].failed);
        assert_int_equal(cf_utf8_invalid_at(r.runs[0].error), -1);
        assert_false(cf_has_controls(r.runs[0].error));
        assert_non_null(strstr(r.runs[0].error, "got '\\e[31m\\xff'"));
        cf_search_result_free(&r);
    }
    runner.ctx = &ctx;
    /* A failure that goes away on the retry is not a failed configuration. */
    runner_ctx flaky = {.p = p, .mode = RUN_FLAKY};
    runner.ctx = &flaky;
    assert_int_equal(cf_search_run(&o, &runner, &r), CF_OK);
    assert_int_equal(r.n_failed, 0);
    for (size_t i = 0; i < r.n_runs; i++) {
        assert_int_equal(r.runs[i].attempts, 2);
        assert_true(isfinite(r.runs[i].measured_step_s));
    }
    cf_search_result_free(&r);
    free_problem(p);
}

/* A noisy run can put the best configuration just over the budget: the
 * search measures it again rather than settle for a worse one. The budget
 * leaves the oracle 3 % of room; its first high_runs runs read high_factor
 * × its truth, every other run is exact: it is measured again (at least
 * min_runs times in all) until safe, and picked without a miss. */
static void check_remeasured(double high_factor, int high_runs, int min_runs)
{
    problem *p = new_problem(1.0, CF_OBJ_TIME, 2);
    cf_search_options o;
    options_for(p, &o);
    cf_search_result none = {.chosen = -1};
    cf_search_score sc;
    assert_int_equal(cf_search_score_against(&o, p->truth, &none, &sc), CF_OK);
    assert_true(sc.oracle >= 0);
    p->spec.search.budget_usd = 1.03 * sc.oracle_usd;
    assert_int_equal(cf_search_score_against(&o, p->truth, &none, &sc), CF_OK);
    long oracle = sc.oracle;
    runner_ctx ctx = {.p = p, .mode = RUN_FIRST_HIGH, .high_candidate = oracle, .high_factor = high_factor,
                      .high_runs = high_runs};
    cf_search_runner runner = {&ctx, probe, NULL};
    cf_search_result r;
    assert_int_equal(cf_search_run(&o, &runner, &r), CF_OK);
    int runs_of_oracle = 0;
    for (size_t i = 0; i < r.n_runs; i++)
        runs_of_oracle += r.runs[i].candidate == (size_t)oracle;
    assert_true(runs_of_oracle >= min_runs);
    assert_int_equal(r.chosen, oracle);
    assert_int_equal(cf_search_score_against(&o, p->truth, &r, &sc), CF_OK);
    assert_false(sc.miss);
    cf_search_result_free(&r);
    free_problem(p);
}

/* One run reads 4 % high (cost 1 % over). */
static void test_remeasures_a_noisy_near_miss(void **state)
{
    (void)state;
    check_remeasured(1.04, 1, 2);
}

/* Two unlucky runs put it 3.5 % over: the repeats go on past two (each
 * narrows the noise, noise/√n) until it is safe at the stated confidence,
 * instead of leaving it at the mean of its first two. */
static void test_remeasures_past_two_runs(void **state)
{
    (void)state;
    check_remeasured(1.035, 2, 3);
}

static void run_seeded(const problem *p, cf_search_method method, unsigned long seed, cf_search_result *r)
{
    cf_search_options o;
    options_for(p, &o);
    o.method = method;
    o.seed = seed;
    runner_ctx ctx = {.p = p, .rng = gsl_rng_alloc(gsl_rng_mt19937), .noise_sd = 0.02};
    gsl_rng_set(ctx.rng, seed);
    cf_search_runner runner = {&ctx, probe, NULL};
    assert_int_equal(cf_search_run(&o, &runner, r), CF_OK);
    gsl_rng_free(ctx.rng);
}

static int same_runs(const cf_search_result *a, const cf_search_result *b)
{
    if (a->n_runs != b->n_runs || a->chosen != b->chosen)
        return 0;
    for (size_t i = 0; i < a->n_runs; i++)
        if (a->runs[i].candidate != b->runs[i].candidate || a->runs[i].measured_step_s != b->runs[i].measured_step_s)
            return 0;
    return 1;
}

static void test_deterministic_for_a_seed(void **state)
{
    (void)state;
    problem *p = new_problem(1.2, CF_OBJ_TIME, 2);
    for (int m = 0; m < 2; m++) {
        cf_search_method method = m ? CF_SEARCH_PLAIN_BO : CF_SEARCH_CLOUDFIT;
        cf_search_result a, b, c;
        run_seeded(p, method, 7, &a);
        run_seeded(p, method, 7, &b);
        assert_true(same_runs(&a, &b));
        run_seeded(p, method, 8, &c);
        assert_false(same_runs(&a, &c)); /* the noise (and BO's starts) follow the seed */
        cf_search_result_free(&a);
        cf_search_result_free(&b);
        cf_search_result_free(&c);
    }
    free_problem(p);
}

static void test_score_and_accounting(void **state)
{
    (void)state;
    problem *p = new_problem(1.0, CF_OBJ_COST, 1.5);
    cf_search_options o;
    options_for(p, &o);
    runner_ctx ctx = {.p = p};
    cf_search_runner runner = {&ctx, probe, NULL};
    cf_search_result r;
    assert_int_equal(cf_search_run(&o, &runner, &r), CF_OK);
    cf_search_score sc;
    assert_int_equal(cf_search_score_against(&o, p->truth, &r, &sc), CF_OK);
    /* Runs do real work: overhead is at most their cost, and the profile
     * and probe costs add up to the runs'. */
    double sum = 0;
    for (size_t i = 0; i < r.n_runs; i++) {
        sum += r.runs[i].cost_usd;
        assert_true(r.runs[i].progress > 0 && r.runs[i].progress < 1);
    }
    assert_float_equal(sum, r.profile_cost_usd + r.probe_cost_usd, 1e-12);
    assert_true(r.overhead_usd >= 0 && r.overhead_usd <= sum + 1e-12);
    /* Choosing the oracle is zero regret; a pick past the deadline by more
     * than 3 % is a miss. */
    long keep = r.chosen;
    r.chosen = sc.oracle;
    assert_int_equal(cf_search_score_against(&o, p->truth, &r, &sc), CF_OK);
    assert_float_equal(sc.regret, 0, 1e-12);
    assert_false(sc.miss);
    long slow = -1;
    for (size_t i = 0; i < p->n; i++) {
        double h, u;
        cf_search_job(&o, &p->cands[i], p->truth[i], &h, &u);
        if (h > 1.04 * p->spec.search.deadline_hours)
            slow = (long)i;
    }
    assert_true(slow >= 0);
    r.chosen = slow;
    assert_int_equal(cf_search_score_against(&o, p->truth, &r, &sc), CF_OK);
    assert_true(sc.miss);
    r.chosen = keep;
    cf_search_result_free(&r);
    free_problem(p);
}

/* What `search` shows beyond its runs is computed once by the library
 * (its renderers compute nothing, tests/layout): the pick's intervals, the
 * spec's training.current with its time and cost, the probes' prediction
 * errors, and the advice explained as `recommend`'s is. */
static void test_summary_and_explained(void **state)
{
    (void)state;
    problem *p = new_problem(1.0, CF_OBJ_COST, 1.5);
    p->spec.job.has_current = 1;
    snprintf(p->spec.job.current_gpu, sizeof p->spec.job.current_gpu, "x"); /* any case, as the spec gives it */
    p->spec.job.current_nodes = 2;
    p->spec.job.current_gpus_per_node = 4;
    static cf_vm vms[2]; /* the catalog rows behind the candidates (cf_search_catalog_candidates) */
    for (int k = 0; k < 2; k++) {
        snprintf(vms[k].gpu_model, sizeof vms[k].gpu_model, "X");
        snprintf(vms[k].instance_type, sizeof vms[k].instance_type, "x%d", k ? 4 : 1);
        vms[k].gpu_count = k ? 4 : 1;
        vms[k].network_gbps = 25;
    }
    for (size_t i = 0; i < p->n; i++)
        p->cands[i].vm = &vms[p->cands[i].gpus_per_node == 4];
    cf_search_options o;
    options_for(p, &o);
    runner_ctx ctx = {.p = p};
    cf_search_runner runner = {&ctx, probe, NULL};
    cf_search_result r;
    assert_int_equal(cf_search_run(&o, &runner, &r), CF_OK);
    assert_true(r.chosen >= 0);
    cf_search_summary sum;
    assert_int_equal(cf_search_summarise(&p->spec.job, &o, &r, &sum), CF_OK);
    assert_true(sum.chosen_hours_p10 < r.chosen_hours && r.chosen_hours < sum.chosen_hours_p90);
    assert_true(sum.chosen_usd_p10 < r.chosen_usd && r.chosen_usd < sum.chosen_usd_p90);
    /* training.current: 2 × 4, the per-GPU batch nearest 64 / 8 */
    assert_true(sum.current >= 0);
    const cf_search_candidate *cur = &p->cands[sum.current];
    assert_int_equal(cur->nodes, 2);
    assert_int_equal(cur->gpus_per_node, 4);
    assert_int_equal(cur->local_batch, 16);
    assert_non_null(strstr(sum.current_note, "2 × 4 x"));
    double h, u;
    cf_search_job(&o, cur, r.est_step_s[sum.current], &h, &u);
    assert_float_equal(sum.current_hours, h, 0);
    assert_float_equal(sum.current_usd, u, 0);
    /* the prediction errors of the runs that had an estimate first */
    double errors[256];
    size_t n = 0;
    for (size_t i = 0; i < r.n_runs && n < 256; i++)
        if (isfinite(r.runs[i].predicted_step_s) && isfinite(r.runs[i].measured_step_s))
            errors[n++] = r.runs[i].predicted_step_s / r.runs[i].measured_step_s - 1;
    assert_true(n > 0);
    cf_ape_stats want = cf_ape_summarise(errors, n);
    assert_int_equal(sum.prediction.n, want.n);
    assert_float_equal(sum.prediction.median_ape, want.median_ape, 0);
    assert_float_equal(sum.prediction.p90_ape, want.p90_ape, 0);
    /* no training.current: none, and nothing to say */
    p->spec.job.has_current = 0;
    assert_int_equal(cf_search_summarise(&p->spec.job, &o, &r, &sum), CF_OK);
    assert_int_equal(sum.current, -1);
    assert_string_equal(sum.current_note, "");
    /* the advice over the search's estimates is explained: the pick's plan */
    cf_advice advice;
    assert_int_equal(cf_search_advice(&o, &r, &p->noise, 5, &advice), CF_OK);
    assert_non_null(advice.explained);
    assert_non_null(cf_advice_elastic(&advice, &advice.ranked[0]));
    assert_int_equal(cf_advice_elastic(&advice, &advice.ranked[0])->max_nodes, advice.ranked[0].nodes);
    cf_advice_free(&advice);
    cf_search_result_free(&r);
    free_problem(p);
}

static void test_error_model(void **state)
{
    (void)state;
    /* Three candidates on a line, one far away and of another GPU type. */
    double x[4 * CF_GP_FEATURES] = {0, 0, 4, 0, 0, 0, 4.5, 0, 0, 0, 12, 0, 0, 0, 4, 0};
    int type[4] = {0, 0, 0, 1};
    double sd[4] = {0.1, 0.1, 0.1, 0.1}, nugget[4] = {0, 0, 0, 0};
    cf_gp gp = {.n = 4, .x = x, .type = type, .prior_sd = sd, .nugget_sd = nugget,
                .length = {1, 1, 1, 1}, .cross_type_corr = 0.0, .noise_var = 1e-6};
    size_t obs[1] = {0};
    double y[1] = {0.08}, mean[4], post_sd[4];
    assert_int_equal(cf_gp_posterior(&gp, obs, y, 1, mean, post_sd), CF_OK);
    assert_float_equal(mean[0], 0.08, 1e-3);  /* interpolates the observation */
    assert_true(post_sd[0] < 0.002);
    assert_true(mean[1] > 0.05 && mean[1] < 0.08); /* a near neighbour follows */
    assert_true(post_sd[1] < 0.1 && post_sd[1] > post_sd[0]);
    assert_float_equal(mean[2], 0, 1e-6);     /* far away: the prior */
    assert_float_equal(post_sd[2], 0.1, 1e-6);
    assert_float_equal(mean[3], 0, 1e-12);    /* other GPU type, uncorrelated here */
    /* A nugget keeps unmeasured neighbours uncertain. */
    double nug[4] = {0.05, 0.05, 0.05, 0.05};
    gp.nugget_sd = nug;
    assert_int_equal(cf_gp_posterior(&gp, obs, y, 1, mean, post_sd), CF_OK);
    assert_true(post_sd[1] >= 0.05);
}

static void test_bad_options(void **state)
{
    (void)state;
    problem *p = malloc(sizeof *p);
    make_problem(p, 1.0);
    cf_search_options o;
    options_for(p, &o);
    runner_ctx ctx = {.p = p};
    cf_search_runner runner = {&ctx, probe, NULL};
    cf_search_result r;
    o.n_candidates = 0;
    assert_int_equal(cf_search_run(&o, &runner, &r), CF_ERR_INVALID);
    cf_search_result_free(&r);
    options_for(p, &o);
    o.margin = 1.5;
    assert_int_equal(cf_search_run(&o, &runner, &r), CF_ERR_INVALID);
    cf_search_result_free(&r);
    /* Nothing can meet an impossible deadline. */
    options_for(p, &o);
    p->spec.search.deadline_hours = 1e-6;
    assert_int_equal(cf_search_run(&o, &runner, &r), CF_ERR_INFEASIBLE);
    assert_int_equal(r.chosen, -1);
    cf_search_result_free(&r);
    free_problem(p);
}

/* A runner that starts real VMs profiles each GPU type once: at most
 * CF_SEARCH_MAX_PROFILED_GPU_TYPES of them (names in any case). */
static void test_profiled_gpu_types(void **state)
{
    (void)state;
    static const char *const gpus[] = {"T4", "t4", "V100", "A10G", "L4", "l4", "A100", "H100"};
    cf_search_candidate c[8];
    memset(c, 0, sizeof c);
    for (size_t i = 0; i < 8; i++)
        snprintf(c[i].gpu, sizeof c[i].gpu, "%s", gpus[i]);
    assert_int_equal(cf_search_check_gpu_types(c, 0), CF_OK);
    assert_int_equal(cf_search_check_gpu_types(c, 6), CF_OK); /* T4, V100, A10G, L4 */
    assert_int_equal(cf_search_check_gpu_types(c, 7), CF_ERR_USAGE);
    assert_string_equal(cf_error_message(),
                        "the exec runner would profile more than 4 GPU types (each costs a profile)");
    assert_non_null(strstr(cf_error_hint_text(), "--gpu"));
    cf_error_clear();
}

/* The 2-node probe: 2 × 1 at the smallest and largest batch where it can
 * run; a runner that offers only whole multi-GPU VMs gets 2 VMs at the
 * fewest GPUs each instead, one without 2-VM shapes the fewest VMs above
 * one (without any multi-node run the network would stay the default);
 * none without multi-node candidates. */
static void test_two_node_probe_shape(void **state)
{
    (void)state;
    cf_search_candidate c[12];
    memset(c, 0, sizeof c);
    size_t n = 0;
    static const int shapes[][2] = {{1, 8}, {2, 8}, {2, 4}, {4, 8}};
    static const int batches[] = {16, 64, 256};
    for (size_t s = 0; s < 4; s++)
        for (size_t b = 0; b < 3; b++) {
            cf_search_candidate *k = &c[n++];
            snprintf(k->gpu, sizeof k->gpu, "A100");
            k->nodes = shapes[s][0];
            k->gpus_per_node = shapes[s][1];
            k->local_batch = batches[b];
            k->usd_per_node_hr = 10;
        }
    unsigned char excluded[12] = {0};
    size_t out[2], n_out = 9;
    assert_int_equal(cf_search_two_node_probe(c, n, "A100", excluded, out, &n_out), CF_OK);
    assert_int_equal(n_out, 2);
    for (size_t i = 0; i < n_out; i++) {
        assert_int_equal(c[out[i]].nodes, 2);
        assert_int_equal(c[out[i]].gpus_per_node, 4); /* the fewest GPUs per VM on 2 VMs */
    }
    assert_int_equal(c[out[0]].local_batch + c[out[1]].local_batch, 16 + 256);
    /* with a 2 × 1 shape it is that one */
    c[3].gpus_per_node = c[4].gpus_per_node = c[5].gpus_per_node = 1;
    assert_int_equal(cf_search_two_node_probe(c, n, "A100", excluded, out, &n_out), CF_OK);
    assert_int_equal(n_out, 2);
    assert_int_equal(c[out[0]].gpus_per_node, 1);
    /* no 2-VM shape at all: the fewest VMs above one (a trace without
     * 2-VM rows) */
    for (size_t i = 3; i < 9; i++)
        excluded[i] = 1;
    assert_int_equal(cf_search_two_node_probe(c, n, "A100", excluded, out, &n_out), CF_OK);
    assert_int_equal(n_out, 2);
    assert_int_equal(c[out[0]].nodes, 4);
    /* no multi-node candidate of this GPU type: no probe */
    assert_int_equal(cf_search_two_node_probe(c, n, "H100", excluded, out, &n_out), CF_OK);
    assert_int_equal(n_out, 0);
}

/* The search holds the deadline and budget at the spec's confidence. */
static void test_options_for_spec(void **state)
{
    (void)state;
    cf_job job;
    cf_constraints limits;
    cf_noise_model noise;
    memset(&job, 0, sizeof job);
    memset(&limits, 0, sizeof limits);
    memset(&noise, 0, sizeof noise);
    cf_search_options o;
    cf_search_options_for(&o, &job, &limits, &noise);
    assert_ptr_equal(o.job, &job);
    assert_ptr_equal(o.constraints, &limits);
    assert_ptr_equal(o.noise, &noise);
    assert_true(fabs(o.safety_sds - 1.2815515655446004) < 1e-6); /* 0.9 when the spec says nothing */
    assert_int_equal(o.max_probes, 12);
    limits.confidence = 0.5;
    cf_search_options_for(&o, &job, &limits, &noise);
    assert_true(fabs(o.safety_sds) < 1e-6);
    limits.confidence = 0.975;
    cf_search_options_for(&o, &job, &limits, &noise);
    assert_true(fabs(o.safety_sds - 1.959964) < 1e-4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_finds_known_optimum),  cmocka_unit_test(test_model_alone_is_fooled),
        cmocka_unit_test(test_stopping_rules),       cmocka_unit_test(test_runner_failures),
        cmocka_unit_test(test_probes_before_calling_infeasible),
        cmocka_unit_test(test_remeasures_a_noisy_near_miss), cmocka_unit_test(test_remeasures_past_two_runs),
        cmocka_unit_test(test_deterministic_for_a_seed), cmocka_unit_test(test_score_and_accounting),
        cmocka_unit_test(test_summary_and_explained),
        cmocka_unit_test(test_error_model),          cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_profiled_gpu_types),   cmocka_unit_test(test_options_for_spec),
        cmocka_unit_test(test_two_node_probe_shape), cmocka_unit_test(test_progress_bound_holds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
