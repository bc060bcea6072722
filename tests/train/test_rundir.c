/* The model directory of a training run (src/train/rundir.c): its lock (one
 * training at a time, the holder named), what counts as a model and what
 * --overwrite clears, --keep-last's pruning by step number, the temporaries
 * of killed saves, the truncation of the logs on resume and their rows. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testdir.h"
#include "train/rundir.h"

static void expect(const char *dir, const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    testfile_expect(path, text);
}

/* The refusal names the directory and the holder's process id. */
static void assert_refused_by(const char *dir, long holder)
{
    rs_error err = {{0}};
    int fd = 123;
    ck_assert_int_ne(rs_train_lock(dir, &fd, &err), 0);
    ck_assert_int_eq(fd, -1);
    char who[64];
    snprintf(who, sizeof who, "(process %ld)", holder);
    ck_assert_msg(strstr(err.msg, who) && strstr(err.msg, dir), "%s", err.msg);
}

START_TEST(lock_is_held_per_open_and_names_its_holder)
{
    char dir[64], sub[128], pid[32];
    testdir_make(dir, "rnnsearch-rundir-lock");
    /* The directory is created; the lock file holds our PID, replacing a
     * dead holder's longer one whole. */
    snprintf(sub, sizeof sub, "%s/models/run", dir);
    rs_error err = {{0}};
    int fd = -1, fd2 = -1;
    ck_assert_msg(rs_train_lock(sub, &fd, &err) == 0, "%s", err.msg);
    ck_assert_int_ge(fd, 0);
    snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    expect(sub, "lock", pid);
    /* A second open in this process is refused (flock is per open file), and
     * closing the refused descriptor does not release the first one's lock. */
    assert_refused_by(sub, (long)getpid());
    assert_refused_by(sub, (long)getpid());
    rs_train_unlock(fd);
    ck_assert_msg(rs_train_lock(sub, &fd2, &err) == 0, "%s", err.msg);
    rs_train_unlock(fd2);
    rs_train_unlock(-1); /* nothing held: nothing to do */

    testfile_put(sub, "lock", "99999999999\nleft by a training that was killed\n");
    ck_assert_msg(rs_train_lock(sub, &fd, &err) == 0, "%s", err.msg);
    expect(sub, "lock", pid);
    rs_train_unlock(fd);

    /* A path under a regular file cannot be locked, and says why. */
    testfile_put(dir, "file", "x");
    snprintf(sub, sizeof sub, "%s/file/run", dir);
    ck_assert_int_ne(rs_train_lock(sub, &fd, &err), 0);
    ck_assert_msg(strstr(err.msg, "file"), "%s", err.msg);
    testdir_remove(dir);
}
END_TEST

START_TEST(lock_held_by_another_process_is_refused_until_it_ends)
{
    char dir[64];
    testdir_make(dir, "rnnsearch-rundir-lock2");
    int locked[2], release[2];
    ck_assert_int_eq(pipe(locked), 0);
    ck_assert_int_eq(pipe(release), 0);
    const pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        rs_error err;
        int fd;
        char ok = rs_train_lock(dir, &fd, &err) == 0 ? 'y' : 'n', go;
        if (write(locked[1], &ok, 1) != 1 || read(release[0], &go, 1) != 1)
            _exit(3);
        _exit(ok == 'y' ? 0 : 2); /* ending the process releases the lock */
    }
    char ok = 0;
    ck_assert_int_eq(read(locked[0], &ok, 1), 1);
    ck_assert_int_eq(ok, 'y');
    assert_refused_by(dir, (long)child);
    /* The refused attempt leaves the holder's PID in place. */
    char pid[32];
    snprintf(pid, sizeof pid, "%ld\n", (long)child);
    expect(dir, "lock", pid);
    ck_assert_int_eq(write(release[1], "g", 1), 1);
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    rs_error err = {{0}};
    int fd;
    ck_assert_msg(rs_train_lock(dir, &fd, &err) == 0, "%s", err.msg);
    snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    expect(dir, "lock", pid);
    rs_train_unlock(fd);
    close(locked[0]), close(locked[1]), close(release[0]), close(release[1]);
    testdir_remove(dir);
}
END_TEST

/* Names training never writes, or writes as something else: never a model,
 * never removed. */
