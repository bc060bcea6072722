/* Data-parallel training under mpirun gives the model one process gives:
 * with the same seed and global batch, 2 and 3 ranks (3 splits each batch of
 * 10 pairs unevenly, 3+3+4, and the epoch's last batch of 5 as 1+2+2), and 2
 * ranks of 2 threads each, log the same per-step losses and end with the same
 * parameters, up to float32 summation order; a run resumed on another number of ranks lands on the same
 * model; SentencePiece models trained by rank 0 reach the others; a model
 * directory rank 0 cannot write stops every rank at once; a rank killed in
 * the middle ends the job and leaves a good last checkpoint; the progress
 * line times the all-reduce. Across hosts: scripts/multihost.sh.
 * Skipped, saying so, when the program is built without MPI or mpirun is absent. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model/checkpoint.h"
#include "testdir.h"
#include "testskip.h"
#include "testprog.h"

/* Per-token losses in the log (6 decimals): equal to print resolution and a
 * little more, at every step. Parameters after 10 Adam steps at lr 0.03, with
 * weights of size 0.1: Adam divides each gradient by its own running RMS, so
 * where a gradient is near zero the last bits of the sum, which depend on how
 * the batch was split, move the weight by a visible fraction of lr (one
 * process on 2 threads against 1 differs as much). Measured at most 1.8e-4
 * apart and 2.9e-5 in relative L2 norm; required: 2e-3 (lr / 15) and 1e-3. */
#define LOSS_TOL 2e-5
#define PARAM_TOL 2e-3
#define PARAM_REL_TOL 1e-3

static int have_mpi(void)
{
#ifdef RS_WITH_MPI
    if (system("command -v mpirun >/dev/null 2>&1") == 0)
        return 1;
    test_skip("mpi: mpirun not found (install openmpi-bin)");
#else
    test_skip("mpi: rnnsearch built without MPI (install libopenmpi-dev and openmpi-bin)");
#endif
    return 0;
}

/* `rnnsearch train ARGS` on `ranks` processes under mpirun (0: alone, no
 * launcher), with environment `env` ("NAME=VALUE", or "") on every rank and
 * a time limit that turns a hang into a failure; returns the exit status and
 * the combined output in out. */
static int train_in(int ranks, const char *env, const char *args, char *out, size_t size)
{
    char launcher[256] = "", export[128] = "", cmd[4096];
    if (*env)
        snprintf(export, sizeof export, "-x %.*s ", (int)strcspn(env, "="), env);
    if (ranks > 0)
        snprintf(launcher, sizeof launcher,
                 "mpirun --oversubscribe --bind-to none %s -x OPENBLAS_NUM_THREADS=1 %s-np %d ",
                 geteuid() == 0 ? "--allow-run-as-root" : "", export, ranks);
    snprintf(cmd, sizeof cmd, "OPENBLAS_NUM_THREADS=1 %s timeout 120 %s%s train %s 2>&1", env,
             launcher, testprog_path(), args);
    return testprog_shell(cmd, out, size);
}

static int train(int ranks, const char *args, char *out, size_t size)
{
    return train_in(ranks, "", args, out, size);
}

