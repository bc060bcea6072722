/* align --pairs reads, force-decodes and writes its pairs a chunk at a time
 * (text/corpus.h rs_pair_reader_chunk, as score does): ten times the pairs
 * take the memory of one time, where every pair's alignment was held until
 * the last was decoded (20,000 short pairs: 47 MB against 27). Measured by
 * the child's peak resident size. And an empty input, for score and align
 * alike: zero pairs, said on stderr. */
#define _DEFAULT_SOURCE /* wait4 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model/checkpoint.h"
#include "testdir.h"
#include "testprog.h"
#include "tinymodel.h"

/* `align --pairs` of `pairs` copies of one pair, in TSV to /dev/null; the
 * child's peak resident size in kB. */
static long align_peak_kb(const char *dir, const char *model, int pairs)
{
    char path[128];
    snprintf(path, sizeof path, "%s/pairs.tsv", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < pairs; i++)
        fputs("das haus das haus das haus das haus das haus das\tthe the the the the the the\n", f);
    ck_assert(!fclose(f));
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout))
            _exit(126);
        execl(testprog_path(), testprog_path(), "align", "-m", model, "--pairs", "-f", "tsv", path,
              (char *)NULL);
        _exit(127);
    }
    int status;
    struct rusage ru;
    ck_assert_int_eq(wait4(pid, &status, 0, &ru), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "align of %d pairs: status %d",
                  pairs, status);
    return ru.ru_maxrss;
}

START_TEST(align_pairs_memory_does_not_grow_with_the_input)
{
    char dir[64], model[128];
    testdir_make(dir, "rnnsearch-align-stream");
    snprintf(model, sizeof model, "%s/m.ckpt", dir);
    rs_model m;
    rs_error err;
    tiny_model_with_words(&m, 4, "haus", 1);
    ck_assert_msg(!rs_checkpoint_save(model, &m, NULL, &err), "%s", err.msg);
    rs_model_free(&m);
    const long small = align_peak_kb(dir, model, 5000), large = align_peak_kb(dir, model, 50000);
    ck_assert_msg(large < small + 8 * 1024,
                  "5,000 pairs took %ld kB at most, 50,000 pairs %ld kB: memory grows with the "
                  "input",
                  small, large);
    testdir_remove(dir);
}
END_TEST

/* An empty file is zero pairs (or sentences), not an error: nothing on
 * standard output, exit 0, and a note on stderr naming the file. */
START_TEST(an_empty_input_is_zero_pairs_said_on_stderr)
{
    char dir[64], model[128], empty[128], args[640];
    testdir_make(dir, "rnnsearch-empty-input");
    snprintf(model, sizeof model, "%s/m.ckpt", dir);
    snprintf(empty, sizeof empty, "%s/empty.tsv", dir);
    rs_model m;
    rs_error err;
    tiny_model_with_words(&m, 4, "haus", 1);
    ck_assert_msg(!rs_checkpoint_save(model, &m, NULL, &err), "%s", err.msg);
    rs_model_free(&m);
    FILE *f = fopen(empty, "w");
    ck_assert(f && !fclose(f));
    static const struct {
        const char *command, *input, *note;
    } runs[] = {
        {"score", "%s", "no pairs (an empty input): nothing scored"},
        {"score", "--src %s --tgt %s", "no pairs (an empty input): nothing scored"},
        {"align", "%s", "no sentences (an empty input): nothing aligned"},
        {"align --pairs", "< %s", "no pairs (an empty input): nothing aligned"},
    };
    for (size_t k = 0; k < sizeof runs / sizeof *runs; k++) {
        char input[320], named[320];
        snprintf(input, sizeof input, runs[k].input, empty, empty);
        snprintf(args, sizeof args, "%s -m %s %s", runs[k].command, model, input);
        snprintf(named, sizeof named, "%s: %s", input[0] == '<' ? "<stdin>" : empty, runs[k].note);
        char *out = NULL, *errs = NULL;
        ck_assert_msg(testprog_run_split(args, &out, &errs) == 0, "%s: %s", args, errs);
        ck_assert_msg(out[0] == '\0', "%s printed '%s'", args, out);
        ck_assert_msg(strstr(errs, named), "%s: '%s' does not say '%s'", args, errs, named);
        free(out);
        free(errs);
    }
    testdir_remove(dir);
}
END_TEST

Suite *align_stream_suite(void)
{
    Suite *s = suite_create("align_stream");
    TCase *tc = tcase_create("align_stream");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, align_pairs_memory_does_not_grow_with_the_input);
    tcase_add_test(tc, an_empty_input_is_zero_pairs_said_on_stderr);
    suite_add_tcase(s, tc);
    return s;
}