static const char *const not_outputs[] = {
    "lock",         "notes.txt",   "train.tsv",     "step-.ckpt",     "step-x.ckpt",
    "step-5.ckpt~", "step5.ckpt",  "last.ckpt.bak", "last.ckpt.tmp.", "last.ckpt.tmp.12a",
    ".tmp.123",     "best.ckpt.1", "train.log.old",
};
enum { NOT_OUTPUTS = sizeof not_outputs / sizeof *not_outputs };

START_TEST(what_makes_a_model_and_what_clearing_removes)
{
    char dir[64], missing[128];
    testdir_make(dir, "rnnsearch-rundir-model");
    snprintf(missing, sizeof missing, "%s/missing", dir);
    ck_assert(!rs_train_dir_has_model(missing));
    ck_assert(!rs_train_dir_has_model(dir));
    for (int i = 0; i < NOT_OUTPUTS; i++)
        testfile_put(dir, not_outputs[i], "x");
    /* Logs and temporaries alone are not a model (a run stopped before its
     * first save leaves them). */
    testfile_put(dir, RS_LOSS_TABLE, "step\n");
    testfile_put(dir, RS_TEXT_LOG, "started\n");
    testfile_put(dir, "last.ckpt.tmp.4242", "torn");
    ck_assert(!rs_train_dir_has_model(dir));
    /* Each of these alone is. */
    static const char *const models[] = {"last.ckpt",    "best.ckpt",     "step-7.ckpt",
                                         "step-10.ckpt", "train.log.tsv", "watch.jsonl"};
    for (size_t i = 0; i < sizeof models / sizeof *models; i++) {
        testfile_put(dir, models[i], "x");
        ck_assert_msg(rs_train_dir_has_model(dir), "%s is not taken for a model", models[i]);
        char path[256];
        snprintf(path, sizeof path, "%s/%s", dir, models[i]);
        ck_assert_int_eq(unlink(path), 0);
        ck_assert(!rs_train_dir_has_model(dir));
    }
    /* --overwrite: the model, its logs and temporaries go; the rest stays. */
    for (size_t i = 0; i < sizeof models / sizeof *models; i++)
        testfile_put(dir, models[i], "x");
    testfile_put(dir, "step-3.ckpt.tmp.17", "torn");
    rs_error err = {{0}};
    ck_assert_msg(rs_train_clear_dir(dir, &err) == 0, "%s", err.msg);
    ck_assert(!rs_train_dir_has_model(dir));
    for (size_t i = 0; i < sizeof models / sizeof *models; i++)
        ck_assert_msg(!testfile_exists(dir, models[i]), "%s was left", models[i]);
    ck_assert(!testfile_exists(dir, RS_LOSS_TABLE) && !testfile_exists(dir, RS_TEXT_LOG));
    ck_assert(!testfile_exists(dir, "last.ckpt.tmp.4242") &&
              !testfile_exists(dir, "step-3.ckpt.tmp.17"));
    for (int i = 0; i < NOT_OUTPUTS; i++)
        ck_assert_msg(testfile_exists(dir, not_outputs[i]), "%s was removed", not_outputs[i]);
    /* Nothing to clear: no error. */
    ck_assert_int_eq(rs_train_clear_dir(missing, &err), 0);
    testdir_remove(dir);
}
END_TEST

START_TEST(prune_keeps_the_highest_steps_not_the_last_names)
{
    char dir[64];
    testdir_make(dir, "rnnsearch-rundir-prune");
    /* By name, step-9 sorts after step-100: a pruning by name keeps 11, 2 and 9. */
    static const int steps[] = {1, 2, 9, 10, 11, 100};
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        char name[32];
        snprintf(name, sizeof name, "step-%d.ckpt", steps[i]);
        testfile_put(dir, name, name);
    }
    testfile_put(dir, "last.ckpt", "last");
    testfile_put(dir, "step-5.ckpt.tmp.42", "torn");
    testfile_put(dir, "step-0.ckpt~", "other");
    rs_error err = {{0}};
    /* Fewer than K: nothing goes. */
    ck_assert_msg(rs_rundir_prune_steps(dir, 6, &err) == 0, "%s", err.msg);
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        char name[32];
        snprintf(name, sizeof name, "step-%d.ckpt", steps[i]);
        ck_assert_msg(testfile_exists(dir, name), "%s removed with keep 6", name);
    }
    ck_assert_msg(rs_rundir_prune_steps(dir, 3, &err) == 0, "%s", err.msg);
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        char name[32];
        snprintf(name, sizeof name, "step-%d.ckpt", steps[i]);
        ck_assert_msg(testfile_exists(dir, name) == (steps[i] >= 10), "%s %s", name,
                      testfile_exists(dir, name) ? "kept" : "removed");
    }
    expect(dir, "step-100.ckpt", "step-100.ckpt");
    ck_assert(testfile_exists(dir, "last.ckpt") && testfile_exists(dir, "step-5.ckpt.tmp.42") &&
              testfile_exists(dir, "step-0.ckpt~"));
    ck_assert_msg(rs_rundir_prune_steps(dir, 1, &err) == 0, "%s", err.msg);
    ck_assert(!testfile_exists(dir, "step-10.ckpt") && !testfile_exists(dir, "step-11.ckpt"));
    ck_assert(testfile_exists(dir, "step-100.ckpt"));
    /* A directory that cannot be listed is an error naming it. */
    char missing[128];
    snprintf(missing, sizeof missing, "%s/missing", dir);
    ck_assert_int_ne(rs_rundir_prune_steps(missing, 1, &err), 0);
    ck_assert_msg(strstr(err.msg, missing), "%s", err.msg);
    testdir_remove(dir);
}
END_TEST

