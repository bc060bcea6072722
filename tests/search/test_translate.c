/* The translation pipeline (src/search/translate.c) and the commands built on it:
 * translate, align and training's validation give the same output; a
 * sentence's output does not depend on its batch; ensembles; empty lines;
 * the source-length limit; <unk> replacement; n-best lists; streaming. */
#include <check.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "train/evaluate.h"
#include "model/checkpoint.h"
#include "search/decode.h"
#include "search/forced.h"
#include "gradcheck.h"
#include "common/json.h"
#include "testdir.h"
#include "testprog.h"
#include "testlimit.h"
#include "testskip.h"
#include "train/train.h"
#include "search/translate.h"

static const char *const src_words[] = {"das", "Haus", "ist", "klein", ".", "rot"};
static const char *const tgt_words[] = {"the", "house", "is", "small", "."};

/* A random model (seed) over the words above; out_bias_unk > 0 makes <unk>
 * the likeliest output at every step. */
static void make_model(rs_model *m, unsigned seed, float out_bias_unk)
{
    rs_config cfg;
    rs_error err = {{0}};
    rs_config_defaults(&cfg);
    cfg.model.src_vocab = RS_RESERVED + 6, cfg.model.tgt_vocab = RS_RESERVED + 5;
    cfg.model.emb = 4, cfg.model.hidden = 6, cfg.model.att = 5, cfg.model.maxout = 3;
    ck_assert_msg(!rs_model_alloc(m, &cfg, &err), "%s", err.msg);
    ck_assert(!rs_vocab_init(&m->src_vocab, &err));
    ck_assert(!rs_vocab_init(&m->tgt_vocab, &err));
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(rs_vocab_add(&m->src_vocab, src_words[i], &err), RS_RESERVED + i);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(rs_vocab_add(&m->tgt_vocab, tgt_words[i], &err), RS_RESERVED + i);
    fill_uniform(m->params, m->layout.total, 1.0f, seed);
    m->w.out_bw[RS_UNK] += out_bias_unk;
    m->w.out_bw[RS_EOS] -= 4.0f; /* outputs of some length, not only </s> */
}

static const char *const lines[] = {
    "das Haus ist klein .",
    "das Haus",
    "",
    "rot rot rot das Haus ist klein . das Haus",
    "ist",
    "klein . rot",
    "das",
    "Haus ist rot .",
};
enum { LINES = sizeof lines / sizeof *lines };

static void translate_all(const rs_ready *const *models, int n_models, const rs_codec *codec,
                          const rs_translate_options *opt, int count, const char *const *text,
                          rs_translated *out)
{
    rs_translator tr;
    rs_error err = {{0}};
    ck_assert_msg(!rs_translator_init(&tr, models, n_models, codec, opt, &err), "%s", err.msg);
    ck_assert_msg(!rs_translate_lines(&tr, count, text, out, &err), "%s", err.msg);
    rs_translator_free(&tr);
}

static void assert_same_hypothesis(const rs_hypothesis *a, const rs_hypothesis *b, double tol)
{
    ck_assert_int_eq(a->count, b->count);
    ck_assert(a->count == 0 || !memcmp(a->ids, b->ids, sizeof(int) * (size_t)a->count));
    ck_assert_str_eq(a->text, b->text);
    ck_assert_msg(fabs(a->logprob - b->logprob) <= tol, "log p %.9f vs %.9f", a->logprob,
                  b->logprob);
}

START_TEST(a_sentence_does_not_depend_on_its_batch)
{
    rs_model m;
    rs_codec codec;
    rs_error err = {{0}};
    make_model(&m, 3, 0.0f);
    ck_assert(!rs_codec_for_model(&codec, &m, &err));
    const rs_ready member_ready = rs_ready_plain(&m), *member = &member_ready;
    for (int beam = 1; beam <= 3; beam += 2) {
        rs_translate_options opt;
        rs_translate_options_default(&opt);
        opt.beam = beam;
        opt.batch_size = LINES;
        rs_translated together[LINES], alone[LINES];
        translate_all(&member, 1, &codec, &opt, LINES, lines, together);
        opt.batch_size = 1;
        for (int i = 0; i < LINES; i++)
            translate_all(&member, 1, &codec, &opt, 1, &lines[i], &alone[i]);
        int nonempty = 0;
        for (int i = 0; i < LINES; i++) {
            nonempty += together[i].hyps[0].count > 0;
            assert_same_hypothesis(&together[i].hyps[0], &alone[i].hyps[0], 1e-4);
            /* The length rule: at most 2·k + 10 tokens for k source tokens. */
            ck_assert_int_le(together[i].hyps[0].count, 2 * together[i].source_count + 10);
            rs_translated_free(&together[i]);
            rs_translated_free(&alone[i]);
        }
        ck_assert_int_ge(nonempty, LINES - 2);
    }
    rs_codec_free(&codec);
    rs_model_free(&m);
}
END_TEST

