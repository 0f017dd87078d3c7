/* Tests of fitting text to a terminal (issue 31): common/text_wrap.c
 * (widths without colour escapes, wrapping at spaces with the continuation
 * indented, long words cut, cells cut with "…") and render/text_table.c
 * (columns left out and shortened by priority, the note saying which and
 * naming the intervals the short cells leave out,
 * no limit at width 0; durations in the unit that shows differences). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "cloudfit/common/help_default.h"
#include "cloudfit/common/text_wrap.h"
#include "cloudfit/render/text_table.h"

/* The widest line of `text`, in columns. */
static int widest(const char *text)
{
    int max = 0;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        int w = cf_text_width(p, n);
        if (w > max)
            max = w;
        p += n + (nl ? 1 : 0);
    }
    return max;
}

static void test_width_skips_colour_and_counts_characters(void **state)
{
    (void)state;
    const char *s = "\033[32m\033[1m 1  2×1 GH200 – ✔\033[0m";
    assert_int_equal(cf_text_width(s, strlen(s)), 17);
    assert_int_equal(cf_text_width("", 0), 0);
}

/* Columns as a terminal shows them: a CJK name is twice as wide, a
 * combining accent adds nothing, a control character takes its escape.
 * Counting code points put the next column out of line after each. */
static void test_table_columns_line_up_with_wide_and_escaped_text(void **state)
{
    (void)state;
    assert_int_equal(cf_text_width("漢字", strlen("漢字")), 4);
    assert_int_equal(cf_text_width("e\xcc\x81", 3), 1);
    assert_int_equal(cf_text_width("x\xe2\x80\xaey", 5), 8); /* shown x\u202ey */
    static const cf_text_column two[] = {{"BRANCH", 0, 0, 0, 0, NULL, NULL}, {"COMMIT", 0, 0, 0, 0, NULL, NULL}};
    const char *rows[] = {"main", "abc", "漢字漢字漢字", "abc", "e\xcc\x81" "e\xcc\x81", "abc", "a\x1b" "b", "abc"};
    cf_text_table t = {.columns = two, .n_columns = 2, .cells = rows, .n_rows = 4, .gap = 2, .highlight_row = -1};
    cf_buf out = CF_BUF_INIT, left = CF_BUF_INIT;
    cf_text_table_render(&t, &out, &left);
    assert_false(cf_buf_failed(&out));
    /* every "abc" (and the title) starts at column 14: 12 for the widest cell, 2 of gap */
    const char *line = cf_buf_cstr(&out);
    for (int n = 0; n < 5; n++) {
        const char *end = strchr(line, '\n'), *at = n ? strstr(line, "abc") : strstr(line, "COMMIT");
        assert_non_null(end);
        assert_non_null(at);
        assert_true(at < end);
        assert_int_equal(cf_text_width(line, (size_t)(at - line)), 14);
        line = end + 1;
    }
    cf_buf_free(&out);
    cf_buf_free(&left);
}

static void wrapped(const char *in, int width, const char *want)
{
    cf_buf out = CF_BUF_INIT;
    cf_text_wrap(in, width, &out);
    assert_false(cf_buf_failed(&out));
    assert_string_equal(cf_buf_cstr(&out), want);
    cf_buf_free(&out);
}

static void test_wrap_breaks_at_spaces_with_the_indent_of_the_line(void **state)
{
    (void)state;
    wrapped("short line\n", 20, "short line\n");
    wrapped("  - one two three four five\n", 16, "  - one two\n    three four\n    five\n");
    wrapped("Why x:\nplain words go on and on\n", 12, "Why x:\nplain words\n  go on and\n  on\n");
    wrapped("no final newline here", 10, "no final\n  newline\n  here");
    /* a word wider than the line is cut, and nothing is ever wider than the width */
    wrapped("see /a/very/long/path/name ok\n", 10, "see\n  /a/very/\n  long/pat\n  h/name\n  ok\n");
    /* blanks inside a line that fits stay as they were (columns stay aligned) */
    wrapped("a   b   c\n", 40, "a   b   c\n");
    wrapped("anything at all\n", 0, "anything at all\n");
}

static void test_wrap_never_exceeds_the_width(void **state)
{
    (void)state;
    const char *text = "  - step 0.465 s (80%: 0.282–0.767): 0.446 s per micro-batch on one VM, all-reduce between VMs "
                       "0.191 s (partly hidden behind the backward pass); parallel efficiency 96%\n"
                       "hint: run 'cloudfit prices update' to fetch current prices (or raise --max-catalog-age-days)\n";
    for (int width = 12; width <= 120; width += 7) {
        cf_buf out = CF_BUF_INIT;
        cf_text_wrap(text, width, &out);
        assert_true(widest(cf_buf_cstr(&out)) <= width);
        cf_buf_free(&out);
    }
}

