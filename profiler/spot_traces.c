/* Reading one spot trace (CSV or the public traces' JSON) and merging two
 * (docs/spot.md "Trace folders"); what a folder of them says about their
 * VMs is profiler/spot_trace_folder.c. */
#include "cloudfit/profiler/spot_traces.h"

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/csvread.h"
#include "cloudfit/common/fileio.h"
#include "cloudfit/common/json.h"
#include "cloudfit/common/escape.h"

void cf_spot_trace_free(cf_spot_trace *t)
{
    free(t->dt_h);
    free(t->counts);
    memset(t, 0, sizeof *t);
}

static cf_status alloc_ticks(cf_spot_trace *out, size_t n_ticks, int n_types, const char *name)
{
    if (n_ticks < 2)
        return cf_error_set(CF_ERR_INVALID, "%s: a trace needs at least 2 ticks, got %zu", name, n_ticks);
    out->n_types = n_types;
    out->n_ticks = n_ticks;
    out->dt_h = calloc(n_ticks, sizeof *out->dt_h);
    out->counts = calloc(n_ticks * (size_t)n_types, sizeof *out->counts);
    if (!out->dt_h || !out->counts)
        return cf_error_set(CF_ERR_NOMEM, "out of memory reading '%s'", name);
    return CF_OK;
}

/* A tick's length: at least a millisecond (a trace of nanosecond ticks
 * left no room to start a job, reported as "out of memory"), at most
 * 10^9 s as in the JSON form (two times of ±1.7e308 differed by inf). */
#define MIN_TICK_S 1e-3
#define MAX_TICK_S 1e9

static cf_status parse_csv(const char *text, size_t len, const char *name, int requested, cf_spot_trace *out)
{
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
    if (st == CF_OK)
        st = alloc_ticks(out, doc.n_records, n_cols, name);
    double prev_t = 0;
    for (size_t i = 0; st == CF_OK && i < doc.n_records; i++) {
        const cf_csv_record *rec = &doc.records[i];
        double t = 0;
        if ((st = cf_csv_double(&doc, rec, t_col, 1, 0, &t)) != CF_OK)
            break;
        if (!(t >= 0)) { /* seconds since the start: a negative time was replayed as if it were one */
            st = cf_error_set(CF_ERR_INVALID, "%s:%ld: column 't_s': expected seconds since the start (0 or more), "
                              "got %g", name, rec->line, t);
            break;
        }
        if (i > 0 && !(t > prev_t)) {
            st = cf_error_set(CF_ERR_INVALID, "%s:%ld: column 't_s': times must increase (%g after %g)", name,
                              rec->line, t, prev_t);
            break;
        }
        /* the times are decimal text: their difference carries the
         * rounding of the larger (0.009 - 0.008 < 0.001 in binary) */
        double slack = 4 * DBL_EPSILON * fmax(fabs(t), fabs(prev_t));
        if (i > 0 && !((t - prev_t) >= MIN_TICK_S - slack && (t - prev_t) <= MAX_TICK_S)) {
            st = cf_error_set(CF_ERR_INVALID, "%s:%ld: column 't_s': %g s after %g s is a tick of %g s; expected "
                              "%g to %g s", name, rec->line, t, prev_t, t - prev_t, MIN_TICK_S, MAX_TICK_S);
            break;
        }
        if (i > 0)
            out->dt_h[i - 1] = (t - prev_t) / 3600.0;
        prev_t = t;
        for (int k = 0; k < n_cols; k++) {
            long v = 0;
            if ((st = cf_csv_int(&doc, rec, cols[k], 1, 0, &v)) != CF_OK)
                break;
            if (v < 0 || v > CF_SPOT_MAX_COUNT) {
                st = cf_error_set(CF_ERR_INVALID, "%s:%ld: column '%s': expected a node count from 0 to %d, got %ld",
                                  name, rec->line, doc.header.fields[cols[k]], CF_SPOT_MAX_COUNT, v);
                break;
            }
            if (requested > 0 && v > requested) {
                st = cf_error_set(CF_ERR_INVALID, "%s:%ld: column '%s': %ld nodes held, more than the %d requested",
                                  name, rec->line, doc.header.fields[cols[k]], v, requested);
                break;
            }
            out->counts[i * (size_t)n_cols + (size_t)k] = (int)v;
        }
    }
    if (st == CF_OK)
        out->dt_h[doc.n_records - 1] = out->dt_h[doc.n_records - 2];
    cf_csv_free(&doc);
    return st;
}

/* The public traces' own format: {"metadata": {"gap_seconds": G},
 * "data": [count, ...]}, one count every G seconds. */
