/* Training data of the CPU engine (private to cuda_probe/): a synthetic
 * classification set labelled by a fixed random teacher MLP, or NumPy
 * .npy files; served in a seeded shuffled order, epoch after epoch. */
#ifndef CF_PROBE_DATA_CPU_H
#define CF_PROBE_DATA_CPU_H
#include <stdint.h>
#include "cloudfit/status.h"
#include "rng.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Hidden width of the synthetic teacher (in → 64 ReLU → classes). */
#define CF_TEACHER_HIDDEN 64

typedef struct {
    long n;            /* samples */
    int in, classes;
    float *x;          /* [n, in] */
    int *y;            /* [n] */
    /* Synthetic only: sample i is generated on first use from (seed, i)
     * alone, so its value does not depend on the order of access. */
    int synthetic;
    unsigned char *ready;
    uint64_t seed;
    float *teacher;    /* w1 [in, H], b1 [H], w2 [H, classes], b2 [classes] */
    /* Order: a permutation reshuffled at every epoch boundary. */
    long *perm;
    long cursor;
    cf_rng order_rng;
} cf_dataset;

/* n synthetic samples: x ~ N(0, I), label = argmax of the teacher's logits. */
cf_status cf_dataset_synthetic(cf_dataset *ds, long n, int in, int classes, uint64_t seed);
/* Loads x (float32 [n, in]) and y (integers in [0, classes), [n]); errors
 * name the file and say what was expected. */
cf_status cf_dataset_npy(cf_dataset *ds, const char *x_path, const char *y_path, int in, int classes,
                         uint64_t seed);
/* The next `count` sample indices in the shuffled order (wrapping into a
 * new epoch as needed); synthetic samples among them are generated now, so
 * copying them later is all that is left to do. */
void cf_dataset_take(cf_dataset *ds, long count, long *idx);
/* Copies rows idx[0..B) into x_out [B, in] and y_out [B]. */
void cf_dataset_gather(const cf_dataset *ds, const long *idx, int B, float *x_out, int *y_out);
/* Generates every synthetic sample (for export). */
void cf_dataset_materialize(cf_dataset *ds);
void cf_dataset_free(cf_dataset *ds);

#ifdef __cplusplus
}
#endif

#endif
