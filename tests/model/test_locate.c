/* Where models are found and saved (src/model/locate.c): a file, a model
 * directory, a bare name in $RNNSEARCH_MODELS then ./models; a missing model
 * named with every place looked at; training's --name under the models
 * directory, and neither --name nor --out refused. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/locate.h"
#include "testdir.h"
#include "testprog.h"

START_TEST(a_name_is_found_in_the_models_directory_then_models)
{
    char dir[64], path[256], want[1024], ckpt[1024];
    rs_error err = {{0}};
    testdir_make(dir, "rs_locate");
    snprintf(path, sizeof path, "%s/lib/de-en", dir);
    snprintf(want, sizeof want, "mkdir -p %s", path);
    ck_assert_int_eq(system(want), 0);
    snprintf(path, sizeof path, "%s/lib", dir);
    snprintf(want, sizeof want, "%s/lib/de-en/last.ckpt", dir);
    testfile_write(want, (const unsigned char *)"x", 1);
    setenv(RS_MODELS_ENV, path, 1);
    ck_assert_str_eq(rs_models_dir(), path);
    ck_assert_msg(!rs_model_locate("de-en", ckpt, sizeof ckpt, &err), "%s", err.msg);
    ck_assert_str_eq(ckpt, want);
    /* best.ckpt wins over last.ckpt. */
    snprintf(want, sizeof want, "%s/lib/de-en/best.ckpt", dir);
    testfile_write(want, (const unsigned char *)"x", 1);
    ck_assert(!rs_model_locate("de-en", ckpt, sizeof ckpt, &err));
    ck_assert_str_eq(ckpt, want);
    /* A file or a directory given as a path is taken as it is. */
    ck_assert(!rs_model_locate(want, ckpt, sizeof ckpt, &err));
    ck_assert_str_eq(ckpt, want);
    /* Missing: every place looked at is named. */
    ck_assert(rs_model_locate("fr-en", ckpt, sizeof ckpt, &err) != 0);
    char looked[600];
    snprintf(looked, sizeof looked, "not in %s/fr-en, models/fr-en", path);
    ck_assert_msg(strstr(err.msg, looked) && strstr(err.msg, RS_MODELS_ENV), "%s", err.msg);
    /* Training's directory for a name; a path is not a name. */
    ck_assert(!rs_model_dir_for("run1", ckpt, sizeof ckpt, &err));
    snprintf(want, sizeof want, "%s/run1", path);
    ck_assert_str_eq(ckpt, want);
    ck_assert(rs_model_dir_for("../x", ckpt, sizeof ckpt, &err) != 0);
    ck_assert(rs_model_dir_for("..", ckpt, sizeof ckpt, &err) != 0);
    unsetenv(RS_MODELS_ENV);
    ck_assert_str_eq(rs_models_dir(), "models");
    testdir_remove(dir);
}
END_TEST

/* The command line: train needs --name or --out (and not both), `help
 * models` states the rule, `help COMMAND` is COMMAND --help, and a model
 * trained under $RNNSEARCH_MODELS translates and plots by its name from
 * elsewhere. */
START_TEST(the_commands_follow_the_models_directory)
{
    char dir[64], cmd[8192], out[8192], cwd[1024];
    testdir_make(dir, "rs_locate_cmd");
    ck_assert(getcwd(cwd, sizeof cwd) != NULL);
    const char *prog = testprog_path();
    char program[2100];
    snprintf(program, sizeof program, "%s%s%s", prog[0] == '/' ? "" : cwd,
             prog[0] == '/' ? "" : "/", prog);
    snprintf(cmd, sizeof cmd, "%s train --train corpora/reorder/dev.tsv --max-steps 1 2>&1",
             program);
    ck_assert_int_eq(testprog_shell(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "--name NAME") && strstr(out, "--out DIR"), "%s", out);
    snprintf(cmd, sizeof cmd,
             "%s train --train corpora/reorder/dev.tsv --name a --out %s/b --max-steps 1 2>&1",
             program, dir);
    ck_assert_int_eq(testprog_shell(cmd, out, sizeof out), 2);
    snprintf(cmd, sizeof cmd,
             "RNNSEARCH_MODELS=%s/lib %s train --train corpora/reorder/dev.tsv --name tiny "
             "--emb 8 --hidden 8 --att 8 --maxout 4 --max-steps 2 --quiet 2>&1 && "
             "cd / && echo 'the horse' | RNNSEARCH_MODELS=%s/lib %s translate -m tiny 2>&1",
             dir, program, dir, program);
    ck_assert_msg(testprog_shell(cmd, out, sizeof out) == 0, "%s", out);
    snprintf(cmd, sizeof cmd, "%s/lib/tiny/last.ckpt", dir);
    ck_assert_int_eq(access(cmd, F_OK), 0);
    /* plot takes the same NAME from elsewhere. */
    snprintf(cmd, sizeof cmd, "cd / && RNNSEARCH_MODELS=%s/lib %s plot tiny -o %s/tiny.svg 2>&1",
             dir, program, dir);
    ck_assert_msg(testprog_shell(cmd, out, sizeof out) == 0, "%s", out);
    snprintf(cmd, sizeof cmd, "RNNSEARCH_MODELS=%s/lib %s help models", dir, program);
    ck_assert_int_eq(testprog_shell(cmd, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "RNNSEARCH_MODELS") && strstr(out, "/lib."), "%s", out);
    char help[8192];
    snprintf(cmd, sizeof cmd, "%s help translate", program);
    ck_assert_int_eq(testprog_shell(cmd, out, sizeof out), 0);
    snprintf(cmd, sizeof cmd, "%s translate --help", program);
    ck_assert_int_eq(testprog_shell(cmd, help, sizeof help), 0);
    ck_assert_str_eq(out, help);
    snprintf(cmd, sizeof cmd, "%s help nosuch 2>&1", program);
    ck_assert_int_eq(testprog_shell(cmd, out, sizeof out), 2);
    testdir_remove(dir);
}
END_TEST

Suite *locate_suite(void)
{
    Suite *s = suite_create("locate");
    TCase *tc = tcase_create("models directory");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, a_name_is_found_in_the_models_directory_then_models);
    tcase_add_test(tc, the_commands_follow_the_models_directory);
    suite_add_tcase(s, tc);
    return s;
}
