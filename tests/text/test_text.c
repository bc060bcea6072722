/* Normalisation, the word and char tokenizers, their inverses, and the
 * tokenize command when the program is built. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testprog.h"
#include "text/text.h"

#define J RS_JOINER

static char *normalize(const char *s, int lowercase)
{
    rs_error err = {{0}};
    char *out = NULL;
    ck_assert_msg(!rs_text_normalize(s, strlen(s), lowercase, &out, &err), "%s", err.msg);
    return out;
}

static void check_normalize(const char *in, int lowercase, const char *want)
{
    char *got = normalize(in, lowercase);
    ck_assert_str_eq(got, want);
    free(got);
}

/* The tokens of s (normalised already) joined by single spaces. */
static char *tokenize_joined(const char *s, int mode)
{
    rs_error err = {{0}};
    rs_tokens tokens = {0};
    ck_assert_msg(!rs_tokenize(s, mode, &tokens, &err), "%s", err.msg);
    size_t size = 1;
    for (int i = 0; i < tokens.count; i++)
        size += strlen(tokens.tokens[i]) + 1;
    char *out = calloc(size, 1);
    ck_assert_ptr_nonnull(out);
    for (int i = 0; i < tokens.count; i++) {
        ck_assert_msg(tokens.tokens[i][0], "empty token %d in '%s'", i, s);
        ck_assert_msg(!strpbrk(tokens.tokens[i], " \t"), "space inside token '%s'",
                      tokens.tokens[i]);
        if (i)
            strcat(out, " ");
        strcat(out, tokens.tokens[i]);
    }
    rs_tokens_free(&tokens);
    return out;
}

static void check_tokens(const char *s, int mode, const char *want)
{
    char *got = tokenize_joined(s, mode);
    ck_assert_str_eq(got, want);
    free(got);
}

static void check_round_trip(const char *s, int mode)
{
    rs_error err = {{0}};
    rs_tokens tokens = {0};
    char *back = NULL;
    ck_assert_msg(!rs_tokenize(s, mode, &tokens, &err), "%s", err.msg);
    ck_assert_msg(!rs_detokenize(&tokens, mode, &back, &err), "%s", err.msg);
    ck_assert_msg(!strcmp(back, s), "mode %d: '%s' came back as '%s'", mode, s, back);
    free(back);
    rs_tokens_free(&tokens);
}

static void check_invalid(const char *in, size_t len, const char *want)
{
    rs_error err = {{0}};
    char *out = (char *)"untouched";
    ck_assert_int_eq(rs_text_normalize(in, len, 0, &out, &err), -1);
    ck_assert_ptr_null(out);
    ck_assert_msg(strstr(err.msg, want), "message '%s' lacks '%s'", err.msg, want);
}

START_TEST(test_nfc)
{
    check_normalize("e\xCC\x81", 0, "\xC3\xA9"); /* e + acute -> é */
    check_normalize("Cafe\xCC\x81 cre\xCC\x80me", 0, "Café crème");
    check_normalize("\xE1\x84\x92\xE1\x85\xA1\xE1\x86\xAB", 0, "한"); /* Hangul jamo */
    check_normalize("\xE2\x84\xAB", 0, "\xC3\x85");                   /* ANGSTROM SIGN -> Å */
    check_normalize("ﬁ", 0, "ﬁ"); /* NFC keeps compatibility ligatures */
    check_normalize("déjà", 0, "déjà");
}
END_TEST

START_TEST(test_lowercase)
{
    check_normalize("ÉCOLE", 1, "école");
    check_normalize("ÉCOLE", 0, "ÉCOLE");
    check_normalize("E\xCC\x81"
                    "COLE",
                    1, "école"); /* lowered, then composed */
    check_normalize("ПРИВЕТ, Мир", 1, "привет, мир");
    check_normalize("ΑΘΗΝΑ", 1, "αθηνα");
    check_normalize("Ärger ÜBER Öl", 1, "ärger über öl");
    check_normalize("東京 ABC", 1, "東京 abc");
}
END_TEST

