/* The one number parser (common/number.c), the escaping of text from input
 * (common/escape.c), and their use by the CSV and JSON readers. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cloudfit/common/csvread.h"
#include "cloudfit/common/escape.h"
#include "cloudfit/common/json.h"
#include "cloudfit/common/number.h"

static void test_doubles(void **state)
{
    (void)state;
    double v = -1;
    assert_int_equal(cf_number_double("0.5", 0, 1, &v), CF_NUMBER_OK);
    assert_true(v == 0.5);
    assert_int_equal(cf_number_double("-2.5e3", -HUGE_VAL, HUGE_VAL, &v), CF_NUMBER_OK);
    assert_true(v == -2500);
    assert_int_equal(cf_number_double(".5", 0, 1, &v), CF_NUMBER_OK);
    assert_int_equal(cf_number_double("0", 0, 1, &v), CF_NUMBER_OK);
    assert_int_equal(cf_number_double("-0", -1, 1, &v), CF_NUMBER_OK);
    assert_true(v == 0 && !signbit(v));
    const char *syntax[] = {"0x10", " 1", "1 ", "+1", "1e", "e5", "nan", "inf", "-", ".", "1..2", "1,5", "١", NULL};
    for (int i = 0; syntax[i]; i++)
        assert_int_equal(cf_number_double(syntax[i], -HUGE_VAL, HUGE_VAL, &v), CF_NUMBER_SYNTAX);
    assert_int_equal(cf_number_double("", 0, 1, &v), CF_NUMBER_EMPTY);
    assert_int_equal(cf_number_double("1e400", -HUGE_VAL, HUGE_VAL, &v), CF_NUMBER_RANGE);
    assert_int_equal(cf_number_double("1e-320", -HUGE_VAL, HUGE_VAL, &v), CF_NUMBER_RANGE); /* subnormal */
    assert_int_equal(cf_number_double("0e-400", -HUGE_VAL, HUGE_VAL, &v), CF_NUMBER_OK);
    assert_int_equal(cf_number_double("2", 0, 1, &v), CF_NUMBER_RANGE);
    /* a percentage is the decimal typed, divided by 100, to the nearest
     * double: 99.9% is 0.999 (99.9 / 100 is 0.9990000000000001, refused by
     * --confidence's range up to 0.999) */
    const char *pct[] = {"99.9%", "2%", "12.5%", "0.1%", "33.3%"};
    const double want[] = {0.999, 0.02, 0.125, 0.001, 0.333};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(cf_number_fraction(pct[i], 1, &v), CF_NUMBER_OK);
        if (v != want[i])
            fail_msg("%s read as %.17g, not %.17g", pct[i], v, want[i]);
    }
}

/* Every amount of US dollars (--max-cost, --budget-usd, --total-usd,
 * --price, --max-cost-increase) goes through cf_number_usd: "$100" was
 * refused by --max-cost while --max-cost-increase took "$25", and a
 * refusal said only "not a decimal number". */
