/* What is wrong with a refused number, in words, and amounts of US dollars
 * (cloudfit/common/number.h). Apart from number.c, which the CUDA module
 * links on its own: these show input text escaped (common/escape.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cloudfit/common/escape.h"
#include "cloudfit/common/number.h"

const char *cf_number_explain(const char *text, cf_number_result r, char *out, size_t n)
{
    if (n == 0)
        return out;
    if (r == CF_NUMBER_EMPTY || !text || !*text) {
        snprintf(out, n, "%s", cf_number_why(CF_NUMBER_EMPTY));
        return out;
    }
    const char *word = text + (text[0] == '-' || text[0] == '+');
    if (strcasecmp(word, "inf") == 0 || strcasecmp(word, "infinity") == 0 || strncasecmp(word, "nan", 3) == 0) {
        snprintf(out, n, "not a finite number");
        return out;
    }
    double v = 0;
    if (r == CF_NUMBER_RANGE && cf_number_double(text, -HUGE_VAL, HUGE_VAL, &v) == CF_NUMBER_OK && v < 0) {
        snprintf(out, n, "negative");
        return out;
    }
    if (r == CF_NUMBER_SYNTAX) {
        /* the longest prefix that is a number: "25abc" is 25 and "abc" */
        size_t len = strlen(text);
        for (size_t k = len < 64 ? len : 64; k-- > 1;)
            if (cf_number_syntax_ok(text, k, 0)) {
                char rest[48];
                cf_escape_into(text + k, rest, sizeof rest);
                snprintf(out, n, "'%s' after the number", rest);
                return out;
            }
    }
    snprintf(out, n, "%s", cf_number_why(r));
    return out;
}

cf_number_result cf_number_usd(const char *text, double min, double max, double *out, char *why, size_t why_len)
{
    const char *number = text && text[0] == '$' ? text + 1 : text;
    cf_number_result r = cf_number_double(number, min, max, out);
    if (r != CF_NUMBER_OK && why && why_len) {
        if (number != text && !*number)
            snprintf(why, why_len, "no amount after '$'");
        else
            cf_number_explain(number, r, why, why_len);
    }
    return r;
}
