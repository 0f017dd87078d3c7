/* cf_recommend, the library's `recommend`, called as the CLI calls it on
 * the example spec the golden JSON files cover (tests/golden/test_golden.py:
 * `recommend --no-history -q -n 5 -f json` and `-n 3 -f json --objective
 * time`, the clock fixed by SOURCE_DATE_EPOCH, no database, the embedded
 * catalog), rendered by the renderer the CLI uses and compared byte for
 * byte with tests/golden/json.golden and baseline.json.golden. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cloudfit/common/fileio.h"
#include "cloudfit/usecase/recommend.h"

#define SPEC "examples/resnet50-imagenet.json" /* relative, as the golden run names it */

/* The JSON document `recommend -f json` prints for the spec with `ov`,
 * ranking `top` configurations; caller frees. */
static char *recommend_json(const cf_spec_overrides *ov, size_t top)
{
    cf_spec spec;
    assert_int_equal(cf_spec_load_effective(SPEC, ov, &spec), CF_OK);
    cf_catalog_source src;
    assert_int_equal(cf_catalog_source_open(NULL, -1, NULL, &src), CF_OK);
    cf_recommend_request req = {.spec = &spec, .catalog_source = &src, .top = top};
    cf_recommend_result res;
    cf_status st = cf_recommend(&req, &res);
    if (st != CF_OK)
        fail_msg("cf_recommend: %s", cf_error_message());
    cJSON *doc = cf_report_json(&res.report);
    assert_non_null(doc);
    char *pretty = cJSON_Print(doc);
    assert_non_null(pretty);
    size_t n = strlen(pretty);
    char *text = malloc(n + 2);
    assert_non_null(text);
    memcpy(text, pretty, n);
    memcpy(text + n, "\n", 2); /* the CLI ends the document with a newline */
    cJSON_free(pretty);
    cJSON_Delete(doc);
    cf_recommend_result_free(&res);
    cf_catalog_source_close(&src);
    cf_spec_free(&spec);
    return text;
}

static char *golden(const char *name)
{
    char path[256], *text = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "tests/golden/%s", name);
    assert_int_equal(cf_read_file(path, &text, &len), CF_OK);
    return text;
}

/* Byte for byte; on a difference, the first differing line. */
static int same_text(const char *got, const char *want, const char *name)
{
    if (strcmp(got, want) == 0)
        return 1;
    size_t i = 0, line = 1;
    while (got[i] && got[i] == want[i])
        line += got[i++] == '\n';
    print_message("%s differs at line %zu\n", name, line);
    return 0;
}

static void test_default_objective_matches_json_golden(void **state)
{
    (void)state;
    cf_spec_overrides ov;
    cf_spec_overrides_init(&ov);
    char *got = recommend_json(&ov, 5), *want = golden("json.golden"), *other = golden("baseline.json.golden");
    assert_true(same_text(got, want, "json.golden"));
    /* the comparison can fail: the other golden document is not this one */
    assert_false(strcmp(got, other) == 0);
    free(got);
    free(want);
    free(other);
}

static void test_time_objective_matches_baseline_golden(void **state)
{
    (void)state;
    cf_spec_overrides ov;
    cf_spec_overrides_init(&ov);
    ov.objective = CF_OBJ_TIME;
    char *got = recommend_json(&ov, 3), *want = golden("baseline.json.golden");
    assert_true(same_text(got, want, "baseline.json.golden"));
    free(got);
    free(want);
}

/* The example spec with its search limited to one GPU name. */
static void load_searching_one_gpu(cf_spec *spec, const char *gpu)
{
    cf_spec_overrides ov;
    cf_spec_overrides_init(&ov);
    assert_int_equal(cf_spec_load_effective(SPEC, &ov, spec), CF_OK);
    snprintf(spec->search.gpus[0], sizeof spec->search.gpus[0], "%s", gpu);
    spec->search.n_gpus = 1;
}

/* A spec whose search names a GPU the catalog does not have: the status
 * and a message naming the spec and its key, nothing printed. */
static void test_unknown_gpu_names_the_spec_key(void **state)
{
    (void)state;
    cf_spec spec;
    load_searching_one_gpu(&spec, "T5");
    cf_catalog_source src;
    assert_int_equal(cf_catalog_source_open(NULL, -1, NULL, &src), CF_OK);
    cf_recommend_request req = {.spec = &spec, .catalog_source = &src};
    cf_recommend_result res;
    assert_int_not_equal(cf_recommend(&req, &res), CF_OK);
    assert_non_null(strstr(cf_error_message(), SPEC ": search.gpus: "));
    cf_error_clear();
    cf_recommend_result_free(&res);
    cf_catalog_source_close(&src);
    cf_spec_free(&spec);
}

/* A model no allowed GPU can hold (7B parameters, AdamW: 104 GiB of
 * state against an A100's 40 GB): nothing is priced, so the message says
 * the job cannot run and points at memory, whatever deadline or budget the
 * spec sets (it blamed the deadline, "raise the deadline or the budget"). */
static void test_model_no_gpu_holds_is_not_blamed_on_the_limits(void **state)
{
    (void)state;
    const double limits[][2] = {{0, 0}, {100000, 0}, {0, 1e9}, {336, 1e6}};
    for (size_t i = 0; i < sizeof limits / sizeof *limits; i++) {
        cf_spec spec;
        load_searching_one_gpu(&spec, "A100-40GB");
        spec.job.parameters = 7e9;
        spec.job.optimizer = CF_OPT_ADAMW;
        spec.n_gpus = 0; /* no profile: the GPU's memory and the state alone decide */
        spec.search.deadline_hours = limits[i][0];
        spec.search.budget_usd = limits[i][1];
        cf_catalog_source src;
        assert_int_equal(cf_catalog_source_open(NULL, -1, NULL, &src), CF_OK);
        cf_recommend_request req = {.spec = &spec, .catalog_source = &src};
        cf_recommend_result res;
        assert_int_equal(cf_recommend(&req, &res), CF_ERR_INFEASIBLE);
        if (!strstr(cf_error_message(), SPEC ": no configuration can run the job"))
            fail_msg("deadline %g, budget %g: %s", limits[i][0], limits[i][1], cf_error_message());
        assert_non_null(strstr(cf_error_hint_text(), "model.parameters"));
        cf_error_clear();
        cf_recommend_result_free(&res);
        cf_catalog_source_close(&src);
        cf_spec_free(&spec);
    }
}

int main(void)
{
    /* what tests/golden/test_golden.py runs under */
    setenv("SOURCE_DATE_EPOCH", "1795000000", 1);
    if (chdir(CF_SOURCE_DIR) != 0) {
        perror(CF_SOURCE_DIR);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_objective_matches_json_golden),
        cmocka_unit_test(test_time_objective_matches_baseline_golden),
        cmocka_unit_test(test_unknown_gpu_names_the_spec_key),
        cmocka_unit_test(test_model_no_gpu_holds_is_not_blamed_on_the_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
