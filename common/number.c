/* The one number parser (cloudfit/common/number.h). strtod and strtol are
 * too lenient on their own (leading spaces, '+', hex, inf/nan, silent
 * underflow), so the text is checked against a decimal grammar first and
 * the conversion is then range-checked. */
#include "cloudfit/common/number.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_digit(char c) { return c >= '0' && c <= '9'; }

int cf_number_syntax_ok(const char *text, size_t len, int json)
{
    size_t i = 0;
    if (i < len && text[i] == '-')
        i++;
    size_t int_start = i;
    while (i < len && is_digit(text[i]))
        i++;
    size_t int_digits = i - int_start;
    if (json && int_digits > 1 && text[int_start] == '0')
        return 0; /* 0128: JSON has no leading zeros */
    size_t frac_digits = 0;
    if (i < len && text[i] == '.') {
        i++;
        size_t frac_start = i;
        while (i < len && is_digit(text[i]))
            i++;
        frac_digits = i - frac_start;
        if (json && (int_digits == 0 || frac_digits == 0))
            return 0;
    }
    if (int_digits + frac_digits == 0)
        return 0;
    if (json && int_digits == 0)
        return 0;
    if (i < len && (text[i] == 'e' || text[i] == 'E')) {
        i++;
        if (i < len && (text[i] == '+' || text[i] == '-'))
            i++;
        size_t exp_start = i;
        while (i < len && is_digit(text[i]))
            i++;
        if (i == exp_start)
            return 0;
    }
    return i == len;
}

static int has_nonzero_digit(const char *text)
{
    for (const char *p = text; *p && *p != 'e' && *p != 'E'; p++)
        if (*p >= '1' && *p <= '9')
            return 1;
    return 0;
}

cf_number_result cf_number_double(const char *text, double min, double max, double *out)
{
    if (!text || !*text)
        return CF_NUMBER_EMPTY;
    size_t len = strlen(text);
    if (!cf_number_syntax_ok(text, len, 0))
        return CF_NUMBER_SYNTAX;
    errno = 0;
    char *end = NULL;
    double v = strtod(text, &end);
    if (end != text + len)
        return CF_NUMBER_SYNTAX;
    if (!isfinite(v) || (errno == ERANGE && (fabs(v) > 1.0 || has_nonzero_digit(text))))
        return CF_NUMBER_RANGE; /* overflow, or a non-zero value lost to underflow */
    if (v != 0 && fabs(v) < DBL_MIN)
        return CF_NUMBER_RANGE; /* subnormal: precision already lost */
    if (v < min || v > max)
        return CF_NUMBER_RANGE;
    *out = v == 0 ? 0.0 : v; /* no -0 */
    return CF_NUMBER_OK;
}

cf_number_result cf_number_long(const char *text, long min, long max, long *out)
{
    if (!text || !*text)
        return CF_NUMBER_EMPTY;
    size_t len = strlen(text);
    size_t i = text[0] == '-' ? 1 : 0;
    if (i == len)
        return CF_NUMBER_SYNTAX;
    for (size_t k = i; k < len; k++)
        if (!is_digit(text[k]))
            return cf_number_syntax_ok(text, len, 0) ? CF_NUMBER_NOT_INT : CF_NUMBER_SYNTAX;
    errno = 0;
    char *end = NULL;
    long v = strtol(text, &end, 10);
    if (end != text + len)
        return CF_NUMBER_SYNTAX;
    if (errno == ERANGE || v < min || v > max)
        return CF_NUMBER_RANGE;
    *out = v;
    return CF_NUMBER_OK;
}

cf_number_result cf_number_int(const char *text, int min, int max, int *out)
{
    long v = 0;
    cf_number_result r = cf_number_long(text, min, max, &v);
    if (r == CF_NUMBER_OK)
        *out = (int)v;
    return r;
}

cf_number_result cf_number_with_unit(const char *text, double min, double max, double *out, const char **out_unit)
{
    if (!text || !*text)
        return CF_NUMBER_EMPTY;
    size_t n = 0;
    while (text[n] && ((text[n] >= '0' && text[n] <= '9') || text[n] == '-' || text[n] == '.' ||
                       ((text[n] == 'e' || text[n] == 'E') && n > 0) ||
                       (text[n] == '+' && n > 0 && (text[n - 1] == 'e' || text[n - 1] == 'E'))))
        n++;
    char number[64];
    if (n == 0 || n >= sizeof number)
        return n == 0 ? CF_NUMBER_SYNTAX : CF_NUMBER_RANGE;
    memcpy(number, text, n);
    number[n] = '\0';
    double v = 0;
    cf_number_result r = cf_number_double(number, min, max, &v);
    if (r != CF_NUMBER_OK)
        return r;
    *out = v;
    *out_unit = text + n;
    return CF_NUMBER_OK;
}

