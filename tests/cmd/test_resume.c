/* Interrupted training, through the program as users run it: a run killed at
 * any point (SIGKILL at random instants, or ended by the RNNSEARCH_FAULT hook
 * between a write and its rename, between the log row and the checkpoints,
 * between best.ckpt and last.ckpt) and resumed ends with the checkpoints of
 * an uninterrupted run, bit for bit; signals stop cleanly; a model directory
 * is used by one training at a time and is not overwritten by mistake; a
 * resumed run given other data than it was trained on is refused. And what
 * a run tells: timed lines, its log files, one epoch numbering. */
#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "train/rundir.h"
#include "model/checkpoint.h"
#include "common/fault.h"
#include "testdir.h"
#include "testprog.h"
#include "train/train.h"

/* A tiny corpus: the first pairs of the reorder corpus, and a dev set. */
static void make_corpus(const char *dir, int train_lines)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "head -n %d corpora/reorder/train.tsv > %s/train.tsv && "
             "head -n 16 corpora/reorder/dev.tsv > %s/dev.tsv",
             train_lines, dir, dir);
    ck_assert(system(cmd) == 0);
}

/* A scratch directory with a corpus of train_lines pairs; model: dir/model. */
static void setup(char dir[64], char model[128], const char *prefix, int train_lines)
{
    testdir_make(dir, prefix);
    make_corpus(dir, train_lines);
    snprintf(model, 128, "%s/model", dir);
}

/* Starts `rnnsearch train ARGS…` with RNNSEARCH_FAULT=fault (when not NULL)
 * and stderr into dir/stderr; returns the child's PID. */
