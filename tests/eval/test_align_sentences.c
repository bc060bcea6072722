/* Sentences' alignments handed to a sink (src/eval/align_sentences.c). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/align_sentences.h"
#include "testdir.h"
#include "tinymodel.h"

typedef struct {
    int calls, ids[8], rows[8], cols[8];
    char first_src[8][64];
    int fail_at; /* the sink fails on this id (0: never) */
} seen;

static int collect(void *ctx, const rs_alignment *a, int id, rs_error *err)
{
    seen *s = ctx;
    if (id == s->fail_at)
        return rs_fail(err, "sink refused %d", id);
    ck_assert_int_lt(s->calls, 8);
    s->ids[s->calls] = id;
    s->rows[s->calls] = a->rows;
    s->cols[s->calls] = a->cols;
    snprintf(s->first_src[s->calls], sizeof s->first_src[0], "%s", a->src[0]);
    for (int i = 0; i < a->rows; i++) {
        double sum = 0;
        for (int j = 0; j < a->cols; j++)
            sum += a->w[i * a->cols + j];
        ck_assert_msg(fabs(sum - 1.0) < 1e-4, "row %d sums to %g", i, sum);
    }
    s->calls++;
    return 0;
}

/* Each line's translation aligned, ids the line numbers, the empty line
 * skipped; a sink's failure ends the run with its message. */
START_TEST(translations_in_line_order)
{
    rs_model m;
    rs_codec codec;
    rs_error err = {{0}};
    tiny_model_with_words(&m, 4, "haus", 5);
    const rs_ready plain = rs_ready_plain(&m);
    ck_assert_msg(!rs_codec_for_model(&codec, &m, &err), "%s", err.msg);
    char *text[] = {"das haus", "", "haus"};
    const rs_lines lines = {.count = 3, .lines = text};
    rs_translate_options opt;
    rs_translate_options_default(&opt);
    opt.want_alignment = 1;
    opt.batch_size = 2;
    seen s = {0};
    rs_align_emitter em = {.sink = collect, .ctx = &s};
    ck_assert_msg(!rs_align_translations(&plain, &codec, &lines, &opt, &em, &err), "%s", err.msg);
    ck_assert_int_eq(s.calls, 2);
    ck_assert_int_eq(s.ids[0], 1);
    ck_assert_int_eq(s.ids[1], 3);
    ck_assert_int_eq(s.cols[0], 3); /* das haus </s> */
    ck_assert_int_eq(s.cols[1], 2);
    ck_assert_str_eq(s.first_src[1], "haus");
    seen refuse = {.fail_at = 3};
    em.ctx = &refuse;
    ck_assert_int_ne(rs_align_translations(&plain, &codec, &lines, &opt, &em, &err), 0);
    ck_assert_str_eq(err.msg, "sink refused 3");
    ck_assert_int_eq(refuse.calls, 1);
    rs_codec_free(&codec);
    rs_model_free(&m);
}
END_TEST

/* Given pairs force-decoded: one row per given target token and </s>; BPE
 * units joined when asked ("da@@ s" is one column). */
START_TEST(pairs_forced_and_joined)
{
    rs_model m;
    rs_error err = {{0}};
    tiny_model_with_words(&m, 4, "haus", 6);
    const rs_ready plain = rs_ready_plain(&m);
    /* As a BPE model's pairs come tokenized (a space between units). */
    char *s0[] = {"da@@", "s", "haus"}, *s1[] = {"haus"}, *t0[] = {"the", "the"}, *t1[] = {"the"};
    rs_tokens src[] = {{3, 3, s0}, {1, 1, s1}}, tgt[] = {{2, 2, t0}, {1, 1, t1}};
    const rs_tokenized tok = {.count = 2, .src = src, .tgt = tgt};
    seen s = {0};
    rs_align_emitter em = {.sink = collect, .ctx = &s};
    ck_assert_msg(!rs_align_pairs(&plain, &tok, 1, &em, &err), "%s", err.msg);
    ck_assert_int_eq(s.calls, 2);
    ck_assert_int_eq(s.ids[0], 1);
    ck_assert_int_eq(s.rows[0], 3); /* the the </s> */
    ck_assert_int_eq(s.cols[0], 4); /* da@@ s haus </s> */
    ck_assert_int_eq(s.rows[1], 2);
    seen joined = {0};
    em = (rs_align_emitter){.bpe = "@@ ", .sink = collect, .ctx = &joined};
    ck_assert_msg(!rs_align_pairs(&plain, &tok, 2, &em, &err), "%s", err.msg);
    ck_assert_int_eq(joined.cols[0], 3); /* das haus </s> */
    ck_assert_str_eq(joined.first_src[0], "das");
    /* A later chunk of a file: ids count on from its first pair. */
    const rs_tokenized later = {.count = 2, .src = src, .tgt = tgt, .first = 4096};
    seen chunk = {0};
    em = (rs_align_emitter){.sink = collect, .ctx = &chunk};
    ck_assert_msg(!rs_align_pairs(&plain, &later, 2, &em, &err), "%s", err.msg);
    ck_assert_int_eq(chunk.ids[0], 4097);
    ck_assert_int_eq(chunk.ids[1], 4098);
    rs_model_free(&m);
}
END_TEST

