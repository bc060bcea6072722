/* exp by range reduction: x = n·ln2 + r, |r| ≤ ln2/2, exp(x) = 2^n · e^r with
 * e^r from its Taylor series to r^7 (truncation < 2^-27 relative). ln2 is
 * split in two (hi with 9 significant bits, so n·hi is exact) to keep r exact
 * to float precision. tanh(|x|) = e / (e + 2) with e = expm1(2|x|), where
 * expm1(y) = 2^n · expm1(r) + (2^n − 1) and expm1(r) is its Taylor series to
 * r^8: no cancellation anywhere, so small arguments keep full relative
 * accuracy. The AVX2 path below repeats these operations lane by lane. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "nn/vecmath.h"

#define EXP_HI 88.0f     /* exp(88) < FLT_MAX with 2^127 as the scale */
#define EXP_LO (-87.0f)  /* exp(-87) is still a normal float */
#define TANH_Y_MAX 40.0f /* tanh(20) rounds to 1 */
#define LOG2E 1.44269504088896341f
#define LN2_HI 0.693359375f
#define LN2_LO (-2.12194440e-4f)
#define ROUND_MAGIC 12582912.0f /* 1.5·2^23: (v + M) − M rounds v to an integer, ties to even */
#define C2 (1.0f / 2)
#define C3 (1.0f / 6)
#define C4 (1.0f / 24)
#define C5 (1.0f / 120)
#define C6 (1.0f / 720)
#define C7 (1.0f / 5040)
#define C8 (1.0f / 40320)

static float pow2i(int n)
{
    uint32_t bits = (uint32_t)(n + 127) << 23;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* n and r with x = n·ln2 + r, for x in [EXP_LO, EXP_HI] or [0, TANH_Y_MAX]. */
static float reduce(float x, float *n)
{
    *n = (x * LOG2E + ROUND_MAGIC) - ROUND_MAGIC;
    return (x - *n * LN2_HI) - *n * LN2_LO;
}

float rs_exp(float x)
{
    if (x != x)
        return x;
    if (x < EXP_LO)
        return 0.0f;
    float n, r = reduce(x > EXP_HI ? EXP_HI : x, &n);
    float p = C7;
    p = p * r + C6;
    p = p * r + C5;
    p = p * r + C4;
    p = p * r + C3;
    p = p * r + C2;
    float e = 1.0f + (r + (r * r) * p);
    return e * pow2i((int)n);
}

float rs_tanh(float x)
{
    if (x != x)
        return x;
    float y = 2.0f * (x < 0.0f ? -x : x);
    if (y > TANH_Y_MAX)
        y = TANH_Y_MAX;
    float n, r = reduce(y, &n);
    float p = C8;
    p = p * r + C7;
    p = p * r + C6;
    p = p * r + C5;
    p = p * r + C4;
    p = p * r + C3;
    p = p * r + C2;
    float q = r + (r * r) * p; /* expm1(r) */
    float s = pow2i((int)n);
    float e = q * s + (s - 1.0f); /* expm1(y) */
    float t = e / (e + 2.0f);
    return x < 0.0f ? -t : t;
}

float rs_sigmoid(float x)
{
    if (x != x)
        return x;
    return 1.0f / (1.0f + rs_exp(-x));
}

/* Reductions keep 8 running sums, lane k taking i ≡ k (mod 8), and add them
 * as ((a0+a4) + (a2+a6)) + ((a1+a5) + (a3+a7)). */
static float fold8(const float a[8])
{
    float s0 = a[0] + a[4], s1 = a[1] + a[5], s2 = a[2] + a[6], s3 = a[3] + a[7];
    return (s0 + s2) + (s1 + s3);
}

static double fold8d(const double a[8])
{
    double s0 = a[0] + a[4], s1 = a[1] + a[5], s2 = a[2] + a[6], s3 = a[3] + a[7];
    return (s0 + s2) + (s1 + s3);
}

static void vexp_portable(float *y, const float *x, size_t count)
{
    for (size_t i = 0; i < count; i++)
        y[i] = rs_exp(x[i]);
}

static void vtanh_portable(float *y, const float *x, size_t count)
{
    for (size_t i = 0; i < count; i++)
        y[i] = rs_tanh(x[i]);
}

static void vsigmoid_portable(float *y, const float *x, size_t count)
{
    for (size_t i = 0; i < count; i++)
        y[i] = rs_sigmoid(x[i]);
}

static float vmax_portable(const float *x, size_t count)
{
    float max = x[0];
    for (size_t i = 1; i < count; i++)
        if (x[i] > max)
            max = x[i];
    return max;
}

static double vexp_shift_total_portable(const float *x, float shift, size_t count)
{
    double acc[8] = {0};
    for (size_t i = 0; i < count; i++)
        acc[i % 8] += (double)rs_exp(x[i] - shift);
    return fold8d(acc);
}

static size_t vfirst_above_portable(const float *x, float add, float bound, size_t from,
                                    size_t count)
{
    for (size_t i = from; i < count; i++)
        if (!(x[i] + add <= bound))
            return i;
    return count;
}

static size_t vargmax_portable(const float *x, size_t count)
{
    size_t best = 0;
    for (size_t i = 1; i < count; i++)
        if (x[i] > x[best])
            best = i;
    return best;
}

static double vexp_shift_sum_portable(float *y, const float *x, float shift, size_t count)
{
    double acc[8] = {0};
    for (size_t i = 0; i < count; i++) {
        y[i] = rs_exp(x[i] - shift);
        acc[i % 8] += (double)y[i];
    }
    return fold8d(acc);
}

static float vtanh_add_dot_portable(float *phi, const float *q, const float *key, const float *v,
                                    size_t count)
{
    float acc[8] = {0};
    for (size_t i = 0; i < count; i++) {
        phi[i] = rs_tanh(q[i] + key[i]);
        acc[i % 8] += v[i] * phi[i];
    }
    return fold8(acc);
}

static void vtanh_add_dot_backward_portable(float *dq, float *dkey, float *dv, const float *phi,
                                            const float *v, float de, size_t count)
{
    for (size_t k = 0; k < count; k++) {
        dv[k] += de * phi[k];
        float dpre = de * v[k] * (1.0f - phi[k] * phi[k]); /* through tanh */
        dq[k] += dpre;
        dkey[k] += dpre;
    }
}

static void vscale_shift_portable(float *y, float scale, float shift, size_t count)
{
    for (size_t i = 0; i < count; i++)
        y[i] = scale * (y[i] - shift);
}

static float vdot_portable(const float *x, const float *y, size_t count)
{
    float acc[8] = {0};
    for (size_t i = 0; i < count; i++)
        acc[i % 8] += x[i] * y[i];
    return fold8(acc);
}

static void vaxpy_portable(float *y, float alpha, const float *x, size_t count)
{
    for (size_t i = 0; i < count; i++)
        y[i] += alpha * x[i];
}

static double vsumsq_portable(const float *x, size_t count)
{
    double acc[8] = {0};
    for (size_t i = 0; i < count; i++)
        acc[i % 8] += (double)x[i] * (double)x[i];
    return fold8d(acc);
}

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
    *n = _mm256_sub_ps(
        _mm256_add_ps(_mm256_mul_ps(x, _mm256_set1_ps(LOG2E)), _mm256_set1_ps(ROUND_MAGIC)),
        _mm256_set1_ps(ROUND_MAGIC));
    __m256 r = _mm256_sub_ps(x, _mm256_mul_ps(*n, _mm256_set1_ps(LN2_HI)));
    return _mm256_sub_ps(r, _mm256_mul_ps(*n, _mm256_set1_ps(LN2_LO)));
}

