#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

#include "nn/linalg.h"
#include "nn/vecmath.h"

static rs_gemm_road gemm_road;

rs_gemm_road rs_set_gemm_road(rs_gemm_road road)
{
    rs_gemm_road previous = gemm_road;
    gemm_road = road;
    return previous;
}

void rs_gemm(int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda,
             const float *B, int ldb, float beta, float *C, int ldc)
{
    if (M <= 0 || N <= 0)
        return;
    if (K <= 0) {
        /* An empty sum: C = beta C (BLAS may not touch C when K = 0). */
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++)
                C[(size_t)i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[(size_t)i * ldc + j];
        return;
    }
    if (gemm_road) {
        gemm_road(&(rs_gemm_call){.ta = ta,
                                  .tb = tb,
                                  .M = M,
                                  .N = N,
                                  .K = K,
                                  .alpha = alpha,
                                  .beta = beta,
                                  .A = A,
                                  .B = B,
                                  .C = C,
                                  .lda = lda,
                                  .ldb = ldb,
                                  .ldc = ldc});
        return;
    }
    if (M == 1) {
        /* One row: a matrix-vector product, c = alpha op(B)^T a + beta c. sgemm
         * would copy (pack) all of B for this one row; sgemv reads it once. */
        cblas_sgemv(CblasRowMajor, tb ? CblasNoTrans : CblasTrans, tb ? N : K, tb ? K : N, alpha, B,
                    ldb, A, ta ? lda : 1, beta, C, 1);
        return;
    }
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N,
                K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* ---- the products of a linear layer, their shapes checked ---- */

static void shape_abort(const char *message)
{
    fprintf(stderr, "rnnsearch: internal error: %s\n", message);
    abort();
}

static rs_shape_handler shape_handler = shape_abort;

rs_shape_handler rs_set_shape_handler(rs_shape_handler h)
{
    rs_shape_handler previous = shape_handler;
    shape_handler = h ? h : shape_abort;
    return previous;
}

void rs_shape_report(const char *message)
{
    shape_handler(message);
}

/* A view's rows fit its stride. */
#define FITS(v) ((v).cols <= (v).stride)

/* Tells the handler that `product` (in `form`, with views a, b, c) got
 * shapes that disagree. Out of the products' way: they only compare. */
static void shape_mismatch(const char *product, const char *form, rs_cmat a, rs_cmat b, rs_cmat c)
{
    char message[256];
    snprintf(message, sizeof message,
             "%s: shapes do not agree: %s with [%d,%d] (stride %d), [%d,%d] (stride %d), "
             "[%d,%d] (stride %d)",
             product, form, a.rows, a.cols, a.stride, b.rows, b.cols, b.stride, c.rows, c.cols,
             c.stride);
    shape_handler(message);
}

static rs_cmat reading(rs_mat m)
{
    return (rs_cmat){m.data, m.rows, m.cols, m.stride};
}

void rs_matmul_forward(rs_mat y, rs_cmat x, rs_cmat W, float beta)
{
    if (y.rows != x.rows || y.cols != W.rows || x.cols != W.cols || !FITS(y) || !FITS(x) ||
        !FITS(W)) {
        shape_mismatch(__func__, "y [R,out] = x [R,in] W [out,in]ᵀ", reading(y), x, W);
        return;
    }
    rs_gemm(0, 1, x.rows, W.rows, x.cols, 1.0f, x.data, x.stride, W.data, W.stride, beta, y.data,
            y.stride);
}

void rs_matmul_backward_input(rs_mat dx, rs_cmat dy, rs_cmat W, float beta)
{
    if (dx.rows != dy.rows || dx.cols != W.cols || dy.cols != W.rows || !FITS(dx) || !FITS(dy) ||
        !FITS(W)) {
        shape_mismatch(__func__, "dx [R,in] = dy [R,out] W [out,in]", reading(dx), dy, W);
        return;
    }
    rs_gemm(0, 0, dy.rows, W.cols, W.rows, 1.0f, dy.data, dy.stride, W.data, W.stride, beta,
            dx.data, dx.stride);
}

void rs_matmul_backward_weight(rs_mat dW, rs_cmat dy, rs_cmat x)
{
    if (dW.rows != dy.cols || dW.cols != x.cols || dy.rows != x.rows || !FITS(dW) || !FITS(dy) ||
        !FITS(x)) {
        shape_mismatch(__func__, "dW [out,in] += dy [R,out]ᵀ x [R,in]", reading(dW), dy, x);
        return;
    }
    rs_gemm(1, 0, dW.rows, dW.cols, dy.rows, 1.0f, dy.data, dy.stride, x.data, x.stride, 1.0f,
            dW.data, dW.stride);
}

void rs_add_row_sums(float *y, const float *X, int M, int N, int ldx)
{
    for (int i = 0; i < M; i++)
        rs_vaxpy(y, 1.0f, X + (size_t)i * ldx, (size_t)N);
}

void rs_add_bias(float *X, const float *b, int M, int N, int ldx)
{
    for (int i = 0; i < M; i++)
        rs_vaxpy(X + (size_t)i * ldx, 1.0f, b, (size_t)N);
}
