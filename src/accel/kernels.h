/* The faster twins of nn/'s element-wise kernels (nn/vecmath.h's table,
 * Adam's loop among them): AVX2 and AVX-512, giving the portable loops' bits. Every road
 * that computes installs the best the processor has as it starts
 * (search/ready.c for decoding, train/shards.c for training); without them
 * nn/ runs its portable loops, the same numbers more slowly. */
#ifndef RS_ACCEL_KERNELS_H
#define RS_ACCEL_KERNELS_H

#include "common/error.h"
#include "nn/vecmath.h"

/* The levels of kernels, slowest first: nn/'s portable loops (the
 * reference), the AVX2 twins (accel/kernels.c, 8 lanes), the AVX-512 twins
 * (accel/kernels_avx512.c, 16 lanes); all three give the same bits. */
enum { RS_KERNELS_PORTABLE = 0, RS_KERNELS_AVX2 = 1, RS_KERNELS_AVX512 = 2 };

/* The twins of a level, or NULL where the processor or the build lacks its
 * instructions (AVX-512: avx512f, dq, bw and vl). */
const rs_vec_kernels *rs_vec_avx2(void);
const rs_vec_kernels *rs_vec_avx512(void);

/* The level the environment asks for: RNNSEARCH_KERNELS=portable, avx2 or
 * avx512, or -1 for auto (the best the processor has, also when unset);
 * -2 and a message in err (which may be NULL) for another name. */
int rs_accel_kernels_wanted(rs_error *err);

/* A level's name ("portable", "avx2", "avx512"; "auto" for any other). */
const char *rs_accel_kernels_name(int level);

/* Makes nn/ run the kernels of level want, or where the processor lacks
 * them the best level below it; want -1 takes the level RNNSEARCH_KERNELS
 * names, by default the best the processor has (what the roads install as
 * they start; a name it does not know counts as auto here, and
 * rs_gemm_road_choose refuses it at start). Returns the level in use.
 * Forcing one is for tests and benchmarks; not thread-safe
 * (rs_vec_kernels_use). */
int rs_accel_kernels_select(int want);

#endif
