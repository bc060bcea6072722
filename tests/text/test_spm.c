/* The SentencePiece wrapper: training, loading, encode/decode round trips,
 * the reserved pieces, determinism and corrupted models. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "text/spm.h"

/* No 's', '<', '>' or '/' anywhere, so that "<s>" and "</s>" are runs of
 * characters the models never saw. A few non-ASCII letters. */
static const char *const words[] = {
    "the",   "a",     "cat",    "dog",      "ate",   "red",   "fig",     "under",
    "old",   "tree",  "café",   "über",     "naïve", "bird",  "flew",    "over",
    "water", "river", "green",  "mountain", "light", "night", "brought", "there",
    "we",    "they",  "little", "moon",     "and",   "went",  "home",    "cold",
};
#define NWORDS ((int)(sizeof words / sizeof *words))
/* Made-up words of 1 to 3 syllables, for subwords worth learning. */
static const char *const syllables[] = {
    "ka", "lo",  "mi",  "ner", "to", "vu",  "bré", "gal", "fen", "ri",
    "zu", "pol", "dar", "wen", "tö", "qui", "har", "mel", "jo",  "ven",
};
#define NSYL ((int)(sizeof syllables / sizeof *syllables))
#define NSENT 400

static char *sentences[NSENT];

static unsigned long next_random(unsigned long *state)
{
    *state = *state * 6364136223846793005UL + 1442695040888963407UL;
    return *state >> 33;
}

/* Deterministic sentences of 3 to 12 words, every other one from the list
 * and the rest made up. */
static void make_corpus(void)
{
    unsigned long state = 12345;
    for (int i = 0; i < NSENT; i++) {
        char buf[512] = "";
        int n = 3 + i % 10;
        for (int k = 0; k < n; k++) {
            if (k)
                strcat(buf, " ");
            if (k % 2 == 0) {
                strcat(buf, words[next_random(&state) % NWORDS]);
                continue;
            }
            int nsyl = 1 + (int)(next_random(&state) % 3);
            for (int j = 0; j < nsyl; j++)
                strcat(buf, syllables[next_random(&state) % NSYL]);
        }
        sentences[i] = strdup(buf);
        ck_assert_ptr_nonnull(sentences[i]);
    }
}

static void free_corpus(void)
{
    for (int i = 0; i < NSENT; i++) {
        free(sentences[i]);
        sentences[i] = NULL;
    }
}

static void train(const char *type, int vocab, char **blob, size_t *len)
{
    rs_error err = {{0}};
    ck_assert_msg(
        !rs_spm_train((const char *const *)sentences, NSENT, vocab, type, blob, len, &err), "%s",
        err.msg);
    ck_assert_ptr_nonnull(*blob);
    ck_assert_uint_gt(*len, 0);
}

static rs_spm *load(const char *blob, size_t len)
{
    rs_error err = {{0}};
    rs_spm *spm = NULL;
    ck_assert_msg(!rs_spm_load(&spm, blob, len, &err), "%s", err.msg);
    ck_assert_ptr_nonnull(spm);
    return spm;
}

static int is_reserved(const char *s)
{
    return !strcmp(s, "<pad>") || !strcmp(s, "<unk>") || !strcmp(s, "<s>") || !strcmp(s, "</s>");
}

/* Encodes and decodes text, which must come back unchanged; the pieces go
 * through `tokens` (reused across calls). */
static void check_round_trip(const rs_spm *spm, const char *text, rs_tokens *tokens)
{
    rs_error err = {{0}};
    ck_assert_msg(!rs_spm_encode(spm, text, tokens, &err), "'%s': %s", text, err.msg);
    for (int i = 0; i < tokens->count; i++) {
        ck_assert_msg(tokens->tokens[i][0], "empty piece %d of '%s'", i, text);
        ck_assert_msg(!is_reserved(tokens->tokens[i]), "reserved piece '%s' from '%s'",
                      tokens->tokens[i], text);
    }
    char *back = NULL;
    ck_assert_msg(
        !rs_spm_decode(spm, (const char *const *)tokens->tokens, tokens->count, &back, &err),
        "'%s': %s", text, err.msg);
    ck_assert_str_eq(back, text);
    free(back);
}

static const char *const unseen[] = {
    "the zebra ate a quiz",              /* unseen letters */
    "xylophone jazz",                    /* only unseen letters at the start */
    "the cattree overflew the dogriver", /* unseen words of seen letters */
    "<s> </s> <pad> <unk>",              /* the reserved strings as text */
    "a<s>b </s>x",                       /* glued to known letters */
    "жёлтый cat 猫 😀 dog",               /* other scripts */
    "cat, dog. (tree) 42!",              /* punctuation and digits */
    "",
    "a",
    "é",
};

