/* The lexical table (IBM Model 1: one iteration against numbers worked by
 * hand, a word-for-word corpus learned, the rows' order and bounds), its file
 * (written and read back; malformed lines refused naming the line), and the
 * shortlist: the union it selects, a shortlist of every word decoding exactly
 * as without one (greedy, beam, an ensemble, float or int8 weights: the same
 * ids and log-probability bits), and a short one producing only its own words. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accel/accel.h"
#include "search/beam.h"
#include "search/decode.h"
#include "model/checkpoint.h"
#include "search/lexicon.h"
#include "text/corpus.h"
#include "testprog.h"
#include "testdir.h"
#include "tinymodel.h"

/* A dataset of `count` pairs given as id arrays (not owned). */
typedef struct {
    rs_dataset d;
    int *src[16], *tgt[16], src_len[16], tgt_len[16], line[16];
} small_data;

static void small_data_set(small_data *s, int count, int *const *src, const int *src_len,
                           int *const *tgt, const int *tgt_len)
{
    for (int i = 0; i < count; i++) {
        s->src[i] = src[i], s->tgt[i] = tgt[i];
        s->src_len[i] = src_len[i], s->tgt_len[i] = tgt_len[i], s->line[i] = i;
    }
    s->d = (rs_dataset){count, s->src, s->tgt, s->src_len, s->tgt_len, s->line};
}

/* Pairs (a → x) and (a b → y), a = 4, b = 5, x = 4, y = 5. From uniform p,
 * the first iteration gives x's mass 1/2 to NULL and a, y's 1/3 to NULL, a
 * and b: c(·|a) = {x 1/2, y 1/3}, so p(x|a) = 0.6, p(y|a) = 0.4, p(y|b) = 1. */
START_TEST(first_iteration_as_worked_by_hand)
{
    int s0[] = {4}, s1[] = {4, 5}, t0[] = {4}, t1[] = {5};
    int *src[] = {s0, s1}, *tgt[] = {t0, t1}, sl[] = {1, 2}, tl[] = {1, 1};
    small_data data;
    small_data_set(&data, 2, src, sl, tgt, tl);
    rs_lexicon lex;
    rs_error err;
    ck_assert_msg(!rs_lexicon_learn(&lex, &data.d, 6, 6, 1, 100, 0.0f, &err), "%s", err.msg);
    ck_assert_int_eq(lex.start[0], lex.start[1]); /* NULL's row is not kept */
    ck_assert_int_eq(lex.start[5] - lex.start[4], 2);
    ck_assert_int_eq(lex.tgt[lex.start[4]], 4);
    ck_assert_int_eq(lex.tgt[lex.start[4] + 1], 5);
    ck_assert_float_eq_tol(lex.prob[lex.start[4]], 0.6f, 1e-6f);
    ck_assert_float_eq_tol(lex.prob[lex.start[4] + 1], 0.4f, 1e-6f);
    ck_assert_int_eq(lex.start[6] - lex.start[5], 1);
    ck_assert_int_eq(lex.tgt[lex.start[5]], 5);
    ck_assert_float_eq_tol(lex.prob[lex.start[5]], 1.0f, 1e-6f);
    rs_lexicon_free(&lex);
}
END_TEST

/* Source word 4 + k always translates as target word 4 + (k·3 mod 8), in
 * sentences of 3 to 6 words: after 5 iterations each word's first entry is
 * its translation, with most of the mass; --keep and --min-prob bound the rows. */