START_TEST(test_whitespace)
{
    check_normalize("  a\t\tb\xC2\xA0\xE3\x80\x80"
                    "c \n",
                    0, "a b c");
    check_normalize("x\r\ny\xE2\x80\xA8z\xE2\x80\x83w", 0, "x y z w");
    check_normalize("", 0, "");
    check_normalize(" \t\xE3\x80\x80 ", 0, "");
    check_normalize("one", 0, "one");
    /* U+200B ZERO WIDTH SPACE is a format character, not white space. */
    check_normalize("a\xE2\x80\x8B"
                    "b",
                    0,
                    "a\xE2\x80\x8B"
                    "b");
}
END_TEST

START_TEST(test_normalize_idempotent)
{
    const char *inputs[] = {"  ÉCOLE  e\xCC\x81t\xC3\xA9 ", "Ａ Ｂ\tC", "ΣΟΦΙΑ ς",
                            "a\xCC\xA3\xCC\x87"};
    for (int lower = 0; lower < 2; lower++)
        for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++) {
            char *once = normalize(inputs[i], lower);
            char *twice = normalize(once, lower);
            ck_assert_str_eq(once, twice);
            free(once);
            free(twice);
        }
}
END_TEST

START_TEST(test_invalid_utf8)
{
    check_invalid("ab\xC3(", 4, "invalid UTF-8 at byte 3");
    check_invalid("\xFF", 1, "invalid UTF-8 at byte 1");
    check_invalid("ok \xC0\xAF", 5, "invalid UTF-8 at byte 4");      /* overlong '/' */
    check_invalid("\xE0\x80\xAF", 3, "invalid UTF-8 at byte 1");     /* overlong */
    check_invalid("x\xED\xA0\x80", 4, "invalid UTF-8 at byte 2");    /* surrogate */
    check_invalid("\xF4\x90\x80\x80", 4, "invalid UTF-8 at byte 1"); /* > U+10FFFF */
    check_invalid("abc\xE2\x82", 5, "invalid UTF-8 at byte 4");      /* truncated */
    check_invalid("a\0b", 3, "NUL byte at byte 2");

    rs_error err = {{0}};
    rs_tokens tokens = {0};
    ck_assert_int_eq(rs_text_to_tokens("\x80", 1, 0, RS_TOK_WORD, &tokens, &err), -1);
    ck_assert_int_eq(tokens.count, 0);
    ck_assert_int_eq(rs_tokenize("a \xC3", RS_TOK_WORD, &tokens, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "byte 3"));
    ck_assert_int_eq(tokens.count, 0);
    ck_assert_int_eq(rs_utf8_validate("\xC3\xA9", 2, &err), 0);
    rs_tokens_free(&tokens);
}
END_TEST

START_TEST(test_word_tokens)
{
    check_tokens("Hello, world!", RS_TOK_WORD, "Hello " J ", world " J "!");
    check_tokens("2026-11-21", RS_TOK_WORD, "2026 " J "-" J " 11 " J "-" J " 21");
    check_tokens("(yes)", RS_TOK_WORD, "(" J " yes " J ")");
    check_tokens("l'homme", RS_TOK_WORD, "l " J "'" J " homme");
    check_tokens("Wait...", RS_TOK_WORD, "Wait " J "." J " " J "." J " " J ".");
    check_tokens("a - b", RS_TOK_WORD, "a - b");
    check_tokens("\"Oui\", dit-il.", RS_TOK_WORD,
                 "\"" J " Oui " J "\"" J " " J ", dit " J "-" J " il " J ".");
    check_tokens("$5 + 3€", RS_TOK_WORD, "$" J " 5 + 3 " J "€");
    check_tokens("東京に行く。", RS_TOK_WORD, "東京に行く " J "。");
    check_tokens("¿Qué?", RS_TOK_WORD, "¿" J " Qué " J "?");
    check_tokens("naïve café", RS_TOK_WORD, "naïve café");
    check_tokens("", RS_TOK_WORD, "");
    check_tokens("<unk>", RS_TOK_WORD, "<" J " unk " J ">");
    /* The marks themselves, escaped so that the inverse stays exact. */
    check_tokens("a" J "b", RS_TOK_WORD, "a " J "<" J ">" J " b");
    check_tokens(J, RS_TOK_WORD, "<" J ">");
}
END_TEST

START_TEST(test_char_tokens)
{
    check_tokens("ab c", RS_TOK_CHAR, "a b " RS_SPACE " c");
    check_tokens("é!", RS_TOK_CHAR, "é !");
    check_tokens("日本 語", RS_TOK_CHAR, "日 本 " RS_SPACE " 語");
    check_tokens("a" RS_SPACE "b", RS_TOK_CHAR, "a <" RS_SPACE "> b");
    check_tokens("a" J, RS_TOK_CHAR, "a " J);
    check_tokens("", RS_TOK_CHAR, "");
}
END_TEST

