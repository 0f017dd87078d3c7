/* Single-machine training throughput of the same models on many GPU types
 * (the columns of crossgpu/throughput.csv), and how well a carry-over rule
 * predicts one GPU's throughput from another's (`cloudfit validate
 * --crossgpu`). */
#ifndef CLOUDFIT_CROSSGPU_H
#define CLOUDFIT_CROSSGPU_H
#include <stddef.h>
#include "cloudfit/catalog.h"
#include "cloudfit/status.h"

typedef struct {
    char gpu[32];
    int gpu_count;
    char model[48];
    char precision[8];      /* fp32 | tf32 | fp16 | amp */
    char benchmark[8];      /* v0 | v1 | v2, from the notes */
    double batch_per_gpu;   /* 0 when not given */
    double throughput;      /* summed over gpu_count GPUs */
    int suspect;            /* notes carry a SUSPECT flag */
    long line;
} cf_crossgpu_row;

typedef struct {
    cf_crossgpu_row *rows;
    size_t n_rows;
} cf_crossgpu_set;

cf_status cf_crossgpu_load(const char *path, cf_crossgpu_set *out);
cf_status cf_crossgpu_parse(const char *text, size_t len, const char *name, cf_crossgpu_set *out);
void cf_crossgpu_free(cf_crossgpu_set *set);

#endif