static void test_cut(void **state)
{
    (void)state;
    char out[64];
    cf_text_cut("lambda/asia-northeast-1", 12, out, sizeof out);
    assert_string_equal(out, "lambda/asia…");
    cf_text_cut("aws/us-east-1", 20, out, sizeof out);
    assert_string_equal(out, "aws/us-east-1");
    cf_text_cut("2×1 GH200", 4, out, sizeof out); /* by characters, never inside one */
    assert_string_equal(out, "2×1…");
}

static const cf_text_column cols[] = {
    {"#", 1, 0, 0, 0, NULL, NULL},    {"NAME", 0, 0, 1, 0, NULL, NULL},          {"EXTRA", 0, 1, 0, 0, NULL, NULL},
    {"MORE", 1, 2, 0, 0, NULL, NULL}, {"TIME (80%)", 1, 0, 0, 3, "TIME", NULL},
};
static const char *const cells[] = {"1", "lambda/asia-northeast-1", "something", "42", "11.1 h (6.8–18.2)",
                                    "2", "aws/us-east-1",           "else",      "7",  "16.3 h (11.6–22.9)"};
static const char *const shorts[] = {NULL, NULL, NULL, NULL, "11.1 h", NULL, NULL, NULL, NULL, "16.3 h"};

static void render(int width, cf_buf *out, cf_buf *left_out)
{
    cf_text_table t = {.columns = cols, .n_columns = 5, .cells = cells, .short_cells = shorts, .n_rows = 2,
                       .width = width, .lead = 1, .gap = 2, .rules = 1, .highlight_row = 0};
    cf_text_table_render(&t, out, left_out);
    assert_false(cf_buf_failed(out));
}

static void test_table_gives_up_detail_in_priority_order(void **state)
{
    (void)state;
    cf_buf out = CF_BUF_INIT, left = CF_BUF_INIT;
    render(0, &out, &left); /* no limit: everything, nothing left out */
    assert_non_null(strstr(cf_buf_cstr(&out), "EXTRA"));
    assert_non_null(strstr(cf_buf_cstr(&out), "(6.8–18.2)"));
    assert_int_equal(left.len, 0);
    int full = widest(cf_buf_cstr(&out));
    cf_buf_free(&out);
    cf_buf_free(&left);
    for (int width = full - 1; width >= 20; width--) {
        render(width, &out, &left);
        assert_true(widest(cf_buf_cstr(&out)) <= width || width < 30);
        const char *t = cf_buf_cstr(&out), *l = cf_buf_cstr(&left);
        /* EXTRA (step 1) goes before MORE (2), which goes before the interval (3); # and NAME stay */
        if (strstr(t, "MORE") == NULL)
            assert_non_null(strstr(l, "EXTRA"));
        if (strstr(t, "(6.8") == NULL)
            assert_null(strstr(t, "MORE"));
        assert_non_null(strstr(t, " #"));
        cf_buf_free(&out);
        cf_buf_free(&left);
    }
    /* at 36 columns: both dropped, TIME short, NAME cut with … */
    render(36, &out, &left);
    assert_string_equal(cf_buf_cstr(&left), "EXTRA, MORE");
    assert_non_null(strstr(cf_buf_cstr(&out), "TIME"));
    assert_null(strstr(cf_buf_cstr(&out), "TIME (80%)"));
    assert_true(widest(cf_buf_cstr(&out)) <= 36);
    cf_buf note = CF_BUF_INIT;
    cf_text_table_note(&left, 36, &note);
    assert_string_equal(cf_buf_cstr(&note), "(left out to fit 36 columns: EXTRA, MORE; --wide shows every column)\n");
    cf_buf_free(&note);
    cf_buf_free(&out);
    cf_buf_free(&left);
}

/* Two columns whose short cells leave out their interval, as the ranking's TIME and TOTAL $: the
 * left-out line names the intervals with the columns, in the order given up (tests/golden pins the
 * ranking's line at 80 columns). */
