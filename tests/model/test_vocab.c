/* Vocabularies (src/model/vocab.c): the reserved ids, adding and counting, lookup
 * with <unk> for unknown tokens, growth past many tokens, selection by
 * frequency with its ties, minimum count and size limit, and vocabulary
 * files (Joey NMT's one token a line, OpenNMT-py's and fairseq's counts). */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "model/params.h"
#include "model/vocab.h"
#include "testdir.h"

START_TEST(reserved_ids_and_lookup)
{
    rs_vocab v;
    rs_error err;
    ck_assert(rs_vocab_init(&v, &err) == 0);
    ck_assert_int_eq(v.size, RS_RESERVED);
    ck_assert_str_eq(v.tokens[RS_PAD], "<pad>");
    ck_assert_str_eq(v.tokens[RS_UNK], "<unk>");
    ck_assert_str_eq(v.tokens[RS_BOS], "<s>");
    ck_assert_str_eq(v.tokens[RS_EOS], "</s>");
    ck_assert_int_eq(rs_vocab_id(&v, "</s>"), RS_EOS);
    for (int i = 0; i < RS_RESERVED; i++)
        ck_assert_int_eq(v.counts[i], 0);
    /* New tokens get the next ids; adding again counts and keeps the id. */
    ck_assert_int_eq(rs_vocab_add(&v, "Haus", &err), 4);
    ck_assert_int_eq(rs_vocab_add(&v, "haus", &err), 5); /* case matters */
    ck_assert_int_eq(rs_vocab_add(&v, "Haus", &err), 4);
    ck_assert_int_eq(rs_vocab_add(&v, "\xE6\x97\xA5", &err), 6);
    ck_assert_int_eq(v.counts[4], 2);
    ck_assert_int_eq(v.counts[5], 1);
    ck_assert_int_eq(rs_vocab_id(&v, "Haus"), 4);
    ck_assert_int_eq(rs_vocab_id(&v, "\xE6\x97\xA5"), 6);
    ck_assert_int_eq(rs_vocab_id(&v, "Hau"), RS_UNK);
    ck_assert_int_eq(rs_vocab_id(&v, ""), RS_UNK);
    rs_vocab_free(&v);
    ck_assert_int_eq(v.size, 0);
    /* A zeroed vocabulary maps everything to <unk>. */
    ck_assert_int_eq(rs_vocab_id(&v, "Haus"), RS_UNK);
}
END_TEST

START_TEST(many_tokens_keep_their_ids)
{
    rs_vocab v;
    rs_error err;
    ck_assert(rs_vocab_init(&v, &err) == 0);
    char token[32];
    enum { COUNT = 20000 };
    for (int i = 0; i < COUNT; i++) {
        snprintf(token, sizeof token, "t%d", i);
        ck_assert_int_eq(rs_vocab_add(&v, token, &err), RS_RESERVED + i);
    }
    ck_assert_int_eq(v.size, RS_RESERVED + COUNT);
    for (int i = 0; i < COUNT; i += 7) {
        snprintf(token, sizeof token, "t%d", i);
        ck_assert_int_eq(rs_vocab_id(&v, token), RS_RESERVED + i);
        ck_assert_str_eq(v.tokens[RS_RESERVED + i], token);
    }
    ck_assert_int_eq(rs_vocab_id(&v, "t20000"), RS_UNK);
    rs_vocab_free(&v);
}
END_TEST

static void add_times(rs_vocab *v, const char *token, int times)
{
    rs_error err;
    for (int i = 0; i < times; i++)
        ck_assert(rs_vocab_add(v, token, &err) >= 0);
}

