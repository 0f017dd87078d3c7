/* What the benchmark drivers share (engine_bench.c, gpu_kernel_bench.c):
 * comma lists of integers on the command line and the median of timings.
 * Header-only: each bench is one translation unit. */
#ifndef CF_BENCH_ARGS_H
#define CF_BENCH_ARGS_H
#include <stdlib.h>
#include <string.h>

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n) (sorts v in place). */
static inline double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* "64,128,256" → out[], at most max values; the count. */
static inline int parse_list(const char *text, int *out, int max)
{
    int n = 0;
    char *copy = strdup(text), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok && n < max; tok = strtok_r(NULL, ",", &save))
        out[n++] = atoi(tok);
    free(copy);
    return n;
}

#endif
