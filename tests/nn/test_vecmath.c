/* The fast element-wise kernels against the straightforward ones: libm in
 * double for exp, tanh and the sigmoid (the worst error in ulp asserted
 * against the bound src/nn/vecmath.h states) and plain loops for the fused
 * sums; on the kernels in use, the portable ones under make nn-check
 * (accel/'s AVX2 twins against them: tests/test_kernels.c). */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gradcheck.h"
#include "nn/linalg.h"
#include "nn/vecmath.h"

/* |f - exact| in units of the float spacing at exact. */
static double ulp_error(float f, double exact)
{
    if (exact == 0.0)
        return f == 0.0f ? 0.0 : INFINITY;
    int e;
    frexp(exact, &e);
    return fabs((double)f - exact) / ldexp(1.0, e - 24);
}

typedef float (*scalar_fn)(float);
typedef double (*exact_fn)(double);

static double exact_sigmoid(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

/* Worst ulp error over [from, to], stepping by a relative 2e-6 (and at least
 * 1e-6): about a million points, every binade covered. */
static double worst_ulps(scalar_fn f, exact_fn ref, float from, float to, float *where)
{
    double worst = 0.0;
    for (float x = from; x <= to;) {
        double u = ulp_error(f(x), ref((double)x));
        if (u > worst) {
            worst = u;
            *where = x;
        }
        float step = fabsf(x) * 2e-6f;
        x += step > 1e-6f ? step : 1e-6f;
    }
    return worst;
}

static void expect_ulps(const char *name, scalar_fn f, exact_fn ref, float from, float to,
                        double bound)
{
    float where = 0.0f;
    double worst = worst_ulps(f, ref, from, to, &where);
    fprintf(stderr, "%s on [%g, %g]: worst %.3f ulp at %.9g (bound %.1f)\n", name, from, to, worst,
            where, bound);
    ck_assert_msg(worst <= bound, "%s: %.3f ulp at %.9g > %.1f", name, worst, where, bound);
}

START_TEST(exp_within_stated_ulps)
{
    expect_ulps("rs_exp", rs_exp, exp, -87.0f, 88.0f, 1.5);
    ck_assert_float_eq(rs_exp(-87.5f), 0.0f);
    ck_assert_float_eq(rs_exp(-INFINITY), 0.0f);
    ck_assert_float_eq(rs_exp(0.0f), 1.0f);
    ck_assert_float_eq(rs_exp(1000.0f), rs_exp(88.0f));
    ck_assert(isnan(rs_exp(NAN)));
}
END_TEST

START_TEST(tanh_within_stated_ulps)
{
    expect_ulps("rs_tanh", rs_tanh, tanh, -20.0f, 20.0f, 3.0);
    /* tiny arguments keep their relative accuracy (no 1 - 2/(e+1) cancellation) */
    expect_ulps("rs_tanh small", rs_tanh, tanh, 1e-30f, 1e-3f, 3.0);
    for (float x = 0.001f; x < 25.0f; x *= 1.37f)
        ck_assert_msg(rs_tanh(-x) == -rs_tanh(x), "tanh not odd at %g", x);
    ck_assert_float_eq(rs_tanh(30.0f), 1.0f);
    ck_assert_float_eq(rs_tanh(-INFINITY), -1.0f);
    ck_assert(rs_tanh(0.0f) == 0.0f);
    ck_assert(isnan(rs_tanh(NAN)));
}
END_TEST

START_TEST(sigmoid_within_stated_ulps)
{
    expect_ulps("rs_sigmoid", rs_sigmoid, exact_sigmoid, -88.0f, 88.0f, 3.0);
    for (float x = -88.0f; x > -200.0f; x -= 0.37f)
        ck_assert_msg(fabs(rs_sigmoid(x) - exact_sigmoid(x)) < 6.1e-39, "sigmoid(%g)", x);
    ck_assert_float_eq(rs_sigmoid(INFINITY), 1.0f);
    ck_assert(isnan(rs_sigmoid(NAN)));
}
END_TEST

/* The vector kernels give the scalar kernels' values, every length's tail included. */
START_TEST(vector_kernels_match_scalar)
{
    enum { N = 77 };
    float x[N], y[N], q[N], v[N];
    for (int count = 0; count <= N; count++) {
        fill_uniform(x, N, 12.0f, (unsigned)count + 1);
        fill_uniform(q, N, 3.0f, (unsigned)count + 100);
        fill_uniform(v, N, 1.0f, (unsigned)count + 200);
        rs_vexp(y, x, (size_t)count);
        for (int i = 0; i < count; i++)
            ck_assert_msg(y[i] == rs_exp(x[i]), "vexp[%d] of %d", i, count);
        rs_vtanh(y, x, (size_t)count);
        for (int i = 0; i < count; i++)
            ck_assert_msg(y[i] == rs_tanh(x[i]), "vtanh[%d] of %d", i, count);
        memcpy(y, x, sizeof y);
        rs_vsigmoid(y, y, (size_t)count); /* in place */
        for (int i = 0; i < count; i++)
            ck_assert_msg(y[i] == rs_sigmoid(x[i]), "vsigmoid[%d] of %d", i, count);
        if (count == 0)
            continue;
        float max = x[0];
        for (int i = 1; i < count; i++)
            max = x[i] > max ? x[i] : max;
        ck_assert_float_eq(rs_vmax(x, (size_t)count), max);
        double sum = 0.0, ref_sum = 0.0;
        sum = rs_vexp_shift_sum(y, x, max, (size_t)count);
        for (int i = 0; i < count; i++) {
            ck_assert_msg(y[i] == rs_exp(x[i] - max), "vexp_shift_sum[%d] of %d", i, count);
            ref_sum += exp((double)x[i] - max);
        }
        ck_assert_msg(fabs(sum - ref_sum) <= 4e-7 * ref_sum, "exp sum %g vs %g", sum, ref_sum);
        float t[N];
        double ref_dot = 0.0, abs_dot = 0.0;
        float dot = rs_vtanh_add_dot(t, q, x, v, (size_t)count);
        for (int i = 0; i < count; i++) {
            ck_assert_msg(t[i] == rs_tanh(q[i] + x[i]), "tanh_add_dot t[%d] of %d", i, count);
            ref_dot += (double)v[i] * tanh((double)(q[i] + x[i]));
            abs_dot += fabs((double)v[i]);
        }
        ck_assert_msg(fabs(dot - ref_dot) <= 1e-6 * abs_dot, "tanh_add_dot %g vs %g", dot, ref_dot);
        ref_dot = abs_dot = 0.0;
        for (int i = 0; i < count; i++) {
            ref_dot += (double)x[i] * q[i];
            abs_dot += fabs((double)x[i] * q[i]);
        }
        dot = rs_vdot(x, q, (size_t)count);
        ck_assert_msg(fabs(dot - ref_dot) <= 1e-6 * abs_dot, "vdot %g vs %g", dot, ref_dot);
        memcpy(y, q, sizeof y);
        rs_vaxpy(y, 0.5f, x, (size_t)count);
        for (int i = 0; i < count; i++)
            ck_assert_float_eq(y[i], q[i] + 0.5f * x[i]);
        memcpy(y, x, sizeof y);
        rs_vscale_shift(y, 0.25f, 0.5f, (size_t)count);
        for (int i = 0; i < count; i++)
            ck_assert_float_eq(y[i], 0.25f * (x[i] - 0.5f));
        /* the backward of tanh_add_dot: t from above, de = 0.7 */
        float dq[N], dk[N], dv[N];
        for (int i = 0; i < N; i++)
            dq[i] = dk[i] = dv[i] = 0.125f * (float)i;
        rs_vtanh_add_dot_backward(dq, dk, dv, t, v, 0.7f, (size_t)count);
        for (int i = 0; i < count; i++) {
            float dpre = 0.7f * v[i] * (1.0f - t[i] * t[i]);
            ck_assert_float_eq(dv[i], 0.125f * (float)i + 0.7f * t[i]);
            ck_assert_float_eq(dq[i], 0.125f * (float)i + dpre);
            ck_assert_float_eq(dk[i], 0.125f * (float)i + dpre);
        }
    }
}
END_TEST

/* The squared norm against a double loop. */
START_TEST(sumsq_matches_a_plain_loop)
{
    enum { N = 1037 };
    static float g[N];
    fill_uniform(g, N, 3.0f, 12);
    double ref = 0.0;
    for (int i = 0; i < N; i++)
        ref += (double)g[i] * g[i];
    for (size_t count = 0; count < 20; count++) {
        double part = 0.0;
        for (size_t i = 0; i < count; i++)
            part += (double)g[i] * g[i];
        ck_assert(fabs(rs_vsumsq(g, count) - part) <= 1e-14 * part);
    }
    ck_assert(fabs(rs_vsumsq(g, N) - ref) <= 1e-14 * ref);
}
END_TEST

/* rs_gemm's one-row path (sgemv) against a plain triple loop, every
 * transpose combination, with strides wider than the rows. */
START_TEST(one_row_gemm_matches_plain_product)
{
    enum { K = 13, N = 9, LD = 17 };
    float A[K * LD], B[K * LD], C[LD], ref[N];
    fill_uniform(A, K * LD, 1.0f, 21);
    fill_uniform(B, K * LD, 1.0f, 22);
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            fill_uniform(C, LD, 1.0f, 23);
            for (int j = 0; j < N; j++) {
                double s = 0.0;
                for (int k = 0; k < K; k++)
                    s += (double)(ta ? A[k * LD] : A[k]) * (tb ? B[j * LD + k] : B[k * LD + j]);
                ref[j] = (float)(0.5 * s + 2.0 * C[j]);
            }
            rs_gemm(&(rs_gemm_call){.ta = ta,
                                    .tb = tb,
                                    .M = 1,
                                    .N = N,
                                    .K = K,
                                    .alpha = 0.5f,
                                    .beta = 2.0f,
                                    .A = A,
                                    .lda = LD,
                                    .B = B,
                                    .ldb = LD,
                                    .C = C,
                                    .ldc = LD});
            for (int j = 0; j < N; j++)
                ck_assert_msg(fabsf(C[j] - ref[j]) <= 1e-5f * (1.0f + fabsf(ref[j])),
                              "ta %d tb %d: C[%d] = %g, expected %g", ta, tb, j, C[j], ref[j]);
        }
}
END_TEST

