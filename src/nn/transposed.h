/* Transposed copies of the weights a translation multiplies by at every
 * step, for exact float decoding (translate's default), made once when a
 * model is loaded to translate; the checkpoint never holds them.
 *
 * Each W [out,in] is copied to W_t = Wᵀ [in,out], row-major and dense, for
 * rs_matmul_forward_t (nn/linalg.h): OpenBLAS packs a product's weights on
 * every call, and packs W_t by copying rows where it packs Wᵀ by gathering
 * columns; the packed panel, so every output bit, is the same. The copies:
 * the encoder's W [3n,m] and U [3n,n] of each direction, the attention's
 * key side (U_a [a,2n] or K [n,2n]), the decoder GRU's W'_e [3n,m],
 * W'_c [3n,2n] and U [3n,n], the additive attention's W_a [a,n], the deep
 * output's U_o [2l,n], V_o [2l,m] and
 * C_o [2l,2n], and the output layer W_out [V,l] (a product per target
 * word). What they cost and gain: docs/performance.md. */
#ifndef RS_TRANSPOSED_H
#define RS_TRANSPOSED_H

#include "nn/linalg.h"

/* A GRU's: W'_eᵀ [m,3n] (the encoder's Wᵀ), W'_cᵀ [2n,3n] (NULL for the
 * encoder's), Uᵀ [n,3n]. */
typedef struct {
    const float *W, *W_c, *U;
} rs_wt_gru;

/* The readout's: U_oᵀ [n,2l], V_oᵀ [m,2l], C_oᵀ [2n,2l], W_outᵀ [l,V]. */
typedef struct {
    const float *U_o, *V_o, *C_o, *W_out;
} rs_wt_readout;

/* A model's, made by rs_network_transpose (nn/network.h) into one block:
 * the encoder's two directions, the decoder GRU, the attention's W_aᵀ [n,a]
 * (NULL for attention other than additive) and key side's Uᵀ [2n,ka] (NULL
 * for none), the readout. */
typedef struct rs_wt_weights {
    rs_wt_gru enc_fwd, enc_bwd, dec;
    const float *att_W, *att_U;
    rs_wt_readout out;
    float *block;
} rs_wt_weights;

/* dst [src.cols, src.rows], dense, = srcᵀ (src a view, any stride). */
void rs_transpose(float *dst, rs_cmat src);

/* A view of W_t [in,out] for W [out,in]; data NULL (no copy) when t is. */
rs_cmat rs_wt_view(const float *t, int in, int out);

void rs_wt_weights_free(rs_wt_weights *wt);

#endif
