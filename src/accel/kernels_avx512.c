/* The AVX-512 twins of nn/vecmath.h's kernels and of Adam's loop
 * (nn/optimizer.c): 16 floats at a time, lane by lane the same IEEE
 * operations in the same order as the portable loops (no FMA, no
 * reassociation), so they give the reference's bits. Reductions keep the
 * reference's 8 running sums (lane k takes i ≡ k mod 8): each block of 16
 * adds its low 8 lanes, then its high 8, into 8 accumulators, which is the
 * portable loop's order. Tails are masked lanes that repeat the loop (a
 * masked-off lane adds +0, which leaves a sum that cannot be −0 unchanged).
 * Compiled for AVX-512 function by function (target attributes), so the
 * rest of the program runs on any x86-64; chosen at run time where the
 * processor has avx512f, dq, bw and vl (accel/kernels.h). */
#include "accel/kernels.h"

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl")))

typedef __mmask16 mask16;

/* Lanes i < rem set (rem ≤ 16). */
static mask16 tail16(size_t rem)
{
    return (mask16)((1u << rem) - 1u);
}

/* BODY for i = 0, 16, 32, ... < count: m all lanes in the whole blocks (the
 * masked loads and stores become plain ones), the tail's lanes in the last. */
#define BLOCKS16(i, count, m, ...)                                                                 \
    for (i = 0; i + 16 <= (count); i += 16) {                                                      \
        const mask16 m = (mask16)0xffff;                                                           \
        __VA_ARGS__                                                                                \
    }                                                                                              \
    if (i < (count)) {                                                                             \
        const mask16 m = tail16((count)-i);                                                        \
        __VA_ARGS__                                                                                \
    }

AVX512 static __m512 reduce16(__m512 x, __m512 *n)
{
    *n = _mm512_sub_ps(_mm512_add_ps(_mm512_mul_ps(x, _mm512_set1_ps(RS_VM_LOG2E)),
                                     _mm512_set1_ps(RS_VM_ROUND_MAGIC)),
                       _mm512_set1_ps(RS_VM_ROUND_MAGIC));
    __m512 r = _mm512_sub_ps(x, _mm512_mul_ps(*n, _mm512_set1_ps(RS_VM_LN2_HI)));
    return _mm512_sub_ps(r, _mm512_mul_ps(*n, _mm512_set1_ps(RS_VM_LN2_LO)));
}

AVX512 static __m512 pow2i16(__m512 n)
{
    __m512i e = _mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127));
    return _mm512_castsi512_ps(_mm512_slli_epi32(e, 23));
}

#define HORNER(p, r, c) p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(c))

AVX512 static __m512 exp16(__m512 x)
{
    __m512 xc =
        _mm512_max_ps(_mm512_min_ps(x, _mm512_set1_ps(RS_VM_EXP_HI)), _mm512_set1_ps(RS_VM_EXP_LO));
    __m512 n, r = reduce16(xc, &n);
    __m512 p = _mm512_set1_ps(RS_VM_C7);
    HORNER(p, r, RS_VM_C6);
    HORNER(p, r, RS_VM_C5);
    HORNER(p, r, RS_VM_C4);
    HORNER(p, r, RS_VM_C3);
    HORNER(p, r, RS_VM_C2);
    __m512 e = _mm512_add_ps(_mm512_set1_ps(1.0f),
                             _mm512_add_ps(r, _mm512_mul_ps(_mm512_mul_ps(r, r), p)));
    e = _mm512_mul_ps(e, pow2i16(n));
    /* x < RS_VM_EXP_LO gives 0, NaN gives itself */
    const mask16 under = _mm512_cmp_ps_mask(x, _mm512_set1_ps(RS_VM_EXP_LO), _CMP_LT_OQ);
    e = _mm512_maskz_mov_ps((mask16)~under, e);
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), e, x);
}