static void test_usd_amounts(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        cf_number_result r;
        double value;
        const char *why;
    } cases[] = {
        {"100", CF_NUMBER_OK, 100, NULL},
        {"$100", CF_NUMBER_OK, 100, NULL},
        {"$0.53", CF_NUMBER_OK, 0.53, NULL},
        {"2.5e1", CF_NUMBER_OK, 25, NULL},
        {"$2.5e1", CF_NUMBER_OK, 25, NULL},
        {"-5", CF_NUMBER_RANGE, 0, "negative"},
        {"$-5", CF_NUMBER_RANGE, 0, "negative"},
        {"", CF_NUMBER_EMPTY, 0, "an empty value"},
        {"$", CF_NUMBER_EMPTY, 0, "no amount after '$'"},
        {"nan", CF_NUMBER_SYNTAX, 0, "not a finite number"},
        {"$inf", CF_NUMBER_SYNTAX, 0, "not a finite number"},
        {"-Infinity", CF_NUMBER_SYNTAX, 0, "not a finite number"},
        {"100usd", CF_NUMBER_SYNTAX, 0, "'usd' after the number"},
        {"$100abc", CF_NUMBER_SYNTAX, 0, "'abc' after the number"},
        {"100 ", CF_NUMBER_SYNTAX, 0, "' ' after the number"},
        {"0x10", CF_NUMBER_SYNTAX, 0, "'x10' after the number"},
        {"$$5", CF_NUMBER_SYNTAX, 0, "not a decimal number"},
        {" 5", CF_NUMBER_SYNTAX, 0, "not a decimal number"},
        {"+5", CF_NUMBER_SYNTAX, 0, "not a decimal number"},
        {"5$", CF_NUMBER_SYNTAX, 0, "'$' after the number"},
        {"1e999", CF_NUMBER_RANGE, 0, "out of range"},
        {"100\x1b", CF_NUMBER_SYNTAX, 0, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        double v = -1;
        char why[96] = "";
        cf_number_result r = cf_number_usd(cases[i].text, 0, HUGE_VAL, &v, why, sizeof why);
        if (r != cases[i].r)
            fail_msg("'%s': result %d, not %d", cases[i].text, (int)r, (int)cases[i].r);
        if (r == CF_NUMBER_OK && v != cases[i].value)
            fail_msg("'%s' read as %.17g, not %.17g", cases[i].text, v, cases[i].value);
        if (cases[i].why && strcmp(why, cases[i].why) != 0)
            fail_msg("'%s': why '%s', not '%s'", cases[i].text, why, cases[i].why);
    }
    /* what follows the number is shown escaped */
    char why[96];
    double v;
    assert_int_equal(cf_number_usd("5\x1b[2J", 0, HUGE_VAL, &v, why, sizeof why), CF_NUMBER_SYNTAX);
    assert_string_equal(why, "'\\e[2J' after the number");
    assert_string_equal(cf_number_explain("-3", CF_NUMBER_RANGE, why, sizeof why), "negative");
    assert_string_equal(cf_number_explain("1e-320", CF_NUMBER_RANGE, why, sizeof why), "out of range");
}

static void test_integers(void **state)
{
    (void)state;
    long l = 0;
    int i = 0;
    assert_int_equal(cf_number_long("-42", LONG_MIN, LONG_MAX, &l), CF_NUMBER_OK);
    assert_int_equal(l, -42);
    assert_int_equal(cf_number_int("2147483647", INT_MIN, INT_MAX, &i), CF_NUMBER_OK);
    assert_int_equal(cf_number_int("2147483648", INT_MIN, INT_MAX, &i), CF_NUMBER_RANGE);
    assert_int_equal(cf_number_int("99999999999", INT_MIN, INT_MAX, &i), CF_NUMBER_RANGE);
    assert_int_equal(cf_number_long("99999999999999999999", LONG_MIN, LONG_MAX, &l), CF_NUMBER_RANGE);
    assert_int_equal(cf_number_int("16.0", 1, 100, &i), CF_NUMBER_NOT_INT);
    assert_int_equal(cf_number_int("1e3", 1, 10000, &i), CF_NUMBER_NOT_INT);
    assert_int_equal(cf_number_int("0x10", 1, 100, &i), CF_NUMBER_SYNTAX);
    assert_int_equal(cf_number_int(" 5", 1, 100, &i), CF_NUMBER_SYNTAX);
    assert_int_equal(cf_number_int("+5", 1, 100, &i), CF_NUMBER_SYNTAX);
    assert_int_equal(cf_number_int("0", 1, 100, &i), CF_NUMBER_RANGE);
}

