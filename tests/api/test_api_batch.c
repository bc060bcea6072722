/* The C API's 1.1 additions over a tiny saved model: rnnsearch_score (pairs
 * scored in batches, as `rnnsearch score`), ensembles
 * (rnnsearch_translator_new_ensemble, and rnnsearch_score with several
 * models) and the options' remove_bpe, each against the internal pipeline
 * or rnnsearch_force, and each bad argument a status and a message. */
#include <check.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/rnnsearch.h"
#include "model/checkpoint.h"
#include "model/codec.h"
#include "search/ready.h"
#include "search/translate.h"
#include "text/text.h"
#include "testdir.h"
#include "tinymodel.h"

static char dir[64], path[256], other[256];
static rnnsearch_error fresh;

#define FAILS(call, needle)                                                                        \
    do {                                                                                           \
        memset(&fresh, 0, sizeof fresh);                                                           \
        ck_assert_int_eq((call), -1);                                                              \
        ck_assert_msg(strstr(fresh.message, needle), "%s: '%s' does not say '%s'", #call,          \
                      fresh.message, needle);                                                      \
    } while (0)

/* Two tiny models with words (target "the" is id RS_RESERVED): dir/m.ckpt,
 * and dir/o.ckpt of another hidden size (an ensemble may mix sizes, not
 * vocabularies). */
static void setup(void)
{
    rs_error err = {{0}};
    rs_model a, b;
    testdir_make(dir, "rs_api_batch");
    snprintf(path, sizeof path, "%s/m.ckpt", dir);
    snprintf(other, sizeof other, "%s/o.ckpt", dir);
    tiny_model_with_words(&a, 5, "haus", 7);
    tiny_model_with_words(&b, 4, "haus", 8);
    /* m says "the" until the length limit: a text for remove_bpe to join. */
    a.w.out_bw[RS_RESERVED] += 20.0f;
    a.w.out_bw[RS_EOS] -= 20.0f;
    ck_assert_msg(!rs_checkpoint_save(path, &a, NULL, &err), "%s", err.msg);
    ck_assert_msg(!rs_checkpoint_save(other, &b, NULL, &err), "%s", err.msg);
    rs_model_free(&a);
    rs_model_free(&b);
}

static void teardown(void)
{
    testdir_remove(dir);
}

static rnnsearch_model *load(const char *file)
{
    rnnsearch_error err = {{0}};
    rnnsearch_model *m = NULL;
    ck_assert_msg(!rnnsearch_model_load(file, &m, &err), "%s", err.message);
    return m;
}

