/* The one place that knows whether this build has CUDA. With CUDA, the GPU
 * engine and device discovery live in a shared module loaded on first use
 * (cuda_module.h): a command that never asks for a GPU never loads the CUDA
 * runtime. The module is looked for in $CLOUDFIT_CUDA_MODULE, next to the
 * executable, in ../lib/cloudfit/ from it (the installed layout), and in
 * the build tree it was built in. */
#include "cloudfit/cuda_probe.h"

#include <stddef.h>

#ifdef CLOUDFIT_HAVE_CUDA
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_module.h"

#define MODULE_FILE "libcloudfit_cuda.so"

static const cf_cuda_module *module;
static char module_error[600];

int cf_cuda_built(void) { return 1; }

/* Directory of the running executable, with a trailing '/'; "" if unknown. */
static void exe_dir(char *out, size_t n)
{
    char path[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", path, sizeof path - 1);
    out[0] = '\0';
    if (len <= 0)
        return;
    path[len] = '\0';
    char *slash = strrchr(path, '/');
    if (slash) {
        slash[1] = '\0';
        snprintf(out, n, "%s", path);
    }
}

static const cf_cuda_module *try_load(const char *path)
{
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(module_error, sizeof module_error, "%s", dlerror());
        return NULL;
    }
    const cf_cuda_module *(*entry)(void) = NULL;
    *(void **)&entry = dlsym(handle, CF_CUDA_MODULE_ENTRY);
    const cf_cuda_module *m = entry ? entry() : NULL;
    if (!m || m->abi != CF_CUDA_MODULE_ABI) {
        snprintf(module_error, sizeof module_error, "%.500s: not a cloudfit GPU engine module of this version", path);
        dlclose(handle);
        return NULL;
    }
    return m; /* kept loaded for the life of the process */
}

static const cf_cuda_module *load(void)
{
    if (module)
        return module;
    char dir[PATH_MAX], path[PATH_MAX + 64];
    exe_dir(dir, sizeof dir);
    const char *env = getenv("CLOUDFIT_CUDA_MODULE");
    const char *candidates[4];
    int n = 0;
    char next_to_exe[PATH_MAX + 64], installed[PATH_MAX + 64];
    if (env && *env)
        candidates[n++] = env;
    if (dir[0]) {
        snprintf(next_to_exe, sizeof next_to_exe, "%s%s", dir, MODULE_FILE);
        snprintf(installed, sizeof installed, "%s../lib/cloudfit/%s", dir, MODULE_FILE);
        candidates[n++] = next_to_exe;
        candidates[n++] = installed;
    }
#ifdef CF_CUDA_MODULE_BUILD_PATH
    candidates[n++] = CF_CUDA_MODULE_BUILD_PATH;
#endif
    for (int i = 0; i < n && !module; i++) {
        if (i > 0 && candidates[i] != env && access(candidates[i], F_OK) != 0)
            continue;
        snprintf(path, sizeof path, "%s", candidates[i]);
        module = try_load(path);
        if (env && candidates[i] == env && !module)
            break; /* an explicit module that does not load is the answer */
    }
    if (!module) {
        cf_error_set(CF_ERR_UNAVAILABLE, "the GPU engine module (%s) could not be loaded: %s", MODULE_FILE,
                     module_error[0] ? module_error : "not found next to the executable or in ../lib/cloudfit");
        cf_error_hint("set CLOUDFIT_CUDA_MODULE to its path, or use --backend cpu (the CPU engine) or --backend exec");
    }
    return module;
}

/* The module's last error as the host's. */
static cf_status carry_error(cf_status st)
{
    if (st == CF_OK)
        return st;
    cf_error_set(module->error_status() != CF_OK ? module->error_status() : st, "%s", module->error_message());
    if (module->error_hint()[0])
        cf_error_hint("%s", module->error_hint());
    return st;
}

cf_status cf_devices_list(cf_device_info *out, int max, int *out_count)
{
    *out_count = 0;
    if (!load())
        return CF_ERR_UNAVAILABLE;
    return carry_error(module->devices_list(out, max, out_count));
}

/* ---- engine ops that carry the module's errors over ------------------------------- */

static const cf_engine_ops *inner(void) { return module->engine_ops(); }

static cf_status wrap_create(const cf_engine_config *config, cf_engine **out)
{
    return carry_error(inner()->create(config, out));
}

static cf_status wrap_describe(cf_engine *engine, cf_device_info *out)
{
    return carry_error(inner()->describe(engine, out));
}

static cf_status wrap_train_step(cf_engine *engine, int local_batch, int micro_batches, cf_engine_step *out)
{
    return carry_error(inner()->train_step(engine, local_batch, micro_batches, out));
}

static void wrap_destroy(cf_engine *engine) { inner()->destroy(engine); }

/* The GPU engine when a device answers; otherwise NULL with the driver's
 * reason (no module, no driver, no device) as the last error. */
const cf_engine_ops *cf_engine_cuda(void)
{
    static cf_engine_ops ops;
    cf_device_info devices[1];
    int n = 0;
    if (cf_devices_list(devices, 1, &n) != CF_OK)
        return NULL;
    if (n == 0) {
        cf_error_set(CF_ERR_UNAVAILABLE, "no CUDA GPU on this machine");
        cf_error_hint("run on a machine with an NVIDIA GPU and driver, or use the cpu/exec backends");
        return NULL;
    }
    ops = *inner();
    ops.create = wrap_create;
    ops.describe = wrap_describe;
    ops.train_step = wrap_train_step;
    ops.destroy = wrap_destroy;
    return &ops;
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