static void test_json_grammar(void **state)
{
    (void)state;
    assert_true(cf_number_syntax_ok("0", 1, 1));
    assert_true(cf_number_syntax_ok("-0.5e-3", 7, 1));
    assert_false(cf_number_syntax_ok("0128", 4, 1));
    assert_true(cf_number_syntax_ok("0128", 4, 0));
    assert_false(cf_number_syntax_ok(".5", 2, 1));
    assert_false(cf_number_syntax_ok("5.", 2, 1));
    cJSON *doc = NULL;
    const char *text = "{\n  \"a\": [1, 2,\n 0128]}";
    assert_int_equal(cf_json_read(text, strlen(text), "x.json", &doc), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "x.json:3:2: invalid JSON: invalid number '0128'");
    text = "{\"lr\": 1e-320}";
    assert_int_equal(cf_json_read(text, strlen(text), "x.json", &doc), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "x.json:1:8: invalid JSON: number out of range '1e-320'");
    text = "{\"s\": \"0128 in a string is text\", \"n\": [0, -1.5E+3, 1e308]}";
    assert_int_equal(cf_json_read(text, strlen(text), "x.json", &doc), CF_OK);
    cJSON_Delete(doc);
}

static void test_csv_bom_nul_spaces(void **state)
{
    (void)state;
    cf_csv_doc doc;
    const char bom[] = "\xEF\xBB\xBFmodel,n\nx,1\n";
    assert_int_equal(cf_csv_parse(bom, strlen(bom), "b.csv", &doc), CF_OK);
    assert_int_equal(cf_csv_column(&doc, "model"), 0);
    cf_csv_free(&doc);
    const char nul[] = "model,n\nab\0c,1\n";
    assert_int_equal(cf_csv_parse(nul, sizeof nul - 1, "n.csv", &doc), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "n.csv:2:3: NUL byte in the text");
    const char sp[] = "model,n\nx, 1\n";
    assert_int_equal(cf_csv_parse(sp, strlen(sp), "s.csv", &doc), CF_OK);
    long v = 0;
    assert_int_equal(cf_csv_int(&doc, &doc.records[0], 1, 1, 0, &v), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "s.csv:2: column 'n': expected an integer, got ' 1'");
    cf_csv_free(&doc);
}

