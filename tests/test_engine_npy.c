/* The engine's .npy reader: files written by NumPy's rules (versions 1.0
 * and 2.0, several label types) load; malformed ones (bad magic, wrong
 * dtype, wrong shape, truncated, extra bytes, bad header dict) fail with a
 * message that names the file. All files are written here. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cloudfit/cuda_probe.h"
#include "data_cpu.h"
#include "npy.h"

static char dir[64];
static char path[128];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/cf-test-npy-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void write_raw(const char *name, const void *data, size_t len)
{
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

/* An .npy image the way NumPy lays it out: magic, version, header length,
 * the dict padded with spaces to a 64-byte boundary, '\n', data.
 * `cut` bytes are removed from the end (to truncate). */
static void write_npy(const char *name, int major, const char *dict, const void *data, size_t data_len,
                      size_t cut)
{
    unsigned char buf[4096];
    size_t prefix = major == 1 ? 10 : 12;
    size_t dict_len = strlen(dict);
    size_t total_header = (prefix + dict_len + 1 + 63) / 64 * 64;
    size_t header_len = total_header - prefix;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    for (size_t i = 0; i < prefix - 8; i++)
        buf[8 + i] = (unsigned char)(header_len >> (8 * i));
    memcpy(buf + prefix, dict, dict_len);
    memset(buf + prefix + dict_len, ' ', header_len - dict_len - 1);
    buf[total_header - 1] = '\n';
    assert_true(total_header + data_len <= sizeof buf);
    memcpy(buf + total_header, data, data_len);
    write_raw(name, buf, total_header + data_len - cut);
}

static void expect_error(cf_status st, const char *fragment)
{
    assert_int_equal(st, CF_ERR_INVALID);
    const char *msg = cf_error_message();
    if (!strstr(msg, path) || !strstr(msg, fragment))
        fail_msg("message '%s' should name '%s' and say '%s'", msg, path, fragment);
}

static const float x6[6] = {1, 2, 3, 4, 5, 6.5f};