static pid_t start(const char *dir, const char *fault, const char *extra)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "exec %s train --train %s/train.tsv --dev %s/dev.tsv --out %s/model --quiet %s "
             "2> %s/stderr",
             testprog_path(), dir, dir, dir, extra, dir);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (fault)
            setenv("RNNSEARCH_FAULT", fault, 1);
        else
            unsetenv("RNNSEARCH_FAULT");
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* The exit status, or 128 + the signal that ended it. */
static int wait_for(pid_t pid)
{
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int run(const char *dir, const char *fault, const char *extra)
{
    return wait_for(start(dir, fault, extra));
}

static int file_exists(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

/* dir/name as a NUL-terminated string; free() it. */
static char *read_text(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t size;
    return (char *)testfile_read(path, &size);
}

/* Temporary files of killed saves left in the model directory. */
static int count_temporaries(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        count += strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return count;
}

/* The log's rows as "step dev_loss dev_metric" lines (what does not depend on
 * timing or on where the run was resumed). */
static char *log_summary(const char *model_dir)
{
    char *data = read_text(model_dir, "train.log.tsv");
    char *out = calloc(strlen(data) + 1, 1);
    ck_assert_ptr_nonnull(out);
    size_t used = 0;
    char *save = NULL;
    for (char *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *cells[9] = {0};
        int n = 0;
        for (char *p = line; n < 9; n++) {
            cells[n] = p;
            char *tab = strchr(p, '\t');
            if (!tab)
                break;
            *tab = 0;
            p = tab + 1;
        }
        ck_assert_msg(n >= 8, "log row with %d cells", n + 1);
        used += (size_t)sprintf(out + used, "%s %s %s\n", cells[0], cells[3], cells[4]);
    }
    free(data);
    return out;
}

static void assert_same_file(const char *a_dir, const char *b_dir, const char *name,
                             const char *what)
{
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/%s", a_dir, name);
    snprintf(b, sizeof b, "%s/%s", b_dir, name);
    size_t na, nb;
    unsigned char *da = testfile_read(a, &na), *db = testfile_read(b, &nb);
    ck_assert_msg(na == nb && !memcmp(da, db, na), "%s: %s differs from the uninterrupted run's",
                  what, name);
    free(da);
    free(db);
}

/* Dropout, word dropout, label smoothing, the inverse-sqrt learning-rate
 * schedule with its warm-up and plateau decay on top, dev BLEU, and
 * evaluations and saves on different schedules (both at step 35). */
#define RUN_OPTIONS                                                                                \
    "--emb 16 --hidden 16 --att 16 --maxout 8 --batch-size 8 --epochs 4 --eval-every 7 "           \
    "--save-every 5 --dropout 0.2 --label-smoothing 0.1 --warmup 6 --lr-decay 0.7 --lr 0.05 "      \
    "--lr-schedule inverse-sqrt "                                                                  \
    "--src-word-dropout 0.1 --tgt-word-dropout 0.15 --dev-bleu --seed 3"

START_TEST(killed_anywhere_and_resumed_equals_uninterrupted)
{
    char ref[64], dir[64], ref_model[128], model[128];
    setup(ref, ref_model, "rnnsearch-resume-ref", 120);
    ck_assert_int_eq(run(ref, NULL, RUN_OPTIONS), 0);
    /* 120 pairs in batches of 8: 60 steps; the steps after the last
     * evaluation (56) are evaluated and saved too. */
    rs_model m;
    rs_train_state st;
    rs_error err;
    char path[256];
    snprintf(path, sizeof path, "%s/last.ckpt", ref_model);
    ck_assert_msg(rs_checkpoint_load(path, &m, &st, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(st.step, 60);
    ck_assert_int_eq(m.train.eval_every, 7);
    ck_assert_int_eq(m.train.dev_bleu, 1);
    ck_assert(st.lr_scale < 1.0f); /* the decay happened, so the test covers it */
    ck_assert_int_eq(m.train.lr_schedule,
                     RS_LR_INVERSE_SQRT); /* resumed with nothing but --resume */
    rs_train_state_free(&st);
    rs_model_free(&m);
    char *ref_log = log_summary(ref_model);
    /* The last improvement's best.ckpt commit: killed right after it, a run
     * whose last.ckpt already recorded that best would leave best.ckpt stale. */
    char *ref_err = read_text(ref, "stderr"), last_best[32];
    int improvements = 0;
    for (const char *p = ref_err; (p = strstr(p, "| best")); p++)
        improvements++;
    free(ref_err);
    ck_assert_int_ge(improvements, 2);
    snprintf(last_best, sizeof last_best, "best@%d", improvements);

    /* Each list is one run killed at each point in turn, resumed each time
     * with nothing but --resume (every setting comes from the checkpoint). */
    const char *const schedules[][5] = {
        /* before the first checkpoint, between watch.jsonl and the log row, … */
        {"rename@1", "rename@3", "log@2", "best@1", "watch@4"},
        {last_best, "last@3", "rename@2", "log@1",
         "watch@2"}, /* between the last best and last, … */
        {"kill@30", "kill@15", "kill@45", "rename@5", "kill@60"}, /* SIGKILL after so many ms */
    };
    for (size_t s = 0; s < sizeof schedules / sizeof *schedules; s++) {
        setup(dir, model, "rnnsearch-resume", 120);
        int faults = 0;
        for (int k = 0; k < 5; k++) {
            const char *fault = schedules[s][k];
            int resume = file_exists(model, "last.ckpt");
            const char *args = resume ? "--resume" : "--overwrite " RUN_OPTIONS;
            if (!strncmp(fault, "kill@", 5)) {
                pid_t pid = start(dir, NULL, args);
                struct timespec ts = {0, 1000000L * atol(fault + 5)};
                nanosleep(&ts, NULL);
                kill(pid, SIGKILL);
                int rc = wait_for(pid);
                ck_assert_msg(rc == 128 + SIGKILL || rc == 0, "%s: exit %d", fault, rc);
            } else {
                /* A point the rest of the run no longer reaches lets it finish. */
                int rc = run(dir, fault, args);
                ck_assert_msg(rc == RS_FAULT_EXIT || rc == 0, "schedule %zu, %s: exit %d", s, fault,
                              rc);
                faults += rc == RS_FAULT_EXIT;
            }
        }
        ck_assert_msg(strncmp(schedules[s][0], "kill@", 5) == 0 || faults >= 3,
                      "schedule %zu: only %d fault points reached", s, faults);
        ck_assert_int_eq(
            run(dir, NULL,
                file_exists(model, "last.ckpt") ? "--resume" : "--overwrite " RUN_OPTIONS),
            0);
        assert_same_file(ref_model, model, "last.ckpt", schedules[s][0]);
        assert_same_file(ref_model, model, "best.ckpt", schedules[s][0]);
        /* The watched alignments of every evaluation, once each, as uninterrupted. */
        assert_same_file(ref_model, model, "watch.jsonl", schedules[s][0]);
        assert_same_file(ref_model, model, RS_LOSS_TABLE, schedules[s][0]);
        char *log = log_summary(model);
        ck_assert_msg(!strcmp(log, ref_log), "schedule %zu: the log differs:\n%s\nexpected:\n%s", s,
                      log, ref_log);
        free(log);
        ck_assert_int_eq(count_temporaries(model), 0);
        testdir_remove(dir);
    }
    free(ref_log);
    testdir_remove(ref);
}
END_TEST

START_TEST(a_signal_saves_and_says_how_to_resume)
{
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        char dir[64], model[128], path[256];
        setup(dir, model, "rnnsearch-signal", 120);
        pid_t pid = start(dir, NULL,
                          "--emb 8 --hidden 8 --att 8 --maxout 4 --batch-size 8 --epochs 100000");
        struct timespec ts = {0, 300000000L};
        nanosleep(&ts, NULL);
        kill(pid, sigs[i]);
        ck_assert_int_eq(wait_for(pid), 128 + sigs[i]);
        char *text = read_text(dir, "stderr");
        ck_assert_msg(strstr(text, "last.ckpt") && strstr(text, "--resume"), "%s", text);
        static const char *const said[] = {"stopped: interrupted by SIGTERM",
                                           "stopped: interrupted by SIGINT (Ctrl-C)",
                                           "stopped: interrupted by SIGHUP"};
        ck_assert_msg(strstr(text, said[i]), "no '%s' in\n%s", said[i], text);
        free(text);
        rs_model m;
        rs_train_state st;
        rs_error err;
        snprintf(path, sizeof path, "%s/last.ckpt", model);
        ck_assert_msg(rs_checkpoint_load(path, &m, &st, &err) == 0, "%s", err.msg);
        ck_assert_int_gt(st.step, 0);
        rs_train_state_free(&st);
        rs_model_free(&m);
        ck_assert_int_eq(count_temporaries(model), 0);
        testdir_remove(dir);
    }
}
END_TEST

/* A second signal ends the program at once: no save, no resume hint.
 * SIGINT then SIGTERM (two different signals, so the second is not merged
 * into the first while pending), half a second into a first epoch far longer
 * than that, so that no save is due: the first signal alone would save
 * last.ckpt; with the second, nothing is written. */
START_TEST(a_second_signal_exits_at_once)
{
    char dir[64], model[128], path[256];
    setup(dir, model, "rnnsearch-signal2", 10000);
    pid_t pid = start(dir, NULL,
                      "--emb 64 --hidden 256 --att 64 --maxout 64 --batch-size 16 --epochs 100000");
    struct timespec ts = {0, 500000000L};
    nanosleep(&ts, NULL);
    snprintf(path, sizeof path, "%s/last.ckpt", model);
    ck_assert_msg(access(path, F_OK) != 0, "the first epoch ended within half a second");
    kill(pid, SIGINT);
    kill(pid, SIGTERM);
    /* Either may be handled second (they can land on two threads). */
    const int status = wait_for(pid);
    ck_assert_msg(status == 128 + SIGINT || status == 128 + SIGTERM, "exit status %d", status);
    char *text = read_text(dir, "stderr");
    ck_assert_msg(!strstr(text, "--resume"), "the second signal still saved: %s", text);
    free(text);
    ck_assert_msg(access(path, F_OK) != 0, "last.ckpt was written after the second signal");
    ck_assert_int_eq(count_temporaries(model), 0);
    testdir_remove(dir);
}
END_TEST

START_TEST(one_training_per_directory_and_no_silent_overwrite)
{
    char dir[64], model[128];
    setup(dir, model, "rnnsearch-lock", 40);
    rs_error err;
    int fd, fd2;
    ck_assert_msg(rs_train_lock(model, &fd, &err) == 0, "%s", err.msg);
    /* A second lock is refused with the holder's PID, in-process and by the program. */
    ck_assert_int_ne(rs_train_lock(model, &fd2, &err), 0);
    char pid[32];
    snprintf(pid, sizeof pid, "process %ld", (long)getpid());
    ck_assert_msg(strstr(err.msg, pid) != NULL, "%s", err.msg);
    const char *small = "--emb 8 --hidden 8 --att 8 --maxout 4 --epochs 1";
    ck_assert_int_ne(run(dir, NULL, small), 0);
    ck_assert(!file_exists(model, "last.ckpt"));
    char *refused = read_text(dir, "stderr");
    ck_assert_msg(strstr(refused, pid) != NULL, "%s", refused);
    free(refused);
    rs_train_unlock(fd);
    ck_assert_int_eq(run(dir, NULL, small), 0);
    ck_assert(file_exists(model, "last.ckpt"));
    /* A directory holding a model: refused, naming it, unless --resume or --overwrite. */
    ck_assert_int_eq(run(dir, NULL, small), 2);
    char *text = read_text(dir, "stderr");
    ck_assert_msg(strstr(text, model) && strstr(text, "--overwrite"), "%s", text);
    free(text);
    ck_assert_int_eq(run(dir, NULL, "--overwrite --emb 8 --hidden 8 --att 8 --maxout 4 --epochs 2"),
                     0);
    char *log = log_summary(model);
    ck_assert_int_eq(strncmp(log, "step", 4), 0);
    /* One row per epoch of the new run only. */
    int rows = 0;
    for (char *p = log; (p = strchr(p, '\n')); p++)
        rows++;
    ck_assert_int_eq(rows, 3);
    free(log);
    ck_assert_int_eq(run(dir, NULL, "--resume --overwrite"), 2);
    testdir_remove(dir);
}
END_TEST

/* Word dropout rates are recorded in the checkpoint and, like dropout, are
 * what is trained: --resume refuses another value, naming it, and takes the
 * same one. */
START_TEST(word_dropout_is_recorded_and_fixed_on_resume)
{
    char dir[64], model[128];
    setup(dir, model, "rnnsearch-wdrop", 40);
    const char *small = "--emb 8 --hidden 8 --att 8 --maxout 4 --epochs 1 --src-word-dropout 0.1 "
                        "--tgt-word-dropout 0.25";
    ck_assert_int_eq(run(dir, NULL, small), 0);
    char path[256];
    snprintf(path, sizeof path, "%s/last.ckpt", model);
    rs_model m;
    rs_error err;
    ck_assert_msg(rs_checkpoint_load(path, &m, NULL, &err) == 0, "%s", err.msg);
    ck_assert(m.train.src_word_dropout == 0.1f && m.train.tgt_word_dropout == 0.25f);
    rs_model_free(&m);
    static const char *const changed[] = {"--resume --epochs 2 --src-word-dropout 0.2",
                                          "--resume --epochs 2 --tgt-word-dropout 0"};
    static const char *const named[] = {"src_word_dropout=0.1", "tgt_word_dropout=0.25"};
    for (int i = 0; i < 2; i++) {
        ck_assert_int_ne(run(dir, NULL, changed[i]), 0);
        char *text = read_text(dir, "stderr");
        ck_assert_msg(strstr(text, named[i]) != NULL, "%s", text);
        free(text);
    }
    ck_assert_int_eq(run(dir, NULL, "--resume --epochs 2 --src-word-dropout 0.1"), 0);
    testdir_remove(dir);
}
END_TEST

/* The time limit stops after an evaluation without evaluating that step again. */
START_TEST(time_limit_evaluates_the_last_step_once)
{
    char dir[64], model[128];
    setup(dir, model, "rnnsearch-time", 120);
    ck_assert_int_eq(run(dir, NULL,
                         "--emb 8 --hidden 8 --att 8 --maxout 4 --batch-size 8 "
                         "--eval-every 1 --max-minutes 0.00001"),
                     0);
    char *log = log_summary(model);
    long previous = -1;
    int rows = 0;
    for (char *line = strchr(log, '\n') + 1; *line; line = strchr(line, '\n') + 1) {
        long step = atol(line);
        ck_assert_msg(step > previous, "step %ld logged twice or out of order:\n%s", step, log);
        previous = step;
        rows++;
    }
    ck_assert_int_ge(rows, 1);
    free(log);
    char *text = read_text(dir, "stderr");
    ck_assert_msg(strstr(text, "--max-minutes") && strstr(text, "best.ckpt"), "%s", text);
    free(text);
    testdir_remove(dir);
}
END_TEST

#define SMALL_MODEL "--emb 8 --hidden 8 --att 8 --maxout 4 --batch-size 8 "

/* Whether every line of text starts with an ISO 8601 UTC time and a space. */
static int every_line_timed(const char *text)
{
    int lines = 0;
    for (const char *p = text; *p; lines++) {
        static const char shape[] = "dddd-dd-ddTdd:dd:ddZ ";
        for (int k = 0; shape[k]; k++)
            if (shape[k] == 'd' ? !(p[k] >= '0' && p[k] <= '9') : p[k] != shape[k])
                return 0;
        const char *eol = strchr(p, '\n');
        if (!eol)
            return 0;
        p = eol + 1;
    }
    return lines > 0;
}

/* Timed lines on stderr and the same in DIR/train.log (or --log FILE); the
 * training loss every --log-every steps and at each save in train.loss.tsv,
 * which `plot` draws; the epoch of a step is the same in every line. */
START_TEST(a_run_logs_timed_lines_and_a_loss_curve)
{
    char dir[64], model[128], path[256];
    setup(dir, model, "rnnsearch-logs", 120);
    /* 120 pairs in batches of 8: 15 steps an epoch; step 20 is in epoch 2. */
    ck_assert_int_eq(run(dir, NULL, SMALL_MODEL "--max-steps 20 --log-every 3"), 0);
    char *shown = read_text(dir, "stderr"), *logged = read_text(model, RS_TEXT_LOG);
    ck_assert_msg(every_line_timed(shown), "%s", shown);
    ck_assert_str_eq(logged, shown);
    ck_assert_msg(strstr(shown, "Z epoch 2 | step 20 | dev loss"), "%s", shown);
    ck_assert_msg(strstr(shown, "at step 20 (epoch 2)\n"), "%s", shown);
    free(shown);
    free(logged);
    /* Rows at 3, 6, …, 18, at the save of epoch 1's end (15) and at the end (20). */
    char *table = read_text(model, RS_LOSS_TABLE);
    static const char header[] = "step\tepoch\ttrain_loss\tsteps\ttokens\tlr\tgnorm\n";
    ck_assert_msg(!strncmp(table, header, strlen(header)), "%s", table);
    static const int steps[] = {3, 6, 9, 12, 15, 18, 20}, epochs[] = {1, 1, 1, 1, 1, 2, 2};
    const char *row = strchr(table, '\n') + 1;
    for (int i = 0; i < 7; i++, row = strchr(row, '\n') + 1) {
        int step, epoch, count;
        double loss;
        ck_assert_msg(sscanf(row, "%d\t%d\t%lf\t%d", &step, &epoch, &loss, &count) == 4, "%s",
                      table);
        ck_assert_int_eq(step, steps[i]);
        ck_assert_int_eq(epoch, epochs[i]);
        ck_assert_int_eq(count, i ? steps[i] - steps[i - 1] : 3);
        ck_assert(loss > 0 && loss < 10);
    }
    ck_assert_str_eq(row, "");
    free(table);
    char cmd[512], out[256];
    snprintf(cmd, sizeof cmd, "plot %s 2>&1 >/dev/null", model);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "7 training-loss rows"), "%s", out);
    /* --log FILE instead of the model directory's train.log; resumed, appended. */
    snprintf(path, sizeof path, "--resume --max-steps 25 --log %s/elsewhere.log", dir);
    ck_assert_int_eq(run(dir, NULL, path), 0);
    char *again = read_text(dir, "stderr"), *elsewhere = read_text(dir, "elsewhere.log");
    ck_assert_str_eq(elsewhere, again);
    ck_assert_msg(strstr(again, "resuming") && strstr(again, "at step 25 (epoch 2)"), "%s", again);
    free(again);
    free(elsewhere);
    testdir_remove(dir);
}
END_TEST

/* ---- the data a resumed run is given (the fingerprint in the checkpoint) ---- */

#define SMALL "--emb 8 --hidden 8 --att 8 --maxout 4 --batch-size 8 "

/* What training writes in the model directory, byte for byte. */
enum { MODEL_FILES = 3 };
static const char *const model_file_names[MODEL_FILES] = {"last.ckpt", "best.ckpt",
                                                          "train.log.tsv"};

typedef struct {
    unsigned char *data[MODEL_FILES];
    size_t size[MODEL_FILES];
} model_files;

static void model_files_read(model_files *f, const char *model)
{
    for (int i = 0; i < MODEL_FILES; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", model, model_file_names[i]);
        f->data[i] = testfile_read(path, &f->size[i]);
    }
}

/* Fails unless the files are as `before` holds them; frees it. */
static void model_files_expect_unchanged(model_files *before, const char *model, const char *what)
{
    model_files now;
    model_files_read(&now, model);
    for (int i = 0; i < MODEL_FILES; i++) {
        ck_assert_msg(now.size[i] == before->size[i] &&
                          !memcmp(now.data[i], before->data[i], now.size[i]),
                      "%s: %s changed", what, model_file_names[i]);
        free(now.data[i]);
        free(before->data[i]);
    }
}

/* model/last.ckpt into *m and *st; its size into *size. */
static void load_last(const char *model, rs_model *m, rs_train_state *st, size_t *size)
{
    char path[512];
    snprintf(path, sizeof path, "%s/last.ckpt", model);
    rs_error err;
    free(testfile_read(path, size));
    ck_assert_msg(rs_checkpoint_load(path, m, st, &err) == 0, "%s", err.msg);
}

/* The training state of model/last.ckpt. */
static rs_train_state load_state(const char *model)
{
    rs_model m;
    rs_train_state st;
    size_t size;
    load_last(model, &m, &st, &size);
    rs_model_free(&m);
    return st;
}

/* Rewrites one line of dir/name with sed (a word for another the vocabulary
 * also has, so the ids change). */
static void edit(const char *dir, const char *name, const char *sed_command)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "sed -i '%s' %s/%s", sed_command, dir, name);
    ck_assert(system(cmd) == 0);
}