/* A scratch directory with 45 training and 10 dev pairs of the reorder corpus. */
static void make_data(char *dir)
{
    testdir_make(dir, "rnnsearch-mpi");
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "head -n 45 corpora/reorder/train.tsv > %s/train.tsv && "
             "head -n 10 corpora/reorder/dev.tsv > %s/dev.tsv",
             dir, dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* 2 epochs of 5 batches (10, 10, 10, 10, 5 pairs), an evaluation after every
 * step (its log line has the epoch's mean loss so far); a learning rate that
 * decays after a dev evaluation without improvement (steps 8 and 9), so that
 * rank 0's verdict must reach every rank. */
static void train_args(char *args, size_t size, const char *dir, const char *out, const char *extra)
{
    /* extra replaces a setting by naming it: an option given twice is refused. */
    static const char *const base[][2] = {
        {"--emb", "8"},         {"--hidden", "8"},     {"--att", "8"},        {"--maxout", "4"},
        {"--batch-size", "10"}, {"--epochs", "2"},     {"--eval-every", "1"}, {"--threads", "1"},
        {"--lr", "0.03"},       {"--lr-decay", "0.5"},
    };
    int n = snprintf(args, size, "--train %s/train.tsv --dev %s/dev.tsv --quiet --out %s/%s %s",
                     dir, dir, dir, out, extra);
    for (size_t i = 0; i < sizeof base / sizeof *base && n > 0 && (size_t)n < size; i++) {
        char named[32];
        snprintf(named, sizeof named, "%s ", base[i][0]);
        if (!strstr(extra, named))
            n += snprintf(args + n, size - (size_t)n, " %s %s", base[i][0], base[i][1]);
    }
    ck_assert(n > 0 && (size_t)n < size);
}

typedef struct {
    int count;
    long step[64];
    double train_loss[64], dev_loss[64];
} train_log;

static void read_log(const char *dir, const char *model, train_log *log)
{
    char path[512], line[1024];
    snprintf(path, sizeof path, "%s/%s/train.log.tsv", dir, model);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "%s: missing", path);
    log->count = 0;
    ck_assert(fgets(line, sizeof line, f) != NULL); /* the header */
    while (fgets(line, sizeof line, f) && log->count < 64) {
        int epoch;
        ck_assert_msg(sscanf(line, "%ld\t%d\t%lf\t%lf", &log->step[log->count], &epoch,
                             &log->train_loss[log->count], &log->dev_loss[log->count]) == 4,
                      "%s: bad line %s", path, line);
        log->count++;
    }
    fclose(f);
}

static void same_logs(const train_log *a, const train_log *b, const char *what)
{
    ck_assert_msg(a->count == b->count, "%s: %d log lines against %d", what, b->count, a->count);
    for (int i = 0; i < a->count; i++) {
        ck_assert_int_eq(a->step[i], b->step[i]);
        ck_assert_msg(fabs(a->train_loss[i] - b->train_loss[i]) <= LOSS_TOL &&
                          fabs(a->dev_loss[i] - b->dev_loss[i]) <= LOSS_TOL,
                      "%s: step %ld: train loss %.6f against %.6f, dev loss %.6f against %.6f",
                      what, a->step[i], b->train_loss[i], a->train_loss[i], b->dev_loss[i],
                      a->dev_loss[i]);
    }
}

/* The largest parameter difference between two models' last.ckpt, checked
 * against PARAM_TOL, with the relative L2 distance against PARAM_REL_TOL;
 * their training states must agree on the counters and the learning-rate scale. */
static void param_distance(const char *dir, const char *m1, const char *m2)
{
    char p1[512], p2[512];
    snprintf(p1, sizeof p1, "%s/%s/last.ckpt", dir, m1);
    snprintf(p2, sizeof p2, "%s/%s/last.ckpt", dir, m2);
    rs_model a = {0}, b = {0};
    rs_train_state sa = {0}, sb = {0};
    rs_error err;
    ck_assert_msg(!rs_checkpoint_load(p1, &a, &sa, &err), "%s", err.msg);
    ck_assert_msg(!rs_checkpoint_load(p2, &b, &sb, &err), "%s", err.msg);
    ck_assert_uint_eq(a.layout.total, b.layout.total);
    ck_assert_int_eq(sa.step, sb.step);
    ck_assert_int_eq(sa.epoch, sb.epoch);
    ck_assert_int_eq(sa.batches_done, sb.batches_done);
    ck_assert_int_eq(sa.bad_evals, sb.bad_evals);
    ck_assert(sa.lr_scale == sb.lr_scale);
    double worst = 0.0, diff2 = 0.0, norm2 = 0.0;
    for (size_t i = 0; i < a.layout.total; i++) {
        double d = (double)a.params[i] - (double)b.params[i];
        worst = fmax(worst, fabs(d));
        diff2 += d * d;
        norm2 += (double)a.params[i] * a.params[i];
    }
    fprintf(stderr, "mpi: %s against %s: parameters %.2g apart at most, %.2g in relative L2 norm\n",
            m2, m1, worst, sqrt(diff2 / norm2));
    ck_assert_msg(worst <= PARAM_TOL && sqrt(diff2 / norm2) <= PARAM_REL_TOL,
                  "%s against %s: parameters %g apart, %g relative", m2, m1, worst,
                  sqrt(diff2 / norm2));
    rs_train_state_free(&sa);
    rs_train_state_free(&sb);
    rs_model_free(&a);
    rs_model_free(&b);
}

/* Models m1 and m2 of dir: the same per-step losses, parameters within tolerance. */
static void same_models(const char *dir, const char *m1, const char *m2)
{
    train_log a, b;
    read_log(dir, m1, &a);
    read_log(dir, m2, &b);
    same_logs(&a, &b, m2);
    param_distance(dir, m1, m2);
}

/* Trains model `name` of dir on `ranks` processes (0: alone), as train_args
 * says, in environment env (train_in). */
static void train_model_in(int ranks, const char *env, const char *dir, const char *name,
                           const char *extra)
{
    char args[1024], out[32768];
    train_args(args, sizeof args, dir, name, extra);
    ck_assert_msg(train_in(ranks, env, args, out, sizeof out) == 0, "%s", out);
}

static void train_model(int ranks, const char *dir, const char *name, const char *extra)
{
    train_model_in(ranks, "", dir, name, extra);
}

/* The same bytes in file `name` of models m1 and m2 of dir. */
static void same_file(const char *dir, const char *m1, const char *m2, const char *name)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cmp %s/%s/%s %s/%s/%s", dir, m1, name, dir, m2, name);
    ck_assert_msg(system(cmd) == 0, "%s: %s differs from %s", name, m2, m1);
}

