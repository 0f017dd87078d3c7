/* The one JSON reader (common/json.c): syntax errors with line and column,
 * NUL bytes, a BOM, duplicate keys refused with their key path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

/* Issue 33 (2): \u0000 would end the C string cJSON decodes it into, so
 * "ab\u0000cd" loaded as "ab"; refused, naming the place and the key path. */
static void test_nul_escape_refused_with_key_path(void **state)
{
    (void)state;
    const char *value = "{\"name\": \"ab\\u0000cd\"}";
    expect_error(value, strlen(value), "in.json:1:13: invalid JSON: NUL character (\\u0000) in the string at name");
    const char *keys = "{\"gpus\": {\"T4\\u0000a\": 1, \"T4\\u0000b\": 2}}";
    expect_error(keys, strlen(keys), "in.json:1:14: invalid JSON: NUL character (\\u0000) in the key gpus.T4\\u0000a");
    const char *element = "{\"command\": [\"python\", \"x\\u0000y\"]}";
    expect_error(element, strlen(element), "in the string at command[1]");
    const char *top = "\"\\u0000\"";
    expect_error(top, strlen(top), "in the string at (top level)");
    /* an escaped backslash followed by u0000 is text, not a NUL */
    const char *text = "{\"a\": \"\\\\u0000\", \"b\": \"\\u0001\"}";
    cJSON *doc = NULL;
    assert_int_equal(cf_json_read(text, strlen(text), "in.json", &doc), CF_OK);
    assert_string_equal(cJSON_GetObjectItem(doc, "a")->valuestring, "\\u0000");
    cJSON_Delete(doc);
}

/* A lone UTF-16 surrogate (cJSON refuses it) is named as what it is, at
 * its place: it was "invalid escape sequence in a string". A pair is text. */
static void test_lone_surrogate_named(void **state)
{
    (void)state;
    const char *high = "{\"name\": \"T4 \\ud800\"}";
    expect_error(high, strlen(high), "in.json:1:14: invalid JSON: lone surrogate \\ud800 in a string");
    const char *low = "{\"a\": \"x\",\n \"name\": \"\\uDC00y\"}";
    expect_error(low, strlen(low), "in.json:2:11: invalid JSON: lone surrogate \\uDC00 in a string");
    const char *unpaired = "{\"name\": \"\\ud83d\\u0041\"}";
    expect_error(unpaired, strlen(unpaired), "in.json:1:11: invalid JSON: lone surrogate \\ud83d in a string");
    const char *pair = "{\"name\": \"\\ud83d\\ude00 \\u00e9\"}";
    cJSON *doc = NULL;
    assert_int_equal(cf_json_read(pair, strlen(pair), "in.json", &doc), CF_OK);
    assert_string_equal(cJSON_GetObjectItem(doc, "name")->valuestring, "\xF0\x9F\x98\x80 \xC3\xA9");
    cJSON_Delete(doc);
    /* a pair followed by a lone one: the lone one is named */
    const char *after = "{\"name\": \"\\ud83d\\ude00\\udfff\"}";
    expect_error(after, strlen(after), "in.json:1:23: invalid JSON: lone surrogate \\udfff in a string");
}

/* Issue 33 (3): duplicate keys are found through a hash set in large
 * objects (linear, not quadratic), wherever the duplicate is. */
static void test_duplicate_keys_in_a_large_object(void **state)
{
    (void)state;
    size_t n = 100000, cap = n * 24 + 64, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    len += (size_t)snprintf(text + len, cap - len, "{\"page\": {");
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, cap - len, "%s\"k%zu\": %zu", i ? ", " : "", i, i);
    size_t open_end = len;
    len += (size_t)snprintf(text + len, cap - len, "}}");
    cJSON *doc = NULL;
    assert_int_equal(cf_json_read(text, len, "in.json", &doc), CF_OK);
    cJSON_Delete(doc);
    len = open_end + (size_t)snprintf(text + open_end, cap - open_end, ", \"k12345\": 0}}");
    expect_error(text, len, "in.json: page.k12345: duplicate key");
    free(text);
}

/* A line of a JSON-lines stream is located in the stream: its line there
 * and the column within it ("stdin:7:1:27" named the line twice). */
static void test_piece_of_a_stream_located_in_the_stream(void **state)
{
    (void)state;
    cJSON *doc = (cJSON *)1;
    const char *line = "{\"compute_s\": [0.3, 0.1] \"x\": 1}\n";
    assert_int_equal(cf_json_read_at(line, strlen(line), "stdin", 7, &doc), CF_ERR_INVALID);
    assert_null(doc);
    assert_string_equal(cf_error_message(), "stdin:7:26: invalid JSON: expected ',' or '}', got '\"'");
    assert_string_equal(cf_error_hint_text(), "a ',' is probably missing at line 7, column 25");
    const char *open = "{\"a\": [1,\n 2";
    assert_int_equal(cf_json_read_at(open, strlen(open), "s.jsonl", 40, &doc), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "s.jsonl:41:3: invalid JSON: expected ',' or ']', got end of input");
    assert_string_equal(cf_error_hint_text(), "the '[' opened at line 40, column 7 is not closed");
    const char *number = "{\"a\": 1e999}";
    assert_int_equal(cf_json_read_at(number, strlen(number), "stdin", 12, &doc), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "stdin:12:7: invalid JSON: number out of range '1e999'");
    /* no position: the piece by its first line */
    const char *dup = "{\"a\": 1, \"a\": 2}";
    assert_int_equal(cf_json_read_at(dup, strlen(dup), "stdin", 3, &doc), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "stdin:3: a: duplicate key (each key may appear once)");
    cf_error_clear();
    const char *fine = "{\"a\": [1, 2]}";
    assert_int_equal(cf_json_read_at(fine, strlen(fine), "stdin", 5, &doc), CF_OK);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "a")), 2);
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
    /* at the ends of the range the scale 10^(digits-1-exponent) overflows:
     * 2.2e-308 (an accepted learning rate) rounded to NaN, written "-nan" into a launch spec */
    assert_true(cf_json_round(2.2250738585072014e-308, 6) == 2.22507e-308);
    assert_true(cf_json_round(4.9406564584124654e-324, 6) == 4.9406564584124654e-324);
    assert_true(cf_json_round(1.7976931348623157e308, 6) == 1.79769e308);
    assert_true(cf_json_round(-3.0e-310, 2) == -3.0e-310);
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
        cmocka_unit_test(test_nul_escape_refused_with_key_path),
        cmocka_unit_test(test_lone_surrogate_named),
        cmocka_unit_test(test_duplicate_keys_in_a_large_object),
        cmocka_unit_test(test_piece_of_a_stream_located_in_the_stream),
        cmocka_unit_test(test_rounded_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
