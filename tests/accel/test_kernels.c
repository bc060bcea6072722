/* accel/kernels.c: the AVX2 twins against nn/'s portable loops, entry by
 * entry of the two tables (rs_vec_avx2, rs_vec_portable), bit for bit, so
 * that results do not depend on the machine; and the choice of the kernels
 * nn/ runs (rs_accel_kernels_select). Where the processor lacks AVX2 only
 * the choice is checked. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "accel/kernels.h"
#include "gradcheck.h"
#include "nn/optimizer.h"
#include "nn/vecmath.h"

/* The twins, or NULL (and a note) where there are none. */
static const rs_vec_kernels *twins(void)
{
    const rs_vec_kernels *k = rs_vec_avx2();
    if (!k)
        fprintf(stderr, "no AVX2 on this CPU: only the portable loops exist to compare\n");
    return k;
}

START_TEST(element_wise_and_sums_agree_bit_for_bit)
{
    const rs_vec_kernels *a = twins(), *p = &rs_vec_portable;
    if (!a)
        return;
    enum { N = 1003 };
    static float x[N], q[N], v[N], ya[N], yp[N];
    fill_uniform(x, N, 30.0f, 7);
    fill_uniform(q, N, 2.0f, 8);
    fill_uniform(v, N, 1.0f, 9);
    x[5] = NAN;
    x[6] = -INFINITY;
    x[7] = INFINITY;
    x[8] = -0.0f;
    x[9] = 1e-30f;
    x[10] = -95.0f;
    typedef void (*vfn)(float *, const float *, size_t);
    const vfn fa[] = {a->vexp, a->vtanh, a->vsigmoid}, fp[] = {p->vexp, p->vtanh, p->vsigmoid};
    for (int f = 0; f < 3; f++) {
        fa[f](ya, x, N);
        fp[f](yp, x, N);
        ck_assert_msg(!memcmp(ya, yp, sizeof ya), "kernel %d differs between the tables", f);
    }
    for (size_t count = 1; count < 40; count++) {
        const float *xs = x + 11; /* finite values only */
        const double s1 = a->vexp_shift_sum(ya, xs, 3.0f, count);
        const double s0 = p->vexp_shift_sum(yp, xs, 3.0f, count);
        ck_assert(!memcmp(ya, yp, sizeof(float) * count));
        const float d1 = a->vtanh_add_dot(ya, q, xs, v, count);
        const float d0 = p->vtanh_add_dot(yp, q, xs, v, count);
        ck_assert(!memcmp(ya, yp, sizeof(float) * count));
        ck_assert_msg(s1 == s0 && d1 == d0 && a->vdot(q, xs, count) == p->vdot(q, xs, count) &&
                          a->vmax(xs, count) == p->vmax(xs, count),
                      "sums differ at %zu", count);
        /* the sum alone: the same bits as with the exps stored */
        ck_assert(a->vexp_shift_total(xs, 3.0f, count) == s0);
        ck_assert(p->vexp_shift_total(xs, 3.0f, count) == s0);
        ck_assert(a->vsumsq(xs, count * 20) == p->vsumsq(xs, count * 20));
    }
    memcpy(ya, v, sizeof ya);
    memcpy(yp, v, sizeof yp);
    a->vaxpy(ya, 0.3f, q, N);
    p->vaxpy(yp, 0.3f, q, N);
    ck_assert(!memcmp(ya, yp, sizeof ya));
    a->vscale_shift(ya, 0.7f, 0.2f, N - 3);
    p->vscale_shift(yp, 0.7f, 0.2f, N - 3);
    ck_assert(!memcmp(ya, yp, sizeof ya));
}
END_TEST

/* The attention's backward kernel: the three gradients it adds to. */
START_TEST(tanh_add_dot_backward_agrees_bit_for_bit)
{
    const rs_vec_kernels *a = twins(), *p = &rs_vec_portable;
    if (!a)
        return;
    enum { N = 37 };
    float phi[N], v[N], g[3][2][N];
    fill_uniform(phi, N, 0.99f, 21);
    fill_uniform(v, N, 1.0f, 22);
    for (int k = 0; k < 3; k++) {
        fill_uniform(g[k][0], N, 1.0f, 23 + k);
        memcpy(g[k][1], g[k][0], sizeof g[k][0]);
    }
    for (size_t count = 0; count <= N; count++) {
        a->vtanh_add_dot_backward(g[0][0], g[1][0], g[2][0], phi, v, 0.37f, count);
        p->vtanh_add_dot_backward(g[0][1], g[1][1], g[2][1], phi, v, 0.37f, count);
    }
    for (int k = 0; k < 3; k++)
        ck_assert_msg(!memcmp(g[k][0], g[k][1], sizeof g[k][0]), "gradient %d differs", k);
}
END_TEST

