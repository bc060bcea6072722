/* The process group (src/train/dist.c) as one process sees it, in a build with or
 * without MPI and outside mpirun: rank 0 of 1, every row its own, sums and
 * broadcasts that change nothing, verdicts that pass its own status through.
 * Several ranks are tested in test_mpi.c. */
#include <check.h>
#include <string.h>

#include "train/dist.h"

START_TEST(one_process_is_the_whole_job)
{
    rs_error err = {{0}};
    ck_assert_int_eq(rs_dist_rank(), 0);
    ck_assert_int_eq(rs_dist_size(), 1);
    int lo, hi;
    rs_dist_rows(7, &lo, &hi);
    ck_assert(lo == 0 && hi == 7);
    float buf[3] = {1.5f, -2.0f, 3.25f};
    ck_assert(!rs_dist_sum_floats(buf, 3, &err));
    ck_assert(buf[0] == 1.5f && buf[1] == -2.0f && buf[2] == 3.25f);
    ck_assert(rs_dist_sum_double(2.5) == 2.5);
    ck_assert_int_eq(rs_dist_or(5), 5);
    char text[6] = "hello";
    ck_assert(!rs_dist_broadcast(text, sizeof text, &err));
    ck_assert_str_eq(text, "hello");
    ck_assert(!rs_dist_agree(1234u, "the data", &err));
    ck_assert_int_eq(rs_dist_check(0, &err), 0);
    rs_fail(&err, "mine");
    ck_assert_int_eq(rs_dist_check(-1, &err), -1);
    ck_assert_str_eq(err.msg, "mine");
}
END_TEST

Suite *dist_suite(void)
{
    Suite *s = suite_create("dist");
    TCase *tc = tcase_create("dist");
    tcase_add_test(tc, one_process_is_the_whole_job);
    suite_add_tcase(s, tc);
    return s;
}
