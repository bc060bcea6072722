/* int8 weights and their products; int8.h has the equations and the error
 * bound. The dot product is the kernel: AVX2 multiplies 32 int8 pairs at a
 * time with _mm256_maddubs_epi16 on |x| and w with x's sign (exact because
 * both sides are in [−127, 127], see Q8_STEP), four weight rows against two
 * input rows in registers (eight rows against one at batch 1), a chunk of
 * 16 rows a call; a C loop where AVX2 is absent gives the same int32 sums.
 * The input is quantized by AVX2 too, byte for byte as by rs_q8_quantize. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accel/int8.h"

/* The kernel for this processor: sums[b·R + j] = Σ_k w[j][k] x[b·stride + k]
 * for R weight rows w[j] (R a multiple of 4) and nb input rows, count
 * entries each. */
typedef void (*rows_kernel)(const int8_t *const *w, int R, const int8_t *x, int stride, int nb,
                            int count, int32_t *sums);
static rows_kernel chosen_kernel(void);

/* The input's quantizer for this processor (rs_q8_quantize, or the same by
 * AVX2, byte for byte). */
typedef void (*quantizer)(int8_t *p, float *t, const float *x, int count);
static quantizer chosen_quantizer(void);

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

static void rows_scalar(const int8_t *const *w, int R, const int8_t *x, int stride, int nb,
                        int count, int32_t *sums)
{
    for (int b = 0; b < nb; b++)
        for (int j = 0; j < R; j++)
            sums[b * R + j] = rs_q8_dot_scalar(w[j], x + (size_t)b * stride, count);
}

void rs_q8_dot4xn_scalar(const int8_t *const w[4], const int8_t *x, int stride, int nb, int count,
                         int32_t *sums)
{
    rows_scalar(w, 4, x, stride, nb, count, sums);
}

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))

#define LOAD32(p) _mm256_loadu_si256((const __m256i *)(p))

/* acc += Σ over pairs of 32 products w·x, as 8 int32 lanes, exact (ggml's
 * q8 dot product): maddubs multiplies |x| (as u8) by w with x's sign (s8)
 * and adds neighbours, |w x + w' x'| ≤ 2 · 127² = 32258 < 2¹⁵, so its
 * int16 sums never saturate; madd by ones widens pairs of them to int32.
 * Exact only because neither side is ever −128 (whose sign cannot be
 * flipped in int8, and 2 · 128² saturates): round_q8 clamps both the
 * weights and the inputs to [−127, 127]. ax = |x|, computed once per x. */
#define Q8_STEP(acc, wv, xv, ax)                                                                   \
    acc = _mm256_add_epi32(                                                                        \
        acc, _mm256_madd_epi16(_mm256_maddubs_epi16(ax, _mm256_sign_epi8(wv, xv)), ones))

/* [Σ acc[0], Σ acc[1], Σ acc[2], Σ acc[3]] into out[0..3]: lanes after the
 * first hadds [a01 a23 b01 b23 | a45 a67 b45 b67], after the third
 * [a b c d | a' b' c' d']. */
AVX2 static inline void reduce4(const __m256i acc[4], int32_t out[4])
{
    const __m256i s01 = _mm256_hadd_epi32(acc[0], acc[1]);
    const __m256i s23 = _mm256_hadd_epi32(acc[2], acc[3]);
    const __m256i s = _mm256_hadd_epi32(s01, s23);
    const __m128i total = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    _mm_storeu_si128((__m128i *)out, total);
}

/* Four weight rows against one input row, 32 entries a round; the last
 * count mod 32 by the scalar loop. Integer sums: the same in any order.
 * (The rows' pointers are copied to locals and the accumulators kept in an
 * array: so GCC keeps all of them in registers, without copies.) */
AVX2 static inline __attribute__((always_inline)) void dot4_avx2(const int8_t *const w[4],
                                                                 const int8_t *x, int count,
                                                                 int32_t sums[4])
{
    const __m256i ones = _mm256_set1_epi16(1);
    const int8_t *w0 = w[0], *w1 = w[1], *w2 = w[2], *w3 = w[3];
    __m256i acc[4];
    for (int i = 0; i < 4; i++)
        acc[i] = _mm256_setzero_si256();
    int k = 0;
    for (; k + 32 <= count; k += 32) {
        const __m256i xv = LOAD32(x + k), ax = _mm256_abs_epi8(xv);
        Q8_STEP(acc[0], LOAD32(w0 + k), xv, ax);
        Q8_STEP(acc[1], LOAD32(w1 + k), xv, ax);
        Q8_STEP(acc[2], LOAD32(w2 + k), xv, ax);
        Q8_STEP(acc[3], LOAD32(w3 + k), xv, ax);
    }
    reduce4(acc, sums);
    for (int i = 0; k < count && i < 4; i++)
        sums[i] += rs_q8_dot_scalar(w[i] + k, x + k, count - k);
}

