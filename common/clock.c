#include "cloudfit/common/clock.h"
#include "cloudfit/common/number.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The instants a timestamp can name: 0000-01-01T00:00:00Z to
 * 9999-12-31T23:59:59Z, so that every one prints as 20 characters and
 * sorts as text in time order (the history compares created_at as text). */
#define EPOCH_MIN_S (-62167219200LL)
#define EPOCH_MAX_S 253402300799LL

/* SOURCE_DATE_EPOCH when it is a whole number of seconds within the
 * printable range (reproducible output), else the clock. */
static long long now_epoch(void)
{
    const char *fixed = getenv("SOURCE_DATE_EPOCH");
    if (fixed && *fixed) {
        long v = 0;
        if (cf_number_long(fixed, 0, LONG_MAX, &v) == CF_NUMBER_OK && (long long)v <= EPOCH_MAX_S)
            return (long long)v;
    }
    return (long long)time(NULL);
}

/* t as YYYY-MM-DDTHH:MM:SSZ, held within the printable range (an age of
 * 60,000 weeks reaches back before the year 1000; strftime's %Y does not
 * pad it to four digits, and "876-…" sorts after "2026-…"). */
static void format_epoch(long long t, char *out, size_t n)
{
    if (t < EPOCH_MIN_S)
        t = EPOCH_MIN_S;
    if (t > EPOCH_MAX_S)
        t = EPOCH_MAX_S;
    time_t tt = (time_t)t;
    struct tm tm;
    if (!gmtime_r(&tt, &tm)) { /* not representable here: the nearer end of the range */
        snprintf(out, n, "%s", t < 0 ? "0000-01-01T00:00:00Z" : "9999-12-31T23:59:59Z");
        return;
    }
    snprintf(out, n, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
             tm.tm_min, tm.tm_sec);
}

void cf_now_iso8601(char *out, size_t n) { format_epoch(now_epoch(), out, n); }

void cf_iso8601_ago(double seconds, char *out, size_t n)
{
    double t = (double)now_epoch() - seconds;
    format_epoch(t < (double)EPOCH_MIN_S ? EPOCH_MIN_S : t > (double)EPOCH_MAX_S ? EPOCH_MAX_S : (long long)t, out, n);
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil), avoiding the non-standard timegm(). */
static long days_from_civil(long y, unsigned m, unsigned d)
{
    y -= m <= 2;
    long era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (long)doe - 719468;
}

double cf_days_since(const char *ymd)
{
    int y, m, d;
    if (!ymd || sscanf(ymd, "%4d-%2d-%2d", &y, &m, &d) != 3 || m < 1 || m > 12 || d < 1 || d > 31)
        return 0;
    double days = (double)now_epoch() / 86400.0 - (double)days_from_civil(y, (unsigned)m, (unsigned)d);
    return days > 0 ? days : 0;
}

cf_status cf_iso8601_epoch(const char *stamp, long long *out)
{
    int y, mo, d, h, mi, sec, end = 0;
    if (!stamp || sscanf(stamp, "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &y, &mo, &d, &h, &mi, &sec, &end) != 6 ||
        end != 20 || stamp[end] || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59 ||
        h < 0 || mi < 0 || sec < 0)
        return cf_error_set(CF_ERR_INVALID, "'%s' is not a time YYYY-MM-DDTHH:MM:SSZ", stamp ? stamp : "");
    *out = (long long)days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400LL + h * 3600LL + mi * 60LL + sec;
    return CF_OK;
}

/* ---- parsing what people type -------------------------------------------- */

/* `n` ASCII digits at `p` as a number; -1 when one is not a digit. */
static int digits(const char *p, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return -1;
        v = v * 10 + (p[i] - '0');
    }
    return v;
}

static int days_in_month(int year, int month)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return month == 2 && leap ? 29 : days[month - 1];
}

