#include "cloudfit/common/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static time_t now_epoch(void)
{
    const char *fixed = getenv("SOURCE_DATE_EPOCH");
    if (fixed && *fixed) {
        char *end = NULL;
        long long v = strtoll(fixed, &end, 10);
        if (end && *end == '\0' && v >= 0)
            return (time_t)v;
    }
    return time(NULL);
}

void cf_now_iso8601(char *out, size_t n)
{
    time_t t = now_epoch();
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void cf_iso8601_ago(double seconds, char *out, size_t n)
{
    time_t t = now_epoch() - (time_t)seconds;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
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