START_TEST(temporaries_of_killed_saves_are_removed)
{
    char dir[64];
    testdir_make(dir, "rnnsearch-rundir-tmp");
    static const char *const temporaries[] = {"last.ckpt.tmp.123", "step-4.ckpt.tmp.9",
                                              "train.log.tsv.tmp.77", "best.ckpt.tmp.1"};
    for (size_t i = 0; i < sizeof temporaries / sizeof *temporaries; i++)
        testfile_put(dir, temporaries[i], "torn");
    testfile_put(dir, "last.ckpt", "whole");
    testfile_put(dir, "train.log.tsv", "step\n");
    for (int i = 0; i < NOT_OUTPUTS; i++)
        testfile_put(dir, not_outputs[i], "x");
    rs_error err = {{0}};
    ck_assert_msg(rs_rundir_remove_temporaries(dir, &err) == 0, "%s", err.msg);
    for (size_t i = 0; i < sizeof temporaries / sizeof *temporaries; i++)
        ck_assert_msg(!testfile_exists(dir, temporaries[i]), "%s was left", temporaries[i]);
    expect(dir, "last.ckpt", "whole");
    expect(dir, "train.log.tsv", "step\n");
    for (int i = 0; i < NOT_OUTPUTS; i++)
        ck_assert_msg(testfile_exists(dir, not_outputs[i]), "%s was removed", not_outputs[i]);
    testdir_remove(dir);
}
END_TEST

START_TEST(truncate_rows_keeps_header_and_rows_up_to_the_step)
{
    char dir[64], path[256];
    testdir_make(dir, "rnnsearch-rundir-trunc");
    snprintf(path, sizeof path, "%s/t.tsv", dir);
    rs_error err = {{0}};
    /* The header lines are kept whatever they hold; steps compare as numbers. */
    const char *text = "100 header\n200 header\n5\ta\n9\tb\n10\tc\n11\td\n";
    testfile_write(path, (const unsigned char *)text, strlen(text));
    ck_assert_msg(rs_rundir_truncate_rows(path, 2, "", 9, &err) == 0, "%s", err.msg);
    testfile_expect(path, "100 header\n200 header\n5\ta\n9\tb\n");
    /* Nothing after the step: the file is unchanged. */
    ck_assert_int_eq(rs_rundir_truncate_rows(path, 2, "", 9, &err), 0);
    testfile_expect(path, "100 header\n200 header\n5\ta\n9\tb\n");
    /* A step before every row: the header alone. */
    ck_assert_int_eq(rs_rundir_truncate_rows(path, 2, "", 4, &err), 0);
    testfile_expect(path, "100 header\n200 header\n");

    /* A prefix: rows stop at the first line without it, even if later ones
     * would qualify; a torn last line goes even when its step is kept. */
    text = "{\"step\":1}\n{\"step\":2}\nnoise\n{\"step\":3}\n";
    testfile_write(path, (const unsigned char *)text, strlen(text));
    ck_assert_int_eq(rs_rundir_truncate_rows(path, 0, "{\"step\":", 50, &err), 0);
    testfile_expect(path, "{\"step\":1}\n{\"step\":2}\n");
    text = "{\"step\":1}\n{\"step\":2}\n{\"step\":3";
    testfile_write(path, (const unsigned char *)text, strlen(text));
    ck_assert_int_eq(rs_rundir_truncate_rows(path, 0, "{\"step\":", 50, &err), 0);
    testfile_expect(path, "{\"step\":1}\n{\"step\":2}\n");

    /* A missing file stays missing. */
    snprintf(path, sizeof path, "%s/none.tsv", dir);
    ck_assert_int_eq(rs_rundir_truncate_rows(path, 1, "", 3, &err), 0);
    ck_assert_int_ne(access(path, F_OK), 0);
    testdir_remove(dir);
}
END_TEST