AVX2 static __m256 pow2i8(__m256 n)
{
    __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
}

#define HORNER(p, r, c) p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(c))

AVX2 static __m256 exp8(__m256 x)
{
    __m256 xc = _mm256_max_ps(_mm256_min_ps(x, _mm256_set1_ps(EXP_HI)), _mm256_set1_ps(EXP_LO));
    __m256 n, r = reduce8(xc, &n);
    __m256 p = _mm256_set1_ps(C7);
    HORNER(p, r, C6);
    HORNER(p, r, C5);
    HORNER(p, r, C4);
    HORNER(p, r, C3);
    HORNER(p, r, C2);
    __m256 e = _mm256_add_ps(_mm256_set1_ps(1.0f),
                             _mm256_add_ps(r, _mm256_mul_ps(_mm256_mul_ps(r, r), p)));
    e = _mm256_mul_ps(e, pow2i8(n));
    e = _mm256_andnot_ps(_mm256_cmp_ps(x, _mm256_set1_ps(EXP_LO), _CMP_LT_OQ), e);
    __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
    return _mm256_blendv_ps(e, x, nan);
}

AVX2 static __m256 tanh8(__m256 x)
{
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 ax = _mm256_andnot_ps(sign, x);
    __m256 y = _mm256_min_ps(_mm256_mul_ps(_mm256_set1_ps(2.0f), ax), _mm256_set1_ps(TANH_Y_MAX));
    __m256 n, r = reduce8(y, &n);
    __m256 p = _mm256_set1_ps(C8);
    HORNER(p, r, C7);
    HORNER(p, r, C6);
    HORNER(p, r, C5);
    HORNER(p, r, C4);
    HORNER(p, r, C3);
    HORNER(p, r, C2);
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
    return fold8(a);
}

AVX2 static float vmax_avx2(const float *x, size_t count)
{
    if (count < 8)
        return vmax_portable(x, count);
    __m256 m = _mm256_loadu_ps(x);
    size_t i = 8;
    for (; i + 8 <= count; i += 8)
        m = _mm256_max_ps(m, _mm256_loadu_ps(x + i));
    float a[8];
    _mm256_storeu_ps(a, m);
    float max = vmax_portable(a, 8);
    for (; i < count; i++)
        if (x[i] > max)
            max = x[i];
    return max;
}

/* Lane k keeps the largest x[i] of i ≡ k (mod 8) that beat x[0] and its
 * first index (">" is false for NaN: a NaN never wins); the lanes are then
 * merged by value, a tie going to the lower index, which is the first
 * occurrence: the scalar loop's answer. */
