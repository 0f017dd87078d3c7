/* The one place that knows whether this build has CUDA. */
#include "cloudfit/device.h"

#ifdef CLOUDFIT_HAVE_CUDA
#include "cuda_devices.h"

int cf_cuda_built(void) { return 1; }

cf_status cf_devices_list(cf_device_info *out, int max, int *out_count)
{
    return cf_cuda_devices_list(out, max, out_count);
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
#endif
