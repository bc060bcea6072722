/* The public C API (src/api/rnnsearch.h) over a tiny saved model: it gives
 * what the internal pipelines give (translation, forced decoding, tokens),
 * fills n-best lists and alignments, and reports every bad argument or file
 * as a status and a message, never by printing. Runs under ASan with the
 * rest of the suite (make check-asan). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/rnnsearch.h"
#include "model/checkpoint.h"
#include "model/codec.h"
#include "search/forced.h"
#include "search/translate.h"
#include "testdir.h"
#include "tinymodel.h"

static char dir[64], path[256];
static rs_model saved;

/* A tiny model with words, saved to dir/m.ckpt. */
static void setup(void)
{
    rs_error err = {{0}};
    testdir_make(dir, "rs_api");
    snprintf(path, sizeof path, "%s/m.ckpt", dir);
    tiny_model_with_words(&saved, 5, "haus", 7);
    ck_assert_msg(!rs_checkpoint_save(path, &saved, NULL, &err), "%s", err.msg);
}

static void teardown(void)
{
    rs_model_free(&saved);
    testdir_remove(dir);
}

static rnnsearch_model *load(void)
{
    rnnsearch_error err = {{0}};
    rnnsearch_model *m = NULL;
    ck_assert_msg(!rnnsearch_model_load(path, &m, &err), "%s", err.message);
    ck_assert_ptr_nonnull(m);
    ck_assert_str_eq(rnnsearch_model_checkpoint(m), path);
    return m;
}

static void check_rows_sum_to_one(const float *w, int rows, int cols)
{
    for (int i = 0; i < rows; i++) {
        double sum = 0;
        for (int j = 0; j < cols; j++)
            sum += w[i * cols + j];
        ck_assert_double_eq_tol(sum, 1.0, 1e-5);
    }
}

START_TEST(translation_is_the_pipeline_s)
{
    static const char *const lines[] = {"das haus", "", "haus das das unbekannt", "das"};
    enum { N = 4 };
    rnnsearch_model *m = load();
    rnnsearch_error err = {{0}};
    rnnsearch_options opt;
    rnnsearch_options_default(&opt);
    ck_assert_int_eq(opt.beam, 1);
    ck_assert_int_eq(opt.n_best, 1);
    ck_assert_int_eq(opt.max_src_len, 250);
    opt.beam = 3;
    opt.n_best = 2;
    opt.length_penalty = 0.5f;
    opt.alignment = 1;
    rnnsearch_translator *tr = NULL;
    ck_assert_msg(!rnnsearch_translator_new(m, &opt, &tr, &err), "%s", err.message);
    rnnsearch_translation got[N];
    ck_assert_msg(!rnnsearch_translate(tr, N, lines, got, &err), "%s", err.message);

    /* The same through search/translate.c directly. */
    rs_error e = {{0}};
    rs_codec codec = {0};
    rs_translator want_tr;
    rs_translated want[N];
    const rs_model *member = &saved;
    rs_translate_options topt;
    rs_translate_options_default(&topt);
    topt.beam = 3;
    topt.n_best = 2;
    topt.length_penalty = 0.5f;
    topt.want_alignment = 1;
    ck_assert(!rs_codec_for_model(&codec, &saved, &e));
    ck_assert(!rs_translator_init(&want_tr, &member, 1, &codec, &topt, &e));
    ck_assert_msg(!rs_translate_lines(&want_tr, N, lines, want, &e), "%s", e.msg);
    for (int i = 0; i < N; i++) {
        const rnnsearch_translation *g = &got[i];
        const rs_translated *w = &want[i];
        ck_assert_int_eq(g->source_count, w->src_count);
        for (int j = 0; j < g->source_count; j++)
            ck_assert_str_eq(g->source_tokens[j], w->src_tokens[j]);
        ck_assert_int_eq(g->count, w->n > 0 ? w->n : 1);
        for (int r = 0; r < g->count; r++) {
            const rnnsearch_hypothesis *h = &g->hyps[r];
            ck_assert_str_eq(h->text, w->hyp[r].text ? w->hyp[r].text : "");
            ck_assert_int_eq(h->count, w->hyp[r].len);
            ck_assert(h->logprob == w->hyp[r].logprob && h->score == w->hyp[r].score);
            for (int t = 0; t < h->count; t++)
                ck_assert_str_eq(h->tokens[t], w->hyp[r].tokens[t]);
            if (g->source_count == 0) {
                ck_assert_ptr_null(h->alignment); /* an empty line: nothing decoded */
                continue;
            }
            const size_t cells = (size_t)(h->count + 1) * (size_t)(g->source_count + 1);
            ck_assert(!memcmp(h->alignment, w->hyp[r].alignment, cells * sizeof(float)));
            check_rows_sum_to_one(h->alignment, h->count + 1, g->source_count + 1);
        }
        rnnsearch_translation_free(&got[i]);
        rs_translated_free(&want[i]);
    }
    rnnsearch_translation_free(&got[0]); /* freeing twice is harmless */
    rs_translator_free(&want_tr);
    rs_codec_free(&codec);
    rnnsearch_translator_free(tr);
    rnnsearch_model_free(m);
}
END_TEST

