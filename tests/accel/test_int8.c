/* int8 weights for decoding (src/accel/int8.c, translate --int8): the AVX2 dot
 * products (four weight rows against one or more input rows) against the
 * scalar one bit for bit, the quantizer's range [−127, 127], the quantized
 * product against the float one within the bound int8.h derives, either
 * kernel's product against the reference on odd shapes, the product over chosen
 * rows against the full one, a model's step with and without its int8
 * copies, and translate --int8 on a toy model of the dates corpus: its
 * outputs against the exact ones (greedy and beam 5) and the checkpoint's
 * bytes after it. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "accel/accel.h"
#include "accel/int8.h"
#include "nn/linalg.h"
#include "nn/network.h"
#include "testdir.h"
#include "testprog.h"
#include "tinymodel.h"

/* A reproducible stream (the tests' own, so they do not depend on rs_rng). */
static uint32_t next_u32(uint32_t *state)
{
    *state = *state * 1664525u + 1013904223u;
    return *state >> 8;
}

static float uniform(uint32_t *state, float lo, float hi)
{
    return lo + (hi - lo) * (float)(next_u32(state) & 0xffffff) / (float)0x1000000;
}

static int8_t random_q8(uint32_t *state)
{
    return (int8_t)((int)(next_u32(state) % 255) - 127);
}

/* ---- the kernel ---- */

static const int sizes[] = {0,  1,  2,  7,  15, 16,  17,  31,   32,  33,
                            47, 48, 63, 64, 65, 100, 255, 1000, 1025};

START_TEST(the_avx2_kernel_gives_the_scalar_sums)
{
    static int8_t rows[4][1100], x[1100];
    const int8_t *const w[4] = {rows[0], rows[1], rows[2], rows[3]};
    uint32_t st = 7;
    int32_t avx2[4], scalar[4];
    if (!rs_q8_dot4_avx2(w, x, 0, avx2)) {
        fprintf(stderr, "int8: no AVX2 here; only the scalar kernel is checked\n");
        return;
    }
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int trial = 0; trial < 4; trial++) {
            const int count = sizes[s];
            for (int k = 0; k < count; k++) {
                x[k] = random_q8(&st);
                for (int i = 0; i < 4; i++)
                    rows[i][k] = random_q8(&st);
            }
            /* Extremes (trials 1 and 2): every pair ±127 · ±127, the largest
             * sums, of both signs, beside a random row. */
            for (int k = 0; trial > 0 && trial < 3 && k < count; k++) {
                x[k] = trial == 1 ? 127 : -127;
                rows[0][k] = 127;
                rows[1][k] = -127;
                rows[3][k] = k % 2 ? 127 : -127;
            }
            rs_q8_dot4_scalar(w, x, count, scalar);
            ck_assert(rs_q8_dot4_avx2(w, x, count, avx2));
            for (int i = 0; i < 4; i++) {
                int64_t exact = 0;
                for (int k = 0; k < count; k++)
                    exact += (int64_t)rows[i][k] * x[k];
                ck_assert_int_eq(scalar[i], exact);
                ck_assert_int_eq(rs_q8_dot_scalar(w[i], x, count), exact);
                ck_assert_msg(avx2[i] == scalar[i], "count %d trial %d row %d: avx2 %d, scalar %d",
                              count, trial, i, avx2[i], scalar[i]);
            }
        }
}
END_TEST

START_TEST(the_widest_product_does_not_overflow)
{
    /* RS_Q8_MAX_COLS pairs of 127 · ±127: ±2¹⁷ · 16129 = ±2 114 060 288, inside int32. */
    int8_t *pos = malloc(RS_Q8_MAX_COLS), *neg = malloc(RS_Q8_MAX_COLS);
    ck_assert(pos && neg);
    memset(pos, 127, RS_Q8_MAX_COLS);
    memset(neg, -127, RS_Q8_MAX_COLS);
    const int8_t *const w[4] = {pos, neg, pos, neg};
    const int32_t want = (int32_t)((int64_t)RS_Q8_MAX_COLS * 127 * 127);
    int32_t sums[4];
    rs_q8_dot4_scalar(w, pos, RS_Q8_MAX_COLS, sums);
    ck_assert_int_eq(sums[0], want);
    ck_assert_int_eq(sums[1], -want);
    if (rs_q8_dot4_avx2(w, pos, RS_Q8_MAX_COLS, sums)) {
        ck_assert_int_eq(sums[2], want);
        ck_assert_int_eq(sums[3], -want);
    }
    free(pos);
    free(neg);
}
END_TEST

