/* The models a decoding command is given (src/search/models.c): every -m
 * loaded once and ready to decode, the first one's codec, a missing one
 * named, and freed to be loaded again. */
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
    ck_assert(m.models[1].params[3] == mb.params[3] && m.models[0].params[3] == ma.params[3]);
    ck_assert_int_eq(m.models[0].src_vocab.size, ma.src_vocab.size);
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

Suite *models_suite(void)
{
    Suite *s = suite_create("models");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, every_model_loaded_once_with_the_first_codec);
    suite_add_tcase(s, tc);
    return s;
}
