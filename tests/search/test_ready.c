/* A model ready to decode (src/search/ready.c), the one preparation of every
 * decoding road: a checkpoint found as -m finds it (a file, a run directory's
 * best.ckpt else last.ckpt, a bare name in $RNNSEARCH_MODELS), its weights
 * as saved, its codec, and faster forms that decode as the plain model does
 * to rounding and as themselves to the bit; a damaged or missing checkpoint
 * refused with a message naming it, nothing left allocated; and a view with
 * int8 forms that shares the model's weights, decodes as a model loaded with
 * int8 to the bit, and leaves the model as it was. (accel/ makes the forms:
 * their own arithmetic is accel/test_transposed.c's and
 * accel/test_int8.c's.) */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/checkpoint.h"
#include "search/ready.h"
#include "search/translate.h"
#include "testdir.h"
#include "tinymodel.h"

static char dir[64], path[256];
static rs_model saved;

static const char *const lines[] = {"das haus", "haus das das", "das", "haus haus das haus"};
enum { N = 4 };

/* A tiny model with words, saved to dir/m.ckpt. */
static void setup(void)
{
    rs_error err = {{0}};
    testdir_make(dir, "rs_ready");
    snprintf(path, sizeof path, "%s/m.ckpt", dir);
    tiny_model_with_words(&saved, 5, "haus", 11);
    ck_assert_msg(!rs_checkpoint_save(path, &saved, NULL, &err), "%s", err.msg);
}

static void teardown(void)
{
    rs_model_free(&saved);
    testdir_remove(dir);
}

/* Greedy translations of `lines` by model with codec (the model's own when
 * codec is NULL). */
static void translate(const rs_ready *model, const rs_codec *codec, rs_translated *out)
{
    rs_error err = {{0}};
    rs_codec own = {0};
    if (!codec) {
        ck_assert_msg(!rs_codec_for_model(&own, model->model, &err), "%s", err.msg);
        codec = &own;
    }
    rs_translate_options opt;
    rs_translate_options_default(&opt);
    rs_translator tr;
    ck_assert_msg(!rs_translator_init(&tr, &model, 1, codec, &opt, &err), "%s", err.msg);
    ck_assert_msg(!rs_translate_lines(&tr, N, lines, out, &err), "%s", err.msg);
    rs_translator_free(&tr);
    rs_codec_free(&own);
}

/* The same token ids; log-probabilities the same bits (tol 0) or within tol. */
static void expect_same(rs_translated *got, rs_translated *want, double tol, const char *what)
{
    for (int i = 0; i < N; i++) {
        const rs_hypothesis *g = &got[i].hyps[0], *w = &want[i].hyps[0];
        ck_assert_msg(g->count == w->count, "%s, line %d: %d tokens, expected %d", what, i,
                      g->count, w->count);
        ck_assert_msg(!memcmp(g->ids, w->ids, (size_t)g->count * sizeof *g->ids),
                      "%s, line %d: other tokens", what, i);
        if (tol == 0)
            ck_assert_msg(g->logprob == w->logprob, "%s, line %d: log p %.17g, expected %.17g",
                          what, i, g->logprob, w->logprob);
        else
            ck_assert_msg(fabs(g->logprob - w->logprob) <= tol, "%s, line %d: log p %.9g vs %.9g",
                          what, i, g->logprob, w->logprob);
        rs_translated_free(&got[i]);
        rs_translated_free(&want[i]);
    }
}

START_TEST(loads_the_weights_as_saved_with_the_codec)
{
    rs_ready r;
    rs_codec codec = {0};
    rs_error err = {{0}};
    char found[256] = "";
    ck_assert_msg(!rs_ready_load(&r, path, NULL, &codec, found, sizeof found, &err), "%s", err.msg);
    ck_assert_str_eq(found, path);
    const rs_model *m = r.model;
    ck_assert_uint_eq(m->layout.total, saved.layout.total);
    ck_assert(!memcmp(m->params, saved.params, saved.layout.total * sizeof(float)));
    ck_assert_int_eq(m->src_vocab.size, saved.src_vocab.size);
    ck_assert_int_eq(m->tgt_vocab.size, saved.tgt_vocab.size);
    ck_assert_ptr_nonnull(r.accel); /* the copies, made once, with the model */
    /* The codec given back is the model's: the same translations as one made here. */
    rs_translated got[N], want[N];
    translate(&r, &codec, got);
    translate(&r, NULL, want);
    expect_same(got, want, 0, "the ready codec");
    rs_codec_free(&codec);
    rs_ready_free(&r);
    ck_assert(!r.model && !r.accel);
    /* Without a codec or a path to fill. */
    ck_assert_msg(!rs_ready_load(&r, path, NULL, NULL, NULL, 0, &err), "%s", err.msg);
    rs_ready_free(&r);
}
END_TEST

/* The faster forms compute the plain model's function: the same tokens, log
 * p to float rounding (another order of sums: tests/support/roads.h); and
 * one road run twice is the same bits. */
START_TEST(decodes_as_the_plain_model_to_rounding_and_as_itself_to_the_bit)
{
    rs_ready ready, again;
    rs_model plain;
    rs_error err = {{0}};
    ck_assert_msg(!rs_ready_load(&ready, path, NULL, NULL, NULL, 0, &err), "%s", err.msg);
    ck_assert_msg(!rs_ready_load(&again, path, NULL, NULL, NULL, 0, &err), "%s", err.msg);
    ck_assert_msg(!rs_checkpoint_load(path, &plain, NULL, &err), "%s", err.msg);
    const rs_ready as_is = rs_ready_plain(&plain);
    ck_assert_ptr_null(as_is.accel);
    rs_translated a[N], b[N];
    translate(&ready, NULL, a);
    translate(&as_is, NULL, b);
    expect_same(a, b, 1e-5, "ready against plain");
    translate(&ready, NULL, a);
    translate(&again, NULL, b);
    expect_same(a, b, 0, "ready twice");
    rs_ready_free(&ready);
    rs_ready_free(&again);
    rs_model_free(&plain);
}
END_TEST

