/* Transposed copies of the decoding weights and their product;
 * transposed.h says why. */
#include <stdio.h>

#include "accel/transposed.h"

/* Blocks of 32 × 32 floats (4 KB read, 4 KB written) keep both sides of
 * the copy in the L1 cache: a row-by-row transpose writes one float per
 * cache line of dst. */
enum { TILE = 32 };

void rs_transpose(float *dst, rs_cmat src)
{
    const int R = src.rows, C = src.cols;
    for (int r0 = 0; r0 < R; r0 += TILE)
        for (int c0 = 0; c0 < C; c0 += TILE)
            for (int r = r0; r < R && r < r0 + TILE; r++)
                for (int c = c0; c < C && c < c0 + TILE; c++)
                    dst[(size_t)c * R + r] = src.data[(size_t)r * src.stride + c];
}

void rs_matmul_forward_t(rs_mat y, rs_cmat x, rs_cmat W, rs_cmat W_t, float beta)
{
    if (!W_t.data || x.rows == 1) {
        rs_matmul_forward(y, x, W, beta);
        return;
    }
    if (y.rows != x.rows || y.cols != W.rows || x.cols != W.cols || W_t.rows != W.cols ||
        W_t.cols != W.rows || y.cols > y.stride || x.cols > x.stride || W_t.cols > W_t.stride) {
        char message[256];
        snprintf(message, sizeof message,
                 "rs_matmul_forward_t: shapes do not agree: y [R,out] = x [R,in] W_t [in,out] "
                 "with [%d,%d] (stride %d), [%d,%d] (stride %d), [%d,%d] (stride %d)",
                 y.rows, y.cols, y.stride, x.rows, x.cols, x.stride, W_t.rows, W_t.cols,
                 W_t.stride);
        rs_shape_report(message);
        return;
    }
    rs_gemm(&(rs_gemm_call){.M = x.rows,
                            .N = W_t.cols,
                            .K = x.cols,
                            .alpha = 1.0f,
                            .beta = beta,
                            .A = x.data,
                            .lda = x.stride,
                            .B = W_t.data,
                            .ldb = W_t.stride,
                            .C = y.data,
                            .ldc = y.stride});
}
