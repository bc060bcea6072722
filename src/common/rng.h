/* A small seeded random number generator (xoshiro256**, seeded by splitmix64)
 * so that the same seed gives the same model on every machine. */
#ifndef RS_RNG_H
#define RS_RNG_H

#include <stdint.h>

typedef struct {
    uint64_t s[4];
} rs_rng;

void rs_rng_seed(rs_rng *rng, uint64_t seed);
uint64_t rs_rng_next(rs_rng *rng);
/* Uniform in [0, 1). */
double rs_rng_uniform(rs_rng *rng);
/* Uniform integer in [0, bound), bound > 0. */
uint64_t rs_rng_below(rs_rng *rng, uint64_t bound);

#endif