START_TEST(test_mode_parse)
{
    ck_assert_int_eq(rs_tokenizer_mode_parse("word"), RS_TOK_WORD);
    ck_assert_int_eq(rs_tokenizer_mode_parse("char"), RS_TOK_CHAR);
    ck_assert_int_eq(rs_tokenizer_mode_parse("space"), RS_TOK_SPACE);
    ck_assert_int_eq(rs_tokenizer_mode_parse("Word"), -1);
    ck_assert_int_eq(rs_tokenizer_mode_parse("spm"), -1);
    ck_assert_int_eq(rs_tokenizer_mode_parse(""), -1);

    rs_error err = {{0}};
    rs_tokens tokens = {0};
    char *out;
    ck_assert_int_eq(rs_tokenize("a", 7, &tokens, &err), -1);
    ck_assert_int_eq(rs_detokenize(&tokens, -1, &out, &err), -1);
    rs_tokens_free(&tokens);
}
END_TEST

/* The tokens of raw text under the space tokenizer, joined by "|". */
static char *space_tokens(const char *raw, int lowercase)
{
    rs_error err = {{0}};
    rs_tokens tokens = {0};
    ck_assert_msg(!rs_text_to_tokens(raw, strlen(raw), lowercase, RS_TOK_SPACE, &tokens, &err),
                  "%s", err.msg);
    static char out[256];
    out[0] = '\0';
    for (int i = 0; i < tokens.count; i++) {
        ck_assert(tokens.tokens[i][0] != '\0');
        if (i)
            strcat(out, "|");
        strcat(out, tokens.tokens[i]);
    }
    rs_tokens_free(&tokens);
    return out;
}

/* U+FEFF inside text (a byte order mark that concatenated files left at the
 * start of a line, or a zero-width no-break space) is dropped before NFC, on
 * every tokenizer's road: what it separated composes and joins. */
START_TEST(test_bom_inside_text_is_dropped)
{
    check_normalize("\xEF\xBB\xBF"
                    "Friday, 15 May",
                    0, "Friday, 15 May");
    check_normalize("Fri\xEF\xBB\xBF"
                    "day,\xEF\xBB\xBF 15\xEF\xBB\xBF",
                    0, "Friday, 15");
    check_normalize("\xEF\xBB\xBF\xEF\xBB\xBF", 0, "");
    check_normalize("e\xEF\xBB\xBF\xCC\x81", 0, "\xC3\xA9"); /* e + U+0301 -> U+00E9 */
    ck_assert_str_eq(space_tokens("hou@@\xEF\xBB\xBF se \xEF\xBB\xBF.", 0), "hou@@|se|.");
    ck_assert(rs_text_is_blank("\xEF\xBB\xBF", 3) == 1);
}
END_TEST

START_TEST(test_space_tokens)
{
    /* Split at white space only: BPE marks, Moses escapes and punctuation stay. */
    ck_assert_str_eq(space_tokens("the hou@@ se &apos;s big .", 0), "the|hou@@|se|&apos;s|big|.");
    ck_assert_str_eq(space_tokens("hou@@", 0), "hou@@");
    ck_assert_str_eq(space_tokens("  a  b\t\tc \t", 0), "a|b|c");
    ck_assert_str_eq(space_tokens("a\xC2\xA0"
                                  "b\xE3\x80\x80"
                                  "c",
                                  0),
                     "a|b|c"); /* NBSP, U+3000 */
    ck_assert_str_eq(space_tokens("", 0), "");
    ck_assert_str_eq(space_tokens(" \t ", 0), "");
    /* No NFC: e + combining acute stays two code points; lower-casing per code point. */
    ck_assert_str_eq(space_tokens("Cafe\xCC\x81 \xC3\x89T\xC3\x89", 1),
                     "cafe\xCC\x81|\xC3\xA9t\xC3\xA9");
    ck_assert_str_eq(space_tokens("Cafe\xCC\x81", 0), "Cafe\xCC\x81");
    rs_error err = {{0}};
    rs_tokens tokens = {0};
    ck_assert_int_eq(rs_text_to_tokens("a \xFF", 3, 0, RS_TOK_SPACE, &tokens, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "byte 3"));
    ck_assert_int_eq(tokens.count, 0);
    rs_tokens_free(&tokens);
    check_round_trip("hou@@ se , \xEF\xBF\xAD x", RS_TOK_SPACE);
    check_round_trip("", RS_TOK_SPACE);
}
END_TEST

