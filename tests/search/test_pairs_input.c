/* Pairs given to a model (src/search/pairs_input.c): a TSV file or two
 * files, swapped on request, named in messages, tokenized and made ids in
 * the model's vocabularies, sources cut with a warning naming each pair. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/pairs_input.h"
#include "testdir.h"
#include "tinymodel.h"

START_TEST(names_of_the_input)
{
    const rs_pairs_input tsv = {.tsv = "p.tsv"}, in = {.tsv = "-"}, two = {NULL, "s", "t", 1};
    ck_assert_str_eq(rs_pairs_input_name(&tsv), "p.tsv");
    ck_assert_str_eq(rs_pairs_input_name(&in), "<stdin>");
    ck_assert_str_eq(rs_pairs_input_name(&two), "s");
}
END_TEST

START_TEST(pairs_become_ids_with_their_sources_cut)
{
    rs_model m;
    rs_codec codec;
    rs_error err = {{0}};
    tiny_model_with_words(&m, 4, "haus", 5);
    ck_assert_msg(!rs_codec_for_model(&codec, &m, &err), "%s", err.msg);
    char dir[64], src[128], tgt[128], tsv[128];
    testdir_make(dir, "pairs_input");
    testfile_put(dir, "s.txt", "das haus\nhaus\n");
    testfile_put(dir, "t.txt", "the\nthe the\n");
    testfile_put(dir, "p.tsv", "das haus das\tthe\n");
    snprintf(src, sizeof src, "%s/s.txt", dir);
    snprintf(tgt, sizeof tgt, "%s/t.txt", dir);
    snprintf(tsv, sizeof tsv, "%s/p.tsv", dir);
    char *warned = NULL;
    size_t size = 0;
    FILE *warn = open_memstream(&warned, &size);
    const rs_pairs_ids ids = {&m, &codec, 2, warn, "P"};
    rs_pairs_input in = {NULL, src, tgt, 0};
    rs_dataset data = {0};
    ck_assert_msg(!rs_pairs_input_read(&in, &ids, &data, &err), "%s", err.msg);
    ck_assert_int_eq(data.count, 2);
    ck_assert_int_eq(data.src_len[0], 2);
    ck_assert_int_eq(data.tgt_len[1], 2);
    ck_assert_int_eq(data.src[0][1], rs_vocab_id(&m.src_vocab, "haus"));
    rs_dataset_free(&data);
    in.swap = 1; /* the target file is the source now */
    ck_assert_msg(!rs_pairs_input_read(&in, &ids, &data, &err), "%s", err.msg);
    ck_assert_int_eq(data.src_len[1], 2);
    ck_assert_int_eq(data.src[0][0], RS_UNK); /* "the" is no source word */
    rs_dataset_free(&data);
    /* A TSV pair whose source is cut, read as it comes. */
    in = (rs_pairs_input){.tsv = tsv};
    rs_pair_reader r;
    rs_pairs pairs;
    ck_assert_msg(!rs_pairs_input_open(&in, 0, &r, &err), "%s", err.msg);
    ck_assert_int_eq(rs_pair_reader_chunk(&r, 10, &pairs, &err), 1);
    rs_pair_reader_close(&r);
    ck_assert_msg(!rs_pairs_input_dataset(&in, &pairs, &ids, &data, &err), "%s", err.msg);
    rs_pairs_free(&pairs);
    ck_assert_int_eq(data.src_len[0], 2);
    rs_dataset_free(&data);
    ck_assert_int_eq(fclose(warn), 0);
    char want[256];
    snprintf(want, sizeof want, "P: %s: pair 1: source cut to its first 2 tokens (1 more)\n", tsv);
    ck_assert_str_eq(warned, want);
    free(warned);
    in = (rs_pairs_input){.tsv = "/nonexistent/p.tsv"};
    ck_assert_int_ne(rs_pairs_input_read(&in, &ids, &data, &err), 0);
    ck_assert_msg(strstr(err.msg, "/nonexistent/p.tsv"), "%s", err.msg);
    testdir_remove(dir);
    rs_codec_free(&codec);
    rs_model_free(&m);
}
END_TEST

Suite *pairs_input_suite(void)
{
    Suite *s = suite_create("pairs_input");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, names_of_the_input);
    tcase_add_test(tc, pairs_become_ids_with_their_sources_cut);
    suite_add_tcase(s, tc);
    return s;
}