START_TEST(empty_lines_stay_empty_and_long_sources_are_cut)
{
    rs_model m;
    rs_codec codec;
    rs_error err = {{0}};
    make_model(&m, 4, 0.0f);
    ck_assert(!rs_codec_for_model(&codec, &m, &err));
    const rs_ready member_ready = rs_ready_plain(&m), *member = &member_ready;
    rs_translate_options opt;
    rs_translate_options_default(&opt);
    opt.max_src_len = 3;
    const char *text[] = {"", "   ", "das Haus ist klein ."};
    rs_translated out[3];
    translate_all(&member, 1, &codec, &opt, 3, text, out);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(out[i].count, 0);
        ck_assert_str_eq(out[i].hyps[0].text, "");
        ck_assert_int_eq(out[i].hyps[0].count, 0);
    }
    ck_assert_int_eq(out[2].source_count, 3);
    ck_assert_int_eq(out[2].truncated, 2);
    ck_assert_int_le(out[2].hyps[0].count, 2 * 3 + 10);
    /* The cut source translates as the first three tokens do. */
    rs_translated cut;
    const char *three = "das Haus ist";
    translate_all(&member, 1, &codec, &opt, 1, &three, &cut);
    assert_same_hypothesis(&out[2].hyps[0], &cut.hyps[0], 1e-4);
    rs_translated_free(&cut);
    for (int i = 0; i < 3; i++)
        rs_translated_free(&out[i]);
    rs_codec_free(&codec);
    rs_model_free(&m);
}
END_TEST

/* The search's workspaces are sized by the sentences given, not by
 * batch_size: a batch size of 100,000 with a beam of 100 for two sentences
 * asked for gigabytes (out of memory) before. In a child whose address space
 * may grow by 256 MB only, they translate as with the default batch size.
 * (Not under AddressSanitizer, whose shadow memory a limit cannot leave
 * room for.) */
START_TEST(workspaces_are_sized_by_the_sentences_given)
{
#if defined(__SANITIZE_ADDRESS__)
    test_skip("translate: an address-space limit cannot run under AddressSanitizer");
#else
    rs_model m;
    rs_codec codec;
    rs_error err = {{0}};
    make_model(&m, 4, 0.0f);
    ck_assert(!rs_codec_for_model(&codec, &m, &err));
    const rs_ready member_ready = rs_ready_plain(&m), *member = &member_ready;
    rs_translate_options opt;
    rs_translate_options_default(&opt);
    opt.beam = 100;
    const char *text[] = {"das Haus ist klein .", "das Haus"};
    rs_translated want[2];
    translate_all(&member, 1, &codec, &opt, 2, text, want);
    pid_t pid = testlimit_fork((size_t)256 << 20);
    if (pid == 0) {
        opt.batch_size = 100000;
        rs_translator tr;
        rs_translated got[2];
        if (rs_translator_init(&tr, &member, 1, &codec, &opt, &err) ||
            rs_translate_lines(&tr, 2, text, got, &err))
            _exit(5);
        for (int i = 0; i < 2; i++)
            if (strcmp(got[i].hyps[0].text, want[i].hyps[0].text) ||
                got[i].hyps[0].logprob != want[i].hyps[0].logprob)
                _exit(6);
        _exit(0);
    }
    const int status = testlimit_wait(pid);
    ck_assert_msg(status == 0, "child status %d (5: the translation failed, out of memory)",
                  status);
    for (int i = 0; i < 2; i++)
        rs_translated_free(&want[i]);
    rs_codec_free(&codec);
    rs_model_free(&m);
#endif
}
END_TEST

/* Issue 42: a batch's workspace is sized by that batch, not by batch_size
 * times the longest source of the call. 50 000 two-word sentences and one of
 * 240 words at batch size 50 000 make a batch of the short ones and a batch
 * of the long one; a workspace of 50 000 rows of 240 positions (about 6 GB
 * for this tiny model, what was asked before) is refused by a child whose
 * address space may grow by 512 MB, the two batches' own fit in it, and each
 * sentence translates as it does alone. */
START_TEST(a_batch_workspace_is_sized_by_the_batch_not_the_longest_source)
{
#if defined(__SANITIZE_ADDRESS__)
    test_skip("translate: an address-space limit cannot run under AddressSanitizer");
#else
    enum { SHORT = 50000, LONG = 240 };
    rs_model m;
    rs_error err = {{0}};
    make_model(&m, 4, 0.0f);
    const rs_ready member_ready = rs_ready_plain(&m), *member = &member_ready;
    rs_translate_options opt;
    rs_translate_options_default(&opt);
    static int short_ids[2] = {RS_RESERVED + 0, RS_RESERVED + 1}, long_ids[LONG];
    for (int k = 0; k < LONG; k++)
        long_ids[k] = RS_RESERVED + 5;
    rs_source *sources = calloc(SHORT + 1, sizeof *sources);
    ck_assert(sources);
    for (int i = 0; i < SHORT; i++)
        sources[i] = (rs_source){short_ids, 2};
    sources[SHORT] = (rs_source){long_ids, LONG};
    /* Alone, with the default batch size: what each must give. */
    rs_translated want[2];
    rs_translator tr;
    ck_assert_msg(!rs_translator_init(&tr, &member, 1, NULL, &opt, &err), "%s", err.msg);
    ck_assert_msg(!rs_translate_sources(&tr, 1, &sources[0], &want[0], &err), "%s", err.msg);
    ck_assert_msg(!rs_translate_sources(&tr, 1, &sources[SHORT], &want[1], &err), "%s", err.msg);
    rs_translator_free(&tr);
    /* What the old reservation took, so that the limit below is known to
     * refuse it. */
    ck_assert_double_gt(rs_decoder_bytes(&member, 1, SHORT, 1, 256), 4.0 * (512 << 20));
    pid_t pid = testlimit_fork((size_t)512 << 20);
    if (pid == 0) {
        opt.batch_size = SHORT;
        rs_translated *got = calloc(SHORT + 1, sizeof *got);
        if (!got || rs_translator_init(&tr, &member, 1, NULL, &opt, &err) ||
            rs_translate_sources(&tr, SHORT + 1, sources, got, &err))
            _exit(5);
        for (int i = 0; i <= SHORT; i++) {
            const rs_hypothesis *a = &got[i].hyps[0], *b = &want[i == SHORT].hyps[0];
            if (a->count != b->count || memcmp(a->ids, b->ids, sizeof(int) * (size_t)a->count))
                _exit(6);
        }
        _exit(0);
    }
    const int status = testlimit_wait(pid);
    ck_assert_msg(status == 0, "child status %d (5: the translation failed, out of memory)",
                  status);
    for (int i = 0; i < 2; i++)
        rs_translated_free(&want[i]);
    free(sources);
    rs_model_free(&m);
#endif
}
END_TEST

