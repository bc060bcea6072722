/* SGD, Adadelta and Adagrad (src/nn/optimizer.c) against steps worked by
 * hand from their equations (docs/model.md, "Optimisers"), OpenNMT-py's
 * exponential learning-rate decay at chosen steps, each optimizer's default
 * rate, and training with each through the program: it learns, and a run
 * stopped and resumed ends with the uninterrupted run's checkpoint, bit for
 * bit (the state buffers are saved and read back). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/checkpoint.h"
#include "model/config.h"
#include "nn/optimizer.h"
#include "testdir.h"
#include "testprog.h"
#include "train/rundir.h"
#include "train/train.h"

/* θ = 1, then g = 0.5 and g = −0.25, with and without a clip factor. */
START_TEST(sgd_steps_by_hand)
{
    float p[2] = {1.0f, -2.0f};
    const float g[2] = {0.5f, -0.25f};
    rs_sgd_update(p, g, 1.0f, 2, 0.1f);
    /* 1 − 0.1·0.5 = 0.95;  −2 + 0.1·0.25 = −1.975 */
    ck_assert_float_eq_tol(p[0], 0.95f, 1e-7f);
    ck_assert_float_eq_tol(p[1], -1.975f, 1e-7f);
    /* grad_scale 0.5 halves the step: 0.95 − 1·0.5·0.5 = 0.7 */
    rs_sgd_update(p, g, 0.5f, 2, 1.0f);
    ck_assert_float_eq_tol(p[0], 0.7f, 1e-7f);
    ck_assert_float_eq_tol(p[1], -1.85f, 1e-7f);
}
END_TEST

START_TEST(adadelta_steps_by_hand)
{
    /* ρ 0.95, ε 1e-6, lr 1 (Bahdanau et al.), θ = 1.
     * Step 1, g = 0.5:   E[g²] = 0.05·0.25 = 0.0125
     *   Δθ = √(0 + 1e-6) / √(0.0125 + 1e-6) · 0.5 = 0.001 / 0.11180787 · 0.5 = 0.0044719571
     *   E[Δθ²] = 0.05 · 0.0044719571² = 9.9992001e-7;  θ = 0.9955280429
     * Step 2, g = −0.25: E[g²] = 0.95·0.0125 + 0.05·0.0625 = 0.015
     *   Δθ = √(9.9992001e-7 + 1e-6) / √(0.015 + 1e-6) · −0.25 = −0.0028865974
     *   E[Δθ²] = 0.95·9.9992001e-7 + 0.05·0.0028865974² = 1.3665462e-6;  θ = 0.9984146403 */
    float p[1] = {1.0f}, eg2[1] = {0}, edx2[1] = {0};
    const rs_adadelta_settings a = {1.0f, 0.95f, 1e-6f};
    rs_adadelta_update(p, (const float[]){0.5f}, 1.0f, eg2, edx2, 1, &a);
    ck_assert_float_eq_tol(eg2[0], 0.0125f, 1e-8f);
    ck_assert_float_eq_tol(edx2[0], 9.9992001e-7f, 1e-12f);
    ck_assert_float_eq_tol(p[0], 0.9955280429f, 2e-7f);
    rs_adadelta_update(p, (const float[]){-0.25f}, 1.0f, eg2, edx2, 1, &a);
    ck_assert_float_eq_tol(eg2[0], 0.015f, 1e-8f);
    ck_assert_float_eq_tol(edx2[0], 1.3665462e-6f, 1e-12f);
    ck_assert_float_eq_tol(p[0], 0.9984146403f, 2e-7f);
    /* The clip factor scales g before anything: g = 2 · 0.25 is g = 0.5. */
    float q[1] = {1.0f}, e1[1] = {0}, e2[1] = {0};
    rs_adadelta_update(q, (const float[]){0.25f}, 2.0f, e1, e2, 1, &a);
    ck_assert_float_eq_tol(q[0], 0.9955280429f, 2e-7f);
}
END_TEST

START_TEST(adagrad_steps_by_hand)
{
    /* lr 0.1, θ = 1. Step 1, g = 0.5: s = 0.25, θ = 1 − 0.1·0.5/0.5 = 0.9
     * (a first step is lr against the gradient's sign). Step 2, g = −0.25:
     * s = 0.3125, θ = 0.9 + 0.1·0.25/√0.3125 = 0.9 + 0.0447213595 = 0.9447213595. */
    float p[2] = {1.0f, 3.0f}, s[2] = {0};
    rs_adagrad_update(p, (const float[]){0.5f, 0.0f}, 1.0f, s, 2, 0.1f);
    ck_assert_float_eq_tol(s[0], 0.25f, 1e-8f);
    ck_assert_float_eq_tol(p[0], 0.9f, 1e-7f);
    /* g = 0 never seen: ε keeps 0/0 out, the parameter stays. */
    ck_assert(p[1] == 3.0f);
    rs_adagrad_update(p, (const float[]){-0.25f, 0.0f}, 1.0f, s, 2, 0.1f);
    ck_assert_float_eq_tol(s[0], 0.3125f, 1e-8f);
    ck_assert_float_eq_tol(p[0], 0.9447213595f, 2e-7f);
    ck_assert(isfinite(p[1]) && p[1] == 3.0f);
}
END_TEST

