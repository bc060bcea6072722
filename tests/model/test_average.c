/* rnnsearch average: the element-wise mean of checkpoints, and the refusal of
 * checkpoints that do not match, naming the file. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/average.h"
#include "model/checkpoint.h"
#include "testdir.h"
#include "tinymodel.h"
#include "testprog.h"

static char dir[128];

static void save(rs_model *m, const char *name, char *path, size_t size)
{
    rs_error err = {{0}};
    snprintf(path, size, "%s/%s", dir, name);
    ck_assert_msg(!rs_checkpoint_save(path, m, NULL, &err), "%s", err.msg);
}

START_TEST(average_is_the_mean)
{
    char a[256], b[256], c[256], out_path[256], args[1200], out[4096];
    rs_model ma, mb, mc, avg;
    rs_error err = {{0}};
    testdir_make(dir, "rs_average");
    tiny_model_with_words(&ma, 4, "Haus", 1);
    tiny_model_with_words(&mb, 4, "Haus", 2);
    tiny_model_with_words(&mc, 4, "Haus", 3);
    mb.train.lr = 0.5f; /* a training setting: may differ */
    save(&ma, "a.ckpt", a, sizeof a);
    save(&mb, "b.ckpt", b, sizeof b);
    save(&mc, "c.ckpt", c, sizeof c);
    snprintf(out_path, sizeof out_path, "%s/avg.ckpt", dir);

    snprintf(args, sizeof args, "average -o %s %s %s %s", out_path, a, b, c);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    ck_assert_msg(!rs_checkpoint_load(out_path, &avg, NULL, &err), "%s", err.msg);
    ck_assert_uint_eq(avg.layout.total, ma.layout.total);
    for (size_t k = 0; k < ma.layout.total; k++) {
        float want = (float)(((double)ma.params[k] + mb.params[k] + mc.params[k]) / 3.0);
        ck_assert_msg(avg.params[k] == want, "parameter %zu: %g, not %g", k, avg.params[k], want);
    }
    ck_assert_str_eq(avg.src_vocab.tokens[RS_RESERVED + 1], "Haus");
    ck_assert(avg.train.lr == ma.train.lr);
    rs_model_free(&avg);

    /* One checkpoint averaged is itself. */
    snprintf(args, sizeof args, "average -o %s %s", out_path, b);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    ck_assert_msg(!rs_checkpoint_load(out_path, &avg, NULL, &err), "%s", err.msg);
    ck_assert(!memcmp(avg.params, mb.params, mb.layout.total * sizeof(float)));
    rs_model_free(&avg);
    rs_model_free(&ma);
    rs_model_free(&mb);
    rs_model_free(&mc);
    testdir_remove(dir);
}
END_TEST

START_TEST(mismatch_is_refused_naming_the_file)
{
    char a[256], b[256], c[256], out_path[256], args[1200], out[4096];
    rs_model ma, mb, mc;
    testdir_make(dir, "rs_average");
    tiny_model_with_words(&ma, 4, "Haus", 1);
    tiny_model_with_words(&mb, 6, "Haus", 2);  /* another size */
    tiny_model_with_words(&mc, 4, "Katze", 3); /* another vocabulary */
    save(&ma, "a.ckpt", a, sizeof a);
    save(&mb, "wide.ckpt", b, sizeof b);
    save(&mc, "cat.ckpt", c, sizeof c);
    snprintf(out_path, sizeof out_path, "%s/avg.ckpt", dir);

    snprintf(args, sizeof args, "average -o %s %s %s", out_path, a, b);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "wide.ckpt does not match") && strstr(out, "hidden is 6, not 4"),
                  "%s", out);
    snprintf(args, sizeof args, "average -o %s %s %s", out_path, a, c);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "cat.ckpt does not match") &&
                      strstr(out, "source token 5 is 'Katze', not 'Haus'"),
                  "%s", out);
    FILE *f = fopen(out_path, "rb");
    ck_assert_msg(f == NULL, "an output was written");

    snprintf(args, sizeof args, "average %s %s", a, a);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "no output given"), "%s", out);

    /* The library function says what differs. */
    rs_error err = {{0}};
    ck_assert_int_eq(rs_models_match(&ma, &mb, &err), -1);
    ck_assert_str_eq(err.msg, "hidden is 6, not 4");
    ck_assert_int_eq(rs_models_match(&ma, &ma, &err), 0);
    rs_model tied = ma; /* a view of ma's buffers with the setting changed: not freed */
    tied.cfg.tie_embeddings = 1;
    ck_assert_int_eq(rs_models_match(&ma, &tied, &err), -1);
    ck_assert_str_eq(err.msg, "tie_embeddings is 1, not 0");
    rs_model_free(&ma);
    rs_model_free(&mb);
    rs_model_free(&mc);
    testdir_remove(dir);
}
END_TEST

START_TEST(checkpoints_averaged_by_their_names)
{
    char a[256], b[256], c[256];
    rs_model ma, mb, mc;
    rs_error err = {{0}};
    testdir_make(dir, "rs_average");
    tiny_model_with_words(&ma, 4, "Haus", 1);
    tiny_model_with_words(&mb, 4, "Haus", 2);
    tiny_model_with_words(&mc, 5, "Haus", 3); /* another hidden size */
    save(&ma, "a.ckpt", a, sizeof a);
    save(&mb, "b.ckpt", b, sizeof b);
    save(&mc, "c.ckpt", c, sizeof c);
    rs_average avg = {0};
    const char *both[] = {a, b};
    ck_assert_msg(!rs_average_checkpoints(&avg, both, 2, &err), "%s", err.msg);
    ck_assert_int_eq(avg.count, 2);
    const float want = 0.5f * (ma.params[7] + mb.params[7]);
    ck_assert_msg(fabsf(avg.mean.params[7] - want) < 1e-6f, "%g vs %g", avg.mean.params[7], want);
    rs_average_free(&avg);
    const char *mismatched[] = {a, c};
    ck_assert_int_ne(rs_average_checkpoints(&avg, mismatched, 2, &err), 0);
    char want_msg[600];
    snprintf(want_msg, sizeof want_msg, "%s does not match %s: ", c, a);
    ck_assert_msg(!strncmp(err.msg, want_msg, strlen(want_msg)), "%s", err.msg);
    rs_average_free(&avg);
    const char *missing[] = {a, "/nonexistent/x.ckpt"};
    ck_assert_int_ne(rs_average_checkpoints(&avg, missing, 2, &err), 0);
    ck_assert_msg(strstr(err.msg, "/nonexistent/x.ckpt"), "%s", err.msg);
    rs_average_free(&avg);
    rs_model_free(&ma);
    rs_model_free(&mb);
    rs_model_free(&mc);
    testdir_remove(dir);
}
END_TEST

Suite *average_suite(void)
{
    Suite *s = suite_create("average");
    TCase *tc = tcase_create("average");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, average_is_the_mean);
    tcase_add_test(tc, mismatch_is_refused_naming_the_file);
    tcase_add_test(tc, checkpoints_averaged_by_their_names);
    suite_add_tcase(s, tc);
    return s;
}
