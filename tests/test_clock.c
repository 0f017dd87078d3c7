/* Tests of common/clock.c: the dates and times people type (history
 * --since/--until, prune --older-than), and ages ("30d"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/clock.h"

static void assert_normalizes(const char *text, const char *want)
{
    char out[32];
    cf_status st = cf_iso8601_normalize(text, out, sizeof out);
    if (st != CF_OK)
        fail_msg("'%s' rejected: %s", text, cf_error_message());
    assert_string_equal(out, want);
}

/* Rejected with a message that names the value and contains `why`. */
static void assert_rejected(const char *text, const char *why)
{
    char out[32] = "untouched";
    assert_int_equal(cf_iso8601_normalize(text, out, sizeof out), CF_ERR_INVALID);
    assert_string_equal(out, "");
    if (text && !strstr(cf_error_message(), text))
        fail_msg("message does not name '%s': %s", text, cf_error_message());
    if (!strstr(cf_error_message(), why))
        fail_msg("message for '%s' does not say '%s': %s", text, why, cf_error_message());
}

static void test_dates_and_times_normalize(void **state)
{
    (void)state;
    assert_normalizes("2026-11-01", "2026-11-01T00:00:00Z");
    assert_normalizes("2026-11-18T12:00Z", "2026-11-18T12:00:00Z");
    assert_normalizes("2026-11-18T12:00:00Z", "2026-11-18T12:00:00Z");
    assert_normalizes("2026-12-31T23:59:59Z", "2026-12-31T23:59:59Z");
    assert_normalizes("2024-02-29", "2024-02-29T00:00:00Z"); /* leap year */
    assert_normalizes("2000-02-29", "2000-02-29T00:00:00Z"); /* divisible by 400 */
    assert_normalizes("0001-01-01", "0001-01-01T00:00:00Z");
}

static void test_normalized_form_orders_as_text(void **state)
{
    (void)state;
    /* The reason for normalizing: "…T12:00Z" typed by a person must sort
     * after "…T11:59:59Z" and before "…T12:00:01Z" as stored text. */
    char a[32], b[32];
    assert_int_equal(cf_iso8601_normalize("2026-11-18T12:00Z", a, sizeof a), CF_OK);
    assert_true(strcmp(a, "2026-11-18T11:59:59Z") > 0);
    assert_true(strcmp(a, "2026-11-18T12:00:01Z") < 0);
    assert_int_equal(cf_iso8601_normalize("2026-11-18", b, sizeof b), CF_OK);
    assert_true(strcmp(b, "2026-11-18T00:00:00Z") == 0 && strcmp(b, "2026-11-17T23:59:59Z") > 0);
}

static void test_fields_out_of_range(void **state)
{
    (void)state;
    assert_rejected("2026-13-45", "month 13 is not 1-12");
    assert_rejected("2026-00-10", "month 0 is not 1-12");
    assert_rejected("2026-04-31", "2026-04 has days 1-30, not 31");
    assert_rejected("2026-02-29", "2026-02 has days 1-28, not 29");
    assert_rejected("1900-02-29", "1900-02 has days 1-28, not 29"); /* divisible by 100, not by 400 */
    assert_rejected("2026-01-00", "not 0");
    assert_rejected("2026-01-01T24:00Z", "hour 24 is not 0-23");
    assert_rejected("2026-01-01T12:60Z", "minute 60 is not 0-59");
    assert_rejected("2026-01-01T12:00:60Z", "second 60 is not 0-59");
}

