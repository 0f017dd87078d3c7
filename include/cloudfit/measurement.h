/* Measured step times (DESIGN.md §4.2): one row of a measurements CSV with
 * the columns of groundtruth/pollux_aws_t4/throughput.csv. */
#ifndef CLOUDFIT_MEASUREMENT_H
#define CLOUDFIT_MEASUREMENT_H
#include <stddef.h>
#include "cloudfit/status.h"

typedef struct {
    char model[64];
    char gpu[32];
    char profile[32];
    char placement[64];      /* one digit per node: GPUs used on it; "" when unknown */
    int hw_gpus_per_node;    /* GPUs installed per node */
    int num_nodes;
    int num_gpus;
    int local_bsz;           /* per-GPU batch */
    double step_time_s;
    double sync_time_s;      /* < 0 when not recorded */
    long line;               /* line in the source file, for messages */
} cf_measurement;

typedef struct {
    cf_measurement *rows;
    size_t n_rows;
} cf_measurement_set;

/* Reads a measurements CSV. Required columns: model, gpu, hw_gpus_per_node,
 * num_nodes, num_gpus, local_bsz, step_time_s. Bad rows are errors naming
 * "file:line: column 'c'". */
cf_status cf_measurements_load(const char *path, cf_measurement_set *out);
cf_status cf_measurements_parse(const char *text, size_t len, const char *name, cf_measurement_set *out);
void cf_measurements_free(cf_measurement_set *set);

#endif
