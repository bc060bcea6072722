/* Adam and gradient clipping (src/nn/optimizer.c) against values computed here
 * in double from the equations of Kingma & Ba (2015), algorithm 1:
 *
 *   m_t = β1 m_{t-1} + (1 − β1) g_t          v_t = β2 v_{t-1} + (1 − β2) g_t²
 *   m̂_t = m_t / (1 − β1^t)                   v̂_t = v_t / (1 − β2^t)
 *   θ_t = θ_{t-1} − lr · m̂_t / (√v̂_t + ε)
 *
 * and clipping by the global norm: g ← g · max_norm / ‖g‖ when ‖g‖ > max_norm > 0.
 * Then the update in float bit for bit against the textbook loop (on the
 * kernels in use: the portable loop under make nn-check; accel/'s AVX2 twin
 * against it in tests/test_kernels.c), and the norm's parts (optimizer.h). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gradcheck.h"
#include "nn/optimizer.h"
#include "nn/vecmath.h"

enum { COUNT = 4, STEPS = 3 };

/* Three steps of different gradients on four parameters, with zero, negative,
 * tiny and large entries. */
static const float grads[STEPS][COUNT] = {
    {0.5f, -0.25f, 0.0f, 2.0f},
    {-0.1f, -0.25f, 1e-3f, 3.0f},
    {0.3f, 0.75f, -2e-3f, -1.0f},
};
static const float start[COUNT] = {1.0f, -0.5f, 0.25f, 0.0f};

/* The reference: Adam in double, t = 1..steps. */
static void adam_reference(double *theta, int steps, double lr, double beta1, double beta2,
                           double eps)
{
    double m[COUNT] = {0}, v[COUNT] = {0};
    for (int i = 0; i < COUNT; i++)
        theta[i] = start[i];
    for (int t = 1; t <= steps; t++)
        for (int i = 0; i < COUNT; i++) {
            double g = grads[t - 1][i];
            m[i] = beta1 * m[i] + (1.0 - beta1) * g;
            v[i] = beta2 * v[i] + (1.0 - beta2) * g * g;
            double m_hat = m[i] / (1.0 - pow(beta1, t)), v_hat = v[i] / (1.0 - pow(beta2, t));
            theta[i] -= lr * m_hat / (sqrt(v_hat) + eps);
        }
}

static void check_adam(float lr, float beta1, float beta2, float eps)
{
    float params[COUNT], m[COUNT] = {0}, v[COUNT] = {0};
    memcpy(params, start, sizeof params);
    for (int t = 1; t <= STEPS; t++) {
        rs_adam_update(params, grads[t - 1], 1.0f, m, v, COUNT,
                       &(rs_adam_settings){lr, beta1, beta2, eps}, t);
        double expected[COUNT];
        adam_reference(expected, t, lr, beta1, beta2, eps);
        for (int i = 0; i < COUNT; i++) {
            /* float32 arithmetic on values of order 1: a few ulps. A missing
             * bias correction or ε inside the root is off by ≥ 1e-3 here. */
            ck_assert_msg(fabs(params[i] - expected[i]) <= 2e-6 * fmax(1.0, fabs(expected[i])),
                          "step %d, entry %d: %.9g, expected %.9g (eps %g)", t, i, params[i],
                          expected[i], eps);
        }
    }
}

START_TEST(adam_matches_the_equations_in_double)
{
    check_adam(0.01f, 0.9f, 0.999f, 1e-8f);
    /* A large ε makes its place (outside the root) matter. */
    check_adam(0.05f, 0.8f, 0.99f, 0.1f);
}
END_TEST

