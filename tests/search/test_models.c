/* The models a decoding command is given (src/search/models.c): every -m
 * loaded once and ready to decode, the first one's codec, a missing one
 * named, and freed to be loaded again; a translator made of them with a
 * shortlist's table. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "model/checkpoint.h"
#include "search/models.h"
#include "testdir.h"
#include "tinymodel.h"

START_TEST(every_model_loaded_once_with_the_first_codec)
{
    char dir[64], a[128], b[128];
    testdir_make(dir, "models");
    rs_model ma, mb;
    rs_error err = {{0}};
    tiny_model_with_words(&ma, 4, "haus", 1);
    tiny_model_with_words(&mb, 4, "haus", 2);
    snprintf(a, sizeof a, "%s/a.ckpt", dir);
    snprintf(b, sizeof b, "%s/b.ckpt", dir);
    ck_assert_msg(!rs_checkpoint_save(a, &ma, NULL, &err), "%s", err.msg);
    ck_assert_msg(!rs_checkpoint_save(b, &mb, NULL, &err), "%s", err.msg);
    static rs_models m;
    memset(&m, 0, sizeof m);
    m.args[m.count++] = a;
    m.args[m.count++] = b;
    rs_codec codec = {0};
    ck_assert_msg(!rs_models_load(&m, &codec, &err), "%s", err.msg);
    ck_assert_int_eq(m.loaded, 2);
    ck_assert_ptr_eq(m.members[1], &m.models[1]);
    ck_assert(m.models[1].model->params[3] == mb.params[3] &&
              m.models[0].model->params[3] == ma.params[3]);
    ck_assert_int_eq(m.models[0].model->src_vocab.size, ma.src_vocab.size);
    ck_assert(m.models[0].accel && m.models[1].accel); /* each readied with its copies */
    /* Loading again loads nothing new; a model added later is. */
    m.args[m.count++] = "/nonexistent/c.ckpt";
    ck_assert_int_ne(rs_models_load(&m, NULL, &err), 0);
    ck_assert_msg(strstr(err.msg, "/nonexistent/c.ckpt"), "%s", err.msg);
    ck_assert_int_eq(m.loaded, 2);
    rs_models_free(&m);
    ck_assert_int_eq(m.loaded, 0);
    rs_codec_free(&codec);
    rs_model_free(&ma);
    rs_model_free(&mb);
    testdir_remove(dir);
}
END_TEST

START_TEST(a_translator_of_the_models_with_a_shortlist)
{
    char dir[64], a[128], lex[128];
    testdir_make(dir, "models");
    rs_model ma;
    rs_error err = {{0}};
    tiny_model_with_words(&ma, 4, "haus", 1);
    snprintf(a, sizeof a, "%s/a.ckpt", dir);
    ck_assert_msg(!rs_checkpoint_save(a, &ma, NULL, &err), "%s", err.msg);
    testfile_put(dir, "lex.tsv", "haus\tthe\t0.5\n");
    snprintf(lex, sizeof lex, "%s/lex.tsv", dir);
    static rs_models m;
    memset(&m, 0, sizeof m);
    m.args[m.count++] = a;
    rs_codec codec = {0};
    rs_translate_options topt;
    rs_translate_options_default(&topt);
    rs_translator tr = {0};
    ck_assert_int_ne(rs_models_translator(&m, &codec, "/nonexistent/lex.tsv", &topt, &tr, &err), 0);
    ck_assert_msg(strstr(err.msg, "/nonexistent/lex.tsv"), "%s", err.msg);
    ck_assert_int_eq(m.loaded, 1); /* the models stay loaded */
    ck_assert_msg(!rs_models_translator(&m, &codec, lex, &topt, &tr, &err), "%s", err.msg);
    ck_assert_ptr_eq(topt.shortlist.lex, &m.lexicon);
    ck_assert_int_gt(m.lexicon.start[m.lexicon.src_vocab], 0);
    rs_translator_free(&tr);
    /* Pieces of SentencePiece are decoded already: not joined again. */
    ((rs_model *)m.models[0].model)->cfg.tokenizer = RS_TOKENIZER_SPM; /* ready owns it */
    topt.remove_bpe = RS_BPE_SENTENCEPIECE;
    rs_translator none = {0};
    ck_assert_int_ne(rs_models_translator(&m, &codec, NULL, &topt, &none, &err), 0);
    ck_assert_msg(strstr(err.msg, "the model's tokenizer is spm"), "%s", err.msg);
    rs_models_free(&m);
    ck_assert_ptr_null(m.lexicon.start);
    rs_codec_free(&codec);
    rs_model_free(&ma);
    testdir_remove(dir);
}
END_TEST

Suite *models_suite(void)
{
    Suite *s = suite_create("models");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, every_model_loaded_once_with_the_first_codec);
    tcase_add_test(tc, a_translator_of_the_models_with_a_shortlist);
    suite_add_tcase(s, tc);
    return s;
}
