#include "cloudfit/profiler/measurements.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/csvread.h"
#include "cloudfit/common/escape.h"
#include "cloudfit/common/fileio.h"

/* The largest count a column takes: batches up to 2^30 samples per GPU
 * (token-level batches reach 2^24 and beyond), node and GPU counts alike. */
#define MAX_COUNT (1L << 30)
#define CF_MEASURED_STEP_MAX_S 1e6 /* seconds per step: the bound of compute_s.beta in the spec */
#define CF_MEASURED_STEP_MIN_S 1e-9 /* a nanosecond: the exec protocol's bound of a probe's time_s */

static cf_status positive_int(const cf_csv_doc *doc, const cf_csv_record *rec, int col, int *out)
{
    long value = 0;
    cf_status st = cf_csv_int(doc, rec, col, 1, 0, &value);
    if (st != CF_OK)
        return st;
    if (value < 1)
        return cf_error_set(CF_ERR_INVALID, "%s:%ld: column '%s': expected a positive integer, got %ld", doc->name,
                            rec->line, cf_csv_field(&doc->header, col), value);
    if (value > MAX_COUNT)
        return cf_error_set(CF_ERR_INVALID, "%s:%ld: column '%s': expected at most %ld, got %ld", doc->name,
                            rec->line, cf_csv_field(&doc->header, col), MAX_COUNT, value);
    *out = (int)value;
    return CF_OK;
}

/* The optional placement: one digit per node, the GPUs the run used on it
 * ("11": 2 nodes × 1 GPU; "1124"). The model takes its busiest digit as the
 * row's GPUs per node and `validate --with-2node-probe` picks the probe by
 * it, so it must agree with the counts: as many digits as num_nodes, each
 * from 1 to hw_gpus_per_node, summing to num_gpus ("44" on a 2-GPU row was
 * predicted as 2 × 4 GPUs). A placement too long to keep whose nodes all
 * run the same count is stored empty: the counts say the same. */
static cf_status parse_placement(const cf_csv_doc *doc, const cf_csv_record *rec, int col, cf_measurement *row)
{
    const char *text = cf_csv_field(rec, col);
    size_t len = strlen(text);
    row->placement[0] = '\0';
    if (len == 0)
        return CF_OK;
    long sum = 0;
    int most = 0, uniform = 1;
    for (size_t i = 0; i < len; i++) {
        if (text[i] < '1' || text[i] > '9')
            return cf_error_set(CF_ERR_INVALID, "%s:%ld: column 'placement': expected one digit from 1 to 9 per node "
                                "(the GPUs the run used on it, e.g. 11 for 2 nodes × 1 GPU), got '%.*s'%s",
                                doc->name, rec->line, (int)cf_utf8_prefix(text, 40), text, len > 40 ? "…" : "");
        int g = text[i] - '0';
        sum += g;
        most = g > most ? g : most;
        uniform &= g == text[0] - '0';
    }
    if ((long)len != row->num_nodes || sum != row->num_gpus || most > row->hw_gpus_per_node)
        return cf_error_set(CF_ERR_INVALID, "%s:%ld: column 'placement': '%.40s%s' (%zu node(s), %ld GPU(s), at most %d "
                            "on a node) disagrees with num_nodes %d, num_gpus %d and hw_gpus_per_node %d", doc->name,
                            rec->line, text, len > 40 ? "…" : "", len, sum, most, row->num_nodes, row->num_gpus,
                            row->hw_gpus_per_node);
    if (len < sizeof row->placement)
        memcpy(row->placement, text, len + 1);
    else if (!uniform)
        return cf_error_set(CF_ERR_INVALID, "%s:%ld: column 'placement': an uneven placement of more than %zu nodes "
                            "is not supported", doc->name, rec->line, sizeof row->placement - 1);
    return CF_OK;
}

