/* A run resumed in the middle of an epoch logs what the uninterrupted run
 * logs: train.log.tsv's every column but the two timings (tokens_per_s,
 * wall_s), the train loss included, which is the epoch's mean since its
 * start, not since the resume (the epoch's sums are in the checkpoint's
 * "epoch" section, docs/checkpoint-format.md). A checkpoint written before
 * that section loads as before. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "common/byteorder.h"
#include "common/crc32.h"
#include "common/fault.h"
#include "model/checkpoint.h"
#include "testdir.h"
#include "testprog.h"

/* 120 pairs in batches of 8: 15 updates an epoch; saved every 4 (mid-epoch). */
#define OPTIONS                                                                                    \
    "--emb 16 --hidden 16 --att 16 --maxout 8 --batch-size 8 --epochs 2 --eval-every 4 "           \
    "--save-every 4 --dropout 0.1 --dev-bleu --seed 5"

static int train(const char *dir, const char *fault, const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "%s%s %s train --train %s/train.tsv --dev %s/dev.tsv --out %s/model --quiet %s "
             "2> %s/stderr",
             fault ? "RNNSEARCH_FAULT=" : "env -u RNNSEARCH_FAULT", fault ? fault : "",
             testprog_path(), dir, dir, dir, args, dir);
    const int status = system(cmd);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void make_run_dir(char dir[64])
{
    testdir_make(dir, "rnnsearch-resume-log");
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "head -n 120 corpora/reorder/train.tsv > %s/train.tsv && "
             "head -n 16 corpora/reorder/dev.tsv > %s/dev.tsv",
             dir, dir);
    ck_assert(system(cmd) == 0);
}

/* The log without its timing columns (6, tokens_per_s, and 8, wall_s). */
static char *log_without_timings(const char *dir)
{
    char path[256];
    snprintf(path, sizeof path, "%s/model/train.log.tsv", dir);
    size_t size;
    char *data = (char *)testfile_read(path, &size), *out = calloc(size + 1, 1);
    ck_assert_ptr_nonnull(out);
    size_t used = 0;
    int column = 1;
    for (const char *p = data; *p; p++) {
        const int dropped = column == 6 || column == 8;
        if (!dropped)
            out[used++] = *p;
        column = *p == '\n' ? 1 : column + (*p == '\t');
    }
    free(data);
    return out;
}

/* Killed after its first mid-epoch save (step 4) and resumed: the log's
 * rows of steps 8, 12, 16 … held the mean loss since the resume (at step 8,
 * over steps 5-8 only). Killed again in the second epoch (step 20), both
 * epochs are resumed in their middle. */
START_TEST(a_run_resumed_mid_epoch_logs_the_uninterrupted_run_s_columns)
{
    char ref[64], dir[64];
    make_run_dir(ref);
    make_run_dir(dir);
    ck_assert_int_eq(train(ref, NULL, OPTIONS), 0);
    ck_assert_int_eq(train(dir, "last@1", OPTIONS), RS_FAULT_EXIT);
    ck_assert_int_eq(train(dir, "last@4", "--resume"), RS_FAULT_EXIT);
    ck_assert_int_eq(train(dir, NULL, "--resume"), 0);
    char *expected = log_without_timings(ref), *got = log_without_timings(dir);
    ck_assert_msg(!strcmp(expected, got), "resumed:\n%s\nuninterrupted:\n%s", got, expected);
    /* Rows of both epochs, with a train loss each. */
    ck_assert_msg(strstr(expected, "\n8\t1\t") && strstr(expected, "\n20\t2\t"), "%s", expected);
    ck_assert_msg(!strstr(expected, "\t1\t\t") && !strstr(expected, "\t2\t\t"),
                  "a row without its train loss: %s", expected);
    free(expected);
    free(got);
    testdir_remove(dir);
    testdir_remove(ref);
}
END_TEST

/* path's checkpoint without its last section (as rnnsearch wrote it before
 * that section): the header's count and size, and the CRC-32, made again. */
static void drop_last_section(const char *path, const char *name, size_t bytes)
{
    size_t size;
    unsigned char *data = testfile_read(path, &size);
    const size_t cut = 4 + strlen(name) + 8 + bytes, end = size - 4 - cut;
    ck_assert(!memcmp(data + end + 4, name, strlen(name)));
    rs_put_le32(data + 12, rs_get_le32(data + 12) - 1);
    rs_put_le64(data + 16, rs_get_le64(data + 16) - cut);
    rs_put_le32(data + end, rs_crc32_update(0, data, end));
    testfile_write(path, data, end + 4);
    free(data);
}

/* The state's sums go through a checkpoint bit for bit; one without them
 * (older) still loads: at an epoch's start as nothing summed, in mid-epoch
 * as not known (NaN), and such an epoch's train loss is then left out of
 * the log rather than taken over the updates since the resume. */
START_TEST(the_epoch_s_sums_are_saved_and_an_older_checkpoint_loads)
{
    char dir[64], path[256];
    make_run_dir(dir);
    ck_assert_int_eq(train(dir, NULL, OPTIONS " --max-steps 6"), 0);
    snprintf(path, sizeof path, "%s/model/last.ckpt", dir);
    rs_model m;
    rs_train_state st;
    rs_error err;
    ck_assert_msg(!rs_checkpoint_load(path, &m, &st, &err), "%s", err.msg);
    ck_assert_int_eq(st.batches_done, 6);
    ck_assert(st.epoch_tokens > 0 && isfinite(st.epoch_loss) && st.epoch_loss > 0);
    const double sum = st.epoch_loss;
    st.epoch_loss = nextafter(sum, 0);
    ck_assert_msg(!rs_checkpoint_save(path, &m, &st, &err), "%s", err.msg);
    rs_train_state_free(&st);
    rs_model_free(&m);
    ck_assert_msg(!rs_checkpoint_load(path, &m, &st, &err), "%s", err.msg);
    ck_assert(st.epoch_loss == nextafter(sum, 0));
    rs_train_state_free(&st);
    rs_model_free(&m);

    drop_last_section(path, "epoch", 16);
    ck_assert_msg(!rs_checkpoint_load(path, &m, &st, &err), "%s", err.msg);
    ck_assert(isnan(st.epoch_loss) && st.epoch_tokens == 0 && st.batches_done == 6);
    rs_train_state_free(&st);
    rs_model_free(&m);
    ck_assert_int_eq(train(dir, NULL, "--resume --max-steps 19"), 0);
    char log[256];
    snprintf(log, sizeof log, "%s/model/train.log.tsv", dir);
    size_t size;
    char *text = (char *)testfile_read(log, &size);
    /* Step 8 and 12 (epoch 1, not known) without train loss; 16 (epoch 2) with. */
    ck_assert_msg(strstr(text, "\n8\t1\t\t") && strstr(text, "\n12\t1\t\t") &&
                      strstr(text, "\n16\t2\t") && !strstr(text, "\n16\t2\t\t"),
                  "%s", text);
    free(text);
    testdir_remove(dir);
}
END_TEST

Suite *resume_log_suite(void)
{
    Suite *s = suite_create("resume_log");
    TCase *tc = tcase_create("resume_log");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, a_run_resumed_mid_epoch_logs_the_uninterrupted_run_s_columns);
    tcase_add_test(tc, the_epoch_s_sums_are_saved_and_an_older_checkpoint_loads);
    suite_add_tcase(s, tc);
    return s;
}
