/* cf_rebalance_session, the library's `rebalance` filter, line by line as
 * the CLI feeds it (tests/spot/test_spot_cli.py feeds the same lines to
 * the command): answers, lines not understood answered unchanged and
 * skipped, a worker under the floor warned about once per fall. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cloudfit/usecase/rebalance.h"

typedef struct {
    char warnings[4][400];
    int n_warnings;
} notes_seen;

static void on_note(void *ctx, cf_note_kind kind, const char *text)
{
    notes_seen *seen = ctx;
    assert_int_equal(kind, CF_NOTE_WARNING);
    if (seen->n_warnings < 4)
        snprintf(seen->warnings[seen->n_warnings], sizeof seen->warnings[0], "%s", text);
    seen->n_warnings++;
}

static cf_rebalance_session *open_session(cf_rebalance_request *req)
{
    cf_rebalance_session *s = malloc(sizeof *s);
    assert_non_null(s);
    if (cf_rebalance_session_open(req, s) != CF_OK)
        fail_msg("cf_rebalance_session_open: %s", cf_error_message());
    return s;
}

static void close_session(cf_rebalance_session *s)
{
    cf_rebalance_session_close(s);
    free(s);
}

/* The answer to one line, parsed (NULL for no answer). */
static cJSON *answer(cf_rebalance_session *s, const char *line, int too_long)
{
    cf_buf out = CF_BUF_INIT;
    assert_int_equal(cf_rebalance_session_line(s, line, too_long, &out), CF_OK);
    cJSON *doc = out.len ? cJSON_Parse(cf_buf_cstr(&out)) : NULL;
    if (out.len) {
        assert_non_null(doc);
        assert_int_equal(out.data[out.len - 1], '\n');
    }
    cf_buf_free(&out);
    return doc;
}

static int batch(const cJSON *doc, int i)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "batches"), i)->valueint;
}

/* A worker 4 times slower gets the smaller batch; the sum stays the global batch. */
static void test_slow_worker_gets_less(void **state)
{
    (void)state;
    notes_seen seen = {0};
    cf_rebalance_request req = {.global_batch = 256, .workers = 2, .settings = cf_rebalance_defaults(),
                                .source = "stdin", .note = on_note, .note_ctx = &seen};
    cf_rebalance_session *s = open_session(&req);
    int changed = 0;
    for (int i = 0; i < 25; i++) {
        cJSON *doc = answer(s, "{\"times_s\": [0.1, 0.4]}\n", 0);
        if (i == 0)
            assert_true(batch(doc, 0) == 128 && batch(doc, 1) == 128);
        assert_int_equal(batch(doc, 0) + batch(doc, 1), 256);
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "changed"))) {
            changed++;
            assert_true(batch(doc, 0) > batch(doc, 1));
        }
        cJSON_Delete(doc);
    }
    assert_true(changed > 0);
    assert_int_equal(s->skipped, 0);
    assert_int_equal(seen.n_warnings, 0);
    close_session(s);
}

/* Lines not understood: answered unchanged with "skipped", warned about, counted. */
static void test_bad_lines_are_skipped(void **state)
{
    (void)state;
    notes_seen seen = {0};
    cf_rebalance_request req = {.global_batch = 256, .workers = 2, .settings = cf_rebalance_defaults(),
                                .source = "stdin", .note = on_note, .note_ctx = &seen};
    cf_rebalance_session *s = open_session(&req);
    const char *lines[] = {"{\"compute_s\": [0.1]}\n", "\n", "not json\n", "xxxx", "{\"compute_s\": [0.1, 0.4]}\n"};
    int skipped[] = {1, -1, 1, 1, 0}; /* -1: no answer */
    for (int i = 0; i < 5; i++) {
        cJSON *doc = answer(s, lines[i], i == 3);
        if (skipped[i] < 0) {
            assert_null(doc);
            continue;
        }
        assert_int_equal(cJSON_GetObjectItemCaseSensitive(doc, "skipped") != NULL, skipped[i]);
        assert_true(batch(doc, 0) == 128 && batch(doc, 1) == 128);
        cJSON_Delete(doc);
    }
    assert_int_equal(s->lines, 5);
    assert_int_equal(s->skipped, 3);
    assert_int_equal(seen.n_warnings, 3);
    assert_non_null(strstr(seen.warnings[0], "stdin:1"));
    assert_non_null(strstr(seen.warnings[0], "(line skipped)"));
    assert_non_null(strstr(seen.warnings[2], "stdin:4: a line longer than the 65536 bytes"));
    close_session(s);
}

