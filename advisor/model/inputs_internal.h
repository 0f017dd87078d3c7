/* The advisor's own half of cloudfit/advisor/inputs.h: functions used only inside advisor/
 * (and by its tests), kept out of the public header. */
#ifndef CLOUDFIT_ADVISOR_INPUTS_INTERNAL_H
#define CLOUDFIT_ADVISOR_INPUTS_INTERNAL_H
#include "cloudfit/advisor/inputs.h"

/* Fits one GPU type's parameters to measured rows (cf_perf_fit, exactly
 * what `cloudfit validate` scores): the inter-node bandwidth only from ≥ 2
 * multi-node rows (else 0: each VM's default); `reference_network_gbps` is
 * the nominal NIC those rows ran on. */
cf_status cf_inputs_fit_rows(const cf_job *job, const cf_gpu *gpu, const cf_measurement *rows, size_t n,
                             double reference_network_gbps, cf_gpu_perf *perf, cf_perf_fit_report *rep);

/* The parameters of `gpu_model` in `in`, or NULL. */
const cf_gpu_perf *cf_inputs_perf(const cf_inputs *in, const char *gpu_model);

#endif