static void expect_in_stderr(const char *dir, const char *const *needles, int count)
{
    char *text = read_text(dir, "stderr");
    for (int i = 0; i < count; i++)
        ck_assert_msg(strstr(text, needles[i]) != NULL, "'%s' not in: %s", needles[i], text);
    free(text);
}

START_TEST(resume_refuses_other_training_data_unless_new_data)
{
    char dir[64], model[128], ckpt[256], train[256];
    setup(dir, model, "rnnsearch-datafp", 40);
    snprintf(ckpt, sizeof ckpt, "%s/last.ckpt", model);
    snprintf(train, sizeof train, "%s/train.tsv", dir);
    /* 40 pairs, 5 batches an epoch: stopped after batch 4 of the first. */
    ck_assert_int_eq(run(dir, NULL, SMALL "--max-steps 4"), 0);
    rs_train_state st = load_state(model);
    ck_assert(st.data.known);
    ck_assert_int_eq(st.data.train_pairs, 40);
    ck_assert_int_eq(st.data.dev_pairs, 16);
    ck_assert_int_eq(st.batches_done, 4);
    const uint32_t first_src_crc = st.data.train_src_crc;
    rs_train_state_free(&st);

    /* The same data, also gzip-compressed (what training reads is compared,
     * not the file's bytes): resumed. */
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "gzip -c %s > %s.gz && mv %s.gz %s", train, train, train, train);
    ck_assert(system(cmd) == 0);
    ck_assert_int_eq(run(dir, NULL, "--resume --max-steps 5"), 0);
    snprintf(cmd, sizeof cmd, "gzip -dc < %s > %s.txt && mv %s.txt %s", train, train, train, train);
    ck_assert(system(cmd) == 0);

    /* One training line changed: refused before anything is written. */
    edit(dir, "train.tsv", "3s/under a forest/under a field/");
    model_files before;
    model_files_read(&before, model);
    ck_assert_int_eq(run(dir, NULL, "--resume --max-steps 7"), 2);
    model_files_expect_unchanged(&before, model, "refused resume");
    const char *named[] = {ckpt, train, "training data", "the source side", "--new-data"};
    expect_in_stderr(dir, named, 5);
    ck_assert_int_eq(count_temporaries(model), 0);

    /* --new-data only with --resume. */
    ck_assert_int_eq(run(dir, NULL, "--new-data --max-steps 7"), 2);

    /* --new-data accepts it, and the checkpoint records the new data. */
    ck_assert_int_eq(run(dir, NULL, "--resume --new-data --max-steps 7"), 0);
    const char *accepted[] = {"--new-data: continuing"};
    expect_in_stderr(dir, accepted, 1);
    st = load_state(model);
    ck_assert_int_eq(st.step, 7);
    ck_assert(st.data.known && st.data.train_src_crc != first_src_crc);
    rs_train_state_free(&st);
    ck_assert_int_eq(run(dir, NULL, "--resume --max-steps 8"), 0);

    /* Other data with fewer batches an epoch than the position in the
     * current one (3 of 5; now 2): the epoch starts again on it. */
    snprintf(cmd, sizeof cmd, "head -n 16 %s > %s.16 && mv %s.16 %s", train, train, train, train);
    ck_assert(system(cmd) == 0);
    ck_assert_int_eq(run(dir, NULL, "--resume --new-data --max-steps 9"), 0);
    st = load_state(model);
    ck_assert_int_eq(st.step, 9);
    ck_assert_int_eq(st.data.train_pairs, 16);
    ck_assert_int_eq(st.batches_done, 1);
    rs_train_state_free(&st);
    testdir_remove(dir);
}
END_TEST

