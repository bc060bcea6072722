/* int8 weights for decoding (translate --int8), as CTranslate2 quantizes
 * them: each row r of a weight matrix W [out,in] becomes int8 values and one
 * float scale,
 *
 *   s_r = max_k |W[r,k]| / 127,   q[r,k] = round(W[r,k] / s_r) in [−127, 127]
 *
 * (a row of zeros has s_r = 0 and stays 0), once, when the model is loaded.
 * Each product's input x [B,in] is quantized the same way, row by row, when
 * the product runs (p[b,k], t_b), and
 *
 *   y[b,r] = s_r · t_b · Σ_k q[r,k] p[b,k]   (+ bias[r])
 *
 * with the sum in int32, exact: |q|, |p| ≤ 127 (never −128), so |Σ| ≤ in · 127² < 2³¹ for
 * in ≤ RS_Q8_MAX_COLS. Weights read per product: a quarter of the float ones.
 * Error per entry (W = s(q + e), x = t(p + d), |e|, |d| ≤ ½):
 *
 *   |y − ŷ| ≤ s_r t_b (½ Σ_k |q[r,k]| + ½ Σ_k |p[b,k]| + in/4)
 *           ≤ in · max|W_r| · max|x_b| · (127.25 / 127²)  (about in·max|W_r|·max|x_b| / 127)
 *
 * plus float rounding. accel/accel.c makes these the faster form
 * (nn/linear.h) of the decoder step's products under translate --int8.
 * Shapes: B rows of input, in columns, out (or K
 * chosen) rows of W. Memory order row-major. */
#ifndef RS_INT8_H
#define RS_INT8_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "nn/linalg.h"

/* The widest product whose int32 sum cannot overflow: 2¹⁷ · 127² < 2³¹. */
#define RS_Q8_MAX_COLS 131072

/* A quantized matrix [rows, cols]: q [rows, cols] row-major, scale [rows].
 * A view of some of another's rows (rs_q8_rows) owns nothing. */
typedef struct {
    int rows, cols;
    const int8_t *q;
    const float *scale;
} rs_q8_matrix;

/* Quantizes W [rows, cols] (a view, any stride) into q, allocated; fails on
 * a weight that is not finite or cols > RS_Q8_MAX_COLS. */
int rs_q8_matrix_init(rs_q8_matrix *q, rs_cmat W, rs_error *err);
void rs_q8_matrix_free(rs_q8_matrix *q);

/* Rows first..first+count−1 of q, a view. */
rs_q8_matrix rs_q8_rows(const rs_q8_matrix *q, int first, int count);

/* Where a product quantizes its input: x [rows, cols] int8 with
 * rows · cols ≤ bytes, scale [rows]; from the translation workspace. */
typedef struct {
    int8_t *x;
    float *scale;
    size_t bytes;
    int rows;
} rs_q8_scratch;

/* p [count] and its scale t: x [count] quantized as above (non-finite
 * entries become 0; t is over the finite ones). */
void rs_q8_quantize(int8_t *p, float *t, const float *x, int count);

/* The same by AVX2, byte for byte and the same t (what products use where
 * the processor has it); for tests, returns 0 (p, t untouched) where the
 * processor or the build lacks AVX2. */
int rs_q8_quantize_avx2(int8_t *p, float *t, const float *x, int count);

/* Σ_k a[k] b[k] over count ≤ RS_Q8_MAX_COLS entries in [−127, 127], in
 * int32: the reference. */
int32_t rs_q8_dot_scalar(const int8_t *a, const int8_t *b, int count);

/* The kernel: sums[i] = Σ_k w[i][k] x[k] for four rows w[0..3] at once, by
 * AVX2 where the processor has it, else by rs_q8_dot4_scalar; the two give
 * the same sums (integer sums do not depend on their order). Both sides
 * must be in [−127, 127] (as rs_q8_quantize makes them): the AVX2 kernel's
 * int16 pair sums are exact only there. rs_q8_dot4_avx2 and
 * rs_q8_dot4xn_avx2, for tests, return 0 (sums untouched) where the
 * processor or the build lacks AVX2. */
void rs_q8_dot4_scalar(const int8_t *const w[4], const int8_t *x, int count, int32_t sums[4]);
int rs_q8_dot4_avx2(const int8_t *const w[4], const int8_t *x, int count, int32_t sums[4]);

/* The same for nb input rows x + b·stride (b < nb) against the four weight
 * rows: sums [nb,4], sums[4b + i] = Σ_k w[i][k] x[b·stride + k]. The AVX2
 * kernel takes two input rows at a time, so each weight vector it loads
 * serves both. */
void rs_q8_dot4xn_scalar(const int8_t *const w[4], const int8_t *x, int stride, int nb, int count,
                         int32_t *sums);
int rs_q8_dot4xn_avx2(const int8_t *const w[4], const int8_t *x, int stride, int nb, int count,
                      int32_t *sums);

/* Which kernel and input quantizer the products use: want 1 AVX2 (where
 * the processor has it), 0 the scalar loops, −1 the processor's choice (the
 * default). Returns 1 when
 * AVX2 is chosen. For tests, as rs_accel_kernels_select: not thread-safe. */
int rs_q8_select(int want);

/* y [B,K] = beta·y + x [B,in] W[ids]ᵀ (+ bias [K], bias NULL: none): column
 * j of the output is W's row ids[j] (ids NULL: row j, K = W->rows) plus
 * bias[j], the column's bias (a shortlist's, gathered in its order), so an
 * output layer can be computed for a shortlist of K target words. x is
 * quantized into s. beta is 0 or 1. Shapes are checked as rs_matmul_forward
 * checks them (a mismatch goes to the shape handler). */
void rs_q8_forward(rs_mat y, rs_cmat x, const rs_q8_matrix *W, const int *ids, const float *bias,
                   const rs_q8_scratch *s, float beta);

#endif