/* The all-reduce overlapped with the backward pass (train/buckets.h,
 * RNNSEARCH_ALLREDUCE_OVERLAP=1) against one all-reduce of the whole buffer
 * after it (the default): on 2 ranks a sum is a + b whichever way the buffer
 * is cut, so the two runs give the same bytes. With updates of 2 batches,
 * only the second batch's backward overlaps. */
START_TEST(overlapped_all_reduce_sums_what_the_whole_one_sums)
{
    if (!have_mpi())
        return;
    char dir[64];
    make_data(dir);
    const char *on = "RNNSEARCH_ALLREDUCE_OVERLAP=1";
    train_model_in(2, on, dir, "overlapped", "--dropout 0.2 --max-steps 6");
    train_model(2, dir, "whole", "--dropout 0.2 --max-steps 6");
    same_file(dir, "overlapped", "whole", "last.ckpt");
    train_model_in(2, on, dir, "overlapped-accumulated",
                   "--accumulate 2 --maxout 8 --tie-embeddings --max-steps 3");
    train_model(2, dir, "whole-accumulated",
                "--accumulate 2 --maxout 8 --tie-embeddings --max-steps 3");
    same_file(dir, "overlapped-accumulated", "whole-accumulated", "last.ckpt");
    testdir_remove(dir);
}
END_TEST

START_TEST(ranks_train_the_model_one_process_trains)
{
    if (!have_mpi())
        return;
    char dir[64];
    make_data(dir);
    train_model(0, dir, "one", "");
    train_model(2, dir, "two", "");
    train_model(3, dir, "three", "");
    train_model(2, dir, "two-by-two", "--threads 2"); /* 2 ranks of 2 shards each */
    train_log one;
    read_log(dir, "one", &one);
    ck_assert_int_eq(one.count, 10); /* a line per step */
    same_models(dir, "one", "two");
    same_models(dir, "one", "three");
    same_models(dir, "one", "two-by-two");
    testdir_remove(dir);
}
END_TEST

