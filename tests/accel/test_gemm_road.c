/* The GEMM roads (src/accel/gemm_road.c): every road this build and
 * processor can take computes rs_gemm's products to float32 rounding of a
 * double-precision triple loop, B an open weight (accel/packed.h: packed
 * where the road packs), in all four transpositions, at one row and
 * at many, with wider strides, beta 0 and 1, on one thread and two; one road
 * run twice gives the same bits; a product that lost one term fails the same
 * bound (so the bound can fail); products stay right under a storm of
 * signals; and RNNSEARCH_GEMM's names are checked. */
#include <cblas.h>
#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "accel/gemm_road.h"
#include "accel/packed.h"
#include "common/rng.h"
#include "nn/linalg.h"

/* The roads to try: the reference always, oneDNN's two where built with it. */
static const char *const roads[] = {"openblas", "onednn", "onednn-sgemm"};
static int road_count(void)
{
    return rs_gemm_road_has_onednn() ? 3 : 1;
}

typedef struct {
    int ta, tb, M, N, K, pad;
    float beta;
} shape;

/* Shapes of a training step and a translation step, small enough for a test. */
static const shape shapes[] = {
    {0, 1, 64, 96, 32, 0, 0.0f}, /* forward: y = x Wᵀ */
    {0, 0, 64, 32, 96, 3, 1.0f}, /* backward input: dx += dy W */
    {1, 0, 96, 32, 64, 0, 1.0f}, /* backward weight: dW += dyᵀ x */
    {0, 1, 1, 96, 32, 0, 0.0f},  /* one row: a decoder step at batch 1 */
    {1, 1, 7, 5, 300, 2, 1.0f},  /* both transposed, a long sum */
    {0, 1, 1, 5913, 16, 0, 1.0f} /* a wide output layer, one row */
};

typedef struct {
    float *A, *B, *C0;
    double *want, *bound; /* [M,N] the exact value and |alpha|·Σ|a||b| + |beta·c| */
    int lda, ldb, ldc;
    size_t b_count; /* floats in B */
} problem;

static void problem_make(problem *p, const shape *s, int drop_last_term)
{
    p->lda = (s->ta ? s->M : s->K) + s->pad;
    p->ldb = (s->tb ? s->K : s->N) + s->pad;
    p->ldc = s->N + s->pad;
    const size_t a = (size_t)(s->ta ? s->K : s->M) * p->lda,
                 b = (size_t)(s->tb ? s->N : s->K) * p->ldb, c = (size_t)s->M * p->ldc;
    p->A = malloc(a * sizeof *p->A);
    p->B = malloc(b * sizeof *p->B);
    p->C0 = malloc(c * sizeof *p->C0);
    p->b_count = b;
    p->want = malloc(c * sizeof *p->want);
    p->bound = malloc(c * sizeof *p->bound);
    ck_assert(p->A && p->B && p->C0 && p->want && p->bound);
    rs_rng rng;
    rs_rng_seed(&rng, 2026u + (unsigned)s->K);
    for (size_t i = 0; i < a; i++)
        p->A[i] = (float)(rs_rng_uniform(&rng) - 0.5);
    for (size_t i = 0; i < b; i++)
        p->B[i] = (float)(rs_rng_uniform(&rng) - 0.5);
    for (size_t i = 0; i < c; i++)
        p->C0[i] = (float)(rs_rng_uniform(&rng) - 0.5);
    for (int i = 0; i < s->M; i++)
        for (int j = 0; j < s->N; j++) {
            double sum = 0.0, abs_sum = 0.0;
            for (int k = 0; k < s->K - drop_last_term; k++) {
                double x = s->ta ? p->A[(size_t)k * p->lda + i] : p->A[(size_t)i * p->lda + k];
                double y = s->tb ? p->B[(size_t)j * p->ldb + k] : p->B[(size_t)k * p->ldb + j];
                sum += x * y;
                abs_sum += fabs(x * y);
            }
            const double c0 = p->C0[(size_t)i * p->ldc + j];
            p->want[(size_t)i * p->ldc + j] = sum + s->beta * c0;
            p->bound[(size_t)i * p->ldc + j] = abs_sum + fabs(s->beta * c0);
        }
}

static void problem_free(problem *p)
{
    free(p->A);
    free(p->B);
    free(p->C0);
    free(p->want);
    free(p->bound);
}