/* Four weight rows against nb input rows (the AVX2 kernel takes them two at
 * a time, the odd one alone): each int32 sum equal to the scalar one and
 * to the exact sum, for batch sizes around the pairs, widths around the
 * 32-entry rounds (the rest by the scalar loop) and rows of input apart by
 * a stride wider than the width; random entries, then every pair ±127 ·
 * ±127 of both signs. */
START_TEST(the_avx2_block_kernel_gives_the_scalar_sums)
{
    enum { MAXNB = 64, MAXW = 300, STRIDE = 301 };
    static int8_t rows[4][MAXW], x[MAXNB * STRIDE];
    static int32_t avx2[MAXNB * 4], scalar[MAXNB * 4];
    const int8_t *const w[4] = {rows[0], rows[1], rows[2], rows[3]};
    const int batches[] = {1, 2, 3, 5, 64}, widths[] = {0, 1, 31, 33, 37, 63, 95, 256, 257, 300};
    if (!rs_q8_dot4xn_avx2(w, x, STRIDE, 1, 0, avx2)) {
        fprintf(stderr, "int8: no AVX2 here; only the scalar kernel is checked\n");
        return;
    }
    uint32_t st = 17;
    for (size_t bi = 0; bi < sizeof batches / sizeof batches[0]; bi++)
        for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
            for (int trial = 0; trial < 3; trial++) {
                const int nb = batches[bi], count = widths[wi];
                for (int k = 0; k < MAXW; k++)
                    for (int i = 0; i < 4; i++)
                        rows[i][k] = trial == 0 ? random_q8(&st) : (i + k) % 2 ? 127 : -127;
                for (int k = 0; k < MAXNB * STRIDE; k++)
                    x[k] = trial == 0 ? random_q8(&st) : trial == 1 ? 127 : -127;
                rs_q8_dot4xn_scalar(w, x, STRIDE, nb, count, scalar);
                ck_assert(rs_q8_dot4xn_avx2(w, x, STRIDE, nb, count, avx2));
                for (int b = 0; b < nb; b++)
                    for (int i = 0; i < 4; i++) {
                        int64_t exact = 0;
                        for (int k = 0; k < count; k++)
                            exact += (int64_t)rows[i][k] * x[b * STRIDE + k];
                        ck_assert_int_eq(scalar[4 * b + i], exact);
                        ck_assert_msg(avx2[4 * b + i] == scalar[4 * b + i],
                                      "nb %d width %d trial %d [%d,%d]: avx2 %d, scalar %d", nb,
                                      count, trial, b, i, avx2[4 * b + i], scalar[4 * b + i]);
                    }
            }
}
END_TEST

/* ---- quantizing ---- */

START_TEST(rows_are_quantized_by_their_largest_entry)
{
    const float W[3 * 4] = {0.5f, -1.0f, 0.25f, 0.0f, /* max 1: q = 64, -127, 32, 0 */
                            0.0f, 0.0f,  0.0f,  0.0f, /* zeros: scale 0, stays 0 */
                            3.0f, 1.0f,  -2.9f, 0.01f};
    rs_q8_matrix q;
    rs_error err;
    ck_assert_int_eq(rs_q8_matrix_init(&q, RS_CMAT(W, 3, 4), &err), 0);
    ck_assert_float_eq(q.scale[0], 1.0f / 127.0f);
    ck_assert_int_eq(q.q[0], 64); /* 63.5 rounds away from zero */
    ck_assert_int_eq(q.q[1], -127);
    ck_assert_int_eq(q.q[2], 32);
    ck_assert_int_eq(q.q[3], 0);
    ck_assert_float_eq(q.scale[1], 0.0f);
    for (int k = 0; k < 4; k++)
        ck_assert_int_eq(q.q[4 + k], 0);
    ck_assert_int_eq(q.q[8], 127);
    ck_assert_int_eq(q.q[10], -123); /* -2.9 / 3 · 127 = -122.77 */
    rs_q8_matrix_free(&q);

    const float bad[2] = {1.0f, NAN};
    ck_assert_int_eq(rs_q8_matrix_init(&q, RS_CMAT(bad, 1, 2), &err), -1);
    ck_assert_msg(strstr(err.msg, "not finite"), "%s", err.msg);
}
END_TEST

/* The AVX2 kernel is exact only for entries in [−127, 127] (−128's sign
 * cannot be flipped in int8, and |x| · w pairs of 128² saturate int16):
 * the quantizer never makes −128, whatever the row — its largest entry
 * negative, entries at float rounding's edge (x · 127/max just past 127),
 * denormals, huge values, infinities and NaN — and the AVX2 quantizer makes
 * the same bytes. */
