/* Tests of advisor/plan/rebalance_lines.c: the batch controller's JSON-lines
 * protocol (the times in, the batches out). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/advisor/rebalance.h"

static void test_blank(void **state)
{
    (void)state;
    assert_true(cf_rebalance_line_blank(""));
    assert_true(cf_rebalance_line_blank(" \t\r\n"));
    assert_false(cf_rebalance_line_blank("  {}\n"));
}

static void test_read_line(void **state)
{
    (void)state;
    double t[3] = {0};
    assert_int_equal(cf_rebalance_read_line("{\"compute_s\": [0.5, 0.25, 2]}\n", "stdin", 1, 3, t), CF_OK);
    assert_true(t[0] == 0.5 && t[1] == 0.25 && t[2] == 2);
    /* times_s, the protocol's first name, is read as the same */
    assert_int_equal(cf_rebalance_read_line("{\"times_s\": [0.5, 0.75, 2], \"step\": 3}\n", "stdin", 1, 3, t), CF_OK);
    assert_true(t[0] == 0.5 && t[1] == 0.75 && t[2] == 2);
    static const struct {
        const char *line, *message;
    } bad[] = {
        /* what the line held is said, not only what was expected: a worker that joined or left read the same
         * as a misspelt key */
        {"{\"compute_s\": [0.5, 0.25]}", "stdin:7: compute_s holds 2 values, expected 3 (one per worker)"},
        {"{\"times_s\": [1, 1, 1, 1]}", "stdin:7: times_s holds 4 values, expected 3 (one per worker)"},
        {"{\"compute_s\": [1]}", "stdin:7: compute_s holds 1 value, expected 3 (one per worker)"},
        {"{\"compute_s\": 0.5}", "stdin:7: compute_s is a number, expected an array of 3 numbers (one per worker)"},
        {"[0.5, 0.25, 1]", "stdin:7: expected {\"compute_s\": [3 numbers, one per worker]}, got an array"},
        {"{\"times\": [1, 1, 1]}",
         "stdin:7: expected {\"compute_s\": [3 numbers, one per worker]}, got no key compute_s (or times_s)"},
        {"{\"compute_s\": [1, -0.5, 1]}", "stdin:7: compute_s[1]: expected a positive number of seconds"},
        {"{\"compute_s\": [1, 1, 1e308]}", "stdin:7: compute_s[2]: 1e+308 s is not an iteration's compute time (1e-09 to 1e+06 s)"},
        {"{\"compute_s\": [1e-300, 1, 1]}", "stdin:7: compute_s[0]: 1e-300 s is not an iteration's compute time (1e-09 to 1e+06 s)"},
        {"{\"times_s\": [1, 0, 1]}", "stdin:7: times_s[1]: expected a positive number of seconds"},
        {"{\"times_s\": [1, 1, \"2\"]}", "stdin:7: times_s[2]: expected a positive number of seconds"},
        {"{\"times_s\": [-1, 1, 1]}", "stdin:7: times_s[0]: expected a positive number of seconds"},
        /* both names in one line, however alike: compute_s won without a word */
        {"{\"times_s\": [1, 2, 3], \"compute_s\": [3, 2, 1]}",
         "stdin:7: compute_s and times_s are the same key (times_s its first name): give one"},
        {"{\"compute_s\": [1, 1, 1], \"times_s\": [1, 1, 1]}",
         "stdin:7: compute_s and times_s are the same key (times_s its first name): give one"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(cf_rebalance_read_line(bad[i].line, "stdin", 7, 3, t), CF_ERR_INVALID);
        assert_string_equal(cf_error_message(), bad[i].message);
        cf_error_clear();
    }
    assert_int_not_equal(cf_rebalance_read_line("{\"times_s\": [1, 1,", "stdin", 9, 3, t), CF_OK);
    assert_non_null(strstr(cf_error_message(), "stdin:9"));
    cf_error_clear();
    /* a syntax error at its line of the stream and its column in that line: it read "stdin:7:1:29", the line
     * named twice */
    assert_int_equal(cf_rebalance_read_line("{\"compute_s\": [0.31, 0.12]  \"x\": 1}\n", "stdin", 7, 2, t),
                     CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "stdin:7:29: invalid JSON: expected ',' or '}', got '\"'");
    cf_error_clear();
    /* a line cut short ends on that line, whatever its line end: its end was read as column 1 of the next
     * line of the stream ("stdin:9:1" for line 8) */
    static const char *const cut[] = {"{\"compute_s\": [1.0, 1.2\n", "{\"compute_s\": [1.0, 1.2\r\n",
                                      "{\"compute_s\": [1.0, 1.2"};
    for (size_t i = 0; i < sizeof cut / sizeof *cut; i++) {
        assert_int_equal(cf_rebalance_read_line(cut[i], "stdin", 8, 2, t), CF_ERR_INVALID);
        assert_string_equal(cf_error_message(), "stdin:8:24: invalid JSON: expected ',' or ']', got end of input");
        cf_error_clear();
    }
    assert_int_equal(cf_rebalance_read_line("{\"compute_s\": [1, 1], \"compute_s\": [2, 2]}", "stdin", 12, 2, t),
                     CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "stdin:12: compute_s: duplicate key (each key may appear once)");
    cf_error_clear();
    /* a line past the protocol's limit is refused before it is parsed */
    char *long_line = malloc(CF_REBALANCE_MAX_LINE + 2);
    assert_non_null(long_line);
    memset(long_line, ' ', CF_REBALANCE_MAX_LINE + 1);
    long_line[CF_REBALANCE_MAX_LINE + 1] = 0;
    assert_int_equal(cf_rebalance_read_line(long_line, "stdin", 4, 3, t), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "stdin:4: a line of 65537 bytes"));
    cf_error_clear();
    free(long_line);
}

static void test_answer(void **state)
{
    (void)state;
    cf_rebalance *c = malloc(sizeof *c);
    assert_non_null(c);
    int initial[2] = {128, 128};
    assert_int_equal(cf_rebalance_init(c, 2, 256, initial, NULL, NULL), CF_OK);
    cf_buf out = CF_BUF_INIT;
    cf_rebalance_answer(c, 0, NULL, &out);
    assert_string_equal(out.data,
                        "{\"batches\": [128, 128], \"changed\": false, \"updates\": 0, \"imbalance\": 0, \"band\": 0.03}\n");
    cf_buf_free(&out);
    cf_rebalance_answer(c, 0, "stdin:3: \"bad\"", &out);
    assert_string_equal(out.data, "{\"batches\": [128, 128], \"changed\": false, \"updates\": 0, \"imbalance\": 0, "
                                  "\"band\": 0.03, \"skipped\": \"stdin:3: \\\"bad\\\"\"}\n");
    cf_buf_free(&out);
    /* one worker three times slower: after a window the batches move */
    double t[2] = {0.3, 0.1};
    int changed = 0;
    for (int i = 0; i < CF_REBALANCE_WINDOW; i++)
        changed = cf_rebalance_observe(c, t);
    assert_int_equal(changed, 1);
    cf_rebalance_answer(c, changed, NULL, &out);
    assert_true(c->batch[0] < 128 && c->batch[0] + c->batch[1] == 256);
    char want[160];
    snprintf(want, sizeof want,
             "{\"batches\": [%d, %d], \"changed\": true, \"updates\": 1, \"imbalance\": 2, \"band\": 0.03}\n",
             c->batch[0], c->batch[1]);
    assert_string_equal(out.data, want);
    cf_buf_free(&out);
    cf_rebalance_free(c);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blank),
        cmocka_unit_test(test_read_line),
        cmocka_unit_test(test_answer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
