/* The text pipeline as a filter (src/model/text_filter.c). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/text_filter.h"
#include "testdir.h"
#include "text/text.h"
#include "tinymodel.h"

/* f over the lines of text (a file in a new directory); the output in a new
 * string, NULL when the filter failed (err says why). */
static char *filtered(const rs_text_filter *f, const char *text, rs_error *err)
{
    char dir[256], path[300];
    testdir_make(dir, "filter");
    snprintf(path, sizeof path, "%s/in.txt", dir);
    FILE *in = fopen(path, "w");
    ck_assert_ptr_nonnull(in);
    fputs(text, in);
    ck_assert_int_eq(fclose(in), 0);
    rs_line_reader reader;
    ck_assert_msg(!rs_line_reader_open(&reader, path, err), "%s", err->msg);
    static char *out;
    static size_t size;
    FILE *mem = open_memstream(&out, &size);
    ck_assert_ptr_nonnull(mem);
    const int rc = rs_text_filter_run(f, &reader, mem, err);
    fclose(mem);
    rs_line_reader_close(&reader);
    testdir_remove(dir);
    if (rc) {
        free(out);
        return NULL;
    }
    return out;
}

/* Text to tokens and back, one line each, with the given settings. */
START_TEST(tokens_and_back)
{
    rs_error err = {{0}};
    rs_text_filter f = {.lowercase = 1, .mode = RS_TOK_WORD};
    char *out = filtered(&f, "Das Haus, klein.\n\nJa\n", &err);
    ck_assert_ptr_nonnull(out);
    /* the word tokenizer marks a token joined to the one before (U+FFED) */
    ck_assert_str_eq(out, "das haus \xef\xbf\xad, klein \xef\xbf\xad.\n\nja\n");
    free(out);
    f = (rs_text_filter){.detokenize = 1, .mode = RS_TOK_WORD};
    out = filtered(&f, "das haus \xef\xbf\xad, klein \xef\xbf\xad.\nja\n", &err);
    ck_assert_ptr_nonnull(out);
    ck_assert_str_eq(out, "das haus, klein.\nja\n");
    free(out);
}
END_TEST

/* With a model: ids in its vocabulary, </s> appended, an unknown word <unk>. */
START_TEST(ids_in_the_models_vocabulary)
{
    rs_model m;
    rs_codec codec;
    rs_error err = {{0}};
    tiny_model_with_words(&m, 4, "haus", 2);
    ck_assert_msg(!rs_codec_for_model(&codec, &m, &err), "%s", err.msg);
    const rs_text_filter f = {.ids = 1, .side = RS_SIDE_SRC, .model = &m, .codec = &codec};
    char *out = filtered(&f, "das haus zebra\n", &err);
    ck_assert_ptr_nonnull(out);
    char want[64];
    snprintf(want, sizeof want, "%d %d %d %d\n", rs_vocab_id(&m.src_vocab, "das"),
             rs_vocab_id(&m.src_vocab, "haus"), RS_UNK, RS_EOS);
    ck_assert_str_eq(out, want);
    ck_assert_int_ne(rs_vocab_id(&m.src_vocab, "haus"), RS_UNK);
    free(out);
    rs_codec_free(&codec);
    rs_model_free(&m);
}
END_TEST

Suite *text_filter_suite(void)
{
    Suite *s = suite_create("text_filter");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, tokens_and_back);
    tcase_add_test(tc, ids_in_the_models_vocabulary);
    suite_add_tcase(s, tc);
    return s;
}