START_TEST(score_batches_what_force_scores_one_by_one)
{
    static const char *const src[] = {"das haus", "haus", "das das haus haus das", "haus das"};
    static const char *const tgt[] = {"the the", "the", "", "the the the the"};
    enum { N = 4 };
    rnnsearch_model *m = load(path), *o = load(other);
    const rnnsearch_model *one[1] = {m}, *both[2] = {m, o};
    double got[N], ens[N];
    rnnsearch_error err = {{0}};
    ck_assert_msg(!rnnsearch_score(one, 1, N, src, tgt, got, &err), "%s", err.message);
    ck_assert_msg(!rnnsearch_score(both, 2, N, src, tgt, ens, &err), "%s", err.message);
    for (int i = 0; i < N; i++) {
        rnnsearch_forced f;
        ck_assert_msg(!rnnsearch_force(m, src[i], tgt[i], &f, &err), "%s", err.message);
        /* Batched with padding, the sums may differ in the last bits. */
        ck_assert_double_eq_tol(got[i], f.logprob, 1e-4);
        rnnsearch_forced_free(&f);
        ck_assert(got[i] < 0 && ens[i] < 0);
        ck_assert_msg(got[i] != ens[i], "pair %d: the ensemble scored as the first model", i + 1);
    }
    /* An ensemble of one model twice is that model. */
    const rnnsearch_model *twice[2] = {m, m};
    ck_assert_msg(!rnnsearch_score(twice, 2, N, src, tgt, ens, &err), "%s", err.message);
    for (int i = 0; i < N; i++)
        ck_assert_double_eq_tol(ens[i], got[i], 1e-5);
    ck_assert(!rnnsearch_score(one, 1, 0, NULL, NULL, NULL, &err));

    /* Refusals leave the scores as they were. */
    double keep[2] = {42, 42};
    static const char *const bad[] = {"\xff"};
    FAILS(rnnsearch_score(one, 1, 1, bad, tgt, keep, &fresh), "pair 1");
    FAILS(rnnsearch_score(one, 1, 1, src, bad, keep, &fresh), "pair 1");
    static const char *const blank[] = {"das", "  "};
    FAILS(rnnsearch_score(one, 1, 2, blank, tgt, keep, &fresh), "pair 2: the source is empty");
    ck_assert(keep[0] == 42);
    /* As the program scores them: an empty target is </s> alone, an empty
     * source with an empty target its only translation (0). */
    static const char *const none[] = {"", " "};
    double alone[2] = {42, 42};
    ck_assert_msg(!rnnsearch_score(one, 1, 2, blank, none, alone, &err), "%s", err.message);
    rnnsearch_forced eos;
    ck_assert_msg(!rnnsearch_force(m, "das", "", &eos, &err), "%s", err.message);
    ck_assert(alone[0] < 0 && alone[1] == 0);
    ck_assert_double_eq_tol(alone[0], eos.logprob, 1e-4);
    rnnsearch_forced_free(&eos);
    FAILS(rnnsearch_score(NULL, 1, 1, src, tgt, keep, &fresh), "an ensemble has 1 to 16");
    FAILS(rnnsearch_score(one, 0, 1, src, tgt, keep, &fresh), "an ensemble has 1 to 16");
    FAILS(rnnsearch_score(one, RNNSEARCH_MAX_MODELS + 1, 1, src, tgt, keep, &fresh), "an ensemble");
    const rnnsearch_model *hole[2] = {m, NULL};
    FAILS(rnnsearch_score(hole, 2, 1, src, tgt, keep, &fresh), "model 2 is NULL");
    FAILS(rnnsearch_score(one, 1, -1, src, tgt, keep, &fresh), "negative count");
    FAILS(rnnsearch_score(one, 1, 1, NULL, tgt, keep, &fresh), "NULL");
    FAILS(rnnsearch_score(one, 1, 1, src, tgt, NULL, &fresh), "NULL");
    static const char *const nul[] = {NULL};
    FAILS(rnnsearch_score(one, 1, 1, src, nul, keep, &fresh), "pair 1: the target");
    ck_assert(keep[0] == 42);
    rnnsearch_model_free(m);
    rnnsearch_model_free(o);
}
END_TEST

START_TEST(an_ensemble_translates_as_the_pipeline)
{
    static const char *const lines[] = {"das haus", "haus das das"};
    enum { N = 2 };
    rnnsearch_model *m = load(path), *o = load(other);
    const rnnsearch_model *both[2] = {m, o};
    rnnsearch_error err = {{0}};
    rnnsearch_options opt;
    ck_assert(!rnnsearch_options_init(&opt, sizeof opt, &err));
    opt.beam = 2;
    opt.alignment = 1;
    rnnsearch_translator *tr = NULL;
    ck_assert_msg(!rnnsearch_translator_new_ensemble(both, 2, &opt, &tr, &err), "%s", err.message);
    rnnsearch_translation got[N];
    ck_assert_msg(!rnnsearch_translate(tr, N, lines, got, &err), "%s", err.message);

    /* The same through search/translate.c with both members, loaded ready to
     * decode as the library loads them: one road, so the same bits. */
    rs_error e = {{0}};
    rs_ready a, b;
    ck_assert(!rs_ready_load(&a, path, NULL, NULL, NULL, 0, &e));
    ck_assert(!rs_ready_load(&b, other, NULL, NULL, NULL, 0, &e));
    const rs_ready *members[2] = {&a, &b};
    rs_codec codec = {0};
    rs_translator want_tr;
    rs_translated want[N];
    rs_translate_options topt;
    rs_translate_options_default(&topt);
    topt.beam = 2;
    topt.want_alignment = 1;
    ck_assert(!rs_codec_for_model(&codec, a.model, &e));
    ck_assert(!rs_translator_init(&want_tr, members, 2, &codec, &topt, &e));
    ck_assert_msg(!rs_translate_lines(&want_tr, N, lines, want, &e), "%s", e.msg);
    for (int i = 0; i < N; i++) {
        const rnnsearch_hypothesis *h = &got[i].hyps[0];
        ck_assert_str_eq(h->text, want[i].hyps[0].text ? want[i].hyps[0].text : "");
        ck_assert(h->logprob == want[i].hyps[0].logprob);
        const size_t cells = (size_t)(h->count + 1) * (size_t)(got[i].source_count + 1);
        ck_assert(!memcmp(h->alignment, want[i].hyps[0].alignment, cells * sizeof(float)));
        rnnsearch_translation_free(&got[i]);
        rs_translated_free(&want[i]);
    }
    rs_translator_free(&want_tr);
    rs_codec_free(&codec);
    rs_ready_free(&a);
    rs_ready_free(&b);
    rnnsearch_translator_free(tr);

    FAILS(rnnsearch_translator_new_ensemble(both, 0, &opt, &tr, &fresh), "an ensemble has");
    ck_assert_ptr_null(tr);
    FAILS(rnnsearch_translator_new_ensemble(NULL, 1, &opt, &tr, &fresh), "an ensemble has");
    const rnnsearch_model *hole[2] = {m, NULL};
    FAILS(rnnsearch_translator_new_ensemble(hole, 2, &opt, &tr, &fresh), "model 2 is NULL");
    FAILS(rnnsearch_translator_new_ensemble(both, 2, &opt, NULL, &fresh), "no place");
    rnnsearch_model_free(m);
    rnnsearch_model_free(o);
}
END_TEST