cf_number_result cf_number_fraction(const char *text, double max, double *out)
{
    double v = 0;
    const char *unit = "";
    cf_number_result r = cf_number_with_unit(text, 0, HUGE_VAL, &v, &unit);
    if (r != CF_NUMBER_OK)
        return r;
    if (strcmp(unit, "%") == 0) {
        /* the decimal the user typed, divided by 100, to the nearest double:
         * 99.9 / 100 is 0.9990000000000001, not 0.999, and failed a range
         * check at 0.999 (15 digits hold any percentage a person types) */
        char exact[32];
        snprintf(exact, sizeof exact, "%.15g", v / 100);
        v = strtod(exact, NULL);
    } else if (*unit)
        return CF_NUMBER_SYNTAX;
    if (v > max)
        return CF_NUMBER_RANGE;
    *out = v;
    return CF_NUMBER_OK;
}

const char *cf_number_why(cf_number_result r)
{
    switch (r) {
    case CF_NUMBER_OK: return "ok";
    case CF_NUMBER_EMPTY: return "an empty value";
    case CF_NUMBER_SYNTAX: return "not a decimal number";
    case CF_NUMBER_NOT_INT: return "not an integer";
    case CF_NUMBER_RANGE: return "out of range";
    }
    return "?";
}

void cf_number_percent_text(double fraction, char *out, size_t n)
{
    double pct = 100 * fraction;
    int decimals = 0;
    while (decimals < 3 && fabs(pct * pow(10, decimals) - round(pct * pow(10, decimals))) > 1e-6)
        decimals++;
    snprintf(out, n, "%.*f%%", decimals, pct);
}

void cf_number_share_text(double fraction, char *out, size_t n)
{
    if (fraction < 1 && 100 * fraction >= 99.5)
        snprintf(out, n, "%.1f%%", floor(1000 * fraction) / 10);
    else
        snprintf(out, n, "%.0f%%", 100 * fraction);
}

void cf_number_plain_text(double v, int significant, char *out, size_t n)
{
    if (!isfinite(v) || fabs(v) >= 1e21) { /* beyond any limit or figure shown; %f would print 22+ digits */
        snprintf(out, n, "%g", v);
        return;
    }
    if (significant < 1)
        significant = 1;
    if (significant > DBL_DIG)
        significant = DBL_DIG;
    /* decimals for `significant` digits at v's magnitude; printf's rounding may carry into one more digit
     * (9.996 at 3: "10.00"), which the trimming below leaves as %g does ("10") */
    int exponent = v == 0 ? 0 : (int)floor(log10(fabs(v)));
    int decimals = significant - 1 - exponent;
    if (decimals < 0)
        decimals = 0; /* a whole number of more digits than `significant` stays whole: 1065 at 3 is "1065" */
    if (decimals > 40)
        decimals = 40;
    snprintf(out, n, "%.*f", decimals, v);
    char *point = strchr(out, '.');
    if (point) { /* trailing zeros go, as %g drops them */
        char *end = out + strlen(out);
        while (end > point + 1 && end[-1] == '0')
            *--end = '\0';
        if (end == point + 1)
            *point = '\0';
    }
    if (strcmp(out, "-0") == 0)
        strcpy(out, "0");
}

void cf_number_exact_text(double v, char *out, size_t n)
{
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(out, n, "%.*g", digits, v);
        if (!isfinite(v) || strtod(out, NULL) == v)
            return;
    }
}

void cf_number_beyond_text(double v, int digits, double lo, double hi, char *out, size_t n)
{
    int outside = v < lo || v > hi;
    for (; digits <= 17; digits++) {
        snprintf(out, n, "%.*g", digits, v);
        double shown = strtod(out, NULL);
        if (!outside || !isfinite(v) || shown < lo || shown > hi)
            return;
    }
}

void cf_number_fixed_text(double v, int decimals, int sign, char *out, size_t n)
{
    if (fabs(v) < 1e9)
        snprintf(out, n, sign ? "%+.*f" : "%.*f", decimals, v);
    else
        snprintf(out, n, sign ? "%+.3g" : "%.3g", v);
}
