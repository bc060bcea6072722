/* int8 weights and their products; int8.h has the equations and the error
 * bound. The dot product is the kernel: AVX2 sign-extends 16 int8 of each
 * side to int16 (_mm256_cvtepi8_epi16) and multiplies-adds pairs into int32
 * (_mm256_madd_epi16: |q p + q' p'| ≤ 2 · 127², no saturation, unlike
 * _mm256_maddubs_epi16 on u8 × s8, whose int16 pair sums saturate). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/int8.h"

/* The dot-product kernel (four rows at a time) for this processor. */
typedef void (*dot4_kernel)(const int8_t *const w[4], const int8_t *x, int count, int32_t sums[4]);
static dot4_kernel chosen_kernel(void);

/* ---- quantizing ---- */

/* The nearest integer to v in [−127, 127] (half away from zero); 0 for NaN. */
static int8_t round_q8(float v)
{
    if (!(v == v))
        return 0;
    if (v >= 127.0f)
        return 127;
    if (v <= -127.0f)
        return -127;
    return (int8_t)(v >= 0.0f ? (int)(v + 0.5f) : -(int)(-v + 0.5f));
}

void rs_q8_quantize(int8_t *p, float *t, const float *x, int count)
{
    float max = 0.0f;
    for (int k = 0; k < count; k++) {
        const float a = fabsf(x[k]);
        if (a > max && isfinite(a))
            max = a;
    }
    *t = max / 127.0f;
    if (max == 0.0f) {
        memset(p, 0, (size_t)count);
        return;
    }
    const float inv = 127.0f / max;
    for (int k = 0; k < count; k++)
        p[k] = isfinite(x[k]) ? round_q8(x[k] * inv) : 0;
}

int rs_q8_matrix_init(rs_q8_matrix *q, rs_cmat W, rs_error *err)
{
    memset(q, 0, sizeof *q);
    if (W.cols > RS_Q8_MAX_COLS)
        return rs_fail(err,
                       "int8: a matrix of %d columns (at most %d: the int32 sums would "
                       "overflow)",
                       W.cols, RS_Q8_MAX_COLS);
    for (int r = 0; r < W.rows; r++)
        for (int k = 0; k < W.cols; k++)
            if (!isfinite(W.data[(size_t)r * W.stride + k]))
                return rs_fail(err, "int8: weight [%d,%d] of a [%d,%d] matrix is not finite", r, k,
                               W.rows, W.cols);
    /* The processor's kernel is asked for here, when the model is loaded,
     * before any decoding thread starts (serve's workers share it). */
    (void)chosen_kernel();
    int8_t *values = malloc((size_t)W.rows * W.cols + 1);
    float *scale = malloc(sizeof(float) * ((size_t)W.rows + 1));
    if (!values || !scale) {
        free(values);
        free(scale);
        return rs_fail(err, "int8: out of memory for a [%d,%d] matrix", W.rows, W.cols);
    }
    for (int r = 0; r < W.rows; r++)
        rs_q8_quantize(values + (size_t)r * W.cols, scale + r, W.data + (size_t)r * W.stride,
                       W.cols);
    *q = (rs_q8_matrix){W.rows, W.cols, values, scale};
    return 0;
}

void rs_q8_matrix_free(rs_q8_matrix *q)
{
    free((void *)q->q);
    free((void *)q->scale);
    memset(q, 0, sizeof *q);
}

rs_q8_matrix rs_q8_rows(const rs_q8_matrix *q, int first, int count)
{
    return (rs_q8_matrix){count, q->cols, q->q + (size_t)first * q->cols, q->scale + first};
}

void rs_q8_weights_free(rs_q8_weights *w)
{
    if (!w)
        return;
    rs_q8_matrix *all[] = {&w->dec.W,   &w->dec.W_c, &w->dec.U,   &w->att_W,
                           &w->out.U_o, &w->out.V_o, &w->out.C_o, &w->out.W_out};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        rs_q8_matrix_free(all[i]);
    free(w);
}

/* ---- the kernel ---- */

int32_t rs_q8_dot_scalar(const int8_t *a, const int8_t *b, int count)
{
    int32_t sum = 0;
    for (int k = 0; k < count; k++)
        sum += (int32_t)a[k] * b[k];
    return sum;
}

void rs_q8_dot4_scalar(const int8_t *const w[4], const int8_t *x, int count, int32_t sums[4])
{
    for (int i = 0; i < 4; i++)
        sums[i] = rs_q8_dot_scalar(w[i], x, count);
}

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))

/* 16 entries a round: x's sign-extended to int16 once, multiplied-added
 * with each row's into its own 8 int32 lanes; the four accumulators folded
 * by hadd into [Σ_0, Σ_1, Σ_2, Σ_3]; the last count mod 16 entries by the
 * scalar loop. Integer sums: the same whatever the order. */
