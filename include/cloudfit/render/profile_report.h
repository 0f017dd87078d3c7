/* The result of `cloudfit profile` (a cf_profile, cloudfit/profiler/types.h) as
 * text: the batch sweep, its fit, the memory ceiling and the noise scale (a
 * runner profile: its runs and the 2-node probe first); and as the
 * measurements CSV of docs/profiler.md, which `validate`, the trace runner and
 * inline profiles read back. `gpu_model`: the catalog's name of the device,
 * NULL when it is not a catalog GPU. The JSON is cf_profile_to_json's. */
#ifndef CLOUDFIT_RENDER_PROFILE_REPORT_H
#define CLOUDFIT_RENDER_PROFILE_REPORT_H
#include "cloudfit/common/buf.h"
#include "cloudfit/profiler/types.h"

void cf_profile_table(const cf_profile *p, const char *gpu_model, cf_buf *out);
void cf_profile_csv(const cf_profile *p, const char *gpu_model, cf_buf *out);

#endif
