/* numpy's default random generator, bit for bit: np.random.default_rng(seed)
 * is PCG64 (XSL-RR 128/64) seeded through SeedSequence(seed), and its
 * integers(0, n) draws with Lemire's bounded method on 32-bit outputs. Here
 * so that a statistic numpy-based tools compute from a seed (sacreBLEU's
 * paired significance tests) can be reproduced exactly; rs_rng (rng.h) stays
 * the generator of everything rnnsearch draws for itself. */
#ifndef RS_PCG64_H
#define RS_PCG64_H

#include <stdint.h>

typedef struct {
    uint64_t state_hi, state_lo; /* the 128-bit LCG state */
    uint64_t inc_hi, inc_lo;     /* its odd increment */
    int has_uint32;              /* the upper half of the last 64-bit output is waiting */
    uint32_t uinteger;
} rs_pcg64;

/* np.random.default_rng(seed), for a seed 0 .. 2^64 - 1. */
void rs_pcg64_seed(rs_pcg64 *g, uint64_t seed);

/* bit_generator.random_raw(): the next 64-bit output. */
uint64_t rs_pcg64_next64(rs_pcg64 *g);

/* The next 32-bit output: the low half of a 64-bit one, then its high half. */
uint32_t rs_pcg64_next32(rs_pcg64 *g);

/* Generator.integers(0, n, dtype=np.int64) for 1 <= n <= 2^32, one value
 * (equally Generator.choice(n, replace=True), whose values these are in
 * order, row after row). */
uint32_t rs_pcg64_below(rs_pcg64 *g, uint64_t n);

/* Generator.integers(2, dtype=bool): one bit of a buffered 32-bit output,
 * from the lowest up; *bits and *buf carry the buffer from call to call of
 * one array fill (both start at 0). */
int rs_pcg64_bool(rs_pcg64 *g, int *bits, uint32_t *buf);

#endif