AVX512 static __m512 tanh16(__m512 x)
{
    const __m512 sign = _mm512_set1_ps(-0.0f);
    __m512 ax = _mm512_andnot_ps(sign, x);
    __m512 y =
        _mm512_min_ps(_mm512_mul_ps(_mm512_set1_ps(2.0f), ax), _mm512_set1_ps(RS_VM_TANH_Y_MAX));
    __m512 n, r = reduce16(y, &n);
    __m512 p = _mm512_set1_ps(RS_VM_C8);
    HORNER(p, r, RS_VM_C7);
    HORNER(p, r, RS_VM_C6);
    HORNER(p, r, RS_VM_C5);
    HORNER(p, r, RS_VM_C4);
    HORNER(p, r, RS_VM_C3);
    HORNER(p, r, RS_VM_C2);
    __m512 q = _mm512_add_ps(r, _mm512_mul_ps(_mm512_mul_ps(r, r), p));
    __m512 s = pow2i16(n);
    __m512 e = _mm512_add_ps(_mm512_mul_ps(q, s), _mm512_sub_ps(s, _mm512_set1_ps(1.0f)));
    __m512 t = _mm512_div_ps(e, _mm512_add_ps(e, _mm512_set1_ps(2.0f)));
    /* x < 0 gives −t; −0 keeps t = +0 like the portable path. */
    const mask16 neg = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
    t = _mm512_mask_xor_ps(t, neg, t, sign);
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), t, x);
}

AVX512 static __m512 sigmoid16(__m512 x)
{
    __m512 e = exp16(_mm512_xor_ps(x, _mm512_set1_ps(-0.0f)));
    __m512 s = _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_add_ps(_mm512_set1_ps(1.0f), e));
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), s, x);
}

#define ELEMENTWISE(name, kernel)                                                                  \
    AVX512 static void name(float *y, const float *x, size_t count)                                \
    {                                                                                              \
        size_t i = 0;                                                                              \
        for (; i + 16 <= count; i += 16)                                                           \
            _mm512_storeu_ps(y + i, kernel(_mm512_loadu_ps(x + i)));                               \
        if (i < count) {                                                                           \
            const mask16 m = tail16(count - i);                                                    \
            _mm512_mask_storeu_ps(y + i, m, kernel(_mm512_maskz_loadu_ps(m, x + i)));              \
        }                                                                                          \
    }
ELEMENTWISE(vexp_avx512, exp16)
ELEMENTWISE(vtanh_avx512, tanh16)
ELEMENTWISE(vsigmoid_avx512, sigmoid16)

/* acc (8 lanes, lane k the sum of i ≡ k mod 8) += the 16 lanes of p, low
 * half first: the portable loop's order. */
AVX512 static __m256 add16to8(__m256 acc, __m512 p)
{
    acc = _mm256_add_ps(acc, _mm512_castps512_ps256(p));
    return _mm256_add_ps(acc, _mm512_extractf32x8_ps(p, 1));
}

/* The same in double: the 16 floats widened, low half first. */
AVX512 static __m512d add16to8d(__m512d acc, __m512 p)
{
    acc = _mm512_add_pd(acc, _mm512_cvtps_pd(_mm512_castps512_ps256(p)));
    return _mm512_add_pd(acc, _mm512_cvtps_pd(_mm512_extractf32x8_ps(p, 1)));
}

AVX512 static float fold8(__m256 acc)
{
    float a[8];
    _mm256_storeu_ps(a, acc);
    return rs_fold8(a);
}

AVX512 static double fold8d(__m512d acc)
{
    double a[8];
    _mm512_storeu_pd(a, acc);
    return rs_fold8d(a);
}

/* Each of 4 × 16 lanes keeps the largest x[i] it sees by the loop's ">" (a
 * NaN never wins). The largest of the lanes is the loop's answer unless it
 * is a zero (then its sign is the first zero's, which the loop finds) or
 * x[0] is NaN (which the loop keeps). Four registers: each step waits on
 * the last one's max. */
