/* `profile` as a library call (usecase/profile.c) on a real SQLite file in
 * a temporary folder: a light profile and the 2-node probe through the
 * trace runner (the recorded T4 measurements), stored with
 * cf_profile_store and read back from the profile cache; --resume through
 * the caller's handle: nothing stored, and a stored profile with nothing
 * failed (returned unchanged, nothing run). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cloudfit/db/profiles.h"
#include "cloudfit/usecase/profile.h"

#define TRACE "trace:tests/data/search-t4-imagenet.csv"

static char dir[] = "/tmp/cloudfit-test-usecase-profile-XXXXXX";
static char db_path[128], spec_path[128];
static int warnings;

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(dir))
        return -1;
    snprintf(db_path, sizeof db_path, "%s/history.db", dir);
    snprintf(spec_path, sizeof spec_path, "%s/imagenet.json", dir);
    FILE *f = fopen(spec_path, "w");
    if (!f)
        return -1;
    /* the spec tests/profiler/test_profile_runner.py profiles */
    fputs("{\"name\": \"imagenet\", \"model\": {\"parameters\": 25557032}, \"data\": {\"samples\": 1281167},"
          " \"training\": {\"epochs\": 90, \"batch\": 200, \"lr\": 0.08, \"optimizer\": \"momentum\"},"
          " \"profile\": {\"noise_scale\": 4000}, \"search\": {\"objective\": \"cost\", \"deadline_hours\": 30}}\n",
          f);
    return fclose(f) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void count_warnings(void *ctx, cf_note_kind kind, const char *text)
{
    (void)ctx;
    (void)text;
    warnings += kind == CF_NOTE_WARNING;
}

static void load_spec(cf_spec *spec)
{
    cf_spec_overrides ov;
    cf_spec_overrides_init(&ov);
    assert_int_equal(cf_spec_load_effective(spec_path, &ov, spec), CF_OK);
}

static void test_trace_runner_profile_stored_and_read_back(void **state)
{
    (void)state;
    cf_spec spec;
    load_spec(&spec);
    cf_catalog catalog;
    assert_int_equal(cf_catalog_load_embedded(&catalog), CF_OK);
    cf_profile_request req = {.spec = &spec, .runner = TRACE, .catalog = &catalog,
                              .gpu = cf_catalog_gpu(&catalog, "T4"), .trace_noise_sd = 0, .seed = 1,
                              .note = count_warnings};
    assert_non_null(req.gpu);
    cf_profile_result res;
    warnings = 0;
    cf_status st = cf_profile_run(&req, &res);
    if (st != CF_OK)
        fail_msg("cf_profile_run: %s", cf_error_message());
    assert_int_equal(warnings, 0); /* the trace holds the 2-node runs: the probe runs */
    assert_string_equal(res.profile->backend, "trace");
    assert_string_equal(res.gpu_model, "T4");
    assert_true(res.n_light_planned > 0);
    assert_true(res.profile->n_runs >= (int)res.n_light_planned);
    int two_nodes = 0;
    for (int i = 0; i < res.profile->n_runs; i++)
        two_nodes |= res.profile->runs[i].nodes == 2;
    assert_true(two_nodes);
    char key[65];
    assert_int_equal(cf_spec_profile_key(&spec, key), CF_OK);
    assert_string_equal(res.profile->spec_key, key);

    cf_db *db = NULL;
    assert_int_equal(cf_db_open(db_path, &db), CF_OK);
    assert_int_equal(cf_profile_store(db, res.profile, NULL, 0), CF_OK);
    cf_cached_profile_list list = {0};
    assert_int_equal(cf_profile_cache_get(db, key, &list), CF_OK);
    assert_int_equal(list.n, 1);
    assert_string_equal(list.rows[0].backend, "trace");
    cf_profile_cache_list_free(&list);
    cf_db_close(db);
    cf_profile_result_free(&res);

    /* A GPU the trace has no rows of: the runner says so, nothing returned. */
    req.gpu = cf_catalog_gpu(&catalog, "H100");
    assert_non_null(req.gpu);
    assert_int_not_equal(cf_profile_run(&req, &res), CF_OK);
    cf_error_clear();
    cf_profile_result_free(&res);
    cf_catalog_free(&catalog);
    cf_spec_free(&spec);
}

static void test_resume_through_the_handle(void **state)
{
    (void)state;
    cf_spec spec;
    load_spec(&spec);
    cf_probe_backend exec;
    assert_int_equal(cf_probe_backend_by_name("exec", &exec), CF_OK);
    cf_db *db = NULL;
    assert_int_equal(cf_db_open(db_path, &db), CF_OK);
    /* Only a trace profile is stored: nothing of the exec backend to resume. */
    cf_profile_request req = {.spec = &spec, .backend = &exec, .resume = 1, .db = db, .db_name = "the-history",
                              .noise_micro_batches = -1};
    cf_profile_result res;
    assert_int_equal(cf_profile_run(&req, &res), CF_ERR_INVALID);
    assert_true(res.none_stored);
    assert_non_null(strstr(cf_error_message(), "no stored exec profile of 'imagenet' to resume"));
    cf_error_clear();
    cf_profile_result_free(&res);

    /* Store it as an exec profile with nothing failed: resume returns it, runs nothing. */
    char key[65];
    assert_int_equal(cf_spec_profile_key(&spec, key), CF_OK);
    cf_cached_profile_list list = {0};
    assert_int_equal(cf_profile_cache_get(db, key, &list), CF_OK);
    assert_int_equal(list.n, 1);
    cf_profile *p = calloc(1, sizeof *p);
    assert_non_null(p);
    assert_int_equal(cf_profile_from_json(list.rows[0].profile_json, p), CF_OK);
    cf_profile_cache_list_free(&list);
    snprintf(p->backend, sizeof p->backend, "exec");
    p->noise_failed = 0;
    assert_int_equal(cf_profile_store(db, p, NULL, 0), CF_OK);
    assert_int_equal(cf_profile_run(&req, &res), CF_OK);
    assert_true(res.nothing_to_resume);
    assert_string_equal(res.profile->backend, "exec");
    assert_int_equal(res.profile->n_runs, p->n_runs);
    cf_profile_result_free(&res);
    free(p);

    /* No database yet: nothing stored either. */
    req.db = NULL;
    assert_int_equal(cf_profile_run(&req, &res), CF_ERR_INVALID);
    assert_true(res.none_stored);
    cf_error_clear();
    cf_profile_result_free(&res);
    cf_db_close(db);
    cf_spec_free(&spec);
}

int main(void)
{
    setenv("SOURCE_DATE_EPOCH", "1795000000", 1);
    if (chdir(CF_SOURCE_DIR) != 0) {
        perror(CF_SOURCE_DIR);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_runner_profile_stored_and_read_back),
        cmocka_unit_test(test_resume_through_the_handle),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
