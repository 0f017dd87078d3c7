/* The one place that knows whether this build has CUDA. */
#include "cloudfit/cuda_probe.h"

#include <stddef.h>

#ifdef CLOUDFIT_HAVE_CUDA
#include "cuda_devices.h"
#include "engine_cuda.h"

int cf_cuda_built(void) { return 1; }

cf_status cf_devices_list(cf_device_info *out, int max, int *out_count)
{
    return cf_cuda_devices_list(out, max, out_count);
}

/* The GPU engine when a device answers; otherwise NULL with the driver's
 * reason (no driver, no device) as the last error. */
const cf_engine_ops *cf_engine_cuda(void)
{
    cf_device_info devices[1];
    int n = 0;
    if (cf_cuda_devices_list(devices, 1, &n) != CF_OK)
        return NULL;
    if (n == 0) {
        cf_error_set(CF_ERR_UNAVAILABLE, "no CUDA GPU on this machine");
        cf_error_hint("run on a machine with an NVIDIA GPU and driver, or use the cpu/exec backends");
        return NULL;
    }
    return cf_cuda_engine_ops();
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
