/* Training's dev evaluation (src/train/evaluate.c): the exact-match rate and
 * BLEU of rs_dev_translate are those computed here from the translation
 * pipeline's own outputs of the same sentences (decoded one at a time) and
 * eval/bleu.h, whatever the batch size; references are found by the pair's
 * line in the dev file; without a codec or references BLEU is -1. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/bleu.h"
#include "search/translate.h"
#include "tinymodel.h"
#include "train/evaluate.h"

static const char *const src_words[] = {"das", "Haus", "ist", "klein", ".", "rot"};
static const char *const tgt_words[] = {"the", "house", "is", "small", "."};
enum { SRC_WORDS = 6, TGT_WORDS = 5 };

/* A tiny random model over the words above, </s> made unlikely so that its
 * outputs have some length. */
static void make_model(rs_model *m)
{
    const tiny_shape shape = {RS_RESERVED + SRC_WORDS, RS_RESERVED + TGT_WORDS, 4, 6, 5, 3,
                              RS_ATT_ADDITIVE};
    rs_error err = {{0}};
    tiny_model_shaped(m, &shape, 1.0f, 17);
    ck_assert(!rs_vocab_init(&m->src_vocab, &err));
    ck_assert(!rs_vocab_init(&m->tgt_vocab, &err));
    for (int i = 0; i < SRC_WORDS; i++)
        ck_assert_int_eq(rs_vocab_add(&m->src_vocab, src_words[i], &err), RS_RESERVED + i);
    for (int i = 0; i < TGT_WORDS; i++)
        ck_assert_int_eq(rs_vocab_add(&m->tgt_vocab, tgt_words[i], &err), RS_RESERVED + i);
    m->w.out_bw[RS_EOS] -= 3.0f;
}

enum { R = RS_RESERVED, PAIRS = 6, LINES = 8 };
static int s0[] = {R + 0, R + 1, R + 2, R + 3, R + 4}, s1[] = {R + 0, R + 1},
           s2[] = {R + 5, R + 5, R + 0, R + 1, R + 2}, s3[] = {R + 2}, s4[] = {R + 3, R + 4, R + 5},
           s5[] = {R + 1, R + 2, R + 5, R + 4};
static int *sources[PAIRS] = {s0, s1, s2, s3, s4, s5};
static int source_len[PAIRS] = {5, 2, 5, 1, 3, 4};

/* The pipeline's translation of each source, decoded alone. */
static void translate_alone(const rs_model *m, const rs_codec *codec, rs_translated *out)
{
    rs_translate_options opt;
    rs_translate_options_default(&opt);
    opt.batch_size = 1;
    rs_translator tr;
    rs_error err = {{0}};
    const rs_ready plain = rs_ready_plain(m), *member = &plain;
    ck_assert_msg(!rs_translator_init(&tr, &member, 1, codec, &opt, &err), "%s", err.msg);
    for (int i = 0; i < PAIRS; i++) {
        const rs_source one = {sources[i], source_len[i]};
        ck_assert_msg(!rs_translate_sources(&tr, 1, &one, &out[i], &err), "%s", err.msg);
        ck_assert_int_eq(out[i].count, 1);
    }
    rs_translator_free(&tr);
}

/* BLEU of the hypotheses against refs[line[i]]. */
static double bleu_of(const rs_translated *out, char *const *refs, const int *line)
{
    rs_bleu_stats stats;
    rs_bleu_result result;
    rs_error err = {{0}};
    rs_bleu_stats_init(&stats);
    for (int i = 0; i < PAIRS; i++) {
        const char *ref = refs[line[i]];
        ck_assert_msg(!rs_bleu_stats_add(&stats, out[i].hyps[0].text, &ref, 1, NULL, &err), "%s",
                      err.msg);
    }
    rs_bleu_compute(&stats, &result);
    return result.score;
}

