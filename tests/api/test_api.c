/* The public C API (src/api/rnnsearch.h) over a tiny saved model: it gives
 * what the internal pipelines give (translation, forced decoding, tokens)
 * to the bit, as they run on the model loaded ready to decode
 * (search/ready.h: the library's road and the program's),
 * fills n-best lists and alignments, and reports every bad argument or file
 * as a status and a message, never by printing. Runs under ASan with the
 * rest of the suite (make check-asan). */
#include <check.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/rnnsearch.h"
#include "cli/cli.h"
#include "model/checkpoint.h"
#include "model/codec.h"
#include "search/beam.h"
#include "search/forced.h"
#include "search/ready.h"
#include "search/translate.h"
#include "testdir.h"
#include "testprog.h"
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
    ck_assert(!rnnsearch_options_init(&opt, sizeof opt, &err));
    ck_assert_uint_eq(opt.size, sizeof opt);
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

    /* The same through search/translate.c directly, on the model loaded as
     * the program loads it. */
    rs_error e = {{0}};
    rs_codec codec = {0};
    rs_translator want_tr;
    rs_translated want[N];
    rs_ready ready;
    ck_assert_msg(!rs_ready_load(&ready, path, NULL, &codec, NULL, 0, &e), "%s", e.msg);
    const rs_ready *member = &ready;
    rs_translate_options topt;
    rs_translate_options_default(&topt);
    topt.beam = 3;
    topt.n_best = 2;
    topt.length_penalty = 0.5f;
    topt.want_alignment = 1;
    ck_assert(!rs_translator_init(&want_tr, &member, 1, &codec, &topt, &e));
    ck_assert_msg(!rs_translate_lines(&want_tr, N, lines, want, &e), "%s", e.msg);
    for (int i = 0; i < N; i++) {
        const rnnsearch_translation *g = &got[i];
        const rs_translated *w = &want[i];
        ck_assert_int_eq(g->source_count, w->source_count);
        for (int j = 0; j < g->source_count; j++)
            ck_assert_str_eq(g->source_tokens[j], w->source_tokens[j]);
        ck_assert_int_eq(g->count, w->count > 0 ? w->count : 1);
        for (int r = 0; r < g->count; r++) {
            const rnnsearch_hypothesis *h = &g->hyps[r];
            ck_assert_str_eq(h->text, w->hyps[r].text ? w->hyps[r].text : "");
            ck_assert_int_eq(h->count, w->hyps[r].count);
            ck_assert(h->logprob == w->hyps[r].logprob && h->score == w->hyps[r].score);
            for (int t = 0; t < h->count; t++)
                ck_assert_str_eq(h->tokens[t], w->hyps[r].tokens[t]);
            if (g->source_count == 0) {
                ck_assert_ptr_null(h->alignment); /* an empty line: nothing decoded */
                continue;
            }
            const size_t cells = (size_t)(h->count + 1) * (size_t)(g->source_count + 1);
            ck_assert(!memcmp(h->alignment, w->hyps[r].alignment, cells * sizeof(float)));
            check_rows_sum_to_one(h->alignment, h->count + 1, g->source_count + 1);
        }
        rnnsearch_translation_free(&got[i]);
        rs_translated_free(&want[i]);
    }
    rnnsearch_translation_free(&got[0]); /* freeing twice is harmless */
    rs_translator_free(&want_tr);
    rs_codec_free(&codec);
    rs_ready_free(&ready);
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
    rs_ready ready;
    ck_assert_msg(!rs_ready_load(&ready, path, NULL, &codec, NULL, 0, &e), "%s", e.msg);
    const rs_ready *member = &ready;
    const rs_forced_pair pair = {"das haus", "the the", 250,
                                 RS_FORCED_TOKENS | RS_FORCED_ALIGNMENT};
    ck_assert(!rs_forced_text(&member, 1, &codec, &pair, &want, &src, &tgt, &e));
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
    rs_ready_free(&ready);
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
    rnnsearch_options_init(&opt, sizeof opt, NULL);
    rnnsearch_translator *tr = NULL;
    opt.n_best = 2; /* more than the beam */
    ck_assert(rnnsearch_translator_new(m, &opt, &tr, &err) != 0);
    ck_assert_ptr_null(tr);
    ck_assert_ptr_nonnull(strstr(err.message, "more than the beam"));
    rnnsearch_options_init(&opt, sizeof opt, NULL);
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