START_TEST(adam_first_step_is_lr_times_sign)
{
    /* With bias correction m̂_1 = g and v̂_1 = g², so the first update is
     * lr · g / (|g| + ε): lr against the gradient's sign, 0 where g = 0. */
    float params[COUNT], m[COUNT] = {0}, v[COUNT] = {0};
    memcpy(params, start, sizeof params);
    const rs_adam_settings adam = {0.01f, 0.9f, 0.999f, 1e-8f};
    rs_adam_update(params, grads[0], 1.0f, m, v, COUNT, &adam, 1);
    const float expected[COUNT] = {0.99f, -0.49f, 0.25f, -0.01f};
    for (int i = 0; i < COUNT; i++)
        ck_assert_float_eq_tol(params[i], expected[i], 1e-6f);
    /* The moments hold the raw (uncorrected) averages. */
    ck_assert_float_eq_tol(m[0], 0.05f, 1e-6f);
    ck_assert_float_eq_tol(v[3], 0.004f, 1e-6f);
}
END_TEST

START_TEST(grad_norm_known_answers)
{
    const float g345[] = {3.0f, -4.0f};
    ck_assert_double_eq_tol(rs_grad_norm(g345, 2), 5.0, 1e-12);
    const float g122[] = {1.0f, 2.0f, -2.0f, 0.0f};
    ck_assert_double_eq_tol(rs_grad_norm(g122, 4), 3.0, 1e-12);
    ck_assert(rs_grad_norm(g122, 0) == 0.0);
    /* Accumulated in double: 1 followed by 2^20 squares of 2^-26 is 1 + 2^-6;
     * a float sum would drop every one of them (its ulp at 1 is 2^-23). */
    enum { SMALL = 1 << 20 };
    static float many[SMALL + 1];
    many[0] = 1.0f;
    for (size_t i = 1; i <= SMALL; i++)
        many[i] = 0x1p-13f;
    ck_assert_double_eq_tol(rs_grad_norm(many, SMALL + 1), sqrt(1.0 + 0x1p-6), 1e-12);
}
END_TEST

START_TEST(clipping_above_below_and_off)
{
    /* Above: ‖(3, 4)‖ = 5 > 1 → the gradients are scaled by 1/5, to norm 1. */
    float g[2] = {3.0f, -4.0f};
    ck_assert_float_eq_tol(rs_clip_factor(rs_grad_norm(g, 2), 1.0f), 0.2f, 1e-7f);
    /* Below and at the limit: factor 1. */
    ck_assert(rs_clip_factor(5.0, 10.0f) == 1.0f);
    ck_assert(rs_clip_factor(5.0, 5.0f) == 1.0f);
    /* max_norm 0 (or below) turns clipping off, however large the norm. */
    ck_assert(rs_clip_factor(5e6, 0.0f) == 1.0f);
    ck_assert(rs_clip_factor(5e6, -1.0f) == 1.0f);
    /* A NaN norm is not "above" the limit: nothing is scaled by NaN. */
    ck_assert(rs_clip_factor(NAN, 1.0f) == 1.0f);
}
END_TEST

/* Adam with grad_scale s equals Adam on the gradients multiplied by s (the
 * clipped gradients), and leaves the gradients as they were. */
START_TEST(adam_scales_the_gradients_it_is_given)
{
    float p1[3] = {0.5f, -1.0f, 2.0f}, p2[3] = {0.5f, -1.0f, 2.0f};
    float m1[3] = {0}, v1[3] = {0}, m2[3] = {0}, v2[3] = {0};
    float g[3] = {3.0f, -4.0f, 0.25f}, scaled[3];
    for (int i = 0; i < 3; i++)
        scaled[i] = 0.2f * g[i];
    for (int t = 1; t <= 3; t++) {
        const rs_adam_settings adam = {0.01f, 0.9f, 0.999f, 1e-8f};
        rs_adam_update(p1, g, 0.2f, m1, v1, 3, &adam, t);
        rs_adam_update(p2, scaled, 1.0f, m2, v2, 3, &adam, t);
    }
    for (int i = 0; i < 3; i++) {
        ck_assert_float_eq_tol(p1[i], p2[i], 1e-6f);
        ck_assert_float_eq_tol(m1[i], m2[i], 1e-7f);
    }
    ck_assert(g[0] == 3.0f && g[1] == -4.0f && g[2] == 0.25f);
}
END_TEST

