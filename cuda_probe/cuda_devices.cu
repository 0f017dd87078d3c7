// Device discovery through the CUDA runtime. Compiled only when nvcc is
// found; a machine without a driver answers cudaErrorInsufficientDriver,
// which becomes a plain message rather than a crash.
#include <cstdio>
#include <cuda_runtime.h>

#include "cuda_devices.h"

extern "C" cf_status cf_cuda_devices_list(cf_device_info *out, int max, int *out_count)
{
    *out_count = 0;
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err == cudaErrorInsufficientDriver || err == cudaErrorNoDevice) {
        cf_error_set(CF_ERR_UNAVAILABLE, "no usable CUDA GPU on this machine (%s)", cudaGetErrorString(err));
        cf_error_hint("run on a machine with an NVIDIA GPU and driver, or use the cpu/exec backends");
        return CF_ERR_UNAVAILABLE;
    }
    if (err != cudaSuccess) {
        cf_error_set(CF_ERR_UNAVAILABLE, "CUDA runtime error: %s", cudaGetErrorString(err));
        return CF_ERR_UNAVAILABLE;
    }
    for (int i = 0; i < count && i < max; i++) {
        cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, i) != cudaSuccess)
            continue;
        cf_device_info *d = &out[*out_count];
        std::snprintf(d->name, sizeof d->name, "%s", prop.name);
        d->memory_gib = (double)prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0);
        d->compute_major = prop.major;
        d->compute_minor = prop.minor;
        d->multiprocessors = prop.multiProcessorCount;
        (*out_count)++;
    }
    return CF_OK;
}