static const cf_text_column interval_cols[] = {
    {"#", 1, 0, 0, 0, NULL, NULL},
    {"NAME", 0, 0, 1, 0, NULL, NULL},
    {"EXTRA", 0, 1, 0, 0, NULL, NULL},
    {"TIME (80%)", 1, -1, 0, 2, "TIME", "80% interval"},
    {"COST (80%)", 1, 0, 0, 3, "COST", "80% interval"},
    {"MORE", 1, 4, 0, 0, NULL, NULL},
};
static const char *const interval_cells[] = {"1", "lambda/asia-northeast-1", "something", "11.1 h (6.8–18.2)",
                                             "50.88 (31.14–83.43)", "42"};
static const char *const interval_shorts[] = {NULL, NULL, NULL, "11.1 h", "50.88", NULL};

static void render_intervals(int width, cf_buf *out, cf_buf *left_out)
{
    cf_text_table t = {.columns = interval_cols, .n_columns = 6, .cells = interval_cells,
                       .short_cells = interval_shorts, .n_rows = 1, .width = width, .lead = 1, .gap = 2,
                       .rules = 1, .highlight_row = -1};
    cf_text_table_render(&t, out, left_out);
    assert_false(cf_buf_failed(out));
}

/* The rules run a blank past the last column, but never past the width:
 * at --width 40 the BERT ranking's rows were 40 columns and its rules 41,
 * each wrapped into 40 dashes and a line "  -". */
static void test_rules_never_pass_the_width(void **state)
{
    (void)state;
    for (int width = 40; width >= 5; width--) {
        cf_buf out = CF_BUF_INIT, left = CF_BUF_INIT;
        render(width, &out, &left);
        const char *p = cf_buf_cstr(&out);
        int rules = 0;
        while (*p) {
            size_t n = strcspn(p, "\n");
            if (n > 0 && strspn(p, "-") == n) {
                assert_true((int)n <= width);
                rules++;
            }
            p += n + (p[n] ? 1 : 0);
        }
        assert_int_equal(rules, 3);
        cf_buf_free(&out);
        cf_buf_free(&left);
    }
}

static void test_table_names_the_intervals_it_leaves_out(void **state)
{
    (void)state;
    cf_buf out = CF_BUF_INIT, left = CF_BUF_INIT;
    render_intervals(0, &out, &left);
    assert_int_equal(left.len, 0);
    int full = widest(cf_buf_cstr(&out));
    cf_buf_free(&out);
    int seen_one = 0, seen_both = 0;
    for (int width = full; width >= 8; width--) {
        render_intervals(width, &out, &left);
        const char *t = cf_buf_cstr(&out), *l = cf_buf_cstr(&left);
        int time_shown = strstr(t, "TIME") != NULL, time_range = strstr(t, "(6.8") != NULL;
        int cost_range = strstr(t, "(31.14") != NULL;
        /* an interval is named exactly when a column still shown lost it */
        if (time_range && cost_range) {
            assert_null(strstr(l, "interval"));
        } else if (!cost_range && (!time_shown || time_range)) {
            assert_non_null(strstr(l, "the 80% interval of COST"));
            seen_one = 1;
        } else if (!time_range && time_shown && cost_range) {
            assert_non_null(strstr(l, "the 80% interval of TIME"));
        } else {
            assert_non_null(strstr(l, "the 80% intervals of TIME and COST"));
            seen_both = 1;
        }
        /* a column left out is named by its title only */
        if (!time_shown) {
            assert_non_null(strstr(l, "TIME (80%)"));
            assert_null(strstr(l, "of TIME"));
        }
        cf_buf_free(&out);
        cf_buf_free(&left);
    }
    assert_true(seen_one && seen_both);
    /* both intervals go (steps 2 and 3) after EXTRA (1) and before MORE (4) */
    render_intervals(28, &out, &left);
    assert_string_equal(cf_buf_cstr(&left), "EXTRA, the 80% intervals of TIME and COST, MORE");
    cf_buf note = CF_BUF_INIT;
    cf_text_table_note(&left, 28, &note);
    assert_string_equal(cf_buf_cstr(&note), "(left out to fit 28 columns: EXTRA, the 80% intervals of TIME and COST, "
                                            "MORE; --wide shows every column)\n");
    cf_buf_free(&note);
    cf_buf_free(&out);
    cf_buf_free(&left);
}

/* Columns of negative priority go only when cutting names is not enough:
 * -1 first, then -2, whatever their positions (they went rightmost first,
 * so a table could not keep a column left of a less wanted one); the rest
 * stays on one line. */