/* ---- The contract of every entry point ---------------------------------- */

/* Each FAILS call must return -1 with a message of its own (the error is
 * cleared before it) that holds `needle` ("" for any message). */
static rnnsearch_error fresh;
#define FAILS(call, needle)                                                                        \
    do {                                                                                           \
        memset(&fresh, 0, sizeof fresh);                                                           \
        ck_assert_int_eq((call), -1);                                                              \
        ck_assert_msg(fresh.message[0], "%s: no message", #call);                                  \
        ck_assert_msg(strstr(fresh.message, needle), "%s: '%s' does not say '%s'", #call,          \
                      fresh.message, needle);                                                      \
    } while (0)

/* n bytes of "das das …" (a word the tiny model knows), NUL-terminated. */
static char *words(size_t n)
{
    char *s = malloc(n + 1);
    ck_assert_ptr_nonnull(s);
    for (size_t i = 0; i < n; i++)
        s[i] = "das "[i % 4];
    s[n] = '\0';
    return s;
}

static int all_bytes(const void *p, size_t n, unsigned char b)
{
    for (size_t i = 0; i < n; i++)
        if (((const unsigned char *)p)[i] != b)
            return 0;
    return 1;
}

/* Every function of librnnsearch.map with NULL, empty and oversized
 * arguments: a status and a message (or the documented NULL / nothing),
 * outputs left as they were, never a crash. */
START_TEST(every_entry_point_refuses_null_empty_and_oversized_arguments)
{
    rnnsearch_model *m = load();
    char *huge = words((size_t)RNNSEARCH_MAX_TEXT + 1), *full = words(RNNSEARCH_MAX_TEXT);

    ck_assert_str_eq(rnnsearch_version(), RNNSEARCH_VERSION);

    /* rnnsearch_model_load, _checkpoint, _free */
    rnnsearch_model *got = (rnnsearch_model *)&fresh;
    FAILS(rnnsearch_model_load(path, NULL, &fresh), "NULL");
    FAILS(rnnsearch_model_load(NULL, &got, &fresh), "no model");
    ck_assert_ptr_null(got);
    FAILS(rnnsearch_model_load("", &got, &fresh), "empty");
    FAILS(rnnsearch_model_load(huge, &got, &fresh), "");
    char *dirs = words(8192); /* "das das …": a name longer than any path */
    for (size_t i = 3; i < 8192; i += 4)
        dirs[i] = '/';
    FAILS(rnnsearch_model_load(dirs, &got, &fresh), "");
    free(dirs);
    ck_assert_ptr_null(got);
    ck_assert_ptr_null(rnnsearch_model_checkpoint(NULL));
    rnnsearch_model_free(NULL);

    /* rnnsearch_tokenize, rnnsearch_tokens_free */
    rnnsearch_tokens t = {.count = 7, .tokens = NULL};
    FAILS(rnnsearch_tokenize(NULL, RNNSEARCH_SOURCE, "das", &t, &fresh), "no model");
    FAILS(rnnsearch_tokenize(m, RNNSEARCH_SOURCE, "das", NULL, &fresh), "NULL");
    FAILS(rnnsearch_tokenize(m, RNNSEARCH_SOURCE, NULL, &t, &fresh), "NULL");
    FAILS(rnnsearch_tokenize(m, -1, "das", &t, &fresh), "side");
    FAILS(rnnsearch_tokenize(m, INT_MAX, "das", &t, &fresh), "side");
    FAILS(rnnsearch_tokenize(m, RNNSEARCH_SOURCE, huge, &t, &fresh), "longer than 1048576 bytes");
    ck_assert_int_eq(rnnsearch_tokenize(NULL, RNNSEARCH_SOURCE, "das", &t, NULL), -1);
    ck_assert_int_eq(t.count, 7); /* untouched by every failure */
    ck_assert(!rnnsearch_tokenize(m, RNNSEARCH_TARGET, "", &t, &fresh));
    ck_assert_int_eq(t.count, 0);
    rnnsearch_tokens_free(&t);
    ck_assert_msg(!rnnsearch_tokenize(m, RNNSEARCH_SOURCE, full, &t, &fresh), "%s", fresh.message);
    ck_assert_int_eq(t.count, RNNSEARCH_MAX_TEXT / 4); /* the most a line may hold */
    rnnsearch_tokens_free(&t);
    rnnsearch_tokens_free(NULL);

    /* rnnsearch_detokenize, rnnsearch_string_free */
    const char *const two[] = {"das", "haus"};
    char *text = (char *)"untouched";
    FAILS(rnnsearch_detokenize(NULL, RNNSEARCH_TARGET, two, 2, &text, &fresh), "no model");
    FAILS(rnnsearch_detokenize(m, RNNSEARCH_TARGET, two, 2, NULL, &fresh), "NULL");
    FAILS(rnnsearch_detokenize(m, 5, two, 2, &text, &fresh), "side");
    FAILS(rnnsearch_detokenize(m, RNNSEARCH_TARGET, NULL, 2, &text, &fresh), "NULL");
    FAILS(rnnsearch_detokenize(m, RNNSEARCH_TARGET, two, -1, &text, &fresh), "negative");
    FAILS(rnnsearch_detokenize(m, RNNSEARCH_TARGET, two, INT_MIN, &text, &fresh), "negative");
    const char *const with_null[] = {"das", NULL};
    FAILS(rnnsearch_detokenize(m, RNNSEARCH_TARGET, with_null, 2, &text, &fresh), "token 2");
    const char *const bad_utf8[] = {"das", "x\xff"};
    FAILS(rnnsearch_detokenize(m, RNNSEARCH_TARGET, bad_utf8, 2, &text, &fresh), "token 2");
    const char *const one_huge[] = {huge};
    FAILS(rnnsearch_detokenize(m, RNNSEARCH_TARGET, one_huge, 1, &text, &fresh), "more than");
    /* Two halves of a full line: with the space between them, one byte too many. */
    const char *const halves[] = {full + RNNSEARCH_MAX_TEXT / 2, full + RNNSEARCH_MAX_TEXT / 2};
    FAILS(rnnsearch_detokenize(m, RNNSEARCH_TARGET, halves, 2, &text, &fresh), "more than");
    ck_assert_str_eq(text, "untouched");
    ck_assert(!rnnsearch_detokenize(m, RNNSEARCH_TARGET, NULL, 0, &text, &fresh));
    ck_assert_str_eq(text, "");
    rnnsearch_string_free(text);
    rnnsearch_string_free(NULL);

    /* The options' functions (their sizes and ranges: options_carry_their_size) */
    rnnsearch_options opt;
    FAILS(rnnsearch_options_init(NULL, sizeof opt, &fresh), "NULL");
    FAILS(rnnsearch_options_init(&opt, 0, &fresh), "size");
    ck_assert(!rnnsearch_options_init(&opt, sizeof opt, &fresh));
    FAILS(rnnsearch_options_set(NULL, "beam", 2, &fresh), "NULL");
    FAILS(rnnsearch_options_set(&opt, NULL, 2, &fresh), "NULL");
    FAILS(rnnsearch_options_set(&opt, "", 2, &fresh), "no option");
    FAILS(rnnsearch_options_set(&opt, huge, 2, &fresh), "no option");
    FAILS(rnnsearch_options_check(NULL, &fresh), "NULL");
    ck_assert_uint_gt(rnnsearch_options_size(), 0);

    /* rnnsearch_translator_new, _free */
    rnnsearch_translator *tr = (rnnsearch_translator *)&fresh;
    FAILS(rnnsearch_translator_new(NULL, &opt, &tr, &fresh), "no model");
    ck_assert_ptr_null(tr);
    FAILS(rnnsearch_translator_new(m, &opt, NULL, &fresh), "no place");
    rnnsearch_translator_free(NULL);

    /* rnnsearch_translate, rnnsearch_translation_free */
    ck_assert(!rnnsearch_translator_new(m, NULL, &tr, &fresh));
    rnnsearch_translation out[2];
    memset(out, 0x5a, sizeof out);
    const char *const lines[] = {"das", "das das"};
    FAILS(rnnsearch_translate(NULL, 2, lines, out, &fresh), "no translator");
    FAILS(rnnsearch_translate(tr, -1, lines, out, &fresh), "");
    FAILS(rnnsearch_translate(tr, INT_MIN, lines, out, &fresh), "");
    FAILS(rnnsearch_translate(tr, 2, NULL, out, &fresh), "");
    FAILS(rnnsearch_translate(tr, 2, lines, NULL, &fresh), "");
    FAILS(rnnsearch_translate(tr, 2, with_null, out, &fresh), "sentence 2: no text");
    const char *const with_huge[] = {"das", huge};
    FAILS(rnnsearch_translate(tr, 2, with_huge, out, &fresh), "sentence 2: longer than");
    ck_assert(all_bytes(out, sizeof out, 0x5a));
    const char *const empty[] = {""};
    ck_assert(!rnnsearch_translate(tr, 1, empty, out, &fresh));
    ck_assert_int_eq(out[0].count, 1);
    ck_assert_str_eq(out[0].hyps[0].text, "");
    rnnsearch_translation_free(&out[0]);
    const char *const longest[] = {full};
    ck_assert_msg(!rnnsearch_translate(tr, 1, longest, out, &fresh), "%s", fresh.message);
    ck_assert_int_eq(out[0].source_count, 250); /* cut, as the program cuts it */
    ck_assert_int_eq(out[0].truncated, RNNSEARCH_MAX_TEXT / 4 - 250);
    rnnsearch_translation_free(&out[0]);
    rnnsearch_translation_free(NULL);
    rnnsearch_translator_free(tr);

    /* rnnsearch_force, rnnsearch_forced_free */
    rnnsearch_forced f;
    memset(&f, 0x5a, sizeof f);
    FAILS(rnnsearch_force(NULL, "das", "the", &f, &fresh), "no model");
    FAILS(rnnsearch_force(m, "das", "the", NULL, &fresh), "NULL");
    FAILS(rnnsearch_force(m, NULL, "the", &f, &fresh), "the source: no text");
    FAILS(rnnsearch_force(m, "das", NULL, &f, &fresh), "the target: no text");
    FAILS(rnnsearch_force(m, "", "the", &f, &fresh), "empty");
    FAILS(rnnsearch_force(m, huge, "the", &f, &fresh), "the source: longer than");
    FAILS(rnnsearch_force(m, "das", huge, &f, &fresh), "the target: longer than");
    ck_assert(all_bytes(&f, sizeof f, 0x5a));
    ck_assert_msg(!rnnsearch_force(m, "das", "", &f, &fresh), "%s", fresh.message);
    ck_assert_int_eq(f.target_count, 0); /* an empty target is </s> alone */
    ck_assert(f.token_logprobs[0] == (float)f.logprob);
    rnnsearch_forced_free(&f);
    rnnsearch_forced_free(NULL);

    free(huge);
    free(full);
    rnnsearch_model_free(m);
}
END_TEST

/* The options carry their size: the library writes and reads only the
 * caller's bytes, refuses a size rnnsearch_options_init did not write, and a
 * field set beyond what it knows (a newer header's); every field is bounded
 * by the command line's range, set one at a time or checked together. */
START_TEST(options_carry_their_size)
{
    enum { V1 = offsetof(rnnsearch_options, replace_unk) + sizeof(int), GUARD = 32 };
    rnnsearch_model *m = load();
    rnnsearch_translator *tr = NULL;
    ck_assert_uint_eq(rnnsearch_options_size(), sizeof(rnnsearch_options));

    /* Exactly the first version's bytes, on the heap (ASan sees any access
     * past them), then a guard that must stay as it was. */
    unsigned char *v1 = malloc(V1 + GUARD);
    ck_assert_ptr_nonnull(v1);
    memset(v1, 0xa5, V1 + GUARD);
    ck_assert(!rnnsearch_options_init((rnnsearch_options *)v1, V1, &fresh));
    ck_assert(all_bytes(v1 + V1, GUARD, 0xa5));
    rnnsearch_options o;
    memcpy(&o, v1, V1);
    ck_assert_uint_eq(o.size, V1);
    ck_assert_int_eq(o.beam, 1);
    ck_assert_int_eq(o.max_src_len, 250);
    ck_assert_int_eq(o.batch_size, 32);
    ck_assert(o.length_penalty == 1.0f);
    ck_assert(!rnnsearch_options_set((rnnsearch_options *)v1, "beam", 4, &fresh));
    ck_assert(all_bytes(v1 + V1, GUARD, 0xa5));
    free(v1);

    /* A newer header's larger structure: the bytes this library does not
     * know come back zero (their default), and one set there is refused. */
    const size_t newer = sizeof(rnnsearch_options) + 16;
    unsigned char *big = malloc(newer);
    ck_assert_ptr_nonnull(big);
    memset(big, 0xa5, newer);
    ck_assert(!rnnsearch_options_init((rnnsearch_options *)big, newer, &fresh));
    ck_assert(all_bytes(big + sizeof(rnnsearch_options), 16, 0));
    ck_assert(!rnnsearch_options_check((rnnsearch_options *)big, &fresh));
    ck_assert_msg(!rnnsearch_translator_new(m, (rnnsearch_options *)big, &tr, &fresh), "%s",
                  fresh.message);
    rnnsearch_translator_free(tr);
    big[newer - 1] = 1;
    FAILS(rnnsearch_options_check((rnnsearch_options *)big, &fresh), "does not know");
    FAILS(rnnsearch_translator_new(m, (rnnsearch_options *)big, &tr, &fresh), "does not know");
    free(big);

    /* A size that rnnsearch_options_init did not write. */
    rnnsearch_options opt;
    memset(&opt, 0, sizeof opt);
    FAILS(rnnsearch_translator_new(m, &opt, &tr, &fresh), "rnnsearch_options_init");
    ck_assert_ptr_null(tr);
    FAILS(rnnsearch_options_set(&opt, "beam", 2, &fresh), "rnnsearch_options_init");
    memset(&opt, 0xff, sizeof opt);
    FAILS(rnnsearch_options_check(&opt, &fresh), "rnnsearch_options_init");
    FAILS(rnnsearch_options_init(&opt, V1 - 1, &fresh), "size");
    FAILS(rnnsearch_options_init(&opt, (size_t)1 << 40, &fresh), "size");
    ck_assert(all_bytes(&opt, sizeof opt, 0xff)); /* a refused init writes nothing */

    /* Each field's range, set by name and set by hand. */
    static const struct {
        const char *name;
        double bad;
    } out_of_range[] = {
        {"beam", 0},
        {"beam", 1001},
        {"beam", 2147483647.0},
        {"beam", 4294967297.0}, /* 2^32 + 1, which a cast to int makes 1 */
        {"beam", -1},
        {"beam", 2.5},
        {"beam", NAN},
        {"n_best", 0},
        {"n_best", 1001},
        {"batch_size", 0},
        {"batch_size", 100001},
        {"max_len", -1},
        {"max_len", 100001},
        {"max_src_len", -1},
        {"max_src_len", 100001},
        {"length_penalty", INFINITY},
        {"length_penalty", NAN},
        {"length_penalty", 100.5},
        {"length_penalty", -1e30},
        {"alignment", 2},
        {"replace_unk", -1},
    };
    rnnsearch_options_init(&opt, sizeof opt, NULL);
    const rnnsearch_options before = opt;
    for (size_t i = 0; i < sizeof out_of_range / sizeof out_of_range[0]; i++) {
        memset(&fresh, 0, sizeof fresh);
        ck_assert_int_eq(
            rnnsearch_options_set(&opt, out_of_range[i].name, out_of_range[i].bad, &fresh), -1);
        ck_assert_msg(!strncmp(fresh.message, out_of_range[i].name, strlen(out_of_range[i].name)),
                      "%s = %g: '%s'", out_of_range[i].name, out_of_range[i].bad, fresh.message);
    }
    ck_assert(!memcmp(&opt, &before, sizeof opt)); /* nothing was set */
    FAILS(rnnsearch_options_set(&opt, "beam", 2147483647.0, &fresh),
          "beam: 2147483647 is not an integer from 1 to 1000");
    FAILS(rnnsearch_options_set(&opt, "size", 64, &fresh), "no option is called 'size'");
    ck_assert(!rnnsearch_options_set(&opt, "beam", 1000, &fresh));
    ck_assert(!rnnsearch_options_set(&opt, "n_best", 1000, &fresh));
    ck_assert(!rnnsearch_options_set(&opt, "batch_size", 100000, &fresh));
    ck_assert(!rnnsearch_options_set(&opt, "max_len", 0, &fresh));
    ck_assert(!rnnsearch_options_set(&opt, "max_src_len", 100000, &fresh));
    ck_assert(!rnnsearch_options_set(&opt, "length_penalty", -0.25, &fresh));
    ck_assert(!rnnsearch_options_set(&opt, "alignment", 1, &fresh));
    ck_assert(!rnnsearch_options_set(&opt, "replace_unk", 1, &fresh));
    ck_assert(opt.beam == 1000 && opt.n_best == 1000 && opt.batch_size == 100000 &&
              opt.max_len == 0 && opt.max_src_len == 100000 && opt.length_penalty == -0.25f &&
              opt.alignment == 1 && opt.replace_unk == 1);
    ck_assert(!rnnsearch_options_check(&opt, &fresh));

    /* Set by hand, the same ranges hold at rnnsearch_translator_new. */
    static const int beams[] = {0, -5, 1001, INT_MAX, INT_MIN, (1 << 27) + 1};
    for (size_t i = 0; i < sizeof beams / sizeof beams[0]; i++) {
        rnnsearch_options_init(&opt, sizeof opt, NULL);
        opt.beam = beams[i];
        FAILS(rnnsearch_options_check(&opt, &fresh), "beam: ");
        FAILS(rnnsearch_translator_new(m, &opt, &tr, &fresh), "beam: ");
        ck_assert_ptr_null(tr);
    }
    rnnsearch_options_init(&opt, sizeof opt, NULL);
    opt.beam = 2;
    opt.n_best = 3;
    FAILS(rnnsearch_translator_new(m, &opt, &tr, &fresh), "n_best: 3 is more than the beam (2)");
    rnnsearch_options_init(&opt, sizeof opt, NULL);
    opt.batch_size = INT_MAX;
    FAILS(rnnsearch_translator_new(m, &opt, &tr, &fresh), "batch_size: ");
    rnnsearch_options_init(&opt, sizeof opt, NULL);
    opt.max_src_len = -1;
    FAILS(rnnsearch_translator_new(m, &opt, &tr, &fresh), "max_src_len: ");
    rnnsearch_options_init(&opt, sizeof opt, NULL);
    opt.length_penalty = -INFINITY;
    FAILS(rnnsearch_translator_new(m, &opt, &tr, &fresh), "length_penalty: ");
    rnnsearch_model_free(m);
}
END_TEST

/* The library's bounds are the command line's: rnnsearch_options_set and
 * `translate --beam` etc. (cli/cli.c) accept the same largest value and
 * refuse the next (usage errors go to stderr: muted here). */
START_TEST(limits_are_the_command_line_s)
{
    static const struct {
        const char *option, *name;
        double max, next;
    } names[] = {{"--beam", "beam", RS_MAX_BEAM, RS_MAX_BEAM + 1},
                 {"--length-penalty", "length_penalty", RS_MAX_LENGTH_PENALTY, 100.001},
                 {"--batch-size", "batch_size", RS_MAX_BATCH, RS_MAX_BATCH + 1},
                 {"--max-len", "max_len", RS_MAX_LENGTH, RS_MAX_LENGTH + 1},
                 {"--max-src-len", "max_src_len", RS_MAX_LENGTH, RS_MAX_LENGTH + 1}};
    ck_assert_int_eq(RNNSEARCH_MAX_BEAM, 1000);
    ck_assert_int_eq(RNNSEARCH_MAX_BATCH, 100000);
    ck_assert_int_eq(RNNSEARCH_MAX_LENGTH, 100000);
    rnnsearch_options opt;
    rnnsearch_options_init(&opt, sizeof opt, NULL);
    int checked = 0;
    /* The command line's largest value of each search option is the
     * library's (the program then fails on the missing model, exit 1), and
     * the next one past it is refused by both (exit 2). */
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        char cmd[256], out[1024];
        ck_assert_msg(!rnnsearch_options_set(&opt, names[k].name, names[k].max, NULL), "%s",
                      names[k].name);
        ck_assert(rnnsearch_options_set(&opt, names[k].name, names[k].next, NULL) == -1);
        snprintf(cmd, sizeof cmd, "translate -m /nonexistent %s %g < /dev/null", names[k].option,
                 names[k].max);
        ck_assert_msg(testprog_run_all(cmd, out, sizeof out) == 1, "%s: %s", cmd, out);
        snprintf(cmd, sizeof cmd, "translate -m /nonexistent %s %g < /dev/null", names[k].option,
                 names[k].next);
        ck_assert_msg(testprog_run_all(cmd, out, sizeof out) == 2, "%s: %s", cmd, out);
        checked++;
    }
    ck_assert_int_eq(checked, 5);
}
END_TEST