START_TEST(the_quantizer_never_makes_minus_128)
{
    enum { N = 257 };
    float x[N];
    int8_t p[N];
    uint32_t st = 41;
    for (int trial = 0; trial < 2000; trial++) {
        const float scale = trial % 4 == 0   ? 1e-40f
                            : trial % 4 == 1 ? 3e38f
                            : trial % 4 == 2 ? 1.0f
                                             : uniform(&st, 1e-3f, 1e3f);
        for (int k = 0; k < N; k++)
            x[k] = scale * uniform(&st, -1.0f, 1.0f);
        /* the largest entry negative, and others within an ulp of it */
        x[trial % N] = -scale;
        x[(trial + 1) % N] = nextafterf(-scale, 0.0f);
        x[(trial + 3) % N] = 0.0f; /* 0 · 127/max is NaN where max is so small 127/max is ∞ */
        if (trial % 7 == 0)
            x[(trial + 2) % N] = trial % 2 ? -INFINITY : NAN;
        if (trial % 13 == 12) /* a row of zeros */
            memset(x, 0, sizeof x);
        float t, tv;
        int8_t pv[N];
        rs_q8_quantize(p, &t, x, N);
        for (int k = 0; k < N; k++)
            ck_assert_msg(p[k] >= -127 && p[k] <= 127, "trial %d: x[%d] = %g became %d", trial, k,
                          x[k], p[k]);
        ck_assert_int_eq(p[trial % N], scale > 0.0f && trial % 13 != 12 ? -127 : 0);
        /* the AVX2 quantizer the products use: the same bytes and scale,
         * here and on a row's first n entries (n not a multiple of 8) */
        const int n = trial % 2 ? N : trial % 29;
        rs_q8_quantize(p, &t, x, n);
        if (rs_q8_quantize_avx2(pv, &tv, x, n)) {
            ck_assert_msg(tv == t, "trial %d: t %a, avx2 %a", trial, t, tv);
            ck_assert_msg(memcmp(pv, p, (size_t)n) == 0, "trial %d: avx2 bytes differ", trial);
        }
    }
    /* and the weights, quantized by the same function */
    const float W[2 * 3] = {-3.0f, 2.9999998f, -2.9999998f, -1e-45f, 0.0f, 1e-45f};
    rs_q8_matrix q;
    rs_error err;
    ck_assert_int_eq(rs_q8_matrix_init(&q, RS_CMAT(W, 2, 3), &err), 0);
    for (int i = 0; i < 6; i++)
        ck_assert_msg(q.q[i] >= -127, "W[%d] = %g became %d", i, W[i], q.q[i]);
    ck_assert_int_eq(q.q[0], -127);
    rs_q8_matrix_free(&q);
}
END_TEST

/* ---- the product ---- */

enum { PB = 3, PIN = 37, POUT = 13 };

typedef struct {
    float W[POUT * PIN], x[PB * PIN], bias[POUT];
    rs_q8_matrix q;
    int8_t scratch_x[PB * PIN];
    float scratch_scale[PB];
    rs_q8_scratch s;
} product_case;

static void product_case_make(product_case *c, uint32_t seed)
{
    uint32_t st = seed;
    for (int i = 0; i < POUT * PIN; i++)
        c->W[i] = uniform(&st, -0.8f, 0.8f);
    for (int i = 0; i < PB * PIN; i++)
        c->x[i] = uniform(&st, -2.0f, 2.0f);
    for (int r = 0; r < POUT; r++)
        c->bias[r] = uniform(&st, -1.0f, 1.0f);
    c->W[5 * PIN + 3] = 5.0f; /* a row with one large weight */
    rs_error err;
    ck_assert_int_eq(rs_q8_matrix_init(&c->q, RS_CMAT(c->W, POUT, PIN), &err), 0);
    c->s = (rs_q8_scratch){c->scratch_x, c->scratch_scale, sizeof c->scratch_x, PB};
}

