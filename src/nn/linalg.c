#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

#include "nn/linalg.h"
#include "nn/vecmath.h"

static rs_gemm_road gemm_road;
static _Atomic(rs_flop_count *) gemm_flops; /* rs_gemm_count's tally, or NULL */

rs_gemm_road rs_set_gemm_road(rs_gemm_road road)
{
    rs_gemm_road previous = gemm_road;
    gemm_road = road;
    return previous;
}

rs_flop_count *rs_gemm_count(rs_flop_count *counter)
{
    return atomic_exchange(&gemm_flops, counter);
}

void rs_gemm(const rs_gemm_call *c)
{
    if (c->M <= 0 || c->N <= 0)
        return;
    if (c->K <= 0) {
        /* An empty sum: C = beta C (BLAS may not touch C when K = 0). */
        for (int i = 0; i < c->M; i++)
            for (int j = 0; j < c->N; j++) {
                float *at = &c->C[(size_t)i * c->ldc + j];
                *at = c->beta == 0.0f ? 0.0f : c->beta * *at;
            }
        return;
    }
    rs_flop_count *flops = atomic_load_explicit(&gemm_flops, memory_order_relaxed);
    if (flops)
        atomic_fetch_add_explicit(flops, 2LL * c->M * c->N * c->K, memory_order_relaxed);
    if (gemm_road)
        gemm_road(c);
    else
        rs_gemm_openblas(c);
}

void rs_gemm_openblas(const rs_gemm_call *c)
{
    if (c->M == 1) {
        /* One row: a matrix-vector product, c = alpha op(B)^T a + beta c. sgemm
         * would copy (pack) all of B for this one row; sgemv reads it once. */
        cblas_sgemv(CblasRowMajor, c->tb ? CblasNoTrans : CblasTrans, c->tb ? c->N : c->K,
                    c->tb ? c->K : c->N, c->alpha, c->B, c->ldb, c->A, c->ta ? c->lda : 1, c->beta,
                    c->C, 1);
        return;
    }
    cblas_sgemm(CblasRowMajor, c->ta ? CblasTrans : CblasNoTrans, c->tb ? CblasTrans : CblasNoTrans,
                c->M, c->N, c->K, c->alpha, c->A, c->lda, c->B, c->ldb, c->beta, c->C, c->ldc);
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
    rs_gemm(&(rs_gemm_call){.tb = 1,
                            .M = x.rows,
                            .N = W.rows,
                            .K = x.cols,
                            .alpha = 1.0f,
                            .beta = beta,
                            .A = x.data,
                            .lda = x.stride,
                            .B = W.data,
                            .ldb = W.stride,
                            .C = y.data,
                            .ldc = y.stride});
}

void rs_matmul_backward_input(rs_mat dx, rs_cmat dy, rs_cmat W, float beta)
{
    if (dx.rows != dy.rows || dx.cols != W.cols || dy.cols != W.rows || !FITS(dx) || !FITS(dy) ||
        !FITS(W)) {
        shape_mismatch(__func__, "dx [R,in] = dy [R,out] W [out,in]", reading(dx), dy, W);
        return;
    }
    rs_gemm(&(rs_gemm_call){.M = dy.rows,
                            .N = W.cols,
                            .K = W.rows,
                            .alpha = 1.0f,
                            .beta = beta,
                            .A = dy.data,
                            .lda = dy.stride,
                            .B = W.data,
                            .ldb = W.stride,
                            .C = dx.data,
                            .ldc = dx.stride});
}

void rs_matmul_backward_weight(rs_mat dW, rs_cmat dy, rs_cmat x)
{
    if (dW.rows != dy.cols || dW.cols != x.cols || dy.rows != x.rows || !FITS(dW) || !FITS(dy) ||
        !FITS(x)) {
        shape_mismatch(__func__, "dW [out,in] += dy [R,out]ᵀ x [R,in]", reading(dW), dy, x);
        return;
    }
    rs_gemm(&(rs_gemm_call){.ta = 1,
                            .M = dW.rows,
                            .N = dW.cols,
                            .K = dy.rows,
                            .alpha = 1.0f,
                            .beta = 1.0f,
                            .A = dy.data,
                            .lda = dy.stride,
                            .B = x.data,
                            .ldb = x.stride,
                            .C = dW.data,
                            .ldc = dW.stride});
}

void rs_add_row_sums(float *y, const float *X, int M, int N, int ldx)
{
    if (M > 0)
        rs_vadd_rows(y, X, (size_t)ldx, (size_t)M, (size_t)N);
}

void rs_add_bias(float *X, const float *b, int M, int N, int ldx)
{
    for (int i = 0; i < M; i++)
        rs_vaxpy(X + (size_t)i * ldx, 1.0f, b, (size_t)N);
}