AVX512 static float vmax_avx512(const float *x, size_t count)
{
    if (count < 64 || x[0] != x[0])
        return rs_vec_portable.vmax(x, count);
    __m512 m[4];
    for (int r = 0; r < 4; r++)
        m[r] = _mm512_set1_ps(x[0]);
    size_t i = 0;
    for (; i + 64 <= count; i += 64)
        for (int r = 0; r < 4; r++) {
            const __m512 v = _mm512_loadu_ps(x + i + 16 * r);
            m[r] = _mm512_max_ps(v, m[r]); /* v > m ? v : m, false for a NaN v */
        }
    float a[64];
    for (int r = 0; r < 4; r++)
        _mm512_storeu_ps(a + 16 * r, m[r]);
    float max = rs_vec_portable.vmax(a, 64);
    for (; i < count; i++)
        if (x[i] > max)
            max = x[i];
    return max == 0.0f ? rs_vec_portable.vmax(x, count) : max;
}

/* As vmax_avx512, with each lane's first index; the lanes merged by value, a
 * tie going to the lower index: the scalar loop's first occurrence. */
AVX512 static size_t vargmax_avx512(const float *x, size_t count)
{
    if (count < 32 || x[0] != x[0])
        return rs_vec_portable.vargmax(x, count);
    __m512 best = _mm512_set1_ps(x[0]);
    __m512i at = _mm512_setzero_si512();
    __m512i idx = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i step = _mm512_set1_epi32(16);
    size_t i = 0;
    for (; i + 16 <= count; i += 16) {
        const __m512 v = _mm512_loadu_ps(x + i);
        const mask16 gt = _mm512_cmp_ps_mask(v, best, _CMP_GT_OQ);
        best = _mm512_mask_mov_ps(best, gt, v);
        at = _mm512_mask_mov_epi32(at, gt, idx);
        idx = _mm512_add_epi32(idx, step);
    }
    float bv[16];
    int bi[16];
    _mm512_storeu_ps(bv, best);
    _mm512_storeu_si512(bi, at);
    size_t arg = (size_t)bi[0];
    for (int k = 1; k < 16; k++)
        if (bv[k] > x[arg] || (bv[k] == x[arg] && (size_t)bi[k] < arg))
            arg = (size_t)bi[k];
    for (; i < count; i++)
        if (x[i] > x[arg])
            arg = i;
    return arg;
}

AVX512 static size_t vfirst_above_avx512(const float *x, float add, float bound, size_t from,
                                         size_t count)
{
    const __m512 a = _mm512_set1_ps(add), b = _mm512_set1_ps(bound);
    size_t i = from;
    for (; i < count; i += 16) {
        const mask16 m = count - i >= 16 ? (mask16)0xffff : tail16(count - i);
        /* not (x + add ≤ bound): unordered compares true, as the loop's ! does */
        const mask16 hit = _mm512_mask_cmp_ps_mask(
            m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, x + i), a), b, _CMP_NLE_UQ);
        if (hit)
            return i + (size_t)__builtin_ctz((unsigned)hit);
    }
    return count;
}

/* Σ exp(x − shift) in double (8 running sums), and the exps into y when y
 * is not NULL: the normaliser's loop and the softmax's, the same sum. */
AVX512 static double vexp_shift_avx512(float *y, const float *x, float shift, size_t count)
{
    __m512d acc = _mm512_setzero_pd();
    const __m512 sh = _mm512_set1_ps(shift);
    size_t i = 0;
    for (; i + 16 <= count; i += 16) {
        const __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(x + i), sh));
        if (y)
            _mm512_storeu_ps(y + i, e);
        acc = add16to8d(acc, e);
    }
    if (i < count) {
        const mask16 m = tail16(count - i);
        const __m512 e =
            _mm512_maskz_mov_ps(m, exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), sh)));
        if (y)
            _mm512_mask_storeu_ps(y + i, m, e);
        acc = add16to8d(acc, e);
    }
    return fold8d(acc);
}

AVX512 static double vexp_shift_total_avx512(const float *x, float shift, size_t count)
{
    return vexp_shift_avx512(NULL, x, shift, count);
}