/* Eight weight rows against one input row (batch 1): x and |x| loaded once
 * for eight rows. Registers: 8 accumulators, x, |x|, a product and ones. */
AVX2 static inline __attribute__((always_inline)) void dot8_avx2(const int8_t *const w[8],
                                                                 const int8_t *x, int count,
                                                                 int32_t sums[8])
{
    const __m256i ones = _mm256_set1_epi16(1);
    const int8_t *w0 = w[0], *w1 = w[1], *w2 = w[2], *w3 = w[3];
    const int8_t *w4 = w[4], *w5 = w[5], *w6 = w[6], *w7 = w[7];
    __m256i a[8];
    for (int i = 0; i < 8; i++)
        a[i] = _mm256_setzero_si256();
    int k = 0;
    for (; k + 32 <= count; k += 32) {
        const __m256i xv = LOAD32(x + k), ax = _mm256_abs_epi8(xv);
        Q8_STEP(a[0], LOAD32(w0 + k), xv, ax);
        Q8_STEP(a[1], LOAD32(w1 + k), xv, ax);
        Q8_STEP(a[2], LOAD32(w2 + k), xv, ax);
        Q8_STEP(a[3], LOAD32(w3 + k), xv, ax);
        Q8_STEP(a[4], LOAD32(w4 + k), xv, ax);
        Q8_STEP(a[5], LOAD32(w5 + k), xv, ax);
        Q8_STEP(a[6], LOAD32(w6 + k), xv, ax);
        Q8_STEP(a[7], LOAD32(w7 + k), xv, ax);
    }
    reduce4(a, sums);
    reduce4(a + 4, sums + 4);
    for (int i = 0; k < count && i < 8; i++)
        sums[i] += rs_q8_dot_scalar(w[i] + k, x + k, count - k);
}

/* Four weight rows against two input rows x, y = x + stride (into sx[0..3]
 * and sy[0..3]):
 * each loaded weight vector serves both inputs. Registers: 8 accumulators
 * (a[i] row i with x, a[4 + i] with y), the two inputs and their |x|, a
 * weight, a product and ones, of 16. */
AVX2 static inline __attribute__((always_inline)) void dot4x2_avx2(const int8_t *const w[4],
                                                                   const int8_t *x, int stride,
                                                                   int count, int32_t sx[4],
                                                                   int32_t sy[4])
{
    const __m256i ones = _mm256_set1_epi16(1);
    const int8_t *y = x + stride;
    const int8_t *w0 = w[0], *w1 = w[1], *w2 = w[2], *w3 = w[3];
    __m256i a[8];
    for (int i = 0; i < 8; i++)
        a[i] = _mm256_setzero_si256();
    int k = 0;
    for (; k + 32 <= count; k += 32) {
        const __m256i xv = LOAD32(x + k), ax = _mm256_abs_epi8(xv);
        const __m256i yv = LOAD32(y + k), ay = _mm256_abs_epi8(yv);
        __m256i wv = LOAD32(w0 + k);
        Q8_STEP(a[0], wv, xv, ax);
        Q8_STEP(a[4], wv, yv, ay);
        wv = LOAD32(w1 + k);
        Q8_STEP(a[1], wv, xv, ax);
        Q8_STEP(a[5], wv, yv, ay);
        wv = LOAD32(w2 + k);
        Q8_STEP(a[2], wv, xv, ax);
        Q8_STEP(a[6], wv, yv, ay);
        wv = LOAD32(w3 + k);
        Q8_STEP(a[3], wv, xv, ax);
        Q8_STEP(a[7], wv, yv, ay);
    }
    reduce4(a, sx);
    reduce4(a + 4, sy);
    for (int i = 0; k < count && i < 4; i++) {
        sx[i] += rs_q8_dot_scalar(w[i] + k, x + k, count - k);
        sy[i] += rs_q8_dot_scalar(w[i] + k, y + k, count - k);
    }
}

/* R weight rows, four at a time, against nb input rows, two at a time,
 * the odd one alone (sums [nb,R]); one input row against eight weight rows
 * at a time: one call for a chunk of rows, so the
 * per-call costs are shared by R / 4 groups. */
