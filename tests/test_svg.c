/* Tests of common/svg.c: escaping (XML-safe whatever the input), scales
 * and their inverse, readable ticks and domains, tick labels, marks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "cloudfit/common/svg.h"

static void assert_escaped(const char *text, const char *want)
{
    cf_buf b = CF_BUF_INIT;
    cf_svg_escape(&b, text);
    assert_false(cf_buf_failed(&b));
    assert_string_equal(cf_buf_cstr(&b), want);
    cf_buf_free(&b);
}

static void test_escape(void **state)
{
    (void)state;
    assert_escaped("plain", "plain");
    assert_escaped("", "");
    assert_escaped("<script>alert('x')</script>", "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;");
    assert_escaped("a & b \"q\"", "a &amp; b &quot;q&quot;");
    assert_escaped("already &amp;", "already &amp;amp;");
    /* TAB, LF, CR stay; other control characters are not XML 1.0: U+FFFD */
    assert_escaped("a\tb\nc\rd", "a\tb\nc\rd");
    assert_escaped("x\x01y\x1bz", "x\xEF\xBF\xBDy\xEF\xBF\xBDz");
    /* valid UTF-8 passes; invalid bytes, overlong forms and surrogates do not */
    assert_escaped("80 % — p10–p90 ×", "80 % — p10–p90 ×");
    assert_escaped("\xF0\x9F\x9A\x80", "\xF0\x9F\x9A\x80");
    assert_escaped("bad\xFF" "byte", "bad\xEF\xBF\xBD" "byte");
    assert_escaped("\xC0\xAF", "\xEF\xBF\xBD\xEF\xBF\xBD");
    assert_escaped("\xED\xA0\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
    assert_escaped("cut\xE2\x82", "cut\xEF\xBF\xBD\xEF\xBF\xBD");
    assert_escaped(NULL, "");
    /* not XML characters (U+FFFE, U+FFFF: xmllint refused the file), or acting on a terminal (DEL, C1) */
    assert_escaped("a\xEF\xBF\xBF" "b\xEF\xBF\xBE" "c", "a\xEF\xBF\xBD" "b\xEF\xBF\xBD" "c");
    assert_escaped("d\x7f" "e\xC2\x9B" "f", "d\xEF\xBF\xBD" "e\xEF\xBF\xBD" "f");
    assert_escaped("\xEF\xBF\xBD", "\xEF\xBF\xBD"); /* U+FFFD itself passes */
    /* a character that reorders the text around it, shown as the other outputs show it (the report had it raw) */
    assert_escaped("file\xE2\x80\xAE" "evil", "file\\u202eevil");
}

static void test_attributes(void **state)
{
    (void)state;
    cf_buf b = CF_BUF_INIT;
    cf_svg_attr(&b, "data-gpu", "A100\"><x");
    cf_svg_attr_num(&b, "data-hours", 18.91);
    assert_string_equal(cf_buf_cstr(&b), " data-gpu=\"A100&quot;&gt;&lt;x\" data-hours=\"18.91\"");
    cf_buf_free(&b);
}

static void test_linear_scale(void **state)
{
    (void)state;
    cf_svg_scale s = cf_svg_scale_make(0.3, 9.2, 100, 500, 0);
    assert_true(s.d0 == 0 && s.d1 == 10); /* readable bounds */
    assert_true(fabs(cf_svg_map(&s, 5) - 300) < 1e-9);
    for (double v = 0; v <= 10; v += 0.7)
        assert_true(fabs(cf_svg_invert(&s, cf_svg_map(&s, v)) - v) < 1e-9);
    double t[32];
    size_t n = cf_svg_ticks(&s, 5, t, 32);
    assert_int_equal(n, 6);
    for (size_t i = 0; i < n; i++)
        assert_true(fabs(t[i] - 2.0 * (double)i) < 1e-12);
    /* a y axis runs downwards */
    cf_svg_scale y = cf_svg_scale_make(0, 400, 420, 20, 0);
    assert_true(cf_svg_map(&y, 400) < cf_svg_map(&y, 0));
    /* one value: widened, never a zero-width domain */
    cf_svg_scale one = cf_svg_scale_make(7, 7, 0, 1, 0);
    assert_true(one.d1 > one.d0 && one.d0 <= 7 && one.d1 >= 7);
    cf_svg_scale zero = cf_svg_scale_make(0, 0, 0, 1, 0);
    assert_true(zero.d1 > zero.d0);
}

