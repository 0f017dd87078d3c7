/* Wall-clock helpers. SOURCE_DATE_EPOCH (reproducible-builds convention)
 * fixes "now" so golden-file tests are stable; a value past
 * 9999-12-31T23:59:59Z is ignored like one that is not a number. Every
 * timestamp written is YYYY-MM-DDTHH:MM:SSZ, held within the years
 * 0000-9999 so that it compares as text in time order. */
#ifndef CLOUDFIT_COMMON_CLOCK_H
#define CLOUDFIT_COMMON_CLOCK_H
#include <stddef.h>

#include "cloudfit/status.h"

void cf_now_iso8601(char *out, size_t n);
/* Days from a YYYY-MM-DD date to now (0 when the date cannot be parsed). */
double cf_days_since(const char *ymd);
/* "Now" minus `seconds`, as ISO 8601 UTC (for `history prune --older-than`);
 * an age reaching before the year 0 gives 0000-01-01T00:00:00Z. */
void cf_iso8601_ago(double seconds, char *out, size_t n);
/* Epoch seconds of a stored timestamp YYYY-MM-DDTHH:MM:SSZ (what
 * cf_now_iso8601 writes). CF_ERR_INVALID naming it when it is not one. */
cf_status cf_iso8601_epoch(const char *stamp, long long *out);

/* A UTC date or time as a person types it: YYYY-MM-DD, YYYY-MM-DDTHH:MMZ
 * or YYYY-MM-DDTHH:MM:SSZ. Checks every field (month 1-12, a day the month
 * has in that year, hour 0-23, minute and second 0-59) and writes the
 * stored form YYYY-MM-DDTHH:MM:SSZ (a date is its midnight) into `out`
 * (at least 21 bytes), which compares as text in time order. CF_ERR_INVALID
 * with a message naming the value and what is wrong. */
cf_status cf_iso8601_normalize(const char *text, char *out, size_t n);
/* An age such as "30d", "12h", "90m", "2w" (a non-negative number and one
 * unit: m = minutes, h = hours, d = days, w = weeks) in seconds.
 * CF_ERR_INVALID when `text` is not one. */
cf_status cf_duration_parse_s(const char *text, double *out_s);
/* A point in time as the history's filters take it (--since, --until,
 * --older-than): an age before now (cf_duration_parse_s) or a date or UTC
 * time (cf_iso8601_normalize), in the stored form; *as_given = 1 when
 * `text` was a date. CF_ERR_INVALID with the date's message otherwise. */
cf_status cf_when_parse(const char *text, char *out, size_t n, int *as_given);

#endif
