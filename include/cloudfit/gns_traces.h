/* Gradient-noise traces of real training runs (DESIGN.md §4.2): the columns
 * of groundtruth/gns_traces/gns_traces.csv and models.csv. */
#ifndef CLOUDFIT_GNS_TRACES_H
#define CLOUDFIT_GNS_TRACES_H
#include <stddef.h>
#include "cloudfit/status.h"

typedef struct {
    char model[64];
    int batch_size, m0, epoch;
    double progress;       /* cumulative progress in M0-iteration equivalents */
    double iteration;      /* cumulative optimizer steps of this run */
    double metric;
    double b_noise;        /* < 0 when blank */
    long line;
} cf_gns_row;

typedef struct {
    char model[64];
    int m0;
    int higher_is_better;
    char metric_name[64];
} cf_gns_model_info;

typedef struct {
    cf_gns_row *rows;          /* sorted by (model, batch, epoch) */
    size_t n_rows;
    cf_gns_model_info *models;
    size_t n_models;
} cf_gns_traces;

/* Reads both CSVs; bad rows are errors naming "file:line: column 'c'". */
cf_status cf_gns_traces_load(const char *traces_path, const char *models_path, cf_gns_traces *out);
cf_status cf_gns_traces_parse(const char *traces_text, size_t traces_len, const char *traces_name,
                              const char *models_text, size_t models_len, const char *models_name,
                              cf_gns_traces *out);
void cf_gns_traces_free(cf_gns_traces *traces);

#endif
