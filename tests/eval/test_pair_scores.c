/* What `score` prints (src/eval/pair_scores.c): a line per pair, the total
 * the forced decoding gives, and with per_token the mean, the tokens as the
 * model sees them (<unk>, </s> last) and each one's log-probability. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/pair_scores.h"
#include "testdir.h"
#include "tinymodel.h"

START_TEST(a_line_per_pair_with_its_tokens)
{
    rs_model m;
    rs_codec codec;
    rs_error err = {{0}};
    tiny_model_with_words(&m, 4, "haus", 5);
    ck_assert_msg(!rs_codec_for_model(&codec, &m, &err), "%s", err.msg);
    char dir[64], tsv[128];
    testdir_make(dir, "pair_scores");
    testfile_put(dir, "p.tsv", "das haus\tthe zebra\nhaus\t\n");
    snprintf(tsv, sizeof tsv, "%s/p.tsv", dir);
    const rs_pairs_input in = {.tsv = tsv};
    const rs_pairs_ids ids = {&m, &codec, 100, NULL, "P"};
    const rs_ready ready = rs_ready_plain(&m);
    const rs_ready *members[] = {&ready};
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    const rs_pair_scoring plain = {members, 1, 2, 0}, tokens = {members, 1, 1, 1};
    ck_assert_msg(!rs_pair_scores_write(out, &in, &ids, &plain, &err), "%s", err.msg);
    ck_assert_msg(!rs_pair_scores_write(out, &in, &ids, &tokens, &err), "%s", err.msg);
    ck_assert_int_eq(fclose(out), 0);
    /* The same totals either way; the empty target scores </s> alone. */
    double a, b, c, d, mean;
    char rest[512];
    ck_assert_int_eq(sscanf(text, "%lf\n%lf\n%lf\t%lf\t%511[^\n]", &a, &b, &c, &mean, rest), 5);
    ck_assert(a < 0 && b < 0 && fabs(a - c) < 1e-4 && fabs(mean - a / 3) < 1e-4);
    ck_assert_msg(!strncmp(rest, "the <unk> </s>\t", 15), "%s", rest);
    const char *last = strrchr(text, '\n');
    while (last > text && last[-1] != '\n')
        last--;
    ck_assert_int_eq(sscanf(last, "%lf\t%lf", &d, &mean), 2);
    ck_assert(fabs(d - b) < 1e-4 && fabs(mean - b) < 1e-4);
    ck_assert_msg(strstr(last, "\t</s>\t"), "%s", last);
    free(text);
    const rs_pairs_input missing = {.tsv = "/nonexistent.tsv"};
    ck_assert_int_ne(rs_pair_scores_write(stdout, &missing, &ids, &plain, &err), 0);
    testdir_remove(dir);
    rs_codec_free(&codec);
    rs_model_free(&m);
}
END_TEST

/* An empty input is zero pairs, not an error: nothing printed, said to the
 * warnings' stream naming the file. */
START_TEST(an_empty_input_is_zero_pairs_said)
{
    rs_model m;
    rs_codec codec;
    rs_error err = {{0}};
    tiny_model_with_words(&m, 4, "haus", 5);
    ck_assert_msg(!rs_codec_for_model(&codec, &m, &err), "%s", err.msg);
    char dir[64], tsv[128];
    testdir_make(dir, "pair_scores_empty");
    testfile_put(dir, "empty.tsv", "");
    snprintf(tsv, sizeof tsv, "%s/empty.tsv", dir);
    char *text = NULL, *warned = NULL;
    size_t size = 0, warned_size = 0;
    FILE *out = open_memstream(&text, &size), *warn = open_memstream(&warned, &warned_size);
    const rs_pairs_input in = {.tsv = tsv};
    const rs_pairs_ids ids = {&m, &codec, 100, warn, "P"};
    const rs_ready ready = rs_ready_plain(&m);
    const rs_ready *members[] = {&ready};
    const rs_pair_scoring how = {members, 1, 2, 0};
    ck_assert_msg(!rs_pair_scores_write(out, &in, &ids, &how, &err), "%s", err.msg);
    ck_assert_int_eq(fclose(out), 0);
    ck_assert_int_eq(fclose(warn), 0);
    ck_assert_str_eq(text, "");
    char want[256];
    snprintf(want, sizeof want, "P: %s: no pairs (an empty input): nothing scored\n", tsv);
    ck_assert_str_eq(warned, want);
    free(text);
    free(warned);
    testdir_remove(dir);
    rs_codec_free(&codec);
    rs_model_free(&m);
}
END_TEST

Suite *pair_scores_suite(void)
{
    Suite *s = suite_create("pair_scores");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, a_line_per_pair_with_its_tokens);
    tcase_add_test(tc, an_empty_input_is_zero_pairs_said);
    suite_add_tcase(s, tc);
    return s;
}
