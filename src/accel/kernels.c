/* The AVX2 twins of nn/vecmath.h's kernels and of Adam's loop
 * (nn/optimizer.c): 8 floats at a time, the same IEEE operations in the same
 * order as the portable loops (no FMA, no reassociation; reductions keep 8
 * lanes and fold them by rs_fold8), so they give the reference's bits; tails
 * shorter than 8 go to the portable loops themselves or to masked lanes that
 * repeat them. Chosen at run time where the processor has AVX2. */
#include "accel/kernels.h"

#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && defined(__x86_64__)
#define RS_HAVE_AVX2_PATH 1
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))

/* Lanes i < rem set (all ones), the rest clear. */
AVX2 static __m256i tail_mask(size_t rem)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)rem),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

AVX2 static __m256 reduce8(__m256 x, __m256 *n)
{
    *n = _mm256_sub_ps(_mm256_add_ps(_mm256_mul_ps(x, _mm256_set1_ps(RS_VM_LOG2E)),
                                     _mm256_set1_ps(RS_VM_ROUND_MAGIC)),
                       _mm256_set1_ps(RS_VM_ROUND_MAGIC));
    __m256 r = _mm256_sub_ps(x, _mm256_mul_ps(*n, _mm256_set1_ps(RS_VM_LN2_HI)));
    return _mm256_sub_ps(r, _mm256_mul_ps(*n, _mm256_set1_ps(RS_VM_LN2_LO)));
}

AVX2 static __m256 pow2i8(__m256 n)
{
    __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
}

#define HORNER(p, r, c) p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(c))

AVX2 static __m256 exp8(__m256 x)
{
    __m256 xc =
        _mm256_max_ps(_mm256_min_ps(x, _mm256_set1_ps(RS_VM_EXP_HI)), _mm256_set1_ps(RS_VM_EXP_LO));
    __m256 n, r = reduce8(xc, &n);
    __m256 p = _mm256_set1_ps(RS_VM_C7);
    HORNER(p, r, RS_VM_C6);
    HORNER(p, r, RS_VM_C5);
    HORNER(p, r, RS_VM_C4);
    HORNER(p, r, RS_VM_C3);
    HORNER(p, r, RS_VM_C2);
    __m256 e = _mm256_add_ps(_mm256_set1_ps(1.0f),
                             _mm256_add_ps(r, _mm256_mul_ps(_mm256_mul_ps(r, r), p)));
    e = _mm256_mul_ps(e, pow2i8(n));
    e = _mm256_andnot_ps(_mm256_cmp_ps(x, _mm256_set1_ps(RS_VM_EXP_LO), _CMP_LT_OQ), e);
    __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
    return _mm256_blendv_ps(e, x, nan);
}

AVX2 static __m256 tanh8(__m256 x)
{
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 ax = _mm256_andnot_ps(sign, x);
    __m256 y =
        _mm256_min_ps(_mm256_mul_ps(_mm256_set1_ps(2.0f), ax), _mm256_set1_ps(RS_VM_TANH_Y_MAX));
    __m256 n, r = reduce8(y, &n);
    __m256 p = _mm256_set1_ps(RS_VM_C8);
    HORNER(p, r, RS_VM_C7);
    HORNER(p, r, RS_VM_C6);
    HORNER(p, r, RS_VM_C5);
    HORNER(p, r, RS_VM_C4);
    HORNER(p, r, RS_VM_C3);
    HORNER(p, r, RS_VM_C2);
    __m256 q = _mm256_add_ps(r, _mm256_mul_ps(_mm256_mul_ps(r, r), p));
    __m256 s = pow2i8(n);
    __m256 e = _mm256_add_ps(_mm256_mul_ps(q, s), _mm256_sub_ps(s, _mm256_set1_ps(1.0f)));
    __m256 t = _mm256_div_ps(e, _mm256_add_ps(e, _mm256_set1_ps(2.0f)));
    /* x < 0 gives -t; −0 keeps t = +0 like the portable path. */
    __m256 neg = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ);
    t = _mm256_xor_ps(t, _mm256_and_ps(neg, sign));
    __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
    return _mm256_blendv_ps(t, x, nan);
}