START_TEST(resume_refuses_other_dev_data_unless_new_data)
{
    char dir[64], model[128], dev[256];
    setup(dir, model, "rnnsearch-datafp-dev", 40);
    snprintf(dev, sizeof dev, "%s/dev.tsv", dir);
    ck_assert_int_eq(run(dir, NULL, SMALL "--max-steps 3"), 0);
    edit(dir, "dev.tsv", "2s/mirat$/vidat/");
    model_files before;
    model_files_read(&before, model);
    ck_assert_int_eq(run(dir, NULL, "--resume --max-steps 4"), 2);
    model_files_expect_unchanged(&before, model, "refused resume");
    const char *named[] = {"last.ckpt", dev, "dev data", "the target side", "--new-data"};
    expect_in_stderr(dir, named, 5);
    /* Accepted, the dev records start anew: the first evaluation on the new
     * dev set is the best so far. */
    ck_assert_int_eq(run(dir, NULL, "--resume --new-data --max-steps 4"), 0);
    const char *anew[] = {"best.ckpt is chosen anew", "| best"};
    expect_in_stderr(dir, anew, 2);
    testdir_remove(dir);
}
END_TEST

/* Makes model/last.ckpt what rnnsearch wrote before fingerprints: the same
 * without the data section (name length, "data", data length, 24 bytes). */