AVX2 static void rows_avx2(const int8_t *const *w, int R, const int8_t *x, int stride, int nb,
                           int count, int32_t *sums)
{
    if (nb == 1) { /* eight rows at a time, the last four alone */
        int j = 0;
        for (; j + 8 <= R; j += 8)
            dot8_avx2(w + j, x, count, sums + j);
        if (j < R)
            dot4_avx2(w + j, x, count, sums + j);
        return;
    }
    for (int j = 0; j < R; j += 4) {
        int b = 0;
        for (; b + 2 <= nb; b += 2)
            dot4x2_avx2(w + j, x + (size_t)b * stride, stride, count, sums + b * R + j,
                        sums + (b + 1) * R + j);
        if (b < nb)
            dot4_avx2(w + j, x + (size_t)b * stride, count, sums + b * R + j);
    }
}

/* rs_q8_quantize, 8 entries a round, giving its bytes exactly: the same
 * float operations in the same order on each entry (the largest finite |x|
 * is the same whatever the order; v = x · inv; |v| + 0.5 truncated, its
 * sign restored; |v| ≥ 127 clamped to 127; NaN and non-finite x to 0). */
AVX2 static void quantize_avx2(int8_t *p, float *t, const float *x, int count)
{
    const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const __m256 inf = _mm256_set1_ps(INFINITY);
    __m256 vmax = _mm256_setzero_ps();
    int k = 0;
    for (; k + 8 <= count; k += 8) {
        const __m256 a = _mm256_and_ps(_mm256_loadu_ps(x + k), absmask);
        vmax = _mm256_max_ps(vmax, _mm256_and_ps(a, _mm256_cmp_ps(a, inf, _CMP_LT_OQ)));
    }
    float lanes[8], max = 0.0f;
    _mm256_storeu_ps(lanes, vmax);
    for (int i = 0; i < 8; i++)
        max = lanes[i] > max ? lanes[i] : max;
    for (int i = k; i < count; i++) {
        const float a = fabsf(x[i]);
        if (a > max && isfinite(a))
            max = a;
    }
    *t = max / 127.0f;
    if (max == 0.0f) {
        memset(p, 0, (size_t)count);
        return;
    }
    const float inv = 127.0f / max;
    const __m256 vinv = _mm256_set1_ps(inv), c127 = _mm256_set1_ps(127.0f),
                 half = _mm256_set1_ps(0.5f), zero = _mm256_setzero_ps();
    for (k = 0; k + 8 <= count; k += 8) {
        const __m256 xv = _mm256_loadu_ps(x + k), v = _mm256_mul_ps(xv, vinv);
        const __m256 a = _mm256_and_ps(v, absmask);
        /* min(a, 127) is 127 for NaN a too: masked below */
        __m256i r = _mm256_cvttps_epi32(_mm256_add_ps(_mm256_min_ps(a, c127), half));
        const __m256i neg = _mm256_castps_si256(_mm256_cmp_ps(v, zero, _CMP_LT_OQ));
        r = _mm256_blendv_epi8(r, _mm256_sub_epi32(_mm256_setzero_si256(), r), neg);
        const __m256 keep =
            _mm256_and_ps(_mm256_cmp_ps(_mm256_and_ps(xv, absmask), inf, _CMP_LT_OQ),
                          _mm256_cmp_ps(v, v, _CMP_ORD_Q));
        r = _mm256_and_si256(r, _mm256_castps_si256(keep));
        const __m128i r16 =
            _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
        _mm_storel_epi64((__m128i *)(p + k), _mm_packs_epi16(r16, r16));
    }
    for (; k < count; k++)
        p[k] = isfinite(x[k]) ? round_q8(x[k] * inv) : 0;
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
    rows_avx2(w, 4, x, count, 1, count, sums);
    return 1;
}

int rs_q8_dot4xn_avx2(const int8_t *const w[4], const int8_t *x, int stride, int nb, int count,
                      int32_t *sums)
{
    if (!have_avx2())
        return 0;
    rows_avx2(w, 4, x, stride, nb, count, sums);
    return 1;
}

