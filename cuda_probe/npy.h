/* NumPy .npy files (private to cuda_probe/): a small strict reader for
 * the engine's inputs and a writer (tests, synthetic-data export).
 * Format: https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
 * — magic "\x93NUMPY", version 1.0/2.0/3.0, a little-endian header length,
 * then a Python dict literal with exactly 'descr', 'fortran_order' and
 * 'shape', then the raw data (nothing after it). */
#ifndef CF_PROBE_NPY_H
#define CF_PROBE_NPY_H
#include <stddef.h>
#include "cloudfit/status.h"

#define CF_NPY_MAX_DIMS 8

typedef struct {
    char descr[16];        /* e.g. "<f4" */
    int fortran_order;
    int ndim;
    long shape[CF_NPY_MAX_DIMS];
    size_t data_offset;    /* bytes from the start of the file */
    size_t data_bytes;     /* product of the shape × item size */
} cf_npy_header;

/* Parses and checks the header of an .npy image `buf` of `len` bytes
 * (including that the data that follows is exactly data_bytes long).
 * Errors start with `name`. Supported item types: little-endian (or
 * single-byte) floats and integers of 1, 2, 4 or 8 bytes. */
cf_status cf_npy_parse(const unsigned char *buf, size_t len, const char *name, cf_npy_header *out);

/* Loads a C-order float32 ('<f4') 2-D array; *out is malloc'd. */
cf_status cf_npy_load_f32_matrix(const char *path, long *rows, long *cols, float **out);
/* Loads a 1-D integer array (any signed or unsigned width) as int; values
 * outside int's range are an error. *out is malloc'd. */
cf_status cf_npy_load_labels(const char *path, long *n, int **out);

/* Writers (format 1.0, atomically through cf_write_file_atomic). */
cf_status cf_npy_save_f32_matrix(const char *path, const float *x, long rows, long cols);
cf_status cf_npy_save_i64_vector(const char *path, const int *y, long n);

#endif
