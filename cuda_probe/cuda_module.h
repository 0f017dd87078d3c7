/* The GPU engine as a shared module (libcloudfit_cuda.so), loaded with
 * dlopen by cuda_probe/loader.c only when a command asks for a GPU
 * (`profile --backend cuda`, `version`), so that every other command never
 * loads the CUDA runtime or cuBLAS (ggml-style backend loading). Private to
 * cuda_probe/.
 *
 * The module is self-contained: it carries its own copy of the CPU twin's
 * shared helpers and of the error state, so the loader copies the
 * module's last error into the host's after each call. */
#ifndef CF_PROBE_CUDA_MODULE_H
#define CF_PROBE_CUDA_MODULE_H
#include "cloudfit/cuda_probe.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CF_CUDA_MODULE_ABI 1
#define CF_CUDA_MODULE_ENTRY "cf_cuda_module_entry"

typedef struct {
    int abi;                                     /* CF_CUDA_MODULE_ABI */
    cf_status (*devices_list)(cf_device_info *out, int max, int *out_count);
    const cf_engine_ops *(*engine_ops)(void);    /* no device check */
    cf_status (*error_status)(void);
    const char *(*error_message)(void);
    const char *(*error_hint)(void);
} cf_cuda_module;

/* The module's one exported symbol. */
const cf_cuda_module *cf_cuda_module_entry(void);

#ifdef __cplusplus
}
#endif

#endif