/* The searches' scans: the same index on every length and tail, with ties,
 * NaN (at x[0] too) and infinities. */
START_TEST(argmax_and_first_above_agree)
{
    const rs_vec_kernels *a = twins(), *p = &rs_vec_portable;
    if (!a)
        return;
    enum { N = 300 };
    static float x[N];
    const float bounds[] = {0.5f, -1e30f, NAN, -INFINITY};
    for (int trial = 0; trial < 24; trial++) {
        fill_uniform(x, N, trial < 12 ? 4.0f : 1e3f, 100 + trial);
        for (int i = 0; trial % 3 == 0 && i < N; i++)
            x[i] = roundf(x[i]); /* many ties */
        if (trial % 4 == 1)
            x[(trial * 37) % N] = NAN;
        if (trial % 5 == 2)
            x[0] = NAN, x[N - 1] = 1e30f;
        if (trial % 6 == 4)
            x[N / 2 + trial] = INFINITY, x[N / 3] = -INFINITY;
        for (size_t count = 1; count <= N; count += (count < 40 ? 1 : 13)) {
            ck_assert_msg(a->vargmax(x, count) == p->vargmax(x, count), "trial %d, count %zu",
                          trial, count);
            for (size_t b = 0; b < sizeof bounds / sizeof *bounds; b++)
                for (size_t from = 0; from <= count; from += 7)
                    ck_assert_msg(a->vfirst_above(x, -0.5f, bounds[b], from, count) ==
                                      p->vfirst_above(x, -0.5f, bounds[b], from, count),
                                  "trial %d bound %g [%zu,%zu)", trial, bounds[b], from, count);
        }
    }
}
END_TEST

/* Adam's update, 129 blocks of 8 and a tail: parameters and both moments. */
START_TEST(adam_agrees_bit_for_bit)
{
    const rs_vec_kernels *a = twins(), *p = &rs_vec_portable;
    if (!a)
        return;
    enum { N = 1037 };
    static float w[2][N], g[N], m[2][N], v[2][N];
    fill_uniform(w[0], N, 1.0f, 11);
    fill_uniform(g, N, 3.0f, 12);
    fill_uniform(m[0], N, 0.1f, 13);
    fill_uniform(v[0], N, 0.1f, 14);
    for (int i = 0; i < N; i++)
        v[0][i] *= v[0][i];
    memcpy(w[1], w[0], sizeof w[0]);
    memcpy(m[1], m[0], sizeof m[0]);
    memcpy(v[1], v[0], sizeof v[0]);
    const rs_adam_coeffs k = {0.002f, 0.9f, 0.999f, 1e-8f, 0.271f, 0.003f};
    a->adam(w[0], g, 0.37f, m[0], v[0], N, &k);
    p->adam(w[1], g, 0.37f, m[1], v[1], N, &k);
    ck_assert(!memcmp(w[0], w[1], sizeof w[0]) && !memcmp(m[0], m[1], sizeof m[0]) &&
              !memcmp(v[0], v[1], sizeof v[0]));
}
END_TEST

/* What nn/ runs: the portable table when asked, the twins when asked and
 * present, the processor's best with -1. */
START_TEST(select_installs_the_table_asked_for)
{
    const rs_vec_kernels *best = rs_vec_avx2();
    ck_assert_int_eq(rs_accel_kernels_select(0), 0);
    ck_assert(rs_vec_kernels_in_use() == &rs_vec_portable);
    ck_assert_int_eq(rs_accel_kernels_select(1), best != NULL);
    ck_assert(rs_vec_kernels_in_use() == (best ? best : &rs_vec_portable));
    rs_accel_kernels_select(0);
    ck_assert_int_eq(rs_accel_kernels_select(-1), best != NULL);
    ck_assert(rs_vec_kernels_in_use() == (best ? best : &rs_vec_portable));
}
END_TEST

Suite *kernels_suite(void)
{
    Suite *s = suite_create("kernels");
    TCase *tc = tcase_create("twins");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, element_wise_and_sums_agree_bit_for_bit);
    tcase_add_test(tc, tanh_add_dot_backward_agrees_bit_for_bit);
    tcase_add_test(tc, argmax_and_first_above_agree);
    tcase_add_test(tc, adam_agrees_bit_for_bit);
    tcase_add_test(tc, select_installs_the_table_asked_for);
    suite_add_tcase(s, tc);
    return s;
}