static char *unbpe(const char *text, const char *marker)
{
    rs_error err = {{0}};
    static char out[256];
    char *joined;
    ck_assert_msg(!rs_remove_bpe(text, marker, &joined, &err), "%s", err.msg);
    ck_assert(strlen(joined) < sizeof out);
    strcpy(out, joined);
    free(joined);
    return out;
}

START_TEST(test_remove_bpe)
{
    ck_assert_str_eq(unbpe("the hou@@ se is big", RS_BPE_MARKER), "the house is big");
    ck_assert_str_eq(unbpe("un@@ be@@ liev@@ able", RS_BPE_MARKER), "unbelievable");
    ck_assert_str_eq(unbpe("a hou@@", RS_BPE_MARKER), "a hou");    /* @@ at the end of the line */
    ck_assert_str_eq(unbpe("hou@@  se", RS_BPE_MARKER), "hou se"); /* only one space joins */
    ck_assert_str_eq(unbpe("hou@@\tse", RS_BPE_MARKER), "hou@@\tse"); /* a tab is no marker */
    ck_assert_str_eq(unbpe("", RS_BPE_MARKER), "");
    ck_assert_str_eq(unbpe("e@@@ mail", RS_BPE_MARKER), "e@mail"); /* left to right, as fairseq */
    ck_assert_str_eq(unbpe("no marks here ", RS_BPE_MARKER), "no marks here");
    ck_assert_str_eq(unbpe("hou## se", "## "), "house");
    /* SentencePiece pieces as tokens, as fairseq's --remove-bpe sentencepiece. */
    ck_assert_str_eq(
        unbpe("\xE2\x96\x81the \xE2\x96\x81hou se \xE2\x96\x81is", RS_BPE_SENTENCEPIECE),
        "the house is");
    ck_assert_str_eq(unbpe(" \xE2\x96\x81"
                           "a \xE2\x96\x81 ",
                           RS_BPE_SENTENCEPIECE),
                     "a");
    ck_assert_str_eq(unbpe("", RS_BPE_SENTENCEPIECE), "");
    rs_error err = {{0}};
    char *out;
    ck_assert_int_eq(rs_remove_bpe("x", "", &out, &err), -1);
    ck_assert_ptr_null(out);
}
END_TEST

static const char *const samples[] = {
    "Hello, world!",
    "2026-11-21",
    "(yes)",
    "l'homme",
    "Wait... what?!",
    "\"Quoted\" and 'single' and «guillemets» and „Anführungszeichen“",
    "It's 3:45 p.m. on 21/11/2026, isn't it?",
    "Привет, мир! Как дела?",
    "Ёлки-палки, 1984 год.",
    "東京は日本の首都です。",
    "我爱你，中国！",
    "こんにちは、世界！",
    "مرحبا بالعالم! كيف حالك؟",
    "שלום, עולם.",
    "नमस्ते दुनिया।",
    "Γειά σου Κόσμε;",
    "안녕하세요, 세계!",
    "e-mail: a.b@example.com, URL: https://x.org/a?b=c&d=e#f",
    "$3.50 + €4,20 = ¥1000 (approx.)",
    "50% off -- 2×3 ≠ 7",
    "a - b",
    "- a -",
    "!!!",
    "...",
    "x",
    "",
    "👍🏽 ok 🎉🎉",
    "C++ & C#",
    "naïve café résumé",
    "a" J "b " J " c" J,
    "a" RS_SPACE "b " RS_SPACE,
    "<unk> <s> </s>",
    "tab\xE2\x80\x8Bzero-width",
    "\xCC\x81 leading mark, !\xCC\x81 mark after punctuation",
    "O'Neil's \"book\" (2nd ed.) [p. 12] {x}",
};

START_TEST(test_round_trip)
{
    for (size_t i = 0; i < sizeof samples / sizeof *samples; i++)
        for (int lower = 0; lower < 2; lower++) {
            char *s = normalize(samples[i], lower);
            check_round_trip(s, RS_TOK_WORD);
            check_round_trip(s, RS_TOK_CHAR);
            free(s);
        }
}
END_TEST