AVX2 static size_t vargmax_avx2(const float *x, size_t count)
{
    if (count < 16 || x[0] != x[0])
        return vargmax_portable(x, count);
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
    return fold8d(a);
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
    vtanh_add_dot_backward_portable(dq + k, dkey + k, dv + k, phi + k, v + k, de, count - k);
}

AVX2 static void vscale_shift_avx2(float *y, float scale, float shift, size_t count)
{
    const __m256 a = _mm256_set1_ps(scale), b = _mm256_set1_ps(shift);
    size_t i = 0;
    for (; i + 8 <= count; i += 8)
        _mm256_storeu_ps(y + i, _mm256_mul_ps(a, _mm256_sub_ps(_mm256_loadu_ps(y + i), b)));
    vscale_shift_portable(y + i, scale, shift, count - i);
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
    vaxpy_portable(y + i, alpha, x + i, count - i);
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
    return fold8d(acc);
}

static int cpu_has_avx2(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
}
#else
static int cpu_has_avx2(void)
{
    return 0;
}
#endif

/* -1: not chosen yet. */
static int use_avx2 = -1;

int rs_vecmath_select(int want)
{
    int have = cpu_has_avx2();
    use_avx2 = want < 0 ? have : (want && have);
    return use_avx2;
}

int rs_vecmath_avx2(void)
{
    if (use_avx2 < 0)
        rs_vecmath_select(-1);
    return use_avx2;
}

/* Each kernel once: the AVX2 path where built and chosen, else the portable one. */
#ifdef RS_HAVE_AVX2_PATH
#define DISPATCH(avx2_call, portable_call) return rs_vecmath_avx2() ? avx2_call : portable_call
#define DISPATCH_VOID(avx2_call, portable_call)                                                    \
    do {                                                                                           \
        if (rs_vecmath_avx2())                                                                     \
            avx2_call;                                                                             \
        else                                                                                       \
            portable_call;                                                                         \
    } while (0)
#else
#define DISPATCH(avx2_call, portable_call) return portable_call
#define DISPATCH_VOID(avx2_call, portable_call) portable_call
#endif

void rs_vexp(float *y, const float *x, size_t count)
{
    DISPATCH_VOID(vexp_avx2(y, x, count), vexp_portable(y, x, count));
}

void rs_vtanh(float *y, const float *x, size_t count)
{
    DISPATCH_VOID(vtanh_avx2(y, x, count), vtanh_portable(y, x, count));
}

void rs_vsigmoid(float *y, const float *x, size_t count)
{
    DISPATCH_VOID(vsigmoid_avx2(y, x, count), vsigmoid_portable(y, x, count));
}

float rs_vmax(const float *x, size_t count)
{
    DISPATCH(vmax_avx2(x, count), vmax_portable(x, count));
}

size_t rs_vfirst_above(const float *x, float add, float bound, size_t from, size_t count)
{
    DISPATCH(vfirst_above_avx2(x, add, bound, from, count),
             vfirst_above_portable(x, add, bound, from, count));
}

size_t rs_vargmax(const float *x, size_t count)
{
    DISPATCH(vargmax_avx2(x, count), vargmax_portable(x, count));
}

double rs_vexp_shift_total(const float *x, float shift, size_t count)
{
    DISPATCH(vexp_shift_avx2(NULL, x, shift, count), vexp_shift_total_portable(x, shift, count));
}

double rs_vexp_shift_sum(float *y, const float *x, float shift, size_t count)
{
    DISPATCH(vexp_shift_avx2(y, x, shift, count), vexp_shift_sum_portable(y, x, shift, count));
}

float rs_vtanh_add_dot(float *phi, const float *q, const float *key, const float *v, size_t count)
{
    DISPATCH(vtanh_add_dot_avx2(phi, q, key, v, count),
             vtanh_add_dot_portable(phi, q, key, v, count));
}

float rs_vdot(const float *x, const float *y, size_t count)
{
    DISPATCH(vdot_avx2(x, y, count), vdot_portable(x, y, count));
}

void rs_vaxpy(float *y, float alpha, const float *x, size_t count)
{
    DISPATCH_VOID(vaxpy_avx2(y, alpha, x, count), vaxpy_portable(y, alpha, x, count));
}

double rs_vsumsq(const float *x, size_t count)
{
    DISPATCH(vsumsq_avx2(x, count), vsumsq_portable(x, count));
}

void rs_vtanh_add_dot_backward(float *dq, float *dkey, float *dv, const float *phi, const float *v,
                               float de, size_t count)
{
    DISPATCH_VOID(vtanh_add_dot_backward_avx2(dq, dkey, dv, phi, v, de, count),
                  vtanh_add_dot_backward_portable(dq, dkey, dv, phi, v, de, count));
}

void rs_vscale_shift(float *y, float scale, float shift, size_t count)
{
    DISPATCH_VOID(vscale_shift_avx2(y, scale, shift, count),
                  vscale_shift_portable(y, scale, shift, count));
}