/* A run directory gives its best.ckpt, else its last.ckpt; a bare name is
 * looked for in $RNNSEARCH_MODELS; the path says which file was read. */
START_TEST(a_directory_or_a_name_resolves_as_m_does)
{
    char run[128], last[192], best[192], found[256];
    rs_error err = {{0}};
    rs_ready m;
    snprintf(run, sizeof run, "%s/run", dir);
    snprintf(last, sizeof last, "%s/last.ckpt", run);
    snprintf(best, sizeof best, "%s/best.ckpt", run);
    ck_assert_msg(!rs_checkpoint_save(last, &saved, NULL, &err), "%s", err.msg);
    ck_assert_msg(!rs_ready_load(&m, run, NULL, NULL, found, sizeof found, &err), "%s", err.msg);
    ck_assert_str_eq(found, last);
    rs_ready_free(&m);
    ck_assert_msg(!rs_checkpoint_save(best, &saved, NULL, &err), "%s", err.msg);
    ck_assert_msg(!rs_ready_load(&m, run, NULL, NULL, found, sizeof found, &err), "%s", err.msg);
    ck_assert_str_eq(found, best);
    rs_ready_free(&m);
    ck_assert_int_eq(setenv("RNNSEARCH_MODELS", dir, 1), 0);
    const int rc = rs_ready_load(&m, "run", NULL, NULL, found, sizeof found, &err);
    unsetenv("RNNSEARCH_MODELS");
    ck_assert_msg(rc == 0, "%s", err.msg);
    ck_assert_str_eq(found, best);
    rs_ready_free(&m);
}
END_TEST

/* A checkpoint with one byte changed, a file that is not there and a
 * directory without a checkpoint: -1, a message naming the file (or the
 * places looked at), nothing held (rs_ready_free on it harmless) and the
 * path not filled. */
START_TEST(a_bad_or_missing_checkpoint_is_refused_naming_it)
{
    char bad[192], missing[192], empty[192], found[256];
    rs_error err = {{0}};
    rs_ready m;
    rs_codec codec = {0};
    size_t size;
    unsigned char *bytes = testfile_read(path, &size);
    ck_assert_ptr_nonnull(bytes);
    bytes[size / 2] ^= 0x40;
    snprintf(bad, sizeof bad, "%s/bad.ckpt", dir);
    testfile_write(bad, bytes, size);
    free(bytes);
    snprintf(missing, sizeof missing, "%s/none.ckpt", dir);
    snprintf(empty, sizeof empty, "%s/empty", dir);
    ck_assert_int_eq(mkdir(empty, 0755), 0);
    const char *const args[] = {bad, missing, empty};
    for (int k = 0; k < 3; k++) {
        strcpy(found, "not filled");
        err.msg[0] = '\0';
        m = (rs_ready){0};
        ck_assert_int_eq(rs_ready_load(&m, args[k], NULL, &codec, found, sizeof found, &err), -1);
        ck_assert_msg(strstr(err.msg, args[k]), "'%s' does not name %s", err.msg, args[k]);
        ck_assert_str_eq(found, "not filled");
        ck_assert_ptr_null(m.model);
        ck_assert_ptr_null(m.accel);
        rs_ready_free(&m);
    }
}
END_TEST

/* A view with int8 forms: the model's own weights (not a copy), the bits of
 * a model loaded with int8 (the library's road and the program's
 * translate --int8 agree), and, once freed, the model unchanged and decoding
 * as before. */
START_TEST(an_int8_view_shares_the_weights_and_decodes_as_an_int8_load)
{
    rs_ready m, loaded, view;
    rs_error err = {{0}};
    const rs_ready_options int8 = {.int8 = 1};
    ck_assert_msg(!rs_ready_load(&m, path, NULL, NULL, NULL, 0, &err), "%s", err.msg);
    ck_assert_msg(!rs_ready_load(&loaded, path, &int8, NULL, NULL, 0, &err), "%s", err.msg);
    rs_translated before[N], a[N], b[N];
    translate(&m, NULL, before);
    ck_assert_msg(!rs_ready_view(&m, &int8, &view, &err), "%s", err.msg);
    ck_assert_ptr_eq(view.model, m.model);
    ck_assert(view.accel && view.accel != m.accel);
    translate(&view, NULL, a);
    translate(&loaded, NULL, b);
    expect_same(a, b, 0, "int8 view against int8 load");
    rs_ready_view_free(&view);
    ck_assert(!memcmp(m.model->params, saved.params, saved.layout.total * sizeof(float)));
    translate(&m, NULL, a);
    expect_same(a, before, 0, "the model after its view");
    rs_ready_free(&m);
    rs_ready_free(&loaded);
}
END_TEST

Suite *ready_suite(void)
{
    Suite *s = suite_create("ready");
    TCase *tc = tcase_create("ready");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, loads_the_weights_as_saved_with_the_codec);
    tcase_add_test(tc, decodes_as_the_plain_model_to_rounding_and_as_itself_to_the_bit);
    tcase_add_test(tc, a_directory_or_a_name_resolves_as_m_does);
    tcase_add_test(tc, a_bad_or_missing_checkpoint_is_refused_naming_it);
    tcase_add_test(tc, an_int8_view_shares_the_weights_and_decodes_as_an_int8_load);
    suite_add_tcase(s, tc);
    return s;
}
