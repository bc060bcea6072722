/* A stream of lines translated and printed as `translate` prints them
 * (src/eval/translate_stream.c). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/nbest.h"
#include "eval/translate_stream.h"
#include "testdir.h"
#include "tinymodel.h"

static const char *const inputs[] = {"das haus", "", "haus das das"};

typedef struct {
    char dir[256], path[300];
    rs_model model;
    rs_ready plain;
    const rs_ready *member; /* the translator keeps &member */
    rs_codec codec;
    rs_translator tr;
    rs_translate_options opt;
    rs_line_reader reader;
    char *text;
    size_t size;
    rs_translate_stream s;
    int flushes;
} fixture;

static int count_flush(void *ctx, rs_error *err)
{
    fixture *f = ctx;
    f->flushes++;
    return fflush(f->s.out) ? rs_fail(err, "flush") : 0;
}

static void setup(fixture *f, int beam, int n_best)
{
    rs_error err = {{0}};
    memset(f, 0, sizeof *f);
    testdir_make(f->dir, "stream");
    snprintf(f->path, sizeof f->path, "%s/in.txt", f->dir);
    FILE *in = fopen(f->path, "w");
    ck_assert_ptr_nonnull(in);
    for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++)
        fprintf(in, "%s\n", inputs[i]);
    ck_assert_int_eq(fclose(in), 0);
    tiny_model_with_words(&f->model, 4, "haus", 3);
    ck_assert_msg(!rs_codec_for_model(&f->codec, &f->model, &err), "%s", err.msg);
    rs_translate_options_default(&f->opt);
    f->opt.beam = beam;
    f->opt.n_best = n_best;
    f->opt.batch_size = 1;
    f->plain = rs_ready_plain(&f->model);
    f->member = &f->plain;
    ck_assert_msg(!rs_translator_init(&f->tr, &f->member, 1, &f->codec, &f->opt, &err), "%s",
                  err.msg);
    ck_assert_msg(!rs_line_reader_open(&f->reader, f->path, &err), "%s", err.msg);
    rs_translate_stream_init(&f->s);
    f->s.out = open_memstream(&f->text, &f->size);
    ck_assert_ptr_nonnull(f->s.out);
    f->s.flush = count_flush;
    f->s.flush_ctx = f;
}

static void teardown(fixture *f)
{
    fclose(f->s.out);
    free(f->text);
    rs_line_reader_close(&f->reader);
    rs_translator_free(&f->tr);
    rs_codec_free(&f->codec);
    rs_model_free(&f->model);
    testdir_remove(f->dir);
}

/* One line per input line, each the pipeline's own translation of it, and
 * the lines and best hypotheses' tokens counted. */
START_TEST(prints_the_pipelines_translations)
{
    fixture f;
    rs_error err = {{0}};
    setup(&f, 1, 1);
    ck_assert_msg(!rs_translate_stream_run(&f.s, &f.tr, &f.reader, 1, &err), "%s", err.msg);
    fflush(f.s.out);
    ck_assert_int_eq(f.s.line_no, 3);
    ck_assert_int_ge(f.flushes, 1);
    char want[4096] = "";
    long tokens = 0;
    for (int i = 0; i < 3; i++) {
        rs_translated t;
        ck_assert_msg(!rs_translate_lines(&f.tr, 1, &inputs[i], &t, &err), "%s", err.msg);
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s\n",
                 t.hyps[0].text ? t.hyps[0].text : "");
        tokens += t.hyps[0].count;
        rs_translated_free(&t);
    }
    ck_assert_str_eq(f.text, want);
    ck_assert_int_eq(f.s.tokens_out, tokens);
    teardown(&f);
}
END_TEST

/* The n-best format: every hypothesis of a line as a Moses line, ids from 0. */
START_TEST(nbest_lines)
{
    fixture f;
    rs_error err = {{0}};
    setup(&f, 2, 2);
    f.s.style.nbest_format = 1;
    ck_assert_msg(!rs_translate_stream_run(&f.s, &f.tr, &f.reader, 1, &err), "%s", err.msg);
    fflush(f.s.out);
    int lines = 0, last_id = -1;
    for (char *line = strtok(f.text, "\n"); line; line = strtok(NULL, "\n"), lines++) {
        ck_assert_msg(rs_nbest_line(line) == 1, "'%s' is not an n-best line", line);
        const int id = atoi(line);
        ck_assert_int_ge(id, last_id);
        last_id = id;
    }
    ck_assert_int_eq(last_id, 2);
    ck_assert_int_ge(lines, 4); /* two lines that translate to something, and the empty one */
    teardown(&f);
}
END_TEST

/* References shorter than the input fail, naming the file; as many as the
 * input score, a line each for BLEU and chrF. */
START_TEST(references_are_counted)
{
    fixture f;
    rs_error err = {{0}};
    char *two[] = {"a", "b"}, *three[] = {"a", "b", "c"};
    rs_lines refs = {.lines = two, .count = 2};
    setup(&f, 1, 1);
    f.s.ref_path = "refs.txt";
    f.s.refs = &refs;
    ck_assert_int_ne(rs_translate_stream_run(&f.s, &f.tr, &f.reader, 1, &err), 0);
    ck_assert_msg(strstr(err.msg, "refs.txt has fewer lines (2)"), "%s", err.msg);
    teardown(&f);

    setup(&f, 1, 1);
    refs = (rs_lines){.lines = three, .count = 3};
    f.s.ref_path = "refs.txt";
    f.s.refs = &refs;
    ck_assert_msg(!rs_translate_stream_run(&f.s, &f.tr, &f.reader, 1, &err), "%s", err.msg);
    ck_assert_int_eq(rs_translate_stream_check_refs(&f.s, &err), 0);
    char *scores;
    size_t size;
    FILE *m = open_memstream(&scores, &size);
    rs_translate_stream_scores(&f.s, m);
    fclose(m);
    ck_assert_msg(!strncmp(scores, "BLEU", 4) && strstr(scores, "\nchrF"), "%s", scores);
    free(scores);
    refs.count = 4;
    ck_assert_int_ne(rs_translate_stream_check_refs(&f.s, &err), 0);
    ck_assert_msg(strstr(err.msg, "refs.txt has 4 lines but the input has 3"), "%s", err.msg);
    teardown(&f);
}
END_TEST

START_TEST(alignment_values_as_marian_takes_them)
{
    rs_stream_style st = {0};
    ck_assert_int_eq(rs_stream_alignment("soft", &st), 1);
    ck_assert_int_eq(st.alignment, 2);
    ck_assert_int_eq(rs_stream_alignment("hard", &st), 1);
    ck_assert(st.alignment == 1 && st.align_threshold == 0.0f);
    ck_assert_int_eq(rs_stream_alignment("0.25", &st), 1);
    ck_assert(st.alignment == 1 && st.align_threshold == 0.25f);
    st = (rs_stream_style){0};
    ck_assert_int_eq(rs_stream_alignment("0", &st), 0);
    ck_assert_int_eq(rs_stream_alignment("1.5", &st), 0);
    ck_assert_int_eq(rs_stream_alignment("FILE", &st), 0);
    ck_assert_int_eq(st.alignment, 0);
}
END_TEST

Suite *translate_stream_suite(void)
{
    Suite *s = suite_create("translate_stream");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, prints_the_pipelines_translations);
    tcase_add_test(tc, alignment_values_as_marian_takes_them);
    tcase_add_test(tc, nbest_lines);
    tcase_add_test(tc, references_are_counted);
    suite_add_tcase(s, tc);
    return s;
}