START_TEST(forced_decoding_is_the_pipeline_s)
{
    rnnsearch_model *m = load();
    rnnsearch_error err = {{0}};
    rnnsearch_forced f;
    ck_assert_msg(!rnnsearch_force(m, "das haus", "the the", &f, &err), "%s", err.message);
    ck_assert_int_eq(f.source_count, 2);
    ck_assert_int_eq(f.target_count, 2);
    ck_assert_str_eq(f.source_tokens[1], "haus");
    ck_assert_str_eq(f.target_tokens[0], "the");

    rs_error e = {{0}};
    rs_codec codec = {0};
    rs_forced want;
    rs_tokens src, tgt;
    int cut;
    const rs_model *member = &saved;
    const rs_forced_pair pair = {"das haus", "the the", 250,
                                 RS_FORCED_TOKENS | RS_FORCED_ALIGNMENT};
    ck_assert(!rs_codec_for_model(&codec, &saved, &e));
    ck_assert(!rs_forced_text(&member, 1, &codec, &pair, &want, &src, &tgt, &cut, &e));
    ck_assert(f.logprob == want.logprob);
    double sum = 0;
    for (int t = 0; t <= f.target_count; t++)
        sum += f.token_logprobs[t];
    ck_assert_double_eq_tol(sum, f.logprob, 1e-5);
    ck_assert(!memcmp(f.alignment, want.alignment, 3 * 3 * sizeof(float)));
    check_rows_sum_to_one(f.alignment, 3, 3);
    rs_forced_free(&want);
    rs_tokens_free(&src);
    rs_tokens_free(&tgt);
    rs_codec_free(&codec);
    rnnsearch_forced_free(&f);
    rnnsearch_forced_free(&f);
    rnnsearch_model_free(m);
}
END_TEST

START_TEST(tokens_go_both_ways)
{
    rnnsearch_model *m = load();
    rnnsearch_error err = {{0}};
    rnnsearch_tokens t;
    ck_assert_msg(!rnnsearch_tokenize(m, RNNSEARCH_SOURCE, "  das Haus,  ja ", &t, &err), "%s",
                  err.message);
    ck_assert_int_eq(t.count, 4);
    ck_assert_str_eq(t.tokens[0], "das");
    ck_assert_str_eq(t.tokens[2], "￭,");
    char *text = NULL;
    ck_assert_msg(!rnnsearch_detokenize(m, RNNSEARCH_TARGET, (const char *const *)t.tokens, t.count,
                                        &text, &err),
                  "%s", err.message);
    ck_assert_str_eq(text, "das Haus, ja");
    rnnsearch_string_free(text);
    rnnsearch_tokens_free(&t);
    ck_assert(rnnsearch_tokenize(m, 2, "x", &t, &err) != 0);
    ck_assert_ptr_nonnull(strstr(err.message, "side"));
    ck_assert(rnnsearch_tokenize(m, RNNSEARCH_SOURCE, "bad \xff byte", &t, &err) != 0);
    ck_assert_ptr_nonnull(strstr(err.message, "UTF-8"));
    rnnsearch_model_free(m);
}
END_TEST