AVX2 static __m256 sigmoid8(__m256 x)
{
    __m256 e = exp8(_mm256_xor_ps(x, _mm256_set1_ps(-0.0f)));
    __m256 s = _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_add_ps(_mm256_set1_ps(1.0f), e));
    __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
    return _mm256_blendv_ps(s, x, nan);
}

#define ELEMENTWISE(name, kernel)                                                                  \
    AVX2 static void name(float *y, const float *x, size_t count)                                  \
    {                                                                                              \
        size_t i = 0;                                                                              \
        for (; i + 8 <= count; i += 8)                                                             \
            _mm256_storeu_ps(y + i, kernel(_mm256_loadu_ps(x + i)));                               \
        if (i < count) {                                                                           \
            __m256i mask = tail_mask(count - i);                                                   \
            _mm256_maskstore_ps(y + i, mask, kernel(_mm256_maskload_ps(x + i, mask)));             \
        }                                                                                          \
    }
ELEMENTWISE(vexp_avx2, exp8)
ELEMENTWISE(vtanh_avx2, tanh8)
ELEMENTWISE(vsigmoid_avx2, sigmoid8)

AVX2 static float hsum8(__m256 acc)
{
    float a[8];
    _mm256_storeu_ps(a, acc);
    return rs_fold8(a);
}

/* Each of 4 × 8 lanes keeps the largest x[i] it sees by the loop's ">" (a
 * NaN never wins). The largest of the lanes is the loop's answer unless it
 * is a zero (then its sign is the first zero's, which the loop finds) or
 * x[0] is NaN (which the loop keeps). Four registers: each step waits on
 * the last one's max. */
AVX2 static float vmax_avx2(const float *x, size_t count)
{
    if (count < 32 || x[0] != x[0])
        return rs_vec_portable.vmax(x, count);
    __m256 m[4];
    for (int r = 0; r < 4; r++)
        m[r] = _mm256_set1_ps(x[0]);
    size_t i = 0;
    for (; i + 32 <= count; i += 32)
        for (int r = 0; r < 4; r++) {
            const __m256 v = _mm256_loadu_ps(x + i + 8 * r);
            m[r] = _mm256_max_ps(v, m[r]); /* v > m ? v : m, false for a NaN v */
        }
    float a[32];
    for (int r = 0; r < 4; r++)
        _mm256_storeu_ps(a + 8 * r, m[r]);
    float max = rs_vec_portable.vmax(a, 32);
    for (; i < count; i++)
        if (x[i] > max)
            max = x[i];
    return max == 0.0f ? rs_vec_portable.vmax(x, count) : max;
}

/* Lane k keeps the largest x[i] of i ≡ k (mod 8) that beat x[0] and its
 * first index (">" is false for NaN: a NaN never wins); the lanes are then
 * merged by value, a tie going to the lower index, which is the first
 * occurrence: the scalar loop's answer. */
AVX2 static size_t vargmax_avx2(const float *x, size_t count)
{
    if (count < 16 || x[0] != x[0])
        return rs_vec_portable.vargmax(x, count);
    __m256 best = _mm256_set1_ps(x[0]);
    __m256i at = _mm256_setzero_si256(), idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i step = _mm256_set1_epi32(8);
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        const __m256 gt = _mm256_cmp_ps(v, best, _CMP_GT_OQ);
        best = _mm256_blendv_ps(best, v, gt);
        at = _mm256_blendv_epi8(at, idx, _mm256_castps_si256(gt));
        idx = _mm256_add_epi32(idx, step);
    }
    float bv[8];
    int bi[8];
    _mm256_storeu_ps(bv, best);
    _mm256_storeu_si256((__m256i *)bi, at);
    size_t arg = (size_t)bi[0];
    for (int k = 1; k < 8; k++)
        if (bv[k] > x[arg] || (bv[k] == x[arg] && (size_t)bi[k] < arg))
            arg = (size_t)bi[k];
    for (; i < count; i++)
        if (x[i] > x[arg])
            arg = i;
    return arg;
}

