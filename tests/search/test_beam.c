/* Beam search (src/search/beam.c) on tiny random models: a beam of one is greedy
 * decoding; every returned hypothesis has the log p that teacher forcing
 * gives it and the normalised score log p / (length with </s>)^α; the n-best
 * list is ranked and free of duplicates; a batch decodes as its sentences one
 * at a time. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "search/beam.h"
#include "tinymodel.h"

enum { SENTENCES = TINY_SENTENCES, K = 3, MAX_LEN = 8 };

static int same_ids(const rs_hypothesis *a, const rs_hypothesis *b)
{
    return a->count == b->count &&
           (a->count == 0 || memcmp(a->ids, b->ids, sizeof(int) * a->count) == 0);
}

START_TEST(beam_of_one_is_greedy)
{
    rs_model model;
    rs_error err;
    tiny_model_of_kind(&model, tiny_kinds[_i]);
    rs_decoder dec;
    rs_beam_search bs;
    const rs_ready member_ready = rs_ready_plain(&model), *member = &member_ready;
    ck_assert(rs_decoder_init(&dec, &member, 1, SENTENCES, 1, 8, &err) == 0);
    ck_assert(rs_beam_init(&bs, &member, 1, SENTENCES, 1, 8, &err) == 0);
    rs_hypothesis greedy[SENTENCES], beam[SENTENCES];
    const rs_beam_options opt = {
        .beam = 1, .length_penalty = 0.0f, .n_best = 1, .max_len = MAX_LEN};
    ck_assert(rs_greedy(&dec, SENTENCES, tiny_srcs, tiny_src_counts, MAX_LEN, 0, greedy, &err) ==
              0);
    ck_assert_msg(rs_beam_translate(&bs, SENTENCES, tiny_srcs, tiny_src_counts, &opt, beam, &err) ==
                      0,
                  "%s", err.msg);
    for (int b = 0; b < SENTENCES; b++) {
        ck_assert_msg(same_ids(&greedy[b], &beam[b]),
                      "%s sentence %d: beam 1 (length %d) differs from "
                      "greedy (length %d)",
                      rs_attention_names[model.cfg.attention], b, beam[b].count, greedy[b].count);
        ck_assert_int_eq(beam[b].finished, greedy[b].finished);
        ck_assert_double_eq_tol(beam[b].logprob, greedy[b].logprob, 1e-5 * fabs(greedy[b].logprob));
        rs_hypothesis_free(&greedy[b]);
        rs_hypothesis_free(&beam[b]);
    }
    rs_beam_free(&bs);
    rs_decoder_free(&dec);
    rs_model_free(&model);
}
END_TEST

START_TEST(n_best_scores_ranks_and_batching)
{
    rs_model model;
    rs_error err;
    tiny_model_of_kind(&model, tiny_kinds[_i % TINY_KINDS]);
    const float alpha = _i < TINY_KINDS ? 0.0f : 1.0f;
    rs_beam_search bs;
    const rs_ready member_ready = rs_ready_plain(&model), *member = &member_ready;
    ck_assert(rs_beam_init(&bs, &member, 1, SENTENCES, K, 8, &err) == 0);
    rs_hypothesis out[SENTENCES * K];
    const rs_beam_options opt = {
        .beam = K, .length_penalty = alpha, .n_best = K, .max_len = MAX_LEN};
    ck_assert(rs_beam_translate(&bs, SENTENCES, tiny_srcs, tiny_src_counts, &opt, out, &err) == 0);
    for (int b = 0; b < SENTENCES; b++) {
        const rs_hypothesis *hyp = out + b * K;
        ck_assert_msg(hyp[0].ids != NULL, "sentence %d: no hypothesis", b);
        for (int r = 0; r < K && hyp[r].ids; r++) {
            const rs_hypothesis *t = &hyp[r];
            ck_assert(t->count <= MAX_LEN && (t->finished || t->count == MAX_LEN));
            double forced = tiny_forced_logprob(&model, tiny_srcs[b], tiny_src_counts[b], t->ids,
                                                t->count, NULL);
            ck_assert_msg(fabs(t->logprob - forced) <= 1e-5 * fabs(forced) + 1e-5,
                          "%s sentence %d rank %d: beam log p %.9f, teacher-forced %.9f",
                          rs_attention_names[model.cfg.attention], b, r, t->logprob, forced);
            ck_assert_double_eq_tol(out[b * K + r].score, t->logprob / pow(t->count + 1, alpha),
                                    1e-9 * fabs(out[b * K + r].score));
            if (r > 0) {
                ck_assert_msg(out[b * K + r].score <= out[b * K + r - 1].score,
                              "sentence %d: rank %d above %d", b, r, r - 1);
                for (int q = 0; q < r; q++)
                    ck_assert_msg(!same_ids(t, &hyp[q]),
                                  "sentence %d: ranks %d and %d are the same", b, q, r);
            }
        }
    }
    /* One sentence at a time gives the same lists. */
    for (int b = 0; b < SENTENCES; b++) {
        rs_hypothesis one[K];
        ck_assert(rs_beam_translate(&bs, 1, &tiny_srcs[b], &tiny_src_counts[b], &opt, one, &err) ==
                  0);
        for (int r = 0; r < K; r++) {
            ck_assert((one[r].ids == NULL) == (out[b * K + r].ids == NULL));
            ck_assert(same_ids(&one[r], &out[b * K + r]));
            if (one[r].ids)
                ck_assert_double_eq_tol(one[r].score, out[b * K + r].score,
                                        1e-5 * fabs(one[r].score));
            rs_hypothesis_free(&one[r]);
        }
    }
    for (int i = 0; i < SENTENCES * K; i++)
        rs_hypothesis_free(&out[i]);
    rs_beam_free(&bs);
    rs_model_free(&model);
}
END_TEST