START_TEST(the_int8_product_is_within_the_bound_of_the_float_one)
{
    product_case c;
    product_case_make(&c, 11);
    float y[PB * POUT], exact[PB * POUT];
    rs_q8_forward(RS_MAT(y, PB, POUT), RS_CMAT(c.x, PB, PIN), &c.q, NULL, c.bias, &c.s, 0.0f);
    double worst = 0.0;
    for (int b = 0; b < PB; b++) {
        int8_t p[PIN];
        float t;
        rs_q8_quantize(p, &t, c.x + b * PIN, PIN);
        for (int r = 0; r < POUT; r++) {
            /* int8.h: |y − ŷ| ≤ s_r t_b (½ Σ|q| + ½ Σ|p| + in/4), in double, plus
             * float rounding (a few ulp of Σ |W| |x|). */
            double sum = c.bias[r], abs_sum = fabs(c.bias[r]), sq = 0.0, sp = 0.0;
            for (int k = 0; k < PIN; k++) {
                sum += (double)c.W[r * PIN + k] * c.x[b * PIN + k];
                abs_sum += fabs((double)c.W[r * PIN + k] * c.x[b * PIN + k]);
                sq += abs(c.q.q[r * PIN + k]);
                sp += abs(p[k]);
            }
            const double bound =
                (double)c.q.scale[r] * t * (0.5 * sq + 0.5 * sp + PIN / 4.0) + 1e-5 * abs_sum;
            const double e = fabs(y[b * POUT + r] - sum);
            ck_assert_msg(e <= bound, "[%d,%d]: int8 %g, exact %g, error %g > bound %g", b, r,
                          y[b * POUT + r], sum, e, bound);
            worst = fmax(worst, e / bound);
            exact[b * POUT + r] = (float)sum;
        }
    }
    /* and it is not trivially loose: the error is a real fraction of it */
    ck_assert_msg(worst > 0.01 && worst < 1.0, "worst error / bound %g", worst);
    /* beta = 1 accumulates x Wᵀ + b on top of y (up to the order of the float sums) */
    float acc[PB * POUT];
    memcpy(acc, exact, sizeof acc);
    rs_q8_forward(RS_MAT(acc, PB, POUT), RS_CMAT(c.x, PB, PIN), &c.q, NULL, c.bias, &c.s, 1.0f);
    for (int i = 0; i < PB * POUT; i++)
        ck_assert_float_eq_tol(acc[i], exact[i] + y[i], 1e-5f * (fabsf(exact[i]) + fabsf(y[i])));
    rs_q8_matrix_free(&c.q);
}
END_TEST

/* The product is its definition, bit for bit: s_r · t_b · (float) Σ + bias,
 * with Σ the scalar int32 sum, for sizes around the kernel's blocks (4 rows,
 * 16 columns). */
START_TEST(the_product_is_scale_times_the_scalar_sum)
{
    enum { MAXB = 3, MAXO = 13, MAXI = 37 };
    const int shapes[][3] = {{1, 1, 1}, {1, 4, 16}, {2, 5, 17}, {3, 13, 37}, {1, 3, 33}};
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        const int B = shapes[c][0], out = shapes[c][1], in = shapes[c][2];
        float W[MAXO * MAXI], x[MAXB * MAXI], bias[MAXO], y[MAXB * MAXO];
        uint32_t st = 100 + (uint32_t)c;
        for (int i = 0; i < out * in; i++)
            W[i] = uniform(&st, -1.0f, 1.0f);
        for (int i = 0; i < B * in; i++)
            x[i] = uniform(&st, -3.0f, 3.0f);
        for (int r = 0; r < out; r++)
            bias[r] = uniform(&st, -1.0f, 1.0f);
        rs_q8_matrix q;
        rs_error err;
        ck_assert_int_eq(rs_q8_matrix_init(&q, RS_CMAT(W, out, in), &err), 0);
        int8_t sx[MAXB * MAXI];
        float sscale[MAXB];
        const rs_q8_scratch s = {sx, sscale, sizeof sx, MAXB};
        rs_q8_forward(RS_MAT(y, B, out), RS_CMAT(x, B, in), &q, NULL, bias, &s, 0.0f);
        for (int b = 0; b < B; b++) {
            int8_t p[MAXI];
            float t;
            rs_q8_quantize(p, &t, x + b * in, in);
            for (int r = 0; r < out; r++) {
                const float want =
                    q.scale[r] * t * (float)rs_q8_dot_scalar(q.q + r * in, p, in) + bias[r];
                ck_assert_msg(y[b * out + r] == want, "[%d,%d] of [%d,%d]x[%d]: %a, want %a", b, r,
                              B, out, in, y[b * out + r], want);
            }
        }
        rs_q8_matrix_free(&q);
    }
}
END_TEST

/* The scalar fallback, chosen as on a processor without AVX2, gives the AVX2
 * product's floats bit for bit (the same int32 sums, the same float steps). */
START_TEST(the_scalar_fallback_gives_the_same_product)
{
    product_case c;
    product_case_make(&c, 31);
    float avx2[PB * POUT], scalar[PB * POUT];
    if (!rs_q8_select(1)) {
        rs_q8_select(-1);
        rs_q8_matrix_free(&c.q);
        return; /* no AVX2 here: the scalar kernel is the only one */
    }
    rs_q8_forward(RS_MAT(avx2, PB, POUT), RS_CMAT(c.x, PB, PIN), &c.q, NULL, c.bias, &c.s, 0.0f);
    ck_assert_int_eq(rs_q8_select(0), 0);
    rs_q8_forward(RS_MAT(scalar, PB, POUT), RS_CMAT(c.x, PB, PIN), &c.q, NULL, c.bias, &c.s, 0.0f);
    rs_q8_select(-1);
    ck_assert(memcmp(avx2, scalar, sizeof avx2) == 0);
    rs_q8_matrix_free(&c.q);
}
END_TEST