/* Batches of 2 pairs on 3 ranks: rank 0 has no rows of any batch, rank 1 none
 * of the epoch's last update (one batch of 1 pair): they send zeros, not the
 * last update's gradient; updates of 2 batches (--accumulate) sum over
 * batches and ranks. */
START_TEST(ranks_without_rows_and_accumulated_updates)
{
    if (!have_mpi())
        return;
    char dir[64];
    make_data(dir);
    train_model(0, dir, "one", "--batch-size 2 --accumulate 2");
    train_model(3, dir, "three", "--batch-size 2 --accumulate 2");
    same_models(dir, "one", "three");
    /* Overlapped, the ranks that computed the last batch start the buckets
     * during its backward and the others at the end, in the same order. */
    train_model_in(3, "RNNSEARCH_ALLREDUCE_OVERLAP=1", dir, "three-overlapped",
                   "--batch-size 2 --accumulate 2");
    same_models(dir, "one", "three-overlapped");
    testdir_remove(dir);
}
END_TEST

START_TEST(resume_on_another_number_of_ranks)
{
    if (!have_mpi())
        return;
    char dir[64], out[32768];
    make_data(dir);
    train_model(0, dir, "whole", "");
    /* The first epoch on 2 ranks, the second on 3. */
    train_model(2, dir, "parts", "--max-steps 5");
    char resume[1024];
    snprintf(resume, sizeof resume,
             "--train %s/train.tsv --dev %s/dev.tsv --out %s/parts --resume --max-steps 0 "
             "--eval-every 1 --quiet",
             dir, dir, dir);
    ck_assert_msg(train(3, resume, out, sizeof out) == 0, "%s", out);
    same_models(dir, "whole", "parts");
    testdir_remove(dir);
}
END_TEST

START_TEST(subword_models_come_from_rank_0)
{
    if (!have_mpi())
        return;
    char dir[64];
    make_data(dir);
    train_model(0, dir, "one", "--subwords 40");
    train_model(2, dir, "two", "--subwords 40");
    same_models(dir, "one", "two");
    testdir_remove(dir);
}
END_TEST

START_TEST(a_killed_rank_ends_the_job)
{
    if (!have_mpi())
        return;
    char dir[64], args[1024], cmd[4096];
    make_data(dir);
    /* A long run on 2 ranks that saves often; once last.ckpt exists, rank 1
     * (the process whose environment says so) is killed. */
    snprintf(args, sizeof args,
             "--train %s/train.tsv --emb 8 --hidden 8 --att 8 --maxout 4 --batch-size 10 "
             "--epochs 100000 --save-every 3 --threads 1 --quiet --out %s/k",
             dir, dir);
    snprintf(
        cmd, sizeof cmd,
        "mpirun --oversubscribe --bind-to none %s -np 2 %s train %s > %s/k.log 2>&1 & job=$!; "
        "for i in $(seq 600); do [ -f %s/k/last.ckpt ] && break; sleep 0.1; done; "
        "for p in $(pgrep -f -- '--out %s/k'); do "
        "  tr '\\0' '\\n' < /proc/$p/environ 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=1 "
        "  && kill -9 $p && echo 'mpi: rank 1 killed' >&2; done; "
        "( sleep 60; kill $job 2>/dev/null ) & timer=$!; wait $job; rc=$?; kill $timer; exit $rc",
        geteuid() == 0 ? "--allow-run-as-root" : "", testprog_path(), args, dir, dir, dir);
    FILE *p = popen(cmd, "r");
    ck_assert(p != NULL);
    int status = pclose(p);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 143,
                  "mpirun status %d (143: it hung after the kill)", status);
    char path[512];
    snprintf(path, sizeof path, "%s/k.log", dir);
    size_t size;
    char *log = (char *)testfile_read(path, &size);
    ck_assert_msg(strstr(log, "rank 1") && strstr(log, "signal 9"), "%s", log);
    free(log);
    /* The last checkpoint is whole: it loads. */
    snprintf(path, sizeof path, "%s/k/last.ckpt", dir);
    rs_model m = {0};
    rs_train_state st = {0};
    rs_error err;
    ck_assert_msg(!rs_checkpoint_load(path, &m, &st, &err), "%s", err.msg);
    ck_assert(st.step > 0);
    rs_train_state_free(&st);
    rs_model_free(&m);
    testdir_remove(dir);
}
END_TEST

