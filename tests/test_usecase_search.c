/* cf_search_session_run, the library's `search`, with the trace runner on
 * the rows the CLI tests use (tests/data/search-t4-imagenet.csv, real
 * Pollux T4 rows) and the spec tests/search/test_search_cli.py writes. The
 * expected figures are what `cloudfit search SPEC --runner trace:... -f json
 * --max-probes 4` prints and stores for them (the trace's noise is seeded:
 * the run is deterministic). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cloudfit/usecase/search.h"

#define TRACE "trace:" CF_SOURCE_DIR "/tests/data/search-t4-imagenet.csv"
#define SPEC_TEXT                                                                                                   \
    "{\"name\": \"imagenet\", \"model\": {\"parameters\": 25557032}, \"data\": {\"samples\": 1281167},"              \
    " \"training\": {\"epochs\": 90, \"batch\": 200, \"lr\": 0.08, \"optimizer\": \"momentum\","                     \
    " \"current\": {\"gpu\": \"T4\", \"gpus_per_node\": 4, \"nodes\": 1}}, \"profile\": {\"noise_scale\": 4000},"    \
    " \"search\": {\"objective\": \"cost\", \"deadline_hours\": %g}}"

typedef struct {
    cf_spec spec;
    cf_catalog_source src;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    assert_int_equal(cf_catalog_source_open(NULL, -1, NULL, &f->src), CF_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    cf_catalog_source_close(&f->src);
    free(f);
    return 0;
}

static void load_spec(fixture *f, double deadline_hours)
{
    char text[1024];
    snprintf(text, sizeof text, SPEC_TEXT, deadline_hours);
    assert_int_equal(cf_spec_parse(text, strlen(text), "imagenet.json", &f->spec), CF_OK);
}

static int progress_calls;
static void on_progress(void *ctx, double done, double total, const char *unit, const char *what)
{
    (void)ctx, (void)done, (void)total, (void)unit, (void)what;
    progress_calls++;
}

/* The cloudfit method, at most 4 probes: 7 profile runs, 3 probes (then no
 * untried configuration could beat the pick by the margin), the oracle's
 * pick (regret 0), its history row. */
static void test_trace_search_matches_cli(void **state)
{
    fixture *f = *state;
    load_spec(f, 30);
    progress_calls = 0;
    cf_search_session_request req = {.spec = &f->spec, .catalog_source = &f->src, .runner = TRACE,
                                      .trace_noise_sd = -1, .max_probes = 4, .progress = on_progress};
    cf_search_session s;
    if (cf_search_session_run(&req, &s) != CF_OK)
        fail_msg("cf_search_session_run: %s", cf_error_message());
    assert_int_equal(cf_search_session_verdict(&s), CF_OK);
    /* rows and configurations apart: 75 + 0 + the 25 rows of the 25 configurations without a price = 100 */
    assert_string_equal(s.runner_note, "trace: model 'imagenet', 100 rows: 75 symmetric configurations from 75 rows "
                                       "(0 rows asymmetric; 25 configurations without a price, 0 left out by the "
                                       "filters), noise 2.0%");
    assert_int_equal(s.result.n_runs, 10);
    assert_int_equal(s.result.n_probes, 3);
    assert_int_equal(s.result.stop, CF_STOP_MARGIN);
    assert_int_equal(progress_calls, 10);
    assert_true(s.result.chosen >= 0);
    cf_search_record rec;
    cf_search_session_record(&s, "{}", &rec);
    assert_int_equal(rec.has_chosen, 1);
    assert_string_equal(rec.instance_type, "g4dn.xlarge");
    assert_int_equal(rec.nodes, 8);
    assert_int_equal(rec.local_batch, 163);
    assert_true(fabs(rec.total_usd - 102.506324904812) < 1e-9);
    assert_true(fabs(rec.step_time_s - 0.813875176385051) < 1e-12);
    assert_true(rec.regret_pct == 0);
    assert_string_equal(rec.method, "cloudfit");
    assert_string_equal(rec.runner, TRACE);
    assert_string_equal(s.probes[0].kind, "profile");
    assert_int_equal(s.probes[0].local_batch, 20);
    assert_true(fabs(s.probes[0].measured_step_time_s - 0.14831527226083) < 1e-12);
    assert_string_equal(s.probes[9].kind, "probe");
    assert_string_equal(s.probes[9].instance_type, "g4dn.xlarge");
    assert_int_equal(s.probes[9].local_batch, 81);
    /* the final recommendation, computed once: what render/ shows */
    assert_ptr_equal(s.report.advice, &s.advice);
    assert_true(s.advice.n_ranked > 0);
    assert_int_equal(s.advice.ranked[0].nodes, 8);
    cJSON *doc = cf_search_document(&s.search_report, &f->spec, &s.report);
    assert_non_null(doc);
    const cJSON *overall = cJSON_GetObjectItemCaseSensitive(doc, "overall");
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(overall, "probe_count")->valueint, 3);
    cJSON_Delete(doc);
    cf_search_session_free(&s);
    cf_spec_free(&f->spec);
}

/* training.current.gpu in a tool's spelling ("Tesla T4": docs/spec.md takes
 * one) is the same configuration as "T4": the savings against it were
 * silently left out (the name was compared with the candidates' table
 * model as a string). */
