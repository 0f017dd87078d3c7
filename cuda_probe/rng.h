/* Small deterministic random numbers for the CPU engine (private to
 * cuda_probe/): xoshiro256** seeded through splitmix64. The same seed gives
 * the same stream on every machine, so weights, the synthetic teacher and
 * the data order are reproducible. */
#ifndef CF_PROBE_RNG_H
#define CF_PROBE_RNG_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    uint64_t s[4];
} cf_rng;

/* Seeds from (seed, stream): different streams of one seed are independent. */
void cf_rng_seed(cf_rng *rng, uint64_t seed, uint64_t stream);
uint64_t cf_rng_next(cf_rng *rng);
/* Uniform in [0, 1) with 53 random bits. */
double cf_rng_uniform(cf_rng *rng);
/* Uniform integer in [0, n) without modulo bias; n > 0. */
uint64_t cf_rng_below(cf_rng *rng, uint64_t n);
/* Standard normal (Box–Muller). */
double cf_rng_normal(cf_rng *rng);

#ifdef __cplusplus
}
#endif

#endif