static void test_escape(void **state)
{
    (void)state;
    char out[64];
    cf_escape_into("a\x1b]0;x\x07\nb\tc\x7f\xc2\x9b", out, sizeof out);
    assert_string_equal(out, "a\\e]0;x\\x07\\nb\\tc\\x7f\\u009b");
    assert_false(cf_has_controls("plain ünïcode"));
    assert_true(cf_has_controls("bell\x07"));
    cf_escape_into("abcdef\x1b", out, 8); /* truncated, never half an escape */
    assert_string_equal(out, "abcdef");
    /* Issue 33 (6): bytes that are not UTF-8 are escaped too: a stray
     * byte, an overlong '/', a surrogate, a sequence cut short, above U+10FFFF */
    cf_escape_into("T4\xff\xc0\xaf\xed\xa0\x80|\xe2\x82|\xf4\x90\x80\x80|\xe2\x82\xac", out, sizeof out);
    assert_string_equal(out, "T4\\xff\\xc0\\xaf\\xed\\xa0\\x80|\\xe2\\x82|\\xf4\\x90\\x80\\x80|\xe2\x82\xac");
    assert_true(cf_has_controls("T4\xff"));
    assert_false(cf_has_controls("\xf0\x9f\x98\x80 \xe2\x82\xac"));
    /* Characters that reorder the text around them (Trojan Source) are
     * escaped as their code points: RLO, LRI/PDI, RLM, ALM, the line
     * separator; Arabic and Hebrew letters are text, kept */
    cf_escape_into("fix\xe2\x80\xae" "00|\xe2\x81\xa6x\xe2\x81\xa9|\xe2\x80\x8f|\xd8\x9c|\xe2\x80\xa8|\xd7\x90\xd8\xa8", out,
                   sizeof out);
    assert_string_equal(out, "fix\\u202e00|\\u2066x\\u2069|\\u200f|\\u061c|\\u2028|\xd7\x90\xd8\xa8");
    assert_true(cf_has_controls("a\xe2\x80\xae" "b"));
    cf_buf json = CF_BUF_INIT;
    cf_escape_output("a\xe2\x80\xae" "b", 5, CF_ESCAPE_JSON, NULL, &json);
    assert_string_equal(cf_buf_cstr(&json), "a\\u202eb"); /* a JSON escape: the text itself, made visible */
    cf_buf_free(&json);
    /* text to store: cut at a character boundary, escaped when not UTF-8 */
    cf_text_fit("ab\xc3\xa9", 3, out, sizeof out); /* the cut would fall inside 'é' */
    assert_string_equal(out, "ab");
    cf_text_fit("ab\xc3\xa9", 4, out, sizeof out);
    assert_string_equal(out, "ab\xc3\xa9");
    cf_text_fit("ab\xc3\xa9", 100, out, 4); /* the buffer's size cuts too */
    assert_string_equal(out, "ab");
    cf_text_fit("br\xff", 100, out, sizeof out);
    assert_string_equal(out, "br\\xff");
    /* a line end or a reordering character in a CI branch forged a line of `history show` */
    cf_text_fit("feature\n  ci  main\xe2\x80\xae", 100, out, sizeof out);
    assert_string_equal(out, "feature\\n  ci  main\\u202e");
    /* shares and confidences with the digits that matter: a share under 1 never reads 100% */
    static const struct {
        double v;
        const char *share, *percent;
    } shares[] = {{0.9965, "99.6%", "99.65%"}, {0.42, "42%", "42%"}, {1.0, "100%", "100%"}, {0.999, "99.9%", "99.9%"},
                  {0.9, "90%", "90%"}, {0.9995, "99.9%", "99.95%"}};
    for (size_t i = 0; i < sizeof shares / sizeof *shares; i++) {
        cf_number_share_text(shares[i].v, out, sizeof out);
        assert_string_equal(out, shares[i].share);
        cf_number_percent_text(shares[i].v, out, sizeof out);
        assert_string_equal(out, shares[i].percent);
    }
}

/* Figures people read never switch to scientific notation: "%.3g" wrote a
 * 1065 h plan as "1.07e+03" in the HTML report, "%g" a $2,500,000 budget
 * as "2.5e+06" and a --max-cost 1234567.89 as "1.23457e+06". */
/* validate's tables printed %f of 2.9e302 %: hundreds of digits */
static void test_fixed_text(void **state)
{
    (void)state;
    char out[32];
    cf_number_fixed_text(12.345, 1, 0, out, sizeof out);
    assert_string_equal(out, "12.3");
    cf_number_fixed_text(-99.94, 1, 1, out, sizeof out);
    assert_string_equal(out, "-99.9");
    cf_number_fixed_text(5, 1, 1, out, sizeof out);
    assert_string_equal(out, "+5.0");
    cf_number_fixed_text(999999999.4, 0, 0, out, sizeof out);
    assert_string_equal(out, "999999999");
    cf_number_fixed_text(2.886e302, 1, 0, out, sizeof out);
    assert_string_equal(out, "2.89e+302");
    cf_number_fixed_text(3.1e300, 1, 1, out, sizeof out);
    assert_string_equal(out, "+3.1e+300");
    cf_number_fixed_text(-1e20, 0, 0, out, sizeof out);
    assert_string_equal(out, "-1e+20");
}

