#include <stdio.h>

#include "cloudfit/cuda_probe.h"
#include "exit_codes.h"
#include "cloudfit/version.h"
#include "commands.h"
#include "term/output.h"

static void version_text(cf_buf *out)
{
    cf_buf_printf(out, "cloudfit %s\n", CF_VERSION);
    cf_buf_printf(out, "build: %s\n", CLOUDFIT_BUILD_FEATURES);
    if (!cf_cuda_built()) {
        cf_buf_puts(out, "cuda: not built\n");
        return;
    }
    cf_device_info devices[16];
    int n = 0;
    if (cf_devices_list(devices, 16, &n) != CF_OK) {
        cf_buf_printf(out, "cuda: built; %s\n", cf_error_message());
        cf_error_clear();
        return;
    }
    cf_buf_printf(out, "cuda: built; %d device(s)\n", n);
    for (int i = 0; i < n; i++)
        cf_buf_printf(out, "  %d: %s, %.1f GiB, sm_%d%d, %d SMs\n", i, devices[i].name, devices[i].memory_gib,
                      devices[i].compute_major, devices[i].compute_minor, devices[i].multiprocessors);
}

int cmd_version(int argc, char **argv, const cf_cli_options *opts, int n_positional)
{
    (void)argc; (void)argv; (void)opts; (void)n_positional;
    cf_buf text = CF_BUF_INIT;
    version_text(&text);
    int rc = cf_cli_write_buf(NULL, &text);
    cf_buf_free(&text);
    return rc;
}