AVX2 static size_t vfirst_above_avx2(const float *x, float add, float bound, size_t from,
                                     size_t count)
{
    const __m256 a = _mm256_set1_ps(add), b = _mm256_set1_ps(bound);
    size_t i = from;
    for (; i + 8 <= count; i += 8) {
        /* not (x + add ≤ bound): unordered compares true, as the loop's ! does */
        const int mask = _mm256_movemask_ps(
            _mm256_cmp_ps(_mm256_add_ps(_mm256_loadu_ps(x + i), a), b, _CMP_NLE_UQ));
        if (mask)
            return i + (size_t)__builtin_ctz((unsigned)mask);
    }
    for (; i < count; i++)
        if (!(x[i] + add <= bound))
            return i;
    return count;
}

/* Σ exp(x − shift) in double, eight lanes folded in a fixed order, and the
 * exps into y when y is not NULL: the one loop of the normaliser (no store)
 * and of the softmax (stored), so both give the same sum bit for bit. */
AVX2 static double vexp_shift_avx2(float *y, const float *x, float shift, size_t count)
{
    __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
    const __m256 sh = _mm256_set1_ps(shift);
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), sh));
        if (y)
            _mm256_storeu_ps(y + i, e);
        lo = _mm256_add_pd(lo, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
        hi = _mm256_add_pd(hi, _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
    }
    if (i < count) {
        const __m256i mask = tail_mask(count - i);
        __m256 e = exp8(_mm256_sub_ps(_mm256_maskload_ps(x + i, mask), sh));
        e = _mm256_and_ps(e, _mm256_castsi256_ps(mask));
        if (y)
            _mm256_maskstore_ps(y + i, mask, e);
        lo = _mm256_add_pd(lo, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
        hi = _mm256_add_pd(hi, _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
    }
    double a[8];
    _mm256_storeu_pd(a, lo);
    _mm256_storeu_pd(a + 4, hi);
    return rs_fold8d(a);
}

AVX2 static double vexp_shift_total_avx2(const float *x, float shift, size_t count)
{
    return vexp_shift_avx2(NULL, x, shift, count);
}

AVX2 static float vtanh_add_dot_avx2(float *phi, const float *q, const float *key, const float *v,
                                     size_t count)
{
    __m256 acc = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        __m256 th = tanh8(_mm256_add_ps(_mm256_loadu_ps(q + i), _mm256_loadu_ps(key + i)));
        _mm256_storeu_ps(phi + i, th);
        acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_loadu_ps(v + i), th));
    }
    if (i < count) {
        __m256i mask = tail_mask(count - i);
        __m256 th = tanh8(
            _mm256_add_ps(_mm256_maskload_ps(q + i, mask), _mm256_maskload_ps(key + i, mask)));
        _mm256_maskstore_ps(phi + i, mask, th);
        acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_maskload_ps(v + i, mask), th));
    }
    return hsum8(acc);
}

AVX2 static void vtanh_add_dot_backward_avx2(float *dq, float *dkey, float *dv, const float *phi,
                                             const float *v, float de, size_t count)
{
    const __m256 d = _mm256_set1_ps(de), one = _mm256_set1_ps(1.0f);
    size_t k = 0;
    for (; k + 8 <= count; k += 8) {
        __m256 phik = _mm256_loadu_ps(phi + k);
        _mm256_storeu_ps(dv + k, _mm256_add_ps(_mm256_loadu_ps(dv + k), _mm256_mul_ps(d, phik)));
        __m256 dpre = _mm256_mul_ps(_mm256_mul_ps(d, _mm256_loadu_ps(v + k)),
                                    _mm256_sub_ps(one, _mm256_mul_ps(phik, phik)));
        _mm256_storeu_ps(dq + k, _mm256_add_ps(_mm256_loadu_ps(dq + k), dpre));
        _mm256_storeu_ps(dkey + k, _mm256_add_ps(_mm256_loadu_ps(dkey + k), dpre));
    }
    rs_vec_portable.vtanh_add_dot_backward(dq + k, dkey + k, dv + k, phi + k, v + k, de, count - k);
}

