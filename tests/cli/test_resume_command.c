/* cli/resume_command.c: the command train prints to continue a run. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/resume_command.h"
#include "testdir.h"

/* The command that continues a run: --overwrite and --new-data dropped,
 * --resume added, odd arguments quoted for a shell, and a --config that was a
 * pipe (no regular file) replaced by the run's copy of it. */
START_TEST(the_resume_command_repeats_the_run)
{
    char dir[64], cfg[128];
    testdir_make(dir, "rnnsearch-resume-command");
    testfile_put(dir, "run.yaml", "training:\n  epochs: 1\n");
    snprintf(cfg, sizeof cfg, "%s/run.yaml", dir);
    char *argv[] = {"train", "--config", cfg, "--train", "it's.tsv", "--overwrite", NULL};
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    rs_cli_resume_command(f, 6, argv, 0, dir);
    argv[2] = "/dev/null"; /* not a regular file: gone after the run */
    rs_cli_resume_command(f, 6, argv, 1, dir);
    ck_assert_int_eq(fclose(f), 0);
    char want[1024];
    snprintf(want, sizeof want,
             "rnnsearch train --config %s --train 'it'\\''s.tsv' --resume\n"
             "rnnsearch train --config %s/config.yaml --train 'it'\\''s.tsv'\n",
             cfg, dir);
    ck_assert_str_eq(out, want);
    free(out);
    testdir_remove(dir);
}
END_TEST

/* A word is left as it is only when no shell reads a character of it. */
START_TEST(shell_words_are_quoted_when_a_shell_would_read_them)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    rs_cli_shell_word(f, "--lr=0.1,a:b+c@d%e");
    rs_cli_shell_word(f, "a b");
    rs_cli_shell_word(f, "$HOME");
    rs_cli_shell_word(f, "");
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_str_eq(out, " --lr=0.1,a:b+c@d%e 'a b' '$HOME' ''");
    free(out);
}
END_TEST

Suite *resume_command_suite(void)
{
    Suite *s = suite_create("resume_command");
    TCase *tc = tcase_create("resume command");
    tcase_add_test(tc, the_resume_command_repeats_the_run);
    tcase_add_test(tc, shell_words_are_quoted_when_a_shell_would_read_them);
    suite_add_tcase(s, tc);
    return s;
}