/* Random strings from a mix of letters, marks, punctuation, symbols, white
 * space and the two marks, normalised, then tokenized and detokenized. */
START_TEST(test_round_trip_random)
{
    static const char *const pieces[] = {
        "a",        "Z",
        "é",        "e\xCC\x81",
        "\xCC\x81", "ß",
        "Ж",        "ж",
        "東",       "語",
        "ع",        "ש",
        "한",       "7",
        "٣",        ",",
        ".",        "-",
        "'",        "\"",
        "(",        ")",
        "«",        "»",
        "¿",        "!",
        "?",        "$",
        "€",        "+",
        "=",        "👍",
        "🏽",     " ",
        "  ",       "\t",
        "\xC2\xA0", "\xE3\x80\x80",
        J,          RS_SPACE,
        "<",        ">",
        "_",        "\xE2\x80\x8B",
        "\x01",
    };
    const int npieces = (int)(sizeof pieces / sizeof *pieces);
    unsigned long long state = 12345;
    char buf[512];
    for (int trial = 0; trial < 3000; trial++) {
        buf[0] = '\0';
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        int n = (int)((state >> 33) % 20);
        for (int i = 0; i < n; i++) {
            state = state * 6364136223846793005ULL + 1442695040888963407ULL;
            strcat(buf, pieces[(state >> 33) % (unsigned)npieces]);
        }
        char *s = normalize(buf, trial & 1);
        check_round_trip(s, RS_TOK_WORD);
        check_round_trip(s, RS_TOK_CHAR);
        free(s);
    }
}
END_TEST

static char *detok(const char *const *tokens, int count, int mode)
{
    rs_error err = {{0}};
    char *out = NULL;
    ck_assert_msg(!rs_detokenize_array(tokens, count, mode, &out, &err), "%s", err.msg);
    return out;
}

START_TEST(test_detokenize_foreign_tokens)
{
    const char *const words[] = {"the", "<unk>", J ".", "<unk>", J "-" J, "<unk>"};
    char *s = detok(words, 6, RS_TOK_WORD);
    ck_assert_str_eq(s, "the <unk>. <unk>-<unk>");
    free(s);
    const char *const chars[] = {"a", RS_SPACE, "<unk>", RS_SPACE, "b"};
    s = detok(chars, 5, RS_TOK_CHAR);
    ck_assert_str_eq(s, "a <unk> b");
    free(s);
    /* What a model may emit: a stray joiner glues, empty tokens vanish. */
    const char *const odd[] = {"a", J, "b", "", "c"};
    s = detok(odd, 5, RS_TOK_WORD);
    ck_assert_str_eq(s, "ab c");
    free(s);
    s = detok(NULL, 0, RS_TOK_WORD);
    ck_assert_str_eq(s, "");
    free(s);
}
END_TEST

START_TEST(test_tokens_reuse)
{
    rs_error err = {{0}};
    rs_tokens tokens = {0};
    ck_assert_int_eq(rs_text_to_tokens("  One,  TWO  ", 13, 1, RS_TOK_WORD, &tokens, &err), 0);
    ck_assert_int_eq(tokens.count, 3);
    ck_assert_str_eq(tokens.tokens[0], "one");
    ck_assert_str_eq(tokens.tokens[1], J ",");
    ck_assert_str_eq(tokens.tokens[2], "two");
    char **array = tokens.tokens;
    int capacity = tokens.capacity;
    rs_tokens_clear(&tokens);
    ck_assert_int_eq(tokens.count, 0);
    ck_assert_ptr_eq(tokens.tokens, array);
    ck_assert_int_eq(tokens.capacity, capacity);
    /* rs_tokenize replaces, it does not append. */
    ck_assert_int_eq(rs_tokenize("x y", RS_TOK_WORD, &tokens, &err), 0);
    ck_assert_int_eq(rs_tokenize("z", RS_TOK_WORD, &tokens, &err), 0);
    ck_assert_int_eq(tokens.count, 1);
    ck_assert_str_eq(tokens.tokens[0], "z");
    /* Growth past the first allocation. */
    char many[4096] = "";
    for (int i = 0; i < 500; i++)
        strcat(many, "w,");
    ck_assert_int_eq(rs_tokenize(many, RS_TOK_WORD, &tokens, &err), 0);
    ck_assert_int_eq(tokens.count, 1000);
    rs_tokens_free(&tokens);
    ck_assert_int_eq(tokens.count, 0);
    ck_assert_ptr_null(tokens.tokens);
}
END_TEST