/* The product by AVX2 and by the scalar fallback, bit for bit, and both
 * equal to s_r · t_b · (float) Σ + bias with Σ the scalar reference sum,
 * for batch sizes around the kernel's pairs and its blocks of 8 inputs,
 * rows not a multiple of 4 nor of the 16 a chunk (all rows and chosen
 * ones) and widths not a multiple of 32. */
START_TEST(the_product_by_either_kernel_is_the_reference_on_odd_shapes)
{
    enum { MAXB = 64, MAXO = 37, MAXI = 100 };
    const int batches[] = {1, 2, 3, 5, 64}, outs[] = {1, 3, 6, 13, 37}, ins[] = {1, 33, 37, 100};
    static float W[MAXO * MAXI], x[MAXB * MAXI], bias[MAXO], cbias[MAXO], y[2][MAXB * MAXO];
    static int8_t sx[MAXB * MAXI], p[MAXB * MAXI];
    static float sscale[MAXB], t[MAXB];
    const rs_q8_scratch s = {sx, sscale, sizeof sx, MAXB};
    /* chosen rows: 5 of 13, and 21 of 37 (more than the 16 rows a chunk) */
    const int ids[] = {12, 0, 5, 5, 7},
              many[] = {36, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 30, 30, 17};
    uint32_t st = 77;
    for (size_t bi = 0; bi < 5; bi++)
        for (size_t oi = 0; oi < 5; oi++)
            for (size_t ii = 0; ii < 4; ii++) {
                const int B = batches[bi], out = outs[oi], in = ins[ii];
                const int *chosen = out == 13 ? ids : out == 37 && ii % 2 ? many : NULL;
                const int K = chosen == ids ? 5 : chosen == many ? 21 : out;
                for (int i = 0; i < out * in; i++)
                    W[i] = ii == 1 ? (i % 2 ? 1.0f : -1.0f) : uniform(&st, -1.0f, 1.0f);
                for (int i = 0; i < B * in; i++)
                    x[i] = ii == 1 ? (i % 3 ? -2.0f : 2.0f) : uniform(&st, -3.0f, 3.0f);
                for (int r = 0; r < out; r++)
                    bias[r] = uniform(&st, -1.0f, 1.0f);
                /* The bias is the output columns', as a shortlist gathers it. */
                for (int j = 0; j < K; j++)
                    cbias[j] = bias[chosen ? chosen[j] : j];
                rs_q8_matrix q;
                rs_error err;
                ck_assert_int_eq(rs_q8_matrix_init(&q, RS_CMAT(W, out, in), &err), 0);
                for (int pass = 0; pass < 2; pass++) {
                    const int avx2 = rs_q8_select(pass == 0);
                    if (pass == 0 && !avx2)
                        fprintf(stderr, "int8: no AVX2 here; only the scalar kernel is checked\n");
                    rs_q8_forward(RS_MAT(y[pass], B, K), RS_CMAT(x, B, in), &q, chosen, cbias, &s,
                                  0.0f);
                }
                rs_q8_select(-1);
                ck_assert_msg(memcmp(y[0], y[1], sizeof(float) * B * K) == 0,
                              "[%d,%d]x[%d]: AVX2 and scalar products differ", B, K, in);
                for (int b = 0; b < B; b++) {
                    rs_q8_quantize(p + b * in, t + b, x + b * in, in);
                    for (int j = 0; j < K; j++) {
                        const int r = chosen ? chosen[j] : j;
                        const int32_t sum = rs_q8_dot_scalar(q.q + r * in, p + b * in, in);
                        const float want = q.scale[r] * t[b] * (float)sum + cbias[j];
                        ck_assert_msg(y[0][b * K + j] == want,
                                      "[%d,%d] of [%d,%d]x[%d]: %a, want %a", b, j, B, K, in,
                                      y[0][b * K + j], want);
                    }
                }
                rs_q8_matrix_free(&q);
            }
}
END_TEST

