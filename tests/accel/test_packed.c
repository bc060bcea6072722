/* Packed weights (src/accel/packed.c): a copy is Wᵀ to the bit, of every
 * row of the view asked for; it is made once per opening and not again
 * until its owner reopens, so a weight changed without reopening is read
 * stale (the test can see a missing reopening) and reopened is read anew;
 * closed or freed spans, views outside them and untransposed B take no
 * copy. On the oneDNN road where it packs, products of up to 256 rows by an
 * open weight take the copy (more rows do not), agree with OpenBLAS's within
 * rounding, follow a reopening, and give the same bits on two threads at
 * once as on one. */
#include <cblas.h>
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "accel/gemm_road.h"
#include "accel/packed.h"
#include "common/rng.h"
#include "nn/linalg.h"
#include "roads.h"

enum { N = 37, K = 19, LDB = 23, ROWS = 41 }; /* W [N,K] of a buffer [ROWS,LDB] */

static float *weights(void)
{
    float *buf = malloc(sizeof(float) * ROWS * LDB);
    ck_assert(buf);
    rs_rng rng;
    rs_rng_seed(&rng, 50u);
    for (int i = 0; i < ROWS * LDB; i++)
        buf[i] = (float)(rs_rng_uniform(&rng) - 0.5);
    return buf;
}

/* y = x Wᵀ by W [N,K] at B (stride LDB): only B and its shape matter here. */
static rs_gemm_call forward_call(const float *B, int rows, const float *x, float *y)
{
    return (rs_gemm_call){.tb = 1,
                          .M = rows,
                          .N = N,
                          .K = K,
                          .alpha = 1.0f,
                          .A = x,
                          .lda = K,
                          .B = B,
                          .ldb = LDB,
                          .C = y,
                          .ldc = N};
}

/* The entries of P [K,N] that are not W [N,K] (stride LDB) transposed. */
static int not_transposed(const float *P, const float *W)
{
    int wrong = 0;
    for (int n = 0; n < N; n++)
        for (int k = 0; k < K; k++)
            wrong += P[(size_t)k * N + n] != W[(size_t)n * LDB + k];
    return wrong;
}

START_TEST(a_copy_is_made_once_per_opening_and_follows_reopenings)
{
    float *buf = weights(), *W = buf + 2 * LDB + 1; /* a view inside, not at the start */
    int owner;
    const rs_gemm_call c = forward_call(W, 4, NULL, NULL);
    ck_assert_ptr_null(rs_packed_weight(&c)); /* nothing open */
    rs_packed_open(&owner, buf, (size_t)ROWS * LDB);
    const long made = rs_packed_made();
    const float *P = rs_packed_weight(&c);
    ck_assert_ptr_nonnull(P);
    ck_assert_int_eq(not_transposed(P, W), 0);
    ck_assert_ptr_eq(rs_packed_weight(&c), P);
    ck_assert_int_eq(rs_packed_made(), made + 1); /* used twice, made once */
    /* A weight changed without reopening: the copy is the old one ... */
    W[(size_t)(N - 1) * LDB + K - 1] += 1.0f;
    W[3] -= 1.0f;
    P = rs_packed_weight(&c);
    ck_assert_int_eq(not_transposed(P, W), 2);
    /* ... and reopened, the new one, every row of it. */
    rs_packed_open(&owner, buf, (size_t)ROWS * LDB);
    P = rs_packed_weight(&c);
    ck_assert_int_eq(not_transposed(P, W), 0);
    ck_assert_int_eq(rs_packed_made(), made + 2);
    /* Closed: no copy, until reopened. */
    rs_packed_close(&owner);
    ck_assert_ptr_null(rs_packed_weight(&c));
    rs_packed_open(&owner, buf, (size_t)ROWS * LDB);
    ck_assert_ptr_nonnull(rs_packed_weight(&c));
    rs_packed_free(&owner);
    ck_assert_ptr_null(rs_packed_weight(&c));
    free(buf);
}
END_TEST