AVX2 static void vscale_shift_avx2(float *y, float scale, float shift, size_t count)
{
    const __m256 a = _mm256_set1_ps(scale), b = _mm256_set1_ps(shift);
    size_t i = 0;
    for (; i + 8 <= count; i += 8)
        _mm256_storeu_ps(y + i, _mm256_mul_ps(a, _mm256_sub_ps(_mm256_loadu_ps(y + i), b)));
    rs_vec_portable.vscale_shift(y + i, scale, shift, count - i);
}

AVX2 static float vdot_avx2(const float *x, const float *y, size_t count)
{
    __m256 acc = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 8 <= count; i += 8)
        acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
    if (i < count) {
        __m256i mask = tail_mask(count - i);
        acc = _mm256_add_ps(
            acc, _mm256_mul_ps(_mm256_maskload_ps(x + i, mask), _mm256_maskload_ps(y + i, mask)));
    }
    return hsum8(acc);
}

AVX2 static void vaxpy_avx2(float *y, float alpha, const float *x, size_t count)
{
    const __m256 a = _mm256_set1_ps(alpha);
    size_t i = 0;
    for (; i + 8 <= count; i += 8)
        _mm256_storeu_ps(
            y + i, _mm256_add_ps(_mm256_loadu_ps(y + i), _mm256_mul_ps(a, _mm256_loadu_ps(x + i))));
    rs_vec_portable.vaxpy(y + i, alpha, x + i, count - i);
}

AVX2 static double vsumsq_avx2(const float *x, size_t count)
{
    __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        __m256 e = _mm256_loadu_ps(x + i);
        __m256d a = _mm256_cvtps_pd(_mm256_castps256_ps128(e));
        __m256d b = _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1));
        lo = _mm256_add_pd(lo, _mm256_mul_pd(a, a));
        hi = _mm256_add_pd(hi, _mm256_mul_pd(b, b));
    }
    double acc[8];
    _mm256_storeu_pd(acc, lo);
    _mm256_storeu_pd(acc + 4, hi);
    for (; i < count; i++)
        acc[i % 8] += (double)x[i] * (double)x[i];
    return rs_fold8d(acc);
}

/* Columns k..k+31 of Σ_j w[j] row_j in four registers over all rows, then 8
 * at a time; the last count mod 8 columns by the portable loop's order (from
 * +0, row by row). */
AVX2 static void vweighted_sum_avx2(float *y, const float *w, const float *rows, size_t stride,
                                    size_t nrows, size_t count)
{
    size_t k = 0;
    for (; k + 32 <= count; k += 32) {
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (size_t j = 0; j < nrows; j++) {
            const __m256 wj = _mm256_set1_ps(w[j]);
            const float *r = rows + j * stride + k;
            a0 = _mm256_add_ps(a0, _mm256_mul_ps(wj, _mm256_loadu_ps(r)));
            a1 = _mm256_add_ps(a1, _mm256_mul_ps(wj, _mm256_loadu_ps(r + 8)));
            a2 = _mm256_add_ps(a2, _mm256_mul_ps(wj, _mm256_loadu_ps(r + 16)));
            a3 = _mm256_add_ps(a3, _mm256_mul_ps(wj, _mm256_loadu_ps(r + 24)));
        }
        _mm256_storeu_ps(y + k, a0);
        _mm256_storeu_ps(y + k + 8, a1);
        _mm256_storeu_ps(y + k + 16, a2);
        _mm256_storeu_ps(y + k + 24, a3);
    }
    for (; k + 8 <= count; k += 8) {
        __m256 a0 = _mm256_setzero_ps();
        for (size_t j = 0; j < nrows; j++)
            a0 = _mm256_add_ps(
                a0, _mm256_mul_ps(_mm256_set1_ps(w[j]), _mm256_loadu_ps(rows + j * stride + k)));
        _mm256_storeu_ps(y + k, a0);
    }
    if (k < count)
        rs_vec_portable.vweighted_sum(y + k, w, rows + k, stride, nrows, count - k);
}