/* C = op(A) op(B) + beta C0 on the road installed now, B an open weight. */
static float *product(const shape *s, const problem *p)
{
    const size_t c = (size_t)s->M * p->ldc;
    float *C = malloc(c * sizeof *C);
    ck_assert(C);
    memcpy(C, p->C0, c * sizeof *C);
    rs_packed_open(p, p->B, p->b_count);
    rs_gemm(&(rs_gemm_call){.ta = s->ta,
                            .tb = s->tb,
                            .M = s->M,
                            .N = s->N,
                            .K = s->K,
                            .alpha = 1.0f,
                            .beta = s->beta,
                            .A = p->A,
                            .lda = p->lda,
                            .B = p->B,
                            .ldb = p->ldb,
                            .C = C,
                            .ldc = p->ldc});
    rs_packed_free(p);
    return C;
}

/* The entries of C farther from the exact value than float32 summation of K
 * terms may take them (γ_K = K·u/(1 − K·u), u = 2^-24, on Σ|a||b| + |beta c|,
 * doubled for the last rounding and the blocked orders roads choose); the
 * padding must be untouched. */
static int wrong_entries(const shape *s, const problem *p, const float *C, char *why, size_t cap)
{
    const double u = ldexp(1.0, -24), gamma = 2.0 * (s->K + 2) * u / (1.0 - (s->K + 2) * u);
    int wrong = 0;
    for (int i = 0; i < s->M; i++)
        for (int j = 0; j < p->ldc; j++) {
            const size_t at = (size_t)i * p->ldc + j;
            const int pad = j >= s->N;
            const double err = pad ? (C[at] != p->C0[at]) : fabs(C[at] - p->want[at]);
            if (pad ? err != 0.0 : err > gamma * p->bound[at] + 1e-30) {
                if (!wrong++)
                    snprintf(why, cap, "C[%d,%d] = %.9g, want %.9g (bound %.3g)", i, j, C[at],
                             pad ? p->C0[at] : p->want[at], gamma * p->bound[at]);
            }
        }
    return wrong;
}

static void use_road(const char *name)
{
    rs_error err;
    ck_assert_msg(rs_gemm_road_choose(name, &err) == 0, "%s", err.msg);
    ck_assert_str_eq(rs_gemm_road_name(), name);
}

/* Leaves the road the runner chose (RNNSEARCH_GEMM) for the tests after. */
static void restore_road(void)
{
    rs_error err;
    ck_assert_msg(rs_gemm_road_choose(NULL, &err) == 0, "%s", err.msg);
}

START_TEST(every_road_computes_the_product_to_rounding)
{
    char why[256];
    const int blas_threads = openblas_get_num_threads();
    for (int r = 0; r < road_count(); r++) {
        use_road(roads[r]);
        for (int threads = 1; threads <= 2; threads++) {
            openblas_set_num_threads(threads);
            for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
                problem p;
                problem_make(&p, &shapes[i], 0);
                float *C = product(&shapes[i], &p), *again = product(&shapes[i], &p);
                const int wrong = wrong_entries(&shapes[i], &p, C, why, sizeof why);
                ck_assert_msg(!wrong, "road %s, %d thread(s), shape %zu: %d entries wrong: %s",
                              roads[r], threads, i, wrong, why);
                ck_assert_msg(!memcmp(C, again, (size_t)shapes[i].M * p.ldc * sizeof *C),
                              "road %s, %d thread(s), shape %zu: two runs differ", roads[r],
                              threads, i);
                free(C);
                free(again);
                problem_free(&p);
            }
        }
    }
    openblas_set_num_threads(blas_threads);
    restore_road();
}
END_TEST

/* The bound above is tight enough to see one lost term of a product: a
 * reference that leaves out the last k fails it on every road. */
START_TEST(a_lost_term_fails_the_bound)
{
    char why[256];
    for (int r = 0; r < road_count(); r++) {
        use_road(roads[r]);
        for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
            problem p;
            problem_make(&p, &shapes[i], 1);
            float *C = product(&shapes[i], &p);
            ck_assert_msg(wrong_entries(&shapes[i], &p, C, why, sizeof why) > 0,
                          "road %s, shape %zu: a product that lost a term passed", roads[r], i);
            free(C);
            problem_free(&p);
        }
    }
    restore_road();
}
END_TEST