START_TEST(chosen_rows_equal_the_full_products_rows)
{
    product_case c;
    product_case_make(&c, 23);
    float full[PB * POUT];
    rs_q8_forward(RS_MAT(full, PB, POUT), RS_CMAT(c.x, PB, PIN), &c.q, NULL, c.bias, &c.s, 0.0f);
    const int ids[] = {5, 0, 12, 5, 7};
    enum { K = sizeof ids / sizeof ids[0] };
    float some[PB * K], bias[K];
    for (int j = 0; j < K; j++)
        bias[j] = c.bias[ids[j]]; /* gathered, as a shortlist's */
    rs_q8_forward(RS_MAT(some, PB, K), RS_CMAT(c.x, PB, PIN), &c.q, ids, bias, &c.s, 0.0f);
    for (int b = 0; b < PB; b++)
        for (int j = 0; j < K; j++)
            ck_assert_msg(some[b * K + j] == full[b * POUT + ids[j]], "[%d] row %d: %g, full %g", b,
                          ids[j], some[b * K + j], full[b * POUT + ids[j]]);
    rs_q8_matrix_free(&c.q);
}
END_TEST

static char shape_message[512];
static void keep_shape_message(const char *message)
{
    snprintf(shape_message, sizeof shape_message, "%s", message);
}

START_TEST(a_chosen_row_out_of_range_is_a_shape_error)
{
    product_case c;
    product_case_make(&c, 5);
    const int ids[] = {2, POUT};
    float y[PB * 2] = {0};
    rs_shape_handler previous = rs_set_shape_handler(keep_shape_message);
    shape_message[0] = 0;
    rs_q8_forward(RS_MAT(y, PB, 2), RS_CMAT(c.x, PB, PIN), &c.q, ids, NULL, &c.s, 0.0f);
    rs_set_shape_handler(previous);
    ck_assert_msg(strstr(shape_message, "row 13 of 13"), "%s", shape_message);
    rs_q8_matrix_free(&c.q);
}
END_TEST

/* ---- a model's step ---- */

/* Which products the int8 copies serve (accel.h): the step's decoder GRU,
 * W_a, the deep output and the output layer, in the step's view only; the
 * encoder's, the keys' and every teacher-forced pass's stay float, so score
 * and forced alignments stay exact. Each step view quantizes in memory of
 * its own (two decoders may run in two threads). */
START_TEST(int8_forms_serve_the_step_alone)
{
    rs_model model;
    rs_error err;
    tiny_model_of_kind(&model, RS_ATT_ADDITIVE);
    rs_accel *a = rs_accel_new(&model, NULL, &(rs_accel_options){.int8 = 1}, &err);
    ck_assert(a);
    const rs_network_weights exact = rs_accel_weights(&model, a);
    rs_accel_step *one = rs_accel_step_new(&model, a, 3, &err),
                  *two = rs_accel_step_new(&model, a, 3, &err);
    ck_assert(one && two);
    const rs_network_weights *w = rs_accel_step_weights(one), *w2 = rs_accel_step_weights(two);
    const rs_linear *in_step[] = {&w->dec.W,   &w->dec.W_c, &w->dec.U_zr, &w->dec.U_g,  &w->att.W,
                                  &w->out.U_o, &w->out.V_o, &w->out.C_o,  &w->out.W_out};
    for (size_t i = 0; i < sizeof in_step / sizeof *in_step; i++)
        ck_assert_msg(in_step[i]->fast, "step product %zu has no int8 form", i);
    const rs_linear *float_side[] = {&w->enc_fwd.W, &w->enc_fwd.U_zr, &w->enc_bwd.U_g,
                                     &w->att.U,     &exact.dec.W,     &exact.dec.U_g,
                                     &exact.att.W,  &exact.out.W_out};
    for (size_t i = 0; i < sizeof float_side / sizeof *float_side; i++)
        ck_assert_msg(!float_side[i]->fast, "product %zu has a form it should not", i);
    ck_assert(w->dec.U_g.fast != w2->dec.U_g.fast);
    rs_accel_step_free(one);
    rs_accel_step_free(two);
    rs_accel_free(a);
    rs_model_free(&model);
}
END_TEST

