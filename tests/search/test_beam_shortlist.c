/* Beam search over a lexical shortlist does not end when K hypotheses have
 * finished while a live one can still beat them (search/beam.c): over a
 * shortlist of few words, </s> ranks among the K best extensions at every
 * step, and the K finished first were truncations (dates, lex,0,2: BLEU 77
 * at beam 3 against 98 greedy). Without a shortlist the search is the one
 * the reference twin checks, unchanged. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "search/beam.h"
#include "search/lexicon.h"
#include "tinymodel.h"

enum { WORD = RS_RESERVED, LIMIT = 12, K = 3 };

/* A model whose every step gives the same distribution: all weights 0 but
 * the output bias, word 4 at 5, </s> at 3, the others at -10: p(word) ≈
 * 0.88, p(</s>) ≈ 0.12, whatever came before. Ranked by log p / length
 * (α = 1), the longer a run of the word before </s>, the better: the best is
 * the longest the length limit allows. */
static void steady_model(rs_model *m)
{
    tiny_model_make(m, "additive", 0.5f, 0.0f, 1);
    memset(m->params, 0, m->layout.total * sizeof *m->params);
    for (int v = 0; v < m->cfg.tgt_vocab; v++)
        m->w.out_bw[v] = v == WORD ? 5.0f : v == RS_EOS ? 3.0f : -10.0f;
}

/* The beam's best hypothesis of source {4, 5} with the shortlist sl (lex
 * NULL: none). */
static rs_hypothesis best_of(const rs_model *m, const rs_shortlist *sl, float alpha)
{
    const rs_ready plain = rs_ready_plain(m), *member = &plain;
    rs_beam_search bs;
    rs_error err;
    ck_assert(!rs_beam_init(&bs, &member, 1, 1, K, 8, &err));
    ck_assert_msg(!sl->lex || !rs_decoder_use_shortlist(&bs.dec, sl, &err), "%s", err.msg);
    static const int src[] = {4, 5};
    const int *srcs[] = {src}, count = 2;
    const rs_beam_options bo = {.beam = K, .length_penalty = alpha, .n_best = 1, .max_len = LIMIT};
    rs_hypothesis h;
    ck_assert_msg(!rs_beam_translate(&bs, 1, srcs, &count, &bo, &h, &err), "%s", err.msg);
    rs_beam_free(&bs);
    return h;
}

START_TEST(a_shortlist_search_goes_on_while_a_live_hypothesis_can_win)
{
    rs_model m;
    steady_model(&m);
    /* An empty table: the shortlist is the first 6 target words (the
     * reserved ones, the word, and one more). */
    int start[11] = {0};
    rs_lexicon lex = {10, 12, start, NULL, NULL};
    const rs_shortlist none = {0}, few = {&lex, 6, 0};
    /* Without a shortlist, as ever: the third </s> ends the search, at
     * "word word </s>". */
    rs_hypothesis h = best_of(&m, &none, 1.0f);
    ck_assert_int_eq(h.count, 2);
    rs_hypothesis_free(&h);
    /* With one: the word until the limit, the best by log p / length. */
    h = best_of(&m, &few, 1.0f);
    ck_assert_int_eq(h.count, LIMIT);
    for (int i = 0; i < h.count; i++)
        ck_assert_int_eq(h.ids[i], WORD);
    const double per_word = log(1 / (1 + exp(-2.0) + 4 * exp(-15.0)));
    ck_assert_double_eq_tol(h.logprob, LIMIT * per_word + log(exp(3.0) / (exp(5.0) + exp(3.0))),
                            1e-3);
    rs_hypothesis_free(&h);
    /* Ranked by log p alone (α = 0) a live hypothesis cannot rise above the
     * finished ones, which stand: "</s>" alone is the best, with or without. */
    for (int with = 0; with < 2; with++) {
        h = best_of(&m, with ? &few : &none, 0.0f);
        ck_assert_int_eq(h.count, 0);
        rs_hypothesis_free(&h);
    }
    rs_model_free(&m);
}
END_TEST

Suite *beam_shortlist_suite(void)
{
    Suite *s = suite_create("beam_shortlist");
    TCase *tc = tcase_create("beam_shortlist");
    tcase_add_test(tc, a_shortlist_search_goes_on_while_a_live_hypothesis_can_win);
    suite_add_tcase(s, tc);
    return s;
}