START_TEST(remove_bpe_joins_the_text_and_is_copied)
{
    static const char *const lines[] = {"das haus das"};
    rnnsearch_model *m = load(path);
    rnnsearch_error err = {{0}};
    rnnsearch_options opt;
    ck_assert(!rnnsearch_options_init(&opt, sizeof opt, &err));
    ck_assert_ptr_null(opt.remove_bpe);
    ck_assert(!rnnsearch_options_set(&opt, "max_len", 6, &err));
    rnnsearch_translator *plain = NULL, *joined = NULL;
    ck_assert(!rnnsearch_translator_new(m, &opt, &plain, &err));
    /* The marker "e " joins "the the" into "ththe". A copy on the stack,
     * overwritten once the translator has it. */
    char marker[8] = "e ";
    ck_assert(!rnnsearch_options_set_text(&opt, "remove_bpe", marker, &err));
    ck_assert_ptr_eq(opt.remove_bpe, marker);
    ck_assert_msg(!rnnsearch_translator_new(m, &opt, &joined, &err), "%s", err.message);
    strcpy(marker, "XYZ");
    rnnsearch_translation a, b;
    ck_assert(!rnnsearch_translate(plain, 1, lines, &a, &err));
    ck_assert(!rnnsearch_translate(joined, 1, lines, &b, &err));
    ck_assert_msg(strstr(a.hyps[0].text, "the the"), "'%s'", a.hyps[0].text);
    char want[256];
    rs_error e = {{0}};
    char *j = NULL;
    ck_assert(!rs_remove_bpe(a.hyps[0].text, "e ", &j, &e));
    snprintf(want, sizeof want, "%s", j);
    free(j);
    ck_assert_str_eq(b.hyps[0].text, want);
    ck_assert_int_eq(a.hyps[0].count, b.hyps[0].count); /* tokens keep the marker */
    rnnsearch_translation_free(&a);
    rnnsearch_translation_free(&b);
    rnnsearch_translator_free(plain);
    rnnsearch_translator_free(joined);

    ck_assert(!rnnsearch_options_set_text(&opt, "remove_bpe", NULL, &err));
    ck_assert_ptr_null(opt.remove_bpe);
    FAILS(rnnsearch_options_set_text(&opt, "remove_bpe", "", &fresh), "empty");
    FAILS(rnnsearch_options_set_text(&opt, "beam", "3", &fresh), "no text option");
    FAILS(rnnsearch_options_set(&opt, "remove_bpe", 1, &fresh), "rnnsearch_options_set_text");
    FAILS(rnnsearch_options_set_text(NULL, "remove_bpe", "@@ ", &fresh), "NULL");
    opt.remove_bpe = "";
    FAILS(rnnsearch_options_check(&opt, &fresh), "empty");
    FAILS(rnnsearch_translator_new(m, &opt, &plain, &fresh), "empty");
    /* A 1.0 caller's structure ends before remove_bpe. */
    enum { V1 = offsetof(rnnsearch_options, replace_unk) + sizeof(int) };
    ck_assert(!rnnsearch_options_init(&opt, V1, &err));
    FAILS(rnnsearch_options_set_text(&opt, "remove_bpe", "@@ ", &fresh), "older header");
    rnnsearch_model_free(m);
}
END_TEST

Suite *api_batch_suite(void)
{
    Suite *s = suite_create("api_batch");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, score_batches_what_force_scores_one_by_one);
    tcase_add_test(tc, an_ensemble_translates_as_the_pipeline);
    tcase_add_test(tc, remove_bpe_joins_the_text_and_is_copied);
    suite_add_tcase(s, tc);
    return s;
}