static void test_negative_priorities_go_in_their_order(void **state)
{
    (void)state;
    static const cf_text_column neg[] = {
        {"ID", 1, 0, 0, 0, NULL, NULL}, {"CREATED", 0, -1, 0, 0, NULL, NULL}, {"NAME", 0, 0, 1, 0, NULL, NULL},
        {"TIME", 1, -2, 0, 0, NULL, NULL}, {"TOTAL $", 1, 0, 0, 0, NULL, NULL}};
    static const char *const rows[] = {"1", "11-18 11:06", "resnet50-imagenet", "11.1 h", "50.88"};
    /* full: 2+11+17+6+7 + 4 gaps of 2 = 51; the name cut to 6: 40 */
    struct {
        int width;
        const char *left, *header;
    } cases[] = {{51, "", "ID  CREATED      NAME                 TIME  TOTAL $"},
                 {40, "", "ID  CREATED      NAME      TIME  TOTAL $"},
                 {39, "CREATED", "ID  NAME      TIME  TOTAL $"},
                 {27, "CREATED", "ID  NAME      TIME  TOTAL $"},
                 {26, "CREATED, TIME", "ID  NAME    TOTAL $"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cf_buf out = CF_BUF_INIT, left = CF_BUF_INIT;
        cf_text_table t = {.columns = neg, .n_columns = 5, .cells = rows, .n_rows = 1, .width = cases[i].width,
                           .gap = 2, .highlight_row = -1};
        cf_text_table_render(&t, &out, &left);
        assert_string_equal(cf_buf_cstr(&left), cases[i].left);
        assert_true(widest(cf_buf_cstr(&out)) <= cases[i].width);
        const char *text = cf_buf_cstr(&out);
        assert_memory_equal(text, cases[i].header, strlen(cases[i].header));
        assert_true(text[strlen(cases[i].header)] == '\n');
        cf_buf_free(&out);
        cf_buf_free(&left);
    }
}

static void duration(double h, double lo, double hi, const char *want_point, const char *want_range)
{
    char out[64];
    cf_text_duration(h, out, sizeof out);
    assert_string_equal(out, want_point);
    cf_text_duration_range(h, lo, hi, out, sizeof out);
    assert_string_equal(out, want_range);
}

static void test_durations_show_differences(void **state)
{
    (void)state;
    duration(0.2, 0.18, 0.23, "12 min", "12 min (11–14)"); /* not "0.2 h (0.2–0.2)" */
    duration(0.1, 0.09, 0.12, "6.0 min", "6.0 min (5.4–7.2)");
    duration(11.11, 6.8, 18.2, "11.1 h", "11.1 h (6.8–18.2)");
    duration(240, 200, 300, "240 h", "240 h (200–300)");
}

/* The default an option's help states, in each form the option table
 * uses (config show's "default" column; "1: a single-node profile" was
 * shown for train-max-nodes). */
static void test_help_stated_default(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"rows in the ranked table (default 10)", "10"},
        {"fit on rows with at most N nodes (default 1: a single-node profile)", "1"},
        {"micro-batches of the noise-scale run: the recipe batch split in K (2 to 64, default 8; e.g. the workers)", "8"},
        {"output format: table (default), json or csv", "table"},
        {"p (proportional, default) or pi (proportional-integral)", "p"},
        {"global batch while VMs are missing: hold, shrink, or both (default)", "both"},
        {"baseline: the last recommendation for this spec on BRANCH (default: the CI's target branch)",
         "the CI's target branch"},
        {"trace runner: seeded multiplicative noise on every probe (default 2%)", "2%"},
        {"only this spec name", ""},
        {"a defaulting word that is not a default", ""},
    };
    char out[64];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cf_help_stated_default(cases[i][0], out, sizeof out);
        assert_string_equal(out, cases[i][1]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_width_skips_colour_and_counts_characters),
        cmocka_unit_test(test_wrap_breaks_at_spaces_with_the_indent_of_the_line),
        cmocka_unit_test(test_wrap_never_exceeds_the_width),
        cmocka_unit_test(test_rules_never_pass_the_width),
        cmocka_unit_test(test_cut),
        cmocka_unit_test(test_table_columns_line_up_with_wide_and_escaped_text),
        cmocka_unit_test(test_table_gives_up_detail_in_priority_order),
        cmocka_unit_test(test_table_names_the_intervals_it_leaves_out),
        cmocka_unit_test(test_negative_priorities_go_in_their_order),
        cmocka_unit_test(test_durations_show_differences),
        cmocka_unit_test(test_help_stated_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
