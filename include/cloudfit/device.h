/* GPU device discovery (cuda_probe/). Built with CUDA when the toolkit is
 * found at configure time (CLOUDFIT_CUDA=AUTO|ON); otherwise every call
 * answers CF_ERR_UNAVAILABLE with a plain message. */
#ifndef CLOUDFIT_DEVICE_H
#define CLOUDFIT_DEVICE_H
#include "cloudfit/status.h"

typedef struct {
    char name[128];
    double memory_gib;
    int compute_major, compute_minor;
    int multiprocessors;
} cf_device_info;

/* 1 when this build contains the CUDA code. */
int cf_cuda_built(void);
/* Lists up to `max` CUDA devices. No driver / no device / no CUDA in this
 * build → CF_ERR_UNAVAILABLE with a message a user can act on. */
cf_status cf_devices_list(cf_device_info *out, int max, int *out_count);

#endif