AVX512 static float vtanh_add_dot_avx512(float *phi, const float *q, const float *key,
                                         const float *v, size_t count)
{
    __m256 acc = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 16 <= count; i += 16) {
        __m512 th = tanh16(_mm512_add_ps(_mm512_loadu_ps(q + i), _mm512_loadu_ps(key + i)));
        _mm512_storeu_ps(phi + i, th);
        acc = add16to8(acc, _mm512_mul_ps(_mm512_loadu_ps(v + i), th));
    }
    if (i < count) {
        const mask16 m = tail16(count - i);
        __m512 th = tanh16(
            _mm512_add_ps(_mm512_maskz_loadu_ps(m, q + i), _mm512_maskz_loadu_ps(m, key + i)));
        _mm512_mask_storeu_ps(phi + i, m, th);
        acc = add16to8(acc, _mm512_maskz_mul_ps(m, _mm512_maskz_loadu_ps(m, v + i), th));
    }
    return fold8(acc);
}

/* dv += de phi; dq, dkey += (de v)(1 − phi²): 16 lanes, the tail masked. */
AVX512 static void tanh_back16(float *dq, float *dkey, float *dv, const float *phi, const float *v,
                               __m512 d, mask16 m)
{
    const __m512 phik = _mm512_maskz_loadu_ps(m, phi);
    _mm512_mask_storeu_ps(dv, m,
                          _mm512_add_ps(_mm512_maskz_loadu_ps(m, dv), _mm512_mul_ps(d, phik)));
    const __m512 dpre =
        _mm512_mul_ps(_mm512_mul_ps(d, _mm512_maskz_loadu_ps(m, v)),
                      _mm512_sub_ps(_mm512_set1_ps(1.0f), _mm512_mul_ps(phik, phik)));
    _mm512_mask_storeu_ps(dq, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, dq), dpre));
    _mm512_mask_storeu_ps(dkey, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, dkey), dpre));
}

AVX512 static void vtanh_add_dot_backward_avx512(float *dq, float *dkey, float *dv,
                                                 const float *phi, const float *v, float de,
                                                 size_t count)
{
    const __m512 d = _mm512_set1_ps(de);
    size_t k = 0;
    for (; k + 16 <= count; k += 16)
        tanh_back16(dq + k, dkey + k, dv + k, phi + k, v + k, d, (mask16)0xffff);
    if (k < count)
        tanh_back16(dq + k, dkey + k, dv + k, phi + k, v + k, d, tail16(count - k));
}

AVX512 static void vscale_shift_avx512(float *y, float scale, float shift, size_t count)
{
    const __m512 a = _mm512_set1_ps(scale), b = _mm512_set1_ps(shift);
    size_t i;
    BLOCKS16(i, count, m, {
        _mm512_mask_storeu_ps(y + i, m,
                              _mm512_mul_ps(a, _mm512_sub_ps(_mm512_maskz_loadu_ps(m, y + i), b)));
    })
}

AVX512 static float vdot_avx512(const float *x, const float *y, size_t count)
{
    __m256 acc = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 16 <= count; i += 16)
        acc = add16to8(acc, _mm512_mul_ps(_mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i)));
    if (i < count) {
        const mask16 m = tail16(count - i);
        acc = add16to8(
            acc, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), _mm512_maskz_loadu_ps(m, y + i)));
    }
    return fold8(acc);
}

AVX512 static void vaxpy_avx512(float *y, float alpha, const float *x, size_t count)
{
    const __m512 a = _mm512_set1_ps(alpha);
    size_t i;
    BLOCKS16(i, count, m, {
        _mm512_mask_storeu_ps(y + i, m,
                              _mm512_add_ps(_mm512_maskz_loadu_ps(m, y + i),
                                            _mm512_mul_ps(a, _mm512_maskz_loadu_ps(m, x + i))));
    })
}

