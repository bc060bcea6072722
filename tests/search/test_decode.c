/* Greedy decoding (src/search/decode.c) on tiny random models of each attention
 * kind: every output token is the most probable one under teacher forcing of
 * the output itself (so the inference step and the training forward pass
 * compute the same function), the reported log p equals the teacher-forced
 * one, a batch decodes as its sentences one at a time, and the length limit
 * forces </s>. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/decode.h"
#include "tinymodel.h"

enum { SENTENCES = TINY_SENTENCES, MAX_LEN = 10 };

/* out[b] is the argmax chain of its own teacher-forced distributions, and its
 * log p is theirs. Returns how many of the outputs finished with </s>. */
static int check_against_forcing(const rs_model *model, const rs_hypothesis *out, int max_len)
{
    const int V = model->cfg.tgt_vocab;
    int finished = 0;
    for (int b = 0; b < SENTENCES; b++) {
        const rs_hypothesis *t = &out[b];
        ck_assert(t->count >= 0 && t->count <= max_len);
        ck_assert_int_eq(t->columns, tiny_src_counts[b] + 1);
        ck_assert_msg(t->finished || t->count == max_len, "unfinished at length %d < %d", t->count,
                      max_len);
        finished += t->finished;
        float *probs = malloc(sizeof(float) * (size_t)(t->count + 1) * V);
        ck_assert(probs != NULL);
        double forced =
            tiny_forced_logprob(model, tiny_srcs[b], tiny_src_counts[b], t->ids, t->count, probs);
        ck_assert_msg(fabs(t->logprob - forced) <= 1e-5 * fabs(forced) + 1e-6,
                      "%s sentence %d: greedy log p %.9f, teacher-forced %.9f",
                      rs_attention_names[model->cfg.attention], b, t->logprob, forced);
        for (int step = 0; step <= t->count; step++) {
            int chosen = step < t->count ? t->ids[step] : RS_EOS;
            ck_assert(chosen >= RS_UNK && chosen < V && chosen != RS_BOS);
            ck_assert(step == t->count || chosen != RS_EOS);
            if (step == max_len)
                continue; /* </s> was forced */
            const float *p = probs + (size_t)step * V;
            for (int v = RS_UNK; v < V; v++)
                ck_assert_msg(v == RS_BOS || p[v] <= p[chosen] * (1.0f + 1e-5f),
                              "%s sentence %d step %d: chose %d (p %.6g), %d has p %.6g",
                              rs_attention_names[model->cfg.attention], b, step, chosen, p[chosen],
                              v, p[v]);
        }
        free(probs);
    }
    return finished;
}

START_TEST(greedy_is_the_argmax_of_teacher_forcing)
{
    rs_model model;
    rs_decoder dec;
    rs_error err;
    tiny_model_of_kind(&model, tiny_kinds[_i]);
    const rs_ready member_ready = rs_ready_plain(&model), *member = &member_ready;
    ck_assert(rs_decoder_init(&dec, &member, 1, SENTENCES, 1, 8, &err) == 0);
    rs_hypothesis out[SENTENCES];
    ck_assert_msg(rs_greedy(&dec, SENTENCES, tiny_srcs, tiny_src_counts, MAX_LEN, 0, out, &err) ==
                      0,
                  "%s", err.msg);
    int finished = check_against_forcing(&model, out, MAX_LEN);
    ck_assert_msg(finished > 0 && finished < SENTENCES,
                  "%s: %d of %d finished (the model no longer "
                  "mixes stopped and cut-off outputs: choose another seed)",
                  rs_attention_names[model.cfg.attention], finished, SENTENCES);
    /* One at a time: the same tokens and scores. */
    for (int b = 0; b < SENTENCES; b++) {
        rs_hypothesis one;
        ck_assert(rs_greedy(&dec, 1, &tiny_srcs[b], &tiny_src_counts[b], MAX_LEN, 0, &one, &err) ==
                  0);
        ck_assert_int_eq(one.count, out[b].count);
        ck_assert_int_eq(one.finished, out[b].finished);
        for (int k = 0; k < one.count; k++)
            ck_assert_int_eq(one.ids[k], out[b].ids[k]);
        ck_assert_double_eq_tol(one.logprob, out[b].logprob, 1e-5 * fabs(one.logprob));
        rs_hypothesis_free(&one);
    }
    for (int b = 0; b < SENTENCES; b++)
        rs_hypothesis_free(&out[b]);
    rs_decoder_free(&dec);
    rs_model_free(&model);
}
END_TEST