static void strip_fingerprint(const char *model)
{
    char path[256];
    snprintf(path, sizeof path, "%s/last.ckpt", model);
    rs_model m;
    rs_train_state st;
    rs_error err;
    size_t with_size, without_size;
    load_last(model, &m, &st, &with_size);
    ck_assert(st.data.known);
    st.data.known = 0;
    ck_assert_msg(rs_checkpoint_save(path, &m, &st, &err) == 0, "%s", err.msg);
    rs_train_state_free(&st);
    rs_model_free(&m);
    load_last(model, &m, &st, &without_size);
    ck_assert_uint_eq(with_size - without_size, 4 + 4 + 8 + 24);
    ck_assert(!st.data.known);
    rs_train_state_free(&st);
    rs_model_free(&m);
}

/* A checkpoint written before fingerprints resumes as before, with a note,
 * and records the data from then on. */
START_TEST(a_checkpoint_without_fingerprint_resumes_with_a_note)
{
    char dir[64], model[128];
    setup(dir, model, "rnnsearch-datafp-old", 40);
    ck_assert_int_eq(run(dir, NULL, SMALL "--max-steps 4"), 0);
    strip_fingerprint(model);
    rs_train_state st;

    /* Unchecked, but a position that cannot be in this data (batch 4 of an
     * epoch of 2) is still refused, before anything is written. */
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "cp %s/train.tsv %s/train.40 && head -n 16 %s/train.40 > %s/train.tsv", dir, dir, dir,
             dir);
    ck_assert(system(cmd) == 0);
    model_files before;
    model_files_read(&before, model);
    ck_assert_int_ne(run(dir, NULL, "--resume --max-steps 5"), 0);
    model_files_expect_unchanged(&before, model, "refused resume");
    const char *refused[] = {"last.ckpt", "trained on other data"};
    expect_in_stderr(dir, refused, 2);
    snprintf(cmd, sizeof cmd, "cp %s/train.40 %s/train.tsv", dir, dir);
    ck_assert(system(cmd) == 0);

    ck_assert_int_eq(run(dir, NULL, "--resume --max-steps 5"), 0);
    char *text = read_text(dir, "stderr");
    const char *note = strstr(text, "cannot be checked");
    ck_assert_msg(note != NULL, "%s", text);
    ck_assert_msg(strstr(text, "note:") && strchr(strstr(text, "note:"), '\n') > note,
                  "the note is not one line: %s", text);
    free(text);
    st = load_state(model);
    ck_assert(st.data.known && st.data.train_pairs == 40 && st.step == 5);
    rs_train_state_free(&st);

    /* With --new-data (the user's word that the data is other), that
     * position starts again from an epoch's beginning. */
    ck_assert_int_eq(run(dir, NULL, "--resume --max-steps 9"), 0);
    strip_fingerprint(model);
    snprintf(cmd, sizeof cmd, "head -n 16 %s/train.40 > %s/train.tsv", dir, dir);
    ck_assert(system(cmd) == 0);
    ck_assert_int_eq(run(dir, NULL, "--resume --new-data --max-steps 10"), 0);
    const char *noted[] = {"cannot be checked"};
    expect_in_stderr(dir, noted, 1);
    st = load_state(model);
    ck_assert(st.data.known && st.data.train_pairs == 16 && st.step == 10 && st.batches_done == 1);
    rs_train_state_free(&st);
    testdir_remove(dir);
}
END_TEST

