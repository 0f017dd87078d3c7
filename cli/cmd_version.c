#include <stdio.h>

#include "cloudfit/cuda_probe.h"
#include "exit_codes.h"
#include "cloudfit/version.h"
#include "commands.h"

int cmd_version(int argc, char **argv, const cf_cli_options *opts, int n_positional)
{
    (void)argc; (void)argv; (void)opts; (void)n_positional;
    printf("cloudfit %s\n", CF_VERSION);
    printf("build: %s\n", CLOUDFIT_BUILD_FEATURES);
    if (!cf_cuda_built()) {
        printf("cuda: not built\n");
        return CF_EXIT_OK;
    }
    cf_device_info devices[16];
    int n = 0;
    if (cf_devices_list(devices, 16, &n) != CF_OK) {
        printf("cuda: built; %s\n", cf_error_message());
        return CF_EXIT_OK;
    }
    printf("cuda: built; %d device(s)\n", n);
    for (int i = 0; i < n; i++)
        printf("  %d: %s, %.1f GiB, sm_%d%d, %d SMs\n", i, devices[i].name, devices[i].memory_gib,
               devices[i].compute_major, devices[i].compute_minor, devices[i].multiprocessors);
    return CF_EXIT_OK;
}
