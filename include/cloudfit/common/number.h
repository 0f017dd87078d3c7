/* The one number parser (common/number.c) for command-line options, CSV
 * fields and JSON numbers: decimal text only, range-checked into the
 * target type. No leading or trailing spaces, no '+' sign, no hex (0x10),
 * no inf/nan, no value that overflows or underflows the type. The caller
 * names the place (option, file:line:column, key path) in its message;
 * cf_number_why() says what is wrong with the text. */
#ifndef CLOUDFIT_COMMON_NUMBER_H
#define CLOUDFIT_COMMON_NUMBER_H
#include <stddef.h>

typedef enum {
    CF_NUMBER_OK = 0,
    CF_NUMBER_EMPTY,      /* "" */
    CF_NUMBER_SYNTAX,     /* not a decimal number ("0x10", " 5", "1e", "nan") */
    CF_NUMBER_NOT_INT,    /* a decimal number, but an integer was expected ("2.5") */
    CF_NUMBER_RANGE       /* overflows/underflows the type, or outside [min, max] */
} cf_number_result;

/* Grammar check of len bytes: [-]digits[.digits][(e|E)[+|-]digits], with
 * ".5" and "5." allowed unless `json` (RFC 8259: no leading zeros as in
 * "0128", digits on both sides of the point). */
int cf_number_syntax_ok(const char *text, size_t len, int json);
/* A decimal number within [min, max]; a non-zero value that underflows
 * to a subnormal or zero (1e-320) is CF_NUMBER_RANGE. */
cf_number_result cf_number_double(const char *text, double min, double max, double *out);
/* A decimal integer (digits with an optional '-') within [min, max]. */
cf_number_result cf_number_long(const char *text, long min, long max, long *out);
cf_number_result cf_number_int(const char *text, int min, int max, int *out);
/* A decimal number followed by a unit ("10%", "30d"): the longest prefix
 * made of digits, '-', '.', and an exponent is read as cf_number_double
 * reads a whole text, and *out_unit points at what follows it ("" when
 * nothing does); the caller checks the unit. " 5%" and "0x10%" are
 * CF_NUMBER_SYNTAX (the number part is empty or "0" followed by "x10%"). */
cf_number_result cf_number_with_unit(const char *text, double min, double max, double *out, const char **out_unit);
/* A fraction from 0 to max given as "0.05" or "5%" (decimal only); the
 * value divided by 100 for a '%'. */
cf_number_result cf_number_fraction(const char *text, double max, double *out);
/* "expected a decimal number" and the like, for messages. */
const char *cf_number_why(cf_number_result r);
/* What is wrong with `text`, which a parse refused with `r`, in words for
 * a message, into out[n]: "an empty value", "negative", "not a finite
 * number" (inf, nan), "'abc' after the number" (the rest escaped),
 * otherwise cf_number_why(r). Returns out. */
const char *cf_number_explain(const char *text, cf_number_result r, char *out, size_t n);
/* An amount of US dollars as every money option takes it, "25" or "$25"
 * (docs/ci.md): a decimal number (cf_number_double) within [min, max]
 * after an optional '$'. On failure, where `why` is not NULL, why[why_len]
 * says what is wrong (cf_number_explain; "no amount after '$'"). */
cf_number_result cf_number_usd(const char *text, double min, double max, double *out, char *why, size_t why_len);

/* A fraction as a percentage with the decimals it needs, up to three:
 * 0.9 → "90%", 0.999 → "99.9%" (it printed "100%"), 0.9995 → "99.95%". */
void cf_number_percent_text(double fraction, char *out, size_t n);

/* A share as a whole percentage, but one under 1 never reads "100%":
 * 0.9965 → "99.6%" (cut, not rounded up), 0.42 → "42%". */
void cf_number_share_text(double fraction, char *out, size_t n);

/* A number as %.<significant>g writes it, but never in scientific
 * notation: a whole number of more digits than `significant` is written
 * whole ("%.3g" of 1065 h read "1.07e+03", this "1065"; "%g" of a
 * $2,500,000 budget "2.5e+06", this "2500000"); trailing zeros dropped.
 * DBL_DIG (15) significant digits give a limit back as it was given
 * (1234567.89, where "%g" read 1.23457e+06). For what people read:
 * markdown, the HTML report, the text's limits. */
void cf_number_plain_text(double v, int significant, char *out, size_t n);
#define CF_NUMBER_AS_GIVEN 15

/* v in the fewest significant digits (up to 17) that read back as v, as
 * %g writes them: 1000001 → "1000001", 1.5e12 → "1.5e+12", 1e300 →
 * "1e+300". For a value refused against a bound: "%.6g" wrote 1000001 as
 * "1e+06", the bound 1e6 itself. */
void cf_number_exact_text(double v, char *out, size_t n);

/* v as %.{digits}g, or with more significant digits (up to 17) where
 * fewer would round it onto or inside [lo, hi] though v lies outside: a
 * ratio refused against a bound of 20 is "20.0002", not "20" (record said
 * "is 20× … used within 20×" and "0.05× … at least 1/20"). */
void cf_number_beyond_text(double v, int digits, double lo, double hi, char *out, size_t n);

/* v with `decimals` decimals (%.*f; a '+' for a positive value when
 * `sign`), but a magnitude of 1e9 or more as %.3g ("1.3e+302"): %f of a
 * result computed from an extreme input (validate --inter-node-gbps
 * 1e-300) printed hundreds of digits into a table. For tables of
 * percentages and counts. */
void cf_number_fixed_text(double v, int decimals, int sign, char *out, size_t n);

#endif
