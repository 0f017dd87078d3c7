/* Four-float vectors (GCC/Clang vector extensions) for the engine's
 * elementwise passes over all parameters (private to cuda_probe/). The
 * compiler does not vectorise a float reduction on its own without
 * -ffast-math; written this way it does, and sums stay in float only for
 * a block of CF_VEC_BLOCK elements before going into a double. */
#ifndef CF_PROBE_VEC_CPU_H
#define CF_PROBE_VEC_CPU_H
#include <string.h>

#define CF_VEC_BLOCK 4096

/* 16 bytes: the x86-64 baseline (SSE2) register, so no ABI change. */

typedef float cf_v4 __attribute__((vector_size(16)));

static inline cf_v4 cf_v4_load(const float *p)
{
    cf_v4 v;
    memcpy(&v, p, sizeof v); /* unaligned load */
    return v;
}

static inline void cf_v4_store(float *p, cf_v4 v) { memcpy(p, &v, sizeof v); }

static inline cf_v4 cf_v4_splat(float x) { return (cf_v4){x, x, x, x}; }

static inline double cf_v4_sum(cf_v4 v)
{
    double s = 0.0;
    for (int i = 0; i < 4; i++)
        s += v[i];
    return s;
}

#endif
