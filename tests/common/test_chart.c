/* Charts of numbers near the largest double (common/chart.c): axes, ticks
 * and positions that are numbers, and plot's picture of such a log. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/chart.h"
#include "testdir.h"
#include "testprog.h"

/* An axis of any finite numbers has a span, ticks and positions that are
 * numbers: ±1e308 made a span of infinity, and positions of NaN. */
START_TEST(an_axis_of_the_largest_numbers_is_drawn)
{
    static const double ends[][2] = {
        {-1e308, 1e308}, {-1.7e308, 1.7e308}, {0, 1.7e308}, {-5e-324, 5e-324}, {3, 3}};
    for (size_t i = 0; i < sizeof ends / sizeof *ends; i++) {
        const double lo = ends[i][0], hi = ends[i][1];
        for (int log_axis = 0; log_axis < 2; log_axis++) {
            if (log_axis && lo <= 0)
                continue;
            const rs_axis a = log_axis ? rs_axis_log(lo, hi) : rs_axis_nice(lo, hi, 0);
            ck_assert_msg(isfinite(a.lo) && isfinite(a.hi) && a.hi > a.lo &&
                              (log_axis || (isfinite(a.step) && a.step > 0)),
                          "%g %g: %g %g %g", lo, hi, a.lo, a.hi, a.step);
            double value[64];
            char label[64][RS_TICK_LABEL];
            const int n = rs_axis_ticks(&a, value, label, 64);
            ck_assert_int_ge(n, 2);
            for (int k = 0; k < n; k++)
                ck_assert_msg(isfinite(value[k]) && !strstr(label[k], "nan") &&
                                  !strstr(label[k], "inf"),
                              "%g %g: tick %g '%s'", lo, hi, value[k], label[k]);
            const double at[] = {lo, hi, (lo + hi) / 2};
            for (size_t k = 0; k < 3; k++) {
                const double t = rs_axis_fraction(&a, at[k]);
                ck_assert_msg(isfinite(t) && t >= -1e-9 && t <= 1 + 1e-9, "%g %g: %g at %g", lo, hi,
                              at[k], t);
            }
        }
    }
}
END_TEST

/* plot of a log whose steps and losses are ±1e308 draws its picture with
 * numbers for coordinates (it wrote x1="-nan" and exited 0). */
START_TEST(plot_draws_a_log_of_the_largest_numbers)
{
    char dir[64], log[128], svg[128], cmd[512], out[1024];
    testdir_make(dir, "rnnsearch-plot-limits");
    snprintf(log, sizeof log, "%s/train.log.tsv", dir);
    snprintf(svg, sizeof svg, "%s/train.svg", dir);
    testfile_put(dir, "train.log.tsv",
                 "step\tepoch\ttrain_loss\tdev_loss\tdev_metric\ttokens_per_s\tlr\twall_s\t"
                 "dev_metric_name\taer\talign_precision\talign_recall\n"
                 "-1e308\t1\t1e308\t-1e308\t1e308\t1\t0.1\t1\tbleu\t1e308\t\t\n"
                 "1e308\t1\t-1.7e308\t1.7e308\t-1e308\t1\t0.1\t1\tbleu\t-1e308\t\t\n");
    static const char *const scales[] = {"linear", "log", "auto"};
    for (int k = 0; k < 3; k++) {
        snprintf(cmd, sizeof cmd, "plot %s --scale %s -o %s", log, scales[k], svg);
        ck_assert_msg(testprog_run_all(cmd, out, sizeof out) == 0, "%s", out);
        size_t size;
        char *text = (char *)testfile_read(svg, &size);
        ck_assert_msg(size > 1000 && !strstr(text, "nan") && !strstr(text, "inf"), "%s: %s",
                      scales[k], text);
        free(text);
    }
    testdir_remove(dir);
}
END_TEST

Suite *chart_suite(void)
{
    Suite *s = suite_create("chart");
    TCase *tc = tcase_create("chart");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, an_axis_of_the_largest_numbers_is_drawn);
    tcase_add_test(tc, plot_draws_a_log_of_the_largest_numbers);
    suite_add_tcase(s, tc);
    return s;
}