START_TEST(views_outside_an_open_span_take_no_copy)
{
    float *buf = weights();
    int owner;
    /* the span ends one float before the view's last entry */
    const float *W = buf + (ROWS - N) * LDB;
    rs_packed_open(&owner, buf, (size_t)(ROWS - 1) * LDB + K - 1);
    rs_gemm_call c = forward_call(W, 4, NULL, NULL);
    ck_assert_ptr_null(rs_packed_weight(&c));
    float *elsewhere = weights();
    c.B = elsewhere; /* another buffer */
    ck_assert_ptr_null(rs_packed_weight(&c));
    free(elsewhere);
    c = forward_call(buf, 4, NULL, NULL);
    c.tb = 0; /* B read as it lies: already the packed orientation */
    ck_assert_ptr_null(rs_packed_weight(&c));
    c.tb = 1;
    ck_assert_ptr_nonnull(rs_packed_weight(&c));
    /* another owner's span over the same floats has copies of its own,
     * which outlive the first's */
    int other;
    rs_packed_open(&other, buf, (size_t)ROWS * LDB);
    rs_packed_free(&owner);
    const float *P = rs_packed_weight(&c);
    ck_assert_ptr_nonnull(P);
    ck_assert_int_eq(not_transposed(P, buf), 0);
    rs_packed_free(&other);
    ck_assert_ptr_null(rs_packed_weight(&c));
    free(buf);
}
END_TEST

/* Whether the installed road packs (its kernel says so); installs "onednn"
 * and asks products of one thread (oneDNN's road hands the rest to
 * OpenBLAS). */
static int packing_road(void)
{
    rs_error err;
    openblas_set_num_threads(1);
    if (!rs_gemm_road_has_onednn() || rs_gemm_road_choose("onednn", &err))
        return 0;
    const char *kernel = rs_gemm_road_kernel();
    const size_t n = strlen(kernel);
    return n > 7 && !strcmp(kernel + n - 7, "-packed");
}

static int blas_threads;

static void restore_road(void)
{
    rs_error err;
    openblas_set_num_threads(blas_threads);
    ck_assert_msg(rs_gemm_road_choose(NULL, &err) == 0, "%s", err.msg);
}

START_TEST(the_road_takes_the_copy_and_follows_reopenings)
{
    if (!packing_road()) {
        restore_road();
        return; /* no packing road on this build or processor: the tests above are the registry's */
    }
    /* small integers: every sum exact on any road, so a stale copy shows */
    float *buf = weights(), x[3 * K], y[3 * N];
    for (int i = 0; i < ROWS * LDB; i++)
        buf[i] = (float)((i * 7) % 5 - 2);
    for (int i = 0; i < 3 * K; i++)
        x[i] = (float)((i * 3) % 7 - 3);
    int owner;
    rs_packed_open(&owner, buf, (size_t)ROWS * LDB);
    const long made = rs_packed_made();
    const rs_gemm_call three = forward_call(buf, 3, x, y);
    rs_gemm(&three);
    ck_assert_int_eq(rs_packed_made(), made + 1);
    const float y02 = y[2];
    buf[2 * LDB] += 1.0f; /* W[2][0]: y[i][2] += x[i][0] */
    rs_gemm(&three);
    ck_assert_float_eq(y[2], y02); /* stale: the copy of this opening */
    rs_packed_open(&owner, buf, (size_t)ROWS * LDB);
    rs_gemm(&three);
    ck_assert_float_eq(y[2], y02 + x[0]);
    /* a product of all a batch's positions at once (more than 256 rows)
     * reads W itself: no copy */
    enum { MANY = 300 };
    float *xs = calloc((size_t)MANY * K, sizeof *xs), *ys = calloc((size_t)MANY * N, sizeof *ys);
    ck_assert(xs && ys);
    rs_packed_open(&owner, buf, (size_t)ROWS * LDB);
    const long before = rs_packed_made();
    const rs_gemm_call many = forward_call(buf, MANY, xs, ys);
    rs_gemm(&many);
    ck_assert_int_eq(rs_packed_made(), before);
    free(xs);
    free(ys);
    rs_packed_free(&owner);
    free(buf);
    restore_road();
}
END_TEST