static size_t plain_argmax(const float *x, size_t count)
{
    size_t best = 0;
    for (size_t i = 1; i < count; i++)
        if (x[i] > x[best])
            best = i;
    return best;
}

/* The plain loop's index: ties to the first, NaN never chosen (but kept at
 * x[0]), -0 and +0 equal, every length and tail (accel/'s twin gives the
 * same: tests/test_kernels.c). */
START_TEST(argmax_is_the_first_maximum)
{
    enum { N = 300 };
    static float x[N];
    for (int trial = 0; trial < 40; trial++) {
        fill_uniform(x, N, trial < 20 ? 4.0f : 1e3f, 100 + trial);
        for (int i = 0; i < N; i++)
            if (trial % 3 == 0)
                x[i] = roundf(x[i]); /* many ties */
        if (trial % 4 == 1)
            x[(trial * 37) % N] = NAN;
        if (trial % 5 == 2) {
            x[0] = NAN;
            x[N - 1] = 1e30f;
        }
        if (trial % 7 == 3) {
            for (int i = 0; i < N; i++)
                x[i] = (i % 2) ? -0.0f : 0.0f;
        }
        if (trial % 6 == 4)
            x[N / 2 + trial] = INFINITY;
        for (size_t count = 1; count <= N; count += (count < 40 ? 1 : 13)) {
            const size_t want = plain_argmax(x, count);
            ck_assert_msg(rs_vargmax(x, count) == want, "trial %d, count %zu: %zu, not %zu", trial,
                          count, rs_vargmax(x, count), want);
        }
    }
}
END_TEST