START_TEST(truncate_log_cuts_both_tables_after_the_resumed_step)
{
    char dir[64];
    testdir_make(dir, "rnnsearch-rundir-trunclog");
    testfile_put(dir, "train.log.tsv", "step\tepoch\n5\t1\n10\t1\n15\t2\n20\t2");
    testfile_put(dir, RS_LOSS_TABLE, "step\tepoch\n2\t1\n4\t1\n10\t1\n12\t2\n");
    rs_error err = {{0}};
    ck_assert_msg(rs_rundir_truncate_log(dir, 10, &err) == 0, "%s", err.msg);
    expect(dir, "train.log.tsv", "step\tepoch\n5\t1\n10\t1\n");
    expect(dir, RS_LOSS_TABLE, "step\tepoch\n2\t1\n4\t1\n10\t1\n");
    /* Resumed at step 0: headers only. A missing table stays missing. */
    char path[256];
    snprintf(path, sizeof path, "%s/" RS_LOSS_TABLE, dir);
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_msg(rs_rundir_truncate_log(dir, 0, &err) == 0, "%s", err.msg);
    expect(dir, "train.log.tsv", "step\tepoch\n");
    ck_assert(!testfile_exists(dir, RS_LOSS_TABLE));
    /* The text log is not a table: left as it is. */
    testfile_put(dir, RS_TEXT_LOG, "2026-11-25T04:05:30Z step 99\npartial");
    ck_assert_int_eq(rs_rundir_truncate_log(dir, 0, &err), 0);
    expect(dir, RS_TEXT_LOG, "2026-11-25T04:05:30Z step 99\npartial");
    testdir_remove(dir);
}
END_TEST

#define LOSS_HEADER "step\tepoch\ttrain_loss\tsteps\ttokens\tlr\tgnorm\n"
#define LOG_HEADER                                                                                 \
    "step\tepoch\ttrain_loss\tdev_loss\tdev_metric\ttokens_per_s\tlr\twall_s\tdev_metric_name\t"   \
    "aer\talign_precision\talign_recall\n"

static rs_loss_row loss_row(int64_t step, int epoch, int steps, long tokens, double loss, double lr,
                            double gnorm)
{
    rs_loss_row row = {.step = step, .epoch = epoch, .steps = steps, .tokens = tokens};
    row.loss = loss, row.lr = lr, row.gnorm = gnorm;
    return row;
}

START_TEST(loss_rows_are_appended_under_one_header)
{
    char dir[64];
    testdir_make(dir, "rnnsearch-rundir-loss");
    rs_error err = {{0}};
    rs_loss_row row = loss_row(10, 1, 10, 1234, 2.5, 0.001, 3.5);
    ck_assert_msg(rs_rundir_append_loss(dir, &row, &err) == 0, "%s", err.msg);
    expect(dir, RS_LOSS_TABLE, LOSS_HEADER "10\t1\t2.500000\t10\t1234\t0.001\t3.5\n");
    row = loss_row(20, 2, 10, 99, 1.0 / 3, 5e-4, 12345678);
    ck_assert_msg(rs_rundir_append_loss(dir, &row, &err) == 0, "%s", err.msg);
    expect(dir, RS_LOSS_TABLE,
           LOSS_HEADER "10\t1\t2.500000\t10\t1234\t0.001\t3.5\n"
                       "20\t2\t0.333333\t10\t99\t0.0005\t1.23457e+07\n");
    /* After a resume's truncation, rows continue under the same header. */
    ck_assert_int_eq(rs_rundir_truncate_log(dir, 10, &err), 0);
    row.step = 12;
    ck_assert_int_eq(rs_rundir_append_loss(dir, &row, &err), 0);
    expect(dir, RS_LOSS_TABLE,
           LOSS_HEADER "10\t1\t2.500000\t10\t1234\t0.001\t3.5\n"
                       "12\t2\t0.333333\t10\t99\t0.0005\t1.23457e+07\n");
    /* An empty file (created, never written) gets its header. */
    testfile_put(dir, RS_LOSS_TABLE, "");
    ck_assert_int_eq(rs_rundir_append_loss(dir, &row, &err), 0);
    expect(dir, RS_LOSS_TABLE, LOSS_HEADER "12\t2\t0.333333\t10\t99\t0.0005\t1.23457e+07\n");
    /* A directory that is not there: an error naming the file. */
    char missing[128];
    snprintf(missing, sizeof missing, "%s/missing", dir);
    ck_assert_int_ne(rs_rundir_append_loss(missing, &row, &err), 0);
    ck_assert_msg(strstr(err.msg, "missing/" RS_LOSS_TABLE), "%s", err.msg);
    testdir_remove(dir);
}
END_TEST

