#include "npy.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/fileio.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the .npy reader assumes a little-endian host"
#endif

static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* ---- the header dict: a tiny parser for the Python literal NumPy writes -- */

typedef struct {
    const char *p, *end, *name;
} cursor;

static void skip_space(cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static cf_status bad_header(const cursor *c, const char *what)
{
    return cf_error_set(CF_ERR_INVALID, "%s: malformed .npy header: %s", c->name, what);
}

static int accept(cursor *c, char ch)
{
    skip_space(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

static cf_status parse_string(cursor *c, char *out, size_t n)
{
    skip_space(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
        return bad_header(c, "expected a quoted string");
    char quote = *c->p++;
    size_t len = 0;
    while (c->p < c->end && *c->p != quote) {
        if (len + 1 >= n)
            return bad_header(c, "string too long");
        out[len++] = *c->p++;
    }
    if (c->p >= c->end)
        return bad_header(c, "unterminated string");
    c->p++;
    out[len] = '\0';
    return CF_OK;
}

static cf_status parse_bool(cursor *c, int *out)
{
    skip_space(c);
    size_t left = (size_t)(c->end - c->p);
    if (left >= 4 && memcmp(c->p, "True", 4) == 0) {
        c->p += 4;
        *out = 1;
    } else if (left >= 5 && memcmp(c->p, "False", 5) == 0) {
        c->p += 5;
        *out = 0;
    } else
        return bad_header(c, "'fortran_order' must be True or False");
    return CF_OK;
}

static cf_status parse_shape(cursor *c, cf_npy_header *h)
{
    if (!accept(c, '('))
        return bad_header(c, "'shape' must be a tuple such as (60000, 784)");
    h->ndim = 0;
    for (;;) {
        if (accept(c, ')'))
            break;
        skip_space(c);
        if (c->p >= c->end || *c->p < '0' || *c->p > '9')
            return bad_header(c, "'shape' must hold non-negative integers");
        long v = 0;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
            if (v > (LONG_MAX - 9) / 10)
                return bad_header(c, "a dimension in 'shape' is too large");
            v = v * 10 + (*c->p++ - '0');
        }
        if (h->ndim == CF_NPY_MAX_DIMS)
            return bad_header(c, "'shape' has too many dimensions");
        h->shape[h->ndim++] = v;
        if (accept(c, ','))
            continue;
        if (accept(c, ')'))
            break;
        return bad_header(c, "expected ',' or ')' in 'shape'");
    }
    return CF_OK;
}

/* Item size from a descr such as "<f4", "|u1"; 0 when unsupported. */
static size_t descr_itemsize(const char *descr, char *kind)
{
    if (strlen(descr) != 3)
        return 0;
    char order = descr[0], k = descr[1], size = descr[2];
    if (k != 'f' && k != 'i' && k != 'u')
        return 0;
    size_t bytes = (size_t)(size - '0');
    if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8)
        return 0;
    if (k == 'f' && bytes < 4)
        return 0;
    /* '<' little-endian, '|' not applicable (single bytes), '=' native. */
    if (!(order == '<' || order == '=' || (order == '|' && bytes == 1)))
        return 0;
    *kind = k;
    return bytes;
}

cf_status cf_npy_parse(const unsigned char *buf, size_t len, const char *name, cf_npy_header *out)
{
    memset(out, 0, sizeof *out);
    if (len < 10 || memcmp(buf, npy_magic, sizeof npy_magic) != 0)
        return cf_error_set(CF_ERR_INVALID, "%s: not a NumPy .npy file (it does not start with \"\\x93NUMPY\")",
                            name);
    int major = buf[6], minor = buf[7];
    size_t header_len, start;
    if (minor != 0) /* NumPy writes and reads 1.0, 2.0 and 3.0 only */
        return cf_error_set(CF_ERR_INVALID, "%s: unsupported .npy format version %d.%d (expected 1.0, 2.0 or 3.0)",
                            name, major, minor);
    if (major == 1) {
        header_len = (size_t)buf[8] | (size_t)buf[9] << 8;
        start = 10;
    } else if (major == 2 || major == 3) {
        if (len < 12)
            return cf_error_set(CF_ERR_INVALID, "%s: truncated .npy header", name);
        header_len = (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
        start = 12;
    } else
        return cf_error_set(CF_ERR_INVALID, "%s: unsupported .npy format version %d.%d (expected 1.0, 2.0 or 3.0)",
                            name, major, buf[7]);
    if (header_len > len - start)
        return cf_error_set(CF_ERR_INVALID, "%s: truncated .npy header (it announces %zu bytes, the file has %zu)",
                            name, header_len, len - start);

    cursor c = {(const char *)buf + start, (const char *)buf + start + header_len, name};
    int seen_descr = 0, seen_order = 0, seen_shape = 0;
    cf_status st;
    if (!accept(&c, '{'))
        return bad_header(&c, "expected '{'");
    for (;;) {
        if (accept(&c, '}'))
            break;
        char key[32];
        if ((st = parse_string(&c, key, sizeof key)) != CF_OK)
            return st;
        if (!accept(&c, ':'))
            return bad_header(&c, "expected ':' after a key");
        int *seen;
        if (strcmp(key, "descr") == 0) {
            seen = &seen_descr;
            st = parse_string(&c, out->descr, sizeof out->descr);
        } else if (strcmp(key, "fortran_order") == 0) {
            seen = &seen_order;
            st = parse_bool(&c, &out->fortran_order);
        } else if (strcmp(key, "shape") == 0) {
            seen = &seen_shape;
            st = parse_shape(&c, out);
        } else
            return cf_error_set(CF_ERR_INVALID,
                                "%s: malformed .npy header: unknown key '%s' (expected descr, fortran_order, shape)",
                                name, key);
        if (st != CF_OK)
            return st;
        if (*seen)
            return cf_error_set(CF_ERR_INVALID, "%s: malformed .npy header: key '%s' appears twice", name, key);
        *seen = 1;
        if (accept(&c, ','))
            continue;
        if (accept(&c, '}'))
            break;
        return bad_header(&c, "expected ',' or '}'");
    }
    skip_space(&c);
    if (c.p != c.end)
        return bad_header(&c, "unexpected text after the dict");
    if (!seen_descr || !seen_order || !seen_shape)
        return cf_error_set(CF_ERR_INVALID, "%s: malformed .npy header: missing '%s'", name,
                            !seen_descr ? "descr" : !seen_order ? "fortran_order" : "shape");

    char kind = 0;
    size_t item = descr_itemsize(out->descr, &kind);
    if (item == 0)
        return cf_error_set(CF_ERR_INVALID,
                            "%s: unsupported dtype '%s' (expected a little-endian float or integer such as '<f4')",
                            name, out->descr);
    size_t count = 1;
    for (int i = 0; i < out->ndim; i++) {
        if (out->shape[i] != 0 && count > SIZE_MAX / item / (size_t)out->shape[i])
            return cf_error_set(CF_ERR_INVALID, "%s: the shape in the header is too large", name);
        count *= (size_t)out->shape[i];
    }
    out->data_offset = start + header_len;
    out->data_bytes = count * item;
    size_t have = len - out->data_offset;
    if (have < out->data_bytes)
        return cf_error_set(CF_ERR_INVALID,
                            "%s: truncated: the header promises %zu bytes of data, the file has %zu", name,
                            out->data_bytes, have);
    if (have > out->data_bytes)
        return cf_error_set(CF_ERR_INVALID, "%s: %zu unexpected bytes after the data", name,
                            have - out->data_bytes);
    return CF_OK;
}

static cf_status load(const char *path, unsigned char **buf, size_t *len, cf_npy_header *h)
{
    char *text = NULL;
    cf_status st = cf_read_file(path, &text, len);
    if (st != CF_OK)
        return st;
    *buf = (unsigned char *)text;
    if ((st = cf_npy_parse(*buf, *len, path, h)) != CF_OK) {
        free(text);
        *buf = NULL;
    }
    return st;
}

static const char *shape_text(const cf_npy_header *h, char *out, size_t n)
{
    size_t used = (size_t)snprintf(out, n, "(");
    for (int i = 0; i < h->ndim && used < n; i++)
        used += (size_t)snprintf(out + used, n - used, i ? ", %ld" : "%ld", h->shape[i]);
    if (used < n)
        snprintf(out + used, n - used, h->ndim == 1 ? ",)" : ")");
    return out;
}

cf_status cf_npy_load_f32_matrix(const char *path, long *rows, long *cols, float **out)
{
    unsigned char *buf;
    size_t len;
    cf_npy_header h;
    cf_status st = load(path, &buf, &len, &h);
    if (st != CF_OK)
        return st;
    char shape[128];
    if (strcmp(h.descr, "<f4") != 0 && strcmp(h.descr, "=f4") != 0) {
        st = cf_error_set(CF_ERR_INVALID, "%s: expected dtype float32 ('<f4'), got '%s'", path, h.descr);
        cf_error_hint("save it with numpy.save(path, x.astype(numpy.float32))");
    } else if (h.ndim != 2)
        st = cf_error_set(CF_ERR_INVALID, "%s: expected a 2-D array [samples, features], got shape %s", path,
                          shape_text(&h, shape, sizeof shape));
    else if (h.fortran_order && h.shape[0] > 1 && h.shape[1] > 1) {
        st = cf_error_set(CF_ERR_INVALID, "%s: expected C order, got fortran_order True", path);
        cf_error_hint("save it with numpy.save(path, numpy.ascontiguousarray(x))");
    }
    if (st != CF_OK) {
        free(buf);
        return st;
    }
    /* Reuse the file buffer: move the data to its start and shrink it. */
    memmove(buf, buf + h.data_offset, h.data_bytes);
    float *data = realloc(buf, h.data_bytes ? h.data_bytes : 1);
    *out = data ? data : (float *)buf;
    *rows = h.shape[0];
    *cols = h.shape[1];
    return CF_OK;
}

cf_status cf_npy_load_labels(const char *path, long *n, int **out)
{
    unsigned char *buf;
    size_t len;
    cf_npy_header h;
    cf_status st = load(path, &buf, &len, &h);
    if (st != CF_OK)
        return st;
    char kind = 0, shape[128];
    size_t item = descr_itemsize(h.descr, &kind);
    if (kind == 'f')
        st = cf_error_set(CF_ERR_INVALID, "%s: expected integer class labels, got dtype '%s'", path, h.descr);
    else if (h.ndim != 1)
        st = cf_error_set(CF_ERR_INVALID, "%s: expected a 1-D array of labels [samples], got shape %s", path,
                          shape_text(&h, shape, sizeof shape));
    if (st != CF_OK) {
        free(buf);
        return st;
    }
    long count = h.shape[0];
    int *labels = malloc((size_t)(count ? count : 1) * sizeof *labels);
    if (!labels) {
        free(buf);
        return cf_error_set(CF_ERR_NOMEM, "out of memory reading '%s'", path);
    }
    const unsigned char *data = buf + h.data_offset;
    for (long i = 0; i < count; i++) {
        const unsigned char *p = data + (size_t)i * item;
        int64_t value = 0;
        uint64_t raw = 0;
        for (size_t b = 0; b < item; b++)
            raw |= (uint64_t)p[b] << (8 * b);
        if (kind == 'u') {
            if (raw > (uint64_t)INT_MAX) {
                st = cf_error_set(CF_ERR_INVALID, "%s: label %llu at index %ld does not fit an int", path,
                                  (unsigned long long)raw, i);
                break;
            }
            value = (int64_t)raw;
        } else {
            /* Sign-extend from `item` bytes. */
            unsigned shift = (unsigned)(64 - 8 * item);
            value = (int64_t)(raw << shift) >> shift;
            if (value < INT_MIN || value > INT_MAX) {
                st = cf_error_set(CF_ERR_INVALID, "%s: label %lld at index %ld does not fit an int", path,
                                  (long long)value, i);
                break;
            }
        }
        labels[i] = (int)value;
    }
    free(buf);
    if (st != CF_OK) {
        free(labels);
        return st;
    }
    *out = labels;
    *n = count;
    return CF_OK;
}

/* Header padded with spaces so the data starts at a multiple of 64 bytes
 * (what NumPy itself does), ending in '\n'. */
static cf_status save(const char *path, const char *descr, const long *shape, int ndim, const void *data,
                      size_t item)
{
    char dict[256], dims[128];
    size_t used = 0;
    size_t count = 1;
    for (int i = 0; i < ndim; i++) {
        used += (size_t)snprintf(dims + used, sizeof dims - used, "%ld, ", shape[i]);
        count *= (size_t)shape[i];
    }
    if (ndim > 1)
        dims[used - 2] = '\0'; /* "(a, b)" but "(n,)" for one dimension */
    else
        dims[used - 1] = '\0';
    int dict_len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr,
                            dims);
    size_t header = 10 + (size_t)dict_len + 1;
    size_t padded = (header + 63) / 64 * 64;
    size_t total = padded + count * item;
    char *image = malloc(total);
    if (!image)
        return cf_error_set(CF_ERR_NOMEM, "out of memory writing '%s'", path);
    memcpy(image, npy_magic, sizeof npy_magic);
    image[6] = 1;
    image[7] = 0;
    size_t header_len = padded - 10;
    image[8] = (char)(header_len & 0xff);
    image[9] = (char)(header_len >> 8);
    memcpy(image + 10, dict, (size_t)dict_len);
    memset(image + 10 + dict_len, ' ', padded - 10 - (size_t)dict_len - 1);
    image[padded - 1] = '\n';
    memcpy(image + padded, data, count * item);
    cf_status st = cf_write_file_atomic(path, image, total);
    free(image);
    return st;
}

cf_status cf_npy_save_f32_matrix(const char *path, const float *x, long rows, long cols)
{
    long shape[2] = {rows, cols};
    return save(path, "<f4", shape, 2, x, sizeof *x);
}

cf_status cf_npy_save_i64_vector(const char *path, const int *y, long n)
{
    int64_t *wide = malloc((size_t)(n ? n : 1) * sizeof *wide);
    if (!wide)
        return cf_error_set(CF_ERR_NOMEM, "out of memory writing '%s'", path);
    for (long i = 0; i < n; i++)
        wide[i] = y[i];
    long shape[1] = {n};
    cf_status st = save(path, "<i8", shape, 1, wide, sizeof *wide);
    free(wide);
    return st;
}