static void test_plain_text(void **state)
{
    (void)state;
    char out[64];
    struct {
        double v;
        int significant;
        const char *want;
    } cases[] = {{1065.3, 3, "1065"},         {0.196436, 3, "0.196"},   {0.18, 3, "0.18"},      {9.996, 3, "10"},
                 {0.0009996, 3, "0.001"},     {447.2, 3, "447"},        {2485.9, 3, "2486"},    {0, 3, "0"},
                 {2500000, 15, "2500000"},    {1234567.89, 15, "1234567.89"}, {1e6, 15, "1000000"}, {24, 15, "24"},
                 {1500, 15, "1500"},          {0.1, 15, "0.1"},         {1e12, 15, "1000000000000"},
                 {2147483647, 15, "2147483647"}, {-0.0001, 2, "-0.0001"}, {0.3333333, 15, "0.3333333"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cf_number_plain_text(cases[i].v, cases[i].significant, out, sizeof out);
        assert_string_equal(out, cases[i].want);
        char g[64]; /* where %g has no exponent, the same text */
        snprintf(g, sizeof g, "%.*g", cases[i].significant, cases[i].v);
        if (!strchr(g, 'e'))
            assert_string_equal(out, g);
    }
}

/* A value refused against a bound, exactly: "%.6g" wrote 1000001 as "1e+06", the bound 1e6 itself. */
static void test_exact_text(void **state)
{
    (void)state;
    char out[32];
    struct {
        double v;
        const char *want;
    } cases[] = {{1000001, "1000001"},  {1e6, "1e+06"},     {1.5e12, "1.5e+12"},       {1000000000001, "1000000000001"},
                 {1e300, "1e+300"},     {0.1, "0.1"},       {1000000.5, "1000000.5"},  {2e12, "2e+12"},
                 {INFINITY, "inf"},     {0.3333333333333333, "0.3333333333333333"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cf_number_exact_text(cases[i].v, out, sizeof out);
        assert_string_equal(out, cases[i].want);
        if (isfinite(cases[i].v))
            assert_true(strtod(out, NULL) == cases[i].v);
    }
}

/* A ratio refused against a bound is shown past it: "%.3g" wrote 20.0002 as "20", the bound itself
 * (record: "is 20× … used within 20×"); one within the bounds keeps its three digits. */
static void test_beyond_text(void **state)
{
    (void)state;
    char out[32];
    struct {
        double v, lo, hi;
        const char *want;
    } cases[] = {{20.0002, 0.05, 20, "20.0002"}, {0.049999, 0.05, 20, "0.049999"}, {0.049999, 0.05, HUGE_VAL, "0.049999"},
                 {108.3, 0.05, 20, "108"},       {1.5, 0.05, 20, "1.5"},          {19.99999, 0.05, 20, "20"},
                 {0.0501, 0.05, 20, "0.0501"},   {20.000000000000004, 0.05, 20, "20.000000000000004"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cf_number_beyond_text(cases[i].v, 3, cases[i].lo, cases[i].hi, out, sizeof out);
        assert_string_equal(out, cases[i].want);
    }
}

/* The pass every result takes (cli/term/output.c): each mode keeps what
 * its format needs and escapes the rest; kept colour codes stay. */
/* Text cut at a byte count for a message or a note ends at a character
 * boundary: "%.40s" of a name with 'é' across the cut ended inside it, and
 * the half character showed as "\xc3" in the gate note (advisor/plan/gates.c). */
static void test_utf8_prefix_and_clip(void **state)
{
    (void)state;
    char out[64];
    assert_int_equal(cf_utf8_prefix("ab\xc3\xa9" "c", 3), 2); /* inside 'é' */
    assert_int_equal(cf_utf8_prefix("ab\xc3\xa9" "c", 4), 4);
    assert_int_equal(cf_utf8_prefix("ab\xc3\xa9" "c", 100), 5); /* the whole text */
    assert_int_equal(cf_utf8_prefix("\xe2\x82\xac\xf0\x9f\x98\x80", 6), 3); /* '€' whole, the emoji not */
    assert_int_equal(cf_utf8_prefix("a\xff\xfe" "b", 2), 2); /* a byte that is not UTF-8 is one character */
    assert_int_equal(cf_utf8_prefix("abc", 0), 0);
    assert_int_equal(cf_utf8_prefix("abc", (size_t)-1), 3);
    cf_text_clip("short", 40, out, sizeof out); /* fits: whole, no mark */
    assert_string_equal(out, "short");
    cf_text_clip("x\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 8, out, sizeof out); /* 9 bytes: 5 and "…" */
    assert_string_equal(out, "x\xc3\xa9\xc3\xa9\xe2\x80\xa6");
    assert_int_equal(cf_utf8_invalid_at(out), -1);
    cf_text_clip("abcdefgh", 100, out, 6); /* the buffer's size cuts too */
    assert_string_equal(out, "ab\xe2\x80\xa6");
    cf_text_clip("abcdef", 2, out, sizeof out); /* no room for the mark */
    assert_string_equal(out, "ab");
    /* every cut of a name with multi-byte characters is valid UTF-8 */
    const char *name = "g\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xc3\xa9x";
    for (size_t max = 0; max <= strlen(name); max++) {
        cf_text_clip(name, max, out, sizeof out);
        assert_int_equal(cf_utf8_invalid_at(out), -1);
        assert_true(strlen(out) <= max);
        char shown[64];
        snprintf(shown, sizeof shown, "%.*s", (int)cf_utf8_prefix(name, max), name);
        assert_int_equal(cf_utf8_invalid_at(shown), -1);
    }
    /* cf_text_fit_clip: escaped as cf_text_fit, cut as cf_text_clip (cf_text_fit's cut had no mark) */
    cf_text_fit_clip("my-private-cloud-\xc3\xa9-two", 15, out, 16);
    assert_string_equal(out, "my-private-c\xe2\x80\xa6");
    cf_text_fit_clip("lambda", 15, out, 16);
    assert_string_equal(out, "lambda");
    cf_text_fit_clip("a\nbcdefghijk", 10, out, sizeof out);
    assert_null(strchr(out, '\n'));
    assert_int_equal(strlen(out), 10);
    assert_non_null(strstr(out, "\xe2\x80\xa6"));
}

static void test_escape_output(void **state)
{
    (void)state;
    const char text[] = "a\tb\r\nc\x1b[2J\x1b[1m\x7f\xc2\x9b\xff\x1b[0m\n";
    const char *const keep[] = {"\x1b[1m", "\x1b[0m", NULL};
    struct {
        cf_escape_mode mode;
        const char *const *keep;
        const char *want;
    } cases[] = {
        {CF_ESCAPE_ALL, NULL, "a\\tb\\r\\nc\\e[2J\\e[1m\\x7f\\u009b\\xff\\e[0m\\n"},
        {CF_ESCAPE_TEXT, keep, "a\tb\r\nc\\e[2J\x1b[1m\\x7f\\u009b\\xff\x1b[0m\n"},
        {CF_ESCAPE_CSV, NULL, "a\tb\r\nc\\e[2J\\e[1m\\x7f\\u009b\\xff\\e[0m\n"},
        {CF_ESCAPE_JSON, NULL, "a\tb\r\nc\\u001b[2J\\u001b[1m\\u007f\\u009b\\ufffd\\u001b[0m\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cf_buf out = CF_BUF_INIT;
        cf_escape_output(text, sizeof text - 1, cases[i].mode, cases[i].keep, &out);
        assert_string_equal(cf_buf_cstr(&out), cases[i].want);
        cf_buf_free(&out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_doubles), cmocka_unit_test(test_usd_amounts),
                                       cmocka_unit_test(test_integers),
                                       cmocka_unit_test(test_json_grammar), cmocka_unit_test(test_csv_bom_nul_spaces),
                                       cmocka_unit_test(test_escape), cmocka_unit_test(test_escape_output),
                                       cmocka_unit_test(test_utf8_prefix_and_clip),
                                       cmocka_unit_test(test_plain_text), cmocka_unit_test(test_exact_text),
                                       cmocka_unit_test(test_beyond_text),
                                       cmocka_unit_test(test_fixed_text)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