/* A search longer than the history first held (64 steps; it grows as the
 * search goes): a model that never says </s> runs every hypothesis to a limit
 * of 150 tokens; each keeps its teacher-forced log p, each alignment row is a
 * distribution, and asking for alignments changes no token. */
START_TEST(a_long_search_grows_its_history)
{
    enum { LONG = 150 };
    rs_model model;
    rs_error err;
    tiny_model_make(&model, "additive", 0.5f, -40.0f, 7);
    rs_beam_search bs;
    const rs_ready member_ready = rs_ready_plain(&model), *member = &member_ready;
    ck_assert(rs_beam_init(&bs, &member, 1, SENTENCES, K, 8, &err) == 0);
    rs_hypothesis with[SENTENCES * K], without[SENTENCES * K];
    rs_beam_options opt = {.beam = K, .n_best = K, .max_len = LONG, .want_alignment = 1};
    ck_assert_msg(!rs_beam_translate(&bs, SENTENCES, tiny_srcs, tiny_src_counts, &opt, with, &err),
                  "%s", err.msg);
    opt.want_alignment = 0;
    ck_assert_msg(
        !rs_beam_translate(&bs, SENTENCES, tiny_srcs, tiny_src_counts, &opt, without, &err), "%s",
        err.msg);
    for (int i = 0; i < SENTENCES * K; i++) {
        const rs_hypothesis *t = &with[i];
        const int b = i / K;
        ck_assert_msg(t->ids && t->count == LONG && !t->finished, "hypothesis %d: %d tokens", i,
                      t->count);
        ck_assert(same_ids(t, &without[i]) && without[i].alignment == NULL);
        double forced =
            tiny_forced_logprob(&model, tiny_srcs[b], tiny_src_counts[b], t->ids, t->count, NULL);
        ck_assert_msg(fabs(t->logprob - forced) <= 1e-5 * fabs(forced),
                      "hypothesis %d: beam log p %.9f, teacher-forced %.9f", i, t->logprob, forced);
        const int S = t->columns;
        for (int step = 0; step <= t->count; step++) {
            double sum = 0.0;
            for (int j = 0; j < S; j++) {
                const float a = t->alignment[(size_t)step * S + j];
                ck_assert(a >= 0.0f && a <= 1.0f);
                sum += a;
            }
            ck_assert_msg(fabs(sum - 1.0) < 1e-5, "hypothesis %d step %d: weights sum to %.9f", i,
                          step, sum);
        }
        rs_hypothesis_free(&with[i]);
        rs_hypothesis_free(&without[i]);
    }
    rs_beam_free(&bs);
    rs_model_free(&model);
}
END_TEST

Suite *beam_suite(void)
{
    Suite *s = suite_create("beam");
    TCase *tc = tcase_create("beam search");
    tcase_add_loop_test(tc, beam_of_one_is_greedy, 0, TINY_KINDS);
    /* Each kind without and with length normalisation. */
    tcase_add_loop_test(tc, n_best_scores_ranks_and_batching, 0, 2 * TINY_KINDS);
    tcase_add_test(tc, a_long_search_grows_its_history);
    suite_add_tcase(s, tc);
    return s;
}