START_TEST(word_for_word_corpus_is_learned)
{
    enum { PAIRS = 16 };
    static int srcs[PAIRS][6], tgts[PAIRS][6];
    int *src[PAIRS], *tgt[PAIRS], sl[PAIRS], tl[PAIRS];
    unsigned state = 12345;
    for (int i = 0; i < PAIRS; i++) {
        sl[i] = tl[i] = 3 + i % 4;
        for (int j = 0; j < sl[i]; j++) {
            state = state * 1103515245u + 12345u;
            const int k = (int)((state >> 16) % 8);
            srcs[i][j] = 4 + k;
            tgts[i][sl[i] - 1 - j] = 4 + (k * 3) % 8; /* reversed order */
        }
        src[i] = srcs[i], tgt[i] = tgts[i];
    }
    small_data data;
    small_data_set(&data, PAIRS, src, sl, tgt, tl);
    rs_lexicon lex;
    rs_error err;
    ck_assert_msg(!rs_lexicon_learn(&lex, &data.d, 12, 12, 5, 100, 0.0f, &err), "%s", err.msg);
    for (int k = 0; k < 8; k++) {
        const int s = 4 + k, e = lex.start[s];
        ck_assert_int_gt(lex.start[s + 1], e);
        ck_assert_int_eq(lex.tgt[e], 4 + (k * 3) % 8);
        ck_assert_float_gt(lex.prob[e], 0.5f);
        for (int f = e + 1; f < lex.start[s + 1]; f++)
            ck_assert(lex.prob[f] <= lex.prob[f - 1]);
    }
    rs_lexicon_free(&lex);
    ck_assert(!rs_lexicon_learn(&lex, &data.d, 12, 12, 5, 2, 0.0f, &err));
    for (int s = 4; s < 12; s++)
        ck_assert_int_le(lex.start[s + 1] - lex.start[s], 2);
    rs_lexicon_free(&lex);
    ck_assert(!rs_lexicon_learn(&lex, &data.d, 12, 12, 5, 100, 0.2f, &err));
    for (int e = 0; e < lex.start[12]; e++)
        ck_assert_float_ge(lex.prob[e], 0.2f);
    rs_lexicon_free(&lex);
}
END_TEST

/* Vocabularies of words s0..s7 and t0..t7 after the reserved ids. */
static void words(rs_vocab *src, rs_vocab *tgt)
{
    rs_error err;
    ck_assert(!rs_vocab_init(src, &err) && !rs_vocab_init(tgt, &err));
    for (int k = 0; k < 8; k++) {
        char w[8];
        snprintf(w, sizeof w, "s%d", k);
        ck_assert_int_eq(rs_vocab_add(src, w, &err), RS_RESERVED + k);
        snprintf(w, sizeof w, "t%d", k);
        ck_assert_int_eq(rs_vocab_add(tgt, w, &err), RS_RESERVED + k);
    }
}

START_TEST(written_table_reads_back)
{
    rs_vocab sv, tv;
    words(&sv, &tv);
    int s0[] = {4, 5, 6}, s1[] = {5, 7}, t0[] = {6, 4, 1}, t1[] = {9, 8};
    int *src[] = {s0, s1}, *tgt[] = {t0, t1}, sl[] = {3, 2}, tl[] = {3, 2};
    small_data data;
    small_data_set(&data, 2, src, sl, tgt, tl);
    rs_lexicon lex, back;
    rs_error err;
    ck_assert(!rs_lexicon_learn(&lex, &data.d, sv.size, tv.size, 3, 100, 0.0f, &err));
    char dir[64], path[128];
    testdir_make(dir, "rnnsearch-lexicon");
    snprintf(path, sizeof path, "%s/lex.tsv", dir);
    FILE *f = fopen(path, "w");
    int errnum = 0;
    rs_lexicon_write(&lex, &sv, &tv, f, &errnum);
    ck_assert(!fclose(f) && !errnum);
    ck_assert_msg(!rs_lexicon_read(&back, path, &sv, &tv, &err), "%s", err.msg);
    ck_assert_int_eq(back.src_vocab, sv.size);
    for (int s = 0; s <= sv.size; s++)
        ck_assert_int_eq(back.start[s], lex.start[s]);
    for (int e = 0; e < lex.start[sv.size]; e++) {
        ck_assert_int_eq(back.tgt[e], lex.tgt[e]);
        ck_assert_float_eq_tol(back.prob[e], lex.prob[e], 1e-5f * lex.prob[e]);
    }
    rs_lexicon_free(&back);
    rs_lexicon_free(&lex);
    testdir_remove(dir);
    rs_vocab_free(&sv);
    rs_vocab_free(&tv);
}
END_TEST