typedef struct {
    const float *x, *W;
    int rows, rounds;
    float *y; /* [rows,N] */
    int differ;
} worker_job;

/* rounds products by the open W, each the same bits as the first. */
static void *worker(void *arg)
{
    worker_job *j = arg;
    float *again = malloc(sizeof(float) * (size_t)j->rows * N);
    if (!again) {
        j->differ = -1;
        return NULL;
    }
    for (int r = 0; r < j->rounds; r++) {
        rs_gemm_call c = forward_call(j->W, j->rows, j->x, r ? again : j->y);
        rs_gemm(&c);
        if (r && memcmp(again, j->y, sizeof(float) * (size_t)j->rows * N))
            j->differ++;
    }
    free(again);
    return NULL;
}

START_TEST(two_threads_at_once_give_one_threads_bits)
{
    if (!packing_road()) {
        restore_road();
        return;
    }
    float *buf = weights();
    enum { ROWS_MAX = 64 };
    float x[ROWS_MAX * K], alone[ROWS_MAX * N], plain[ROWS_MAX * N];
    for (int i = 0; i < ROWS_MAX * K; i++)
        x[i] = buf[i % (ROWS * LDB)] * 0.5f + 0.25f;
    const int rows[] = {1, 5, 64};
    for (int t = 0; t < 3; t++) {
        int owner;
        /* OpenBLAS's product, for the bound */
        const rs_gemm_call reference = forward_call(buf, rows[t], x, plain);
        rs_gemm_openblas(&reference);
        rs_packed_open(&owner, buf, (size_t)ROWS * LDB);
        worker_job one = {.x = x, .W = buf, .rows = rows[t], .rounds = 1, .y = alone};
        worker(&one);
        roads_expect_product("packed against OpenBLAS", alone, plain, x, buf, LDB, NULL, rows[t], N,
                             K);
        /* reopened: both threads find no copy of this opening and race to it */
        rs_packed_open(&owner, buf, (size_t)ROWS * LDB);
        float ya[ROWS_MAX * N], yb[ROWS_MAX * N];
        worker_job a = {.x = x, .W = buf, .rows = rows[t], .rounds = 200, .y = ya},
                   b = {.x = x, .W = buf, .rows = rows[t], .rounds = 200, .y = yb};
        pthread_t ta, tb;
        ck_assert_int_eq(pthread_create(&ta, NULL, worker, &a), 0);
        ck_assert_int_eq(pthread_create(&tb, NULL, worker, &b), 0);
        pthread_join(ta, NULL);
        pthread_join(tb, NULL);
        ck_assert_int_eq(a.differ, 0);
        ck_assert_int_eq(b.differ, 0);
        const size_t bytes = sizeof(float) * (size_t)rows[t] * N;
        ck_assert_msg(!memcmp(ya, alone, bytes) && !memcmp(yb, alone, bytes),
                      "%d rows: two threads' bits differ from one's", rows[t]);
        rs_packed_free(&owner);
    }
    free(buf);
    restore_road();
}
END_TEST

Suite *packed_suite(void)
{
    blas_threads = openblas_get_num_threads();
    Suite *s = suite_create("packed");
    TCase *tc = tcase_create("copies");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, a_copy_is_made_once_per_opening_and_follows_reopenings);
    tcase_add_test(tc, views_outside_an_open_span_take_no_copy);
    tcase_add_test(tc, the_road_takes_the_copy_and_follows_reopenings);
    tcase_add_test(tc, two_threads_at_once_give_one_threads_bits);
    suite_add_tcase(s, tc);
    return s;
}
