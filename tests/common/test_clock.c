/* The duration clock (src/common/clock.c): it counts seconds and never goes back. */
#include <check.h>
#include <time.h>

#include "common/clock.h"

START_TEST(counts_seconds_forward)
{
    double t0 = rs_clock_seconds();
    struct timespec pause = {0, 20 * 1000 * 1000}; /* 20 ms */
    ck_assert_int_eq(nanosleep(&pause, NULL), 0);
    double t1 = rs_clock_seconds(), t2 = rs_clock_seconds();
    ck_assert_msg(t1 - t0 >= 0.019 && t1 - t0 < 5.0, "20 ms measured as %.6f s", t1 - t0);
    ck_assert(t2 >= t1);
}
END_TEST

Suite *clock_suite(void)
{
    Suite *s = suite_create("clock");
    TCase *tc = tcase_create("clock");
    tcase_add_test(tc, counts_seconds_forward);
    suite_add_tcase(s, tc);
    return s;
}
