/* The text codec (src/model/codec.c): a model's text settings turn raw text into
 * tokens and back (word and char tokenizers, lower-casing), and ids into
 * their strings. SentencePiece models are tested in text/test_spm.c. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "model/codec.h"

static void codec_for(rs_codec *codec, const char *tokenizer, int lowercase)
{
    rs_config cfg;
    rs_error err = {{0}};
    rs_config_defaults(&cfg);
    ck_assert_msg(!rs_config_set(&cfg, "tokenizer", tokenizer, &err), "%s", err.msg);
    cfg.model.lowercase = lowercase;
    ck_assert_msg(!rs_codec_init(codec, &cfg.model, &err), "%s", err.msg);
}

START_TEST(words_and_characters_round_trip)
{
    rs_codec codec;
    rs_tokens tok = {0};
    rs_error err = {{0}};
    char *text = NULL;
    codec_for(&codec, "word", 0);
    ck_assert(!rs_codec_tokens(&codec, RS_SIDE_SRC, "Ein Haus, rot.", &tok, &err));
    ck_assert_int_eq(tok.count, 5);
    ck_assert_str_eq(tok.tokens[0], "Ein");
    ck_assert(!rs_codec_text(&codec, RS_SIDE_TGT, (const char *const *)tok.tokens, tok.count, &text,
                             &err));
    ck_assert_str_eq(text, "Ein Haus, rot.");
    free(text);
    rs_tokens_free(&tok);
    rs_codec_free(&codec);

    codec_for(&codec, "char", 1);
    ck_assert(!rs_codec_tokens(&codec, RS_SIDE_SRC, "Ab c", &tok, &err));
    ck_assert_int_eq(tok.count, 4); /* a, b, the space marker, c */
    ck_assert_str_eq(tok.tokens[0], "a");
    ck_assert(!rs_codec_text(&codec, RS_SIDE_SRC, (const char *const *)tok.tokens, tok.count, &text,
                             &err));
    ck_assert_str_eq(text, "ab c");
    free(text);
    rs_tokens_free(&tok);
    rs_codec_free(&codec);
}
END_TEST

START_TEST(ids_become_their_strings)
{
    rs_vocab v;
    rs_error err = {{0}};
    ck_assert(!rs_vocab_init(&v, &err));
    ck_assert_int_eq(rs_vocab_add(&v, "house", &err), RS_RESERVED);
    const int ids[] = {RS_RESERVED, RS_UNK, 999, -1};
    const char *out[4];
    rs_ids_to_tokens(&v, ids, 4, out);
    ck_assert_str_eq(out[0], "house");
    ck_assert_str_eq(out[1], "<unk>");
    ck_assert_str_eq(out[2], "<unk>"); /* out of range: never read past the table */
    ck_assert_str_eq(out[3], "<unk>");
    rs_vocab_free(&v);
}
END_TEST

Suite *codec_suite(void)
{
    Suite *s = suite_create("codec");
    TCase *tc = tcase_create("codec");
    tcase_add_test(tc, words_and_characters_round_trip);
    tcase_add_test(tc, ids_become_their_strings);
    suite_add_tcase(s, tc);
    return s;
}
