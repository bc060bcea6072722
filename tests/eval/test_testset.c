/* A test set segment by segment (src/eval/testset.c): each segment's
 * references, sacreBLEU's nrefs for the signature, and the statistics of
 * --by-length and of a paired test, whose errors name the file and line. */
#include <check.h>
#include <string.h>

#include "eval/testset.h"

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

Suite *testset_suite(void)
{
    Suite *s = suite_create("testset");
    TCase *tc = tcase_create("segments");
    tcase_add_test(tc, nrefs_are_the_non_empty_references_per_segment);
    tcase_add_test(tc, statistics_and_errors_name_the_file_and_line);
    suite_add_tcase(s, tc);
    return s;
}