START_TEST(select_by_frequency_ties_and_limits)
{
    rs_vocab counted, out;
    rs_error err;
    ck_assert(rs_vocab_init(&counted, &err) == 0);
    add_times(&counted, "rare", 1);
    add_times(&counted, "b", 3);
    add_times(&counted, "often", 5);
    add_times(&counted, "a", 3);
    add_times(&counted, "B", 3);
    /* Most frequent first, ties in byte order ("B" < "a" < "b"). */
    ck_assert(rs_vocab_select(&out, &counted, 1, 0, &err) == 0);
    const char *const all[] = {"often", "B", "a", "b", "rare"};
    ck_assert_int_eq(out.size, RS_RESERVED + 5);
    for (int i = 0; i < 5; i++) {
        ck_assert_str_eq(out.tokens[RS_RESERVED + i], all[i]);
        ck_assert_int_eq(rs_vocab_id(&out, all[i]), RS_RESERVED + i);
    }
    ck_assert_int_eq(out.counts[RS_RESERVED], 5);
    ck_assert_int_eq(out.counts[RS_RESERVED + 4], 1);
    rs_vocab_free(&out);
    /* min_freq drops the rare token. */
    ck_assert(rs_vocab_select(&out, &counted, 2, 0, &err) == 0);
    ck_assert_int_eq(out.size, RS_RESERVED + 4);
    ck_assert_int_eq(rs_vocab_id(&out, "rare"), RS_UNK);
    rs_vocab_free(&out);
    /* max_size counts the reserved ids. */
    ck_assert(rs_vocab_select(&out, &counted, 1, RS_RESERVED + 2, &err) == 0);
    ck_assert_int_eq(out.size, RS_RESERVED + 2);
    ck_assert_str_eq(out.tokens[RS_RESERVED + 1], "B");
    ck_assert_int_eq(rs_vocab_id(&out, "a"), RS_UNK);
    rs_vocab_free(&out);
    /* Nothing counted: only the reserved ids. */
    rs_vocab empty;
    ck_assert(rs_vocab_init(&empty, &err) == 0);
    ck_assert(rs_vocab_select(&out, &empty, 1, 0, &err) == 0);
    ck_assert_int_eq(out.size, RS_RESERVED);
    rs_vocab_free(&out);
    rs_vocab_free(&empty);
    rs_vocab_free(&counted);
}
END_TEST

/* A vocabulary read back in id order: reserved ids checked, duplicates
 * refused with both ids, counts 0. */
START_TEST(test_read_token_in_id_order)
{
    rs_vocab v;
    rs_error err = {{0}};
    ck_assert(!rs_vocab_init(&v, &err));
    for (int id = 0; id < RS_RESERVED; id++)
        ck_assert_msg(!rs_vocab_read_token(&v, id, v.tokens[id], &err), "%s", err.msg);
    ck_assert(!rs_vocab_read_token(&v, RS_RESERVED, "Haus", &err));
    ck_assert_int_eq(rs_vocab_id(&v, "Haus"), RS_RESERVED);
    ck_assert_int_eq(v.counts[RS_RESERVED], 0);
    ck_assert(rs_vocab_read_token(&v, RS_RESERVED + 1, "Haus", &err) != 0);
    char want[64];
    snprintf(want, sizeof want, "token 'Haus' appears twice (ids %d and %d)", RS_RESERVED,
             RS_RESERVED + 1);
    ck_assert_str_eq(err.msg, want);
    rs_vocab_free(&v);
    ck_assert(!rs_vocab_init(&v, &err));
    ck_assert(rs_vocab_read_token(&v, 1, "Haus", &err) != 0);
    ck_assert_msg(strstr(err.msg, "id 1 is 'Haus', not the reserved"), "%s", err.msg);
    rs_vocab_free(&v);
}
END_TEST

/* Reads text written to dir/name as a vocabulary file: 0, or -1 with err. */
static int read_text_vocab(rs_vocab *v, const char *dir, const char *text, rs_error *err)
{
    char path[128];
    snprintf(path, sizeof path, "%s/vocab.txt", dir);
    testfile_write(path, (const unsigned char *)text, strlen(text));
    return rs_vocab_read_file(v, path, err);
}