/* Times that make worker 1 look 20 times slower drive it under the floor: one warning. */
static void test_below_floor_warned_once(void **state)
{
    (void)state;
    notes_seen seen = {0};
    cf_rebalance_request req = {.global_batch = 256, .workers = 2, .settings = cf_rebalance_defaults(),
                                .source = "stdin", .note = on_note, .note_ctx = &seen};
    req.settings.window = 5;
    cf_rebalance_session *s = open_session(&req);
    cJSON *last = NULL;
    for (int i = 0; i < 200; i++) {
        cJSON_Delete(last);
        last = answer(s, "{\"compute_s\": [0.001, 0.02]}\n", 0);
    }
    const cJSON *below = cJSON_GetObjectItemCaseSensitive(last, "below_floor");
    assert_int_equal(cJSON_GetArraySize(below), 1);
    assert_int_equal(cJSON_GetArrayItem(below, 0)->valueint, 1);
    cJSON_Delete(last);
    assert_int_equal(seen.n_warnings, 1);
    assert_non_null(strstr(seen.warnings[0], "worker 1's batch"));
    assert_non_null(strstr(seen.warnings[0], "below 25% of an equal share (128 of 256)"));
    close_session(s);
}

/* The request's numbers are the command's options: one the controller
 * cannot take is a usage error naming the option (exit 2), not bad input
 * (they were the controller's CF_ERR_INVALID, exit 3, naming no option). */
static void test_bad_options_are_usage_errors(void **state)
{
    (void)state;
    static const int limit_40[] = {40, 40}, limit_50[] = {50, 50}, batches_40_50[] = {40, 50}, batches_40_60[] = {40, 60};
    const struct {
        long global_batch;
        int workers, window;
        const int *batches, *max_batches;
        const char *message;
    } cases[] = {
        {2, 3, 0, NULL, NULL, "option '--global-batch' expects at least one sample per worker, got 2 for 3 workers"},
        {5000, 2000, 0, NULL, NULL, "option '--workers' expects 1 to 1024, got 2000"},
        {100, 2, 200000, NULL, NULL, "option '--window' expects 1 to 100000 iterations, got 200000"},
        {100, 2, 0, NULL, limit_40,
         "option '--max-batch' lets the workers hold 80 samples together, fewer than --global-batch 100"},
        {100, 2, 0, batches_40_50, NULL, "option '--batches' sums to 90, not --global-batch 100"},
        {100, 2, 0, batches_40_60, limit_50, "option '--batches' gives worker 1 60 samples, over its --max-batch 50"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        cf_rebalance_request req = {.global_batch = cases[k].global_batch, .workers = cases[k].workers,
                                    .batches = cases[k].batches, .max_batches = cases[k].max_batches,
                                    .settings = cf_rebalance_defaults(), .source = "stdin"};
        if (cases[k].window)
            req.settings.window = cases[k].window;
        cf_rebalance_session *s = malloc(sizeof *s);
        assert_non_null(s);
        assert_int_equal(cf_rebalance_session_open(&req, s), CF_ERR_USAGE);
        assert_string_equal(cf_error_message(), cases[k].message);
        close_session(s);
        cf_error_clear();
    }
    /* a limit for some workers only leaves room for any global batch */
    cf_rebalance_request req = {.global_batch = 100, .workers = 2, .max_batches = (const int[]){40, 0},
                                .settings = cf_rebalance_defaults(), .source = "stdin"};
    close_session(open_session(&req));
    /* a setting out of range is the controller's (no option sets it) */
    req.settings.gain = 3;
    cf_rebalance_session *s = malloc(sizeof *s);
    assert_non_null(s);
    assert_int_equal(cf_rebalance_session_open(&req, s), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "rebalance: gain"));
    close_session(s);
    cf_error_clear();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slow_worker_gets_less),
        cmocka_unit_test(test_bad_lines_are_skipped),
        cmocka_unit_test(test_below_floor_warned_once),
        cmocka_unit_test(test_bad_options_are_usage_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