AVX512 static double vsumsq_avx512(const float *x, size_t count)
{
    __m512d acc = _mm512_setzero_pd();
    size_t i;
    BLOCKS16(i, count, m, {
        const __m512 e = _mm512_maskz_loadu_ps(m, x + i);
        const __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(e));
        const __m512d hi = _mm512_cvtps_pd(_mm512_extractf32x8_ps(e, 1));
        acc = _mm512_add_pd(acc, _mm512_mul_pd(lo, lo));
        acc = _mm512_add_pd(acc, _mm512_mul_pd(hi, hi));
    })
    return fold8d(acc);
}

/* Columns k..k+63 of Σ_j w[j] row_j in four registers over all rows (each
 * sum from +0 in the order of j, as the portable loop), then 16 at a time,
 * the last masked. */
AVX512 static void vweighted_sum_avx512(float *y, const float *w, const float *rows, size_t stride,
                                        size_t nrows, size_t count)
{
    size_t k = 0;
    for (; k + 64 <= count; k += 64) {
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (size_t j = 0; j < nrows; j++) {
            const __m512 wj = _mm512_set1_ps(w[j]);
            const float *r = rows + j * stride + k;
            a0 = _mm512_add_ps(a0, _mm512_mul_ps(wj, _mm512_loadu_ps(r)));
            a1 = _mm512_add_ps(a1, _mm512_mul_ps(wj, _mm512_loadu_ps(r + 16)));
            a2 = _mm512_add_ps(a2, _mm512_mul_ps(wj, _mm512_loadu_ps(r + 32)));
            a3 = _mm512_add_ps(a3, _mm512_mul_ps(wj, _mm512_loadu_ps(r + 48)));
        }
        _mm512_storeu_ps(y + k, a0);
        _mm512_storeu_ps(y + k + 16, a1);
        _mm512_storeu_ps(y + k + 32, a2);
        _mm512_storeu_ps(y + k + 48, a3);
    }
    for (; k < count; k += 16) {
        const mask16 m = count - k >= 16 ? (mask16)0xffff : tail16(count - k);
        __m512 a0 = _mm512_setzero_ps();
        for (size_t j = 0; j < nrows; j++)
            a0 = _mm512_add_ps(a0, _mm512_mul_ps(_mm512_set1_ps(w[j]),
                                                 _mm512_maskz_loadu_ps(m, rows + j * stride + k)));
        _mm512_mask_storeu_ps(y + k, m, a0);
    }
}

/* One row j of the backward, columns k..k+15 (m the live lanes): the dot's
 * 8 running sums s, and drow += w dy. */
AVX512 static __m256 weighted_back16(__m256 s, float *drow, const float *row, __m512 d, __m512 wj,
                                     mask16 m)
{
    _mm512_mask_storeu_ps(drow, m,
                          _mm512_add_ps(_mm512_maskz_loadu_ps(m, drow), _mm512_mul_ps(wj, d)));
    return add16to8(s, _mm512_mul_ps(d, _mm512_maskz_loadu_ps(m, row)));
}

/* Two rows at a time (two independent running sums: a dot's additions wait
 * on each other), each row's dot in its own 8 lanes as vdot_avx512. */
AVX512 static void vweighted_sum_backward_avx512(float *dw, float *drows, const float *dy,
                                                 const float *rows, const float *w, size_t stride,
                                                 size_t nrows, size_t count)
{
    size_t j = 0;
    for (; j + 2 <= nrows; j += 2) {
        const float *r0 = rows + j * stride, *r1 = r0 + stride;
        float *d0 = drows + j * stride, *d1 = d0 + stride;
        const __m512 w0 = _mm512_set1_ps(w[j]), w1 = _mm512_set1_ps(w[j + 1]);
        __m256 s0 = _mm256_setzero_ps(), s1 = s0;
        size_t k;
        BLOCKS16(k, count, m, {
            const __m512 d = _mm512_maskz_loadu_ps(m, dy + k);
            s0 = weighted_back16(s0, d0 + k, r0 + k, d, w0, m);
            s1 = weighted_back16(s1, d1 + k, r1 + k, d, w1, m);
        })
        dw[j] = fold8(s0);
        dw[j + 1] = fold8(s1);
    }
    if (j < nrows) {
        dw[j] = vdot_avx512(dy, rows + j * stride, count);
        vaxpy_avx512(drows + j * stride, w[j], dy, count);
    }
}