/* Without scores (translate's plain output): the same words, finished the
 * same way, and logprob and score left 0; the step leaves lse alone. */
START_TEST(greedy_without_scores_chooses_the_same_words)
{
    rs_model model;
    rs_decoder dec;
    rs_error err;
    tiny_model_of_kind(&model, tiny_kinds[_i]);
    const rs_ready member_ready = rs_ready_plain(&model), *member = &member_ready;
    ck_assert(rs_decoder_init(&dec, &member, 1, SENTENCES, 1, 8, &err) == 0);
    ck_assert_int_eq(dec.scores, 1);
    rs_hypothesis scored[SENTENCES], plain[SENTENCES];
    ck_assert(rs_greedy(&dec, SENTENCES, tiny_srcs, tiny_src_counts, MAX_LEN, 0, scored, &err) ==
              0);
    dec.scores = 0;
    dec.member[0].lse[0] = 12345.0f;
    ck_assert(rs_greedy(&dec, SENTENCES, tiny_srcs, tiny_src_counts, MAX_LEN, 0, plain, &err) == 0);
    ck_assert(dec.member[0].lse[0] == 12345.0f);
    for (int b = 0; b < SENTENCES; b++) {
        ck_assert_int_eq(plain[b].count, scored[b].count);
        ck_assert_int_eq(plain[b].finished, scored[b].finished);
        for (int k = 0; k < plain[b].count; k++)
            ck_assert_int_eq(plain[b].ids[k], scored[b].ids[k]);
        ck_assert(scored[b].logprob < 0.0);
        ck_assert(plain[b].logprob == 0.0 && plain[b].score == 0.0);
        rs_hypothesis_free(&plain[b]);
        rs_hypothesis_free(&scored[b]);
    }
    rs_decoder_free(&dec);
    rs_model_free(&model);
}
END_TEST

START_TEST(length_limit_forces_eos)
{
    rs_model model;
    rs_decoder dec;
    rs_error err;
    tiny_model_make(&model, "additive", 0.5f, 0.0f, 31); /* never stops by itself */
    const rs_ready member_ready = rs_ready_plain(&model), *member = &member_ready;
    ck_assert(rs_decoder_init(&dec, &member, 1, SENTENCES, 1, 8, &err) == 0);
    rs_hypothesis out[SENTENCES];
    for (int max_len = 1; max_len <= 3; max_len++) {
        ck_assert(rs_greedy(&dec, SENTENCES, tiny_srcs, tiny_src_counts, max_len, 0, out, &err) ==
                  0);
        check_against_forcing(&model, out, max_len);
        for (int b = 0; b < SENTENCES; b++) {
            /* Cut off: max_len tokens, then a forced </s> (its log p counted). */
            ck_assert_int_eq(out[b].count, max_len);
            ck_assert_int_eq(out[b].finished, 0);
            rs_hypothesis_free(&out[b]);
        }
    }
    /* max_len 0: each sentence's own limit, 2 · its length + 10. */
    ck_assert_int_eq(rs_output_limit(0, 5), 20);
    ck_assert_int_eq(rs_output_limit(7, 5), 7);
    ck_assert(rs_greedy(&dec, SENTENCES, tiny_srcs, tiny_src_counts, 0, 0, out, &err) == 0);
    for (int b = 0; b < SENTENCES; b++) {
        ck_assert_int_eq(out[b].count, 2 * tiny_src_counts[b] + 10);
        ck_assert_int_eq(out[b].finished, 0);
        rs_hypothesis_free(&out[b]);
    }
    rs_decoder_free(&dec);
    rs_model_free(&model);
}
END_TEST

/* An ensemble's weights: normalised to sum 1, equal ones exactly 1/K (the
 * unweighted mean's factor), and after a step log p = Σ_k w_k log p_k. */