AVX2 static void dot4_avx2(const int8_t *const w[4], const int8_t *x, int count, int32_t sums[4])
{
    __m256i acc0 = _mm256_setzero_si256(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
    int k = 0;
    for (; k + 16 <= count; k += 16) {
#define LOAD16(p) _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(p)))
        const __m256i vx = LOAD16(x + k);
        acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(LOAD16(w[0] + k), vx));
        acc1 = _mm256_add_epi32(acc1, _mm256_madd_epi16(LOAD16(w[1] + k), vx));
        acc2 = _mm256_add_epi32(acc2, _mm256_madd_epi16(LOAD16(w[2] + k), vx));
        acc3 = _mm256_add_epi32(acc3, _mm256_madd_epi16(LOAD16(w[3] + k), vx));
#undef LOAD16
    }
    /* lanes: [a01 a23 b01 b23 | a45 a67 b45 b67], then [a b c d | a' b' c' d'] */
    const __m256i s01 = _mm256_hadd_epi32(acc0, acc1), s23 = _mm256_hadd_epi32(acc2, acc3);
    const __m256i s = _mm256_hadd_epi32(s01, s23);
    const __m128i total = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    _mm_storeu_si128((__m128i *)sums, total);
    for (int i = 0; i < 4; i++)
        sums[i] += rs_q8_dot_scalar(w[i] + k, x + k, count - k);
}

static int have_avx2(void)
{
    static int have = -1; /* -1: not asked yet; the answer never changes */
    if (have < 0) {
        __builtin_cpu_init();
        have = __builtin_cpu_supports("avx2") != 0;
    }
    return have;
}

int rs_q8_dot4_avx2(const int8_t *const w[4], const int8_t *x, int count, int32_t sums[4])
{
    if (!have_avx2())
        return 0;
    dot4_avx2(w, x, count, sums);
    return 1;
}

/* -1: not chosen yet (the processor's choice), else 1 AVX2, 0 scalar. */
static int use_avx2 = -1;

int rs_q8_select(int want)
{
    use_avx2 = want < 0 ? have_avx2() : (want && have_avx2());
    return use_avx2;
}

/* Chosen once per product. */
static dot4_kernel chosen_kernel(void)
{
    if (use_avx2 < 0)
        rs_q8_select(-1);
    return use_avx2 ? dot4_avx2 : rs_q8_dot4_scalar;
}
#else
int rs_q8_dot4_avx2(const int8_t *const w[4], const int8_t *x, int count, int32_t sums[4])
{
    return 0;
}

int rs_q8_select(int want)
{
    return 0;
}

static dot4_kernel chosen_kernel(void)
{
    return rs_q8_dot4_scalar;
}
#endif

/* ---- the product ---- */

static int shapes_agree(rs_mat y, rs_cmat x, const rs_q8_matrix *W, const int *ids,
                        const rs_q8_scratch *s)
{
    if (y.rows != x.rows || x.cols != W->cols || y.cols > y.stride || x.cols > x.stride ||
        (!ids && y.cols != W->rows) || x.rows > s->rows ||
        (size_t)x.rows * (size_t)x.cols > s->bytes) {
        char message[256];
        snprintf(message, sizeof message,
                 "rs_q8_forward: shapes do not agree: y [%d,%d] (stride %d) = x [%d,%d] "
                 "(stride %d) W [%d,%d]ᵀ (%s), scratch %zu bytes, %d rows",
                 y.rows, y.cols, y.stride, x.rows, x.cols, x.stride, W->rows, W->cols,
                 ids ? "chosen rows" : "all rows", s->bytes, s->rows);
        rs_shape_report(message);
        return 0;
    }
    for (int j = 0; ids && j < y.cols; j++)
        if (ids[j] < 0 || ids[j] >= W->rows) {
            char message[128];
            snprintf(message, sizeof message, "rs_q8_forward: row %d of %d chosen (ids[%d])",
                     ids[j], W->rows, j);
            rs_shape_report(message);
            return 0;
        }
    return 1;
}

void rs_q8_forward(rs_mat y, rs_cmat x, const rs_q8_matrix *W, const int *ids, const float *bias,
                   const rs_q8_scratch *s, float beta)
{
    if (!shapes_agree(y, x, W, ids, s))
        return;
    const int B = x.rows, in = x.cols, K = y.cols;
    const dot4_kernel dot4 = chosen_kernel();
    for (int b = 0; b < B; b++)
        rs_q8_quantize(s->x + (size_t)b * in, s->scale + b, x.data + (size_t)b * x.stride, in);
    /* Four rows of W at a time, all B inputs for each group: the rows are
     * read from memory once and stay in L1 for the B products, and each
     * input's int16 form serves four rows. A last group of fewer rows
     * repeats its last row (computed, not written). */
    for (int j0 = 0; j0 < K; j0 += 4) {
        const int count = K - j0 < 4 ? K - j0 : 4;
        int r[4];
        const int8_t *w[4];
        for (int i = 0; i < 4; i++) {
            const int j = j0 + (i < count ? i : count - 1);
            r[i] = ids ? ids[j] : j;
            w[i] = W->q + (size_t)r[i] * in;
        }
        for (int b = 0; b < B; b++) {
            int32_t sums[4];
            dot4(w, s->x + (size_t)b * in, in, sums);
            float *out = y.data + (size_t)b * y.stride + j0;
            for (int i = 0; i < count; i++) {
                const float v = W->scale[r[i]] * s->scale[b] * (float)sums[i];
                const float add = bias ? bias[r[i]] : 0.0f;
                out[i] = (beta != 0.0f ? out[i] : 0.0f) + v + add;
            }
        }
    }
}

void rs_q8_or_float_forward(rs_mat y, rs_cmat x, rs_cmat W, const rs_q8_matrix *q,
                            const rs_q8_scratch *s, float beta)
{
    if (q)
        rs_q8_forward(y, x, q, NULL, NULL, s, beta);
    else
        rs_matmul_forward(y, x, W, beta);
}