static void test_good_float_matrix_v1_and_v2(void **state)
{
    (void)state;
    for (int major = 1; major <= 2; major++) {
        write_npy("x.npy", major, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", x6, sizeof x6, 0);
        long rows, cols;
        float *x;
        assert_int_equal(cf_npy_load_f32_matrix(path, &rows, &cols, &x), CF_OK);
        assert_int_equal(rows, 2);
        assert_int_equal(cols, 3);
        assert_memory_equal(x, x6, sizeof x6);
        free(x);
    }
    /* Key order and quoting as other writers produce them. */
    write_npy("x.npy", 1, "{\"shape\": (2,3), \"fortran_order\": False, \"descr\": \"<f4\"}", x6, sizeof x6, 0);
    long rows, cols;
    float *x;
    assert_int_equal(cf_npy_load_f32_matrix(path, &rows, &cols, &x), CF_OK);
    free(x);
}

static void test_labels_of_every_integer_type(void **state)
{
    (void)state;
    const uint8_t u8[3] = {0, 9, 255};
    write_npy("y.npy", 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", u8, sizeof u8, 0);
    long n;
    int *y;
    assert_int_equal(cf_npy_load_labels(path, &n, &y), CF_OK);
    assert_int_equal(n, 3);
    assert_true(y[0] == 0 && y[1] == 9 && y[2] == 255);
    free(y);
    const int16_t i16[2] = {-3, 300};
    write_npy("y.npy", 1, "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }", i16, sizeof i16, 0);
    assert_int_equal(cf_npy_load_labels(path, &n, &y), CF_OK);
    assert_true(n == 2 && y[0] == -3 && y[1] == 300);
    free(y);
    const int64_t i64[2] = {7, -1};
    write_npy("y.npy", 1, "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", i64, sizeof i64, 0);
    assert_int_equal(cf_npy_load_labels(path, &n, &y), CF_OK);
    assert_true(n == 2 && y[0] == 7 && y[1] == -1);
    free(y);
    const int64_t huge[1] = {(int64_t)1 << 40};
    write_npy("y.npy", 1, "{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }", huge, sizeof huge, 0);
    expect_error(cf_npy_load_labels(path, &n, &y), "does not fit an int");
}

static void test_writer_round_trip(void **state)
{
    (void)state;
    snprintf(path, sizeof path, "%s/w.npy", dir);
    assert_int_equal(cf_npy_save_f32_matrix(path, x6, 3, 2), CF_OK);
    long rows, cols;
    float *x;
    assert_int_equal(cf_npy_load_f32_matrix(path, &rows, &cols, &x), CF_OK);
    assert_true(rows == 3 && cols == 2);
    assert_memory_equal(x, x6, sizeof x6);
    free(x);
    const int labels[4] = {3, 0, 2, 1};
    assert_int_equal(cf_npy_save_i64_vector(path, labels, 4), CF_OK);
    long n;
    int *y;
    assert_int_equal(cf_npy_load_labels(path, &n, &y), CF_OK);
    assert_int_equal(n, 4);
    assert_memory_equal(y, labels, sizeof labels);
    free(y);
    /* NumPy's alignment: the data starts at a multiple of 64 bytes. */
    FILE *f = fopen(path, "rb");
    unsigned char head[10];
    assert_int_equal(fread(head, 1, 10, f), 10);
    fclose(f);
    assert_int_equal((10 + (head[8] | head[9] << 8)) % 64, 0);
}

static void test_bad_magic(void **state)
{
    (void)state;
    static const char zip[] = "PK\x03\x04 this is a zip file, not npy";
    write_raw("bad.npy", zip, sizeof zip - 1);
    long r, c;
    float *x;
    expect_error(cf_npy_load_f32_matrix(path, &r, &c, &x), "not a NumPy .npy file");
    write_raw("short.npy", "\x93NUM", 4);
    expect_error(cf_npy_load_f32_matrix(path, &r, &c, &x), "not a NumPy .npy file");
}

static void test_bad_version(void **state)
{
    (void)state;
    write_npy("v9.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", x6, sizeof x6, 0);
    FILE *f = fopen(path, "r+b");
    fseek(f, 6, SEEK_SET);
    fputc(9, f);
    fclose(f);
    long r, c;
    float *x;
    expect_error(cf_npy_load_f32_matrix(path, &r, &c, &x), "unsupported .npy format version 9.0");
    /* A minor version is not a variant of the major one: NumPy knows x.0 only. */
    for (int major = 1; major <= 3; major++) {
        write_npy("minor.npy", major == 1 ? 1 : 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                  x6, sizeof x6, 0);
        f = fopen(path, "r+b");
        fseek(f, 6, SEEK_SET);
        fputc(major, f);
        fputc(major == 1 ? 9 : 1, f);
        fclose(f);
        char want[64];
        snprintf(want, sizeof want, "unsupported .npy format version %d.%d", major, major == 1 ? 9 : 1);
        expect_error(cf_npy_load_f32_matrix(path, &r, &c, &x), want);
    }
}

static void test_wrong_dtype(void **state)
{
    (void)state;
    const double d6[6] = {1, 2, 3, 4, 5, 6};
    long r, c, n;
    float *x;
    int *y;
    write_npy("f8.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", d6, sizeof d6, 0);
    expect_error(cf_npy_load_f32_matrix(path, &r, &c, &x), "expected dtype float32 ('<f4'), got '<f8'");
    assert_non_null(strstr(cf_error_hint_text(), "astype(numpy.float32)"));
    write_npy("be.npy", 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", x6, sizeof x6, 0);
    expect_error(cf_npy_load_f32_matrix(path, &r, &c, &x), "unsupported dtype '>f4'");
    write_npy("str.npy", 1, "{'descr': '<U3', 'fortran_order': False, 'shape': (2,), }", "abcdefghijklmnopqrstuvwx",
              24, 0);
    expect_error(cf_npy_load_labels(path, &n, &y), "unsupported dtype '<U3'");
    write_npy("yf.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", x6, sizeof x6, 0);
    expect_error(cf_npy_load_labels(path, &n, &y), "expected integer class labels, got dtype '<f4'");
}

static void test_wrong_shape(void **state)
{
    (void)state;
    long r, c, n;
    float *x;
    int *y;
    write_npy("x1.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", x6, sizeof x6, 0);
    expect_error(cf_npy_load_f32_matrix(path, &r, &c, &x), "expected a 2-D array [samples, features], got shape (6,)");
    write_npy("x3.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 3), }", x6, sizeof x6, 0);
    expect_error(cf_npy_load_f32_matrix(path, &r, &c, &x), "got shape (1, 2, 3)");
    const int32_t y6[6] = {0};
    write_npy("y2.npy", 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }", y6, sizeof y6, 0);
    expect_error(cf_npy_load_labels(path, &n, &y), "expected a 1-D array of labels [samples], got shape (2, 3)");
    write_npy("fo.npy", 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", x6, sizeof x6, 0);
    expect_error(cf_npy_load_f32_matrix(path, &r, &c, &x), "expected C order");
}

static void test_truncated(void **state)
{
    (void)state;
    long r, c;
    float *x;
    write_npy("t.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", x6, sizeof x6, 5);
    expect_error(cf_npy_load_f32_matrix(path, &r, &c, &x),
                 "truncated: the header promises 24 bytes of data, the file has 19");
    /* Cut inside the header. */
    write_npy("th.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", x6, 0, 30);
    expect_error(cf_npy_load_f32_matrix(path, &r, &c, &x), "truncated .npy header");
    /* Extra bytes are as wrong as missing ones: the shape would be a lie. */
    write_npy("long.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }", x6, sizeof x6, 0);
    expect_error(cf_npy_load_f32_matrix(path, &r, &c, &x), "12 unexpected bytes after the data");
}

static void test_malformed_header_dict(void **state)
{
    (void)state;
    static const struct {
        const char *dict, *fragment;
    } cases[] = {
        {"{'descr': '<f4', 'fortran_order': False}", "missing 'shape'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'extra': 1}", "unknown key 'extra'"},
        {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}", "key 'descr' appears twice"},
        {"{'descr': '<f4', 'fortran_order': maybe, 'shape': (2, 3)}", "'fortran_order' must be True or False"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3]}", "'shape' must be a tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3)}", "non-negative integers"},
        {"['descr', '<f4']", "expected '{'"},
        {"{'descr': '<f4' 'fortran_order': False, 'shape': (2, 3)}", "expected ',' or '}'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)} trailing", "unexpected text after the dict"},
        {"{'descr: '<f4', 'fortran_order': False, 'shape': (2, 3)}", "expected ':'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        write_npy("h.npy", 1, cases[i].dict, x6, sizeof x6, 0);
        long r, c;
        float *x;
        expect_error(cf_npy_load_f32_matrix(path, &r, &c, &x), cases[i].fragment);
    }
}

static void test_missing_file(void **state)
{
    (void)state;
    snprintf(path, sizeof path, "%s/nope.npy", dir);
    long r, c;
    float *x;
    assert_int_not_equal(cf_npy_load_f32_matrix(path, &r, &c, &x), CF_OK);
    assert_non_null(strstr(cf_error_message(), "nope.npy"));
}

/* The data set checks what only it knows: features vs the model's input
 * width, label count vs sample count, labels vs the number of classes. */
static void test_dataset_checks(void **state)
{
    (void)state;
    char xp[160], yp[160];
    snprintf(xp, sizeof xp, "%s/dx.npy", dir);
    snprintf(yp, sizeof yp, "%s/dy.npy", dir);
    assert_int_equal(cf_npy_save_f32_matrix(xp, x6, 2, 3), CF_OK);
    const int y2[2] = {0, 1}, y3[3] = {0, 1, 1}, ybad[2] = {0, 4};
    assert_int_equal(cf_npy_save_i64_vector(yp, y2, 2), CF_OK);
    cf_dataset ds;
    assert_int_equal(cf_dataset_npy(&ds, xp, yp, 3, 2, 1), CF_OK);
    long idx[4];
    cf_dataset_take(&ds, 4, idx); /* two epochs: each sample twice */
    assert_true(idx[0] != idx[1] && idx[2] != idx[3]);
    cf_dataset_free(&ds);

    assert_int_equal(cf_dataset_npy(&ds, xp, yp, 4, 2, 1), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "expected 4 features per sample"));
    assert_non_null(strstr(cf_error_message(), xp));
    assert_int_equal(cf_npy_save_i64_vector(yp, y3, 3), CF_OK);
    assert_int_equal(cf_dataset_npy(&ds, xp, yp, 3, 2, 1), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "3 labels, but"));
    assert_int_equal(cf_npy_save_i64_vector(yp, ybad, 2), CF_OK);
    assert_int_equal(cf_dataset_npy(&ds, xp, yp, 3, 2, 1), CF_ERR_INVALID);
    assert_non_null(strstr(cf_error_message(), "label 4 at index 1 is outside 0..1"));
    assert_non_null(strstr(cf_error_message(), yp));
}

