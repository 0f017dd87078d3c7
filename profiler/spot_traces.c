#include "cloudfit/profiler/spot_traces.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/csvread.h"
#include "cloudfit/common/fileio.h"

void cf_spot_trace_free(cf_spot_trace *t)
{
    free(t->dt_h);
    free(t->counts);
    memset(t, 0, sizeof *t);
}

cf_status cf_spot_trace_parse(const char *text, size_t len, const char *name, int requested, cf_spot_trace *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", name);
    cf_csv_doc doc;
    cf_status st = cf_csv_parse(text, len, name, &doc);
    if (st != CF_OK)
        return st;
    int t_col = -1, cols[CF_SPOT_MAX_TYPES], n_cols = 0;
    st = cf_csv_require_column(&doc, "t_s", &t_col);
    for (size_t c = 0; st == CF_OK && c < doc.header.n_fields; c++) {
        if ((int)c == t_col)
            continue;
        if (n_cols == CF_SPOT_MAX_TYPES)
            st = cf_error_set(CF_ERR_INVALID, "%s: at most %d count columns after t_s (one per VM type), got %zu",
                              name, CF_SPOT_MAX_TYPES, doc.header.n_fields - 1);
        else
            cols[n_cols++] = (int)c;
    }
    if (st == CF_OK && n_cols == 0)
        st = cf_error_set(CF_ERR_INVALID, "%s: no count column (expected t_s,nodes_available)", name);
    if (st == CF_OK && doc.n_records < 2)
        st = cf_error_set(CF_ERR_INVALID, "%s: a trace needs at least 2 ticks, got %zu", name, doc.n_records);
    if (st == CF_OK) {
        out->n_types = n_cols;
        out->n_ticks = doc.n_records;
        out->dt_h = calloc(doc.n_records, sizeof *out->dt_h);
        out->counts = calloc(doc.n_records * (size_t)n_cols, sizeof *out->counts);
        if (!out->dt_h || !out->counts)
            st = cf_error_set(CF_ERR_NOMEM, "out of memory reading '%s'", name);
    }
    double prev_t = 0;
    for (size_t i = 0; st == CF_OK && i < doc.n_records; i++) {
        const cf_csv_record *rec = &doc.records[i];
        double t = 0;
        if ((st = cf_csv_double(&doc, rec, t_col, 1, 0, &t)) != CF_OK)
            break;
        if (i > 0 && !(t > prev_t)) {
            st = cf_error_set(CF_ERR_INVALID, "%s:%ld: column 't_s': times must increase (%g after %g)", name,
                              rec->line, t, prev_t);
            break;
        }
        if (i > 0)
            out->dt_h[i - 1] = (t - prev_t) / 3600.0;
        prev_t = t;
        for (int k = 0; k < n_cols; k++) {
            long v = 0;
            if ((st = cf_csv_int(&doc, rec, cols[k], 1, 0, &v)) != CF_OK)
                break;
            if (v < 0 || v > 100000) {
                st = cf_error_set(CF_ERR_INVALID, "%s:%ld: column '%s': expected a node count from 0, got %ld", name,
                                  rec->line, doc.header.fields[cols[k]], v);
                break;
            }
            out->counts[i * (size_t)n_cols + (size_t)k] = (int)v;
            if (v > out->vm[k].requested)
                out->vm[k].requested = (int)v;
        }
    }
    if (st == CF_OK) {
        out->dt_h[doc.n_records - 1] = out->dt_h[doc.n_records - 2];
        for (int k = 0; k < n_cols; k++) {
            if (requested > 0) {
                if (out->vm[k].requested > requested) {
                    st = cf_error_set(CF_ERR_INVALID, "%s: %d nodes held at some tick, more than the %d requested",
                                      name, out->vm[k].requested, requested);
                    break;
                }
                out->vm[k].requested = requested;
            } else if (out->vm[k].requested == 0) {
                st = cf_error_set(CF_ERR_INVALID, "%s: no node is ever held (all counts 0)", name);
                break;
            }
        }
    }
    cf_csv_free(&doc);
    if (st != CF_OK)
        cf_spot_trace_free(out);
    return st;
}