START_TEST(an_ensemble_of_one_model_twice_is_that_model)
{
    rs_model m, other;
    rs_codec codec;
    rs_error err = {{0}};
    make_model(&m, 5, 0.0f);
    ck_assert(!rs_codec_for_model(&codec, &m, &err));
    const rs_ready plain = rs_ready_plain(&m), *one[1] = {&plain}, *two[2] = {&plain, &plain};
    for (int beam = 1; beam <= 4; beam += 3) {
        rs_translate_options opt;
        rs_translate_options_default(&opt);
        opt.beam = beam;
        rs_translated a[LINES], b[LINES];
        translate_all(one, 1, &codec, &opt, LINES, lines, a);
        translate_all(two, 2, &codec, &opt, LINES, lines, b);
        for (int i = 0; i < LINES; i++) {
            assert_same_hypothesis(&a[i].hyps[0], &b[i].hyps[0], 1e-4);
            rs_translated_free(&a[i]);
            rs_translated_free(&b[i]);
        }
    }
    make_model(&other, 6, 0.0f);
    const rs_ready pair_ready[] = {rs_ready_plain(&m), rs_ready_plain(&other)};
    const rs_ready *pair[2] = {&pair_ready[0], &pair_ready[1]};
    rs_translator tr;
    rs_translate_options opt;
    rs_translate_options_default(&opt);
    ck_assert_msg(!rs_translator_init(&tr, pair, 2, &codec, &opt, &err), "%s", err.msg);
    rs_translator_free(&tr);
    /* A different target vocabulary is refused, saying why. */
    other.tgt_vocab.tokens[RS_RESERVED][0] = 'T';
    ck_assert(rs_translator_init(&tr, pair, 2, &codec, &opt, &err) != 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "target"));
    rs_codec_free(&codec);
    rs_model_free(&m);
    rs_model_free(&other);
}
END_TEST

/* Ensemble weights (--weights): 1,0 is the first model alone; equal weights are the unweighted mean, bit for bit; 3,1 is neither and in
 * between; bad weights are refused. Greedy and beam search alike. */
START_TEST(ensemble_weights_weigh_the_members)
{
    rs_model m, other;
    rs_codec codec;
    rs_error err = {{0}};
    make_model(&m, 5, 0.0f);
    make_model(&other, 6, 0.0f);
    ck_assert(!rs_codec_for_model(&codec, &m, &err));
    const rs_ready plain[2] = {rs_ready_plain(&m), rs_ready_plain(&other)};
    const rs_ready *one[1] = {&plain[0]}, *pair[2] = {&plain[0], &plain[1]};
    static const float first[2] = {1.0f, 0.0f}, equal[2] = {0.7f, 0.7f};
    for (int beam = 1; beam <= 4; beam += 3) {
        rs_translate_options opt;
        rs_translate_options_default(&opt);
        opt.beam = beam;
        rs_translated alone[LINES], mean[LINES], a[LINES], b[LINES];
        translate_all(one, 1, &codec, &opt, LINES, lines, alone);
        translate_all(pair, 2, &codec, &opt, LINES, lines, mean);
        opt.weights = first;
        translate_all(pair, 2, &codec, &opt, LINES, lines, a);
        opt.weights = equal;
        translate_all(pair, 2, &codec, &opt, LINES, lines, b);
        int differs = 0;
        for (int i = 0; i < LINES; i++) {
            /* The same translation; log p the same up to where the ensemble's
             * float log-softmax rounds (the single model's is subtracted later). */
            assert_same_hypothesis(&a[i].hyps[0], &alone[i].hyps[0], 1e-4);
            assert_same_hypothesis(&b[i].hyps[0], &mean[i].hyps[0], 0.0);
            differs |= alone[i].hyps[0].logprob != mean[i].hyps[0].logprob;
            rs_translated_free(&alone[i]);
            rs_translated_free(&mean[i]);
            rs_translated_free(&a[i]);
            rs_translated_free(&b[i]);
        }
        ck_assert_msg(differs, "the two members must differ for the test to say anything");
    }
    rs_translator tr;
    rs_translate_options opt;
    rs_translate_options_default(&opt);
    static const float zero[2] = {0.0f, 0.0f}, negative[2] = {1.0f, -0.5f};
    opt.weights = zero;
    ck_assert(rs_translator_init(&tr, pair, 2, &codec, &opt, &err) != 0);
    ck_assert_msg(strstr(err.msg, "all zero") != NULL, "%s", err.msg);
    opt.weights = negative;
    ck_assert(rs_translator_init(&tr, pair, 2, &codec, &opt, &err) != 0);
    ck_assert_msg(strstr(err.msg, "ensemble weight 2 is -0.5") != NULL, "%s", err.msg);
    rs_codec_free(&codec);
    rs_model_free(&m);
    rs_model_free(&other);
}
END_TEST

