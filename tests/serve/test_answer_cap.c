/* An answer that passes serve's --max-answer stops being written there
 * (serve/answers.c): no hypothesis, alignment record, picture or sentence
 * after the one that found it full is drawn. Measured by what is written:
 * into a stream without a cap, the answer stops within one item of the cap,
 * where it was drawn whole before (16 pictures where one passed the cap). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/server.h"

/* SLACK: one hypothesis's or sentence's text, written past the last check. */
enum { CAP = 65536, SLACK = 2048 };

/* The bytes of an answer of one hypothesis with its picture (measured). */
static size_t one_picture;

static char *word(const char *prefix, int i)
{
    char *w = malloc(32);
    ck_assert_ptr_nonnull(w);
    snprintf(w, 32, "%s%d", prefix, i);
    return w;
}

/* A translation of `hyps` hypotheses of T tokens from S source tokens, each
 * with a uniform alignment. */
static rs_translated translation(int hyps, int S, int T)
{
    rs_translated t = {0};
    t.source_count = S;
    t.source_tokens = calloc((size_t)S, sizeof *t.source_tokens);
    t.count = hyps;
    t.hyps = calloc((size_t)hyps, sizeof *t.hyps);
    ck_assert(t.source_tokens && t.hyps);
    for (int j = 0; j < S; j++)
        t.source_tokens[j] = word("src", j);
    for (int k = 0; k < hyps; k++) {
        rs_hypothesis *h = &t.hyps[k];
        h->count = T;
        h->tokens = calloc((size_t)T, sizeof *h->tokens);
        h->columns = S + 1;
        h->alignment = malloc((size_t)(T + 1) * (size_t)(S + 1) * sizeof *h->alignment);
        h->text = word("hypothesis ", k);
        ck_assert(h->tokens && h->alignment && h->text);
        for (int i = 0; i < T; i++)
            h->tokens[i] = word("tgt", i);
        for (int i = 0; i < (T + 1) * (S + 1); i++)
            h->alignment[i] = 1.0f / (float)(S + 1);
        h->finished = 1;
    }
    return t;
}

/* Writes the answer into a stream without a cap; its status and length. */
static int answer(const rs_translated *t, const translations_answer *ta, size_t *written,
                  rs_error *err)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    ck_assert_ptr_nonnull(out);
    const int status = rs_serve_write_translations(out, t, ta, err);
    ck_assert_int_eq(fclose(out), 0);
    *written = size;
    free(text);
    return status;
}

static void expect_stopped(const rs_translated *t, const translations_answer *ta, const char *what)
{
    rs_error err = {{0}};
    size_t written;
    const int status = answer(t, ta, &written, &err);
    ck_assert_msg(status == 413, "%s: status %d, %zu bytes written", what, status, written);
    ck_assert_msg(strstr(err.msg, "larger than 65536 bytes (the server's --max-answer)"), "%s: %s",
                  what, err.msg);
    /* The last picture drawn takes at most what was left, but is longer
     * once quoted as a JSON string. */
    ck_assert_msg(written <= CAP + one_picture + SLACK,
                  "%s: %zu bytes written for a cap of %d (one picture %zu)", what, written, CAP,
                  one_picture);
}

/* One sentence of 16 hypotheses with pictures (about 13 kB each), a list
 * of sentences with and without pictures, hypotheses of a model without
 * alignments, OpenNMT-py's lists: each stops at the cap. */
START_TEST(every_format_stops_at_the_cap)
{
    enum { SENTENCES = 2000 };
    rs_translated one = translation(16, 3, 3), *many = calloc(SENTENCES, sizeof *many);
    ck_assert_ptr_nonnull(many);
    const char *texts[SENTENCES];
    for (int i = 0; i < SENTENCES; i++) {
        many[i] = translation(2, 3, 3);
        texts[i] = "a sentence as sent";
    }
    const hypotheses_answer pictures = {1, 0, 1, CAP}, records = {0, 0, 1, CAP},
                            none = {0, 0, 0, CAP};
    /* Each picture alone fits: what stops them is the whole answer's cap. */
    rs_error err;
    size_t written;
    translations_answer ta = {"m", texts, 1, 0, 0, 16, 16, pictures};
    rs_translated first = one;
    first.count = 1;
    ck_assert_msg(!answer(&first, &ta, &written, &err), "%s", err.msg);
    ck_assert_uint_gt(written, 4000);
    ck_assert_uint_lt(written, CAP / 4);
    one_picture = written;

    expect_stopped(&one, &ta, "16 hypotheses with pictures");
    ta.count = SENTENCES;
    ta.batch = 1;
    expect_stopped(many, &ta, "a list with pictures");
    ta.ha = records;
    expect_stopped(many, &ta, "a list with alignment records");
    ta.ha = none;
    expect_stopped(many, &ta, "a list from a model without alignments");
    ta.onmt = 1;
    expect_stopped(many, &ta, "OpenNMT-py's lists");
    ta.onmt = 0;
    ta.batch = 0;
    ta.count = 1;
    rs_translated lots = translation(2000, 3, 3);
    expect_stopped(&lots, &ta, "2,000 hypotheses from a model without alignments");
    rs_translated_free(&lots);
    rs_translated_free(&one);
    for (int i = 0; i < SENTENCES; i++)
        rs_translated_free(&many[i]);
    free(many);
}
END_TEST

/* An alignment (and its picture) takes what is left of the answer, not a
 * whole cap of its own: /api/align's answer, with its header written,
 * stops at the cap. */
START_TEST(an_alignment_takes_what_is_left)
{
    rs_translated t = translation(1, 3, 3);
    const rs_hypothesis *h = &t.hyps[0];
    for (int filled = 0; filled <= CAP - 2000; filled += CAP - 2000) {
        char *text = NULL;
        size_t size = 0;
        FILE *out = open_memstream(&text, &size);
        ck_assert_ptr_nonnull(out);
        for (int i = 0; i < filled; i++)
            putc(' ', out);
        const alignment_answer aa = {0, 1, 0, "a title", CAP};
        rs_error err = {{0}};
        const int rc = rs_serve_write_alignment(out, (const char *const *)h->tokens, h->count,
                                                (const char *const *)t.source_tokens,
                                                t.source_count, h->alignment, &aa, &err);
        ck_assert_int_eq(fclose(out), 0);
        if (!filled) {
            ck_assert_msg(rc == 0, "%s", err.msg);
            ck_assert_uint_gt(size, 4000);
        } else {
            ck_assert_msg(rc == -1 && strstr(err.msg, "--max-answer"), "%zu bytes: %s", size,
                          err.msg);
            ck_assert_uint_le(size, CAP);
        }
        free(text);
    }
    rs_translated_free(&t);
}
END_TEST

Suite *answer_cap_suite(void)
{
    Suite *s = suite_create("answer_cap");
    TCase *tc = tcase_create("answer_cap");
    tcase_add_test(tc, every_format_stops_at_the_cap);
    tcase_add_test(tc, an_alignment_takes_what_is_left);
    suite_add_tcase(s, tc);
    return s;
}