START_TEST(bad_tables_are_refused_naming_the_line)
{
    static const char *const bad[][2] = {
        {"s0\tt1\t0.5\ns0\tt2\n", ":2: expected three tab-separated fields"},
        {"s0\tt1\t0.5\tx\n", ":1: expected three"},
        {"s0\tt1\t0\n", ":1: '0' is not a probability"},
        {"s0\tt1\t1.5\n", ":1: '1.5' is not a probability"},
        {"s0\tt1\tnan\n", ":1: 'nan' is not a probability"},
        {"s0\tt1\t0.5x\n", ":1: '0.5x' is not a probability"},
        {"s0\tt1\t0.5\nzz\tt1\t0.5\n", ":2: the source token 'zz' is not in the model's"},
        {"s0\tqq\t0.5\n", ":1: the target token 'qq' is not in the model's"},
        {"", ": no entries"},
        /* Read as every text file is (rs_line_reader), naming the line: */
        {"s0\tt1\t0.5\ns0\tt\0002\t0.5\n", ":2: NUL byte at byte 5"},
        {"s0\tt1\t0.5\ns0\t\xC3\x28\t0.5\n", ":2: invalid UTF-8"},
        {"s0\tt1\t0.5\r\rs0\tt2\t0.5\n", ":2: expected three tab-separated fields"},
        {"s0\tt1\t1e-50\n", ":1: '1e-50' is not a probability"}, /* 0 as a float */
    };
    rs_vocab sv, tv;
    words(&sv, &tv);
    char dir[64], path[128];
    testdir_make(dir, "rnnsearch-lexicon");
    snprintf(path, sizeof path, "%s/lex.tsv", dir);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        /* Written with their length: the NUL case's would stop at the NUL. */
        const size_t len = i == 9 ? 21 : strlen(bad[i][0]);
        testfile_write(path, (const unsigned char *)bad[i][0], len);
        rs_lexicon lex;
        rs_error err;
        ck_assert_int_eq(rs_lexicon_read(&lex, path, &sv, &tv, &err), -1);
        ck_assert_msg(strstr(err.msg, path) && strstr(err.msg, bad[i][1]), "case %zu: %s", i,
                      err.msg);
    }
    rs_lexicon lex;
    rs_error err;
    ck_assert_int_eq(rs_lexicon_read(&lex, "/nonexistent/lex.tsv", &sv, &tv, &err), -1);
    ck_assert(strstr(err.msg, "/nonexistent/lex.tsv") != NULL);
    testdir_remove(dir);
    rs_vocab_free(&sv);
    rs_vocab_free(&tv);
}
END_TEST

/* A table is read as every text file is (rs_line_reader), so that no input
 * escapes one of the rules: bounded lines, NUL bytes refused at once, any
 * line end, the byte order mark dropped. */
START_TEST(tables_are_read_as_every_text_file)
{
    rs_vocab sv, tv;
    words(&sv, &tv);
    char dir[64], path[128];
    testdir_make(dir, "rnnsearch-lexicon");
    snprintf(path, sizeof path, "%s/lex.tsv", dir);
    rs_lexicon lex;
    rs_error err;
    /* A device of endless NUL bytes is refused at its first byte; read with
     * getline, it grew by a gigabyte a second until memory ran out. */
    ck_assert_int_eq(rs_lexicon_read(&lex, "/dev/zero", &sv, &tv, &err), -1);
    ck_assert_msg(strstr(err.msg, "/dev/zero:1: NUL byte at byte 1"), "%s", err.msg);
    /* One line without an end, longer than any line may be: refused by its
     * length, after at most that much is read. */
    const size_t big = (size_t)RS_LINE_MAX_BYTES + 10;
    unsigned char *long_line = malloc(big);
    ck_assert(long_line != NULL);
    memset(long_line, 'a', big);
    testfile_write(path, long_line, big);
    free(long_line);
    ck_assert_int_eq(rs_lexicon_read(&lex, path, &sv, &tv, &err), -1);
    ck_assert_msg(strstr(err.msg, "lex.tsv:1: line longer than"), "%s", err.msg);
    /* Lines ending at a lone CR, at CR LF, and a byte order mark (dropped, as
     * from every text file) read as the same table as \n lines. */
    testfile_put(dir, "lex.tsv", "\xEF\xBB\xBFs0\tt1\t0.5\rs0\tt2\t0.25\r\ns1\tt1\t1");
    ck_assert_msg(!rs_lexicon_read(&lex, path, &sv, &tv, &err), "%s", err.msg);
    ck_assert_int_eq(lex.start[RS_RESERVED + 2] - lex.start[RS_RESERVED], 3);
    ck_assert_int_eq(lex.tgt[lex.start[RS_RESERVED]], RS_RESERVED + 1);
    ck_assert_int_eq(lex.tgt[lex.start[RS_RESERVED] + 1], RS_RESERVED + 2);
    ck_assert_int_eq(lex.tgt[lex.start[RS_RESERVED + 1]], RS_RESERVED + 1);
    rs_lexicon_free(&lex);
    testdir_remove(dir);
    rs_vocab_free(&sv);
    rs_vocab_free(&tv);
}
END_TEST

/* A table of Vs = 10, Vt = 12: source s's targets are 4 + (s mod 8) (p 0.7),
 * then 11 (0.2), then 10 (0.1). */