/* Eight rows at a time: 16 columns of y in a register take the rows' adds
 * in their order (y + 1·x, as rs_vaxpy), y read and written once per 8
 * rows; the last columns masked. */
AVX512 static void vadd_rows_avx512(float *y, const float *rows, size_t stride, size_t nrows,
                                    size_t count)
{
    const __m512 one = _mm512_set1_ps(1.0f);
    for (size_t j = 0; j < nrows; j += 8) {
        const float *r = rows + j * stride;
        const size_t group = nrows - j < 8 ? nrows - j : 8;
        size_t k;
        BLOCKS16(k, count, m, {
            __m512 acc = _mm512_maskz_loadu_ps(m, y + k);
            for (size_t g = 0; g < group; g++)
                acc = _mm512_add_ps(
                    acc, _mm512_mul_ps(one, _mm512_maskz_loadu_ps(m, r + g * stride + k)));
            _mm512_mask_storeu_ps(y + k, m, acc);
        })
    }
}

AVX512 static void vgru_gates_avx512(float *zr, float *rh, const float *hp, size_t n)
{
    vsigmoid_avx512(zr, zr, n);
    size_t k;
    BLOCKS16(k, n, m, {
        const __m512 r = sigmoid16(_mm512_maskz_loadu_ps(m, zr + n + k));
        _mm512_mask_storeu_ps(zr + n + k, m, r);
        _mm512_mask_storeu_ps(rh + k, m, _mm512_mul_ps(r, _mm512_maskz_loadu_ps(m, hp + k)));
    })
}

AVX512 static void vgru_state_avx512(float *h, float *g, const float *z, const float *hp,
                                     float mask, size_t n)
{
    const __m512 one = _mm512_set1_ps(1.0f);
    size_t k;
    BLOCKS16(k, n, m, {
        const __m512 gk = tanh16(_mm512_maskz_loadu_ps(m, g + k)),
                     zk = _mm512_maskz_loadu_ps(m, z + k), hpk = _mm512_maskz_loadu_ps(m, hp + k);
        _mm512_mask_storeu_ps(g + k, m, gk);
        _mm512_mask_storeu_ps(
            h + k, m,
            mask != 0.0f
                ? _mm512_add_ps(_mm512_mul_ps(_mm512_sub_ps(one, zk), hpk), _mm512_mul_ps(zk, gk))
                : hpk);
    })
}

AVX512 static void vgru_state_backward_avx512(float *dxz, float *dxg, float *dhp, const float *z,
                                              const float *g, const float *hp, const float *dh,
                                              size_t n)
{
    const __m512 one = _mm512_set1_ps(1.0f);
    size_t k;
    BLOCKS16(k, n, m, {
        const __m512 dhk = _mm512_maskz_loadu_ps(m, dh + k), zk = _mm512_maskz_loadu_ps(m, z + k),
                     gk = _mm512_maskz_loadu_ps(m, g + k);
        const __m512 dz = _mm512_mul_ps(dhk, _mm512_sub_ps(gk, _mm512_maskz_loadu_ps(m, hp + k)));
        const __m512 dg = _mm512_mul_ps(dhk, zk), omz = _mm512_sub_ps(one, zk);
        _mm512_mask_storeu_ps(
            dhp + k, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, dhp + k), _mm512_mul_ps(dhk, omz)));
        _mm512_mask_storeu_ps(dxz + k, m, _mm512_mul_ps(_mm512_mul_ps(dz, zk), omz));
        _mm512_mask_storeu_ps(dxg + k, m,
                              _mm512_mul_ps(dg, _mm512_sub_ps(one, _mm512_mul_ps(gk, gk))));
    })
}

