/* Wall-clock helpers. SOURCE_DATE_EPOCH (reproducible-builds convention)
 * fixes "now" so golden-file tests are stable. */
#ifndef CLOUDFIT_COMMON_CLOCK_H
#define CLOUDFIT_COMMON_CLOCK_H
#include <stddef.h>

void cf_now_iso8601(char *out, size_t n);
/* Days from a YYYY-MM-DD date to now (0 when the date cannot be parsed). */
double cf_days_since(const char *ymd);
/* "Now" minus `seconds`, as ISO 8601 UTC (for `history prune --older-than`). */
void cf_iso8601_ago(double seconds, char *out, size_t n);

#endif