static void test_log_scale(void **state)
{
    (void)state;
    cf_svg_scale s = cf_svg_scale_make(0.4464, 18.91, 70, 560, 1);
    assert_true(s.log);
    assert_true(fabs(s.d0 - 0.2) < 1e-12 && fabs(s.d1 - 20) < 1e-12);
    /* decades are equally wide */
    assert_true(fabs((cf_svg_map(&s, 20) - cf_svg_map(&s, 2)) - (cf_svg_map(&s, 10) - cf_svg_map(&s, 1))) < 1e-9);
    for (double v = 0.25; v < 20; v *= 1.7)
        assert_true(fabs(cf_svg_invert(&s, cf_svg_map(&s, v)) / v - 1) < 1e-9);
    double t[64];
    size_t n = cf_svg_ticks(&s, 6, t, 64);
    /* two decades: 1-2-5 ticks: 0.2 0.5 1 2 5 10 20 */
    double want[] = {0.2, 0.5, 1, 2, 5, 10, 20};
    assert_int_equal(n, 7);
    for (size_t i = 0; i < n; i++)
        assert_true(fabs(t[i] / want[i] - 1) < 1e-9);
    /* many decades: decade ticks only, thinned to about the target */
    cf_svg_scale wide = cf_svg_scale_make(1, 1e12, 0, 100, 1);
    n = cf_svg_ticks(&wide, 5, t, 64);
    assert_true(n >= 4 && n <= 8);
    for (size_t i = 0; i < n; i++)
        assert_true(fabs(log10(t[i]) - round(log10(t[i]))) < 1e-9);
    /* a log scale of nothing positive falls back to linear */
    cf_svg_scale bad = cf_svg_scale_make(0, 10, 0, 1, 1);
    assert_false(bad.log);
    assert_true(cf_svg_prefer_log(0.4, 7.9, 20) == 0 && cf_svg_prefer_log(0.4, 8, 20) == 1);
    assert_false(cf_svg_prefer_log(0, 40, 20));
}

static void test_tick_labels(void **state)
{
    (void)state;
    char s[32];
    cf_svg_format_tick(0.5, NULL, s, sizeof s);
    assert_string_equal(s, "0.5");
    cf_svg_format_tick(1500, "$", s, sizeof s);
    assert_string_equal(s, "$1500");
    cf_svg_format_tick(20000, NULL, s, sizeof s);
    assert_string_equal(s, "20k");
    cf_svg_format_tick(2.5e6, "$", s, sizeof s);
    assert_string_equal(s, "$2.5M");
    cf_svg_format_tick(0, NULL, s, sizeof s);
    assert_string_equal(s, "0");
    /* never in scientific notation: a front of tiny or huge costs */
    cf_svg_format_tick(0.00001, "$", s, sizeof s);
    assert_string_equal(s, "$0.00001");
    cf_svg_format_tick(0.0001, "$", s, sizeof s);
    assert_string_equal(s, "$0.0001");
    cf_svg_format_tick(1e12, "$", s, sizeof s);
    assert_string_equal(s, "$1000G");
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static void test_document_and_marks(void **state)
{
    (void)state;
    cf_buf b = CF_BUF_INIT;
    cf_svg_begin(&b, 300, 200, "t < & >", NULL);
    cf_svg_plot p = cf_svg_plot_make(300, 200, 0, 10, 0, 1, 1000, 1);
    cf_svg_axes(&b, &p, "x & y", NULL, "cost", "$");
    cf_svg_marker(&b, CF_SVG_TRIANGLE, 10.004, -0.001, 10, &(cf_svg_style){.fill = "#0072B2"}, " class=\"p\"",
                  "tip <b>");
    cf_svg_marker(&b, CF_SVG_RING, 1, 2, 10, &(cf_svg_style){.stroke = "#111"}, NULL, NULL);
    cf_svg_line(&b, 0, 0, 1, 1, &(cf_svg_style){.stroke = "red", .dash = "2 3"}, NULL);
    double xs[] = {0, 1, 2}, ys[] = {2, 1, 0};
    cf_svg_polyline(&b, xs, ys, 3, &(cf_svg_style){.stroke = "blue"}, NULL);
    cf_svg_text(&b, 5, 5, CF_SVG_MIDDLE, 0, "a<b", NULL);
    cf_svg_end(&b);
    assert_false(cf_buf_failed(&b));
    const char *s = cf_buf_cstr(&b);
    assert_non_null(strstr(s, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert_non_null(strstr(s, "<title>t &lt; &amp; &gt;</title>"));
    assert_non_null(strstr(s, "translate(10.00,0.00)")); /* never "-0.00" */
    assert_non_null(strstr(s, "<title>tip &lt;b&gt;</title>"));
    assert_non_null(strstr(s, "class=\"p\""));
    assert_non_null(strstr(s, "<circle r=\"5.00\" fill=\"none\" stroke=\"#111\""));
    assert_non_null(strstr(s, "stroke-dasharray=\"2 3\""));
    assert_non_null(strstr(s, "points=\"0.00,2.00 1.00,1.00 2.00,0.00\""));
    assert_non_null(strstr(s, ">a&lt;b</text>"));
    assert_non_null(strstr(s, "data-x-domain=\"0 10\""));
    assert_non_null(strstr(s, "data-y-log=\"1\""));
    assert_non_null(strstr(s, ">$1000</text>"));
    assert_null(strstr(s, "-0.00"));
    /* balanced groups and one root */
    assert_int_equal(count(s, "<g"), count(s, "</g>"));
    assert_int_equal(count(s, "<svg"), 1);
    assert_int_equal(count(s, "</svg>"), 1);
    cf_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_attributes),
        cmocka_unit_test(test_linear_scale),
        cmocka_unit_test(test_log_scale),
        cmocka_unit_test(test_tick_labels),
        cmocka_unit_test(test_document_and_marks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