/* OpenNMT-py's rate · rate^⌊max(step − start + every, 0) / every⌋: with its
 * defaults (0.5, start 50000, every 10000) the first halving is at 50000. */
START_TEST(exponential_decay_at_chosen_steps)
{
    rs_config cfg;
    rs_config_defaults(&cfg);
    cfg.train.lr = 1.0f;
    cfg.train.lr_schedule = RS_LR_EXPONENTIAL;
    const struct {
        int64_t step;
        float lr;
    } at[] = {{1, 1.0f},     {39999, 1.0f},  {49999, 1.0f},   {50000, 0.5f},
              {59999, 0.5f}, {60000, 0.25f}, {80000, 0.0625f}};
    for (size_t i = 0; i < sizeof at / sizeof *at; i++)
        ck_assert_msg(rs_train_learning_rate(&cfg.train, 8, 1.0f, at[i].step) == at[i].lr,
                      "step %lld: %g, expected %g", (long long)at[i].step,
                      (double)rs_train_learning_rate(&cfg.train, 8, 1.0f, at[i].step),
                      (double)at[i].lr);
    /* A start before the first period: step 3 of start 0, every 2 is ⌊(3 + 2)/2⌋ = 2 decays. */
    cfg.train.decay_start = 0;
    cfg.train.decay_steps = 2;
    cfg.train.decay_rate = 0.1f;
    ck_assert_float_eq_tol(rs_train_learning_rate(&cfg.train, 8, 1.0f, 3), 0.01f, 1e-8f);
    /* The constant schedule ignores the decay keys. */
    cfg.train.lr_schedule = RS_LR_CONSTANT;
    ck_assert(rs_train_learning_rate(&cfg.train, 8, 1.0f, 3) == 1.0f);
}
END_TEST

START_TEST(each_optimizer_has_its_own_default_rate)
{
    rs_config cfg;
    rs_config_defaults(&cfg);
    ck_assert_int_eq(cfg.train.optimizer, RS_OPT_ADAM);
    ck_assert(rs_config_default_lr(RS_OPT_ADAM) == cfg.train.lr);
    ck_assert(rs_config_default_lr(RS_OPT_SGD) == 1.0f);
    ck_assert(rs_config_default_lr(RS_OPT_ADADELTA) == 1.0f);
    ck_assert(rs_config_default_lr(RS_OPT_ADAGRAD) == 0.1f);
    rs_error err;
    ck_assert_int_eq(rs_config_set(&cfg, "optimizer", "adadelta", &err), 0);
    ck_assert_int_eq(cfg.train.optimizer, RS_OPT_ADADELTA);
    ck_assert_int_ne(rs_config_set(&cfg, "optimizer", "rmsprop", &err), 0);
    /* A checkpoint written before optimizers were named trained with Adam. */
    rs_config old;
    rs_config_defaults(&old);
    ck_assert_int_eq(rs_config_parse(&old, "lr=0.002\nbeta1=0.9\n", &err), 0);
    ck_assert_int_eq(old.train.optimizer, RS_OPT_ADAM);
}
END_TEST

/* dir/name's bytes; *size set. */
static unsigned char *read_bytes(const char *dir, const char *name, size_t *size)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    unsigned char *data = testfile_read(path, size);
    ck_assert_ptr_nonnull(data);
    return data;
}

#define TINY                                                                                       \
    "--emb 16 --hidden 16 --att 16 --maxout 8 --batch-size 8 --epochs 50 --save-every 4 "          \
    "--seed 5 --quiet --threads 1"

/* One optimizer through the program (extra: more options): 16 steps uninterrupted, and 8 then
 * --resume to 16, give the same last.ckpt; the loss of the last updates is
 * below the first's; the checkpoint names the optimizer and its state is
 * not all zero (SGD has none). */