START_TEST(unknown_words_are_replaced_but_never_by_punctuation)
{
    rs_model m;
    rs_codec codec;
    rs_error err = {{0}};
    make_model(&m, 7, 30.0f);
    ck_assert(!rs_codec_for_model(&codec, &m, &err));
    const rs_ready member_ready = rs_ready_plain(&m), *member = &member_ready;
    rs_translate_options opt;
    rs_translate_options_default(&opt);
    opt.replace_unk = 1;
    opt.max_len = 6;
    const char *text[] = {". . das . .", "Haus . . ."};
    const char *expect[] = {"das", "Haus"};
    rs_translated out[2];
    translate_all(&member, 1, &codec, &opt, 2, text, out);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(out[i].hyps[0].count, 6);
        for (int k = 0; k < 6; k++) {
            ck_assert_int_eq(out[i].hyps[0].ids[k], RS_UNK);
            ck_assert_str_eq(out[i].hyps[0].tokens[k], expect[i]);
        }
        rs_translated_free(&out[i]);
    }
    /* Only punctuation in the source: <unk> stays. */
    const char *dots = ". .";
    translate_all(&member, 1, &codec, &opt, 1, &dots, out);
    ck_assert_str_eq(out[0].hyps[0].tokens[0], "<unk>");
    rs_translated_free(&out[0]);
    rs_codec_free(&codec);
    rs_model_free(&m);
}
END_TEST

START_TEST(n_best_lists_are_ranked)
{
    rs_model m;
    rs_codec codec;
    rs_error err = {{0}};
    make_model(&m, 8, 0.0f);
    ck_assert(!rs_codec_for_model(&codec, &m, &err));
    const rs_ready member_ready = rs_ready_plain(&m), *member = &member_ready;
    rs_translate_options opt;
    rs_translate_options_default(&opt);
    opt.beam = opt.n_best = 4;
    rs_translated out[LINES];
    translate_all(&member, 1, &codec, &opt, LINES, lines, out);
    for (int i = 0; i < LINES; i++) {
        if (!out[i].source_count)
            continue;
        ck_assert_int_ge(out[i].count, 2);
        for (int r = 1; r < out[i].count; r++)
            ck_assert(out[i].hyps[r].score <= out[i].hyps[r - 1].score + 1e-9);
    }
    for (int i = 0; i < LINES; i++)
        rs_translated_free(&out[i]);
    rs_codec_free(&codec);
    rs_model_free(&m);
}
END_TEST

/* ---- the commands: translate, align and validation agree ---- */

START_TEST(translate_align_and_validation_give_the_same_output)
{
    char dir[64], ckpt[128], input[128], args[1024];
    testdir_make(dir, "rnnsearch-translate");
    snprintf(ckpt, sizeof ckpt, "%s/m.ckpt", dir);
    snprintf(input, sizeof input, "%s/in.txt", dir);
    rs_model m;
    rs_codec codec;
    rs_error err = {{0}};
    make_model(&m, 9, 0.0f);
    ck_assert(!rs_codec_for_model(&codec, &m, &err));
    ck_assert_msg(!rs_checkpoint_save(ckpt, &m, NULL, &err), "%s", err.msg);
    FILE *f = fopen(input, "w");
    ck_assert(f != NULL);
    for (int i = 0; i < LINES; i++)
        fprintf(f, "%s\n", lines[i]);
    ck_assert(!fclose(f));

    /* The library's translations. */
    const rs_ready member_ready = rs_ready_plain(&m), *member = &member_ready;
    rs_translate_options opt;
    rs_translate_options_default(&opt);
    rs_translated out[LINES];
    translate_all(&member, 1, &codec, &opt, LINES, lines, out);

    /* translate prints them, line for line (the empty line too). */
    static char text[65536];
    snprintf(args, sizeof args, "translate -m %s --batch-size 3 --quiet %s", ckpt, input);
    ck_assert_int_eq(testprog_run(args, text, sizeof text), 0);
    char *line = text;
    for (int i = 0; i < LINES; i++) {
        char *end = strchr(line, '\n');
        ck_assert_msg(end != NULL, "translate printed %d lines, not %d", i, LINES);
        *end = 0;
        ck_assert_str_eq(line, out[i].hyps[0].text);
        line = end + 1;
    }
    ck_assert_str_eq(line, "");

    /* align --format json shows the same target tokens (then </s>). */
    snprintf(args, sizeof args, "align -m %s --format json %s", ckpt, input);
    ck_assert_int_eq(testprog_run(args, text, sizeof text), 0);
    line = text;
    for (int i = 0; i < LINES; i++) {
        if (!out[i].source_count)
            continue;
        char *end = strchr(line, '\n');
        ck_assert(end != NULL);
        *end = 0;
        rs_json *record = rs_json_parse(line, strlen(line), &err);
        ck_assert_msg(record != NULL, "%s", err.msg);
        const rs_json *target = rs_json_get(record, "target");
        ck_assert_ptr_nonnull(target);
        ck_assert_int_eq((int)target->count, out[i].hyps[0].count + 1);
        for (int k = 0; k < out[i].hyps[0].count; k++)
            ck_assert_str_eq(target->items[k].string, out[i].hyps[0].tokens[k]);
        rs_json_free(record);
        line = end + 1;
    }

    /* Validation: the dev set's targets are those translations, so its
     * exact match is 100% and its BLEU 100 exactly when it decodes the same. */
    rs_dataset dev = {0};
    int ids_src[LINES][32], *src[LINES], *tgt[LINES], src_len[LINES], tgt_len[LINES], order[LINES];
    char *refs[LINES];
    int pairs = 0;
    for (int i = 0; i < LINES; i++) {
        if (!out[i].source_count || !out[i].hyps[0].count) /* a dev set has no empty sides */
            continue;
        src[pairs] = ids_src[pairs];
        src_len[pairs] = out[i].source_count;
        for (int k = 0; k < out[i].source_count; k++)
            ids_src[pairs][k] = rs_vocab_id(&m.src_vocab, out[i].source_tokens[k]);
        tgt[pairs] = out[i].hyps[0].ids;
        tgt_len[pairs] = out[i].hyps[0].count;
        refs[pairs] = out[i].hyps[0].text;
        order[pairs] = pairs;
        pairs++;
    }
    ck_assert_int_ge(pairs, 5);
    dev.count = pairs, dev.src = src, dev.tgt = tgt, dev.src_len = src_len, dev.tgt_len = tgt_len;
    dev.line = order;
    rs_train_options topt = {.dir = dir, .codec = &codec, .dev_refs = refs};
    double exact, bleu;
    ck_assert_msg(!rs_dev_translate(&m, &dev, &topt, 3, &exact, &bleu, &err), "%s", err.msg);
    ck_assert_double_eq_tol(exact, 1.0, 1e-12);
    ck_assert_double_eq_tol(bleu, 100.0, 1e-9);

    for (int i = 0; i < LINES; i++)
        rs_translated_free(&out[i]);
    rs_codec_free(&codec);
    rs_model_free(&m);
    testdir_remove(dir);
}
END_TEST