/* The first i ≥ from with !(x[i] + add ≤ bound), as the plain loop: NaN
 * entries and a NaN bound pass, -inf never does, every start, length and
 * tail. */
START_TEST(first_above_is_the_plain_loops_index)
{
    enum { N = 200 };
    static float x[N];
    const float adds[] = {0.0f, -3.5f, 1e-7f, -INFINITY};
    const float bounds[] = {0.5f, 3.0f, -1e30f, NAN, -INFINITY};
    for (int trial = 0; trial < 12; trial++) {
        fill_uniform(x, N, 4.0f, 300 + trial);
        if (trial % 3 == 1)
            x[(trial * 41) % N] = NAN;
        if (trial % 4 == 2)
            x[(trial * 17) % N] = -INFINITY;
        for (size_t a = 0; a < sizeof adds / sizeof *adds; a++)
            for (size_t b = 0; b < sizeof bounds / sizeof *bounds; b++)
                for (size_t count = 0; count <= N; count += (count < 20 ? 1 : 29))
                    for (size_t from = 0; from <= count; from += 7) {
                        size_t want = from;
                        while (want < count && x[want] + adds[a] <= bounds[b])
                            want++;
                        const size_t got = rs_vfirst_above(x, adds[a], bounds[b], from, count);
                        ck_assert_msg(got == want,
                                      "trial %d add %g bound %g [%zu,%zu): %zu, not %zu", trial,
                                      adds[a], bounds[b], from, count, got, want);
                    }
    }
}
END_TEST

Suite *vecmath_suite(void)
{
    Suite *s = suite_create("vecmath");
    TCase *tc = tcase_create("kernels");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, exp_within_stated_ulps);
    tcase_add_test(tc, tanh_within_stated_ulps);
    tcase_add_test(tc, sigmoid_within_stated_ulps);
    tcase_add_test(tc, vector_kernels_match_scalar);
    tcase_add_test(tc, sumsq_matches_a_plain_loop);
    tcase_add_test(tc, one_row_gemm_matches_plain_product);
    tcase_add_test(tc, first_above_is_the_plain_loops_index);
    tcase_add_test(tc, argmax_is_the_first_maximum);
    suite_add_tcase(s, tc);
    return s;
}
