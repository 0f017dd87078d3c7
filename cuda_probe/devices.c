/* The one place that knows whether this build has CUDA. */
#include "cloudfit/device.h"
#include "cloudfit/engine.h"

#include <stddef.h>

#ifdef CLOUDFIT_HAVE_CUDA
#include "cuda_devices.h"

int cf_cuda_built(void) { return 1; }

cf_status cf_devices_list(cf_device_info *out, int max, int *out_count)
{
    return cf_cuda_devices_list(out, max, out_count);
}

/* This build has the toolkit and device discovery, but the GPU training
 * engine (the cuBLAS mirror of the CPU twin) is not written yet: say so
 * rather than pretend (docs/engine.md). */
const cf_engine_ops *cf_engine_cuda(void)
{
    cf_error_set(CF_ERR_UNAVAILABLE,
                 "the GPU training engine is not part of this build (it has CUDA device discovery only)");
    cf_error_hint("use --backend cpu (the CPU engine) or --backend exec with your own training script");
    return NULL;
}
#else
int cf_cuda_built(void) { return 0; }

cf_status cf_devices_list(cf_device_info *out, int max, int *out_count)
{
    (void)out;
    (void)max;
    *out_count = 0;
    cf_error_set(CF_ERR_UNAVAILABLE, "this cloudfit was built without CUDA");
    cf_error_hint("install the CUDA toolkit and rebuild with -DCLOUDFIT_CUDA=ON");
    return CF_ERR_UNAVAILABLE;
}

const cf_engine_ops *cf_engine_cuda(void)
{
    cf_error_set(CF_ERR_UNAVAILABLE, "this cloudfit was built without CUDA, so it has no GPU training engine");
    cf_error_hint("use --backend cpu (the CPU engine) or --backend exec with your own training script");
    return NULL;
}
#endif