static void check_model(const char *type)
{
    make_corpus();
    char *blob = NULL;
    size_t len = 0;
    train(type, 100, &blob, &len);
    rs_spm *spm = load(blob, len);
    ck_assert_int_eq(rs_spm_vocab_size(spm), 100);
    for (int id = 0; id < 4; id++)
        ck_assert_ptr_null(rs_spm_piece(spm, id));
    ck_assert_ptr_null(rs_spm_piece(spm, -1));
    ck_assert_ptr_null(rs_spm_piece(spm, 100));
    for (int id = 4; id < 100; id++) {
        const char *piece = rs_spm_piece(spm, id);
        ck_assert_ptr_nonnull(piece);
        ck_assert(!is_reserved(piece));
    }

    rs_tokens tokens = {0};
    for (int i = 0; i < NSENT; i++)
        check_round_trip(spm, sentences[i], &tokens);
    for (size_t i = 0; i < sizeof unseen / sizeof *unseen; i++)
        check_round_trip(spm, unseen[i], &tokens);
    rs_tokens_free(&tokens);

    rs_spm_free(spm);
    free(blob);
    free_corpus();
}

START_TEST(test_unigram_round_trip)
{
    check_model("unigram");
}
END_TEST

START_TEST(test_bpe_round_trip)
{
    check_model("bpe");
}
END_TEST

START_TEST(test_subwords)
{
    /* With 100 pieces, frequent words are single pieces and a sentence takes
     * fewer pieces than characters. */
    make_corpus();
    char *blob = NULL;
    size_t len = 0;
    train(NULL, 100, &blob, &len);
    rs_spm *spm = load(blob, len);
    rs_error err = {{0}};
    rs_tokens tokens = {0};
    ck_assert_msg(!rs_spm_encode(spm, "the cat", &tokens, &err), "%s", err.msg);
    ck_assert_int_eq(tokens.count, 2);
    ck_assert_str_eq(tokens.tokens[0], RS_SPACE "the");
    ck_assert_str_eq(tokens.tokens[1], RS_SPACE "cat");
    /* A second encode replaces the first. */
    ck_assert_msg(!rs_spm_encode(spm, "the", &tokens, &err), "%s", err.msg);
    ck_assert_int_eq(tokens.count, 1);
    rs_tokens_free(&tokens);
    rs_spm_free(spm);
    free(blob);
    free_corpus();
}
END_TEST

START_TEST(test_deterministic)
{
    static const char *const types[] = {"unigram", "bpe"};
    make_corpus();
    for (int t = 0; t < 2; t++) {
        char *a = NULL, *b = NULL;
        size_t alen = 0, blen = 0;
        train(types[t], 100, &a, &alen);
        train(types[t], 100, &b, &blen);
        ck_assert_uint_eq(alen, blen);
        ck_assert_msg(!memcmp(a, b, alen), "%s: two trainings differ", types[t]);
        free(a);
        free(b);
    }
    free_corpus();
}
END_TEST

START_TEST(test_decode_unknown)
{
    make_corpus();
    char *blob = NULL;
    size_t len = 0;
    train("unigram", 100, &blob, &len);
    rs_spm *spm = load(blob, len);
    rs_error err = {{0}};
    char *text = NULL;

    /* "<unk>" is SentencePiece's unknown piece: " ⁇ " in the text, next to
     * the space of the following piece. */
    const char *const with_unk[] = {RS_SPACE "the", "<unk>", RS_SPACE "cat"};
    ck_assert_msg(!rs_spm_decode(spm, with_unk, 3, &text, &err), "%s", err.msg);
    ck_assert_str_eq(text, "the \xE2\x81\x87  cat");
    free(text);

    /* Control pieces vanish; strings that are not pieces pass through. */
    const char *const others[] = {"<s>", RS_SPACE "the", "zz", "</s>", "<pad>"};
    ck_assert_msg(!rs_spm_decode(spm, others, 5, &text, &err), "%s", err.msg);
    ck_assert_str_eq(text, "thezz");
    free(text);

    ck_assert_msg(!rs_spm_decode(spm, NULL, 0, &text, &err), "%s", err.msg);
    ck_assert_str_eq(text, "");
    free(text);

    rs_spm_free(spm);
    free(blob);
    free_corpus();
}
END_TEST

