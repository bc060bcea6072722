/* The BLAS wrappers (src/nn/linalg.c): rs_gemm in all four transpositions, with
 * row strides wider than the rows, alpha and beta, against a triple loop in
 * double; the empty product; the named products' shape checks; the FLOP
 * tally, from one thread and from two at once; row sums, bias and the
 * sigmoid. */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "gradcheck.h"
#include "nn/linalg.h"
#include "nn/vecmath.h"

enum { M = 3, N = 5, K = 4, PAD = 2 };

START_TEST(gemm_matches_a_triple_loop)
{
    const int ta = _i & 1, tb = (_i >> 1) & 1;
    /* op(A) [M,K], op(B) [K,N]; stored transposed when ta/tb, rows padded. */
    const int lda = (ta ? M : K) + PAD, ldb = (tb ? K : N) + PAD;
    const int ldc = N + PAD;
    float A[(K + PAD) * (K + PAD)], B[(N + PAD) * (N + PAD)], C[M * (N + PAD)], C0[M * (N + PAD)];
    fill_uniform(A, sizeof A / sizeof *A, 1.0f, 51);
    fill_uniform(B, sizeof B / sizeof *B, 1.0f, 52);
    fill_uniform(C0, sizeof C0 / sizeof *C0, 1.0f, 53);
    memcpy(C, C0, sizeof C);
    const float alpha = 0.75f, beta = -0.5f;
    rs_gemm(&(rs_gemm_call){.ta = ta,
                            .tb = tb,
                            .M = M,
                            .N = N,
                            .K = K,
                            .alpha = alpha,
                            .beta = beta,
                            .A = A,
                            .lda = lda,
                            .B = B,
                            .ldb = ldb,
                            .C = C,
                            .ldc = ldc});
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            double sum = 0.0;
            for (int k = 0; k < K; k++) {
                double a = ta ? A[k * lda + i] : A[i * lda + k];
                double b = tb ? B[j * ldb + k] : B[k * ldb + j];
                sum += a * b;
            }
            double want = alpha * sum + beta * C0[i * ldc + j];
            ck_assert_msg(fabs(C[i * ldc + j] - want) <= 1e-5, "ta=%d tb=%d C[%d,%d] = %g, want %g",
                          ta, tb, i, j, C[i * ldc + j], want);
        }
        /* The padding past each row of C is left alone. */
        for (int j = N; j < ldc; j++)
            ck_assert(C[i * ldc + j] == C0[i * ldc + j]);
    }
}
END_TEST

START_TEST(gemm_empty_sum_scales_by_beta)
{
    /* K = 0: C = beta C, and beta = 0 clears even NaN (BLAS may skip C). */
    float C[4] = {1.0f, -2.0f, 3.0f, 4.0f};
    rs_gemm(&(rs_gemm_call){
        .M = 2, .N = 2, .alpha = 1.0f, .beta = 0.5f, .lda = 1, .ldb = 2, .C = C, .ldc = 2});
    ck_assert(C[0] == 0.5f && C[1] == -1.0f && C[2] == 1.5f && C[3] == 2.0f);
    C[1] = NAN;
    rs_gemm(&(rs_gemm_call){.M = 2, .N = 2, .alpha = 1.0f, .lda = 1, .ldb = 2, .C = C, .ldc = 2});
    for (int i = 0; i < 4; i++)
        ck_assert(C[i] == 0.0f);
    /* M = 0 or N = 0: nothing is touched. */
    float D[1] = {7.0f};
    rs_gemm(&(rs_gemm_call){.M = 0,
                            .N = 1,
                            .K = 1,
                            .alpha = 1.0f,
                            .A = D,
                            .lda = 1,
                            .B = D,
                            .ldb = 1,
                            .C = D,
                            .ldc = 1});
    rs_gemm(&(rs_gemm_call){.M = 1,
                            .N = 0,
                            .K = 1,
                            .alpha = 1.0f,
                            .A = D,
                            .lda = 1,
                            .B = D,
                            .ldb = 1,
                            .C = D,
                            .ldc = 1});
    ck_assert(D[0] == 7.0f);
}
END_TEST

/* The shape handler of the test below: counts the mismatches and keeps the last message. */
static int shape_failures;
static char shape_message[256];

static void count_shape_failure(const char *message)
{
    shape_failures++;
    snprintf(shape_message, sizeof shape_message, "%s", message);
}

/* Each named product refuses views whose shapes disagree (one wrong size in
 * each position, and a stride narrower than its row), leaving its output
 * untouched; agreeing shapes, strided blocks included, pass. */