/* Two rows at a time (two independent running sums: the dot's additions
 * wait on each other), each row's dot in its own 8 lanes as vdot_avx2. */
AVX2 static void vweighted_sum_backward_avx2(float *dw, float *drows, const float *dy,
                                             const float *rows, const float *w, size_t stride,
                                             size_t nrows, size_t count)
{
    size_t j = 0;
    for (; j + 2 <= nrows; j += 2) {
        const float *r0 = rows + j * stride, *r1 = r0 + stride;
        float *d0 = drows + j * stride, *d1 = d0 + stride;
        const __m256 w0 = _mm256_set1_ps(w[j]), w1 = _mm256_set1_ps(w[j + 1]);
        __m256 s0 = _mm256_setzero_ps(), s1 = s0;
        size_t k = 0;
        for (; k + 8 <= count; k += 8) {
            const __m256 d = _mm256_loadu_ps(dy + k);
            s0 = _mm256_add_ps(s0, _mm256_mul_ps(d, _mm256_loadu_ps(r0 + k)));
            s1 = _mm256_add_ps(s1, _mm256_mul_ps(d, _mm256_loadu_ps(r1 + k)));
            _mm256_storeu_ps(d0 + k, _mm256_add_ps(_mm256_loadu_ps(d0 + k), _mm256_mul_ps(w0, d)));
            _mm256_storeu_ps(d1 + k, _mm256_add_ps(_mm256_loadu_ps(d1 + k), _mm256_mul_ps(w1, d)));
        }
        if (k < count) {
            const __m256i mask = tail_mask(count - k);
            const __m256 d = _mm256_maskload_ps(dy + k, mask);
            s0 = _mm256_add_ps(s0, _mm256_mul_ps(d, _mm256_maskload_ps(r0 + k, mask)));
            s1 = _mm256_add_ps(s1, _mm256_mul_ps(d, _mm256_maskload_ps(r1 + k, mask)));
            rs_vec_portable.vaxpy(d0 + k, w[j], dy + k, count - k);
            rs_vec_portable.vaxpy(d1 + k, w[j + 1], dy + k, count - k);
        }
        dw[j] = hsum8(s0);
        dw[j + 1] = hsum8(s1);
    }
    for (; j < nrows; j++) {
        dw[j] = vdot_avx2(dy, rows + j * stride, count);
        vaxpy_avx2(drows + j * stride, w[j], dy, count);
    }
}

/* Eight rows at a time: 8 columns of y in a register take the rows' adds in
 * their order (y + 1·x, as rs_vaxpy), y read and written once per 8 rows;
 * the last count mod 8 columns by the portable loop. */
AVX2 static void vadd_rows_avx2(float *y, const float *rows, size_t stride, size_t nrows,
                                size_t count)
{
    const __m256 one = _mm256_set1_ps(1.0f);
    for (size_t j = 0; j < nrows; j += 8) {
        const float *r = rows + j * stride;
        const size_t group = nrows - j < 8 ? nrows - j : 8;
        size_t k = 0;
        for (; k + 8 <= count; k += 8) {
            __m256 acc = _mm256_loadu_ps(y + k);
            for (size_t g = 0; g < group; g++)
                acc = _mm256_add_ps(acc, _mm256_mul_ps(one, _mm256_loadu_ps(r + g * stride + k)));
            _mm256_storeu_ps(y + k, acc);
        }
        if (k < count)
            rs_vec_portable.vadd_rows(y + k, r + k, stride, group, count - k);
    }
}

AVX2 static void vgru_gates_avx2(float *zr, float *rh, const float *hp, size_t n)
{
    vsigmoid_avx2(zr, zr, n);
    size_t k = 0;
    for (; k + 8 <= n; k += 8) {
        const __m256 r = sigmoid8(_mm256_loadu_ps(zr + n + k));
        _mm256_storeu_ps(zr + n + k, r);
        _mm256_storeu_ps(rh + k, _mm256_mul_ps(r, _mm256_loadu_ps(hp + k)));
    }
    if (k < n) {
        vsigmoid_avx2(zr + n + k, zr + n + k, n - k);
        for (; k < n; k++)
            rh[k] = zr[n + k] * hp[k];
    }
}