static void fixed_table(rs_lexicon *lex)
{
    static int start[11], tgt[30];
    static float prob[30];
    int e = 0;
    for (int s = 0; s < 10; s++) {
        start[s] = e;
        if (s < RS_RESERVED)
            continue;
        tgt[e] = 4 + s % 8, prob[e++] = 0.7f;
        tgt[e] = 11, prob[e++] = 0.2f;
        tgt[e] = 10, prob[e++] = 0.1f;
    }
    start[10] = e;
    *lex = (rs_lexicon){10, 12, start, tgt, prob};
}

START_TEST(shortlist_is_the_union_in_order)
{
    rs_lexicon lex;
    fixed_table(&lex);
    unsigned char marks[12] = {0};
    int ids[12];
    const int a[] = {9, 5}, b[] = {5};
    const int *src[] = {a, b}, count[] = {2, 1};
    rs_shortlist sl = {&lex, 1, 1}; /* word 4, and each source's best */
    int n = rs_shortlist_select(&sl, 2, src, count, marks, ids);
    const int want[] = {0, 1, 2, 3, 4, 5, 9};
    ck_assert_int_eq(n, 7);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(ids[i], want[i]);
    for (int v = 0; v < 12; v++)
        ck_assert_int_eq(marks[v], 0);
    sl = (rs_shortlist){&lex, 0, 2};
    n = rs_shortlist_select(&sl, 1, &src[1], &count[1], marks, ids);
    const int want2[] = {0, 1, 2, 3, 9, 11};
    ck_assert_int_eq(n, 6);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(ids[i], want2[i]);
    sl = (rs_shortlist){&lex, 100, 100}; /* more than there is: every word once */
    ck_assert_int_eq(rs_shortlist_select(&sl, 2, src, count, marks, ids), 12);
}
END_TEST

static const int line0[] = {4, 5, 6, 7, 8}, line1[] = {9, 9}, line2[] = {6}, line3[] = {8, 4, 7};
static const int *const lines[] = {line0, line1, line2, line3};
static const int line_len[] = {5, 2, 1, 3};
enum { LINES = 4 };

/* Translations of the four lines, batch_size at a time, by greedy search
 * (beam 1) or beam search, with the shortlist sl (lex NULL: none). */
static void decode_lines(const rs_ready *const *models, int n_models, int beam, int batch_size,
                         const rs_shortlist *sl, rs_hypothesis *out)
{
    rs_error err;
    for (int first = 0; first < LINES; first += batch_size) {
        const int B = first + batch_size <= LINES ? batch_size : LINES - first;
        if (beam == 1) {
            rs_decoder dec;
            ck_assert(!rs_decoder_init(&dec, models, n_models, B, 1, 8, &err));
            ck_assert_msg(!sl->lex || !rs_decoder_use_shortlist(&dec, sl, &err), "%s", err.msg);
            ck_assert(
                !rs_greedy(&dec, B, lines + first, line_len + first, 0, 0, out + first, &err));
            rs_decoder_free(&dec);
        } else {
            rs_beam_search bs;
            ck_assert(!rs_beam_init(&bs, models, n_models, B, beam, 8, &err));
            ck_assert_msg(!sl->lex || !rs_decoder_use_shortlist(&bs.dec, sl, &err), "%s", err.msg);
            const rs_beam_options bo = {.beam = beam, .length_penalty = 1.0f, .n_best = 1};
            ck_assert(!rs_beam_translate(&bs, B, lines + first, line_len + first, &bo, out + first,
                                         &err));
            rs_beam_free(&bs);
        }
    }
}

START_TEST(shortlist_of_every_word_decodes_exactly)
{
    rs_model m[2];
    tiny_model_make(&m[0], "additive", 0.5f, -2.0f, 3);
    tiny_model_make(&m[1], "additive", 0.5f, -2.0f, 4);
    rs_ready members_ready[] = {rs_ready_plain(&m[0]), rs_ready_plain(&m[1])};
    const rs_ready *members[] = {&members_ready[0], &members_ready[1]};
    const rs_accel_options int8 = {.int8 = 1};
    rs_accel *copies[2] = {NULL, NULL};
    rs_lexicon lex;
    fixed_table(&lex);
    const rs_shortlist none = {0}, all = {&lex, 12, 0};
    rs_error err;
    /* Float weights, then int8 ones (translate --int8): the shortlist reads
     * the same rows of either. */
    for (int q8 = 0; q8 <= 1; q8++)
        for (int beam = 1; beam <= 3; beam += 2)
            for (int n_models = 1; n_models <= 2; n_models++) {
                if (q8 && beam == 1 && n_models == 1)
                    for (int k = 0; k < 2; k++) {
                        copies[k] = rs_accel_new(&m[k], NULL, &int8, &err);
                        ck_assert_msg(copies[k], "%s", err.msg);
                        members_ready[k].accel = copies[k];
                    }
                rs_hypothesis exact[LINES], listed[LINES];
                decode_lines(members, n_models, beam, 2, &none, exact);
                decode_lines(members, n_models, beam, 2, &all, listed);
                int words = 0;
                for (int i = 0; i < LINES; i++) {
                    ck_assert_int_eq(exact[i].count, listed[i].count);
                    ck_assert(!memcmp(exact[i].ids, listed[i].ids, sizeof(int) * exact[i].count));
                    ck_assert(exact[i].logprob == listed[i].logprob);
                    words += exact[i].count;
                    rs_hypothesis_free(&exact[i]);
                    rs_hypothesis_free(&listed[i]);
                }
                ck_assert_int_gt(words, LINES); /* not only empty outputs */
            }
    rs_accel_free(copies[0]);
    rs_accel_free(copies[1]);
    rs_model_free(&m[0]);
    rs_model_free(&m[1]);
}
END_TEST