/* Every attention kind (_i: tiny_kinds, then none). */
START_TEST(a_step_with_int8_weights_is_close_to_the_float_step)
{
    enum { B = 2, LEN = 4, ROWS = 2 };
    rs_model model;
    if (_i < TINY_KINDS)
        tiny_model_of_kind(&model, tiny_kinds[_i]);
    else
        tiny_model_make(&model, "none", 0.5f, 0.0f, 9);
    const int n = model.cfg.hidden, V = model.cfg.tgt_vocab;
    rs_workspace ws;
    rs_error err;
    ck_assert_int_eq(rs_workspace_alloc_translation(&ws, &model, B, ROWS, LEN, &err), 0);
    float state[ROWS * 8], next[2][ROWS * 8], logits[2][ROWS * 16], lse[2][ROWS], alpha[ROWS * LEN];
    ck_assert(n <= 8 && V <= 16);
    uint32_t st = 3;
    for (int i = 0; i < ROWS * n; i++)
        state[i] = uniform(&st, -0.9f, 0.9f);
    const int ka = rs_attention_key_size(model.cfg.attention, n, model.cfg.att);
    float keys[LEN * B * 8], ann[LEN * B * 16];
    for (int i = 0; i < LEN * B * ka; i++)
        keys[i] = uniform(&st, -1.0f, 1.0f);
    for (int i = 0; i < LEN * B * 2 * n; i++)
        ann[i] = uniform(&st, -1.0f, 1.0f);
    const int src_len[ROWS] = {LEN, 2}, prev[ROWS] = {5, 7};
    const rs_attention_source src = {keys, ann, src_len, ROWS, LEN, NULL, B};
    rs_accel *a = NULL;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1)
            ck_assert(a = rs_accel_new(&model, NULL, &(rs_accel_options){.int8 = 1}, &err));
        rs_accel_step *step = rs_accel_step_new(&model, a, ROWS, &err);
        ck_assert(step);
        const rs_network_weights *w = rs_accel_step_weights(step);
        const rs_step_out out = {next[pass], ws.tmax, alpha};
        rs_network_step(&ws, &out, state, prev, &src, w);
        tiny_step_output(&ws, &w->out, ROWS, logits[pass], lse[pass]);
        rs_accel_step_free(step);
    }
    double worst = 0.0, differs = 0.0;
    for (int i = 0; i < ROWS * n; i++) {
        worst = fmax(worst, fabs(next[1][i] - next[0][i]));
        differs += next[1][i] != next[0][i];
    }
    for (int i = 0; i < ROWS * V; i++)
        worst = fmax(worst, fabs((logits[1][i] - lse[1][i / V]) - (logits[0][i] - lse[0][i / V])));
    /* Weights in [-0.5, 0.5], 8-bit: each product a few hundredths off at most. */
    ck_assert_msg(worst < 0.1, "kind %d: int8 step differs from the float one by %g", _i, worst);
    ck_assert_msg(differs > 0, "kind %d: the int8 weights were not used", _i);
    rs_workspace_free(&ws);
    rs_accel_free(a);
    rs_model_free(&model);
}
END_TEST

/* ---- translate --int8 on the dates corpus ---- */

static char dir[128];

/* Lines of a and b that are equal, and the count of lines of a. */
static int equal_lines(const char *a, const char *b, int *lines)
{
    int same = 0;
    *lines = 0;
    while (*a) {
        const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
        if (!ea)
            ea = a + strlen(a);
        if (!eb)
            eb = b + strlen(b);
        same += ea - a == eb - b && !memcmp(a, b, (size_t)(ea - a));
        ++*lines;
        a = *ea ? ea + 1 : ea;
        b = *eb ? eb + 1 : eb;
    }
    return same;
}

/* The share of the 300 test sources whose translation with `options` and
 * with `options --int8` are the same. */
static double agreement(const char *options)
{
    char args[1024];
    static char exact[1 << 16], q8[1 << 16];
    snprintf(args, sizeof args, "translate -m %s/m %s --quiet %s/src.txt", dir, options, dir);
    ck_assert_int_eq(testprog_run(args, exact, sizeof exact), 0);
    snprintf(args, sizeof args, "translate -m %s/m %s --int8 --quiet %s/src.txt", dir, options,
             dir);
    ck_assert_int_eq(testprog_run(args, q8, sizeof q8), 0);
    int lines;
    const int same = equal_lines(exact, q8, &lines);
    ck_assert_int_eq(lines, 300);
    fprintf(stderr, "int8: translate %s: %d / %d outputs equal to the exact ones\n", options, same,
            lines);
    return same / (double)lines;
}