START_TEST(cli_n_best_per_token_scores_and_ensembles)
{
    char dir[64], ckpt[128], input[128], args[1024];
    static char text[65536];
    testdir_make(dir, "rnnsearch-translate");
    snprintf(ckpt, sizeof ckpt, "%s/m.ckpt", dir);
    snprintf(input, sizeof input, "%s/in.txt", dir);
    rs_model m;
    rs_error err = {{0}};
    make_model(&m, 10, 0.0f);
    ck_assert_msg(!rs_checkpoint_save(ckpt, &m, NULL, &err), "%s", err.msg);
    rs_model_free(&m);
    testfile_write(input, (const unsigned char *)"das Haus\nist klein\n", 19);

    /* --n-best 1 with a beam: the full Moses/Marian form. */
    snprintf(args, sizeof args, "translate -m %s --beam 3 --n-best 1 --quiet %s", ckpt, input);
    ck_assert_int_eq(testprog_run(args, text, sizeof text), 0);
    int id;
    double f0, score;
    char *second = strchr(text, '\n') + 1;
    ck_assert_int_eq(sscanf(text, "%d |||", &id), 1);
    ck_assert_int_eq(id, 0);
    ck_assert_ptr_nonnull(strstr(text, " ||| F0= "));
    ck_assert_int_eq(sscanf(strstr(text, "F0= "), "F0= %lf ||| %lf", &f0, &score), 2);
    ck_assert(f0 < 0 && score < 0);
    ck_assert_int_eq(sscanf(second, "%d |||", &id), 1);
    ck_assert_int_eq(id, 1);

    /* A file's n_best: 1 is plain output (Joey NMT's meaning), the same as no
     * n-best at all; --n-best 1 on the command line over the file is the list
     * form; --help says why the two differ. */
    char plain[8192], config[160];
    snprintf(config, sizeof config, "%s/nbest.yaml", dir);
    static const char yaml[] = "translation:\n  beam: 3\n  n_best: 1\n";
    testfile_write(config, (const unsigned char *)yaml, sizeof yaml - 1);
    snprintf(args, sizeof args, "translate -m %s --beam 3 --quiet %s", ckpt, input);
    ck_assert_int_eq(testprog_run(args, plain, sizeof plain), 0);
    snprintf(args, sizeof args, "translate -m %s --config %s --quiet %s", ckpt, config, input);
    ck_assert_int_eq(testprog_run(args, text, sizeof text), 0);
    ck_assert_str_eq(text, plain);
    ck_assert_ptr_null(strstr(text, "|||"));
    snprintf(args, sizeof args, "translate -m %s --config %s --n-best 1 --quiet %s", ckpt, config,
             input);
    ck_assert_int_eq(testprog_run(args, text, sizeof text), 0);
    ck_assert_ptr_nonnull(strstr(text, " ||| F0= "));
    ck_assert_int_eq(testprog_run("translate --help", text, sizeof text), 0);
    ck_assert_msg(strstr(text, "--config file's n_best: 1 is plain output, the meaning") &&
                      strstr(text, "Joey NMT gives testing: n_best: 1"),
                  "%s", text);

    /* --alignment soft, written with a space as Marian users write it, is the
     * option's value, not an input file: the same output as --alignment=soft. */
    char spaced[8192];
    snprintf(args, sizeof args, "translate -m %s --quiet --alignment=soft %s", ckpt, input);
    ck_assert_int_eq(testprog_run(args, text, sizeof text), 0);
    snprintf(args, sizeof args, "translate -m %s --quiet --alignment soft %s", ckpt, input);
    ck_assert_int_eq(testprog_run(args, spaced, sizeof spaced), 0);
    ck_assert_str_eq(spaced, text);
    ck_assert_ptr_nonnull(strstr(text, " ||| 0."));

    /* align --beam draws the matrix of what translate --beam prints: its
     * target tokens (before </s>) are that translation's. */
    for (int beam = 1; beam <= 3; beam += 2) {
        char aligned[8192], joined[1024] = "";
        snprintf(args, sizeof args, "translate -m %s --beam %d --quiet %s", ckpt, beam, input);
        ck_assert_int_eq(testprog_run(args, text, sizeof text), 0);
        snprintf(args, sizeof args, "align -m %s --beam %d --format json %s", ckpt, beam, input);
        ck_assert_int_eq(testprog_run(args, aligned, sizeof aligned), 0);
        rs_json *j = rs_json_parse(aligned, strcspn(aligned, "\n"), &err);
        ck_assert_msg(j != NULL, "%s", err.msg);
        /* The first sentence's id is 0, as in the n-best list above. */
        uint64_t first_id = 99;
        ck_assert(!rs_json_to_u64(rs_json_get(j, "id"), &first_id));
        ck_assert_uint_eq(first_id, 0);
        const rs_json *tgt = rs_json_get(j, "target");
        for (size_t k = 0; tgt && k + 1 < tgt->count; k++)
            snprintf(joined + strlen(joined), sizeof joined - strlen(joined), "%s%s", k ? " " : "",
                     tgt->items[k].string);
        text[strcspn(text, "\n")] = '\0';
        ck_assert_str_eq(joined, text);
        rs_json_free(j);
    }

    /* TSV counts sentences from 0 too, like its token indexes. */
    snprintf(args, sizeof args, "align -m %s --format tsv %s", ckpt, input);
    ck_assert_int_eq(testprog_run(args, text, sizeof text), 0);
    ck_assert_msg(!strncmp(strchr(text, '\n') + 1, "0\t0\t", 4), "%s", text);
    ck_assert_msg(strstr(text, "\n1\t0\t"), "%s", text);

    /* An empty line keeps its place in an n-best list: one empty entry. */
    testfile_write(input, (const unsigned char *)"das Haus\n\nist\n", 14);
    snprintf(args, sizeof args, "translate -m %s --beam 3 --n-best 2 --quiet %s", ckpt, input);
    ck_assert_int_eq(testprog_run(args, text, sizeof text), 0);
    ck_assert_msg(strstr(text, "\n1 |||  ||| F0= 0.000000 ||| 0.000000\n2 ||| ") != NULL, "%s",
                  text);

    /* score --per-token: total, mean, the tokens (an unknown one as <unk>, </s>
     * last), then one natural-log value per token, tab-separated columns. */
    snprintf(args, sizeof args, "printf 'das Haus\\tthe zebra\\n' | %s score -m %s --per-token",
             testprog_path(), ckpt);
    ck_assert_int_eq(testprog_shell(args, text, sizeof text), 0);
    ck_assert_msg(strstr(text, "\tthe <unk> </s>\t"), "%s", text);
    snprintf(args, sizeof args, "printf 'das Haus\\tthe house .\\n' | %s score -m %s --per-token",
             testprog_path(), ckpt);
    ck_assert_int_eq(testprog_shell(args, text, sizeof text), 0);
    double total, mean, t[4];
    char *tokens = strchr(strchr(text, '\t') + 1, '\t') + 1;
    ck_assert_msg(!strncmp(tokens, "the house . </s>\t", 17), "%s", text);
    ck_assert_int_eq(sscanf(text, "%lf\t%lf", &total, &mean), 2);
    ck_assert_int_eq(
        sscanf(strchr(tokens, '\t') + 1, "%lf %lf %lf %lf", &t[0], &t[1], &t[2], &t[3]), 4);
    ck_assert_double_eq_tol(total, t[0] + t[1] + t[2] + t[3], 1e-4);
    ck_assert_double_eq_tol(mean, total / 4, 1e-5);

    /* A source over --max-src-len is cut, with a warning naming the pair. */
    snprintf(args, sizeof args,
             "printf 'das Haus ist\\tthe house .\\n' | %s score -m %s --max-src-len 2 2>&1",
             testprog_path(), ckpt);
    ck_assert_int_eq(testprog_shell(args, text, sizeof text), 0);
    /* The warning is the first line, the score the second. */
    char *score_line = strchr(text, '\n');
    ck_assert_msg(score_line != NULL, "%s", text);
    *score_line++ = '\0';
    ck_assert_msg(strstr(text, "pair 1: source cut to its first 2 tokens (1 more)") != NULL, "%s",
                  text);
    double cut_score;
    ck_assert_int_eq(sscanf(score_line, "%lf", &cut_score), 1);
    ck_assert_double_eq_tol(cut_score, total, 1e-5); /* "das Haus" scored above */

    /* An ensemble of a model with itself scores as the model does. */
    snprintf(args, sizeof args, "printf 'das Haus\\tthe house .\\n' | %s score -m %s -m %s",
             testprog_path(), ckpt, ckpt);
    ck_assert_int_eq(testprog_shell(args, text, sizeof text), 0);
    double twice;
    ck_assert_int_eq(sscanf(text, "%lf", &twice), 1);
    ck_assert_double_eq_tol(twice, total, 1e-5);
    testdir_remove(dir);
}
END_TEST