/* In-process, so that the sanitizer builds see the decoder: a +1000 output
 * bias on word 11 makes every output word 11, with or without a shortlist
 * (which puts 11 in column 5 or 6, not 11), float or int8 weights. */
START_TEST(dominant_bias_wins_under_int8_and_shortlist)
{
    rs_model m;
    tiny_model_make(&m, "additive", 0.5f, -2.0f, 6);
    m.w.out_bw[11] += 1000.0f;
    rs_ready member_ready = rs_ready_plain(&m);
    const rs_ready *member = &member_ready;
    rs_lexicon lex;
    fixed_table(&lex);
    const rs_shortlist none = {0}, sl = {&lex, 0, 2};
    rs_error err;
    rs_accel *copies = NULL;
    for (int q8 = 0; q8 <= 1; q8++) {
        if (q8) {
            copies = rs_accel_new(&m, NULL, &(rs_accel_options){.int8 = 1}, &err);
            ck_assert_msg(copies, "%s", err.msg);
            member_ready.accel = copies;
        }
        for (int list = 0; list <= 1; list++)
            for (int beam = 1; beam <= 3; beam += 2)
                for (int batch = 1; batch <= LINES; batch += LINES - 1) {
                    rs_hypothesis out[LINES];
                    decode_lines(&member, 1, beam, batch, list ? &sl : &none, out);
                    for (int i = 0; i < LINES; i++) {
                        ck_assert_int_eq(out[i].count, rs_output_limit(0, line_len[i]));
                        for (int t = 0; t < out[i].count; t++)
                            ck_assert_msg(out[i].ids[t] == 11,
                                          "int8 %d, shortlist %d, beam %d, batch %d: line %d "
                                          "word %d is %d, not 11",
                                          q8, list, beam, batch, i, t, out[i].ids[t]);
                        rs_hypothesis_free(&out[i]);
                    }
                }
    }
    rs_accel_free(copies);
    rs_model_free(&m);
}
END_TEST

/* Whether word v may come out of line i's translation under table entries
 * 4 + (s mod 8) (first 0, best 1), translated alone (batch 1) or with all. */
static int allowed(int v, int i, int batch)
{
    int ok = v < RS_RESERVED;
    for (int b = batch == 1 ? i : 0; b < (batch == 1 ? i + 1 : LINES); b++)
        for (int j = 0; j < line_len[b]; j++)
            ok |= v == 4 + lines[b][j] % 8;
    return ok;
}

/* Words of the translations that the shortlist would not allow. */
static int outside(const rs_hypothesis *out, int batch)
{
    int count = 0;
    for (int i = 0; i < LINES; i++)
        for (int t = 0; t < out[i].count; t++)
            count += !allowed(out[i].ids[t], i, batch);
    return count;
}

/* First 0, best 1: a sentence translated alone uses only the reserved ids
 * and its source words' first targets; in a batch of all four, the union.
 * Without the shortlist the same model says other words too. */
START_TEST(short_shortlist_outputs_only_its_words)
{
    rs_model m;
    tiny_model_make(&m, "additive", 0.5f, -2.0f, 5);
    const rs_ready member_ready = rs_ready_plain(&m), *member = &member_ready;
    rs_lexicon lex;
    fixed_table(&lex);
    const rs_shortlist none = {0}, sl = {&lex, 0, 1};
    rs_hypothesis out[LINES];
    decode_lines(&member, 1, 1, 1, &none, out);
    ck_assert_int_gt(outside(out, 1), 0);
    for (int i = 0; i < LINES; i++)
        rs_hypothesis_free(&out[i]);
    for (int batch = 1; batch <= LINES; batch += LINES - 1) {
        decode_lines(&member, 1, 1, batch, &sl, out);
        ck_assert_int_eq(outside(out, batch), 0);
        for (int i = 0; i < LINES; i++)
            rs_hypothesis_free(&out[i]);
    }
    rs_model_free(&m);
}
END_TEST