AVX512 static void vgru_reset_backward_avx512(float *dxr, float *dhp, const float *r,
                                              const float *hp, const float *drh, size_t n)
{
    const __m512 one = _mm512_set1_ps(1.0f);
    size_t k;
    BLOCKS16(k, n, m, {
        const __m512 d = _mm512_maskz_loadu_ps(m, drh + k), rk = _mm512_maskz_loadu_ps(m, r + k);
        const __m512 dr = _mm512_mul_ps(d, _mm512_maskz_loadu_ps(m, hp + k));
        _mm512_mask_storeu_ps(
            dhp + k, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, dhp + k), _mm512_mul_ps(d, rk)));
        _mm512_mask_storeu_ps(dxr + k, m,
                              _mm512_mul_ps(_mm512_mul_ps(dr, rk), _mm512_sub_ps(one, rk)));
    })
}

/* rs_adam_portable 16 entries at a time, the same operations in the same
 * order, the tail masked. */
AVX512 static void adam_avx512(float *params, const float *grads, float grad_scale, float *m,
                               float *v, size_t count, const rs_adam_coeffs *k)
{
    const __m512 gs = _mm512_set1_ps(grad_scale), b1 = _mm512_set1_ps(k->beta1),
                 b2 = _mm512_set1_ps(k->beta2), ob1 = _mm512_set1_ps(1.0f - k->beta1),
                 ob2 = _mm512_set1_ps(1.0f - k->beta2), vc1 = _mm512_set1_ps(k->c1),
                 vc2 = _mm512_set1_ps(k->c2), ve = _mm512_set1_ps(k->eps),
                 vlr = _mm512_set1_ps(k->lr);
    size_t i;
    BLOCKS16(i, count, t, {
        __m512 g = _mm512_mul_ps(gs, _mm512_maskz_loadu_ps(t, grads + i));
        __m512 mi = _mm512_add_ps(_mm512_mul_ps(b1, _mm512_maskz_loadu_ps(t, m + i)),
                                  _mm512_mul_ps(ob1, g));
        __m512 vi = _mm512_add_ps(_mm512_mul_ps(b2, _mm512_maskz_loadu_ps(t, v + i)),
                                  _mm512_mul_ps(_mm512_mul_ps(ob2, g), g));
        _mm512_mask_storeu_ps(m + i, t, mi);
        _mm512_mask_storeu_ps(v + i, t, vi);
        __m512 den = _mm512_add_ps(_mm512_sqrt_ps(_mm512_div_ps(vi, vc2)), ve);
        __m512 st = _mm512_div_ps(_mm512_mul_ps(vlr, _mm512_div_ps(mi, vc1)), den);
        _mm512_mask_storeu_ps(params + i, t,
                              _mm512_sub_ps(_mm512_maskz_loadu_ps(t, params + i), st));
    })
}

static const rs_vec_kernels avx512_kernels = {
    .vexp = vexp_avx512,
    .vtanh = vtanh_avx512,
    .vsigmoid = vsigmoid_avx512,
    .vmax = vmax_avx512,
    .vargmax = vargmax_avx512,
    .vfirst_above = vfirst_above_avx512,
    .vexp_shift_sum = vexp_shift_avx512,
    .vexp_shift_total = vexp_shift_total_avx512,
    .vtanh_add_dot = vtanh_add_dot_avx512,
    .vtanh_add_dot_backward = vtanh_add_dot_backward_avx512,
    .vscale_shift = vscale_shift_avx512,
    .vdot = vdot_avx512,
    .vaxpy = vaxpy_avx512,
    .vsumsq = vsumsq_avx512,
    .vweighted_sum = vweighted_sum_avx512,
    .vweighted_sum_backward = vweighted_sum_backward_avx512,
    .vadd_rows = vadd_rows_avx512,
    .vgru_gates = vgru_gates_avx512,
    .vgru_state = vgru_state_avx512,
    .vgru_state_backward = vgru_state_backward_avx512,
    .vgru_reset_backward = vgru_reset_backward_avx512,
    .adam = adam_avx512,
};

const rs_vec_kernels *rs_vec_avx512(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                   __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")
               ? &avx512_kernels
               : NULL;
}
#else
const rs_vec_kernels *rs_vec_avx512(void)
{
    return NULL;
}
#endif