START_TEST(test_cli)
{
    /* Pipelines feed the program standard input. */
    const char *prog = testprog_path();
    char cmd[1024], out[4096];
    snprintf(cmd, sizeof cmd, "printf 'Hello, WORLD!\\n\\n(yes)\\n' | %s tokenize --lowercase",
             prog);
    ck_assert_int_eq(testprog_shell(cmd, out, sizeof out), 0);
    ck_assert_str_eq(out, "hello " J ", world " J "!\n\n(" J " yes " J ")\n");
    snprintf(cmd, sizeof cmd,
             "printf 'a b\\nl\\047homme 2026-11-21\\n' | %s tokenize --tokenizer char | "
             "%s tokenize --tokenizer=char --detokenize",
             prog, prog);
    ck_assert_int_eq(testprog_shell(cmd, out, sizeof out), 0);
    ck_assert_str_eq(out, "a b\nl'homme 2026-11-21\n");
    snprintf(cmd, sizeof cmd,
             "printf 'l\\047homme, (oui)\\n' | %s tokenize | %s tokenize --detokenize", prog, prog);
    ck_assert_int_eq(testprog_shell(cmd, out, sizeof out), 0);
    ck_assert_str_eq(out, "l'homme, (oui)\n");
    ck_assert_int_eq(testprog_run("tokenize --help", out, sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, "default: word"));
    ck_assert_int_eq(
        testprog_run("tokenize --tokenizer bpe </dev/null 2>/dev/null", out, sizeof out), 2);
    ck_assert_int_eq(testprog_run("tokenize --bogus </dev/null 2>/dev/null", out, sizeof out), 2);
    snprintf(cmd, sizeof cmd, "printf 'ok\\nbad \\377\\n' | %s tokenize 2>&1 >/dev/null", prog);
    ck_assert_int_eq(testprog_shell(cmd, out, sizeof out), 1);
    ck_assert_str_eq(out, "rnnsearch tokenize: <stdin>:2: invalid UTF-8 at byte 5\n");
    ck_assert_int_eq(testprog_run_all("tokenize /nonexistent/file", out, sizeof out), 1);
    ck_assert_ptr_nonnull(strstr(out, "/nonexistent/file"));
}
END_TEST

START_TEST(test_is_blank)
{
    ck_assert_int_eq(rs_text_is_blank("", 0), 1);
    ck_assert_int_eq(rs_text_is_blank(" \t\r\n\v\f", 6), 1);
    ck_assert_int_eq(rs_text_is_blank("\xC2\xA0\xE3\x80\x80\xE2\x80\xA8", 8),
                     1); /* NBSP, U+3000, U+2028 */
    ck_assert_int_eq(rs_text_is_blank(" a ", 3), 0);
    ck_assert_int_eq(rs_text_is_blank(" \xE2\x96\x81", 4), 0); /* U+2581 is a token, not space */
    ck_assert_int_eq(rs_text_is_blank(" \xFF", 2), 0);         /* not UTF-8: not blank */
}
END_TEST

Suite *text_suite(void)
{
    Suite *s = suite_create("text");
    TCase *tc = tcase_create("text");
    tcase_add_test(tc, test_nfc);
    tcase_add_test(tc, test_lowercase);
    tcase_add_test(tc, test_whitespace);
    tcase_add_test(tc, test_normalize_idempotent);
    tcase_add_test(tc, test_invalid_utf8);
    tcase_add_test(tc, test_word_tokens);
    tcase_add_test(tc, test_char_tokens);
    tcase_add_test(tc, test_mode_parse);
    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_round_trip_random);
    tcase_add_test(tc, test_detokenize_foreign_tokens);
    tcase_add_test(tc, test_tokens_reuse);
    tcase_add_test(tc, test_is_blank);
    tcase_add_test(tc, test_space_tokens);
    tcase_add_test(tc, test_bom_inside_text_is_dropped);
    tcase_add_test(tc, test_remove_bpe);
    suite_add_tcase(s, tc);
    TCase *cli = tcase_create("cli");
    tcase_set_timeout(cli, 20);
    tcase_add_test(cli, test_cli);
    suite_add_tcase(s, cli);
    return s;
}
