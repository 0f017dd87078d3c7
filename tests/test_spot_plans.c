/* Spot and mixed plans over the whole embedded catalog (issue 27): every
 * figure of every spot or mixed configuration that cf_advise ranks, puts
 * on the Pareto front or shows as the best spot plan is a quantile of the
 * plan's one distribution — the point is its median and lies inside its
 * p10–p90, the deadline and budget hold at its check quantile for the
 * confidence asked, and spot only never returns a plan that needs on-demand
 * VMs. Two example specs (no measurement files: every GPU estimated), spot
 * allowed and spot only, three confidences. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cloudfit/advisor.h"
#include "cloudfit/advisor/inputs.h"
#include "cloudfit/pricing.h"
#include "cloudfit/spec.h"
#include "../advisor/advisor_internal.h"

static size_t check_config(const cf_config *c, const cf_constraints *k, double confidence)
{
    assert_true(c->hours_p10 <= c->hours * (1 + 1e-12) && c->hours <= c->hours_p90 * (1 + 1e-12));
    assert_true(c->total_usd_p10 <= c->total_usd * (1 + 1e-12) && c->total_usd <= c->total_usd_p90 * (1 + 1e-12));
    if (k->deadline_hours > 0)
        assert_true(c->hours_at_confidence <= k->deadline_hours + 1e-6);
    if (k->budget_usd > 0)
        assert_true(c->usd_at_confidence <= k->budget_usd + 1e-9);
    /* spot only: never an on-demand configuration, nor one that falls back to on-demand VMs */
    if (k->spot == CF_SPOT_ONLY)
        assert_true(c->spot && !c->mixed);
    if (!c->spot)
        return 0;
    const cf_spot_spread *d = cf_config_spot_spread(c);
    assert_non_null(d);
    assert_true(c->hours == d->p50_h && c->hours_p10 == d->p10_h && c->hours_p90 == d->p90_h);
    assert_true(c->total_usd == d->p50_usd && c->total_usd_p10 == d->p10_usd && c->total_usd_p90 == d->p90_usd);
    assert_true(c->hours_at_confidence == d->q_h && c->usd_at_confidence == d->q_usd);
    assert_float_equal(c->spot_est.confidence, confidence, 1e-12);
    assert_float_equal(c->spot_est.check_quantile, 1 - (1 - confidence) / 2, 1e-12);
    assert_float_equal(d->q, c->spot_est.check_quantile, 1e-12);
    return 1;
}

static void plans_of(const char *example, cf_spot_policy policy, double deadline_h, double confidence,
                     size_t *spot_rows)
{
    cf_spec spec;
    char path[1024];
    snprintf(path, sizeof path, "%s/examples/%s", CF_SOURCE_DIR, example);
    assert_int_equal(cf_spec_load_file(path, &spec), CF_OK);
    cf_catalog catalog;
    assert_int_equal(cf_catalog_load_embedded(&catalog), CF_OK);
    spec.search.spot = policy;
    spec.search.confidence = confidence;
    if (deadline_h > 0)
        spec.search.deadline_hours = deadline_h;
    cf_catalog_filter_storage fs;
    cf_catalog_filter_from(&spec.search, policy, &fs);
    const cf_vm **rows = malloc(catalog.n_vms * sizeof *rows);
    size_t n_rows = cf_catalog_filter_rows(&catalog, &fs.filter, rows);
    cf_inputs_request request = {.job = &spec.job, .gpus = catalog.gpus, .n_gpus = catalog.n_gpus,
                                 .vms = catalog.vms, .n_vms = catalog.n_vms, .candidates = rows,
                                 .n_candidates = n_rows, .noise_trace = spec.noise_trace,
                                 .n_noise_trace = spec.n_noise_trace,
                                 .noise_scale = spec.has_noise_scale ? spec.noise_scale : 0};
    cf_inputs inputs;
    assert_int_equal(cf_inputs_build(&request, &inputs), CF_OK);
    cf_advisor_input in = {.job = &spec.job, .constraints = &spec.search, .vms = rows, .n_vms = n_rows,
                           .perf = inputs.perf, .n_perf = inputs.n_perf, .noise = &inputs.noise, .top = 10};
    cf_advice advice;
    cf_status st = cf_advise(&in, &advice);
    assert_int_equal(st, CF_OK);
    for (size_t i = 0; i < advice.n_ranked; i++)
        *spot_rows += check_config(&advice.ranked[i], &spec.search, confidence);
    for (size_t i = 0; i < advice.n_pareto; i++)
        *spot_rows += check_config(&advice.pareto[i], &spec.search, confidence);
    if (advice.have_best_spot)
        *spot_rows += check_config(&advice.best_spot, &spec.search, confidence);
    cf_advice_free(&advice);
    cf_inputs_free(&inputs);
    free(rows);
    cf_catalog_free(&catalog);
    cf_spec_free(&spec);
}

static void test_every_spot_plan_is_one_distribution(void **state)
{
    (void)state;
    static const char *const examples[] = {"gpt2-124m-openwebtext.json", "mlp-synthetic.json"};
    static const double confidences[] = {0.5, 0.9, 0.99};
    size_t spot_rows = 0;
    for (size_t e = 0; e < 2; e++)
        for (size_t c = 0; c < 3; c++) {
            plans_of(examples[e], CF_SPOT_ALLOW, 0, confidences[c], &spot_rows);
            plans_of(examples[e], CF_SPOT_ONLY, 1000, confidences[c], &spot_rows); /* spot alone: a loose deadline */
        }
    print_message("%zu spot or mixed configurations checked\n", spot_rows);
    assert_true(spot_rows >= 50);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_spot_plan_is_one_distribution),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