static void test_current_gpu_in_a_tools_spelling(void **state)
{
    fixture *f = *state;
    const char *names[] = {"T4", "Tesla T4"};
    long found[2];
    double usd[2];
    for (int i = 0; i < 2; i++) {
        char text[1024], spec_text[1100];
        snprintf(text, sizeof text, SPEC_TEXT, 30.0);
        const char *key = "\"gpu\": \"T4\"";
        const char *at = strstr(text, key);
        assert_non_null(at);
        snprintf(spec_text, sizeof spec_text, "%.*s\"gpu\": \"%s\"%s", (int)(at - text), text, names[i],
                 at + strlen(key));
        assert_int_equal(cf_spec_parse(spec_text, strlen(spec_text), "imagenet.json", &f->spec), CF_OK);
        cf_search_session_request req = {.spec = &f->spec, .catalog_source = &f->src, .runner = TRACE,
                                          .trace_noise_sd = -1, .max_probes = 4};
        cf_search_session s;
        if (cf_search_session_run(&req, &s) != CF_OK)
            fail_msg("cf_search_session_run: %s", cf_error_message());
        found[i] = s.summary.current;
        usd[i] = s.summary.current_usd;
        cf_search_session_free(&s);
        cf_spec_free(&f->spec);
    }
    assert_true(found[0] >= 0);
    assert_int_equal(found[1], found[0]);
    assert_true(usd[1] == usd[0]);
}

/* --method model with --price: a priced GPU the catalog does not sell, no probes. */
static void test_model_only_with_price(void **state)
{
    fixture *f = *state;
    load_spec(f, 30);
    cf_search_method method = CF_SEARCH_MODEL_ONLY;
    cf_search_price price = {.gpu = "T4", .usd_per_gpu_hr = 0.5};
    cf_search_session_request req = {.spec = &f->spec, .catalog_source = &f->src, .runner = TRACE,
                                      .trace_noise_sd = -1, .method = &method, .prices = &price, .n_prices = 1};
    cf_search_session s;
    if (cf_search_session_run(&req, &s) != CF_OK)
        fail_msg("cf_search_session_run: %s", cf_error_message());
    assert_int_equal(s.result.n_probes, 0);
    assert_true(s.result.chosen >= 0);
    const cf_search_candidate *c = &s.options.candidates[s.result.chosen];
    assert_non_null(strstr(c->vm->instance_type, "(--price)"));
    assert_true(fabs(c->vm->price_ondemand_usd_per_hr - 0.5 * c->gpus_per_node) < 1e-9);
    cf_search_session_free(&s);
    cf_spec_free(&f->spec);
}

/* A deadline nothing meets: the result is complete (and shown), the
 * verdict says why it failed. */
static void test_infeasible_result_then_verdict(void **state)
{
    fixture *f = *state;
    load_spec(f, 0.5);
    cf_search_session_request req = {.spec = &f->spec, .catalog_source = &f->src, .runner = TRACE,
                                      .trace_noise_sd = -1};
    cf_search_session s;
    assert_int_equal(cf_search_session_run(&req, &s), CF_OK);
    assert_int_equal(s.infeasible, 1);
    assert_true(s.result.chosen < 0);
    assert_true(s.result.n_runs > 0);
    assert_int_equal(cf_search_session_verdict(&s), CF_ERR_INFEASIBLE);
    /* how far the closest misses, by the search's estimates (the fastest: no deadline met even at its estimate) */
    assert_non_null(strstr(cf_error_message(), "no configuration finishes within 0.5 h by the search's estimates: the fastest, "));
    cJSON *doc = cf_search_document(&s.search_report, &f->spec, NULL);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(doc, "chosen")));
    cJSON_Delete(doc);
    cf_error_clear();
    cf_search_session_free(&s);
    cf_spec_free(&f->spec);
}

/* Runners that cannot be opened: the message names what is wrong. */
static void test_runner_errors(void **state)
{
    fixture *f = *state;
    load_spec(f, 30);
    cf_search_session s;
    cf_search_session_request req = {.spec = &f->spec, .catalog_source = &f->src, .runner = TRACE,
                                      .trace_noise_sd = -1, .trace_model = "nosuchmodel"};
    assert_int_not_equal(cf_search_session_run(&req, &s), CF_OK);
    assert_non_null(strstr(cf_error_message(), "'nosuchmodel'"));
    cf_search_session_free(&s);
    req = (cf_search_session_request){.spec = &f->spec, .catalog_source = &f->src,
                                      .runner = "exec:/bin/true {nodes} {bogus}"};
    assert_int_not_equal(cf_search_session_run(&req, &s), CF_OK); /* every GPU type of the catalog */
    assert_non_null(strstr(cf_error_message(), "more than 4 GPU types"));
    cf_search_session_free(&s);
    snprintf(f->spec.search.gpus[0], sizeof f->spec.search.gpus[0], "T4");
    f->spec.search.n_gpus = 1;
    assert_int_not_equal(cf_search_session_run(&req, &s), CF_OK);
    assert_non_null(strstr(cf_error_message(), "{bogus}"));
    cf_search_session_free(&s);
    req.runner = "ssh:somewhere";
    assert_int_equal(cf_search_session_run(&req, &s), CF_ERR_INVALID);
    cf_search_session_free(&s);
    cf_error_clear();
    cf_spec_free(&f->spec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_trace_search_matches_cli, setup, teardown),
        cmocka_unit_test_setup_teardown(test_model_only_with_price, setup, teardown),
        cmocka_unit_test_setup_teardown(test_current_gpu_in_a_tools_spelling, setup, teardown),
        cmocka_unit_test_setup_teardown(test_infeasible_result_then_verdict, setup, teardown),
        cmocka_unit_test_setup_teardown(test_runner_errors, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
