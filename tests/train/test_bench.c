/* The measurements of `rnnsearch bench` (src/train/bench.c): the two model
 * sizes of its table, and data that is not there refused by name. (The
 * measurements themselves need Multi30k and minutes: not run here.) */
#include <check.h>
#include <string.h>

#include "testdir.h"
#include "train/bench.h"

START_TEST(sizes_are_s_and_m)
{
    ck_assert_str_eq(rs_bench_sizes[0].name, "S");
    ck_assert_int_eq(rs_bench_sizes[0].n, 256);
    ck_assert_int_eq(rs_bench_sizes[0].batch, 64);
    ck_assert_str_eq(rs_bench_sizes[1].name, "M");
    ck_assert_int_eq(rs_bench_sizes[1].n, 512);
    ck_assert_int_eq(rs_bench_sizes[1].batch, 128);
}
END_TEST

START_TEST(missing_data_is_named)
{
    char dir[256];
    testdir_make(dir, "rnnsearch-bench");
    rs_bench_data d;
    memset(&d, 0, sizeof d);
    rs_error err = {{0}};
    ck_assert_int_ne(rs_bench_data_load(&d, dir, &err), 0);
    ck_assert_msg(strstr(err.msg, "/train.de: no such file (nor ") &&
                      strstr(err.msg, "train.de.gz); give --data DIR"),
                  "%s", err.msg);
    rs_bench_data_free(&d);
    testdir_remove(dir);
}
END_TEST

Suite *bench_suite(void)
{
    Suite *s = suite_create("bench");
    TCase *tc = tcase_create("sizes and data");
    tcase_add_test(tc, sizes_are_s_and_m);
    tcase_add_test(tc, missing_data_is_named);
    suite_add_tcase(s, tc);
    return s;
}
