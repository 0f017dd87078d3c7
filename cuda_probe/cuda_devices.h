/* C interface of the CUDA translation unit (cuda_devices.cu). */
#ifndef CLOUDFIT_CUDA_DEVICES_H
#define CLOUDFIT_CUDA_DEVICES_H
#include "cloudfit/cuda_probe.h"

#ifdef __cplusplus
extern "C" {
#endif
cf_status cf_cuda_devices_list(cf_device_info *out, int max, int *out_count);
#ifdef __cplusplus
}
#endif

#endif
