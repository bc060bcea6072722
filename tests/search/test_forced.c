/* Forced decoding (src/search/forced.c): per-token log-probabilities that sum to the
 * pair's, alignments whose rows are distributions, ensembles as the mean of
 * their members, the source-length cut, and raw text through the codec. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/forced.h"
#include "gradcheck.h"
#include "roads.h"

static void make_model(rs_model *m, unsigned seed)
{
    rs_config cfg;
    rs_error err = {{0}};
    rs_config_defaults(&cfg);
    cfg.model.src_vocab = RS_RESERVED + 3, cfg.model.tgt_vocab = RS_RESERVED + 3;
    cfg.model.emb = 4, cfg.model.hidden = 5, cfg.model.att = 6, cfg.model.maxout = 3;
    ck_assert_msg(!rs_model_alloc(m, &cfg, &err), "%s", err.msg);
    ck_assert(!rs_vocab_init(&m->src_vocab, &err) && !rs_vocab_init(&m->tgt_vocab, &err));
    static const char *const src[] = {"das", "Haus", "ist"}, *const tgt[] = {"the", "house", "is"};
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(rs_vocab_add(&m->src_vocab, src[i], &err), RS_RESERVED + i);
        ck_assert_int_eq(rs_vocab_add(&m->tgt_vocab, tgt[i], &err), RS_RESERVED + i);
    }
    fill_uniform(m->params, m->layout.total, 1.0f, seed);
}

static int s0[] = {4, 5, 6}, s1[] = {6}, t0[] = {4, 5, 6, 4}, t1[] = {5};
static int *srcs[] = {s0, s1}, *tgts[] = {t0, t1}, src_len[] = {3, 1}, tgt_len[] = {4, 1};
static int line[] = {0, 1};
static const rs_dataset data = {
    .count = 2, .src = srcs, .tgt = tgts, .src_len = src_len, .tgt_len = tgt_len, .line = line};

START_TEST(tokens_sum_to_the_pair_and_rows_are_distributions)
{
    rs_model m;
    rs_error err = {{0}};
    make_model(&m, 1);
    const rs_ready member_ready = rs_ready_plain(&m), *member = &member_ready;
    rs_forced f[2];
    ck_assert_msg(
        !rs_forced_decode(&member, 1, &data, 2, RS_FORCED_TOKENS | RS_FORCED_ALIGNMENT, f, &err),
        "%s", err.msg);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(f[i].src_len, src_len[i]);
        ck_assert_int_eq(f[i].tgt_len, tgt_len[i]);
        double sum = 0.0;
        for (int t = 0; t <= tgt_len[i]; t++) {
            ck_assert(f[i].token_logprobs[t] < 0.0f);
            sum += f[i].token_logprobs[t];
            double row = 0.0;
            for (int j = 0; j <= src_len[i]; j++)
                row += f[i].alignment[t * (src_len[i] + 1) + j];
            ck_assert_double_eq_tol(row, 1.0, 1e-5);
        }
        ck_assert_double_eq_tol(sum, f[i].logprob, 1e-9);
        rs_forced_free(&f[i]);
    }
    /* Without flags only the totals are kept. */
    ck_assert(!rs_forced_decode(&member, 1, &data, 1, 0, f, &err));
    ck_assert_ptr_null(f[0].token_logprobs);
    ck_assert_ptr_null(f[0].alignment);
    rs_forced_free(&f[0]);
    rs_forced_free(&f[1]);
    rs_model_free(&m);
}
END_TEST

/* A pair whose target is longer than a batch's steps (batch_size · 400 rows)
 * scores in a batch of its own, the pairs around it in theirs: the same
 * scores (to rounding) as each pair scored alone, in a workspace sized by
 * its batch, not by the longest pair times the batch size. */
START_TEST(a_long_target_scores_in_a_batch_of_its_own)
{
    enum { COUNT = 5, LONG = 1500 };
    rs_model m;
    rs_error err = {{0}};
    make_model(&m, 3);
    const rs_ready member_ready = rs_ready_plain(&m), *member = &member_ready;
    static int long_tgt[LONG];
    for (int t = 0; t < LONG; t++)
        long_tgt[t] = RS_RESERVED + t % 3;
    int *src[COUNT] = {s0, s1, s0, s1, s0}, *tgt[COUNT] = {t0, long_tgt, t1, t0, t1};
    int sl[COUNT] = {3, 1, 3, 1, 3}, tl[COUNT] = {4, LONG, 1, 4, 1}, ln[COUNT] = {0, 1, 2, 3, 4};
    const rs_dataset mixed = {
        .count = COUNT, .src = src, .tgt = tgt, .src_len = sl, .tgt_len = tl, .line = ln};
    rs_forced together[COUNT];
    ck_assert_msg(!rs_forced_decode(&member, 1, &mixed, 4, 0, together, &err), "%s", err.msg);
    for (int i = 0; i < COUNT; i++) {
        const rs_dataset one = {.count = 1,
                                .src = &src[i],
                                .tgt = &tgt[i],
                                .src_len = &sl[i],
                                .tgt_len = &tl[i],
                                .line = &ln[i]};
        rs_forced alone;
        ck_assert(!rs_forced_decode(&member, 1, &one, 4, 0, &alone, &err));
        roads_expect_close_value("a pair in its batch and alone", together[i].logprob,
                                 alone.logprob);
        rs_forced_free(&alone);
        rs_forced_free(&together[i]);
    }
    rs_model_free(&m);
}
END_TEST

