/* rnnsearch info: the stored configuration, tensor sizes, vocabularies and
 * training counters of a checkpoint. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/checkpoint.h"
#include "testdir.h"
#include "tinymodel.h"
#include "testprog.h"

START_TEST(info_shows_what_the_checkpoint_holds)
{
    char dir[128], path[256], args[512], out[16384];
    rs_error err = {{0}};
    rs_model m;
    rs_train_state s;
    testdir_make(dir, "rs_info");
    tiny_model_with_words(&m, 4, "Haus", 1);
    m.train.lr = 0.0125f;
    ck_assert_msg(!rs_train_state_alloc(&s, &m, &err), "%s", err.msg);
    s.step = 1234;
    s.epoch = 5;
    s.best_dev_loss = 1.5f;
    s.best_dev_bleu = 17.25f;
    snprintf(path, sizeof path, "%s/models/x/last.ckpt", dir);
    ck_assert_msg(!rs_checkpoint_save(path, &m, &s, &err), "%s", err.msg);

    snprintf(args, sizeof args, "info -m %s/models/x", dir);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    static const char *const lines[] = {
        "\nhidden = 4\n",
        "\nemb = 3\n",
        "\nattention = additive\n",
        "\nlr = 0.0125\n",
        "# vocabularies: source 6 tokens, target 5 tokens\n",
        "# text: tokenizer word, lowercase no\n",
        "# training: step 1234, epoch 5, best dev loss 1.5000 (ppl 4.48), best dev BLEU 17.25",
    };
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
        ck_assert_msg(strstr(out, lines[i]) != NULL, "no '%s' in:\n%s", lines[i], out);
    /* dec.W is 3n x (m + 2n). */
    int rows = 0, cols = 0;
    size_t count = 0, total = 0;
    const char *line = strstr(out, "#   dec.W ");
    ck_assert_msg(line && sscanf(line, "#   dec.W %d x %d %zu", &rows, &cols, &count) == 3, "%s",
                  out);
    ck_assert_int_eq(rows, 12);
    ck_assert_int_eq(cols, 11);
    ck_assert_uint_eq(count, 132);
    line = strstr(out, "#   total ");
    ck_assert_msg(line && sscanf(line, "#   total %zu", &total) == 1, "%s", out);
    ck_assert_uint_eq(total, m.layout.total);
    ck_assert_msg(strstr(out, "att.K") == NULL, "an absent tensor is listed:\n%s", out);

    /* Weights only: no counters to show. */
    snprintf(path, sizeof path, "%s/w.ckpt", dir);
    ck_assert_msg(!rs_checkpoint_save(path, &m, NULL, &err), "%s", err.msg);
    snprintf(args, sizeof args, "info -m %s", path);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    ck_assert_msg(strstr(out, "# training: no training state (weights only)\n"), "%s", out);

    /* Not a checkpoint: refused, naming the file. */
    snprintf(path, sizeof path, "%s/bad.ckpt", dir);
    testfile_write(path, (const unsigned char *)"not a checkpoint", 16);
    snprintf(args, sizeof args, "info -m %s", path);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "rnnsearch info: ") && strstr(out, "bad.ckpt"), "%s", out);
    ck_assert_int_eq(testprog_run_all("info", out, sizeof out), 2);
    rs_train_state_free(&s);
    rs_model_free(&m);
    testdir_remove(dir);
}
END_TEST

Suite *info_suite(void)
{
    Suite *s = suite_create("info");
    TCase *tc = tcase_create("info");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, info_shows_what_the_checkpoint_holds);
    suite_add_tcase(s, tc);
    return s;
}