static void train_and_resume(const char *optimizer, const char *extra)
{
    char dir[64], cmd[2048], out[4096];
    testdir_make(dir, "rnnsearch-optimizers");
    snprintf(cmd, sizeof cmd, "head -n 64 corpora/reorder/train.tsv > %s/train.tsv", dir);
    ck_assert(system(cmd) == 0);
    snprintf(cmd, sizeof cmd,
             "train --train %s/train.tsv --out %s/a --optimizer %s --max-steps 16 %s " TINY " 2>&1",
             dir, dir, optimizer, extra);
    ck_assert_msg(testprog_run(cmd, out, sizeof out) == 0, "%s: %s", optimizer, out);
    snprintf(cmd, sizeof cmd,
             "train --train %s/train.tsv --out %s/b --optimizer %s --max-steps 8 %s " TINY " 2>&1",
             dir, dir, optimizer, extra);
    ck_assert_msg(testprog_run(cmd, out, sizeof out) == 0, "%s: %s", optimizer, out);
    snprintf(cmd, sizeof cmd, "train --train %s/train.tsv --out %s/b --resume --max-steps 16 2>&1",
             dir, dir);
    ck_assert_msg(testprog_run(cmd, out, sizeof out) == 0, "%s resumed: %s", optimizer, out);
    /* Another optimizer is another training: --resume refuses it. */
    snprintf(cmd, sizeof cmd,
             "train --train %s/train.tsv --out %s/b --resume --max-steps 20 --optimizer %s 2>&1",
             dir, dir, strcmp(optimizer, "sgd") ? "sgd" : "adam");
    ck_assert_msg(testprog_run(cmd, out, sizeof out) != 0 && strstr(out, "optimizer"),
                  "%s: resumed with another optimizer: %s", optimizer, out);
    char a[128], b[128];
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    size_t na, nb;
    unsigned char *da = read_bytes(a, "last.ckpt", &na), *db = read_bytes(b, "last.ckpt", &nb);
    ck_assert_msg(na == nb && !memcmp(da, db, na), "%s: resumed last.ckpt differs", optimizer);
    free(da);
    free(db);

    rs_model m;
    rs_train_state st;
    rs_error err;
    char path[256];
    snprintf(path, sizeof path, "%s/last.ckpt", a);
    ck_assert_msg(rs_checkpoint_load(path, &m, &st, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(st.step, 16);
    ck_assert_str_eq(rs_optimizer_names[m.train.optimizer], optimizer);
    double state = 0.0;
    float least_v = INFINITY;
    for (size_t i = 0; i < m.layout.total; i++) {
        state += fabs((double)st.adam_m[i]) + fabs((double)st.adam_v[i]);
        least_v = fminf(least_v, st.adam_v[i]);
    }
    /* Adagrad's sum started at --adagrad-init and only grew. */
    if (!strcmp(optimizer, "adagrad"))
        ck_assert_msg(least_v >= m.train.adagrad_init && m.train.adagrad_init == 0.1f,
                      "adagrad: a sum %g below adagrad_init %g", (double)least_v,
                      (double)m.train.adagrad_init);
    if (!strcmp(optimizer, "sgd"))
        ck_assert(state == 0.0);
    else
        ck_assert_msg(state > 0.0, "%s: no optimizer state saved", optimizer);
    rs_train_state_free(&st);
    rs_model_free(&m);

    /* train.loss.tsv: the first logged loss above the last. */
    size_t size;
    char *loss = (char *)read_bytes(a, RS_LOSS_TABLE, &size);
    double first = -1, last = -1;
    int rows = 0;
    for (char *line = strtok(loss, "\n"); line; line = strtok(NULL, "\n")) {
        long step;
        int epoch;
        double value;
        if (sscanf(line, "%ld\t%d\t%lf", &step, &epoch, &value) != 3)
            continue;
        if (rows++ == 0)
            first = value;
        last = value;
    }
    free(loss);
    ck_assert_msg(rows >= 2 && last < first, "%s: loss %g then %g (%d rows)", optimizer, first,
                  last, rows);
    testdir_remove(dir);
}

START_TEST(sgd_trains_and_resumes_exactly)
{
    train_and_resume("sgd", "");
}
END_TEST

START_TEST(adadelta_trains_and_resumes_exactly)
{
    train_and_resume("adadelta", "");
}
END_TEST

START_TEST(adagrad_trains_and_resumes_exactly)
{
    train_and_resume("adagrad", "--adagrad-init 0.1");
}
END_TEST

Suite *optimizers_suite(void)
{
    Suite *s = suite_create("optimizers");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, sgd_steps_by_hand);
    tcase_add_test(tc, adadelta_steps_by_hand);
    tcase_add_test(tc, adagrad_steps_by_hand);
    tcase_add_test(tc, exponential_decay_at_chosen_steps);
    tcase_add_test(tc, each_optimizer_has_its_own_default_rate);
    suite_add_tcase(s, tc);
    TCase *run = tcase_create("training");
    tcase_set_timeout(run, 120);
    tcase_add_test(run, sgd_trains_and_resumes_exactly);
    tcase_add_test(run, adadelta_trains_and_resumes_exactly);
    tcase_add_test(run, adagrad_trains_and_resumes_exactly);
    suite_add_tcase(s, run);
    return s;
}