START_TEST(named_products_catch_mismatched_shapes)
{
    float x[4 * 6], W[5 * 6], y[4 * 5], dW[5 * 6];
    fill_uniform(x, 24, 1.0f, 61);
    fill_uniform(W, 30, 1.0f, 62);
    fill_uniform(y, 20, 1.0f, 63);
    fill_uniform(dW, 30, 1.0f, 64);
    float y0[4 * 5], dW0[5 * 6], x0[4 * 6];
    memcpy(y0, y, sizeof y);
    memcpy(dW0, dW, sizeof dW);
    memcpy(x0, x, sizeof x);
    rs_shape_handler previous = rs_set_shape_handler(count_shape_failure);
    shape_failures = 0;
    /* y [4,5] = x [4,6] W [5,6]ᵀ agrees; so does a [4,3] block of x against W's first 3 columns. */
    rs_matmul_forward(RS_MAT(y, 4, 5), RS_CMAT(x, 4, 6), RS_CMAT(W, 5, 6), 0.0f);
    rs_matmul_forward(RS_MAT(y, 4, 5), RS_CMAT_S(x, 4, 3, 6), RS_CMAT_S(W, 5, 3, 6), 1.0f);
    rs_matmul_backward_input(RS_MAT(x, 4, 6), RS_CMAT(y, 4, 5), RS_CMAT(W, 5, 6), 0.0f);
    rs_matmul_backward_weight(RS_MAT(dW, 5, 6), RS_CMAT(y, 4, 5), RS_CMAT(x, 4, 6));
    ck_assert_int_eq(shape_failures, 0);
    memcpy(y0, y, sizeof y);
    memcpy(dW0, dW, sizeof dW);
    memcpy(x0, x, sizeof x);

    const struct {
        int product; /* 0 forward, 1 backward input, 2 backward weight */
        rs_mat out;
        rs_cmat a, b;
    } wrong[] = {
        {0, RS_MAT(y, 4, 5), RS_CMAT(x, 4, 6), RS_CMAT(W, 5, 5)},      /* in: 6 against 5 */
        {0, RS_MAT(y, 4, 4), RS_CMAT(x, 4, 6), RS_CMAT(W, 5, 6)},      /* out: 4 against 5 */
        {0, RS_MAT(y, 3, 5), RS_CMAT(x, 4, 6), RS_CMAT(W, 5, 6)},      /* R: 3 against 4 */
        {0, RS_MAT(y, 4, 5), RS_CMAT_S(x, 4, 6, 5), RS_CMAT(W, 5, 6)}, /* stride 5 < 6 */
        {1, RS_MAT(x, 4, 6), RS_CMAT(y, 4, 5), RS_CMAT(W, 6, 5)},      /* W transposed */
        {1, RS_MAT(x, 4, 5), RS_CMAT(y, 4, 5), RS_CMAT(W, 5, 6)},      /* in: 5 against 6 */
        {1, RS_MAT(x, 2, 6), RS_CMAT(y, 4, 5), RS_CMAT(W, 5, 6)},      /* R: 2 against 4 */
        {2, RS_MAT(dW, 6, 5), RS_CMAT(y, 4, 5), RS_CMAT(x, 4, 6)},     /* dW transposed */
        {2, RS_MAT(dW, 5, 6), RS_CMAT(y, 3, 5), RS_CMAT(x, 4, 6)},     /* R: 3 against 4 */
        {2, RS_MAT(dW, 5, 6), RS_CMAT(y, 4, 5), RS_CMAT(x, 4, 5)},     /* in: 5 against 6 */
    };
    const int count = (int)(sizeof wrong / sizeof *wrong);
    for (int i = 0; i < count; i++) {
        const char *name[] = {"rs_matmul_forward", "rs_matmul_backward_input",
                              "rs_matmul_backward_weight"};
        if (wrong[i].product == 0)
            rs_matmul_forward(wrong[i].out, wrong[i].a, wrong[i].b, 1.0f);
        else if (wrong[i].product == 1)
            rs_matmul_backward_input(wrong[i].out, wrong[i].a, wrong[i].b, 1.0f);
        else
            rs_matmul_backward_weight(wrong[i].out, wrong[i].a, wrong[i].b);
        ck_assert_msg(shape_failures == i + 1, "case %d: the mismatch was not caught", i);
        ck_assert_msg(strstr(shape_message, name[wrong[i].product]) == shape_message, "%s",
                      shape_message);
    }
    rs_set_shape_handler(previous);
    /* No product ran: every output is as it was. */
    ck_assert(!memcmp(y, y0, sizeof y) && !memcmp(x, x0, sizeof x) && !memcmp(dW, dW0, sizeof dW));
}
END_TEST

/* rs_gemm_count's tally: 2·M·N·K for each product computed (one row, a
 * GEMV, too), nothing for an empty sum, and nothing once it is NULL. */