START_TEST(translate_int8_agrees_with_the_exact_outputs_and_keeps_the_checkpoint)
{
    char args[1024], out[16384];
    testdir_make(dir, "rs_int8");
    snprintf(args, sizeof args,
             "train --train corpora/dates/train.tsv --dev corpora/dates/dev.tsv --epochs 1 "
             "--tokenizer word --batch-size 32 --lr 0.005 --threads 1 --hidden 64 --emb 32 "
             "--maxout 32 --att 64 --quiet --seed 1 --out %s/m",
             dir);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    snprintf(args, sizeof args, "cut -f1 corpora/dates/test.tsv | head -300 > %s/src.txt", dir);
    ck_assert_int_eq(system(args), 0);
    snprintf(args, sizeof args, "%s/m/last.ckpt", dir);
    size_t before_size, after_size;
    unsigned char *before = testfile_read(args, &before_size);

    /* This model (one epoch, about 3 s; 291 of the 300 exact against the
     * references) translates all 300 the same with --int8, greedy and beam 5
     * (and all 1000 of test.tsv). Weaker models, whose best words win by
     * small margins, agree less: 78-90% (one or two epochs of hidden 32). */
    const double greedy = agreement("");
    const double beam = agreement("--beam 5");
    ck_assert_msg(greedy >= 0.97, "greedy: only %.1f%% equal", 100 * greedy);
    ck_assert_msg(beam >= 0.97, "beam 5: only %.1f%% equal", 100 * beam);

    /* --int8 reaches the decoder (the scores move), also as a configuration key. */
    char exact[4096], q8[4096], config[4096];
    snprintf(args, sizeof args, "translate -m %s/m --n-best 1 --quiet %s/src.txt", dir, dir);
    ck_assert_int_eq(testprog_run(args, exact, sizeof exact), 0);
    snprintf(args, sizeof args, "translate -m %s/m --n-best 1 --int8 --quiet %s/src.txt", dir, dir);
    ck_assert_int_eq(testprog_run(args, q8, sizeof q8), 0);
    ck_assert_msg(strcmp(exact, q8) != 0, "the same scores with --int8: %.200s", q8);
    testfile_put(dir, "int8.yaml", "translation:\n  int8: true\n");
    snprintf(args, sizeof args,
             "translate -m %s/m --n-best 1 --config %s/int8.yaml --quiet %s/src.txt", dir, dir,
             dir);
    ck_assert_int_eq(testprog_run(args, config, sizeof config), 0);
    ck_assert_str_eq(config, q8);

    /* Each input row is quantized alone: a sentence's translation does not
     * depend on the others of its batch (its scores' last digits may, through
     * the float encoder's products, as without --int8). */
    static char batched[1 << 16], one[1 << 16];
    snprintf(args, sizeof args, "translate -m %s/m --int8 --quiet %s/src.txt", dir, dir);
    ck_assert_int_eq(testprog_run(args, batched, sizeof batched), 0);
    snprintf(args, sizeof args, "translate -m %s/m --int8 --batch-size 1 --quiet %s/src.txt", dir,
             dir);
    ck_assert_int_eq(testprog_run(args, one, sizeof one), 0);
    int lines;
    ck_assert_int_eq(equal_lines(batched, one, &lines), 300);

    snprintf(args, sizeof args, "%s/m/last.ckpt", dir);
    unsigned char *after = testfile_read(args, &after_size);
    ck_assert_msg(after_size == before_size && !memcmp(before, after, before_size),
                  "translate --int8 changed the checkpoint");
    free(before);
    free(after);
    testdir_remove(dir);
}
END_TEST

START_TEST(commands_that_score_or_train_refuse_int8)
{
    char out[4096];
    const char *commands[] = {"score", "train", "align"};
    for (int i = 0; i < 3; i++) {
        char args[256];
        snprintf(args, sizeof args, "%s --int8 -m nowhere", commands[i]);
        ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
        ck_assert_msg(strstr(out, "int8"), "%s: %s", commands[i], out);
    }
}
END_TEST

Suite *int8_suite(void)
{
    Suite *s = suite_create("int8");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, the_avx2_kernel_gives_the_scalar_sums);
    tcase_add_test(tc, the_avx2_block_kernel_gives_the_scalar_sums);
    tcase_add_test(tc, the_widest_product_does_not_overflow);
    tcase_add_test(tc, the_quantizer_never_makes_minus_128);
    tcase_add_test(tc, rows_are_quantized_by_their_largest_entry);
    tcase_add_test(tc, the_int8_product_is_within_the_bound_of_the_float_one);
    tcase_add_test(tc, the_product_is_scale_times_the_scalar_sum);
    tcase_add_test(tc, the_scalar_fallback_gives_the_same_product);
    tcase_add_test(tc, the_product_by_either_kernel_is_the_reference_on_odd_shapes);
    tcase_add_test(tc, chosen_rows_equal_the_full_products_rows);
    tcase_add_test(tc, a_chosen_row_out_of_range_is_a_shape_error);
    tcase_add_test(tc, int8_forms_serve_the_step_alone);
    tcase_add_loop_test(tc, a_step_with_int8_weights_is_close_to_the_float_step, 0, TINY_KINDS + 1);
    tcase_add_test(tc, translate_int8_agrees_with_the_exact_outputs_and_keeps_the_checkpoint);
    tcase_add_test(tc, commands_that_score_or_train_refuse_int8);
    suite_add_tcase(s, tc);
    return s;
}