/* The commands: `lexicon` writes the table of a corpus for a model, which
 * `translate --shortlist` reads (with every word listed: the exact output);
 * a table of other tokens, a bad --shortlist value and a lexicon written over
 * its own input or the model are refused. */
START_TEST(lexicon_and_shortlist_commands)
{
    char dir[64], ckpt[128], corpus[128], lexf[128], input[128], args[1024];
    static char out[65536], exact[65536];
    testdir_make(dir, "rnnsearch-lexicon");
    snprintf(ckpt, sizeof ckpt, "%s/m.ckpt", dir);
    snprintf(corpus, sizeof corpus, "%s/pairs.tsv", dir);
    snprintf(lexf, sizeof lexf, "%s/lex.tsv", dir);
    snprintf(input, sizeof input, "%s/in.txt", dir);
    rs_model m;
    rs_error err;
    tiny_model_with_words(&m, 5, "haus", 7);
    ck_assert_msg(!rs_checkpoint_save(ckpt, &m, NULL, &err), "%s", err.msg);
    rs_model_free(&m);
    FILE *f = fopen(corpus, "w");
    fputs("das\tthe\ndas haus\tthe the\nwas\tthe\n", f);
    ck_assert(!fclose(f));
    f = fopen(input, "w");
    fputs("das\nhaus das haus\n", f);
    ck_assert(!fclose(f));
    snprintf(args, sizeof args, "lexicon -m %s %s -o %s", ckpt, corpus, lexf);
    ck_assert_int_eq(testprog_run(args, out, sizeof out), 0);
    /* Every source word here has one target: p = 1 ("was" is <unk>). */
    f = fopen(lexf, "r");
    char table[256] = "";
    ck_assert(fread(table, 1, sizeof table - 1, f) > 0);
    fclose(f);
    ck_assert_str_eq(table, "<unk>\tthe\t1\ndas\tthe\t1\nhaus\tthe\t1\n");
    snprintf(args, sizeof args, "translate -m %s --quiet %s", ckpt, input);
    ck_assert_int_eq(testprog_run(args, exact, sizeof exact), 0);
    snprintf(args, sizeof args, "translate -m %s --quiet --shortlist %s,10 %s", ckpt, lexf, input);
    ck_assert_int_eq(testprog_run(args, out, sizeof out), 0);
    ck_assert_str_eq(out, exact);
    /* The same from a configuration file's translation: section. */
    char config[160];
    snprintf(config, sizeof config, "%s/t.yaml", dir);
    f = fopen(config, "w");
    fprintf(f, "translation:\n  shortlist: %s,10\n", lexf);
    ck_assert(!fclose(f));
    snprintf(args, sizeof args, "translate -m %s --quiet --config %s %s", ckpt, config, input);
    ck_assert_int_eq(testprog_run(args, out, sizeof out), 0);
    ck_assert_str_eq(out, exact);
    /* Refusals: the message names the problem; nothing is overwritten. */
    f = fopen(corpus, "w");
    fputs("das\tdie\t0.5\n", f);
    ck_assert(!fclose(f));
    snprintf(args, sizeof args, "translate -m %s --shortlist %s %s", ckpt, corpus, input);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, ":1: the target token 'die'") != NULL, "%s", out);
    snprintf(args, sizeof args, "translate -m %s --shortlist %s,1,2,3 %s", ckpt, lexf, input);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    /* Refused before any work, with translate's exit status: -m names no
     * model at all, and still the output is what is reported. */
    snprintf(args, sizeof args, "lexicon -m %s %s -o %s", ckpt, corpus, corpus);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "refusing to overwrite an input") != NULL, "%s", out);
    snprintf(args, sizeof args, "lexicon -m %s/none.ckpt %s -o %s", dir, corpus, corpus);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "refusing to overwrite an input") != NULL, "%s", out);
    /* An empty corpus, or one whose every entry is below --min-prob, writes no table. */
    testfile_put(dir, "pairs.tsv", "");
    snprintf(args, sizeof args, "lexicon -m %s %s -o %s", ckpt, corpus, lexf);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "pairs.tsv: no entries to write (0 pairs read") != NULL, "%s", out);
    testfile_put(dir, "pairs.tsv", "das\tthe xyz\n");
    snprintf(args, sizeof args, "lexicon -m %s %s -o %s --min-prob 1", ckpt, corpus, lexf);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "no entries to write (1 pairs read") != NULL, "%s", out);
    testfile_expect(lexf, "<unk>\tthe\t1\ndas\tthe\t1\nhaus\tthe\t1\n"); /* intact */
    snprintf(args, sizeof args, "lexicon -m %s %s -o %s", ckpt, lexf, ckpt);
    ck_assert_int_ne(testprog_run_all(args, out, sizeof out), 0);
    rs_model back;
    ck_assert_msg(!rs_checkpoint_load(ckpt, &back, NULL, &err), "%s", err.msg);
    rs_model_free(&back);
    testdir_remove(dir);
}
END_TEST