cf_status cf_iso8601_normalize(const char *text, char *out, size_t n)
{
    static const char FORMS[] = "expected YYYY-MM-DD, YYYY-MM-DDTHH:MMZ or YYYY-MM-DDTHH:MM:SSZ (UTC)";
    if (n)
        out[0] = '\0';
    if (!text)
        return cf_error_set(CF_ERR_INVALID, "no date given: %s", FORMS);
    size_t len = strlen(text);
    /* The shape first: digits and separators where the forms have them. */
    int shape = len >= 10 && text[4] == '-' && text[7] == '-';
    if (shape && len > 10)
        shape = (len == 17 || len == 20) && text[10] == 'T' && text[13] == ':' && text[len - 1] == 'Z' &&
                (len == 17 || text[16] == ':');
    else if (shape)
        shape = len == 10;
    int year = shape ? digits(text, 4) : -1, month = shape ? digits(text + 5, 2) : -1;
    int day = shape ? digits(text + 8, 2) : -1;
    int hour = shape && len > 10 ? digits(text + 11, 2) : 0, minute = shape && len > 10 ? digits(text + 14, 2) : 0;
    int second = shape && len == 20 ? digits(text + 17, 2) : 0;
    if (!shape || year < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0)
        return cf_error_set(CF_ERR_INVALID, "'%s' is not a date or time: %s", text, FORMS);
    if (month < 1 || month > 12)
        return cf_error_set(CF_ERR_INVALID, "'%s' is not a date: month %d is not 1-12", text, month);
    if (day < 1 || day > days_in_month(year, month))
        return cf_error_set(CF_ERR_INVALID, "'%s' is not a date: %04d-%02d has days 1-%d, not %d", text, year, month,
                            days_in_month(year, month), day);
    if (hour > 23 || minute > 59 || second > 59)
        return cf_error_set(CF_ERR_INVALID, "'%s' is not a time: %s %d is not 0-%d", text,
                            hour > 23 ? "hour" : minute > 59 ? "minute" : "second",
                            hour > 23 ? hour : minute > 59 ? minute : second, hour > 23 ? 23 : 59);
    if (n < 21)
        return cf_error_set(CF_ERR_INTERNAL, "buffer too small for a date");
    snprintf(out, n, "%04d-%02d-%02dT%02d:%02d:%02dZ", year, month, day, hour, minute, second);
    return CF_OK;
}

cf_status cf_duration_parse_s(const char *text, double *out_s)
{
    *out_s = 0;
    const char *end = "";
    double v = 0, unit = 0;
    if (cf_number_with_unit(text, 0, 1e9, &v, &end) == CF_NUMBER_OK && end[0] && !end[1])
        unit = end[0] == 'm' ? 60 : end[0] == 'h' ? 3600 : end[0] == 'd' ? 86400 : end[0] == 'w' ? 7 * 86400 : 0;
    if (unit == 0)
        return cf_error_set(CF_ERR_INVALID, "'%s' is not an age: expected a number and a unit (30d, 12h, 90m, 2w)",
                            text ? text : "");
    *out_s = v * unit;
    return CF_OK;
}

/* A number and one unit letter (30d, -1d, 1e12h): an age, whatever its range. */
static int written_as_age(const char *text)
{
    size_t len = text ? strlen(text) : 0;
    if (len < 2 || !strchr("mhdw", text[len - 1]))
        return 0;
    char *end = NULL;
    (void)strtod(text, &end);
    return end == text + len - 1;
}

cf_status cf_when_parse(const char *text, char *out, size_t n, int *as_given)
{
    double age_s;
    *as_given = 0;
    if (cf_duration_parse_s(text, &age_s) == CF_OK) {
        cf_iso8601_ago(age_s, out, n);
        return CF_OK;
    }
    if (written_as_age(text)) /* an age out of range was "not a date or time", its limit unsaid */
        return cf_error_set(CF_ERR_INVALID, "'%s' is not an age cloudfit takes: expected 0 to 1000000000 minutes, "
                            "hours, days or weeks (30d, 12h, 90m, 2w)", text);
    cf_error_clear(); /* what is wrong with it as a date (a word that is neither says so too) */
    cf_status st = cf_iso8601_normalize(text, out, n);
    *as_given = st == CF_OK;
    return st;
}