/* The update against the textbook loop in float (clip applied to the
 * gradients first), bit for bit, here over 1037 entries (129 blocks of 8
 * and a tail). */
START_TEST(adam_is_the_plain_loop_bit_for_bit)
{
    enum { N = 1037 };
    static float p[N], g[N], m[N], v[N], p2[N], g2[N], m2[N], v2[N];
    const float scale = 0.37f, lr = 0.002f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
    const int64_t step = 3;
    const float c1 = (float)(1.0 - pow(b1, (double)step)),
                c2 = (float)(1.0 - pow(b2, (double)step));
    fill_uniform(p, N, 1.0f, 11);
    fill_uniform(g, N, 3.0f, 12);
    fill_uniform(m, N, 0.1f, 13);
    fill_uniform(v, N, 0.1f, 14);
    for (int i = 0; i < N; i++)
        v[i] *= v[i];
    memcpy(p2, p, sizeof p);
    memcpy(g2, g, sizeof g);
    memcpy(m2, m, sizeof m);
    memcpy(v2, v, sizeof v);
    rs_adam_update(p, g, scale, m, v, N, &(rs_adam_settings){lr, b1, b2, eps}, step);
    for (int i = 0; i < N; i++) {
        g2[i] *= scale;
        m2[i] = b1 * m2[i] + (1.0f - b1) * g2[i];
        v2[i] = b2 * v2[i] + (1.0f - b2) * g2[i] * g2[i];
        p2[i] -= lr * (m2[i] / c1) / (sqrtf(v2[i] / c2) + eps);
    }
    ck_assert_msg(!memcmp(p, p2, sizeof p) && !memcmp(m, m2, sizeof m) && !memcmp(v, v2, sizeof v),
                  "the update differs from the loop");
}
END_TEST

/* The norm's parts: slices that tile the buffer in order, each part's Σ g²
 * that of its slice, folded in part order; one part is rs_grad_norm, bit for
 * bit. */
START_TEST(grad_norm_parts_tile_the_buffer_in_order)
{
    enum { N = 1037, PARTS = 3 };
    static float g[N];
    fill_uniform(g, N, 3.0f, 15);
    size_t next = 0;
    double sumsq[PARTS], folded = 0.0;
    for (int p = 0; p < PARTS; p++) {
        size_t lo, hi;
        rs_slice(N, p, PARTS, &lo, &hi);
        ck_assert(lo == next && hi > lo);
        next = hi;
        sumsq[p] = rs_grad_sumsq(g, N, p, PARTS);
        ck_assert(sumsq[p] == rs_vsumsq(g + lo, hi - lo));
        folded += sumsq[p];
    }
    ck_assert(next == N);
    ck_assert(rs_grad_norm_of_parts(sumsq, PARTS) == sqrt(folded));
    const double whole = rs_grad_sumsq(g, N, 0, 1);
    ck_assert(rs_grad_norm(g, N) == rs_grad_norm_of_parts(&whole, 1));
    ck_assert(rs_grad_norm(g, N) == sqrt(rs_vsumsq(g, N)));
    ck_assert(fabs(rs_grad_norm_of_parts(sumsq, PARTS) - rs_grad_norm(g, N)) <=
              1e-14 * rs_grad_norm(g, N));
}
END_TEST

Suite *optimizer_suite(void)
{
    Suite *s = suite_create("optimizer");
    TCase *tc = tcase_create("adam and clipping");
    tcase_add_test(tc, adam_matches_the_equations_in_double);
    tcase_add_test(tc, adam_first_step_is_lr_times_sign);
    tcase_add_test(tc, grad_norm_known_answers);
    tcase_add_test(tc, clipping_above_below_and_off);
    tcase_add_test(tc, adam_scales_the_gradients_it_is_given);
    tcase_add_test(tc, adam_is_the_plain_loop_bit_for_bit);
    tcase_add_test(tc, grad_norm_parts_tile_the_buffer_in_order);
    suite_add_tcase(s, tc);
    return s;
}