/* On several ranks the progress line says how long a step took and how much
 * of it the gradient all-reduce took; alone, it has no such part. */
START_TEST(progress_line_times_the_all_reduce)
{
    if (!have_mpi())
        return;
    char dir[64], args[1024], out[32768];
    make_data(dir);
    snprintf(args, sizeof args,
             "--train %s/train.tsv --emb 8 --hidden 8 --att 8 --maxout 4 --batch-size 10 "
             "--epochs 2 --threads 1 --out %s/p2",
             dir, dir);
    ck_assert_msg(train(2, args, out, sizeof out) == 0, "%s", out);
    const char *line = strstr(out, "step 10/10 |");
    ck_assert_msg(line != NULL, "no progress line: %s", out);
    double step_ms, allreduce_ms, share;
    const char *timing = strstr(line, "| step ");
    ck_assert_msg(timing && sscanf(timing, "| step %lf ms, all-reduce %lf ms (%lf%%)", &step_ms,
                                   &allreduce_ms, &share) == 3,
                  "no all-reduce timing: %s", line);
    ck_assert(step_ms > 0 && allreduce_ms >= 0 && allreduce_ms <= step_ms && share <= 100);
    snprintf(args, sizeof args,
             "--train %s/train.tsv --emb 8 --hidden 8 --att 8 --maxout 4 --batch-size 10 "
             "--epochs 2 --threads 1 --out %s/p1",
             dir, dir);
    ck_assert_msg(train(0, args, out, sizeof out) == 0, "%s", out);
    ck_assert_msg(strstr(out, "step 10/10 |") && !strstr(out, "all-reduce"), "%s", out);
    testdir_remove(dir);
}
END_TEST

START_TEST(unwritable_model_directory_stops_every_rank)
{
    if (!have_mpi())
        return;
    char dir[64], args[1024], out[32768], file[128];
    make_data(dir);
    /* A model directory below a regular file cannot be made, even by root. */
    snprintf(file, sizeof file, "%s/plain-file", dir);
    FILE *f = fopen(file, "w");
    ck_assert(f != NULL && fclose(f) == 0);
    train_args(args, sizeof args, dir, "plain-file/model", "");
    int status = train(3, args, out, sizeof out);
    ck_assert_msg(status != 0 && status != 124, "status %d (124: a hang): %s", status, out);
    /* Rank 0 says why, for all, before any training; no rank aborts the job. */
    int says = 0;
    for (const char *at = out; (at = strstr(at, "cannot create directory")); at++)
        says++;
    ck_assert_msg(says == 1, "the problem named %d times: %s", says, out);
    ck_assert_msg(!strstr(out, "MPI_ABORT") && !strstr(out, "ending the job"), "%s", out);
    ck_assert_msg(!strstr(out, "step "), "training started: %s", out);
    testdir_remove(dir);
}
END_TEST

Suite *mpi_suite(void)
{
    Suite *s = suite_create("mpi");
    TCase *tc = tcase_create("mpirun");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, ranks_train_the_model_one_process_trains);
    tcase_add_test(tc, ranks_without_rows_and_accumulated_updates);
    tcase_add_test(tc, overlapped_all_reduce_sums_what_the_whole_one_sums);
    tcase_add_test(tc, resume_on_another_number_of_ranks);
    tcase_add_test(tc, subword_models_come_from_rank_0);
    tcase_add_test(tc, progress_line_times_the_all_reduce);
    tcase_add_test(tc, unwritable_model_directory_stops_every_rank);
    tcase_add_test(tc, a_killed_rank_ends_the_job);
    suite_add_tcase(s, tc);
    return s;
}
