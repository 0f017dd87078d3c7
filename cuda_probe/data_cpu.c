#include "data_cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"

/* RNG streams of one seed (see cf_rng_seed). */
enum { STREAM_TEACHER = 1, STREAM_ORDER = 2, STREAM_SAMPLE_BASE = 1000 };

static cf_status alloc_common(cf_dataset *ds, long n, int in, int classes, uint64_t seed)
{
    ds->n = n;
    ds->in = in;
    ds->classes = classes;
    ds->seed = seed;
    ds->perm = malloc((size_t)n * sizeof *ds->perm);
    if (!ds->perm) { /* the host's memory, not the model's fit: out of memory (exit 1), not "does not fit" */
        cf_error_set(CF_ERR_NOMEM, "out of memory: no room for the order of %ld samples", n);
        cf_error_hint("profile with a smaller data.samples: the step times and the noise scale do not depend on it");
        return CF_ERR_NOMEM;
    }
    for (long i = 0; i < n; i++)
        ds->perm[i] = i;
    cf_rng_seed(&ds->order_rng, seed, STREAM_ORDER);
    ds->cursor = n; /* the first take shuffles */
    return CF_OK;
}

cf_status cf_dataset_synthetic(cf_dataset *ds, long n, int in, int classes, uint64_t seed)
{
    memset(ds, 0, sizeof *ds);
    if (n < 1)
        return cf_error_set(CF_ERR_INVALID, "the synthetic data set needs at least one sample, got %ld", n);
    cf_status st = alloc_common(ds, n, in, classes, seed);
    if (st != CF_OK)
        return st;
    const int H = CF_TEACHER_HIDDEN;
    size_t teacher_len = (size_t)in * H + H + (size_t)H * classes + (size_t)classes;
    ds->synthetic = 1;
    /* calloc: pages of samples never used are never touched. */
    ds->x = calloc((size_t)n * (size_t)in, sizeof *ds->x);
    ds->y = calloc((size_t)n, sizeof *ds->y);
    ds->ready = calloc((size_t)n, 1);
    ds->teacher = malloc(teacher_len * sizeof *ds->teacher);
    if (!ds->x || !ds->y || !ds->ready || !ds->teacher) {
        cf_dataset_free(ds);
        cf_error_set(CF_ERR_NOMEM, "out of memory: no room for %ld synthetic samples of %d features", n, in);
        cf_error_hint("profile with a smaller data.samples: the step times and the noise scale do not depend on it");
        return CF_ERR_NOMEM;
    }
    /* Teacher: He-scaled Gaussian weights, so hidden units are active on
     * about half the inputs and every class wins somewhere. */
    cf_rng rng;
    cf_rng_seed(&rng, seed, STREAM_TEACHER);
    float *w1 = ds->teacher, *b1 = w1 + (size_t)in * H, *w2 = b1 + H, *b2 = w2 + (size_t)H * classes;
    for (size_t i = 0; i < (size_t)in * H; i++)
        w1[i] = (float)(cf_rng_normal(&rng) * sqrt(2.0 / in));
    for (int i = 0; i < H; i++)
        b1[i] = (float)(0.1 * cf_rng_normal(&rng));
    for (size_t i = 0; i < (size_t)H * classes; i++)
        w2[i] = (float)(cf_rng_normal(&rng) * sqrt(1.0 / H));
    for (int i = 0; i < classes; i++)
        b2[i] = 0.0f;
    return CF_OK;
}

static void generate(cf_dataset *ds, long i)
{
    const int in = ds->in, H = CF_TEACHER_HIDDEN, C = ds->classes;
    float *x = ds->x + (size_t)i * in;
    cf_rng rng;
    cf_rng_seed(&rng, ds->seed, STREAM_SAMPLE_BASE + (uint64_t)i);
    for (int k = 0; k < in; k++)
        x[k] = (float)cf_rng_normal(&rng);
    const float *w1 = ds->teacher, *b1 = w1 + (size_t)in * H, *w2 = b1 + H, *b2 = w2 + (size_t)H * C;
    float h[CF_TEACHER_HIDDEN];
    for (int j = 0; j < H; j++)
        h[j] = b1[j];
    for (int k = 0; k < in; k++)
        for (int j = 0; j < H; j++)
            h[j] += x[k] * w1[(size_t)k * H + j];
    int best = 0;
    double best_logit = -INFINITY;
    for (int c = 0; c < C; c++) {
        double z = b2[c];
        for (int j = 0; j < H; j++)
            z += (h[j] > 0.0f ? h[j] : 0.0f) * w2[(size_t)j * C + c];
        if (z > best_logit) {
            best_logit = z;
            best = c;
        }
    }
    ds->y[i] = best;
    ds->ready[i] = 1;
}