START_TEST(vocabulary_files_in_the_common_forms)
{
    char dir[64];
    testdir_make(dir, "rnnsearch-vocab");
    rs_vocab v;
    rs_error err;
    /* Joey NMT's order (<unk> first), \r\n line ends, no final line end. */
    ck_assert_msg(!read_text_vocab(&v, dir, "<unk>\r\n<pad>\r\n<s>\r\n</s>\r\nHaus\r\ndas", &err),
                  "%s", err.msg);
    ck_assert_int_eq(v.size, 6);
    ck_assert_str_eq(v.tokens[RS_PAD], "<pad>");
    ck_assert_str_eq(v.tokens[RS_UNK], "<unk>");
    ck_assert_str_eq(v.tokens[4], "Haus");
    ck_assert_str_eq(v.tokens[5], "das");
    rs_vocab_free(&v);
    /* A UTF-8 byte order mark, as Notepad writes, is not part of the first token: with it
     * read as one, "\xEF\xBB\xBF<pad>" became a token of its own at id 4 and every later
     * token's id moved up by one. */
    ck_assert_msg(!read_text_vocab(&v, dir, "\xEF\xBB\xBF<pad>\n<unk>\n<s>\n</s>\nHaus\n", &err),
                  "%s", err.msg);
    ck_assert_int_eq(v.size, 5);
    ck_assert_int_eq(rs_vocab_id(&v, "Haus"), 4);
    rs_vocab_free(&v);
    /* A lone \r ends a line (old Mac files), as in every text file rnnsearch reads. */
    ck_assert_msg(!read_text_vocab(&v, dir, "Haus\rdas\r\nwas\r", &err), "%s", err.msg);
    ck_assert_int_eq(v.size, 7);
    ck_assert_int_eq(rs_vocab_id(&v, "das"), 5);
    ck_assert_int_eq(rs_vocab_id(&v, "was"), 6);
    rs_vocab_free(&v);
    ck_assert_msg(!read_text_vocab(&v, dir, "\xEF\xBB\xBFHaus\n", &err), "%s", err.msg);
    ck_assert_int_eq(v.size, 5);
    ck_assert_str_eq(v.tokens[4], "Haus");
    rs_vocab_free(&v);
    /* No reserved tokens: added in our order; counts after a tab or a space. */
    ck_assert_msg(!read_text_vocab(&v, dir, "das\t120\nHaus 7\n\xE6\x97\xA5\n", &err), "%s",
                  err.msg);
    ck_assert_int_eq(v.size, 7);
    ck_assert_str_eq(v.tokens[RS_EOS], "</s>");
    ck_assert_int_eq(rs_vocab_id(&v, "das"), 4);
    ck_assert_int_eq(rs_vocab_id(&v, "Haus"), 5);
    ck_assert_int_eq(rs_vocab_id(&v, "\xE6\x97\xA5"), 6);
    /* What rs_vocab_write writes reads back to the same ids. */
    char path[128];
    snprintf(path, sizeof path, "%s/written.txt", dir);
    FILE *f = fopen(path, "w");
    int errnum;
    rs_vocab_write(&v, f, &errnum);
    ck_assert_int_eq(errnum, 0);
    fclose(f);
    testfile_expect(path, "<pad>\n<unk>\n<s>\n</s>\ndas\nHaus\n\xE6\x97\xA5\n");
    rs_vocab back;
    ck_assert_msg(!rs_vocab_read_file(&back, path, &err), "%s", err.msg);
    ck_assert_int_eq(back.size, v.size);
    for (int id = 0; id < v.size; id++)
        ck_assert_str_eq(back.tokens[id], v.tokens[id]);
    rs_vocab copy;
    ck_assert(!rs_vocab_copy(&copy, &v, &err));
    ck_assert_int_eq(copy.size, v.size);
    ck_assert_int_eq(rs_vocab_id(&copy, "Haus"), 5);
    rs_vocab_free(&copy);
    rs_vocab_free(&back);
    rs_vocab_free(&v);
    testdir_remove(dir);
}
END_TEST

/* Two vocabulary files concatenated, the second with a byte order mark:
 * its first token is read without it, as the tokenizers make it. */
