/* A test set segment by segment (src/eval/testset.c): each segment's
 * references, sacreBLEU's nrefs for the signature, and the statistics of
 * --by-length and of a paired test, whose errors name the file and line. */
#include <check.h>
#include <string.h>

#include "eval/testset.h"
#include "testdir.h"

/* Lines as rs_lines (not owned: never freed). */
static rs_lines lines_of(char **lines, int count)
{
    rs_lines l = {0};
    l.lines = lines;
    l.count = l.capacity = count;
    return l;
}

START_TEST(nrefs_are_the_non_empty_references_per_segment)
{
    char *hyp[] = {"a b", "c d"}, *r1[] = {"a b", "c d"}, *r2[] = {"a c", ""}, *r3[] = {"x", "y"};
    rs_lines text[3] = {lines_of(hyp, 2), lines_of(r1, 2), lines_of(r3, 2)};
    const char *refs[2];
    ck_assert_int_eq(rs_testset_nrefs(text, 2, refs), 2);
    text[2] = lines_of(r2, 2);
    ck_assert_int_eq(rs_testset_nrefs(text, 2, refs), RS_NREFS_VAR);
    rs_testset_refs(text, 2, 1, refs);
    ck_assert_str_eq(refs[0], "c d");
    ck_assert_str_eq(refs[1], "");
}
END_TEST

START_TEST(statistics_and_errors_name_the_file_and_line)
{
    char *hyp[] = {"a b", "c d"}, *ref[] = {"a b", "\xff"}, *src[] = {"one", "two words"};
    char *other[] = {"a b", "\xc3"};
    rs_lines text[2] = {lines_of(hyp, 2), lines_of(ref, 2)}, source = lines_of(src, 2);
    rs_lines sys = lines_of(other, 2);
    const char *refs[1];
    rs_length_buckets b;
    rs_error err = {{0}};
    ck_assert_int_eq(rs_length_buckets_parse(&b, "2", &err), 0);
    rs_bucket_stats stats[RS_LENGTH_BUCKETS_MAX];
    rs_bucket_stats_init(stats, &b);
    const rs_testset_systems hyp_only = {.text = text, .nrefs = 1, .name = "h.txt"};
    ck_assert_int_ne(rs_testset_by_length(stats, &b, &hyp_only, &source, NULL, refs, &err), 0);
    ck_assert_msg(strstr(err.msg, "h.txt:2: reference 1 is not valid UTF-8"), "%s", err.msg);
    ck_assert_int_eq(stats[0].sentences, 1);
    rs_bleu_stats paired[4];
    const char *names[] = {"o.txt"};
    const rs_testset_systems systems = {text, 1, &sys, 1, "h.txt", names};
    ck_assert_int_ne(rs_testset_paired_stats(paired, &systems, NULL, refs, &err), 0);
    ck_assert_msg(strstr(err.msg, "h.txt:2: "), "%s", err.msg);
    ref[1] = "c d";
    ck_assert_int_ne(rs_testset_paired_stats(paired, &systems, NULL, refs, &err), 0);
    ck_assert_msg(strstr(err.msg, "o.txt:2: the hypothesis is not valid UTF-8"), "%s", err.msg);
    other[1] = "c e";
    ck_assert_int_eq(rs_testset_paired_stats(paired, &systems, NULL, refs, &err), 0);
    ck_assert_int_eq(paired[1].segments, 1);
    ck_assert_int_eq(paired[3].hyp_len, 2);
}
END_TEST

/* Reads files named under dir into text[count]: rs_testset_read's status. */
static int read_set(const char *dir, const char *const *names, int count, rs_lines *text,
                    rs_error *err)
{
    char paths[4][128];
    const char *files[4];
    for (int i = 0; i < count; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/%s", dir, names[i]);
        files[i] = paths[i];
        text[i] = (rs_lines){0};
    }
    return rs_testset_read(text, files, count, "HYP", err);
}

static void free_set(rs_lines *text, int count)
{
    for (int i = 0; i < count; i++)
        rs_lines_free(&text[i]);
}

