/* --attention none (the fixed-length encoder-decoder) through the program:
 * a dates model trained for a few steps translates (greedy, beam, an
 * ensemble of itself, an ensemble with an attentive model), scores, goes out
 * and back through safetensors and average, and shows in info without att.*
 * tensors; everything that would show an alignment says there is none
 * (translate --alignment and --replace-unk, align, align --pairs, train
 * --watch, explain --score none), and the library refuses alignments of it. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/checkpoint.h"
#include "search/forced.h"
#include "search/translate.h"
#include "testdir.h"
#include "testprog.h"

static char dir[128];

#define NO_ALIGNMENT "--attention none (the fixed-length encoder-decoder) has no alignment"
#define TRAIN                                                                                      \
    "train --train corpora/dates/train.tsv --dev corpora/dates/dev.tsv --epochs 1 --threads 1 "    \
    "--hidden 16 --emb 8 --maxout 8 --quiet "

/* DIR/name: a none model trained for 40 steps (about a second). */
static void train_none(const char *name)
{
    char args[1024], out[8192];
    snprintf(args, sizeof args, TRAIN "--attention none --max-steps 40 --out %s/%s", dir, name);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
}

/* Runs args (with %s for dir, once or more), expecting status and, when
 * given, `want` in what it printed on either stream. */
static void expect(int status, const char *want, const char *args)
{
    char out[16384];
    int rc = testprog_run_all(args, out, sizeof out);
    ck_assert_msg(rc == status, "%s: status %d, want %d: %s", args, rc, status, out);
    if (want)
        ck_assert_msg(strstr(out, want) != NULL, "%s: no '%s' in: %s", args, want, out);
}

START_TEST(a_model_without_attention_goes_through_every_command)
{
    char args[2048], src[256];
    testdir_make(dir, "rs_none");
    train_none("m");
    snprintf(src, sizeof src, "%s/src.txt", dir);
    testfile_put(dir, "src.txt", "21 nov. 2026\n2 March 1999\n");
    testfile_put(dir, "pairs.tsv", "21 nov. 2026\t2026-11-21\n2 March 1999\t1999-03-02\n");

    snprintf(args, sizeof args, "info -m %s/m", dir);
    expect(0, "attention = none", args);
    char out[16384];
    ck_assert_int_eq(testprog_run(args, out, sizeof out), 0);
    ck_assert_msg(!strstr(out, "att."), "info lists attention tensors: %s", out);

    /* Translation: greedy, beam with n-best, an ensemble of two none models. */
    char greedy[4096], beam[4096], twice[4096];
    snprintf(args, sizeof args, "translate -m %s/m < %s", dir, src);
    ck_assert_int_eq(testprog_run(args, greedy, sizeof greedy), 0);
    ck_assert_msg(strchr(greedy, '\n') && strchr(strchr(greedy, '\n') + 1, '\n'), "%s", greedy);
    snprintf(args, sizeof args, "translate -m %s/m --beam 3 --n-best 2 < %s", dir, src);
    ck_assert_int_eq(testprog_run(args, beam, sizeof beam), 0);
    ck_assert_ptr_nonnull(strstr(beam, "1 ||| "));
    snprintf(args, sizeof args, "translate -m %s/m -m %s/m < %s", dir, dir, src);
    ck_assert_int_eq(testprog_run(args, twice, sizeof twice), 0);
    ck_assert_str_eq(twice, greedy); /* the mean of two equal models is the model */
    snprintf(args, sizeof args, "score -m %s/m %s/pairs.tsv", dir, dir);
    expect(0, "-", args);

    /* Out and back: export, import, export again gives the same bytes. */
    snprintf(args, sizeof args,
             "export -m %s/m %s/a.safetensors && %s import %s/a.safetensors -o %s/b.ckpt && %s "
             "export -m %s/b.ckpt %s/b.safetensors && cmp %s/a.safetensors %s/b.safetensors",
             dir, dir, testprog_path(), dir, dir, testprog_path(), dir, dir, dir, dir);
    expect(0, NULL, args);
    snprintf(args, sizeof args, "translate -m %s/b.ckpt < %s", dir, src);
    ck_assert_int_eq(testprog_run(args, out, sizeof out), 0);
    ck_assert_str_eq(out, greedy);
    snprintf(args, sizeof args, "average -o %s/avg.ckpt %s/m/best.ckpt %s/m/last.ckpt", dir, dir,
             dir);
    expect(0, NULL, args);

    /* What would show an alignment says there is none. */
    snprintf(args, sizeof args, "translate -m %s/m --alignment < %s", dir, src);
    expect(1, NO_ALIGNMENT, args);
    snprintf(args, sizeof args, "translate -m %s/m --replace-unk < %s", dir, src);
    expect(1, NO_ALIGNMENT, args);
    snprintf(args, sizeof args, "align -m %s/m < %s", dir, src);
    expect(1, NO_ALIGNMENT, args);
    snprintf(args, sizeof args, "align -m %s/m --pairs %s/pairs.tsv", dir, dir);
    expect(1, NO_ALIGNMENT, args);
    snprintf(args, sizeof args, TRAIN "--attention none --max-steps 2 --out %s/w --watch %s", dir,
             src);
    expect(1, "--watch: a model with " NO_ALIGNMENT, args);
    expect(2, "--score none: a model with " NO_ALIGNMENT,
           "explain --score none --query '1 2' --keys '1 0; 0 1'");
    testdir_remove(dir);
}
END_TEST