/* Sizes of the search are products of ints: batch · beam rows, steps · rows
 * · positions. Where they do not fit, the search says so instead of sizing
 * its arrays by a wrapped-around product (32 · (2^27 + 1) is 32 in 32 bits)
 * or asking for 2^64 − 256 bytes. */
START_TEST(search_sizes_do_not_overflow)
{
    const rs_ready plain = rs_ready_plain(&saved), *member = &plain;
    rs_error e = {{0}};
    rs_decoder dec;
    ck_assert(rs_decoder_init(&dec, &member, 1, 32, (1 << 27) + 1, 8, &e) == -1);
    ck_assert_msg(strstr(e.msg, "not a size it can hold"), "%s", e.msg);
    ck_assert(rs_decoder_init(&dec, &member, 1, INT_MAX, 2, 8, &e) == -1);
    ck_assert_msg(strstr(e.msg, "not a size it can hold"), "%s", e.msg);
    ck_assert(rs_decoder_init(&dec, &member, 1, 0, 1, 8, &e) == -1);
    rs_beam_search bs;
    ck_assert(rs_beam_init(&bs, &member, 1, 32, (1 << 27) + 1, 8, &e) == -1);
    ck_assert(rs_beam_init(&bs, &member, 1, 32, INT_MAX, 8, &e) == -1);

    /* A decoder sized for 2 sentences of 3 rows refuses 3 sentences, or
     * rows whose product wraps. */
    ck_assert_msg(!rs_decoder_init(&dec, &member, 1, 2, 3, 8, &e), "%s", e.msg);
    static const int ids[] = {4, 4};
    const int *src[3] = {ids, ids, ids};
    const int count[3] = {2, 2, 2};
    ck_assert(rs_decoder_start(&dec, 3, src, count, 1, &e) == -1);
    ck_assert(rs_decoder_start(&dec, 2, src, count, INT_MAX / 2 + 1, &e) == -1);
    ck_assert(rs_decoder_start(&dec, 2, src, count, 0, &e) == -1);
    ck_assert_msg(!rs_decoder_start(&dec, 2, src, count, 3, &e), "%s", e.msg);
    rs_decoder_free(&dec);

    /* Beam search refuses more sentences than it was sized for before it
     * touches out[], which the caller sized for those. */
    ck_assert_msg(!rs_beam_init(&bs, &member, 1, 2, 2, 8, &e), "%s", e.msg);
    rs_hypothesis out[2 * 2];
    memset(out, 0x5a, sizeof out);
    const rs_beam_options bo = {.beam = 2, .n_best = 2, .length_penalty = 1.0f};
    ck_assert(rs_beam_translate(&bs, 3, src, count, &bo, out, &e) == -1);
    ck_assert(all_bytes(out, sizeof out, 0x5a));
    const rs_beam_options too_many = {.beam = 2, .n_best = 3, .length_penalty = 1.0f};
    ck_assert(rs_beam_translate(&bs, 1, src, count, &too_many, out, &e) == -1);
    ck_assert(all_bytes(out, sizeof out, 0x5a));
    ck_assert_msg(!rs_beam_translate(&bs, 2, src, count, &bo, out, &e), "%s", e.msg);
    for (int i = 0; i < 4; i++)
        rs_hypothesis_free(&out[i]);
    rs_beam_free(&bs);

    /* Through the API: beam 2^31 − 1 is out of range, not out of memory. */
    rnnsearch_model *m = load();
    rnnsearch_options opt;
    rnnsearch_options_init(&opt, sizeof opt, NULL);
    rnnsearch_translator *tr = NULL;
    opt.beam = INT_MAX;
    FAILS(rnnsearch_translator_new(m, &opt, &tr, &fresh), "beam: 2147483647 is not an integer");
    /* The largest beam the program allows translates. */
    opt.beam = RNNSEARCH_MAX_BEAM;
    opt.n_best = 2;
    opt.batch_size = 2;
    ck_assert_msg(!rnnsearch_translator_new(m, &opt, &tr, &fresh), "%s", fresh.message);
    rnnsearch_translation t[2];
    const char *const lines[] = {"das", "das das"};
    ck_assert_msg(!rnnsearch_translate(tr, 2, lines, t, &fresh), "%s", fresh.message);
    ck_assert_int_eq(t[0].count, 2);
    rnnsearch_translation_free(&t[0]);
    rnnsearch_translation_free(&t[1]);
    rnnsearch_translator_free(tr);
    rnnsearch_model_free(m);
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
    tcase_add_test(tc, every_entry_point_refuses_null_empty_and_oversized_arguments);
    tcase_add_test(tc, options_carry_their_size);
    tcase_add_test(tc, limits_are_the_command_line_s);
    tcase_add_test(tc, search_sizes_do_not_overflow);
    /* A line of 1 MiB is tokenized and translated whole: seconds under ASan. */
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}
