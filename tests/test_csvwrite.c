/* Tests of common/csvwrite.c: RFC 4180 quoting (read back with the
 * project's libcsv reader) and the formula guard: a text field starting
 * with = + - @ TAB or CR gets a leading apostrophe, whatever else it holds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "cloudfit/common/csvread.h"
#include "cloudfit/common/csvwrite.h"

/* A header "f,g" and one record with `text` and 7, parsed back (a row of
 * another width than its header is refused). */
static void round_trip(const char *text, const char *want_read)
{
    cf_buf b = CF_BUF_INIT;
    cf_csv_put_text(&b, "f", 0);
    cf_csv_put_text(&b, "g", 1);
    cf_csv_put_text(&b, text, 0);
    cf_csv_put_int(&b, 7, 1);
    assert_false(cf_buf_failed(&b));
    cf_csv_doc doc;
    if (cf_csv_parse(b.data, b.len, "out.csv", &doc) != CF_OK)
        fail_msg("unreadable CSV for '%s': %s\n%s", text, cf_error_message(), b.data);
    assert_int_equal(doc.n_records, 1);
    assert_int_equal(doc.records[0].n_fields, 2);
    assert_string_equal(cf_csv_field(&doc.records[0], 0), want_read);
    assert_string_equal(cf_csv_field(&doc.records[0], 1), "7");
    cf_csv_free(&doc);
    cf_buf_free(&b);
}

static void written(const char *text, const char *want)
{
    cf_buf b = CF_BUF_INIT;
    cf_csv_put_field(&b, text);
    assert_string_equal(cf_buf_cstr(&b), want);
    cf_buf_free(&b);
}

static void test_plain_fields_are_not_quoted(void **state)
{
    (void)state;
    written("main", "main");
    written("us-east-1", "us-east-1");
    written("a b", "a b");
    written("", "");
    cf_buf b = CF_BUF_INIT;
    cf_csv_put_text(&b, "x", 0);
    cf_csv_put_number(&b, 0.25, 0);
    cf_csv_put_number(&b, NAN, 0);
    cf_csv_put_int(&b, -3, 1);
    assert_string_equal(cf_buf_cstr(&b), "x,0.25,,-3\r\n");
    cf_buf_free(&b);
}

static void test_rfc4180_quoting(void **state)
{
    (void)state;
    written("a,b", "\"a,b\"");
    written("say \"hi\"", "\"say \"\"hi\"\"\"");
    written("two\nlines", "\"two\nlines\"");
    written("cr\rin", "\"cr\rin\"");
    round_trip("a,b", "a,b");
    round_trip("say \"hi\"", "say \"hi\"");
    round_trip("two\nlines", "two\nlines");
}

static void test_formula_guard(void **state)
{
    (void)state;
    written("=1+1", "\"'=1+1\"");
    written("+1", "\"'+1\"");
    written("-1", "\"'-1\"");
    written("@SUM(A1)", "\"'@SUM(A1)\"");
    written("\t=1", "\"'\t=1\"");
    written("\rcmd", "\"'\rcmd\"");
    written("=HYPERLINK(\"x\")", "\"'=HYPERLINK(\"\"x\"\")\"");
    /* Only the first character counts. */
    written("a=1", "a=1");
    written("x\t", "x\t");
    round_trip("=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0");
    round_trip("\tfeat,\"x\"", "'\tfeat,\"x\"");
    round_trip("\r=1", "'\r=1");
}

/* Data read back by programs: quoted as RFC 4180 asks, never guarded, so a
 * value that starts with '-' or '=' reads back as written. */
static void test_data_fields_are_quoted_not_guarded(void **state)
{
    (void)state;
    const char *cases[][2] = {{"-x", "-x"}, {"=1+2", "=1+2"}, {"a,b", "\"a,b\""}, {"say \"hi\"", "\"say \"\"hi\"\"\""},
                              {"two\nlines", "\"two\nlines\""}, {"", ""}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cf_buf b = CF_BUF_INIT;
        cf_csv_put_data_field(&b, cases[i][0]);
        assert_string_equal(cf_buf_cstr(&b), cases[i][1]);
        cf_buf_free(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_fields_are_not_quoted),
        cmocka_unit_test(test_rfc4180_quoting),
        cmocka_unit_test(test_formula_guard),
        cmocka_unit_test(test_data_fields_are_quoted_not_guarded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