START_TEST(an_ensemble_is_the_mean_of_its_members)
{
    rs_model a, b;
    rs_error err = {{0}};
    make_model(&a, 2);
    make_model(&b, 3);
    const rs_ready pair_ready[] = {rs_ready_plain(&a), rs_ready_plain(&b)};
    const rs_ready *pair[2] = {&pair_ready[0], &pair_ready[1]};
    rs_forced fa[2], fb[2], fe[2];
    ck_assert(!rs_forced_decode(&pair[0], 1, &data, 2, RS_FORCED_TOKENS, fa, &err));
    ck_assert(!rs_forced_decode(&pair[1], 1, &data, 2, RS_FORCED_TOKENS, fb, &err));
    ck_assert(!rs_forced_decode(pair, 2, &data, 2, RS_FORCED_TOKENS, fe, &err));
    ck_assert(fabs(fa[0].logprob - fb[0].logprob) > 1e-3); /* the members do differ */
    for (int i = 0; i < 2; i++) {
        for (int t = 0; t <= tgt_len[i]; t++)
            ck_assert_float_eq_tol(fe[i].token_logprobs[t],
                                   0.5f * (fa[i].token_logprobs[t] + fb[i].token_logprobs[t]),
                                   1e-5f);
        ck_assert_double_eq_tol(fe[i].logprob, 0.5 * (fa[i].logprob + fb[i].logprob), 1e-4);
        rs_forced_free(&fa[i]);
        rs_forced_free(&fb[i]);
        rs_forced_free(&fe[i]);
    }
    rs_model_free(&a);
    rs_model_free(&b);
}
END_TEST

START_TEST(long_sources_are_cut_and_text_goes_through_the_codec)
{
    rs_tokens src = {0}, tgt = {0};
    rs_error err = {{0}};
    ck_assert(!rs_tokens_push(&src, "a", 1, &err) && !rs_tokens_push(&src, "b", 1, &err) &&
              !rs_tokens_push(&src, "c", 1, &err));
    ck_assert(!rs_tokens_push(&tgt, "x", 1, &err));
    rs_tokenized tok = {.count = 1, .src = &src, .tgt = &tgt};
    int cut;
    rs_cut_sources(&tok, 2, &cut);
    ck_assert_int_eq(cut, 1);
    ck_assert_int_eq(src.count, 2);
    ck_assert_str_eq(src.tokens[1], "b");
    rs_cut_sources(&tok, 5, &cut);
    ck_assert_int_eq(cut, 0);
    rs_tokens_free(&src);
    rs_tokens_free(&tgt);

    rs_model m;
    rs_codec codec;
    make_model(&m, 4);
    ck_assert(!rs_codec_for_model(&codec, &m, &err));
    const rs_ready member_ready = rs_ready_plain(&m), *member = &member_ready;
    rs_forced f;
    rs_tokens st, tt;
    const rs_forced_pair pair = {"das Haus ist", "the house is the", 250, 0};
    f.cut = -1;
    ck_assert_msg(!rs_forced_text(&member, 1, &codec, &pair, &f, &st, &tt, &err), "%s", err.msg);
    ck_assert_int_eq(st.count, 3);
    ck_assert_int_eq(tt.count, 4);
    ck_assert_int_eq(f.cut, 0);
    rs_forced one[2];
    ck_assert(!rs_forced_decode(&member, 1, &data, 2, 0, one, &err));
    /* The same ids as pair 0, alone against in a batch of two: two roads. */
    roads_expect_close_value("pair 0 alone and in its batch", f.logprob, one[0].logprob);
    rs_forced_free(&one[0]);
    rs_forced_free(&one[1]);
    rs_forced_free(&f);
    rs_tokens_free(&st);
    rs_tokens_free(&tt);

    /* The length rule: the source cut to max_src_len tokens, the cut counted. */
    const rs_forced_pair two = {"das Haus ist", "the house is the", 2, 0};
    ck_assert_msg(!rs_forced_text(&member, 1, &codec, &two, &f, &st, &tt, &err), "%s", err.msg);
    ck_assert_int_eq(st.count, 2);
    ck_assert_int_eq(f.src_len, 2);
    ck_assert_int_eq(f.cut, 1);
    rs_forced_free(&f);
    rs_tokens_free(&st);
    rs_tokens_free(&tt);
    /* An empty source is refused, saying so. */
    const rs_forced_pair empty = {"  ", "the", 250, 0};
    ck_assert(rs_forced_text(&member, 1, &codec, &empty, &f, &st, &tt, &err) != 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "empty"));
    rs_codec_free(&codec);
    rs_model_free(&m);
}
END_TEST

Suite *forced_suite(void)
{
    Suite *s = suite_create("forced");
    TCase *tc = tcase_create("forced");
    tcase_add_test(tc, tokens_sum_to_the_pair_and_rows_are_distributions);
    tcase_add_test(tc, an_ensemble_is_the_mean_of_its_members);
    tcase_add_test(tc, a_long_target_scores_in_a_batch_of_its_own);
    tcase_add_test(tc, long_sources_are_cut_and_text_goes_through_the_codec);
    suite_add_tcase(s, tc);
    return s;
}
