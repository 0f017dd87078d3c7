/* The one JSON reader (common/json.c): syntax errors with line and column,
 * NUL bytes, a BOM, duplicate keys refused with their key path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "cloudfit/common/json.h"

static void expect_error(const char *text, size_t len, const char *message)
{
    cJSON *doc = (cJSON *)1;
    assert_int_equal(cf_json_read(text, len, "in.json", &doc), CF_ERR_INVALID);
    assert_null(doc);
    if (!strstr(cf_error_message(), message))
        fail_msg("'%s' does not contain '%s'", cf_error_message(), message);
}

static void test_syntax_and_nul(void **state)
{
    (void)state;
    const char *bad = "{\n  \"a\": 1\n  \"b\": 2\n}";
    expect_error(bad, strlen(bad), "in.json:3:3: invalid JSON");
    const char nul[] = "{\"a\": \"x\0y\"}";
    expect_error(nul, sizeof nul - 1, "NUL byte");
}

static void test_bom_is_skipped(void **state)
{
    (void)state;
    const char *text = "\xEF\xBB\xBF{\"a\": [1, 2]}";
    cJSON *doc = NULL;
    assert_int_equal(cf_json_read(text, strlen(text), "bom.json", &doc), CF_OK);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "a")), 2);
    cJSON_Delete(doc);
}

static void test_duplicate_keys_name_their_path(void **state)
{
    (void)state;
    const char *top = "{\"a\": 1, \"a\": 2}";
    expect_error(top, strlen(top), "in.json: a: duplicate key");
    const char *deep = "{\"list\": [{\"x\": 1}, {\"x\": 1, \"y\": {\"k\": 1, \"k\": 2}}]}";
    expect_error(deep, strlen(deep), "in.json: list[1].y.k: duplicate key");
    /* the same key in different objects is fine */
    const char *fine = "{\"a\": {\"k\": 1}, \"b\": {\"k\": 2}}";
    cJSON *doc = NULL;
    assert_int_equal(cf_json_read(fine, strlen(fine), "in.json", &doc), CF_OK);
    cJSON_Delete(doc);
}

static void test_rounded_numbers(void **state)
{
    (void)state;
    assert_true(cf_json_round(123456.0, 4) == 123500.0);
    assert_true(cf_json_round(0.000123456, 3) == 0.000123);
    assert_true(cf_json_round(-2.71828, 2) == -2.7);
    assert_true(cf_json_round(0, 4) == 0);
    assert_true(isinf(cf_json_round(INFINITY, 4)));
    cJSON *o = cJSON_CreateObject();
    cf_json_add_rounded(o, "p50_h", 12.3456, 3);
    cf_json_add_rounded(o, "p90_h", INFINITY, 3); /* does not finish: null, not a number JSON cannot hold */
    char *text = cJSON_PrintUnformatted(o);
    assert_string_equal(text, "{\"p50_h\":12.3,\"p90_h\":null}");
    cJSON_free(text);
    cJSON_Delete(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_syntax_and_nul),
        cmocka_unit_test(test_bom_is_skipped),
        cmocka_unit_test(test_duplicate_keys_name_their_path),
        cmocka_unit_test(test_rounded_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