START_TEST(test_load_file)
{
    make_corpus();
    char *blob = NULL;
    size_t len = 0;
    train("unigram", 100, &blob, &len);
    char path[] = "/tmp/rnnsearch-test-spm-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, blob, len), (ssize_t)len);
    close(fd);

    rs_error err = {{0}};
    rs_spm *spm = NULL;
    char *bytes = NULL;
    size_t nbytes = 0;
    int rc = rs_spm_load_file(&spm, path, &bytes, &nbytes, &err);
    unlink(path);
    ck_assert_msg(!rc, "%s", err.msg);
    ck_assert_uint_eq(nbytes, len);
    ck_assert(!memcmp(bytes, blob, len));
    ck_assert_int_eq(rs_spm_vocab_size(spm), 100);
    rs_tokens tokens = {0};
    check_round_trip(spm, "the old cat went home", &tokens);
    rs_tokens_free(&tokens);
    rs_spm_free(spm);
    free(bytes);

    err.msg[0] = '\0';
    ck_assert_int_eq(rs_spm_load_file(&spm, path, &bytes, &nbytes, &err), -1);
    ck_assert_ptr_null(spm);
    ck_assert_ptr_null(bytes);
    ck_assert_ptr_nonnull(strstr(err.msg, path));

    free(blob);
    free_corpus();
}
END_TEST

static void check_refused(const char *blob, size_t len, const char *what)
{
    rs_error err = {{0}};
    rs_spm *spm = (rs_spm *)1;
    ck_assert_msg(rs_spm_load(&spm, blob, len, &err) == -1, "%s accepted", what);
    ck_assert_ptr_null(spm);
    ck_assert_msg(err.msg[0], "%s: no message", what);
}

START_TEST(test_corrupted)
{
    make_corpus();
    char *blob = NULL;
    size_t len = 0;
    train("unigram", 100, &blob, &len);
    char *bad = malloc(len);
    ck_assert_ptr_nonnull(bad);

    memcpy(bad, blob, len);
    for (size_t i = 0; i < len; i += 7)
        bad[i] ^= 0x5A;
    check_refused(bad, len, "scrambled model");
    check_refused(blob, len / 2, "half a model");
    check_refused(blob, 3, "3 bytes of a model");
    memset(bad, 0xFF, len);
    check_refused(bad, len, "0xFF bytes");
    check_refused("garbage", 7, "garbage");
    check_refused("", 0, "empty blob");

    free(bad);
    free(blob);
    free_corpus();
}
END_TEST

START_TEST(test_errors)
{
    make_corpus();
    const char *const *s = (const char *const *)sentences;
    rs_error err = {{0}};
    char *blob = (char *)1;
    size_t len = 1;
    ck_assert_int_eq(rs_spm_train(s, NSENT, 100, "word", &blob, &len, &err), -1);
    ck_assert_ptr_null(blob);
    ck_assert_ptr_nonnull(strstr(err.msg, "word"));
    ck_assert_int_eq(rs_spm_train(s, NSENT, 4, "unigram", &blob, &len, &err), -1);
    ck_assert_int_eq(rs_spm_train(s, 0, 100, "unigram", &blob, &len, &err), -1);
    err.msg[0] = '\0';
    ck_assert_int_eq(rs_spm_train(s, NSENT, 100000, "unigram", &blob, &len, &err), -1);
    ck_assert_ptr_null(blob);
    ck_assert_msg(strstr(err.msg, "too high"), "%s", err.msg);
    const char *const invalid[] = {"the cat", "bad \xC3 byte"};
    ck_assert_int_eq(rs_spm_train(invalid, 2, 100, NULL, &blob, &len, &err), -1);

    train("unigram", 100, &blob, &len);
    rs_spm *spm = load(blob, len);
    rs_tokens tokens = {0};
    ck_assert_msg(!rs_spm_encode(spm, "the cat", &tokens, &err), "%s", err.msg);
    ck_assert_int_eq(rs_spm_encode(spm, "the \xFF cat", &tokens, &err), -1);
    ck_assert_int_eq(tokens.count, 0);
    rs_tokens_free(&tokens);
    rs_spm_free(spm);
    free(blob);
    free_corpus();
}
END_TEST

Suite *spm_suite(void)
{
    Suite *s = suite_create("spm");
    TCase *tc = tcase_create("spm");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_unigram_round_trip);
    tcase_add_test(tc, test_bpe_round_trip);
    tcase_add_test(tc, test_subwords);
    tcase_add_test(tc, test_deterministic);
    tcase_add_test(tc, test_decode_unknown);
    tcase_add_test(tc, test_load_file);
    tcase_add_test(tc, test_corrupted);
    tcase_add_test(tc, test_errors);
    suite_add_tcase(s, tc);
    return s;
}
