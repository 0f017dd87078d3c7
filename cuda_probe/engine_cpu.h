/* Inside views of the CPU engine for tests and the benchmark (private to
 * cuda_probe/). Parameters are one array: for each layer l its weight
 * [in_l, out_l] (row-major) then its bias [out_l]. */
#ifndef CF_PROBE_ENGINE_CPU_H
#define CF_PROBE_ENGINE_CPU_H
#include <stddef.h>
#include <stdint.h>
#include "cloudfit/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Shared with the CUDA mirror: the same checks and the same initial
 * weights (from `seed`) for the same config. */
cf_status cf_engine_check_config(const cf_engine_config *config);
void cf_engine_init_weights(const int *widths, int n_layers, uint64_t seed, float *params);

size_t cf_engine_cpu_n_params(const cf_engine *engine);
/* Writable: tests set weights to chosen values. */
float *cf_engine_cpu_params(cf_engine *engine);
/* The mean gradient of the last step (before the update was applied). */
const float *cf_engine_cpu_grads(const cf_engine *engine);
/* Sample indices of the last step: micro-batch i is entries
 * [i·local_batch, (i+1)·local_batch). */
const long *cf_engine_cpu_last_indices(const cf_engine *engine);

#ifdef __cplusplus
}
#endif

#endif
