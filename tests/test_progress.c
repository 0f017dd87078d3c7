/* Tests of render/progress_text.c: what the progress bar and lines say
 * (count, rate, time left, upper bounds, bytes), cut to the terminal's
 * width. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "cloudfit/render/progress_text.h"

/* A display that began at t = 100 s. */
static cf_progress_view at(double done, double total, const char *unit, const char *what)
{
    return (cf_progress_view){.label = "search", .done = done, .total = total, .unit = unit, .what = what};
}

static void format_at(cf_progress_view *p, double now_s, int bar, int width, char *out, size_t n)
{
    p->elapsed_s = now_s - 100;
    cf_progress_text(p, bar, width, out, n);
}

static void test_bar(void **state)
{
    (void)state;
    char s[512];
    cf_progress_view p = at(10, 40, "runs", "probe 2 × 4 T4, batch 64");
    format_at(&p, 105, 1, 200, s, sizeof s); /* 10 runs in 5 s: 2/s, 30 left: 15 s */
    assert_string_equal(s, "search [#####...............] 10/40 runs  2.0 runs/s  ETA 15 s  probe 2 × 4 T4, batch 64");
    p.at_most = 1;
    format_at(&p, 105, 1, 200, s, sizeof s);
    assert_non_null(strstr(s, "10/≤ 40 runs"));
    assert_non_null(strstr(s, "ETA ≤ 15 s"));
    /* cut to the width, whole characters */
    format_at(&p, 105, 1, 40, s, sizeof s);
    assert_true(strlen(s) <= 39 + 4);
    assert_string_equal(s, "search [#####...............] 10/≤ 40 r");
}

static void test_lines(void **state)
{
    (void)state;
    char s[512];
    cf_progress_view p = at(3, 12, "runs", "batch 64");
    format_at(&p, 100 + 360, 0, 0, s, sizeof s); /* 3 runs in 6 min: 0.5/min, 18 min left */
    assert_string_equal(s, "search: 3/12 runs (25%), 0.5 runs/min, ETA 18 min 00 s: batch 64");
    p = at(0, 12, "runs", "");
    format_at(&p, 100.1, 0, 0, s, sizeof s);
    assert_string_equal(s, "search: 0/12 runs (0%)");
    format_at(&p, 130, 0, 0, s, sizeof s); /* nothing done yet: the time so far */
    assert_string_equal(s, "search: 0/12 runs (0%), 30 s so far");
    p = at(500000, 0, "rows", "");
    format_at(&p, 102, 0, 0, s, sizeof s);
    assert_string_equal(s, "search: 500000 rows, 250000 rows/s");
    p = at(12, 12, "runs", "done");
    format_at(&p, 7300, 0, 0, s, sizeof s);
    assert_string_equal(s, "search: 12/12 runs (100%), 0.1 runs/min: done");
}

static void test_bytes(void **state)
{
    (void)state;
    char s[512];
    cf_progress_view p = at(12.5e6, 50e6, "bytes", "aws us-east-1 offer file");
    format_at(&p, 102.5, 0, 0, s, sizeof s);
    assert_string_equal(s, "search: 12.5 MB of 50.0 MB (25%), 5.0 MB/s, ETA 8 s: aws us-east-1 offer file");
    p = at(900, 0, "bytes", ""); /* no length from the server */
    format_at(&p, 101, 0, 0, s, sizeof s);
    assert_string_equal(s, "search: 900 B, 900 B/s");
    p = at(3e9, 4.5e9, "bytes", "");
    format_at(&p, 100 + 7200, 1, 200, s, sizeof s);
    assert_non_null(strstr(s, "3.0 GB of 4.5 GB"));
    assert_non_null(strstr(s, "ETA 1 h 00 min"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bar),
        cmocka_unit_test(test_lines),
        cmocka_unit_test(test_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