START_TEST(reading_strips_lines_and_refuses_what_gives_no_true_score)
{
    char dir[64];
    testdir_make(dir, "testset");
    testfile_put(dir, "hyp", "a b  \nc d\t\n");
    testfile_put(dir, "ref", "a b\nc e\n");
    testfile_put(dir, "short", "a b\n");
    testfile_put(dir, "nbest", "0 ||| a b ||| F0= -1 ||| -1\n0 ||| c ||| F0= -2 ||| -2\n");
    testfile_put(dir, "empty", "");
    rs_lines text[2], src = {0}, sys[1] = {{0}};
    rs_error err = {{0}};
    const char *ok[] = {"hyp", "ref"}, *short_ref[] = {"hyp", "short"}, *nbest[] = {"nbest", "ref"};
    const char *empty[] = {"empty", "ref"}, *missing[] = {"hyp", "missing"};
    ck_assert_int_eq(read_set(dir, ok, 2, text, &err), 0);
    ck_assert_str_eq(text[0].lines[0], "a b"); /* trailing whitespace stripped */
    ck_assert_str_eq(text[0].lines[1], "c d");
    /* Another system of another length, and the sources of --by-length. */
    char path[128];
    snprintf(path, sizeof path, "%s/short", dir);
    const char *others[] = {path};
    ck_assert_int_eq(rs_testset_read_systems(sys, others, 1, &text[0], "HYP", &err),
                     RS_TESTSET_REFUSED);
    ck_assert_msg(strstr(err.msg, "HYP has 2 lines but ") && strstr(err.msg, "short has 1: the "
                                                                             "systems of a paired"),
                  "%s", err.msg);
    ck_assert_int_eq(rs_testset_read_source(&src, path, &text[0], "HYP", &err), RS_TESTSET_REFUSED);
    ck_assert_msg(strstr(err.msg, "short has 1 line but HYP has 2"), "%s", err.msg);
    snprintf(path, sizeof path, "%s/ref", dir);
    ck_assert_int_eq(rs_testset_read_source(&src, path, &text[0], "HYP", &err), 0);
    ck_assert_int_eq(src.count, 2);
    rs_lines_free(&src);
    rs_lines_free(&sys[0]);
    free_set(text, 2);
    ck_assert_int_eq(read_set(dir, short_ref, 2, text, &err), RS_TESTSET_REFUSED);
    ck_assert_msg(strstr(err.msg, "HYP has 2 lines but ") &&
                      strstr(err.msg, "short has 1: one reference line per hypothesis"),
                  "%s", err.msg);
    free_set(text, 2);
    ck_assert_int_eq(read_set(dir, nbest, 2, text, &err), RS_TESTSET_REFUSED);
    ck_assert_msg(strstr(err.msg, "n-best"), "%s", err.msg);
    free_set(text, 2);
    ck_assert_int_eq(read_set(dir, empty, 2, text, &err), -1);
    ck_assert_msg(strstr(err.msg, "empty has no lines to score"), "%s", err.msg);
    free_set(text, 2);
    ck_assert_int_eq(read_set(dir, missing, 2, text, &err), -1);
    ck_assert_msg(strstr(err.msg, "missing"), "%s", err.msg);
    free_set(text, 2);
    testdir_remove(dir);
}
END_TEST

START_TEST(a_paired_test_runs_on_either_metric)
{
    char *hyp[] = {"a b c d", "e f g h", "i j k l"}, *ref[] = {"a b c d", "e f g x", "i j y z"};
    char *other[] = {"a b c x", "e f x y", "i x y z"};
    rs_lines text[2] = {lines_of(hyp, 3), lines_of(ref, 3)}, sys = lines_of(other, 3);
    const char *names[] = {"o.txt"}, *refs[1];
    const rs_testset_systems in = {text, 1, &sys, 1, "h.txt", names};
    rs_paired_result bleu[2], chrf[2];
    rs_error err;
    const rs_testset_test bs = {RS_PAIRED_BS, 20, 3, 0}, ar = {RS_PAIRED_AR, 20, 3, 1};
    ck_assert_int_eq(rs_testset_paired(bleu, &in, &bs, NULL, refs, &err), 0);
    ck_assert_int_eq(rs_testset_paired(chrf, &in, &ar, NULL, refs, &err), 0);
    ck_assert(bleu[0].score > bleu[1].score);
    ck_assert(bleu[1].p > 0 && bleu[1].p <= 1 && bleu[0].ci == bleu[0].ci);
    ck_assert(chrf[0].score > chrf[1].score && chrf[0].score != bleu[0].score);
    ck_assert(chrf[1].ci != chrf[1].ci); /* NaN: randomization gives no interval */
    other[2] = "\xc3";
    ck_assert_int_ne(rs_testset_paired(bleu, &in, &bs, NULL, refs, &err), 0);
    ck_assert_msg(strstr(err.msg, "o.txt:3: "), "%s", err.msg);
}
END_TEST

Suite *testset_suite(void)
{
    Suite *s = suite_create("testset");
    TCase *tc = tcase_create("segments");
    tcase_add_test(tc, nrefs_are_the_non_empty_references_per_segment);
    tcase_add_test(tc, statistics_and_errors_name_the_file_and_line);
    tcase_add_test(tc, reading_strips_lines_and_refuses_what_gives_no_true_score);
    tcase_add_test(tc, a_paired_test_runs_on_either_metric);
    suite_add_tcase(s, tc);
    return s;
}
