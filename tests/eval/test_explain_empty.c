/* explain of a sentence with no tokens ("" or blanks) is refused, as the
 * translation of an empty line is an empty line with no step to explain: it
 * explained a made-up decoding of </s> alone, exit 0. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "model/checkpoint.h"
#include "testdir.h"
#include "testprog.h"
#include "tinymodel.h"

START_TEST(an_empty_sentence_has_no_step_to_explain)
{
    char dir[64], path[128], cmd[512], out[4096];
    testdir_make(dir, "rnnsearch-explain-empty");
    snprintf(path, sizeof path, "%s/m.ckpt", dir);
    rs_model m;
    rs_error err;
    tiny_model_with_words(&m, 4, "haus", 1);
    ck_assert_msg(!rs_checkpoint_save(path, &m, NULL, &err), "%s", err.msg);
    rs_model_free(&m);
    static const char *const sentences[] = {"''", "'   '", "'\t'"};
    for (int k = 0; k < 3; k++) {
        snprintf(cmd, sizeof cmd, "explain -m %s %s --step 1", path, sentences[k]);
        const int status = testprog_run_all(cmd, out, sizeof out);
        ck_assert_msg(status != 0, "%s: exit 0: %.300s", cmd, out);
        ck_assert_msg(strstr(out, "the sentence has no tokens: an empty line translates to an "
                                  "empty line, with no step to explain"),
                      "%s: %s", cmd, out);
    }
    snprintf(cmd, sizeof cmd, "explain -m %s das --step 1", path);
    ck_assert_msg(testprog_run_all(cmd, out, sizeof out) == 0, "%s", out);
    testdir_remove(dir);
}
END_TEST

Suite *explain_empty_suite(void)
{
    Suite *s = suite_create("explain_empty");
    TCase *tc = tcase_create("explain_empty");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, an_empty_sentence_has_no_step_to_explain);
    suite_add_tcase(s, tc);
    return s;
}