AVX2 static void vgru_state_avx2(float *h, float *g, const float *z, const float *hp, float mask,
                                 size_t n)
{
    const __m256 one = _mm256_set1_ps(1.0f);
    size_t k = 0;
    for (; k + 8 <= n; k += 8) {
        const __m256 gk = tanh8(_mm256_loadu_ps(g + k)), zk = _mm256_loadu_ps(z + k);
        const __m256 hpk = _mm256_loadu_ps(hp + k);
        _mm256_storeu_ps(g + k, gk);
        _mm256_storeu_ps(h + k, mask != 0.0f
                                    ? _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(one, zk), hpk),
                                                    _mm256_mul_ps(zk, gk))
                                    : hpk);
    }
    rs_vec_portable.vgru_state(h + k, g + k, z + k, hp + k, mask, n - k);
}

AVX2 static void vgru_state_backward_avx2(float *dxz, float *dxg, float *dhp, const float *z,
                                          const float *g, const float *hp, const float *dh,
                                          size_t n)
{
    const __m256 one = _mm256_set1_ps(1.0f);
    size_t k = 0;
    for (; k + 8 <= n; k += 8) {
        const __m256 dhk = _mm256_loadu_ps(dh + k), zk = _mm256_loadu_ps(z + k),
                     gk = _mm256_loadu_ps(g + k);
        const __m256 dz = _mm256_mul_ps(dhk, _mm256_sub_ps(gk, _mm256_loadu_ps(hp + k)));
        const __m256 dg = _mm256_mul_ps(dhk, zk), omz = _mm256_sub_ps(one, zk);
        _mm256_storeu_ps(dhp + k, _mm256_add_ps(_mm256_loadu_ps(dhp + k), _mm256_mul_ps(dhk, omz)));
        _mm256_storeu_ps(dxz + k, _mm256_mul_ps(_mm256_mul_ps(dz, zk), omz));
        _mm256_storeu_ps(dxg + k, _mm256_mul_ps(dg, _mm256_sub_ps(one, _mm256_mul_ps(gk, gk))));
    }
    rs_vec_portable.vgru_state_backward(dxz + k, dxg + k, dhp + k, z + k, g + k, hp + k, dh + k,
                                        n - k);
}

AVX2 static void vgru_reset_backward_avx2(float *dxr, float *dhp, const float *r, const float *hp,
                                          const float *drh, size_t n)
{
    const __m256 one = _mm256_set1_ps(1.0f);
    size_t k = 0;
    for (; k + 8 <= n; k += 8) {
        const __m256 d = _mm256_loadu_ps(drh + k), rk = _mm256_loadu_ps(r + k);
        const __m256 dr = _mm256_mul_ps(d, _mm256_loadu_ps(hp + k));
        _mm256_storeu_ps(dhp + k, _mm256_add_ps(_mm256_loadu_ps(dhp + k), _mm256_mul_ps(d, rk)));
        _mm256_storeu_ps(dxr + k, _mm256_mul_ps(_mm256_mul_ps(dr, rk), _mm256_sub_ps(one, rk)));
    }
    rs_vec_portable.vgru_reset_backward(dxr + k, dhp + k, r + k, hp + k, drh + k, n - k);
}

/* rs_adam_portable 8 entries at a time, the same operations in the same order;
 * the last count mod 8 entries by rs_adam_portable itself. */
