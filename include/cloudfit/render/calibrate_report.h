/* The result of `cloudfit simulate SPEC --calibrate DIR` (computed by
 * cf_simulate_calibrate_run, cloudfit/usecase/simulate.h, through
 * advisor/spot/spot_calibrate.c), as a table or
 * JSON: per trace and job length the model's quantiles against the
 * replays, and the pooled shares beside their bands (docs/spot.md). */
#ifndef CLOUDFIT_RENDER_CALIBRATE_REPORT_H
#define CLOUDFIT_RENDER_CALIBRATE_REPORT_H
#include <cjson/cJSON.h>

#include "cloudfit/advisor/spot_calibrate.h"
#include "cloudfit/advisor/spot_table.h"
#include "cloudfit/common/buf.h"
#include "cloudfit/spec.h"

typedef struct {
    const cf_spec *spec;
    const char *traces_dir;
    const char *fit_dir;                  /* NULL: the shipped table */
    const cf_calibrate_trace *traces;
    const cf_spot_lookup *rows;           /* per trace: the model row used */
    size_t n_traces;
    const cf_calibrate_result *result;
    double confidence;
} cf_calibrate_report;

void cf_calibrate_table(const cf_calibrate_report *r, cf_buf *out);
cJSON *cf_calibrate_json(const cf_calibrate_report *r);

#endif