START_TEST(gemm_counts_flops)
{
    float x[6] = {1, 2, 3, 4, 5, 6}, W[12] = {0}, y[8];
    rs_flop_count flops = 0;
    ck_assert_ptr_null(rs_gemm_count(&flops));
    rs_matmul_forward(RS_MAT(y, 2, 4), RS_CMAT(x, 2, 3), RS_CMAT(W, 4, 3), 0.0f);
    ck_assert_int_eq(flops, 2 * 2 * 4 * 3);
    rs_matmul_forward(RS_MAT(y, 1, 4), RS_CMAT(x, 1, 3), RS_CMAT(W, 4, 3), 0.0f);
    ck_assert_int_eq(flops, 2 * 2 * 4 * 3 + 2 * 4 * 3);
    rs_gemm(&(rs_gemm_call){.M = 2, .N = 4, .K = 0, .C = y, .ldc = 4});
    ck_assert_int_eq(flops, 2 * 2 * 4 * 3 + 2 * 4 * 3);
    ck_assert_ptr_eq(rs_gemm_count(NULL), &flops);
    rs_matmul_forward(RS_MAT(y, 2, 4), RS_CMAT(x, 2, 3), RS_CMAT(W, 4, 3), 0.0f);
    ck_assert_int_eq(flops, 2 * 2 * 4 * 3 + 2 * 4 * 3);
}
END_TEST

enum { COUNTED_PRODUCTS = 200000 }; /* per thread */

/* COUNTED_PRODUCTS products [2,3]·[3,4], 48 FLOPs each. */
static void *count_products(void *unused)
{
    (void)unused;
    float x[6] = {1, 2, 3, 4, 5, 6}, W[12] = {0}, y[8];
    for (int i = 0; i < COUNTED_PRODUCTS; i++)
        rs_matmul_forward(RS_MAT(y, 2, 4), RS_CMAT(x, 2, 3), RS_CMAT(W, 4, 3), 0.0f);
    return NULL;
}

/* Translation's workers issue products at once into one tally: a plain
 * `+=` from two threads lost additions; each is atomic, so none is lost. */
START_TEST(gemm_count_loses_nothing_to_two_threads)
{
    rs_flop_count flops = 0;
    rs_flop_count *before = rs_gemm_count(&flops);
    pthread_t other;
    ck_assert_int_eq(pthread_create(&other, NULL, count_products, NULL), 0);
    count_products(NULL);
    ck_assert_int_eq(pthread_join(other, NULL), 0);
    rs_gemm_count(before);
    ck_assert_int_eq(flops, 2LL * COUNTED_PRODUCTS * (2 * 2 * 4 * 3));
}
END_TEST

START_TEST(row_sums_bias_and_sigmoid)
{
    /* X [2,3] stored with stride 4; the 4th column must be ignored. */
    float X[8] = {1, 2, 3, 100, 4, 5, 6, 100};
    float y[3] = {10, 20, 30};
    rs_add_row_sums(y, X, 2, 3, 4);
    ck_assert(y[0] == 15 && y[1] == 27 && y[2] == 39);
    const float b[3] = {0.5f, -1, 2};
    rs_add_bias(X, b, 2, 3, 4);
    const float want[8] = {1.5f, 1, 5, 100, 4.5f, 4, 8, 100};
    for (int i = 0; i < 8; i++)
        ck_assert(X[i] == want[i]);
    ck_assert(rs_sigmoid(0.0f) == 0.5f);
    ck_assert_float_eq_tol(rs_sigmoid(2.0f), 0.880797f, 1e-6f);
    ck_assert_float_eq_tol(rs_sigmoid(-2.0f) + rs_sigmoid(2.0f), 1.0f, 1e-7f);
    /* Saturates without NaN at the ends. */
    ck_assert(rs_sigmoid(-200.0f) >= 0.0f &&
              rs_sigmoid(-200.0f) < 1e-38f); /* vecmath.h: < 6.1e-39 */
    ck_assert(rs_sigmoid(200.0f) == 1.0f);
}
END_TEST

Suite *linalg_suite(void)
{
    Suite *s = suite_create("linalg");
    TCase *tc = tcase_create("products");
    tcase_add_loop_test(tc, gemm_matches_a_triple_loop, 0, 4);
    tcase_add_test(tc, gemm_empty_sum_scales_by_beta);
    tcase_add_test(tc, named_products_catch_mismatched_shapes);
    tcase_add_test(tc, gemm_counts_flops);
    tcase_add_test(tc, gemm_count_loses_nothing_to_two_threads);
    tcase_add_test(tc, row_sums_bias_and_sigmoid);
    suite_add_tcase(s, tc);
    return s;
}
