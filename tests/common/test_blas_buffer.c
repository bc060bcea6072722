/* OpenBLAS's work buffers (common/blas_buffer.c): once the start's check
 * and --threads have run, every OpenBLAS thread holds a buffer of its own,
 * so the caller's later products map nothing more (in OpenBLAS 0.3.21 a
 * thread that started after the caller's product took the caller's buffer,
 * and the caller mapped another at its next product: where the room was
 * gone by then, under ulimit -v, it spun for ever). It must hold on every
 * kernel family (make check-cores: SkylakeX's and Cooperlake's small
 * products map no buffer). */
#include <cblas.h>
#include <check.h>

#include "common/blas_buffer.h"

/* A product through the caller's buffer on every kernel family (both sides
 * transposed: blas_buffer.c says why). */
static void small_product(void)
{
    const float a[4] = {0};
    float c[4];
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasTrans, 2, 2, 2, 1.0f, a, 2, a, 2, 0.0f, c, 2);
}

/* One OpenBLAS thread, then two (OPENBLAS_NUM_THREADS=1 with --threads 2):
 * the thread --threads adds must not take the caller's buffer. */
START_TEST(a_thread_added_by_threads_leaves_the_callers_buffer)
{
    rs_error err = {{0}};
    openblas_set_num_threads(1);
    ck_assert_msg(rs_blas_reserve(&err) == 0, "%s", err.msg);
    ck_assert_msg(rs_blas_threads(2, &err) == 0, "%s", err.msg);
    const int held = rs_blas_buffers_mapped();
    ck_assert_int_ge(held, 2);
    small_product();
    ck_assert_msg(rs_blas_buffers_mapped() == held,
                  "the caller's product mapped a buffer more (%d, then %d): a thread took its "
                  "buffer",
                  held, rs_blas_buffers_mapped());
}
END_TEST

Suite *blas_buffer_suite(void)
{
    Suite *s = suite_create("blas_buffer");
    TCase *tc = tcase_create("blas_buffer");
    tcase_add_test(tc, a_thread_added_by_threads_leaves_the_callers_buffer);
    suite_add_tcase(s, tc);
    return s;
}
