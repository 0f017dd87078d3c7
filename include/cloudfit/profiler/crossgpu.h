/* Single-machine training throughput of the same models on many GPU types
 * (the columns of crossgpu/throughput.csv), and how well a carry-over rule
 * predicts one GPU's throughput from another's (`cloudfit validate
 * --crossgpu`). */
#ifndef CLOUDFIT_PROFILER_CROSSGPU_H
#define CLOUDFIT_PROFILER_CROSSGPU_H
#include <stddef.h>
#include "cloudfit/profiler/types.h"
#include "cloudfit/status.h"

cf_status cf_crossgpu_load(const char *path, cf_crossgpu_set *out);
cf_status cf_crossgpu_parse(const char *text, size_t len, const char *name, cf_crossgpu_set *out);
void cf_crossgpu_free(cf_crossgpu_set *set);

#endif
