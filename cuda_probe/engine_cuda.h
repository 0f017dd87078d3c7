/* The CUDA engine's C interface (private to cuda_probe/; engine_cuda.cu,
 * compiled only when nvcc is found). The public entry is cf_engine_cuda()
 * in include/cloudfit/engine.h, which checks for a device first. */
#ifndef CF_PROBE_ENGINE_CUDA_H
#define CF_PROBE_ENGINE_CUDA_H
#include "cloudfit/cuda_probe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The engine's operations (no device check: cf_engine_cuda() does it). */
const cf_engine_ops *cf_cuda_engine_ops(void);

#ifdef __cplusplus
}
#endif

#endif
