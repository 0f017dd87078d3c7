/* The entry point of libcloudfit_cuda.so (cuda_module.h). */
#include "cuda_module.h"

#include "cuda_devices.h"
#include "engine_cuda.h"

__attribute__((visibility("default"))) const cf_cuda_module *cf_cuda_module_entry(void)
{
    static const cf_cuda_module module = {CF_CUDA_MODULE_ABI, cf_cuda_devices_list, cf_cuda_engine_ops,
                                          cf_error_status, cf_error_message, cf_error_hint_text};
    return &module;
}