static void test_not_a_date(void **state)
{
    (void)state;
    const char *bad[] = {"notadate", "", "2026", "2026-1-01", "2026-01-1", "26-01-01", "2026/01/01",
                         "2026-01-01T12:00", "2026-01-01T12:00:00", "2026-01-01 12:00:00Z", "2026-01-01T1200Z",
                         "2026-01-01T12:00:00.5Z", "2026-01-01T12:00:00+02:00", "2026-01-01x", "2026-0a-01",
                         "x'; DROP TABLE recommendations; --", "-2026-01-01", "2026-01-01T12:0aZ"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_rejected(bad[i], "expected YYYY-MM-DD");
    char out[32];
    assert_int_equal(cf_iso8601_normalize(NULL, out, sizeof out), CF_ERR_INVALID);
}

static void test_small_buffer(void **state)
{
    (void)state;
    char out[20];
    assert_int_not_equal(cf_iso8601_normalize("2026-11-01", out, sizeof out), CF_OK);
}

static void test_durations(void **state)
{
    (void)state;
    double s = -1;
    assert_int_equal(cf_duration_parse_s("30d", &s), CF_OK);
    assert_true(s == 30 * 86400.0);
    assert_int_equal(cf_duration_parse_s("12h", &s), CF_OK);
    assert_true(s == 12 * 3600.0);
    assert_int_equal(cf_duration_parse_s("90m", &s), CF_OK);
    assert_true(s == 90 * 60.0);
    assert_int_equal(cf_duration_parse_s("2w", &s), CF_OK);
    assert_true(s == 14 * 86400.0);
    assert_int_equal(cf_duration_parse_s("1.5d", &s), CF_OK);
    assert_true(s == 1.5 * 86400.0);
    assert_int_equal(cf_duration_parse_s("0h", &s), CF_OK);
    assert_true(s == 0);
    const char *bad[] = {"soon", "30", "d", "30x", "30dd", "-1d", "inf", "nand", "1e999d", "", "2026-01-31"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        s = -1;
        if (cf_duration_parse_s(bad[i], &s) != CF_ERR_INVALID)
            fail_msg("'%s' accepted as an age", bad[i]);
        assert_true(s == 0);
        assert_non_null(strstr(cf_error_message(), "is not an age"));
    }
}

/* A point in time: an age before now, or a date as given, else the date's error. */
static void test_when(void **state)
{
    (void)state;
    char out[32], now[32];
    int as_given = -1;
    assert_int_equal(cf_when_parse("2026-11-18", out, sizeof out, &as_given), CF_OK);
    assert_string_equal(out, "2026-11-18T00:00:00Z");
    assert_int_equal(as_given, 1);
    assert_int_equal(cf_when_parse("0d", out, sizeof out, &as_given), CF_OK);
    assert_int_equal(as_given, 0);
    cf_iso8601_ago(0, now, sizeof now);
    assert_true(strcmp(out, now) <= 0 && strncmp(out, now, 10) == 0);
    assert_int_equal(cf_when_parse("7d", out, sizeof out, &as_given), CF_OK);
    assert_true(strcmp(out, now) < 0);
    assert_int_equal(cf_when_parse("yesterday", out, sizeof out, &as_given), CF_ERR_INVALID);
    assert_int_equal(as_given, 0);
    assert_non_null(strstr(cf_error_message(), "yesterday"));
    cf_error_clear();
    /* an age out of range says so and its limit (it was "not a date or time", the date forms listed) */
    for (const char *const *age = (const char *const[]){"-1d", "99999999999d", "2e9h", NULL}; *age; age++) {
        assert_int_equal(cf_when_parse(*age, out, sizeof out, &as_given), CF_ERR_INVALID);
        assert_non_null(strstr(cf_error_message(), "is not an age cloudfit takes: expected 0 to 1000000000"));
        cf_error_clear();
    }
}

/* Ages reaching before the year 1000 (and before year 0) stay four-digit
 * years that sort as text before any stored timestamp: 60,000 weeks ago
 * printed as "876-…" sorted after "2026-…", and `history prune
 * --older-than 60000w` deleted every row. */
static void test_long_ages_sort_before_now(void **state)
{
    (void)state;
    setenv("SOURCE_DATE_EPOCH", "1764288000", 1); /* 2025-11-28T00:00:00Z */
    char out[32], now[32];
    cf_now_iso8601(now, sizeof now);
    assert_string_equal(now, "2025-11-28T00:00:00Z");
    cf_iso8601_ago(60000.0 * 7 * 86400, out, sizeof out);
    assert_int_equal(strlen(out), 20);
    assert_string_equal(out, "0875-12-27T00:00:00Z");
    assert_true(strcmp(out, "1970-01-01T00:00:00Z") < 0);
    cf_iso8601_ago(1e9 * 7 * 86400, out, sizeof out); /* the longest age the parser takes */
    assert_string_equal(out, "0000-01-01T00:00:00Z");
    unsetenv("SOURCE_DATE_EPOCH");
}

/* SOURCE_DATE_EPOCH past the year 9999 is not a time a timestamp can
 * name: ignored like a value that is not a number (it made gmtime fail,
 * and an uninitialised struct tm was printed as day 00). */
static void test_source_date_epoch_out_of_range(void **state)
{
    (void)state;
    char fixed[32], clock_now[32];
    unsetenv("SOURCE_DATE_EPOCH");
    cf_now_iso8601(clock_now, sizeof clock_now);
    setenv("SOURCE_DATE_EPOCH", "253402300799", 1); /* the last second of 9999 */
    cf_now_iso8601(fixed, sizeof fixed);
    assert_string_equal(fixed, "9999-12-31T23:59:59Z");
    const char *ignored[] = {"253402300800", "9223372036854775807", "-1", "soon"};
    for (size_t i = 0; i < sizeof ignored / sizeof *ignored; i++) {
        setenv("SOURCE_DATE_EPOCH", ignored[i], 1);
        cf_now_iso8601(fixed, sizeof fixed);
        if (strncmp(fixed, clock_now, 4) != 0)
            fail_msg("SOURCE_DATE_EPOCH=%s gave %s, not the clock's year (%s)", ignored[i], fixed, clock_now);
        assert_int_equal(strlen(fixed), 20);
    }
    unsetenv("SOURCE_DATE_EPOCH");
}

/* cf_iso8601_epoch is the inverse of what cf_now_iso8601 writes (the
 * PyTorchJob's CLOUDFIT_DEADLINE_AT counts from the recommendation's
 * time); anything else is refused, not read as a nearby time. */
static void test_epoch_of_a_stored_time(void **state)
{
    (void)state;
    long long t = -1;
    char text[32];
    assert_int_equal(cf_iso8601_epoch("1970-01-01T00:00:00Z", &t), CF_OK);
    assert_true(t == 0);
    setenv("SOURCE_DATE_EPOCH", "1795000000", 1);
    cf_now_iso8601(text, sizeof text);
    assert_int_equal(cf_iso8601_epoch(text, &t), CF_OK);
    assert_true(t == 1795000000LL);
    unsetenv("SOURCE_DATE_EPOCH");
    assert_int_equal(cf_iso8601_epoch("2024-02-29T23:59:59Z", &t), CF_OK);
    assert_true(t == 1709251199LL);
    const char *bad[] = {"2024-02-29", "2024-02-29T23:59:59", "2024-02-29T23:59:59Z ", "2024-13-01T00:00:00Z",
                         "2024-01-01T24:00:00Z", "", "soon"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (cf_iso8601_epoch(bad[i], &t) != CF_ERR_INVALID)
            fail_msg("'%s' was read as a time", bad[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dates_and_times_normalize),
        cmocka_unit_test(test_normalized_form_orders_as_text),
        cmocka_unit_test(test_fields_out_of_range),
        cmocka_unit_test(test_not_a_date),
        cmocka_unit_test(test_small_buffer),
        cmocka_unit_test(test_durations),
        cmocka_unit_test(test_when),
        cmocka_unit_test(test_long_ages_sort_before_now),
        cmocka_unit_test(test_source_date_epoch_out_of_range),
        cmocka_unit_test(test_epoch_of_a_stored_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
