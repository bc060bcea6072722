/* Transposed copies of the weights a translation multiplies by at every
 * step, for exact float decoding (translate's default), made once when a
 * model is readied to translate (accel/accel.h); the checkpoint never holds
 * them.
 *
 * Each W [out,in] is copied to W_t = Wᵀ [in,out], row-major and dense, for
 * rs_matmul_forward_t: OpenBLAS packs a product's weights on every call, and
 * packs W_t by copying rows where it packs Wᵀ by gathering columns; the
 * packed panel, so every output bit, is the same. The copies: the encoder's
 * W [3n,m] and U [3n,n] of each direction, the attention's key side
 * (U_a [a,2n] or K [n,2n]), the decoder GRU's W'_e [3n,m], W'_c [3n,2n] and
 * U [3n,n], the additive attention's W_a [a,n], the deep output's U_o
 * [2l,n], V_o [2l,m] and C_o [2l,2n], and the output layer W_out [V,l] (a
 * product per target word). What they cost and gain: docs/performance.md. */
#ifndef RS_TRANSPOSED_H
#define RS_TRANSPOSED_H

#include "nn/linalg.h"

/* dst [src.cols, src.rows], dense, = srcᵀ (src a view, any stride). */
void rs_transpose(float *dst, rs_cmat src);

/* rs_matmul_forward by W_t = Wᵀ [in,out], the copy of W, when x has more
 * than one row (W_t.data NULL: by W). sgemm packs op(B) into its own layout on every call, and
 * OpenBLAS keeps no packed matrix between calls: from Wᵀ the packing gathers
 * across W's rows, from W_t it copies along them. The packed panel is the
 * same, so on most kernels y is the same to the bit; on others (SkylakeX's
 * paths for small matrices) another call sums in another order, so y is
 * equal to float32 rounding (tests/test_transposed.c holds it to that
 * bound, and search/ready.h makes every decoding road take the copies). One
 * row still goes to sgemv on W, whose sums are ordered by the orientation it
 * reads. W_t's shape is checked against W's (a mismatch goes to the shape
 * handler, nn/linalg.h). */
void rs_matmul_forward_t(rs_mat y, rs_cmat x, rs_cmat W, rs_cmat W_t, float beta);

#endif
