/* CSV reader over libcsv: quoted fields, line numbers, typed getters,
 * measurement rows with their errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cloudfit/common/csvread.h"
#include "cloudfit/profiler/measurements.h"

static void test_quoted_fields_and_lines(void **state)
{
    (void)state;
    const char *text = "a,b,c\n1,\"x, y\",3\n\n4,\"multi\nline\",6\n7,8,9\n";
    cf_csv_doc doc;
    assert_int_equal(cf_csv_parse(text, strlen(text), "t.csv", &doc), CF_OK);
    assert_int_equal(doc.n_records, 3);
    assert_string_equal(cf_csv_field(&doc.records[0], 1), "x, y");
    assert_string_equal(cf_csv_field(&doc.records[1], 1), "multi\nline");
    assert_int_equal(doc.records[0].line, 2);
    assert_int_equal(doc.records[1].line, 4);
    assert_int_equal(doc.records[2].line, 6);
    assert_int_equal(cf_csv_column(&doc, "c"), 2);
    assert_int_equal(cf_csv_column(&doc, "zz"), -1);
    double v = 0;
    assert_int_equal(cf_csv_double(&doc, &doc.records[2], 2, 1, 0, &v), CF_OK);
    assert_float_equal(v, 9, 0);
    assert_int_equal(cf_csv_double(&doc, &doc.records[0], 1, 1, 0, &v), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "t.csv:2: column 'b': expected a number, got 'x, y'");
    cf_csv_free(&doc);
}

static void test_empty_and_missing_column(void **state)
{
    (void)state;
    cf_csv_doc doc;
    assert_int_equal(cf_csv_parse("", 0, "e.csv", &doc), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "e.csv: empty CSV"));
    const char *text = "x,y\n1,2\n";
    assert_int_equal(cf_csv_parse(text, strlen(text), "m.csv", &doc), CF_OK);
    int col;
    assert_int_equal(cf_csv_require_column(&doc, "z", &col), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "m.csv:1: missing required column 'z'");
    assert_string_equal(cf_error_hint_text(), "");
    cf_csv_free(&doc);
    /* The header shows why: another separator, or the column in another case or padded ("Model", " gpu"). */
    static const char semi[] = "model;gpu;step\nm;T4;1\n", tabs[] = "model\tgpu\nm\tT4\n",
                      cased[] = "Model, gpu ,x\nm,T4,1\n";
    assert_int_equal(cf_csv_parse(semi, strlen(semi), "s.csv", &doc), CF_OK);
    assert_int_equal(cf_csv_require_column(&doc, "model", &col), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "s.csv:1: missing required column 'model'");
    assert_string_equal(cf_error_hint_text(), "the header is one field: the file looks separated by ';', where a "
                                              "CSV separates its fields by commas (RFC 4180)");
    cf_csv_free(&doc);
    static const char decimal_comma[] = "model;step\nm;0,15\n"; /* two fields of a one-column header */
    assert_int_equal(cf_csv_parse(decimal_comma, strlen(decimal_comma), "d.csv", &doc), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "d.csv:2: expected 1 fields (the header's columns), got 2");
    assert_non_null(strstr(cf_error_hint_text(), "the file looks separated by ';'"));
    assert_int_equal(cf_csv_parse(tabs, strlen(tabs), "t.csv", &doc), CF_OK);
    assert_int_equal(cf_csv_require_column(&doc, "gpu", &col), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_hint_text(), "separated by tabs"));
    cf_csv_free(&doc);
    assert_int_equal(cf_csv_parse(cased, strlen(cased), "c.csv", &doc), CF_OK);
    assert_int_equal(cf_csv_require_column(&doc, "model", &col), CF_ERR_INVALID);
    assert_string_equal(cf_error_hint_text(), "column 1 of the header is 'Model': column names are matched exactly "
                                              "('model')");
    assert_int_equal(cf_csv_require_column(&doc, "gpu", &col), CF_ERR_INVALID);
    assert_string_equal(cf_error_hint_text(), "column 2 of the header is ' gpu ': column names are matched exactly "
                                              "('gpu')");
    cf_csv_free(&doc);
    assert_int_equal(cf_csv_parse(text, strlen(text), "m.csv", &doc), CF_OK);
    long iv;
    assert_int_equal(cf_csv_int(&doc, &doc.records[0], 5, 0, 42, &iv), CF_OK); /* short row → fallback */
    assert_int_equal(iv, 42);
    cf_csv_free(&doc);
    /* A column named twice is refused (the first copy was read, the second ignored); empty names are not names. */
    text = "x,step_time_s,y,step_time_s\n1,2,3,1000\n";
    assert_int_equal(cf_csv_parse(text, strlen(text), "d.csv", &doc), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "d.csv:1: column 'step_time_s' appears twice in the header (columns 2 and 4)");
    text = "x,y,,\n1,2,,\n";
    assert_int_equal(cf_csv_parse(text, strlen(text), "t.csv", &doc), CF_OK);
    cf_csv_free(&doc);
    /* A row with more or fewer fields than the header is refused: a value
     * past the last column was dropped, a short row read its missing
     * optional columns as empty. Trailing empty fields are a spreadsheet's. */
    text = "x,y,z\n1,2,3\n4,5,6,7\n";
    assert_int_equal(cf_csv_parse(text, strlen(text), "l.csv", &doc), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "l.csv:3: expected 3 fields (the header's columns), got 4");
    text = "x,y,z\n1,2\n";
    assert_int_equal(cf_csv_parse(text, strlen(text), "s.csv", &doc), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "s.csv:2: expected 3 fields (the header's columns), got 2");
    text = "x,y,z\n1,2,3,,\n";
    assert_int_equal(cf_csv_parse(text, strlen(text), "e.csv", &doc), CF_OK);
    cf_csv_free(&doc);
}

