/* Reading a training run's logs back (src/train/trainlog.c): the columns
 * found by name in any order, missing and unparsable numbers as NAN, an
 * unmeasured dev metric (< 0) as NAN, the refusals, train.loss.tsv beside
 * the log, and the path an argument names. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "testdir.h"
#include "train/rundir.h"
#include "train/trainlog.h"

START_TEST(log_columns_by_name)
{
    char dir[256], path[300];
    testdir_make(dir, "rnnsearch-trainlog");
    testfile_put(dir, RS_TRAIN_LOG,
                 "epoch\tdev_metric\tstep\ttrain_loss\n1\t-1\t10\t2.5\n\n2\t0.25\t20\tnan\n");
    snprintf(path, sizeof path, "%s/" RS_TRAIN_LOG, dir);
    rs_curves s, t;
    rs_error err = {{0}};
    ck_assert_int_eq(rs_train_log_read(path, &s, &err), 0);
    ck_assert_int_eq(s.count, 2);
    ck_assert(s.v[RS_CURVE_STEP][0] == 10 && s.v[RS_CURVE_STEP][1] == 20);
    ck_assert(s.v[RS_CURVE_TRAIN][0] == 2.5 && isnan(s.v[RS_CURVE_TRAIN][1]));
    ck_assert(isnan(s.v[RS_CURVE_METRIC][0]) && s.v[RS_CURVE_METRIC][1] == 0.25);
    ck_assert(isnan(s.v[RS_CURVE_DEV][0]) && isnan(s.v[RS_CURVE_AER][1]));
    rs_curves_free(&s);
    /* No train.loss.tsv: t stays empty; one beside the log is read. */
    ck_assert_int_eq(rs_train_loss_read(path, &t, &err), 0);
    ck_assert_int_eq(t.count, 0);
    testfile_put(dir, RS_LOSS_TABLE, "step\ttrain_loss\n5\t3\n10\t2\n15\t1\n");
    ck_assert_int_eq(rs_train_loss_read(path, &t, &err), 0);
    ck_assert_int_eq(t.count, 3);
    ck_assert(t.v[RS_CURVE_TRAIN][2] == 1.0);
    rs_curves_free(&t);
    /* A directory names its log. */
    char named[300];
    rs_train_log_path(dir, named, sizeof named);
    ck_assert_str_eq(named, path);
    testdir_remove(dir);
}
END_TEST

static void expect_refused(const char *text, const char *message)
{
    char dir[256], path[300];
    testdir_make(dir, "rnnsearch-trainlog-bad");
    testfile_put(dir, "log.tsv", text);
    snprintf(path, sizeof path, "%s/log.tsv", dir);
    rs_curves s;
    rs_error err = {{0}};
    ck_assert_int_ne(rs_train_log_read(path, &s, &err), 0);
    ck_assert_msg(strstr(err.msg, message), "'%s' lacks '%s'", err.msg, message);
    testdir_remove(dir);
}

START_TEST(log_refusals)
{
    expect_refused("", "empty file");
    expect_refused("a\tb\n1\t2\n", ":1: not a training log");
    expect_refused("step\ttrain_loss\n", "no rows yet");
    expect_refused("step\ttrain_loss\n10\t1\nx\t2\n", ":3: no step number");
}
END_TEST

Suite *trainlog_suite(void)
{
    Suite *s = suite_create("trainlog");
    TCase *tc = tcase_create("reading the logs");
    tcase_add_test(tc, log_columns_by_name);
    tcase_add_test(tc, log_refusals);
    suite_add_tcase(s, tc);
    return s;
}