/* The index.csv row of `base` (a file name), copied into vm; 1 when found. */
typedef struct {
    char file[256], kind[32], source[512];
    cf_spot_trace_vm vm;
} index_row;

static cf_status read_index(const char *dir, index_row **rows, size_t *n_rows)
{
    char path[CF_PATH_MAX], *text = NULL;
    size_t len = 0;
    *rows = NULL;
    *n_rows = 0;
    snprintf(path, sizeof path, "%s/index.csv", dir);
    cf_status st = cf_read_file(path, &text, &len);
    if (st != CF_OK)
        return st;
    cf_csv_doc doc;
    st = cf_csv_parse(text, len, path, &doc);
    free(text);
    if (st != CF_OK)
        return st;
    static const char *const names[] = {"file", "nodes_requested", "cloud", "zone", "instance_type", "gpu",
                                        "gpus_per_vm", "start_date"};
    int col[8];
    for (int i = 0; i < 8 && st == CF_OK; i++)
        st = cf_csv_require_column(&doc, names[i], &col[i]);
    if (st == CF_OK && !(*rows = calloc(doc.n_records ? doc.n_records : 1, sizeof **rows)))
        st = cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (size_t i = 0; st == CF_OK && i < doc.n_records; i++) {
        const cf_csv_record *rec = &doc.records[i];
        index_row *r = &(*rows)[i];
        long nodes = 0, gpus = 0;
        if ((st = cf_csv_int(&doc, rec, col[1], 1, 0, &nodes)) != CF_OK ||
            (st = cf_csv_int(&doc, rec, col[6], 0, 0, &gpus)) != CF_OK)
            break;
        if (nodes < 1) {
            st = cf_error_set(CF_ERR_INVALID, "%s:%ld: column 'nodes_requested': expected a positive integer", path,
                              rec->line);
            break;
        }
        snprintf(r->file, sizeof r->file, "%s", cf_csv_field(rec, col[0]));
        r->vm.requested = (int)nodes;
        r->vm.gpus_per_vm = (int)gpus;
        snprintf(r->vm.cloud, sizeof r->vm.cloud, "%s", cf_csv_field(rec, col[2]));
        snprintf(r->vm.zone, sizeof r->vm.zone, "%s", cf_csv_field(rec, col[3]));
        snprintf(r->vm.instance_type, sizeof r->vm.instance_type, "%s", cf_csv_field(rec, col[4]));
        snprintf(r->vm.gpu, sizeof r->vm.gpu, "%s", cf_csv_field(rec, col[5]));
        snprintf(r->vm.start_date, sizeof r->vm.start_date, "%s", cf_csv_field(rec, col[7]));
        /* AWS zones are the region plus one letter (us-east-2b). */
        snprintf(r->vm.region, sizeof r->vm.region, "%s", r->vm.zone);
        size_t zl = strlen(r->vm.region);
        if (strcmp(r->vm.cloud, "aws") == 0 && zl > 1 && r->vm.region[zl - 1] >= 'a' && r->vm.region[zl - 1] <= 'z')
            r->vm.region[zl - 1] = '\0';
        (*n_rows)++;
    }
    cf_csv_free(&doc);
    if (st != CF_OK) {
        free(*rows);
        *rows = NULL;
        *n_rows = 0;
    }
    return st;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

cf_status cf_spot_trace_load(const char *path, int requested, cf_spot_trace *out)
{
    char *text = NULL;
    size_t len = 0;
    cf_status st = cf_read_file(path, &text, &len);
    if (st != CF_OK)
        return st;
    /* The index, when there is one: the requested count decides what a
     * full cluster is (a 16-node trace may never hold all 16). */
    char dir[CF_PATH_MAX];
    cf_dirname(path, dir, sizeof dir);
    index_row *rows = NULL;
    size_t n_rows = 0;
    const index_row *mine = NULL;
    if (read_index(dir, &rows, &n_rows) == CF_OK) {
        for (size_t i = 0; i < n_rows && !mine; i++)
            if (strcmp(rows[i].file, base_name(path)) == 0)
                mine = &rows[i];
    }
    cf_error_clear();
    st = cf_spot_trace_parse(text, len, path, requested > 0 ? requested : mine ? mine->vm.requested : 0, out);
    free(text);
    if (st == CF_OK && mine && out->n_types == 1) {
        int req = out->vm[0].requested;
        out->vm[0] = mine->vm;
        out->vm[0].requested = req;
    }
    free(rows);
    return st;
}

cf_status cf_spot_trace_merge(const cf_spot_trace *a, const cf_spot_trace *b, cf_spot_trace *out)
{
    memset(out, 0, sizeof *out);
    if (a->n_types != 1 || b->n_types != 1)
        return cf_error_set(CF_ERR_INVALID, "only single-type traces can be merged");
    double la = 0, lb = 0;
    for (size_t i = 0; i < a->n_ticks; i++)
        la += a->dt_h[i];
    for (size_t i = 0; i < b->n_ticks; i++)
        lb += b->dt_h[i];
    double end = fmin(la, lb);
    size_t cap = a->n_ticks + b->n_ticks;
    out->dt_h = malloc(cap * sizeof *out->dt_h);
    out->counts = malloc(cap * 2 * sizeof *out->counts);
    if (!out->dt_h || !out->counts) {
        cf_spot_trace_free(out);
        return cf_error_set(CF_ERR_NOMEM, "out of memory");
    }
    out->n_types = 2;
    out->vm[0] = a->vm[0];
    out->vm[1] = b->vm[0];
    snprintf(out->name, sizeof out->name, "%.120s + %.120s", base_name(a->name), base_name(b->name));
    size_t ia = 0, ib = 0;
    double t = 0, ea = a->dt_h[0], eb = b->dt_h[0]; /* end of the current tick of each */
    while (t < end - 1e-12 && ia < a->n_ticks && ib < b->n_ticks) {
        double next = fmin(fmin(ea, eb), end);
        out->dt_h[out->n_ticks] = next - t;
        out->counts[2 * out->n_ticks] = a->counts[ia];
        out->counts[2 * out->n_ticks + 1] = b->counts[ib];
        out->n_ticks++;
        t = next;
        if (ea <= t + 1e-12 && ++ia < a->n_ticks)
            ea += a->dt_h[ia];
        if (eb <= t + 1e-12 && ++ib < b->n_ticks)
            eb += b->dt_h[ib];
    }
    return CF_OK;
}

void cf_spot_trace_set_free(cf_spot_trace_set *set)
{
    for (size_t i = 0; i < set->n; i++)
        cf_spot_trace_free(&set->traces[i]);
    free(set->traces);
    memset(set, 0, sizeof *set);
}

cf_status cf_spot_trace_set_load(const char *dir, cf_spot_trace_set *out)
{
    memset(out, 0, sizeof *out);
    index_row *rows = NULL;
    size_t n_rows = 0;
    cf_status st = read_index(dir, &rows, &n_rows);
    if (st != CF_OK)
        return st;
    out->traces = calloc(n_rows ? n_rows : 1, sizeof *out->traces);
    if (!out->traces)
        st = cf_error_set(CF_ERR_NOMEM, "out of memory");
    for (size_t i = 0; st == CF_OK && i < n_rows; i++) {
        char path[CF_PATH_MAX + 300];
        snprintf(path, sizeof path, "%s/%s", dir, rows[i].file);
        st = cf_spot_trace_load(path, rows[i].vm.requested, &out->traces[i]);
        if (st == CF_OK)
            out->n++;
    }
    free(rows);
    if (st != CF_OK)
        cf_spot_trace_set_free(out);
    return st;
}