/* What lexicon writes, translate --shortlist reads: with --min-prob 0 and
 * 100 iterations most spurious pairs' p underflow to 0 in float, and the
 * table held thousands of rows "s TAB t TAB 0" that translate refused. */
START_TEST(lexicon_writes_tables_translate_reads)
{
    char dir[64], cmd[1024];
    static char out[65536];
    testdir_make(dir, "rnnsearch-lexicon-round");
    snprintf(cmd, sizeof cmd,
             "head -n 1000 corpora/dates/train.tsv > %s/t.tsv && cut -f1 corpora/dates/test.tsv "
             "| head -n 20 > %s/in.txt",
             dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd,
             "train --train %s/t.tsv --out %s/m --emb 8 --hidden 8 --att 8 --maxout 4 "
             "--max-steps 2 --threads 1 --quiet 2>&1",
             dir, dir);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 0);
    snprintf(cmd, sizeof cmd,
             "lexicon -m %s/m %s/t.tsv --min-prob 0 --iterations 100 -o %s/lex.tsv", dir, dir, dir);
    ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 0);
    char path[128];
    snprintf(path, sizeof path, "%s/lex.tsv", dir);
    size_t size;
    unsigned char *table = testfile_read(path, &size);
    ck_assert_msg(size > 1000, "a table of %zu bytes", size);
    ck_assert_msg(!strstr((char *)table, "\t0\n"), "a row of probability 0 was written");
    free(table);
    snprintf(cmd, sizeof cmd, "translate -m %s/m --quiet --shortlist %s/lex.tsv %s/in.txt", dir,
             dir, dir);
    ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 0);
    testdir_remove(dir);
}
END_TEST

/* A model whose output bias favours "f" (id 9) by +1000 says "f" and
 * nothing else, however its output layer is computed: all words or a
 * shortlist, float or int8 weights. The shortlist {reserved, b, f} puts f in
 * column 5, not 9, so an int8 output layer that read the gathered biases by
 * word id gave f another word's bias (or read past them). */
START_TEST(int8_and_shortlist_keep_each_words_bias)
{
    char dir[64], ckpt[128], lexf[128], input[128], args[1024];
    static char out[4][8192];
    testdir_make(dir, "rnnsearch-int8-shortlist");
    snprintf(ckpt, sizeof ckpt, "%s/m.ckpt", dir);
    snprintf(lexf, sizeof lexf, "%s/lex.tsv", dir);
    snprintf(input, sizeof input, "%s/in.txt", dir);
    const tiny_shape shape = {6, 10, 3, 5, 5, 2, RS_ATT_ADDITIVE};
    rs_model m;
    rs_error err;
    tiny_model_shaped(&m, &shape, 1.0f, 11);
    ck_assert(!rs_vocab_init(&m.src_vocab, &err) && !rs_vocab_init(&m.tgt_vocab, &err));
    ck_assert_int_eq(rs_vocab_add(&m.src_vocab, "das", &err), RS_RESERVED);
    ck_assert_int_eq(rs_vocab_add(&m.src_vocab, "haus", &err), RS_RESERVED + 1);
    const char *words[] = {"a", "b", "c", "d", "e", "f"};
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(rs_vocab_add(&m.tgt_vocab, words[i], &err), RS_RESERVED + i);
    m.w.out_bw[RS_RESERVED + 5] += 1000.0f;
    ck_assert_msg(!rs_checkpoint_save(ckpt, &m, NULL, &err), "%s", err.msg);
    rs_model_free(&m);
    testfile_put(dir, "lex.tsv", "das\tb\t1\nhaus\tf\t1\n");
    testfile_put(dir, "in.txt", "das haus\nhaus\nhaus das haus\n");
    const char *options[] = {"", "--int8", "--shortlist LEX,0,1", "--int8 --shortlist LEX,0,1"};
    for (int k = 0; k < 4; k++)
        for (int batch = 1; batch <= 3; batch += 2) {
            char opts[512];
            const char *lex = strstr(options[k], "LEX");
            snprintf(opts, sizeof opts, "%.*s%s%s",
                     lex ? (int)(lex - options[k]) : (int)strlen(options[k]), options[k],
                     lex ? lexf : "", lex ? lex + 3 : "");
            for (int beam = 1; beam <= 3; beam += 2) {
                snprintf(args, sizeof args,
                         "translate -m %s --quiet %s --beam %d --batch-size %d %s", ckpt, opts,
                         beam, batch, input);
                ck_assert_int_eq(testprog_run(args, out[k], sizeof out[k]), 0);
                /* Every line is f repeated up to the length limit, 2·|x| + 10. */
                const char *want = "f f f f f f f f f f f f f f\n"
                                   "f f f f f f f f f f f f\n"
                                   "f f f f f f f f f f f f f f f f\n";
                ck_assert_msg(!strcmp(out[k], want), "%s: %s", args, out[k]);
            }
        }
    testdir_remove(dir);
}
END_TEST

