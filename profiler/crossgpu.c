#include "cloudfit/profiler/crossgpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/csvread.h"
#include "cloudfit/common/fileio.h"

/* "benchmark v1; table row ..." → "v1". */
static void benchmark_of(const char *notes, char *out, size_t n)
{
    const char *p = strstr(notes, "benchmark v");
    if (!p) {
        snprintf(out, n, "?");
        return;
    }
    p += strlen("benchmark ");
    size_t len = strspn(p, "v0123456789");
    snprintf(out, n, "%.*s", (int)len, p);
}

cf_status cf_crossgpu_parse(const char *text, size_t len, const char *name, cf_crossgpu_set *out)
{
    static const char *const required[] = {"gpu", "gpu_count", "model", "precision", "batch_size_per_gpu",
                                           "throughput"};
    memset(out, 0, sizeof *out);
    cf_csv_doc doc;
    cf_status st = cf_csv_parse(text, len, name, &doc);
    if (st != CF_OK)
        return st;
    int cols[7];
    for (int i = 0; i < 6 && st == CF_OK; i++)
        st = cf_csv_require_column(&doc, required[i], &cols[i]);
    /* notes: optional (a table converted from another source has none): its "benchmark vN" keeps runs of
     * two benchmark versions apart, "SUSPECT" marks a row; without it every row is of one benchmark */
    cols[6] = cf_csv_column(&doc, "notes");
    if (st == CF_OK && !(out->rows = calloc(doc.n_records ? doc.n_records : 1, sizeof *out->rows)))
        st = cf_error_set(CF_ERR_NOMEM, "out of memory reading '%s'", name);
    for (size_t i = 0; st == CF_OK && i < doc.n_records; i++) {
        const cf_csv_record *rec = &doc.records[i];
        cf_crossgpu_row *r = &out->rows[out->n_rows];
        long count = 0;
        r->line = rec->line;
        if ((st = cf_csv_text(&doc, rec, cols[0], r->gpu, sizeof r->gpu)) != CF_OK)
            break;
        if ((st = cf_csv_text(&doc, rec, cols[2], r->model, sizeof r->model)) != CF_OK) /* cut, two models merged */
            break;
        snprintf(r->precision, sizeof r->precision, "%s", cf_csv_field(rec, cols[3]));
        const char *notes = cols[6] >= 0 ? cf_csv_field(rec, cols[6]) : "";
        benchmark_of(notes, r->benchmark, sizeof r->benchmark);
        r->suspect = strstr(notes, "SUSPECT") != NULL;
        if ((st = cf_csv_int(&doc, rec, cols[1], 1, 0, &count)) != CF_OK ||
            (st = cf_csv_double(&doc, rec, cols[4], 0, 0, &r->batch_per_gpu)) != CF_OK ||
            (st = cf_csv_double(&doc, rec, cols[5], 1, 0, &r->throughput)) != CF_OK)
            break;
        if (count < 1)
            st = cf_error_set(CF_ERR_INVALID, "%s:%ld: column 'gpu_count': expected a positive integer, got %ld", name,
                              rec->line, count);
        else if (!(r->throughput > 0))
            st = cf_error_set(CF_ERR_INVALID, "%s:%ld: column 'throughput': expected a positive number, got %g", name,
                              rec->line, r->throughput);
        else if (cf_csv_field(rec, cols[4])[0] && !(r->batch_per_gpu > 0)) /* empty: not given */
            st = cf_error_set(CF_ERR_INVALID, "%s:%ld: column 'batch_size_per_gpu': expected a positive number, got %g",
                              name, rec->line, r->batch_per_gpu);
        cf_precision prec;
        if (st != CF_OK)
            break;
        if (!cf_precision_parse(r->precision, &prec))
            st = cf_error_set(CF_ERR_INVALID,
                              "%s:%ld: column 'precision': expected fp32, tf32, fp16, bf16 or amp, got '%s'", name,
                              rec->line, r->precision);
        else /* the canonical spelling */
            snprintf(r->precision, sizeof r->precision, "%s", cf_precision_name(prec));
        r->gpu_count = (int)count;
        out->n_rows++;
    }
    cf_csv_free(&doc);
    if (st != CF_OK)
        cf_crossgpu_free(out);
    return st;
}

cf_status cf_crossgpu_load(const char *path, cf_crossgpu_set *out)
{
    char *text = NULL;
    size_t len = 0;
    memset(out, 0, sizeof *out);
    cf_status st = cf_read_file(path, &text, &len);
    if (st == CF_OK)
        st = cf_crossgpu_parse(text, len, path, out);
    free(text);
    return st;
}

void cf_crossgpu_free(cf_crossgpu_set *set)
{
    free(set->rows);
    set->rows = NULL;
    set->n_rows = 0;
}