static rs_train_event dev_event(int64_t step, int epoch)
{
    rs_train_event ev = {.kind = RS_EV_DEV, .step = step, .epoch = epoch};
    ev.dev_loss = NAN, ev.dev_exact = -1, ev.dev_bleu = -1;
    ev.aer = ev.align_precision = ev.align_recall = NAN;
    return ev;
}

START_TEST(log_rows_leave_unmeasured_cells_empty)
{
    char dir[64];
    testdir_make(dir, "rnnsearch-rundir-log");
    rs_error err = {{0}};
    /* BLEU wins over exact match; AER, precision and recall in percent. */
    rs_train_event ev = dev_event(100, 2);
    ev.dev_loss = 1.25, ev.dev_bleu = 12.5, ev.dev_exact = 0.75;
    ev.tokens_per_s = 1234.56, ev.lr = 0.0005, ev.elapsed_s = 61.234;
    ev.aer = 0.25, ev.align_precision = 0.8, ev.align_recall = 0.7;
    ck_assert_msg(rs_rundir_append_log(dir, &ev, NAN, &err) == 0, "%s", err.msg);
    const char *row1 =
        "100\t2\t\t1.250000\t12.5000\t1234.6\t0.0005\t61.23\tbleu\t25.0000\t80.0000\t"
        "70.0000\n";
    char want[1024];
    snprintf(want, sizeof want, "%s%s", LOG_HEADER, row1);
    expect(dir, "train.log.tsv", want);
    /* Exact match alone: in percent, named so. */
    ev = dev_event(200, 3);
    ev.dev_exact = 0.5, ev.dev_loss = 0.5, ev.lr = 1, ev.elapsed_s = 2;
    ck_assert_int_eq(rs_rundir_append_log(dir, &ev, 0.25, &err), 0);
    /* Nothing measured: every measured cell empty, the row still whole. */
    ev = dev_event(300, 3);
    ck_assert_int_eq(rs_rundir_append_log(dir, &ev, INFINITY, &err), 0);
    snprintf(want, sizeof want, "%s%s%s%s", LOG_HEADER, row1,
             "200\t3\t0.250000\t0.500000\t50.0000\t0.0\t1\t2.00\texact_percent\t\t\t\n",
             "300\t3\t\t\t\t0.0\t0\t0.00\t\t\t\t\n");
    expect(dir, "train.log.tsv", want);
    char missing[128];
    snprintf(missing, sizeof missing, "%s/missing", dir);
    ck_assert_int_ne(rs_rundir_append_log(missing, &ev, 1.0, &err), 0);
    ck_assert_msg(strstr(err.msg, "missing/train.log.tsv"), "%s", err.msg);
    ck_assert(!rs_train_dir_has_model(missing));
    testdir_remove(dir);
}
END_TEST

Suite *rundir_suite(void)
{
    Suite *s = suite_create("rundir");
    TCase *tc = tcase_create("model directory");
    tcase_add_test(tc, lock_is_held_per_open_and_names_its_holder);
    tcase_add_test(tc, lock_held_by_another_process_is_refused_until_it_ends);
    tcase_add_test(tc, what_makes_a_model_and_what_clearing_removes);
    tcase_add_test(tc, prune_keeps_the_highest_steps_not_the_last_names);
    tcase_add_test(tc, temporaries_of_killed_saves_are_removed);
    tcase_add_test(tc, truncate_rows_keeps_header_and_rows_up_to_the_step);
    tcase_add_test(tc, truncate_log_cuts_both_tables_after_the_resumed_step);
    tcase_add_test(tc, loss_rows_are_appended_under_one_header);
    tcase_add_test(tc, log_rows_leave_unmeasured_cells_empty);
    suite_add_tcase(s, tc);
    return s;
}
