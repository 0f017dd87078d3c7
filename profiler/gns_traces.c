#include "cloudfit/profiler/gns_traces.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/csvread.h"
#include "cloudfit/common/fileio.h"

static int row_order(const void *pa, const void *pb)
{
    const cf_gns_row *a = pa, *b = pb;
    int c = strcmp(a->model, b->model);
    if (c)
        return c;
    if (a->batch_size != b->batch_size)
        return a->batch_size < b->batch_size ? -1 : 1;
    if (a->epoch != b->epoch)
        return a->epoch < b->epoch ? -1 : 1;
    return (a->line > b->line) - (a->line < b->line); /* qsort is not stable: the file's order decides */
}

/* One run (model, batch) is one row per epoch, its progress and iteration
 * growing with the epoch: a second row of an epoch (a file concatenated
 * or logged twice) made the order of the two undefined and moved every
 * prediction, and a progress that fell was left out of the noise trace
 * without a word. Rows are sorted; the later of two is named. */
static cf_status runs_are_ordered(const cf_gns_traces *t, const char *name)
{
    for (size_t i = 1; i < t->n_rows; i++) {
        const cf_gns_row *a = &t->rows[i - 1], *b = &t->rows[i];
        if (strcmp(a->model, b->model) || a->batch_size != b->batch_size)
            continue;
        if (a->epoch == b->epoch)
            return cf_error_set(CF_ERR_INVALID, "%s:%ld: model '%s' batch %d: epoch %d is given twice (first at line %ld)",
                                name, b->line, b->model, b->batch_size, b->epoch, a->line);
        const char *column = b->progress <= a->progress ? "progress" : b->iteration <= a->iteration ? "iteration" : NULL;
        if (column)
            return cf_error_set(CF_ERR_INVALID,
                                "%s:%ld: column '%s': expected more than %g (epoch %d of the same run, line %ld), got %g",
                                name, b->line, column, column[0] == 'p' ? a->progress : a->iteration, a->epoch, a->line,
                                column[0] == 'p' ? b->progress : b->iteration);
    }
    return CF_OK;
}

static cf_status need_positive(const cf_csv_doc *doc, const cf_csv_record *rec, const char *column, double v)
{
    if (v > 0)
        return CF_OK;
    return cf_error_set(CF_ERR_INVALID, "%s:%ld: column '%s': expected a positive number, got %g", doc->name,
                        rec->line, column, v);
}

static cf_status parse_traces(const char *text, size_t len, const char *name, cf_gns_traces *out)
{
    static const char *const required[] = {"model", "batch_size", "m0", "epoch", "progress", "iteration", "metric",
                                           "b_noise"};
    enum { MODEL, BATCH, M0, EPOCH, PROGRESS, ITERATION, METRIC, BNOISE };
    cf_csv_doc doc;
    cf_status st = cf_csv_parse(text, len, name, &doc);
    if (st != CF_OK)
        return st;
    int cols[8];
    for (int i = 0; i < 8 && st == CF_OK; i++)
        st = cf_csv_require_column(&doc, required[i], &cols[i]);
    if (st == CF_OK && doc.n_records == 0)
        st = cf_error_set(CF_ERR_INVALID, "%s: no rows after the header", name);
    if (st == CF_OK && !(out->rows = calloc(doc.n_records, sizeof *out->rows)))
        st = cf_error_set(CF_ERR_NOMEM, "out of memory reading '%s'", name);
    for (size_t i = 0; st == CF_OK && i < doc.n_records; i++) {
        const cf_csv_record *rec = &doc.records[i];
        cf_gns_row *r = &out->rows[i];
        long batch = 0, m0 = 0, epoch = 0;
        r->line = rec->line;
        if ((st = cf_csv_text(&doc, rec, cols[MODEL], r->model, sizeof r->model)) != CF_OK || /* not cut: merged */
            (st = cf_csv_int(&doc, rec, cols[BATCH], 1, 0, &batch)) != CF_OK ||
            (st = cf_csv_int(&doc, rec, cols[M0], 1, 0, &m0)) != CF_OK ||
            (st = cf_csv_int(&doc, rec, cols[EPOCH], 1, 0, &epoch)) != CF_OK ||
            (st = cf_csv_double(&doc, rec, cols[PROGRESS], 1, 0, &r->progress)) != CF_OK ||
            (st = cf_csv_double(&doc, rec, cols[ITERATION], 1, 0, &r->iteration)) != CF_OK ||
            (st = cf_csv_double(&doc, rec, cols[METRIC], 1, 0, &r->metric)) != CF_OK ||
            (st = cf_csv_double(&doc, rec, cols[BNOISE], 0, -1, &r->b_noise)) != CF_OK)
            break;
        if (!r->model[0])
            st = cf_error_set(CF_ERR_INVALID, "%s:%ld: column 'model': expected a name, got an empty field", name,
                              rec->line);
        else if ((st = need_positive(&doc, rec, "batch_size", (double)batch)) == CF_OK &&
                 (st = need_positive(&doc, rec, "m0", (double)m0)) == CF_OK &&
                 (st = need_positive(&doc, rec, "epoch", (double)epoch)) == CF_OK &&
                 (st = need_positive(&doc, rec, "progress", r->progress)) == CF_OK &&
                 (st = need_positive(&doc, rec, "iteration", r->iteration)) == CF_OK &&
                 cf_csv_field(rec, cols[BNOISE])[0])
            st = need_positive(&doc, rec, "b_noise", r->b_noise); /* -1 is the "missing" marker, never a value */
        r->batch_size = (int)batch;
        r->m0 = (int)m0;
        r->epoch = (int)epoch;
        out->n_rows++;
    }
    cf_csv_free(&doc);
    if (st == CF_OK) {
        qsort(out->rows, out->n_rows, sizeof *out->rows, row_order);
        st = runs_are_ordered(out, name);
    }
    return st;
}