/* align's input from a file: pairs tokenized and their sources cut (a
 * warning each), every chunk aligned; or lines translated. */
START_TEST(input_files_of_pairs_and_of_lines)
{
    rs_model m;
    rs_codec codec;
    rs_error err = {{0}};
    tiny_model_with_words(&m, 4, "haus", 5);
    ck_assert_msg(!rs_codec_for_model(&codec, &m, &err), "%s", err.msg);
    char dir[64], pairs[128], lines[128];
    testdir_make(dir, "align_input");
    testfile_put(dir, "p.tsv", "das haus\tthe the\nhaus\tthe\ndas\tthe\n");
    testfile_put(dir, "l.txt", "das haus\n\nhaus\n");
    snprintf(pairs, sizeof pairs, "%s/p.tsv", dir);
    snprintf(lines, sizeof lines, "%s/l.txt", dir);
    char *warned = NULL;
    size_t size = 0;
    FILE *warn = open_memstream(&warned, &size);
    const rs_pairs_ids ids = {&m, &codec, 1, warn, "P"};
    const rs_ready plain = rs_ready_plain(&m);
    rs_translate_options opt;
    rs_translate_options_default(&opt);
    opt.want_alignment = 1;
    rs_align_input in = {0};
    ck_assert_msg(!rs_align_input_open(&in, pairs, 1, 0, 0, &plain, &ids, &err), "%s", err.msg);
    ck_assert_int_eq(in.count, 3);
    seen s = {0};
    rs_align_emitter em = {.sink = collect, .ctx = &s};
    ck_assert_msg(!rs_align_input_run(&in, &opt, &em, &err), "%s", err.msg);
    rs_align_input_free(&in);
    ck_assert_int_eq(s.calls, 3);
    ck_assert_int_eq(s.ids[2], 3);
    ck_assert_int_eq(s.cols[0], 2); /* das </s>: cut to one token */
    ck_assert_int_eq(s.rows[0], 3); /* the the </s> */
    ck_assert_int_eq(fclose(warn), 0);
    char want[256];
    snprintf(want, sizeof want, "P: %s: pair 1: source cut to its first 1 tokens (1 more)\n",
             pairs);
    ck_assert_str_eq(warned, want);
    free(warned);
    ck_assert_msg(!rs_align_input_open(&in, lines, 0, 0, 0, &plain, &ids, &err), "%s", err.msg);
    ck_assert_int_eq(in.count, 3);
    seen t = {0};
    em.ctx = &t;
    ck_assert_msg(!rs_align_input_run(&in, &opt, &em, &err), "%s", err.msg);
    rs_align_input_free(&in);
    ck_assert_int_eq(t.calls, 2); /* the empty line has none */
    ck_assert_int_eq(t.ids[1], 3);
    testfile_put(dir, "bad.tsv", "no tab here\n");
    snprintf(pairs, sizeof pairs, "%s/bad.tsv", dir);
    ck_assert_int_ne(rs_align_input_open(&in, pairs, 1, 0, 1, &plain, &ids, &err), 0);
    rs_align_input_free(&in);
    testdir_remove(dir);
    rs_codec_free(&codec);
    rs_model_free(&m);
}
END_TEST

/* An empty file is zero pairs or sentences, not an error: said to the
 * warnings' stream naming the file ("<stdin>" for "-"). */
START_TEST(an_empty_input_is_said)
{
    rs_model m;
    rs_codec codec;
    rs_error err = {{0}};
    tiny_model_with_words(&m, 4, "haus", 5);
    ck_assert_msg(!rs_codec_for_model(&codec, &m, &err), "%s", err.msg);
    char dir[64], path[128];
    testdir_make(dir, "align_input_empty");
    testfile_put(dir, "empty.txt", "");
    snprintf(path, sizeof path, "%s/empty.txt", dir);
    const rs_ready plain = rs_ready_plain(&m);
    for (int pairs = 0; pairs < 2; pairs++) {
        char *warned = NULL, want[256];
        size_t size = 0;
        FILE *warn = open_memstream(&warned, &size);
        const rs_pairs_ids ids = {&m, &codec, 100, warn, "P"};
        rs_align_input in = {0};
        ck_assert_msg(!rs_align_input_open(&in, path, pairs, 0, 0, &plain, &ids, &err), "%s",
                      err.msg);
        ck_assert_int_eq(in.count, 0);
        rs_align_input_free(&in);
        ck_assert_int_eq(fclose(warn), 0);
        snprintf(want, sizeof want, "P: %s: no %s (an empty input): nothing aligned\n", path,
                 pairs ? "pairs" : "sentences");
        ck_assert_str_eq(warned, want);
        free(warned);
    }
    testdir_remove(dir);
    rs_codec_free(&codec);
    rs_model_free(&m);
}
END_TEST

Suite *align_sentences_suite(void)
{
    Suite *s = suite_create("align_sentences");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, translations_in_line_order);
    tcase_add_test(tc, pairs_forced_and_joined);
    tcase_add_test(tc, input_files_of_pairs_and_of_lines);
    tcase_add_test(tc, an_empty_input_is_said);
    suite_add_tcase(s, tc);
    return s;
}
