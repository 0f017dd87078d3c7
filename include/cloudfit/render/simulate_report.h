/* The result of `cloudfit simulate`, computed by the library
 * (cf_simulate_run, cloudfit/usecase/simulate.h; advisor/spot/spot_simulate.c)
 * and rendered as a table or JSON. */
#ifndef CLOUDFIT_RENDER_SIMULATE_REPORT_H
#define CLOUDFIT_RENDER_SIMULATE_REPORT_H
#include <cjson/cJSON.h>

#include "cloudfit/advisor/spot_simulate.h"
#include "cloudfit/common/buf.h"
#include "cloudfit/spec.h"

typedef struct {
    const cf_spec *spec;
    const cf_spot_trace *trace;
    const cf_spot_path *path;
    const cf_simulate_setup *setup;
    const cf_simulate_result *result;
    const char *note;            /* e.g. the trace's VM is not in the catalog; "" = none */
    const char (*warnings)[1024]; /* the warnings said on stderr (JSON `warnings`) */
    int n_warnings;
} cf_simulate_report;

void cf_simulate_table(const cf_simulate_report *r, cf_buf *out);
/* Why starts of a replay do not finish, by what stopped them (the spread's
 * counts): "within 20000 h" (the hour cap), "within 1000 passes over the
 * trace (about 6500 h)" (the pass cap, which a trace under 20 h reaches
 * first), or both with their counts. `trace_h`: the trace's length. */
void cf_simulate_stop_text(const cf_spot_spread *spread, double trace_h, char *out, size_t out_size);
cJSON *cf_simulate_json(const cf_simulate_report *r);

#endif