/* A weights-only checkpoint (average, import) put where last.ckpt was is not
 * a run to continue: --resume refuses it before writing anything, so the
 * run's log and its better best.ckpt survive. average refuses to write over
 * one of its own inputs in the first place. */
START_TEST(resume_refuses_a_weights_only_checkpoint)
{
    char dir[64], model[128], cmd[1024], out[4096];
    setup(dir, model, "rnnsearch-weights", 40);
    ck_assert_int_eq(run(dir, NULL, SMALL "--max-steps 10 --eval-every 5"), 0);
    model_files before;
    model_files_read(&before, model);
    snprintf(cmd, sizeof cmd, "%s average -o %s/last.ckpt %s/last.ckpt %s/best.ckpt 2>&1",
             testprog_path(), model, model, model);
    ck_assert_int_eq(testprog_shell(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "is the same file as"), "%s", out);
    model_files_expect_unchanged(&before, model, "average over its input");

    snprintf(cmd, sizeof cmd,
             "%s average -o %s/avg.ckpt %s/last.ckpt %s/best.ckpt 2>&1 && "
             "cp %s/avg.ckpt %s/last.ckpt",
             testprog_path(), dir, model, model, dir, model);
    ck_assert_msg(testprog_shell(cmd, out, sizeof out) == 0, "%s", out);
    model_files_read(&before, model);
    ck_assert_int_eq(run(dir, NULL, "--resume --max-steps 20"), 2);
    model_files_expect_unchanged(&before, model, "resume from weights only");
    const char *said[] = {"last.ckpt holds weights only", "nothing was changed"};
    expect_in_stderr(dir, said, 2);
    testdir_remove(dir);
}
END_TEST

Suite *resume_suite(void)
{
    Suite *s = suite_create("resume");
    TCase *tc = tcase_create("interrupted training");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, killed_anywhere_and_resumed_equals_uninterrupted);
    tcase_add_test(tc, a_signal_saves_and_says_how_to_resume);
    tcase_add_test(tc, a_second_signal_exits_at_once);
    tcase_add_test(tc, one_training_per_directory_and_no_silent_overwrite);
    tcase_add_test(tc, time_limit_evaluates_the_last_step_once);
    tcase_add_test(tc, word_dropout_is_recorded_and_fixed_on_resume);
    tcase_add_test(tc, resume_refuses_other_training_data_unless_new_data);
    tcase_add_test(tc, resume_refuses_other_dev_data_unless_new_data);
    tcase_add_test(tc, a_checkpoint_without_fingerprint_resumes_with_a_note);
    tcase_add_test(tc, resume_refuses_a_weights_only_checkpoint);
    tcase_add_test(tc, a_run_logs_timed_lines_and_a_loss_curve);
    suite_add_tcase(s, tc);
    return s;
}
