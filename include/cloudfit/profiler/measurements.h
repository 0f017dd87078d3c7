/* Reading measurement CSVs (profiler/measurements.c, docs/profiler.md "The measurements CSV"): rows
 * with the columns of groundtruth/pollux_aws_t4/throughput.csv become
 * cf_measurement structs (cloudfit/profiler/types.h). */
#ifndef CLOUDFIT_PROFILER_MEASUREMENTS_H
#define CLOUDFIT_PROFILER_MEASUREMENTS_H
#include <stddef.h>
#include "cloudfit/common/progress.h"
#include "cloudfit/status.h"
#include "cloudfit/profiler/types.h"

/* Reads a measurements CSV. Required columns: model, gpu, hw_gpus_per_node,
 * num_nodes, num_gpus, local_bsz, step_time_s. Bad rows are errors naming
 * "file:line: column 'c'"; so is a row whose optional global_bsz is not
 * num_gpus × local_bsz, or whose placement disagrees with its counts. */
cf_status cf_measurements_load(const char *path, cf_measurement_set *out);
cf_status cf_measurements_parse(const char *text, size_t len, const char *name, cf_measurement_set *out);
/* The same, reporting the rows read to `progress` (may be NULL) for large files. */
cf_status cf_measurements_parse_progress(const char *text, size_t len, const char *name, cf_measurement_set *out,
                                         cf_progress_count_fn progress, void *progress_ctx);
void cf_measurements_free(cf_measurement_set *set);

#endif