static cf_status parse_json(const char *text, size_t len, const char *name, int requested, cf_spot_trace *out)
{
    cJSON *doc = NULL;
    cf_status st = cf_json_read(text, len, name, &doc);
    if (st != CF_OK)
        return st;
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(doc, "metadata");
    const cJSON *gap = cJSON_GetObjectItemCaseSensitive(meta, "gap_seconds");
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(doc, "data");
    if (!cJSON_IsObject(doc))
        st = cf_error_set(CF_ERR_INVALID, "%s: expected a JSON object with 'metadata' and 'data'", name);
    else if (!cJSON_IsNumber(gap) || !(gap->valuedouble >= MIN_TICK_S) || !(gap->valuedouble <= MAX_TICK_S))
        st = cf_error_set(CF_ERR_INVALID, "%s: key 'metadata.gap_seconds': expected %g to %g seconds", name,
                          MIN_TICK_S, MAX_TICK_S);
    else if (!cJSON_IsArray(data))
        st = cf_error_set(CF_ERR_INVALID, "%s: key 'data': expected an array of node counts", name);
    else
        st = alloc_ticks(out, (size_t)cJSON_GetArraySize(data), 1, name);
    size_t i = 0;
    const cJSON *v = NULL;
    if (st == CF_OK) {
        cJSON_ArrayForEach(v, data)
        {
            double d = cJSON_IsNumber(v) ? v->valuedouble : -1;
            if (!(d >= 0 && d <= CF_SPOT_MAX_COUNT && d == (double)(long)d)) {
                st = cf_error_set(CF_ERR_INVALID, "%s: key 'data[%zu]': expected a node count from 0 to %d (an integer)",
                                  name, i, CF_SPOT_MAX_COUNT);
                break;
            }
            if (requested > 0 && d > requested) {
                st = cf_error_set(CF_ERR_INVALID, "%s: key 'data[%zu]': %.0f nodes held, more than the %d requested",
                                  name, i, d, requested);
                break;
            }
            out->counts[i] = (int)d;
            out->dt_h[i++] = gap->valuedouble / 3600.0;
        }
    }
    cJSON_Delete(doc);
    return st;
}

cf_status cf_spot_trace_parse(const char *text, size_t len, const char *name, int requested, cf_spot_trace *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", name);
    size_t skip = len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3) ? 3 : 0;
    while (skip < len && isspace((unsigned char)text[skip]))
        skip++;
    cf_status st = skip < len && (text[skip] == '{' || text[skip] == '[') ? parse_json(text, len, name, requested, out)
                                                   : parse_csv(text, len, name, requested, out);
    for (int k = 0; st == CF_OK && k < out->n_types; k++) {
        int most = 0;
        for (size_t i = 0; i < out->n_ticks; i++)
            if (out->counts[i * (size_t)out->n_types + (size_t)k] > most)
                most = out->counts[i * (size_t)out->n_types + (size_t)k];
        if (requested > 0) {
            if (most > requested)
                st = cf_error_set(CF_ERR_INVALID, "%s: %d nodes held at some tick, more than the %d requested", name,
                                  most, requested);
            out->vm[k].requested = requested;
        } else if (most == 0) {
            st = cf_error_set(CF_ERR_INVALID, "%s: no node is ever held (all counts 0)", name);
        } else {
            out->vm[k].requested = most;
        }
    }
    if (st != CF_OK)
        cf_spot_trace_free(out);
    return st;
}

cf_status cf_spot_trace_column(const cf_spot_trace *t, int k, cf_spot_trace *out)
{
    memset(out, 0, sizeof *out);
    if (k < 0 || k >= t->n_types)
        return cf_error_set(CF_ERR_INTERNAL, "%s: no count column %d", t->name, k + 1);
    cf_status st = alloc_ticks(out, t->n_ticks, 1, t->name);
    if (st != CF_OK) {
        cf_spot_trace_free(out);
        return st;
    }
    out->vm[0] = t->vm[k];
    snprintf(out->name, sizeof out->name, "%.*s (count column %d)", (int)cf_utf8_prefix(t->name, 200), t->name, k + 1);
    for (size_t i = 0; i < t->n_ticks; i++) {
        out->dt_h[i] = t->dt_h[i];
        out->counts[i] = t->counts[i * (size_t)t->n_types + (size_t)k];
    }
    out->n_ticks = t->n_ticks;
    return CF_OK;
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
    const char *name_a = cf_basename(a->name), *name_b = cf_basename(b->name);
    snprintf(out->name, sizeof out->name, "%.*s + %.*s", (int)cf_utf8_prefix(name_a, 120), name_a,
             (int)cf_utf8_prefix(name_b, 120), name_b);
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