START_TEST(exact_match_and_bleu_are_those_of_the_translations)
{
    rs_model m;
    rs_codec codec;
    rs_error err = {{0}};
    make_model(&m);
    ck_assert(!rs_codec_for_model(&codec, &m, &err));
    rs_translated out[PAIRS];
    translate_alone(&m, &codec, out);

    /* Targets: the translation itself (pairs 0, 2, 4), its last token
     * changed (1), one token longer (3), one shorter (5). */
    int tgt_ids[PAIRS][64], *tgt[PAIRS], tgt_len[PAIRS];
    for (int i = 0; i < PAIRS; i++) {
        const rs_hypothesis *h = &out[i].hyps[0];
        ck_assert_msg(h->count >= 1 && h->count < 63, "sentence %d: %d tokens", i, h->count);
        memcpy(tgt_ids[i], h->ids, sizeof(int) * (size_t)h->count);
        tgt_len[i] = h->count;
        tgt[i] = tgt_ids[i];
    }
    int *last = &tgt_ids[1][tgt_len[1] - 1];
    *last = R + (*last - R + 1) % TGT_WORDS;
    tgt_ids[3][tgt_len[3]++] = R + 0;
    tgt_len[5]--;

    /* References by line in the dev file: pairs 0..5 are lines 6 0 4 2 1 3,
     * lines 5 and 7 were left out of the dev set. */
    int line[PAIRS] = {6, 0, 4, 2, 1, 3};
    char longer[256], decoy[] = "small small small small", other[] = "the house is small .";
    char *refs[LINES];
    refs[5] = refs[7] = decoy;
    for (int i = 0; i < PAIRS; i++)
        refs[line[i]] = out[i].hyps[0].text;
    refs[line[1]] = other;
    snprintf(longer, sizeof longer, "%s the house", out[3].hyps[0].text);
    refs[line[3]] = longer;

    rs_dataset dev = {.count = PAIRS, .src = sources, .tgt = tgt};
    dev.src_len = source_len, dev.tgt_len = tgt_len, dev.line = line;
    const double expected = bleu_of(out, refs, line);
    ck_assert_msg(expected > 1 && expected < 99, "BLEU %g tells nothing", expected);
    /* References taken by pair index instead of by line would score otherwise. */
    const int by_index[PAIRS] = {0, 1, 2, 3, 4, 5};
    ck_assert_msg(fabs(bleu_of(out, refs, by_index) - expected) > 1e-3, "BLEU %g", expected);

    rs_train_options topt = {.codec = &codec, .dev_refs = refs};
    static const int batch_sizes[] = {1, 2, 4, 32};
    for (size_t k = 0; k < sizeof batch_sizes / sizeof *batch_sizes; k++) {
        double exact = -7, bleu = -7;
        ck_assert_msg(!rs_dev_translate(&m, &dev, &topt, batch_sizes[k], &exact, &bleu, &err), "%s",
                      err.msg);
        ck_assert_msg(exact == 0.5, "batch %d: exact %g, not 3 of 6", batch_sizes[k], exact);
        ck_assert_msg(fabs(bleu - expected) < 1e-9, "batch %d: BLEU %.12g, computed %.12g",
                      batch_sizes[k], bleu, expected);
    }

    /* Without a codec, or without references: exact match alone. */
    double exact = -7, bleu = -7;
    topt.codec = NULL;
    ck_assert_msg(!rs_dev_translate(&m, &dev, &topt, 3, &exact, &bleu, &err), "%s", err.msg);
    ck_assert(exact == 0.5 && bleu == -1.0);
    topt = (rs_train_options){.codec = &codec};
    exact = bleu = -7;
    ck_assert_msg(!rs_dev_translate(&m, &dev, &topt, 3, &exact, &bleu, &err), "%s", err.msg);
    ck_assert(exact == 0.5 && bleu == -1.0);

    /* Every target the translation: 1. An empty dev set: 0. */
    tgt_ids[1][tgt_len[1] - 1] = out[1].hyps[0].ids[tgt_len[1] - 1];
    tgt_len[3]--, tgt_len[5]++;
    ck_assert_msg(!rs_dev_translate(&m, &dev, &topt, 2, &exact, &bleu, &err), "%s", err.msg);
    ck_assert(exact == 1.0 && bleu == -1.0);
    dev.count = 0;
    exact = bleu = -7;
    ck_assert_msg(!rs_dev_translate(&m, &dev, &topt, 2, &exact, &bleu, &err), "%s", err.msg);
    ck_assert(exact == 0.0 && bleu == -1.0);

    for (int i = 0; i < PAIRS; i++)
        rs_translated_free(&out[i]);
    rs_codec_free(&codec);
    rs_model_free(&m);
}
END_TEST

Suite *evaluate_suite(void)
{
    Suite *s = suite_create("evaluate");
    TCase *tc = tcase_create("dev evaluation");
    tcase_add_test(tc, exact_match_and_bleu_are_those_of_the_translations);
    suite_add_tcase(s, tc);
    return s;
}