AVX2 static void adam_avx2(float *params, const float *grads, float grad_scale, float *m, float *v,
                           size_t count, const rs_adam_coeffs *k)
{
    const __m256 gs = _mm256_set1_ps(grad_scale), b1 = _mm256_set1_ps(k->beta1),
                 b2 = _mm256_set1_ps(k->beta2), ob1 = _mm256_set1_ps(1.0f - k->beta1),
                 ob2 = _mm256_set1_ps(1.0f - k->beta2), vc1 = _mm256_set1_ps(k->c1),
                 vc2 = _mm256_set1_ps(k->c2), ve = _mm256_set1_ps(k->eps),
                 vlr = _mm256_set1_ps(k->lr);
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        __m256 g = _mm256_mul_ps(gs, _mm256_loadu_ps(grads + i));
        __m256 mi = _mm256_add_ps(_mm256_mul_ps(b1, _mm256_loadu_ps(m + i)), _mm256_mul_ps(ob1, g));
        __m256 vi = _mm256_add_ps(_mm256_mul_ps(b2, _mm256_loadu_ps(v + i)),
                                  _mm256_mul_ps(_mm256_mul_ps(ob2, g), g));
        _mm256_storeu_ps(m + i, mi);
        _mm256_storeu_ps(v + i, vi);
        __m256 den = _mm256_add_ps(_mm256_sqrt_ps(_mm256_div_ps(vi, vc2)), ve);
        __m256 step = _mm256_div_ps(_mm256_mul_ps(vlr, _mm256_div_ps(mi, vc1)), den);
        _mm256_storeu_ps(params + i, _mm256_sub_ps(_mm256_loadu_ps(params + i), step));
    }
    rs_adam_portable(params + i, grads + i, grad_scale, m + i, v + i, count - i, k);
}

static const rs_vec_kernels avx2_kernels = {
    .vexp = vexp_avx2,
    .vtanh = vtanh_avx2,
    .vsigmoid = vsigmoid_avx2,
    .vmax = vmax_avx2,
    .vargmax = vargmax_avx2,
    .vfirst_above = vfirst_above_avx2,
    .vexp_shift_sum = vexp_shift_avx2,
    .vexp_shift_total = vexp_shift_total_avx2,
    .vtanh_add_dot = vtanh_add_dot_avx2,
    .vtanh_add_dot_backward = vtanh_add_dot_backward_avx2,
    .vscale_shift = vscale_shift_avx2,
    .vdot = vdot_avx2,
    .vaxpy = vaxpy_avx2,
    .vsumsq = vsumsq_avx2,
    .vweighted_sum = vweighted_sum_avx2,
    .vweighted_sum_backward = vweighted_sum_backward_avx2,
    .vadd_rows = vadd_rows_avx2,
    .vgru_gates = vgru_gates_avx2,
    .vgru_state = vgru_state_avx2,
    .vgru_state_backward = vgru_state_backward_avx2,
    .vgru_reset_backward = vgru_reset_backward_avx2,
    .adam = adam_avx2,
};

const rs_vec_kernels *rs_vec_avx2(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? &avx2_kernels : NULL;
}
#else
const rs_vec_kernels *rs_vec_avx2(void)
{
    return NULL;
}
#endif

static const rs_vec_kernels *level_table(int level)
{
    return level == RS_KERNELS_AVX512 ? rs_vec_avx512()
           : level == RS_KERNELS_AVX2 ? rs_vec_avx2()
                                      : &rs_vec_portable;
}

static const char *const level_names[] = {"portable", "avx2", "avx512"};

const char *rs_accel_kernels_name(int level)
{
    return level >= 0 && level <= RS_KERNELS_AVX512 ? level_names[level] : "auto";
}

int rs_accel_kernels_wanted(rs_error *err)
{
    const char *name = getenv("RNNSEARCH_KERNELS");
    if (!name || !*name || !strcmp(name, "auto"))
        return -1;
    for (int level = 0; level <= RS_KERNELS_AVX512; level++)
        if (!strcmp(name, level_names[level]))
            return level;
    rs_fail(err, "RNNSEARCH_KERNELS=%s: no such level of kernels (portable, avx2, avx512 or auto)",
            name);
    return -2;
}

int rs_accel_kernels_select(int want)
{
    if (want == -1)
        want = rs_accel_kernels_wanted(NULL);
    int level = want < 0 || want > RS_KERNELS_AVX512 ? RS_KERNELS_AVX512 : want;
    while (!level_table(level))
        level--; /* the portable table is always there */
    rs_vec_kernels_use(level_table(level));
    return level;
}