START_TEST(ensemble_weights_are_normalised)
{
    rs_model a, b;
    rs_decoder dec;
    rs_error err;
    tiny_model_make(&a, "additive", 0.5f, 0.0f, 31);
    tiny_model_make(&b, "additive", 0.5f, 0.0f, 32);
    const rs_ready members_ready[] = {rs_ready_plain(&a), rs_ready_plain(&b), rs_ready_plain(&a)};
    const rs_ready *members[3] = {&members_ready[0], &members_ready[1], &members_ready[2]};
    ck_assert(rs_decoder_init(&dec, members, 3, SENTENCES, 1, 8, &err) == 0);
    for (int k = 0; k < 3; k++)
        ck_assert(dec.weight[k] == 1.0f / 3.0f);
    static const float equal[3] = {0.7f, 0.7f, 0.7f}, some[3] = {2.0f, 6.0f, 0.0f};
    ck_assert(rs_decoder_weigh(&dec, equal, &err) == 0);
    for (int k = 0; k < 3; k++)
        ck_assert(dec.weight[k] == 1.0f / 3.0f);
    ck_assert(rs_decoder_weigh(&dec, some, &err) == 0);
    ck_assert(dec.weight[0] == 0.25f && dec.weight[1] == 0.75f && dec.weight[2] == 0.0f);
    /* One step from s_0: the weighted sum of the members' log-softmax. */
    ck_assert(rs_decoder_start(&dec, SENTENCES, tiny_srcs, tiny_src_counts, 1, &err) == 0);
    int prev[SENTENCES];
    for (int r = 0; r < SENTENCES; r++)
        prev[r] = RS_BOS;
    rs_decoder_step(&dec, prev);
    const int V = a.cfg.tgt_vocab;
    for (int r = 0; r < SENTENCES; r++)
        for (int v = 0; v < V; v++) {
            const float *la = dec.member[0].logits + r * V, *lb = dec.member[1].logits + r * V;
            const double want =
                0.25 * (la[v] - dec.member[0].lse[r]) + 0.75 * (lb[v] - dec.member[1].lse[r]);
            ck_assert_double_eq_tol(dec.logits[r * V + v] - dec.lse[r], want, 1e-5);
        }
    static const float nan_weight[3] = {1.0f, NAN, 1.0f}, zeros[3] = {0};
    ck_assert(rs_decoder_weigh(&dec, nan_weight, &err) != 0);
    ck_assert(rs_decoder_weigh(&dec, zeros, &err) != 0);
    rs_decoder_free(&dec);
    rs_model_free(&a);
    rs_model_free(&b);
}
END_TEST

START_TEST(weight_lists_are_decimal_numbers)
{
    float w[3];
    int n = 0;
    rs_error err;
    ck_assert_int_eq(rs_ensemble_weights_parse("0.7,3e-1", w, &n, 3, &err), 0);
    ck_assert_int_eq(rs_ensemble_weights_parse("2", w, &n, 3, &err), 0); /* a file's next item */
    ck_assert(n == 3 && w[0] == 0.7f && w[1] == 0.3f && w[2] == 2.0f);
    ck_assert_int_ne(rs_ensemble_weights_parse("1", w, &n, 3, &err), 0);
    ck_assert_str_eq(err.msg, "more than 3 weights");
    static const char *const bad[] = {"0x1", "inf", "-1", "1,,2", "", " 1", "1,a"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        n = 0;
        ck_assert_msg(rs_ensemble_weights_parse(bad[i], w, &n, 3, &err) != 0, "%s", bad[i]);
        ck_assert_msg(strstr(err.msg, "is not a list of numbers >= 0 separated by ','"), "%s",
                      err.msg);
    }
}
END_TEST

Suite *decode_suite(void)
{
    Suite *s = suite_create("decode");
    TCase *tc = tcase_create("greedy");
    tcase_add_loop_test(tc, greedy_is_the_argmax_of_teacher_forcing, 0, TINY_KINDS);
    tcase_add_loop_test(tc, greedy_without_scores_chooses_the_same_words, 0, TINY_KINDS);
    tcase_add_test(tc, length_limit_forces_eos);
    tcase_add_test(tc, ensemble_weights_are_normalised);
    tcase_add_test(tc, weight_lists_are_decimal_numbers);
    suite_add_tcase(s, tc);
    return s;
}
