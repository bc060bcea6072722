/* Thin wrappers over OpenBLAS for the row-major products the layers use, and
 * the elementwise helpers they share. Every matrix product in rnnsearch goes
 * through rs_gemm; the layers call it through the three named products of a
 * linear layer (rs_matmul_forward, rs_matmul_backward_input, rs_matmul_backward_weight). */
#ifndef RS_LINALG_H
#define RS_LINALG_H

#include <stdatomic.h>
#include <stddef.h>

/* One product C[M,N] = alpha·op(A) op(B) + beta·C, row-major, with
 * cblas_sgemm's thirteen arguments in one struct: ta/tb 1 = transpose, op(A)
 * [M,K], op(B) [K,N], lda/ldb/ldc the row strides as stored. */
typedef struct {
    int ta, tb, M, N, K;
    float alpha, beta;
    const float *A, *B;
    float *C;
    int lda, ldb, ldc;
} rs_gemm_call;

/* Computes *call: an empty sum (K = 0) gives beta·C, M or N = 0 nothing,
 * the rest the GEMM road's (below). Only the named products below, and
 * the copies' own products (accel/), call it. */
void rs_gemm(const rs_gemm_call *call);

/* Another library's road to the same products (accel/gemm_road.h chooses
 * one for the processor it runs on). Without one (NULL, the default) rs_gemm
 * calls OpenBLAS: the reference road, the only one nn/ needs. Installed
 * before products run, never while they do; returns the previous road. */
typedef void (*rs_gemm_road)(const rs_gemm_call *call);
rs_gemm_road rs_set_gemm_road(rs_gemm_road road);

/* An optional tally of the work products do, for `rnnsearch bench`: while
 * counter is not NULL, each product rs_gemm computes adds its 2·M·N·K FLOPs
 * (a multiply-add is two) to *counter, on any road. Each addition is atomic,
 * so threads issuing products at once (translation's workers) lose none;
 * BLAS's own threads do not call rs_gemm. Set the counter before the
 * threads that count start, read it once they are done. Returns the
 * previous counter. */
typedef _Atomic long long rs_flop_count;
rs_flop_count *rs_gemm_count(rs_flop_count *counter);

/* The reference road itself (OpenBLAS: sgemv for one row, which reads B
 * once instead of packing it; else sgemm), for a road that hands a product
 * back. M, N, K >= 1. */
void rs_gemm_openblas(const rs_gemm_call *call);

/* A row-major matrix seen in place: rows × cols, consecutive rows `stride`
 * floats apart (stride > cols for a block of a wider matrix, such as the
 * context columns W'_c of the decoder's input matrix W'). rs_cmat is read,
 * rs_mat written. RS_MAT(p, rows, cols) is the dense case. */
typedef struct {
    const float *data;
    int rows, cols, stride;
} rs_cmat;

typedef struct {
    float *data;
    int rows, cols, stride;
} rs_mat;

#define RS_MAT(p, r, c) ((rs_mat){(p), (r), (c), (c)})
#define RS_MAT_S(p, r, c, s) ((rs_mat){(p), (r), (c), (s)})
#define RS_CMAT(p, r, c) ((rs_cmat){(p), (r), (c), (c)})
#define RS_CMAT_S(p, r, c, s) ((rs_cmat){(p), (r), (c), (s)})

/* The three products of a linear layer y = x Wᵀ, named as the equations
 * use them (x [R,in], W [out,in], y and dy [R,out]):
 *   rs_matmul_forward:         y  = beta·y  + x Wᵀ
 *   rs_matmul_backward_input:  dx = beta·dx + dy W
 *   rs_matmul_backward_weight: dW += dyᵀ x
 * beta is 0 (write) or 1 (accumulate). All go through rs_gemm.
 *
 * Each checks that the shapes of its views agree (R, in and out as above;
 * every stride at least its row's width) before it multiplies. Shapes are
 * the caller's contract, not data: a mismatch is a bug, so it goes to the
 * shape handler, which by default names the product and the shapes on
 * standard error and aborts (as assert would; it is never compiled out: six
 * integer comparisons beside a product of at least B·n·n multiply-adds). */
void rs_matmul_forward(rs_mat y, rs_cmat x, rs_cmat W, float beta);
void rs_matmul_backward_input(rs_mat dx, rs_cmat dy, rs_cmat W, float beta);
void rs_matmul_backward_weight(rs_mat dW, rs_cmat dy, rs_cmat x);

/* What a product whose shapes disagree calls, with a message naming the
 * product and its shapes; when the handler returns, the product is skipped
 * (its output left as it was). rs_set_shape_handler installs h (NULL: the
 * default, which aborts) and returns the previous one: for tests, not
 * thread-safe. */
typedef void (*rs_shape_handler)(const char *message);
rs_shape_handler rs_set_shape_handler(rs_shape_handler h);

/* Gives message to the shape handler: for products outside this file
 * (a weight's other form, nn/linear.h) that check their shapes the same way. */
void rs_shape_report(const char *message);

/* y[N] += sum of the rows of X[M, N] (stride ldx): bias gradients. */
void rs_add_row_sums(float *y, const float *X, int M, int N, int ldx);

/* Each row of X[M, N] (stride ldx) += b[N]. */
void rs_add_bias(float *X, const float *b, int M, int N, int ldx);

#endif