/* Features must be finite: a NaN or an infinity is named with the file and
 * its place, not left to surface as a diverged step. */
static void test_dataset_refuses_non_finite_features(void **state)
{
    (void)state;
    char xp[160], yp[160];
    snprintf(xp, sizeof xp, "%s/nx.npy", dir);
    snprintf(yp, sizeof yp, "%s/ny.npy", dir);
    const int y2[2] = {0, 1};
    assert_int_equal(cf_npy_save_i64_vector(yp, y2, 2), CF_OK);
    const float bad[3] = {NAN, INFINITY, -INFINITY};
    const char *const text[3] = {"value nan at sample 1, feature 2", "value inf at sample 1, feature 2",
                                 "value -inf at sample 1, feature 2"};
    for (int i = 0; i < 3; i++) {
        float x[6] = {1, 2, 3, 4, 5, 6};
        x[5] = bad[i];
        assert_int_equal(cf_npy_save_f32_matrix(xp, x, 2, 3), CF_OK);
        cf_dataset ds;
        assert_int_equal(cf_dataset_npy(&ds, xp, yp, 3, 2, 1), CF_ERR_INVALID);
        if (!strstr(cf_error_message(), xp) || !strstr(cf_error_message(), text[i]) ||
            !strstr(cf_error_message(), "expected finite numbers"))
            fail_msg("message '%s' should name '%s' and say '%s'", cf_error_message(), xp, text[i]);
        assert_non_null(strstr(cf_error_hint_text(), "isfinite"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_float_matrix_v1_and_v2),
        cmocka_unit_test(test_labels_of_every_integer_type),
        cmocka_unit_test(test_writer_round_trip),
        cmocka_unit_test(test_bad_magic),
        cmocka_unit_test(test_bad_version),
        cmocka_unit_test(test_wrong_dtype),
        cmocka_unit_test(test_wrong_shape),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_malformed_header_dict),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_dataset_checks),
        cmocka_unit_test(test_dataset_refuses_non_finite_features),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