START_TEST(shortlist_sizes_as_marian_gives_them)
{
    char path[16];
    rs_shortlist sl = {0};
    rs_error err;
    ck_assert_int_eq(rs_shortlist_parse("lex.txt", path, sizeof path, &sl, &err), 0);
    ck_assert_str_eq(path, "lex.txt");
    ck_assert(sl.first == 100 && sl.best == 100);
    ck_assert_int_eq(rs_shortlist_parse("lex.txt,7", path, sizeof path, &sl, &err), 0);
    ck_assert(sl.first == 7 && sl.best == 100);
    ck_assert_int_eq(rs_shortlist_parse("l,0,3", path, sizeof path, &sl, &err), 0);
    ck_assert(sl.first == 0 && sl.best == 3 && !strcmp(path, "l"));
    ck_assert_int_ne(rs_shortlist_parse(",5", path, sizeof path, &sl, &err), 0);
    ck_assert_str_eq(err.msg, "give FILE[,FIRST[,BEST]]");
    ck_assert_int_ne(rs_shortlist_parse("a-path-too-long-for-it", path, sizeof path, &sl, &err), 0);
    ck_assert_int_ne(rs_shortlist_parse("l,+5", path, sizeof path, &sl, &err), 0);
    ck_assert_msg(strstr(err.msg, "'l,+5' is not FILE[,FIRST[,BEST]] with FIRST and BEST whole"),
                  "%s", err.msg);
    ck_assert_int_ne(rs_shortlist_parse("l,1,2x", path, sizeof path, &sl, &err), 0);
    ck_assert_int_ne(rs_shortlist_parse("l,1,2,3", path, sizeof path, &sl, &err), 0);
    ck_assert_msg(strstr(err.msg, "'l,1,2,3' is not FILE[,FIRST[,BEST]]"), "%s", err.msg);
    ck_assert_int_ne(rs_shortlist_parse("l,0,0", path, sizeof path, &sl, &err), 0);
    ck_assert_msg(strstr(err.msg, "lists no word"), "%s", err.msg);
}
END_TEST

Suite *lexicon_suite(void)
{
    Suite *s = suite_create("lexicon");
    TCase *tc = tcase_create("table and shortlist");
    tcase_add_test(tc, first_iteration_as_worked_by_hand);
    tcase_add_test(tc, shortlist_sizes_as_marian_gives_them);
    tcase_add_test(tc, word_for_word_corpus_is_learned);
    tcase_add_test(tc, written_table_reads_back);
    tcase_add_test(tc, bad_tables_are_refused_naming_the_line);
    tcase_add_test(tc, tables_are_read_as_every_text_file);
    tcase_add_test(tc, shortlist_is_the_union_in_order);
    tcase_add_test(tc, shortlist_of_every_word_decodes_exactly);
    tcase_add_test(tc, short_shortlist_outputs_only_its_words);
    tcase_add_test(tc, lexicon_and_shortlist_commands);
    tcase_add_test(tc, dominant_bias_wins_under_int8_and_shortlist);
    tcase_add_test(tc, lexicon_writes_tables_translate_reads);
    tcase_add_test(tc, int8_and_shortlist_keep_each_words_bias);
    suite_add_tcase(s, tc);
    return s;
}