static cf_status parse_row(const cf_csv_doc *doc, const cf_csv_record *rec, const int *cols,
                           cf_measurement *row)
{
    enum { MODEL, GPU, HW, NODES, GPUS, BSZ, STEP, SYNC, PROFILE, PLACEMENT, PRECISION, GLOBAL_BSZ };
    memset(row, 0, sizeof *row);
    row->line = rec->line;
    /* Names too long to keep are refused, as the gpu column's: cut, two
     * models or profiles that share their first bytes became one group
     * (their rows fitted together, at exit 0), and a name was cut inside a
     * UTF-8 character. A spec's name (64 bytes, what `profile --csv` writes
     * as the model) fits. */
    cf_status name_st;
    if ((name_st = cf_csv_text(doc, rec, cols[MODEL], row->model, sizeof row->model)) != CF_OK ||
        (name_st = cf_csv_text(doc, rec, cols[PROFILE], row->profile, sizeof row->profile)) != CF_OK ||
        (name_st = cf_csv_text(doc, rec, cols[GPU], row->gpu, sizeof row->gpu)) != CF_OK)
        return name_st;
    if (!row->gpu[0])
        return cf_error_set(CF_ERR_INVALID, "%s:%ld: column 'gpu': expected a GPU model, got an empty field",
                            doc->name, rec->line);
    if (cf_has_controls(row->gpu)) { /* "T\xff4" was fitted as T4's measurements: its bytes shown, escaped */
        char shown[6 * sizeof row->gpu];
        cf_escape_into(row->gpu, shown, sizeof shown);
        return cf_error_set(CF_ERR_INVALID, "%s:%ld: column 'gpu': expected a GPU model name (printable UTF-8 text), "
                            "got '%s'", doc->name, rec->line, shown);
    }
    const char *precision = cf_csv_field(rec, cols[PRECISION]);
    if (precision[0]) {
        if (!cf_precision_parse(precision, &row->precision))
            return cf_error_set(CF_ERR_INVALID,
                                "%s:%ld: column 'precision': expected fp32, tf32, fp16, bf16 or amp, got '%.*s'",
                                doc->name, rec->line, (int)cf_utf8_prefix(precision, 40), precision);
        row->has_precision = 1;
    }
    cf_status st;
    if ((st = positive_int(doc, rec, cols[HW], &row->hw_gpus_per_node)) != CF_OK ||
        (st = positive_int(doc, rec, cols[NODES], &row->num_nodes)) != CF_OK ||
        (st = positive_int(doc, rec, cols[GPUS], &row->num_gpus)) != CF_OK ||
        (st = positive_int(doc, rec, cols[BSZ], &row->local_bsz)) != CF_OK ||
        (st = cf_csv_double(doc, rec, cols[STEP], 1, 0, &row->step_time_s)) != CF_OK ||
        (st = cf_csv_double(doc, rec, cols[SYNC], 0, -1, &row->sync_time_s)) != CF_OK)
        return st;
    /* bounded as the spec bounds compute_s.beta: a step of 1e308 s gave
     * hours of 2e301 at exit 0, or "does the model fit in any GPU's memory?";
     * and below as a probe's time_s: 1e-300 s was scored as a 9e298 %
     * error (a 300-digit percentage in validate's table, at exit 0) */
    if (!(row->step_time_s >= CF_MEASURED_STEP_MIN_S && row->step_time_s <= CF_MEASURED_STEP_MAX_S))
        return cf_error_set(CF_ERR_INVALID, "%s:%ld: column 'step_time_s': expected a number from %g to %g (seconds "
                            "per step), got %g", doc->name, rec->line, CF_MEASURED_STEP_MIN_S, CF_MEASURED_STEP_MAX_S,
                            row->step_time_s);
    if (cf_csv_field(rec, cols[SYNC])[0] && !(row->sync_time_s >= 0 && row->sync_time_s <= CF_MEASURED_STEP_MAX_S))
        return cf_error_set(CF_ERR_INVALID, "%s:%ld: column 'sync_time_s': expected a number from 0 to %g, got %g",
                            doc->name, rec->line, CF_MEASURED_STEP_MAX_S, row->sync_time_s); /* empty: -1, "not measured" */
    if (row->num_gpus < row->num_nodes || (long)row->num_gpus > (long)row->num_nodes * row->hw_gpus_per_node)
        return cf_error_set(CF_ERR_INVALID,
                            "%s:%ld: num_gpus %d does not fit %d node(s) of %d GPU(s) (hw_gpus_per_node)",
                            doc->name, rec->line, row->num_gpus, row->num_nodes, row->hw_gpus_per_node);
    /* global_bsz is derived (the format has no gradient accumulation): a
     * row whose global batch is not num_gpus × local_bsz contradicts
     * itself, and one of the counts the model fits is wrong (a row of 8
     * GPUs written as 2 was fitted as 2 GPUs' step). Empty: not given. */
    double global_bsz = 0;
    if ((st = cf_csv_double(doc, rec, cols[GLOBAL_BSZ], 0, 0, &global_bsz)) != CF_OK)
        return st;
    double product = (double)row->num_gpus * row->local_bsz;
    if (cf_csv_field(rec, cols[GLOBAL_BSZ])[0] && global_bsz != product) {
        cf_error_set(CF_ERR_INVALID, "%s:%ld: column 'global_bsz': %.15g is not num_gpus × local_bsz (%d × %d = %.15g)",
                     doc->name, rec->line, global_bsz, row->num_gpus, row->local_bsz, product);
        cf_error_hint("global_bsz is derived, the row's GPUs × its per-GPU batch (no gradient accumulation in this "
                      "format): correct num_gpus or local_bsz if the row ran another shape, or leave global_bsz empty");
        return CF_ERR_INVALID;
    }
    return parse_placement(doc, rec, cols[PLACEMENT], row);
}