static cf_status parse_models(const char *text, size_t len, const char *name, cf_gns_traces *out)
{
    cf_csv_doc doc;
    cf_status st = cf_csv_parse(text, len, name, &doc);
    if (st != CF_OK)
        return st;
    int c_model, c_m0, c_metric, c_better;
    if ((st = cf_csv_require_column(&doc, "model", &c_model)) != CF_OK ||
        (st = cf_csv_require_column(&doc, "m0", &c_m0)) != CF_OK ||
        (st = cf_csv_require_column(&doc, "metric_name", &c_metric)) != CF_OK ||
        (st = cf_csv_require_column(&doc, "metric_better", &c_better)) != CF_OK) {
        cf_csv_free(&doc);
        return st;
    }
    if (doc.n_records == 0) {
        cf_csv_free(&doc);
        return cf_error_set(CF_ERR_INVALID, "%s: no models after the header", name);
    }
    out->models = calloc(doc.n_records, sizeof *out->models);
    if (!out->models) {
        cf_csv_free(&doc);
        return cf_error_set(CF_ERR_NOMEM, "out of memory reading '%s'", name);
    }
    for (size_t i = 0; st == CF_OK && i < doc.n_records; i++) {
        const cf_csv_record *rec = &doc.records[i];
        cf_gns_model_info *m = &out->models[i];
        long m0 = 0;
        const char *better = cf_csv_field(rec, c_better);
        if ((st = cf_csv_text(&doc, rec, c_model, m->model, sizeof m->model)) != CF_OK ||
            (st = cf_csv_text(&doc, rec, c_metric, m->metric_name, sizeof m->metric_name)) != CF_OK ||
            (st = cf_csv_int(&doc, rec, c_m0, 1, 0, &m0)) != CF_OK)
            break;
        if (m0 < 1)
            st = cf_error_set(CF_ERR_INVALID, "%s:%ld: column 'm0': expected a positive integer, got %ld", name,
                              rec->line, m0);
        else if (strcmp(better, "higher") && strcmp(better, "lower"))
            st = cf_error_set(CF_ERR_INVALID, "%s:%ld: column 'metric_better': expected \"higher\" or \"lower\", got '%s'",
                              name, rec->line, better);
        for (size_t j = 0; st == CF_OK && j < out->n_models; j++)
            if (strcmp(out->models[j].model, m->model) == 0)
                st = cf_error_set(CF_ERR_INVALID, "%s:%ld: model '%s' is listed twice (first at line %ld)", name,
                                  rec->line, m->model, out->models[j].line);
        m->m0 = (int)m0;
        m->higher_is_better = strcmp(better, "higher") == 0;
        m->line = rec->line;
        out->n_models++;
    }
    cf_csv_free(&doc);
    return st;
}

/* Each trace row's m0 is its model's in the models file (the first row,
 * by line, that differs is named). Rows of a model the file does not list
 * are left out, counted with the first of them (a models file may name a
 * subset: the report says what was left out, where a misspelt model's
 * rows were left out without a word). */
static cf_status m0_agrees(cf_gns_traces *t)
{
    const cf_gns_row *bad = NULL;
    const cf_gns_model_info *its = NULL;
    for (size_t i = 0; i < t->n_rows; i++) {
        const cf_gns_model_info *listed = NULL;
        for (size_t m = 0; m < t->n_models && !listed; m++)
            if (strcmp(t->rows[i].model, t->models[m].model) == 0)
                listed = &t->models[m];
        if (!listed) {
            if (!t->n_unlisted_rows++ || t->rows[i].line < t->first_unlisted_line) {
                snprintf(t->first_unlisted, sizeof t->first_unlisted, "%s", t->rows[i].model);
                t->first_unlisted_line = t->rows[i].line;
            }
        } else if (t->rows[i].m0 != listed->m0 && (!bad || t->rows[i].line < bad->line)) {
            bad = &t->rows[i];
            its = listed;
        }
    }
    if (!bad)
        return CF_OK;
    return cf_error_set(CF_ERR_INVALID, "%s:%ld: column 'm0': %d, but %s:%ld gives model '%s' m0 %d", t->traces_name,
                        bad->line, bad->m0, t->models_name, its->line, its->model, its->m0);
}

