/* What `rnnsearch bleu` prints (src/eval/bleu_report.c): score lines in
 * sacreBLEU's text form with and without the signature, a line per segment,
 * the --by-length table and TSV, and a paired test's table. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/bleu_report.h"

/* A stream whose text reads back once closed. */
typedef struct {
    FILE *f;
    char *text;
    size_t size;
} capture;

static void capture_begin(capture *c)
{
    c->text = NULL;
    c->f = open_memstream(&c->text, &c->size);
    ck_assert_ptr_nonnull(c->f);
}

static const char *capture_end(capture *c)
{
    ck_assert_int_eq(fclose(c->f), 0);
    return c->text;
}

static rs_lines lines_of(char **lines, int count)
{
    rs_lines l = {0};
    l.lines = lines;
    l.count = l.capacity = count;
    return l;
}

START_TEST(score_lines_carry_the_signature_after_the_name)
{
    char *hyp[] = {"the cat sat on the mat", "a b c d"},
         *ref[] = {"the cat sat on the mat", "a b c e"};
    rs_lines text[2] = {lines_of(hyp, 2), lines_of(ref, 2)};
    const rs_testset_systems in = {.text = text, .nrefs = 1, .name = "h.txt"};
    const char *refs[1];
    rs_error err;
    capture c;
    capture_begin(&c);
    const rs_bleu_report plain = {1, 1, 0, NULL, NULL};
    ck_assert_int_eq(rs_bleu_report_lines(c.f, &plain, &in, NULL, refs, &err), 0);
    const char *out = capture_end(&c);
    ck_assert_msg(!strncmp(out, "BLEU = ", 7) && strstr(out, "\nchrF2 = ") &&
                      out[strlen(out) - 1] == '\n',
                  "%s", out);
    free(c.text);
    capture_begin(&c);
    const rs_bleu_report signed_lines = {1, 1, 1, "nrefs:1|x", "nrefs:1|y"};
    ck_assert_int_eq(rs_bleu_report_lines(c.f, &signed_lines, &in, NULL, refs, &err), 0);
    out = capture_end(&c);
    /* One line per segment, the metrics tab-separated; the first is perfect. */
    ck_assert_msg(!strncmp(out, "BLEU|nrefs:1|x = 100.00 ", 24), "%s", out);
    ck_assert_msg(strstr(out, "\tchrF2|nrefs:1|y = 100.00\nBLEU|nrefs:1|x = "), "%s", out);
    free(c.text);
}
END_TEST

START_TEST(a_bad_segment_is_named_by_file_and_line)
{
    char *hyp[] = {"a b", "\xff"}, *ref[] = {"a b", "c"};
    rs_lines text[2] = {lines_of(hyp, 2), lines_of(ref, 2)};
    const rs_testset_systems in = {.text = text, .nrefs = 1, .name = "h.txt"};
    const char *refs[1];
    rs_error err = {{0}};
    capture c;
    capture_begin(&c);
    const rs_bleu_report chrf_only = {0, 1, 0, NULL, NULL};
    ck_assert_int_ne(rs_bleu_report_lines(c.f, &chrf_only, &in, NULL, refs, &err), 0);
    ck_assert_msg(strstr(err.msg, "h.txt:2: "), "%s", err.msg);
    ck_assert_str_eq(capture_end(&c), ""); /* nothing printed for a corpus that failed */
    free(c.text);
}
END_TEST

START_TEST(by_length_table_marks_empty_and_few_buckets)
{
    rs_length_buckets b;
    rs_error err;
    ck_assert_int_eq(rs_length_buckets_parse(&b, "3", &err), 0);
    rs_bucket_stats stats[RS_LENGTH_BUCKETS_MAX];
    rs_bucket_stats_init(stats, &b);
    const char *refs[] = {"a b c d e"};
    ck_assert_int_eq(rs_by_length_add(stats, &b, "short", "a b c d e", refs, 1, NULL, &err), 0);
    capture c;
    capture_begin(&c);
    rs_by_length_report(c.f, &b, stats, 0);
    const char *out = capture_end(&c);
    ck_assert_msg(strstr(out, "words    sentences    BLEU   chrF2\n"), "%s", out);
    ck_assert_msg(strstr(out, "        1  100.00  100.00  few\n"), "%s", out);
    ck_assert_msg(strstr(out, "        0       -       -\n"), "%s", out);
    ck_assert_msg(strstr(out, "few: fewer than 20 sentences"), "%s", out);
    free(c.text);
    capture_begin(&c);
    rs_by_length_report(c.f, &b, stats, 1);
    out = capture_end(&c);
    ck_assert_str_eq(out,
                     "bucket\tsentences\tbleu\tchrf\n<3\t1\t100.00\t100.00\n>=3\t0\tnan\tnan\n");
    free(c.text);
}
END_TEST

START_TEST(paired_table_has_the_baseline_first_and_stars_small_p)
{
    const char *names[] = {"a-much-longer-name.txt", "c"};
    const rs_testset_systems in = {.others = 2, .name = "base", .other_names = names};
    const rs_paired_result res[3] = {
        {30.0, 30.1, 1.2, 0}, {31.5, 31.4, 1.1, 0.01}, {29.0, 29.2, 1.0, 0.3}};
    const rs_testset_test bs = {RS_PAIRED_BS, 10, 1, 0}, ar = {RS_PAIRED_AR, 10, 1, 1};
    capture c;
    capture_begin(&c);
    rs_paired_report(c.f, &in, res, &bs);
    const char *out = capture_end(&c);
    ck_assert_msg(!strncmp(out,
                           "system                    BLEU   mean ± 95% CI        p\n"
                           "base                     30.00   30.10 ±  1.20       -\n"
                           "a-much-longer-name.txt   31.50   31.40 ±  1.10  0.0100 *\n"
                           "c                        29.00   29.20 ±  1.00  0.3000\n",
                           strlen(out)),
                  "%s", out);
    free(c.text);
    capture_begin(&c);
    rs_paired_report(c.f, &in, res, &ar);
    out = capture_end(&c);
    ck_assert_msg(strstr(out, "system                   chrF2        p\n") &&
                      strstr(out, "c                        29.00  0.3000\n"),
                  "%s", out);
    free(c.text);
}
END_TEST

Suite *bleu_report_suite(void)
{
    Suite *s = suite_create("bleu_report");
    TCase *tc = tcase_create("report");
    tcase_add_test(tc, score_lines_carry_the_signature_after_the_name);
    tcase_add_test(tc, a_bad_segment_is_named_by_file_and_line);
    tcase_add_test(tc, by_length_table_marks_empty_and_few_buckets);
    tcase_add_test(tc, paired_table_has_the_baseline_first_and_stars_small_p);
    suite_add_tcase(s, tc);
    return s;
}
