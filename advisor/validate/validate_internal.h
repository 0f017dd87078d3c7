/* The advisor's own half of cloudfit/advisor/validate.h: functions used only inside advisor/
 * (and by its tests), kept out of the public header. */
#ifndef CLOUDFIT_ADVISOR_VALIDATE_INTERNAL_H
#define CLOUDFIT_ADVISOR_VALIDATE_INTERNAL_H
#include "cloudfit/advisor/validate.h"

/* Median, p90 (nearest rank) and max of |errors|; `errors` are relative
 * errors (pred/meas − 1). The array is not modified. */
cf_ape_stats cf_ape_summarise(const double *errors, size_t n);

/* Target = the best metric value that every batch size's run reaches
 * (direction from the model info). Exposed for tests. */
cf_status cf_gns_target(const cf_gns_traces *traces, const cf_gns_model_info *model, double *out_target);

#endif