/* A quote error is named where it is, in words: a quote left open at line
 * 3 of 50 was reported at line 51 (after the end of the file) as
 * "malformed CSV: error parsing data while strict checking enabled". */
static void test_quote_errors_named_where_they_are(void **state)
{
    (void)state;
    char text[4096];
    size_t n = (size_t)snprintf(text, sizeof text, "name,gpu,step\na,T4,1\nb,\"T4,2\n");
    for (int line = 4; line <= 50; line++)
        n += (size_t)snprintf(text + n, sizeof text - n, "r%d,T4,%d\n", line, line);
    static const struct {
        const char *text, *message, *hint;
    } cases[] = {
        {NULL, "q.csv:3:3: unterminated quoted field (opened here; it runs to the end of the file)", "close the quote"},
        {"a,b\n1,\"x\n", "q.csv:2:3: unterminated quoted field (opened here; it runs to the end of the file)", NULL},
        {"a,b\n1,\"x\"\"\n", "q.csv:2:3: unterminated quoted field (opened here; it runs to the end of the file)",
         NULL},
        {"a,b\n1,\"x\n2,\"y\",3\n",
         "q.csv:2:3: unterminated quoted field (opened here): it runs on to line 3, where the quote at column 3 is "
         "followed by 'y', not by a comma or the line's end",
         "a quote inside a quoted field is written twice"},
        {"a,b\n1,\"x\"y\n", "q.csv:2:6: 'y' after the closing quote of the quoted field opened at column 3 "
                              "(expected a comma or the line's end)", NULL},
        {"a,b\n1,\"x\" \n", "q.csv:2:6: ' ' after the closing quote of the quoted field opened at column 3 "
                              "(expected a comma or the line's end)", NULL},
        {"a,b\n1,x\"y\n", "q.csv:2:4: quote inside a field that does not start with one", "written twice"},
        {"a,b\n\u00e9,x\"y\n", "q.csv:2:4: quote inside a field that does not start with one", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *t = cases[i].text ? cases[i].text : text;
        cf_csv_doc doc;
        if (cf_csv_parse(t, strlen(t), "q.csv", &doc) != CF_ERR_INVALID)
            fail_msg("case %zu accepted", i);
        if (strcmp(cf_error_message(), cases[i].message) != 0)
            fail_msg("case %zu: '%s', not '%s'", i, cf_error_message(), cases[i].message);
        if (cases[i].hint && !strstr(cf_error_hint_text(), cases[i].hint))
            fail_msg("case %zu: hint '%s'", i, cf_error_hint_text());
        cf_error_clear();
    }
    /* a quoted field over lines, quotes written twice and CRLF stay valid */
    const char *ok = "a,b\r\n1,\"x\"\"y\r\nz\"\r\n2,\"\"\r\n";
    cf_csv_doc doc;
    assert_int_equal(cf_csv_parse(ok, strlen(ok), "ok.csv", &doc), CF_OK);
    assert_string_equal(cf_csv_field(&doc.records[0], 1), "x\"y\r\nz");
    assert_int_equal(doc.records[1].line, 4);
    cf_csv_free(&doc);
}

static const char header[] =
    "model,gpu,profile,hw_gpus_per_node,source,placement,num_nodes,num_gpus,local_bsz,global_bsz,step_time_s,sync_time_s\n";

static void test_measurements(void **state)
{
    (void)state;
    char text[1024];
    snprintf(text, sizeof text, "%s%s%s", header, "m,T4,aws,4,placement,1,1,1,32,32,0.05,0.001\n",
             "m,T4,aws,4,placement,44,2,8,32,256,0.4,\n");
    cf_measurement_set set;
    assert_int_equal(cf_measurements_parse(text, strlen(text), "ok.csv", &set), CF_OK);
    assert_int_equal(set.n_rows, 2);
    assert_float_equal(set.rows[1].sync_time_s, -1, 0);
    assert_string_equal(set.rows[1].placement, "44");
    cf_measurements_free(&set);

    snprintf(text, sizeof text, "%s%s", header, "m,T4,aws,4,placement,1,1,1,32,32,fast,0.001\n");
    assert_int_equal(cf_measurements_parse(text, strlen(text), "bad.csv", &set), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "bad.csv:2: column 'step_time_s': expected a number, got 'fast'");
    /* bounded as the spec's compute_s.beta: 1e308 s per step is not a measurement */
    snprintf(text, sizeof text, "%s%s", header, "m,T4,aws,4,placement,1,1,1,32,32,1e308,0.001\n");
    assert_int_equal(cf_measurements_parse(text, strlen(text), "huge.csv", &set), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(),
                        "huge.csv:2: column 'step_time_s': expected a number from 1e-09 to 1e+06 (seconds per step), "
                        "got 1e+308");
    /* and below as a probe's time_s (docs/exec-protocol.md): 1e-300 s was scored as a 9e298 % error */
    snprintf(text, sizeof text, "%s%s", header, "m,T4,aws,4,placement,1,1,1,32,32,1e-300,\n");
    assert_int_equal(cf_measurements_parse(text, strlen(text), "tiny.csv", &set), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(),
                        "tiny.csv:2: column 'step_time_s': expected a number from 1e-09 to 1e+06 (seconds per step), "
                        "got 1e-300");
    snprintf(text, sizeof text, "%s%s", header, "m,T4,aws,4,placement,1,1,1,32,32,1e-9,\n");
    assert_int_equal(cf_measurements_parse(text, strlen(text), "ns.csv", &set), CF_OK);
    cf_measurements_free(&set);

    snprintf(text, sizeof text, "%s%s%s", header, "m,T4,aws,4,placement,1,1,1,32,32,0.05,\n",
             "m,T4,aws,4,placement,1,2,9,32,32,0.05,\n");
    assert_int_equal(cf_measurements_parse(text, strlen(text), "fit.csv", &set), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "fit.csv:3: num_gpus 9 does not fit 2 node(s)"));

    /* a gpu field with a control or invalid byte was read as T4 (the name resolver skipped the byte): refused,
     * the bytes shown escaped */
    snprintf(text, sizeof text, "%s%s", header, "m,T\xff" "4,aws,4,placement,1,1,1,32,32,0.05,\n");
    assert_int_equal(cf_measurements_parse(text, strlen(text), "ff.csv", &set), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "ff.csv:2: column 'gpu': expected a GPU model name (printable UTF-8 text), "
                                            "got 'T\\xff4'");
    snprintf(text, sizeof text, "%s%s", header, "m,T4\x01,aws,4,placement,1,1,1,32,32,0.05,\n");
    assert_int_equal(cf_measurements_parse(text, strlen(text), "ctl.csv", &set), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "ctl.csv:2: column 'gpu': expected a GPU model name (printable UTF-8 "
                                            "text), got 'T4\\x01'");

    snprintf(text, sizeof text, "%s%s", header, "m,T4,aws,4,placement,1,1,1,-3,32,0.05,\n");
    assert_int_equal(cf_measurements_parse(text, strlen(text), "neg.csv", &set), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "neg.csv:2: column 'local_bsz': expected a positive integer, got -3");

    /* batches up to at least 2^24 (token batches), not beyond 2^30 */
    snprintf(text, sizeof text, "%s%s", header, "m,T4,aws,4,placement,1,1,1,16777216,16777216,9.5,\n");
    assert_int_equal(cf_measurements_parse(text, strlen(text), "big.csv", &set), CF_OK);
    assert_int_equal(set.rows[0].local_bsz, 16777216);
    assert_false(set.rows[0].has_precision);
    cf_measurements_free(&set);
    snprintf(text, sizeof text, "%s%s", header, "m,T4,aws,4,placement,1,1,1,2000000000,32,0.05,\n");
    assert_int_equal(cf_measurements_parse(text, strlen(text), "huge.csv", &set), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "huge.csv:2: column 'local_bsz': expected at most 1073741824, got 2000000000");

    /* the placement agrees with the counts: one digit per node, each from 1 to hw_gpus_per_node, summing to
     * num_gpus ("44" on a 2-node × 1-GPU row was predicted as 2 × 4 GPUs) */
    snprintf(text, sizeof text, "%s%s", header, "m,T4,aws,4,placement,44,2,2,32,64,0.4,\n");
    assert_int_equal(cf_measurements_parse(text, strlen(text), "pl.csv", &set), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "pl.csv:2: column 'placement': '44' (2 node(s), 8 GPU(s), at most 4 on a "
                                            "node) disagrees with num_nodes 2, num_gpus 2 and hw_gpus_per_node 4");
    snprintf(text, sizeof text, "%s%s", header, "m,T4,aws,4,placement,9,1,1,32,32,0.4,\n");
    assert_int_equal(cf_measurements_parse(text, strlen(text), "pl.csv", &set), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "pl.csv:2: column 'placement': '9' (1 node(s), 9 GPU(s), at most 9"));
    snprintf(text, sizeof text, "%s%s", header, "m,T4,aws,4,placement,1 1,2,2,32,64,0.4,\n");
    assert_int_equal(cf_measurements_parse(text, strlen(text), "pl.csv", &set), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "pl.csv:2: column 'placement': expected one digit from 1 to 9 per node (the "
                                            "GPUs the run used on it, e.g. 11 for 2 nodes × 1 GPU), got '1 1'");
    snprintf(text, sizeof text, "%s%s", header, "m,T4,aws,4,placement,1124,4,8,32,256,0.4,\n");
    assert_int_equal(cf_measurements_parse(text, strlen(text), "pl.csv", &set), CF_OK);
    assert_string_equal(set.rows[0].placement, "1124");
    cf_measurements_free(&set);
    {   /* 100 nodes × 1 GPU: too long to keep, the counts say the same */
        char many[1024];
        int n = snprintf(many, sizeof many, "%sm,T4,aws,4,placement,", header);
        for (int k = 0; k < 100; k++)
            many[n++] = '1';
        snprintf(many + n, sizeof many - (size_t)n, ",100,100,32,3200,0.4,\n");
        assert_int_equal(cf_measurements_parse(many, strlen(many), "long.csv", &set), CF_OK);
        assert_string_equal(set.rows[0].placement, "");
        cf_measurements_free(&set);
    }

    {   /* names too long to keep are refused, not cut: two profiles sharing their first 31 bytes were one group
         * (fitted together, exit 0), a model cut inside a UTF-8 character; a spec's name (64 bytes) fits */
        char name[80];
        memset(name, 'p', 40);
        name[40] = '\0';
        snprintf(text, sizeof text, "%sm,T4,%s_a,4,placement,1,1,1,32,32,0.05,\n", header, name);
        assert_int_equal(cf_measurements_parse(text, strlen(text), "prof.csv", &set), CF_ERR_INVALID);
        assert_non_null(strstr(cf_error_message(), "prof.csv:2: column 'profile': expected at most 31 characters, got 42"));
        memset(name, 'm', 64);
        name[64] = '\0';
        snprintf(text, sizeof text, "%s%s,T4,aws,4,placement,1,1,1,32,32,0.05,\n", header, name);
        assert_int_equal(cf_measurements_parse(text, strlen(text), "model.csv", &set), CF_OK);
        assert_string_equal(set.rows[0].model, name);
        cf_measurements_free(&set);
        snprintf(text, sizeof text, "%s%sx,T4,aws,4,placement,1,1,1,32,32,0.05,\n", header, name);
        assert_int_equal(cf_measurements_parse(text, strlen(text), "model.csv", &set), CF_ERR_INVALID);
        assert_non_null(strstr(cf_error_message(), "model.csv:2: column 'model': expected at most 64 characters, got 65"));
    }

    /* global_bsz is derived, num_gpus × local_bsz: a row of 8 GPUs whose num_gpus says 2 contradicts it (it was
     * read as 2 GPUs' step time, without a word); empty is not given */
    snprintf(text, sizeof text, "%s%s%s", header, "m,T4,aws,4,placement,1,1,1,20,20,0.05,\n",
             "m,T4,aws,4,placement,11,2,2,20,160,0.4,\n");
    assert_int_equal(cf_measurements_parse(text, strlen(text), "gb.csv", &set), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "gb.csv:3: column 'global_bsz': 160 is not num_gpus × local_bsz (2 × 20 = 40)");
    assert_non_null(strstr(cf_error_hint_text(), "no gradient accumulation in this format"));
    snprintf(text, sizeof text, "%s%s", header, "m,T4,aws,4,placement,11,2,2,20,forty,0.4,\n");
    assert_int_equal(cf_measurements_parse(text, strlen(text), "gb.csv", &set), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "gb.csv:2: column 'global_bsz': expected a number, got 'forty'");
    snprintf(text, sizeof text, "%s%s%s", header, "m,T4,aws,4,placement,11,2,2,20,,0.4,\n",
             "m,T4,aws,4,placement,44,2,8,20,160.0,0.4,\n");
    assert_int_equal(cf_measurements_parse(text, strlen(text), "gb.csv", &set), CF_OK);
    assert_int_equal(set.n_rows, 2);
    cf_measurements_free(&set);

    /* the optional precision column */
    static const char with_precision[] =
        "model,gpu,hw_gpus_per_node,num_nodes,num_gpus,local_bsz,step_time_s,precision\n"
        "m,A100,8,1,1,32,0.05,TF32\nm,A100,8,1,1,64,0.08,amp\nm,A100,8,1,1,128,0.12,\nm,V100,8,1,1,32,0.1,bf16\n";
    assert_int_equal(cf_measurements_parse(with_precision, strlen(with_precision), "p.csv", &set), CF_OK);
    assert_true(set.rows[0].has_precision && set.rows[0].precision == CF_PREC_TF32);
    assert_true(set.rows[1].has_precision && set.rows[1].precision == CF_PREC_AMP);
    assert_false(set.rows[2].has_precision); /* empty: the spec's (or fp32) */
    assert_true(set.rows[3].precision == CF_PREC_BF16);
    cf_measurements_free(&set);
    static const char bad_precision[] =
        "model,gpu,hw_gpus_per_node,num_nodes,num_gpus,local_bsz,step_time_s,precision\nm,A100,8,1,1,32,0.05,int8\n";
    assert_int_equal(cf_measurements_parse(bad_precision, strlen(bad_precision), "q.csv", &set), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(),
                        "q.csv:2: column 'precision': expected fp32, tf32, fp16, bf16 or amp, got 'int8'");

    assert_int_equal(cf_measurements_parse("model,gpu\nm,T4\n", 15, "cols.csv", &set), CF_ERR_INVALID);
    assert_string_equal(cf_error_message(), "cols.csv:1: missing required column 'hw_gpus_per_node'");

    assert_int_equal(cf_measurements_load("/nonexistent/m.csv", &set), CF_ERR_IO);
    assert_string_equal(cf_error_message(), "cannot open '/nonexistent/m.csv': No such file or directory");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quoted_fields_and_lines),
        cmocka_unit_test(test_empty_and_missing_column),
        cmocka_unit_test(test_quote_errors_named_where_they_are),
        cmocka_unit_test(test_measurements),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
