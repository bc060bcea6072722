/* The faster twins of nn/'s element-wise kernels (nn/vecmath.h's table,
 * Adam's loop among them): AVX2, giving the portable loops' bits. Every road
 * that computes installs the best the processor has as it starts
 * (search/ready.c for decoding, train/shards.c for training); without them
 * nn/ runs its portable loops, the same numbers more slowly. */
#ifndef RS_ACCEL_KERNELS_H
#define RS_ACCEL_KERNELS_H

#include "nn/vecmath.h"

/* The AVX2 twins, or NULL where the processor or the build lacks AVX2. */
const rs_vec_kernels *rs_vec_avx2(void);

/* Which kernels nn/ runs: want 1 the AVX2 twins (where the processor has
 * them), 0 the portable loops, -1 the best the processor has (what the roads
 * install). Returns 1 when the AVX2 twins are in use. Forcing one is for
 * tests and benchmarks; not thread-safe (rs_vec_kernels_use). */
int rs_accel_kernels_select(int want);

#endif