/* A signal handler may run in the middle of a product (a Python program's
 * SIGALRM, a SIGINT): on every road the products stay right and the process
 * whole. oneDNN 2.6's kernels corrupted memory under such a storm until its
 * road blocked signals around them (gemm_road.c). The handler uses some
 * stack, as any real one does. */
static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
    volatile char scratch[4096];
    for (int i = 0; i < (int)sizeof scratch; i += 64)
        scratch[i] = (char)sig;
    alarms++;
}

START_TEST(products_survive_a_storm_of_signals)
{
    char why[256];
    struct sigaction sa, was;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    ck_assert_int_eq(sigaction(SIGALRM, &sa, &was), 0);
    for (int r = 0; r < road_count(); r++) {
        use_road(roads[r]);
        alarms = 0;
        for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
            const shape *s = &shapes[i];
            problem p;
            problem_make(&p, s, 0);
            float *want = product(s, &p);
            ck_assert_msg(!wrong_entries(s, &p, want, why, sizeof why), "road %s: %s", roads[r],
                          why);
            const size_t bytes = (size_t)s->M * p.ldc * sizeof(float);
            float *C = malloc(bytes);
            ck_assert(C);
            rs_packed_open(&p, p.B, p.b_count);
            struct itimerval every = {{0, 50}, {0, 50}}, stop = {{0, 0}, {0, 0}};
            ck_assert_int_eq(setitimer(ITIMER_REAL, &every, NULL), 0);
            int differ = 0;
            for (int k = 0; k < 1500 && !differ; k++) {
                memcpy(C, p.C0, bytes);
                rs_gemm(&(rs_gemm_call){.ta = s->ta,
                                        .tb = s->tb,
                                        .M = s->M,
                                        .N = s->N,
                                        .K = s->K,
                                        .alpha = 1.0f,
                                        .beta = s->beta,
                                        .A = p.A,
                                        .lda = p.lda,
                                        .B = p.B,
                                        .ldb = p.ldb,
                                        .C = C,
                                        .ldc = p.ldc});
                differ = memcmp(C, want, bytes) != 0;
                free(malloc(64 + k % 512)); /* the heap checks its own lists */
            }
            setitimer(ITIMER_REAL, &stop, NULL);
            rs_packed_free(&p);
            ck_assert_msg(!differ, "road %s, shape %zu: a product under signals differs", roads[r],
                          i);
            free(C);
            free(want);
            problem_free(&p);
        }
        ck_assert_msg(alarms > 10, "road %s: only %d signals arrived", roads[r], (int)alarms);
    }
    sigaction(SIGALRM, &was, NULL);
    restore_road();
}
END_TEST

START_TEST(road_names_are_checked)
{
    rs_error err;
    ck_assert_int_ne(rs_gemm_road_choose("mkl", &err), 0);
    ck_assert_msg(strstr(err.msg, "RNNSEARCH_GEMM=mkl") &&
                      strstr(err.msg, "openblas, onednn, onednn-sgemm or auto"),
                  "%s", err.msg);
    use_road("openblas");
    ck_assert_str_eq(rs_gemm_road_kernel(), openblas_get_corename());
    if (rs_gemm_road_has_onednn()) {
        use_road("onednn");
        ck_assert_msg(!strncmp(rs_gemm_road_kernel(), "onednn-", 7), "%s", rs_gemm_road_kernel());
    } else {
        ck_assert_int_ne(rs_gemm_road_choose("onednn", &err), 0);
        ck_assert_msg(strstr(err.msg, "built without oneDNN"), "%s", err.msg);
    }
    /* auto takes one of the two, and an empty RNNSEARCH_GEMM means auto */
    ck_assert_int_eq(rs_gemm_road_choose("auto", &err), 0);
    const char *chosen = rs_gemm_road_name();
    ck_assert(!strcmp(chosen, "openblas") || !strcmp(chosen, "onednn"));
    restore_road();
}
END_TEST

Suite *gemm_road_suite(void)
{
    Suite *s = suite_create("gemm_road");
    TCase *tc = tcase_create("roads");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, every_road_computes_the_product_to_rounding);
    tcase_add_test(tc, a_lost_term_fails_the_bound);
    tcase_add_test(tc, products_survive_a_storm_of_signals);
    tcase_add_test(tc, road_names_are_checked);
    suite_add_tcase(s, tc);
    return s;
}