cf_status cf_measurements_parse(const char *text, size_t len, const char *name, cf_measurement_set *out)
{
    return cf_measurements_parse_progress(text, len, name, out, NULL, NULL);
}

cf_status cf_measurements_parse_progress(const char *text, size_t len, const char *name, cf_measurement_set *out,
                                         cf_progress_count_fn progress, void *progress_ctx)
{
    static const char *const required[] = {"model", "gpu", "hw_gpus_per_node", "num_nodes",
                                           "num_gpus", "local_bsz", "step_time_s"};
    memset(out, 0, sizeof *out);
    cf_csv_doc doc;
    cf_status st = cf_csv_parse(text, len, name, &doc);
    if (st != CF_OK)
        return st;
    int cols[12];
    for (size_t i = 0; i < 7; i++)
        if ((st = cf_csv_require_column(&doc, required[i], &cols[i])) != CF_OK)
            goto done;
    cols[7] = cf_csv_column(&doc, "sync_time_s");
    cols[8] = cf_csv_column(&doc, "profile");
    cols[9] = cf_csv_column(&doc, "placement");
    cols[10] = cf_csv_column(&doc, "precision");
    cols[11] = cf_csv_column(&doc, "global_bsz");
    if (doc.n_records == 0) {
        st = cf_error_set(CF_ERR_INVALID, "%s: no measurement rows after the header", name);
        goto done;
    }
    out->rows = calloc(doc.n_records, sizeof *out->rows);
    if (!out->rows) {
        st = cf_error_set(CF_ERR_NOMEM, "out of memory reading '%s'", name);
        goto done;
    }
    for (size_t i = 0; i < doc.n_records; i++) {
        if (i % 8192 == 0 || i + 1 == doc.n_records)
            cf_progress_report(progress, progress_ctx, (double)(i + 1 == doc.n_records ? i + 1 : i),
                               (double)doc.n_records, "rows", name);
        if ((st = parse_row(&doc, &doc.records[i], cols, &out->rows[i])) != CF_OK) {
            cf_measurements_free(out);
            goto done;
        }
        out->n_rows++;
    }
done:
    cf_csv_free(&doc);
    return st;
}

cf_status cf_measurements_load(const char *path, cf_measurement_set *out)
{
    char *text = NULL;
    size_t len = 0;
    memset(out, 0, sizeof *out);
    cf_status st = cf_read_file(path, &text, &len);
    if (st != CF_OK)
        return st;
    st = cf_measurements_parse(text, len, path, out);
    free(text);
    return st;
}

void cf_measurements_free(cf_measurement_set *set)
{
    free(set->rows);
    set->rows = NULL;
    set->n_rows = 0;
}