int rs_q8_quantize_avx2(int8_t *p, float *t, const float *x, int count)
{
    if (!have_avx2())
        return 0;
    quantize_avx2(p, t, x, count);
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
static rows_kernel chosen_kernel(void)
{
    if (use_avx2 < 0)
        rs_q8_select(-1);
    return use_avx2 ? rows_avx2 : rows_scalar;
}

static quantizer chosen_quantizer(void)
{
    if (use_avx2 < 0)
        rs_q8_select(-1);
    return use_avx2 ? quantize_avx2 : rs_q8_quantize;
}
#else
int rs_q8_dot4_avx2(const int8_t *const w[4], const int8_t *x, int count, int32_t sums[4])
{
    return 0;
}

int rs_q8_dot4xn_avx2(const int8_t *const w[4], const int8_t *x, int stride, int nb, int count,
                      int32_t *sums)
{
    return 0;
}

int rs_q8_select(int want)
{
    return 0;
}

int rs_q8_quantize_avx2(int8_t *p, float *t, const float *x, int count)
{
    return 0;
}

static rows_kernel chosen_kernel(void)
{
    return rows_scalar;
}

static quantizer chosen_quantizer(void)
{
    return rs_q8_quantize;
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

/* A chunk of up to CHUNK rows of W, rows j0..j0+count−1 of the product:
 * their int8 values (R of them, count rounded up to 4, the last row
 * repeated: computed, not written), scales s_r and biases (0 without). The
 * bias is the output column's, bias[j], not W's row's: a shortlist gathers
 * its words' biases in column order, and reading them by word id would be
 * another word's bias or past the array. */
enum { CHUNK = 16 };
typedef struct {
    const int8_t *w[CHUNK];
    float scale[CHUNK], bias[CHUNK];
    int count, R;
} q8_chunk;

static void chunk_make(q8_chunk *c, const rs_q8_matrix *W, const int *ids, const float *bias,
                       int j0, int K)
{
    c->count = K - j0 < CHUNK ? K - j0 : CHUNK;
    c->R = (c->count + 3) / 4 * 4;
    if (!ids && c->count == CHUNK) { /* the common case, without branches */
        for (int i = 0; i < CHUNK; i++) {
            c->w[i] = W->q + (size_t)(j0 + i) * W->cols;
            c->bias[i] = 0.0f;
        }
        memcpy(c->scale, W->scale + j0, sizeof c->scale);
        if (bias)
            memcpy(c->bias, bias + j0, sizeof c->bias);
        return;
    }
    for (int i = 0; i < c->R; i++) {
        const int j = j0 + (i < c->count ? i : c->count - 1), r = ids ? ids[j] : j;
        c->w[i] = W->q + (size_t)r * W->cols;
        c->scale[i] = W->scale[r];
        c->bias[i] = bias ? bias[j] : 0.0f;
    }
}

/* y[b0 + b, j0 + i] = (beta y + s_r t_b Σ) + bias for i < count, b < nb, Σ
 * from sums [nb][R]. Four at a time where four are left, in local arrays,
 * so the compiler can keep them in one vector register. */
static void scale_sums(rs_mat y, const int32_t *sums, int nb, int b0, int j0, const q8_chunk *c,
                       const float *t, float beta)
{
    for (int b = 0; b < nb; b++) {
        float *out = y.data + (size_t)(b0 + b) * y.stride + j0;
        const int32_t *sb = sums + b * c->R;
        const float tb = t[b0 + b];
        int i0 = 0;
        for (; i0 + 4 <= c->count; i0 += 4) {
            float o[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            if (beta != 0.0f)
                memcpy(o, out + i0, sizeof o);
            for (int i = 0; i < 4; i++)
                o[i] = o[i] + c->scale[i0 + i] * tb * (float)sb[i0 + i] + c->bias[i0 + i];
            memcpy(out + i0, o, sizeof o);
        }
        for (int i = i0; i < c->count; i++)
            out[i] = (beta != 0.0f ? out[i] : 0.0f) + c->scale[i] * tb * (float)sb[i] + c->bias[i];
    }
}

void rs_q8_forward(rs_mat y, rs_cmat x, const rs_q8_matrix *W, const int *ids, const float *bias,
                   const rs_q8_scratch *s, float beta)
{
    if (!shapes_agree(y, x, W, ids, s))
        return;
    const int B = x.rows, in = x.cols, K = y.cols;
    const rows_kernel dot = chosen_kernel();
    const quantizer quantize = chosen_quantizer();
    for (int b = 0; b < B; b++)
        quantize(s->x + (size_t)b * in, s->scale + b, x.data + (size_t)b * x.stride, in);
    /* CHUNK rows of W at a time, all B inputs for each chunk, NB inputs a
     * call: the rows are read from memory once and stay in L1 (16 · in
     * bytes) for the B products. */
    enum { NB = 8 };
    for (int j0 = 0; j0 < K; j0 += CHUNK) {
        q8_chunk c;
        chunk_make(&c, W, ids, bias, j0, K);
        for (int b0 = 0; b0 < B; b0 += NB) {
            const int nb = B - b0 < NB ? B - b0 : NB;
            int32_t sums[NB * CHUNK];
            dot(c.w, c.R, s->x + (size_t)b0 * in, in, nb, in, sums);
            scale_sums(y, sums, nb, b0, j0, &c, s->scale, beta);
        }
    }
}