START_TEST(bad_input_is_a_status_and_a_message)
{
    rnnsearch_error err = {{0}};
    rnnsearch_model *m = (rnnsearch_model *)&err; /* overwritten with NULL on failure */
    char missing[300];
    snprintf(missing, sizeof missing, "%s/missing.ckpt", dir);
    ck_assert(rnnsearch_model_load(missing, &m, &err) != 0);
    ck_assert_ptr_null(m);
    ck_assert_ptr_nonnull(strstr(err.message, missing));
    ck_assert(rnnsearch_model_load("", &m, &err) != 0);
    ck_assert(rnnsearch_model_load(NULL, &m, NULL) != 0); /* err may be NULL */
    snprintf(missing, sizeof missing, "%s/junk.ckpt", dir);
    testfile_write(missing, (const unsigned char *)"junk", 4);
    ck_assert(rnnsearch_model_load(missing, &m, &err) != 0);
    ck_assert_ptr_nonnull(strstr(err.message, "junk.ckpt"));

    m = load();
    rnnsearch_options opt;
    rnnsearch_options_default(&opt);
    rnnsearch_translator *tr = NULL;
    opt.n_best = 2; /* more than the beam */
    ck_assert(rnnsearch_translator_new(m, &opt, &tr, &err) != 0);
    ck_assert_ptr_null(tr);
    ck_assert_ptr_nonnull(strstr(err.message, "out of range"));
    rnnsearch_options_default(&opt);
    opt.length_penalty = NAN;
    ck_assert(rnnsearch_translator_new(m, &opt, &tr, &err) != 0);
    ck_assert(!rnnsearch_translator_new(m, NULL, &tr, &err)); /* NULL: the defaults */

    static const char *const lines[] = {"das", "bad \xc3"};
    rnnsearch_translation out[2];
    ck_assert(rnnsearch_translate(tr, 2, lines, out, &err) != 0);
    ck_assert_ptr_nonnull(strstr(err.message, "sentence 2")); /* the line, counted from 1 */
    const char *const with_null[] = {"das", NULL};
    ck_assert(rnnsearch_translate(tr, 2, with_null, out, &err) != 0);
    ck_assert(!rnnsearch_translate(tr, 0, NULL, NULL, &err));

    rnnsearch_forced f;
    ck_assert(rnnsearch_force(m, "", "the", &f, &err) != 0);
    ck_assert_ptr_nonnull(strstr(err.message, "empty"));
    ck_assert(rnnsearch_force(m, "das", NULL, &f, &err) != 0);
    ck_assert(rnnsearch_detokenize(m, RNNSEARCH_TARGET, NULL, 1, NULL, &err) != 0);

    ck_assert_str_eq(rnnsearch_version(), RNNSEARCH_VERSION);
    rnnsearch_translator_free(tr);
    rnnsearch_translator_free(NULL);
    rnnsearch_model_free(m);
    rnnsearch_model_free(NULL);
}
END_TEST

Suite *api_suite(void)
{
    Suite *s = suite_create("api");
    TCase *tc = tcase_create("api");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, translation_is_the_pipeline_s);
    tcase_add_test(tc, forced_decoding_is_the_pipeline_s);
    tcase_add_test(tc, tokens_go_both_ways);
    tcase_add_test(tc, bad_input_is_a_status_and_a_message);
    suite_add_tcase(s, tc);
    return s;
}