cf_status cf_dataset_npy(cf_dataset *ds, const char *x_path, const char *y_path, int in, int classes,
                         uint64_t seed)
{
    memset(ds, 0, sizeof *ds);
    long rows = 0, cols = 0, n_labels = 0;
    cf_status st = cf_npy_load_f32_matrix(x_path, &rows, &cols, &ds->x);
    if (st != CF_OK)
        return st;
    if (cols != in) {
        cf_dataset_free(ds);
        return cf_error_set(CF_ERR_INVALID, "%s: expected %d features per sample (the model's input width), got %ld",
                            x_path, in, cols);
    }
    if (rows < 1) {
        cf_dataset_free(ds);
        return cf_error_set(CF_ERR_INVALID, "%s: no samples (shape (0, %ld))", x_path, cols);
    }
    /* A NaN or an infinity trains into a non-finite gradient at the first
     * step that draws it: named here, with the file, not as a divergence. */
    for (size_t i = 0, n = (size_t)rows * (size_t)cols; i < n; i++)
        if (!isfinite(ds->x[i])) {
            float bad = ds->x[i];
            cf_dataset_free(ds);
            cf_error_set(CF_ERR_INVALID, "%s: value %g at sample %zu, feature %zu: expected finite numbers", x_path,
                         (double)bad, i / (size_t)cols, i % (size_t)cols);
            cf_error_hint("replace the NaN and infinite values or drop their samples: "
                          "keep = numpy.isfinite(x).all(axis=1); x, y = x[keep], y[keep]");
            return CF_ERR_INVALID;
        }
    if ((st = cf_npy_load_labels(y_path, &n_labels, &ds->y)) != CF_OK) {
        cf_dataset_free(ds);
        return st;
    }
    if (n_labels != rows) {
        cf_dataset_free(ds);
        return cf_error_set(CF_ERR_INVALID, "%s: %ld labels, but %s has %ld samples", y_path, n_labels, x_path,
                            rows);
    }
    for (long i = 0; i < rows; i++)
        if (ds->y[i] < 0 || ds->y[i] >= classes) {
            int bad = ds->y[i];
            cf_dataset_free(ds);
            return cf_error_set(CF_ERR_INVALID,
                                "%s: label %d at index %ld is outside 0..%d (the model has %d classes)", y_path,
                                bad, i, classes - 1, classes);
        }
    if ((st = alloc_common(ds, rows, in, classes, seed)) != CF_OK)
        cf_dataset_free(ds);
    return st;
}

void cf_dataset_take(cf_dataset *ds, long count, long *idx)
{
    for (long k = 0; k < count; k++) {
        if (ds->cursor >= ds->n) {
            /* New epoch: Fisher–Yates over the previous order. */
            for (long i = ds->n - 1; i > 0; i--) {
                long j = (long)cf_rng_below(&ds->order_rng, (uint64_t)i + 1);
                long t = ds->perm[i];
                ds->perm[i] = ds->perm[j];
                ds->perm[j] = t;
            }
            ds->cursor = 0;
        }
        long i = ds->perm[ds->cursor++];
        if (ds->synthetic && !ds->ready[i])
            generate(ds, i);
        idx[k] = i;
    }
}

void cf_dataset_gather(const cf_dataset *ds, const long *idx, int B, float *x_out, int *y_out)
{
    size_t row = (size_t)ds->in;
    for (int r = 0; r < B; r++) {
        memcpy(x_out + (size_t)r * row, ds->x + (size_t)idx[r] * row, row * sizeof *x_out);
        y_out[r] = ds->y[idx[r]];
    }
}

void cf_dataset_materialize(cf_dataset *ds)
{
    if (!ds->synthetic)
        return;
    for (long i = 0; i < ds->n; i++)
        if (!ds->ready[i])
            generate(ds, i);
}

void cf_dataset_free(cf_dataset *ds)
{
    free(ds->x);
    free(ds->y);
    free(ds->ready);
    free(ds->teacher);
    free(ds->perm);
    memset(ds, 0, sizeof *ds);
}
