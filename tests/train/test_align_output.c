/* Where `align` writes alignments (src/train/align_output.c): one output
 * committed whole with the format's beginning and end, one picture per
 * sentence into a directory, the outputs that cannot hold the sentences
 * refused before anything is written, and when text is coloured. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testdir.h"
#include "train/align_output.h"

static void alignment(rs_alignment *a)
{
    const char *tgt[] = {"the"}, *src[] = {"das", "haus"};
    const float w[] = {0.5f, 0.25f, 0.25f, 0.1f, 0.1f, 0.8f}; /* 2 x 3: </s> in each */
    rs_error err;
    ck_assert_int_eq(rs_alignment_make(a, tgt, 1, src, 2, w, &err), 0);
}

static rs_align_output output_of(const char *format, const char *path)
{
    rs_align_output o = {.writer = rs_align_writer_find(format), .out_path = path};
    rs_output_rule_init(&o.rule, RS_OUTPUT_TEXT, NULL);
    return o;
}

START_TEST(one_output_is_committed_whole)
{
    char dir[64], path[128];
    testdir_make(dir, "align_output");
    snprintf(path, sizeof path, "%s/a.json", dir);
    rs_alignment a;
    alignment(&a);
    rs_error err = {{0}};
    rs_align_output o = output_of("json", path);
    ck_assert_msg(!rs_align_output_open(&o, 2, &err), "%s", err.msg);
    ck_assert(!testfile_exists(dir, "a.json")); /* written beside it until complete */
    ck_assert_msg(!rs_align_output_write(&o, &a, 1, &err), "%s", err.msg);
    ck_assert_msg(!rs_align_output_write(&o, &a, 2, &err), "%s", err.msg);
    ck_assert_msg(!rs_align_output_close(&o, &err), "%s", err.msg);
    ck_assert_int_eq(o.written, 2);
    size_t size;
    char *text = (char *)testfile_read(path, &size);
    ck_assert_msg(!strncmp(text, "{\"id\":0,\"source\":[\"das\",\"haus\",", 29) &&
                      strstr(text, "}\n{\"id\":1,") && text[size - 1] == '\n',
                  "%s", text);
    free(text);
    rs_output_abort(&o.output);
    rs_output_rule_free(&o.rule);
    rs_alignment_free(&a);
    testdir_remove(dir);
}
END_TEST

START_TEST(a_picture_per_sentence_goes_to_a_directory)
{
    char dir[64], pics[128], one[128];
    testdir_make(dir, "align_output");
    snprintf(pics, sizeof pics, "%s/pics", dir);
    snprintf(one, sizeof one, "%s/one.svg", dir);
    rs_alignment a;
    alignment(&a);
    rs_error err = {{0}};
    rs_align_output o = output_of("svg", pics);
    ck_assert_msg(!rs_align_output_open(&o, 2, &err), "%s", err.msg);
    ck_assert(o.svg_dir);
    ck_assert_msg(!rs_align_output_write(&o, &a, 1, &err), "%s", err.msg);
    ck_assert_msg(!rs_align_output_write(&o, &a, 2, &err), "%s", err.msg);
    ck_assert_msg(!rs_align_output_close(&o, &err), "%s", err.msg);
    ck_assert(testfile_exists(pics, "0001.svg") && testfile_exists(pics, "0002.svg"));
    rs_output_rule_free(&o.rule);
    /* Refused before anything is written: several pictures to standard
     * output, or to one .svg file. */
    o = output_of("svg", NULL);
    ck_assert_int_eq(rs_align_output_open(&o, 2, &err), RS_ALIGN_OUTPUT_REFUSED);
    ck_assert_str_eq(err.msg, "svg of 2 sentences needs --output DIR (one file per sentence)");
    rs_output_rule_free(&o.rule);
    o = output_of("svg", one);
    ck_assert_int_eq(rs_align_output_open(&o, 3, &err), RS_ALIGN_OUTPUT_REFUSED);
    ck_assert_msg(strstr(err.msg, "one.svg: 3 sentences need a directory, not one .svg file"), "%s",
                  err.msg);
    ck_assert(!testfile_exists(dir, "one.svg"));
    rs_output_rule_free(&o.rule);
    /* One sentence: the FILE.svg itself. */
    o = output_of("svg", one);
    ck_assert_msg(!rs_align_output_open(&o, 1, &err), "%s", err.msg);
    ck_assert(!o.svg_dir);
    ck_assert_msg(!rs_align_output_write(&o, &a, 1, &err), "%s", err.msg);
    ck_assert_msg(!rs_align_output_close(&o, &err), "%s", err.msg);
    ck_assert(testfile_exists(dir, "one.svg"));
    rs_output_abort(&o.output);
    rs_output_rule_free(&o.rule);
    rs_alignment_free(&a);
    testdir_remove(dir);
}
END_TEST

START_TEST(colour_when_asked_or_on_a_terminal)
{
    ck_assert_int_eq(rs_align_output_color(1, 0), 1);
    ck_assert_int_eq(rs_align_output_color(2, 1), 0);
    ck_assert_int_eq(rs_align_output_color(0, 0), 0); /* auto, to a file */
}
END_TEST

Suite *align_output_suite(void)
{
    Suite *s = suite_create("align_output");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, one_output_is_committed_whole);
    tcase_add_test(tc, a_picture_per_sentence_goes_to_a_directory);
    tcase_add_test(tc, colour_when_asked_or_on_a_terminal);
    suite_add_tcase(s, tc);
    return s;
}