/* A none model in an ensemble with an attentive one translates (the
 * members' log-probabilities are averaged as ever); an alignment of the
 * ensemble is refused, naming the member. */
START_TEST(an_ensemble_mixing_kinds_translates_but_has_no_alignment)
{
    char args[2048], src[256];
    testdir_make(dir, "rs_none_mix");
    train_none("none");
    snprintf(args, sizeof args, TRAIN "--att 8 --max-steps 40 --out %s/additive", dir);
    expect(0, NULL, args);
    snprintf(src, sizeof src, "%s/src.txt", dir);
    testfile_put(dir, "src.txt", "21 nov. 2026\n");
    snprintf(args, sizeof args, "translate -m %s/additive -m %s/none < %s", dir, dir, src);
    expect(0, NULL, args);
    snprintf(args, sizeof args, "translate -m %s/additive -m %s/none --alignment < %s", dir, dir,
             src);
    expect(1, "model 2 of the ensemble: a model with " NO_ALIGNMENT, args);
    testdir_remove(dir);
}
END_TEST

/* The library: the translator and forced decoding refuse an alignment of
 * a none model, and give everything else. */
START_TEST(the_library_refuses_an_alignment)
{
    char path[256];
    testdir_make(dir, "rs_none_lib");
    train_none("m");
    snprintf(path, sizeof path, "%s/m/best.ckpt", dir);
    rs_model model;
    rs_error err = {{0}};
    ck_assert_msg(!rs_checkpoint_load(path, &model, NULL, &err), "%s", err.msg);
    const rs_ready models_ready[] = {rs_ready_plain(&model)};
    const rs_ready *models[] = {&models_ready[0]};
    rs_translator tr;
    rs_translate_options opt;
    rs_translate_options_default(&opt);
    opt.want_alignment = 1;
    ck_assert_int_eq(rs_translator_init(&tr, models, 1, NULL, &opt, &err), -1);
    ck_assert_msg(strstr(err.msg, NO_ALIGNMENT), "%s", err.msg);
    opt.want_alignment = 0;
    ck_assert_msg(!rs_translator_init(&tr, models, 1, NULL, &opt, &err), "%s", err.msg);
    rs_translator_free(&tr);

    const int src[] = {4, 5, 6}, tgt[] = {4, 5};
    int *srcs[] = {(int *)src}, *tgts[] = {(int *)tgt}, src_len[] = {3}, tgt_len[] = {2};
    int line[] = {0};
    const rs_dataset data = {1, srcs, tgts, src_len, tgt_len, line};
    rs_forced f;
    ck_assert_int_eq(rs_forced_decode(models, 1, &data, 1, RS_FORCED_ALIGNMENT, &f, &err), -1);
    ck_assert_msg(strstr(err.msg, NO_ALIGNMENT), "%s", err.msg);
    ck_assert_msg(!rs_forced_decode(models, 1, &data, 1, RS_FORCED_TOKENS, &f, &err), "%s",
                  err.msg);
    ck_assert(f.logprob < 0.0 && f.alignment == NULL);
    rs_forced_free(&f);
    rs_model_free(&model);
    testdir_remove(dir);
}
END_TEST

Suite *no_attention_suite(void)
{
    Suite *s = suite_create("no attention");
    TCase *tc = tcase_create("program");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, a_model_without_attention_goes_through_every_command);
    tcase_add_test(tc, an_ensemble_mixing_kinds_translates_but_has_no_alignment);
    tcase_add_test(tc, the_library_refuses_an_alignment);
    suite_add_tcase(s, tc);
    return s;
}
