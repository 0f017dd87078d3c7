/* Gradient-noise traces of real training runs (docs/model.md "Statistical efficiency"): the columns
 * of groundtruth/gns_traces/gns_traces.csv and models.csv. */
#ifndef CLOUDFIT_PROFILER_GNS_TRACES_H
#define CLOUDFIT_PROFILER_GNS_TRACES_H
#include <stddef.h>
#include "cloudfit/status.h"
#include "cloudfit/profiler/types.h"

/* Reads both CSVs; bad rows are errors naming "file:line: column 'c'". */
cf_status cf_gns_traces_load(const char *traces_path, const char *models_path, cf_gns_traces *out);
cf_status cf_gns_traces_parse(const char *traces_text, size_t traces_len, const char *traces_name,
                              const char *models_text, size_t models_len, const char *models_name,
                              cf_gns_traces *out);
void cf_gns_traces_free(cf_gns_traces *traces);

#endif