/* translate --weights: one per -m, finite, not negative, not all zero; an
 * ensemble of a model with itself, weighted, translates as the model. */
START_TEST(cli_ensemble_weights)
{
    char dir[64], ckpt[128], input[128], args[1024], text[4096];
    testdir_make(dir, "rnnsearch-translate-weights");
    snprintf(ckpt, sizeof ckpt, "%s/m.ckpt", dir);
    snprintf(input, sizeof input, "%s/in.txt", dir);
    rs_model m;
    rs_error err = {{0}};
    make_model(&m, 10, 0.0f);
    ck_assert_msg(!rs_checkpoint_save(ckpt, &m, NULL, &err), "%s", err.msg);
    rs_model_free(&m);
    testfile_write(input, (const unsigned char *)"das Haus\nist klein\n", 19);
    static const struct {
        const char *weights, *said;
    } bad[] = {{"1", "--weights gives 1 weight for 2 models"},
               {"0,0", "the ensemble weights are all zero"},
               {"1,-2", "'1,-2' is not a list of numbers >= 0"},
               {"1,,2", "'1,,2' is not a list of numbers >= 0"},
               {"0x1,1", "'0x1,1' is not a list of numbers >= 0"},
               {"1,inf", "'1,inf' is not a list of numbers >= 0"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(args, sizeof args, "translate -m %s -m %s --weights %s %s", ckpt, ckpt,
                 bad[i].weights, input);
        ck_assert_int_eq(testprog_run_all(args, text, sizeof text), 2);
        ck_assert_msg(strstr(text, bad[i].said) != NULL, "%s", text);
    }
    char alone[256];
    snprintf(args, sizeof args, "translate -m %s --quiet %s", ckpt, input);
    ck_assert_int_eq(testprog_run(args, alone, sizeof alone), 0);
    snprintf(args, sizeof args, "translate -m %s -m %s --weights 0.25,0.75 --quiet %s", ckpt, ckpt,
             input);
    ck_assert_int_eq(testprog_run(args, text, sizeof text), 0);
    ck_assert_str_eq(text, alone);
    testdir_remove(dir);
}
END_TEST

/* A line written into a pipe is translated before the pipe is closed. */
START_TEST(lines_from_a_pipe_are_translated_as_they_arrive)
{
    char dir[64], ckpt[128];
    testdir_make(dir, "rnnsearch-translate");
    snprintf(ckpt, sizeof ckpt, "%s/m.ckpt", dir);
    rs_model m;
    rs_error err = {{0}};
    make_model(&m, 11, 0.0f);
    ck_assert_msg(!rs_checkpoint_save(ckpt, &m, NULL, &err), "%s", err.msg);
    rs_model_free(&m);
    int to_child[2], from_child[2];
    ck_assert(!pipe(to_child) && !pipe(from_child));
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        dup2(to_child[0], 0);
        dup2(from_child[1], 1);
        close(to_child[1]);
        close(from_child[0]);
        execl(testprog_path(), testprog_path(), "translate", "-m", ckpt, "--batch-size", "64",
              "--quiet", (char *)NULL);
        _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    ck_assert_int_eq(write(to_child[1], "das Haus\n", 9), 9);
    struct pollfd pf = {.fd = from_child[0], .events = POLLIN};
    int ready = poll(&pf, 1, 20000);
    ck_assert_msg(ready == 1,
                  "no translation 20 s after the line was sent (the batch waited for more input)");
    char buf[4096];
    ck_assert(read(from_child[0], buf, sizeof buf) > 0);
    close(to_child[1]);
    int status;
    waitpid(pid, &status, 0);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(from_child[0]);
    testdir_remove(dir);
}
END_TEST

/* Moses-tokenized, subword-nmt-style data: --tokenizer space keeps "hou@@" a
 * token of its own (the word tokenizer would cut it at "@"), the checkpoint
 * carries the tokenizer to translate and, the data looking like BPE, the
 * post-processing that joins the words (post_process=bpe); --post-process
 * none keeps the pieces, and --remove-bpe joins them as fairseq does. */
START_TEST(pre_tokenized_bpe_data_trains_and_translates_joined)
{
    char dir[64], path[128], args[1024];
    static char text[65536];
    testdir_make(dir, "rnnsearch-bpe");
    snprintf(path, sizeof path, "%s/train.tsv", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 30; i++)
        fputs("das hau@@ s ist gro@@ ß &quot;\tthe hou@@ se is big &quot;\n"
              "ein klei@@ nes  hau@@ s\ta small  hou@@ se\n",
              f);
    ck_assert_int_eq(fclose(f), 0);
    snprintf(args, sizeof args,
             "train --train %s --out %s/m --tokenizer space --epochs 60 --batch-size 8 --emb 16 "
             "--hidden 16 --att 16 --maxout 8 --lr 0.02 --quiet 2>&1",
             path, dir);
    ck_assert_msg(testprog_run(args, text, sizeof text) == 0, "%s", text);

    /* The vocabulary holds the pieces as written. */
    snprintf(args, sizeof args, "tokenize -m %s/m --side target <<'EOF'\nthe hou@@ se\nEOF", dir);
    ck_assert_int_eq(testprog_run(args, text, sizeof text), 0);
    ck_assert_str_eq(text, "the hou@@ se\n");
    snprintf(args, sizeof args, "tokenize -m %s/m --side target --ids <<'EOF'\nhou@@ se\nEOF", dir);
    ck_assert_int_eq(testprog_run(args, text, sizeof text), 0);
    int ids[3];
    ck_assert_int_eq(sscanf(text, "%d %d %d", &ids[0], &ids[1], &ids[2]), 3);
    ck_assert(ids[0] >= RS_RESERVED && ids[1] >= RS_RESERVED && ids[2] == RS_EOS);

    snprintf(path, sizeof path, "%s/in.txt", dir);
    const char *input = "das hau@@ s ist gro@@ ß &quot;\nein\tklei@@ nes hau@@ s \n\n";
    testfile_write(path, (const unsigned char *)input, strlen(input));
    snprintf(args, sizeof args, "translate -m %s/m --quiet --post-process none %s", dir, path);
    ck_assert_int_eq(testprog_run(args, text, sizeof text), 0);
    ck_assert_str_eq(text, "the hou@@ se is big &quot;\na small hou@@ se\n\n");
    snprintf(args, sizeof args, "translate -m %s/m --quiet %s", dir, path);
    ck_assert_int_eq(testprog_run(args, text, sizeof text), 0);
    ck_assert_str_eq(text, "the house is big &quot;\na small house\n\n");
    snprintf(args, sizeof args, "translate -m %s/m --quiet --post-process none --remove-bpe %s",
             dir, path);
    ck_assert_int_eq(testprog_run(args, text, sizeof text), 0);
    ck_assert_str_eq(text, "the house is big &quot;\na small house\n\n");
    /* From the translation: section of a configuration file too. */
    char yaml[128];
    snprintf(yaml, sizeof yaml, "%s/t.yaml", dir);
    static const char settings[] = "translation:\n  remove_bpe: true\n  post_process: none\n";
    testfile_write(yaml, (const unsigned char *)settings, sizeof settings - 1);
    snprintf(args, sizeof args, "translate -m %s/m --quiet --config %s %s", dir, yaml, path);
    ck_assert_int_eq(testprog_run(args, text, sizeof text), 0);
    ck_assert_str_eq(text, "the house is big &quot;\na small house\n\n");
    /* fairseq's spellings, a separate word too: '@@', '@@ ' and subword_nmt
     * all join subword-nmt's units; any other word is the input file. */
    static const char *const spellings[] = {"=@@", " @@", " '@@ '", " subword_nmt", "='@@ '"};
    for (size_t i = 0; i < sizeof spellings / sizeof *spellings; i++) {
        snprintf(args, sizeof args,
                 "translate -m %s/m --quiet --post-process none --remove-bpe%s %s", dir,
                 spellings[i], path);
        ck_assert_int_eq(testprog_run(args, text, sizeof text), 0);
        ck_assert_msg(!strcmp(text, "the house is big &quot;\na small house\n\n"), "%s: %s",
                      spellings[i], text);
    }
    /* n-best lists too; a marker of one's own. */
    snprintf(args, sizeof args,
             "translate -m %s/m --quiet --post-process none --remove-bpe=u@@ --beam 2 "
             "--n-best 1 %s",
             dir, path);
    ck_assert_int_eq(testprog_run(args, text, sizeof text), 0);
    ck_assert_msg(strstr(text, "0 ||| the ho se is big &quot; ||| F0= ") == text, "%s", text);
    ck_assert_ptr_nonnull(strstr(text, "\n1 ||| a small ho se ||| F0= "));
    /* --n-best N alone searches with a beam of N; a smaller --beam is refused. */
    snprintf(args, sizeof args, "translate -m %s/m --quiet --n-best 2 %s", dir, path);
    ck_assert_int_eq(testprog_run(args, text, sizeof text), 0);
    ck_assert_msg(strstr(text, "0 ||| ") == text && strstr(text, "\n0 ||| ") &&
                      strstr(text, "\n1 ||| ") && strstr(strstr(text, "\n1 ||| ") + 1, "\n1 ||| "),
                  "%s", text);
    snprintf(args, sizeof args, "translate -m %s/m --beam 1 --n-best 2 %s 2>&1", dir, path);
    ck_assert_int_eq(testprog_run(args, text, sizeof text), 2);
    ck_assert_msg(strstr(text, "--n-best 2 needs --beam of at least 2"), "%s", text);
    /* align draws words: units joined, rows averaged, columns summed. */
    snprintf(args, sizeof args, "align -m %s/m --remove-bpe --format json %s", dir, path);
    ck_assert_int_eq(testprog_run(args, text, sizeof text), 0);
    ck_assert_msg(strstr(text, "\"target\":[\"the\",\"house\",\"is\",\"big\""), "%s", text);
    ck_assert_msg(strstr(text, "\"source\":[\"das\",\"haus\",\"ist\",\"groß\""), "%s", text);
    snprintf(args, sizeof args, "translate -m %s/m --remove-bpe= %s 2>&1", dir, path);
    ck_assert_int_eq(testprog_run(args, text, sizeof text), 2);
    ck_assert_ptr_nonnull(strstr(text, "--remove-bpe"));
    testdir_remove(dir);
}
END_TEST

Suite *translate_suite(void)
{
    Suite *s = suite_create("translate");
    TCase *tc = tcase_create("translate");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, a_sentence_does_not_depend_on_its_batch);
    tcase_add_test(tc, empty_lines_stay_empty_and_long_sources_are_cut);
    tcase_add_test(tc, workspaces_are_sized_by_the_sentences_given);
    tcase_add_test(tc, a_batch_workspace_is_sized_by_the_batch_not_the_longest_source);
    tcase_add_test(tc, an_ensemble_of_one_model_twice_is_that_model);
    tcase_add_test(tc, ensemble_weights_weigh_the_members);
    tcase_add_test(tc, unknown_words_are_replaced_but_never_by_punctuation);
    tcase_add_test(tc, n_best_lists_are_ranked);
    tcase_add_test(tc, translate_align_and_validation_give_the_same_output);
    tcase_add_test(tc, cli_n_best_per_token_scores_and_ensembles);
    tcase_add_test(tc, cli_ensemble_weights);
    tcase_add_test(tc, lines_from_a_pipe_are_translated_as_they_arrive);
    tcase_add_test(tc, pre_tokenized_bpe_data_trains_and_translates_joined);
    suite_add_tcase(s, tc);
    return s;
}