/* Progress is counted in M0 steps (docs/model.md "Statistical efficiency":
 * one step at batch M makes r = (B + M0)·M / ((B + M)·M0) of them, and r
 * lies between 1 and M/M0 for any noise scale B ≥ 0). So the M0 run's
 * progress is its iteration count, and a run at batch M has made between
 * 1 and M/M0 times its iterations. The prediction reads the M0 run's
 * progress as M0 steps: a progress in another unit (a fraction of
 * training, epochs) was taken without a word and predicted 0 iterations.
 * Tolerance 5 %: the shipped Pollux traces are within 0.3 % of it (the
 * M0 runs' progress/iteration 1.0000–1.0026; the larger runs' at most
 * 0.9999·M/M0 and at least 1.3), while a progress in another unit is off
 * by a factor, far more than 5 %.
 * The first row by line that is outside is named. */
#define CF_GNS_PROGRESS_TOLERANCE 0.05

static cf_status progress_counts_m0_steps(const cf_gns_traces *t)
{
    const cf_gns_row *bad = NULL;
    for (size_t i = 0; i < t->n_rows; i++) {
        const cf_gns_row *r = &t->rows[i];
        double k = (double)r->batch_size / r->m0, q = r->progress / r->iteration;
        double lo = k < 1 ? k : 1, hi = k > 1 ? k : 1;
        if ((q > hi * (1 + CF_GNS_PROGRESS_TOLERANCE) || q < lo / (1 + CF_GNS_PROGRESS_TOLERANCE)) &&
            (!bad || r->line < bad->line))
            bad = r;
    }
    if (!bad)
        return CF_OK;
    if (bad->batch_size == bad->m0)
        cf_error_set(CF_ERR_INVALID,
                     "%s:%ld: column 'progress': %g at iteration %g of the M0 run (batch %d); progress is counted in "
                     "M0 steps, so the M0 run's progress should equal its iterations",
                     t->traces_name, bad->line, bad->progress, bad->iteration, bad->batch_size);
    else {
        double k = (double)bad->batch_size / bad->m0, lo = k < 1 ? k : 1, hi = k > 1 ? k : 1;
        cf_error_set(CF_ERR_INVALID,
                     "%s:%ld: column 'progress': %g at iteration %g of the run at batch %d (M0 %d); progress is "
                     "counted in M0 steps, of which one step at batch %d makes between %g and %g, so it should be "
                     "between %g and %g",
                     t->traces_name, bad->line, bad->progress, bad->iteration, bad->batch_size, bad->m0,
                     bad->batch_size, lo, hi, bad->iteration * lo, bad->iteration * hi);
    }
    cf_error_hint("progress counts M0 steps: the M0 run's is its iteration; a fraction f of training is f times the "
                  "M0 run's iterations over the whole training (docs/model.md \"The validate command\")");
    return CF_ERR_INVALID;
}

cf_status cf_gns_traces_parse(const char *traces_text, size_t traces_len, const char *traces_name,
                              const char *models_text, size_t models_len, const char *models_name,
                              cf_gns_traces *out)
{
    memset(out, 0, sizeof *out);
    cf_status st = CF_OK;
    if (!(out->traces_name = strdup(traces_name)) || !(out->models_name = strdup(models_name)))
        st = cf_error_set(CF_ERR_NOMEM, "out of memory");
    if (st == CF_OK)
        st = parse_traces(traces_text, traces_len, traces_name, out);
    if (st == CF_OK)
        st = parse_models(models_text, models_len, models_name, out);
    if (st == CF_OK)
        st = m0_agrees(out);
    if (st == CF_OK)
        st = progress_counts_m0_steps(out);
    if (st != CF_OK)
        cf_gns_traces_free(out);
    return st;
}

cf_status cf_gns_traces_load(const char *traces_path, const char *models_path, cf_gns_traces *out)
{
    char *t = NULL, *m = NULL;
    size_t tl = 0, ml = 0;
    memset(out, 0, sizeof *out);
    cf_status st = cf_read_file(traces_path, &t, &tl);
    if (st == CF_OK)
        st = cf_read_file(models_path, &m, &ml);
    if (st == CF_OK)
        st = cf_gns_traces_parse(t, tl, traces_path, m, ml, models_path, out);
    free(t);
    free(m);
    return st;
}

void cf_gns_traces_free(cf_gns_traces *traces)
{
    free(traces->rows);
    free(traces->models);
    free(traces->traces_name);
    free(traces->models_name);
    memset(traces, 0, sizeof *traces);
}