START_TEST(a_bom_inside_a_vocabulary_file_is_no_part_of_a_token)
{
    char dir[64];
    testdir_make(dir, "rnnsearch-vocab-bom");
    rs_vocab v;
    rs_error err;
    ck_assert_msg(!read_text_vocab(&v, dir, "june\n\xEF\xBB\xBFmay\njuly\n", &err), "%s", err.msg);
    ck_assert_int_eq(rs_vocab_id(&v, "may"), RS_RESERVED + 1);
    rs_vocab_free(&v);
    testdir_remove(dir);
}
END_TEST

START_TEST(bad_vocabulary_files_are_refused_with_file_and_line)
{
    char dir[64];
    testdir_make(dir, "rnnsearch-vocab");
    static const struct {
        const char *text, *said;
    } bad[] = {
        {"a\n\nb\n", "vocab.txt:2: an empty line"},
        {"a\nb\na\n", "vocab.txt:3: token 'a' is given twice (first on line 1)"},
        {"<unk>\na\n<unk>\n", "vocab.txt:3: token '<unk>' is given twice (first on line 1)"},
        {"a\n\xC3\x28\n", "vocab.txt:2: invalid UTF-8 at byte 1"},
        {"a\nb\tmany\n", "vocab.txt:2: 'b\tmany' is not a token, nor a token then a tab"},
        {"a\n b\n", "vocab.txt:2: the line starts with white space"},
        {"a\nb\0c\n", "vocab.txt:2: NUL byte at byte 2"},
        {"<s>\n</s>\n", "vocab.txt: no token besides the reserved ones"},
        /* A CR inside a line ends it, as in every text file: "\r\r\n" leaves an
         * empty line; read as part of a token, it trained and wrote checkpoints
         * that every reader then refused ("token holds white space"). */
        {"a\r\r\nb\n", "vocab.txt:2: an empty line"},
        /* White space that ends no line is in no token either (the checkpoint's rule). */
        {"a\nb\vc\n", "vocab.txt:2: the token holds white space (byte 0x0b at column 2)"},
        {"a\n\fb 3\n", "vocab.txt:2: the token holds white space (byte 0x0c at column 1)"},
        /* Marian's YAML vocabulary, not read as the tokens "</s>:" and "<unk>:". */
        {"</s>: 0\n<unk>: 1\nHaus: 2\n", "vocab.txt:1: '</s>: 0' is a Marian YAML"},
        {"", "vocab.txt: no token besides the reserved ones"},
        /* U+FEFF is no part of a token, as in sentences: a line of it alone
         * is empty, and "ma<FEFF>y" is "may" again. */
        {"a\n\xEF\xBB\xBF\nb\n", "vocab.txt:2: an empty line"},
        {"may\nma\xEF\xBB\xBFy\n", "vocab.txt:2: token 'may' is given twice (first on line 1)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s/vocab.txt", dir);
        /* The NUL case is written with its length: strlen would stop at it. */
        const size_t len = i == 6 ? 6 : strlen(bad[i].text);
        testfile_write(path, (const unsigned char *)bad[i].text, len);
        rs_vocab v;
        rs_error err;
        ck_assert_int_ne(rs_vocab_read_file(&v, path, &err), 0);
        ck_assert_msg(strstr(err.msg, bad[i].said) != NULL, "case %zu: %s", i, err.msg);
    }
    testdir_remove(dir);
}
END_TEST

Suite *vocab_suite(void)
{
    Suite *s = suite_create("vocab");
    TCase *tc = tcase_create("vocabularies");
    tcase_add_test(tc, test_read_token_in_id_order);
    tcase_add_test(tc, reserved_ids_and_lookup);
    tcase_add_test(tc, many_tokens_keep_their_ids);
    tcase_add_test(tc, select_by_frequency_ties_and_limits);
    tcase_add_test(tc, vocabulary_files_in_the_common_forms);
    tcase_add_test(tc, bad_vocabulary_files_are_refused_with_file_and_line);
    tcase_add_test(tc, a_bom_inside_a_vocabulary_file_is_no_part_of_a_token);
    suite_add_tcase(s, tc);
    return s;
}
