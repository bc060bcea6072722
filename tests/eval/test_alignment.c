/* Alignment matrices and their formats: soft alignments of a tiny random
 * model (greedy and forced) are distributions; words from pieces; hard links;
 * every writer's output read back (Pharaoh parsed, JSON with our parser, SVG
 * and HTML with xmllint from libxml2-utils); and the align, translate
 * --alignment and plot commands end to end on a saved tiny model. */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eval/alignment.h"
#include "search/forced.h"
#include "model/checkpoint.h"
#include "common/fileio.h"
#include "testdir.h"
#include "testprog.h"
#include "search/decode.h"
#include "gradcheck.h"
#include "common/json.h"
#include "common/svg.h"

/* ---- a tiny random model ---- */

static const char *const src_words[] = {"das", "Haus", "\xE6\x97\xA5\xE6\x9C\xAC",
                                        "\xD7\xA9\xD7\x9C\xD7\x95\xD7\x9D", "x"};
static const char *const tgt_words[] = {"the", "house", "b", "y"};

static void make_model(rs_model *m)
{
    rs_config cfg;
    rs_error err = {{0}};
    rs_config_defaults(&cfg);
    cfg.model.src_vocab = RS_RESERVED + 5, cfg.model.tgt_vocab = RS_RESERVED + 4;
    cfg.model.emb = 3, cfg.model.hidden = 4, cfg.model.att = 5, cfg.model.maxout = 3;
    ck_assert_msg(!rs_model_alloc(m, &cfg, &err), "%s", err.msg);
    ck_assert(!rs_vocab_init(&m->src_vocab, &err));
    ck_assert(!rs_vocab_init(&m->tgt_vocab, &err));
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(rs_vocab_add(&m->src_vocab, src_words[i], &err), RS_RESERVED + i);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(rs_vocab_add(&m->tgt_vocab, tgt_words[i], &err), RS_RESERVED + i);
    fill_uniform(m->params, m->layout.total, 1.0f, 11);
}

static void assert_rows_sum_to_one(const float *w, int rows, int cols)
{
    for (int i = 0; i < rows; i++) {
        double sum = 0.0;
        for (int j = 0; j < cols; j++) {
            ck_assert_msg(w[(size_t)i * cols + j] >= 0.0f, "negative weight at %d,%d", i, j);
            sum += w[(size_t)i * cols + j];
        }
        ck_assert_msg(fabs(sum - 1.0) <= 1e-5, "row %d of %d sums to %.8f", i, rows, sum);
    }
}

static const int s0[] = {4, 5, 6, 7, 8}, s1[] = {8}, s2[] = {6, 6, 4};
static const int t0[] = {4, 5}, t1[] = {6, 7, 4, 5, 6}, t2[] = {7};
static const int *const srcs[] = {s0, s1, s2}, *const tgts[] = {t0, t1, t2};
static const int src_len[] = {5, 1, 3}, tgt_len[] = {2, 5, 1};

START_TEST(greedy_alignment_rows_are_distributions)
{
    rs_model m;
    rs_decoder dec;
    rs_error err = {{0}};
    rs_hypothesis out[3];
    make_model(&m);
    const rs_ready member_ready = rs_ready_plain(&m), *member = &member_ready;
    ck_assert_msg(!rs_decoder_init(&dec, &member, 1, 3, 1, 6, &err), "%s", err.msg);
    ck_assert_msg(!rs_greedy(&dec, 3, srcs, src_len, 12, 1, out, &err), "%s", err.msg);
    for (int b = 0; b < 3; b++) {
        ck_assert_int_eq(out[b].columns, src_len[b] + 1);
        ck_assert_ptr_nonnull(out[b].alignment);
        assert_rows_sum_to_one(out[b].alignment, out[b].count + 1, out[b].columns);
        rs_hypothesis_free(&out[b]);
    }
    rs_decoder_free(&dec);
    rs_model_free(&m);
}
END_TEST

START_TEST(forced_alignment_rows_are_distributions_and_batch_free)
{
    rs_model m;
    rs_error err = {{0}};
    make_model(&m);
    int line[3] = {0, 1, 2};
    rs_dataset d = {.count = 3,
                    .src = (int **)srcs,
                    .tgt = (int **)tgts,
                    .src_len = (int *)src_len,
                    .tgt_len = (int *)tgt_len,
                    .line = line};
    rs_forced together[3], alone[3];
    const rs_ready member_ready = rs_ready_plain(&m), *member = &member_ready;
    ck_assert_msg(!rs_forced_decode(&member, 1, &d, 8, RS_FORCED_ALIGNMENT, together, &err), "%s",
                  err.msg);
    ck_assert_msg(!rs_forced_decode(&member, 1, &d, 1, RS_FORCED_ALIGNMENT, alone, &err), "%s",
                  err.msg);
    for (int i = 0; i < 3; i++) {
        const int rows = tgt_len[i] + 1, cols = src_len[i] + 1;
        assert_rows_sum_to_one(together[i].alignment, rows, cols);
        /* Padding in a batch must not change a sentence's alignment. */
        for (int k = 0; k < rows * cols; k++)
            ck_assert_float_eq_tol(together[i].alignment[k], alone[i].alignment[k], 1e-5f);
        rs_forced_free(&together[i]);
        rs_forced_free(&alone[i]);
    }
    rs_model_free(&m);
}
END_TEST

/* ---- the formats, on a hand-made matrix ---- */

/* Tokens that need escaping in XML, HTML, JSON and TSV, and non-Latin scripts. */
static const char *const tricky_src[] = {"<b>&\"'", "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E",
                                         "\xD7\xA9\xD7\x9C\xD7\x95\xD7\x9D", "a\\b"};
static const char *const tricky_tgt[] = {"x&amp;y", "\xD0\x94\xD0\xB0", "'q'"};

/* 4 rows (3 tokens + </s>) × 5 columns (4 tokens + </s>). */
static const float tricky_w[] = {
    0.70f, 0.10f, 0.10f, 0.05f, 0.05f, /* */
    0.05f, 0.05f, 0.80f, 0.05f, 0.05f, /* */
    0.20f, 0.30f, 0.00f, 0.45f, 0.05f, /* */
    0.00f, 0.00f, 0.00f, 0.10f, 0.90f,
};

static void make_tricky(rs_alignment *a)
{
    rs_error err = {{0}};
    ck_assert_msg(!rs_alignment_make(a, tricky_tgt, 3, tricky_src, 4, tricky_w, &err), "%s",
                  err.msg);
    ck_assert_int_eq(a->rows, 4);
    ck_assert_int_eq(a->cols, 5);
    ck_assert_str_eq(a->src[4], "</s>");
    ck_assert_str_eq(a->tgt[3], "</s>");
}

/* The whole file as a NUL-terminated string; free() it. */
static char *slurp(const char *path)
{
    size_t size;
    return (char *)testfile_read(path, &size);
}

/* xmllint must accept the file without a word (XML, or HTML with html = 1). */
static void assert_xmllint_accepts(const char *path, int html)
{
    char cmd[1024], out[8192];
    ck_assert_msg(system("command -v xmllint >/dev/null 2>&1") == 0,
                  "xmllint not found: install libxml2-utils (apt-get install libxml2-utils; "
                  ".ci/run installs it)");
    snprintf(cmd, sizeof cmd, "xmllint %s--noout '%s' 2>&1", html ? "--html " : "", path);
    int status = testprog_shell(cmd, out, sizeof out);
    ck_assert_msg(status == 0 && out[0] == '\0', "xmllint on %s: status %d\n%s", path, status, out);
}

/* The file contains s escaped for XML/HTML. */
static void assert_contains_escaped(const char *text, const char *s)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    ck_assert_ptr_nonnull(f);
    rs_xml_escape(f, s);
    fclose(f);
    ck_assert_msg(strstr(text, buf) != NULL, "'%s' (escaped '%s') missing", s, buf);
    free(buf);
}

static char tmp_dir[64];

static void make_tmp_dir(void)
{
    testdir_make(tmp_dir, "rs_align");
}


START_TEST(hard_links_by_argmax_and_threshold)
{
    rs_link *l;
    int n;
    rs_error err = {{0}};
    ck_assert(!rs_alignment_hard(tricky_w, 4, 5, 0.0f, &l, &n, &err));
    /* One link per target token, </s> row and column left out. */
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(l[0].src, 0);
    ck_assert_int_eq(l[0].tgt, 0);
    ck_assert_int_eq(l[1].src, 2);
    ck_assert_int_eq(l[1].tgt, 1);
    ck_assert_int_eq(l[2].src, 3);
    ck_assert_int_eq(l[2].tgt, 2);
    free(l);
    ck_assert(!rs_alignment_hard(tricky_w, 4, 5, 0.25f, &l, &n, &err));
    ck_assert_int_eq(n, 4); /* 0-0 2-1 1-2 3-2 */
    ck_assert_int_eq(l[2].src, 1);
    ck_assert_int_eq(l[2].tgt, 2);
    ck_assert_int_eq(l[3].src, 3);
    ck_assert_int_eq(l[3].tgt, 2);
    free(l);
    ck_assert(!rs_alignment_hard(tricky_w, 4, 5, 0.95f, &l, &n, &err));
    ck_assert_int_eq(n, 0);
    ck_assert_ptr_null(l);
}
END_TEST

START_TEST(pharaoh_output_parses_and_stays_in_range)
{
    rs_alignment a;
    make_tricky(&a);
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    ck_assert_int_eq(rs_alignment_write_pharaoh(f, &a, 0.0f), 0);
    ck_assert_int_eq(rs_alignment_write_pharaoh(f, &a, 0.25f), 0);
    fclose(f);
    ck_assert_str_eq(buf, "0-0 2-1 3-2\n0-0 2-1 1-2 3-2\n");
    /* Parse back: every token i-j with 0 <= i < 4 source and 0 <= j < 3 target tokens. */
    int links = 0;
    for (char *tok = strtok(buf, " \n"); tok; tok = strtok(NULL, " \n")) {
        int i, j, used;
        ck_assert_msg(sscanf(tok, "%d-%d%n", &i, &j, &used) == 2 && tok[used] == '\0',
                      "bad link '%s'", tok);
        ck_assert(i >= 0 && i < 4 && j >= 0 && j < 3);
        links++;
    }
    ck_assert_int_eq(links, 7);
    free(buf);
    rs_alignment_free(&a);
}
END_TEST

START_TEST(json_lines_parse_back)
{
    rs_alignment a;
    rs_error err = {{0}};
    make_tricky(&a);
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    ck_assert_int_eq(rs_alignment_write_json(f, &a, 7), 0);
    ck_assert_int_eq(rs_alignment_write_json(f, &a, 8), 0);
    fclose(f);
    /* JSON Lines: each line one JSON value. */
    char *line = buf;
    for (int rec = 0; rec < 2; rec++) {
        char *nl = strchr(line, '\n');
        ck_assert_ptr_nonnull(nl);
        rs_json *v = rs_json_parse(line, (size_t)(nl - line), &err);
        ck_assert_msg(v != NULL, "%s", err.msg);
        uint64_t id;
        ck_assert(!rs_json_to_u64(rs_json_get(v, "id"), &id));
        ck_assert_uint_eq(id, 7 + rec);
        const rs_json *src = rs_json_get(v, "source"), *tgt = rs_json_get(v, "target"),
                      *al = rs_json_get(v, "alignment");
        ck_assert(src && src->type == RS_JSON_ARRAY && src->count == 5);
        ck_assert(tgt && tgt->type == RS_JSON_ARRAY && tgt->count == 4);
        for (int j = 0; j < 5; j++)
            ck_assert_str_eq(src->items[j].string, a.src[j]);
        for (int i = 0; i < 4; i++)
            ck_assert_str_eq(tgt->items[i].string, a.tgt[i]);
        ck_assert(al && al->type == RS_JSON_ARRAY && al->count == 4);
        for (int i = 0; i < 4; i++) {
            ck_assert(al->items[i].type == RS_JSON_ARRAY && al->items[i].count == 5);
            for (int j = 0; j < 5; j++)
                ck_assert_float_eq((float)al->items[i].items[j].number, a.w[i * 5 + j]);
        }
        rs_json_free(v);
        line = nl + 1;
    }
    ck_assert_str_eq(line, "");
    free(buf);
    rs_alignment_free(&a);
}
END_TEST

START_TEST(tsv_and_text_hold_every_cell)
{
    rs_alignment a;
    make_tricky(&a);
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    ck_assert_int_eq(rs_alignment_write_tsv_header(f), 0);
    ck_assert_int_eq(rs_alignment_write_tsv(f, &a, 1), 0);
    fclose(f);
    int lines = 0;
    for (char *p = buf; *p; p++)
        lines += *p == '\n';
    ck_assert_int_eq(lines, 1 + 4 * 5);
    ck_assert_ptr_nonnull(strstr(buf, "1\t2\t'q'\t3\ta\\\\b\t0.450000\n"));
    free(buf);

    f = open_memstream(&buf, &size);
    ck_assert_int_eq(rs_alignment_write_text(f, &a, 0), 0);
    fclose(f);
    ck_assert_ptr_null(strchr(buf, '\x1b'));
    ck_assert_ptr_nonnull(strstr(buf, "x&amp;y \xE2\x96\x93\xE2\x96\x93")); /* 0.70 → ▓ */
    ck_assert_ptr_nonnull(strstr(buf, "\xE6\x97\xA5")); /* a column head, written downwards */
    free(buf);

    f = open_memstream(&buf, &size);
    ck_assert_int_eq(rs_alignment_write_text(f, &a, RS_ALIGN_NUMBERS | RS_ALIGN_COLOR), 0);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "\x1b[48;5;"));
    ck_assert_ptr_nonnull(strstr(buf, " 0.45"));
    free(buf);
    rs_alignment_free(&a);
}
END_TEST

START_TEST(svg_and_html_are_valid_and_escaped)
{
    rs_alignment a;
    make_tricky(&a);
    make_tmp_dir();
    char svg[128], html[128];
    snprintf(svg, sizeof svg, "%s/a.svg", tmp_dir);
    snprintf(html, sizeof html, "%s/a.html", tmp_dir);
    FILE *f = fopen(svg, "w");
    ck_assert_int_eq(rs_alignment_write_svg(f, &a, "title <&>"), 0);
    ck_assert_int_eq(fclose(f), 0);
    f = fopen(html, "w");
    ck_assert_int_eq(rs_alignment_html_begin(f, "page \"1\""), 0);
    ck_assert_int_eq(rs_alignment_write_html(f, &a, 1, 0), 0);
    ck_assert_int_eq(rs_alignment_write_html(f, &a, 2, RS_ALIGN_NUMBERS), 0);
    ck_assert_int_eq(rs_alignment_html_end(f), 0);
    ck_assert_int_eq(fclose(f), 0);
    assert_xmllint_accepts(svg, 0);
    assert_xmllint_accepts(html, 1);
    const char *paths[] = {svg, html};
    for (int k = 0; k < 2; k++) {
        char *text = slurp(paths[k]);
        for (int j = 0; j < a.cols; j++)
            assert_contains_escaped(text, a.src[j]);
        for (int i = 0; i < a.rows; i++)
            assert_contains_escaped(text, a.tgt[i]);
        ck_assert_ptr_null(strstr(text, "<b>"));
        ck_assert_ptr_nonnull(strstr(text, "0.450")); /* a weight in a tooltip */
        free(text);
    }
    testdir_remove(tmp_dir);
    rs_alignment_free(&a);
}
END_TEST

START_TEST(pictures_drop_word_joiners_but_data_keeps_them)
{
    rs_error err = {{0}};
    const char *src[] = {"a", "\xEF\xBF\xAD,"}, *tgt[] = {"\xEF\xBF\xAD-\xEF\xBF\xAD"};
    const float w[] = {0.5f, 0.25f, 0.25f, 0.0f, 0.0f, 1.0f};
    rs_alignment a;
    ck_assert(!rs_alignment_make(&a, tgt, 1, src, 2, w, &err));
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    rs_alignment_write_svg(f, &a, "t");
    fclose(f);
    ck_assert_ptr_null(strstr(buf, "\xEF\xBF\xAD"));
    ck_assert_ptr_nonnull(strstr(buf, ">-</text>"));
    free(buf);
    f = open_memstream(&buf, &size);
    rs_alignment_write_json(f, &a, 1);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "\"\xEF\xBF\xAD,\""));
    free(buf);
    rs_alignment_free(&a);
}
END_TEST

START_TEST(words_from_pieces_keep_rows_distributions)
{
    /* Source "▁new ▁york er ▁. </s>", target "▁a ▁b c </s>". */
    const char *src[] = {"\xE2\x96\x81new", "\xE2\x96\x81york", "er", "\xE2\x96\x81."};
    const char *tgt[] = {"\xE2\x96\x81"
                         "a",
                         "\xE2\x96\x81"
                         "b",
                         "c"};
    const float w[] = {
        0.4f, 0.2f, 0.2f, 0.1f, 0.1f, /* ▁a */
        0.0f, 0.5f, 0.5f, 0.0f, 0.0f, /* ▁b */
        0.1f, 0.1f, 0.6f, 0.1f, 0.1f, /* c */
        0.0f, 0.0f, 0.0f, 0.2f, 0.8f, /* </s> */
    };
    rs_alignment a, words;
    rs_error err = {{0}};
    ck_assert(!rs_alignment_make(&a, tgt, 3, src, 4, w, &err));
    ck_assert_msg(!rs_alignment_to_words(&a, &words, &err), "%s", err.msg);
    ck_assert_int_eq(words.rows, 3);
    ck_assert_int_eq(words.cols, 4);
    ck_assert_str_eq(words.src[0], "new");
    ck_assert_str_eq(words.src[1], "yorker");
    ck_assert_str_eq(words.src[2], ".");
    ck_assert_str_eq(words.src[3], "</s>");
    ck_assert_str_eq(words.tgt[0], "a");
    ck_assert_str_eq(words.tgt[1], "bc");
    ck_assert_str_eq(words.tgt[2], "</s>");
    /* Row "bc" = mean of rows ▁b and c, columns york+er summed. */
    ck_assert_float_eq_tol(words.w[1 * 4 + 0], 0.05f, 1e-6f);
    ck_assert_float_eq_tol(words.w[1 * 4 + 1], 0.85f, 1e-6f);
    ck_assert_float_eq_tol(words.w[0 * 4 + 1], 0.4f, 1e-6f);
    assert_rows_sum_to_one(words.w, words.rows, words.cols);
    rs_alignment_free(&words);
    rs_alignment_free(&a);

    /* A lone "▁" piece starts a word that the next pieces continue ("▁ 1 2" is
     * "12"), and keeps the mark when nothing follows. */
    const char *src2[] = {"\xE2\x96\x81", "1", "2", "\xE2\x96\x81"};
    ck_assert(!rs_alignment_make(&a, tgt, 3, src2, 4, w, &err));
    ck_assert_msg(!rs_alignment_to_words(&a, &words, &err), "%s", err.msg);
    ck_assert_int_eq(words.cols, 3);
    ck_assert_str_eq(words.src[0], "12");
    ck_assert_str_eq(words.src[1], "\xE2\x96\x81");
    ck_assert_float_eq_tol(words.w[0], 0.8f, 1e-6f);
    assert_rows_sum_to_one(words.w, words.rows, words.cols);
    rs_alignment_free(&words);
    rs_alignment_free(&a);
}
END_TEST

/* BPE units: a token ending with the mark continues into the next; rows of
 * a word are averaged and columns summed, as for SentencePiece pieces. */
START_TEST(bpe_units_merge_into_words)
{
    const char *src[] = {"new", "york@@", "er", "."};
    const char *tgt[] = {"a", "b@@", "c@@"}; /* a mark before </s> ends the word */
    const float w[] = {
        0.4f, 0.2f, 0.2f, 0.1f, 0.1f, /* a */
        0.0f, 0.5f, 0.5f, 0.0f, 0.0f, /* b@@ */
        0.1f, 0.1f, 0.6f, 0.1f, 0.1f, /* c@@ */
        0.0f, 0.0f, 0.0f, 0.2f, 0.8f, /* </s> */
    };
    rs_alignment a, words;
    rs_error err = {{0}};
    ck_assert(!rs_alignment_make(&a, tgt, 3, src, 4, w, &err));
    ck_assert_msg(!rs_alignment_join_bpe(&a, "@@ ", &words, &err), "%s", err.msg);
    ck_assert_int_eq(words.rows, 3);
    ck_assert_int_eq(words.cols, 4);
    ck_assert_str_eq(words.src[1], "yorker");
    ck_assert_str_eq(words.src[2], ".");
    ck_assert_str_eq(words.tgt[1], "bc");
    ck_assert_str_eq(words.tgt[2], "</s>");
    ck_assert_float_eq_tol(words.w[1 * 4 + 1], 0.85f, 1e-6f);
    assert_rows_sum_to_one(words.w, words.rows, words.cols);
    rs_alignment_free(&words);
    ck_assert_int_eq(rs_alignment_join_bpe(&a, "  ", &words, &err), -1);
    rs_alignment_free(&a);
}
END_TEST

START_TEST(marian_suffixes)
{
    rs_error err = {{0}};
    char *line = strdup("a b c");
    ck_assert(!rs_alignment_append_marian(&line, tricky_w, 4, 5, 0, 0.0f, &err));
    ck_assert_str_eq(line, "a b c ||| 0-0 2-1 3-2");
    free(line);
    line = strdup("x");
    const float w[] = {0.25f, 0.75f, 0.5f, 0.5f};
    ck_assert(!rs_alignment_append_marian(&line, w, 2, 2, 1, 0.0f, &err));
    ck_assert_str_eq(line, "x ||| 0.25,0.75 0.5,0.5");
    free(line);
}
END_TEST

/* ---- the commands, on a saved tiny model ---- */

START_TEST(align_translate_and_plot_commands)
{
    /* The input pipelines feed the program standard input. */
    const char *prog = testprog_path();
    rs_model m;
    rs_error err = {{0}};
    make_model(&m);
    make_tmp_dir();
    char ckpt[128], cmd[2048], path[256];
    static char out[1 << 16];
    snprintf(ckpt, sizeof ckpt, "%s/m.ckpt", tmp_dir);
    ck_assert_msg(!rs_checkpoint_save(ckpt, &m, NULL, &err), "%s", err.msg);
    rs_model_free(&m);
    const char *input =
        "printf 'das Haus\\n\\346\\227\\245\\346\\234\\254 x \\327\\251\\327\\234\\327\\225\\327\\235\\n'";

    /* JSON: one valid record per line, rows summing to 1. */
    snprintf(cmd, sizeof cmd, "%s | %s align -m %s -f json", input, prog, ckpt);
    ck_assert_int_eq(testprog_shell(cmd, out, sizeof out), 0);
    int records = 0;
    for (char *line = out, *nl; (nl = strchr(line, '\n')); line = nl + 1, records++) {
        rs_json *v = rs_json_parse(line, (size_t)(nl - line), &err);
        ck_assert_msg(v != NULL, "%s", err.msg);
        const rs_json *al = rs_json_get(v, "alignment"), *src = rs_json_get(v, "source");
        ck_assert_uint_eq(src->count, records == 0 ? 3 : 4);
        for (size_t i = 0; i < al->count; i++) {
            double sum = 0.0;
            ck_assert_uint_eq(al->items[i].count, src->count);
            for (size_t j = 0; j < al->items[i].count; j++)
                sum += al->items[i].items[j].number;
            ck_assert_msg(fabs(sum - 1.0) <= 1e-5, "row sums to %.8f", sum);
        }
        rs_json_free(v);
    }
    ck_assert_int_eq(records, 2);

    /* Pharaoh of a forced pair. */
    snprintf(cmd, sizeof cmd,
             "printf 'das Haus x\\tthe house\\n' | %s align -m %s --pairs -f pharaoh", prog, ckpt);
    ck_assert_int_eq(testprog_shell(cmd, out, sizeof out), 0);
    int i0, j0, i1, j1;
    ck_assert_msg(sscanf(out, "%d-%d %d-%d\n", &i0, &j0, &i1, &j1) == 4, "'%s'", out);
    ck_assert(i0 >= 0 && i0 < 3 && j0 == 0 && i1 >= 0 && i1 < 3 && j1 == 1);

    /* SVG: a directory of pictures, each valid; HTML: one valid page. */
    snprintf(cmd, sizeof cmd, "%s | %s align -m %s -f svg -o %s/svg 2>/dev/null", input, prog, ckpt,
             tmp_dir);
    ck_assert_int_eq(testprog_shell(cmd, out, sizeof out), 0);
    for (int k = 1; k <= 2; k++) {
        snprintf(path, sizeof path, "%s/svg/%04d.svg", tmp_dir, k);
        assert_xmllint_accepts(path, 0);
    }
    snprintf(path, sizeof path, "%s/a.html", tmp_dir);
    snprintf(cmd, sizeof cmd, "%s | %s align -m %s -f html --numbers -o %s", input, prog, ckpt,
             path);
    ck_assert_int_eq(testprog_shell(cmd, out, sizeof out), 0);
    assert_xmllint_accepts(path, 1);
    char *page = slurp(path);
    ck_assert_ptr_nonnull(strstr(page, "\xD7\xA9\xD7\x9C\xD7\x95\xD7\x9D"));
    free(page);

    /* Text: colour only when asked (stdout is a pipe here). */
    snprintf(cmd, sizeof cmd, "%s | %s align -m %s", input, prog, ckpt);
    ck_assert_int_eq(testprog_shell(cmd, out, sizeof out), 0);
    ck_assert_ptr_null(strchr(out, '\x1b'));
    snprintf(cmd, sizeof cmd, "%s | %s align -m %s --color always", input, prog, ckpt);
    ck_assert_int_eq(testprog_shell(cmd, out, sizeof out), 0);
    ck_assert_ptr_nonnull(strchr(out, '\x1b'));

    /* Bad usage. */
    snprintf(cmd, sizeof cmd, "%s | %s align -m %s -f svg 2>/dev/null", input, prog, ckpt);
    ck_assert_int_eq(testprog_shell(cmd, out, sizeof out), 2); /* two pictures need a directory */
    snprintf(cmd, sizeof cmd, "align -m %s -f bogus </dev/null 2>/dev/null", ckpt);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 2);
    ck_assert_int_eq(testprog_run("align </dev/null 2>/dev/null", out, sizeof out), 2);
    snprintf(cmd, sizeof cmd, "align -m %s --words </dev/null 2>/dev/null", ckpt);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 2); /* no subwords in this model */

    /* translate --alignment: Marian's suffix, hard and soft. */
    snprintf(cmd, sizeof cmd, "%s | %s translate -m %s --alignment", input, prog, ckpt);
    ck_assert_int_eq(testprog_shell(cmd, out, sizeof out), 0);
    for (char *line = out, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
        *nl = '\0';
        char *bar = strstr(line, " ||| ");
        ck_assert_msg(bar != NULL, "no alignment in '%s'", line);
        for (char *tok = strtok(bar + 5, " "); tok; tok = strtok(NULL, " ")) {
            int i, j;
            ck_assert_msg(sscanf(tok, "%d-%d", &i, &j) == 2 && i >= 0 && i < 3 && j >= 0, "'%s'",
                          tok);
        }
    }
    snprintf(cmd, sizeof cmd, "%s | %s translate -m %s --alignment=soft", input, prog, ckpt);
    ck_assert_int_eq(testprog_shell(cmd, out, sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, " ||| "));
    ck_assert_ptr_nonnull(strchr(out, ','));
    snprintf(cmd, sizeof cmd, "translate -m %s --alignment=2 </dev/null 2>/dev/null", ckpt);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 2);

    /* plot: a training log to a valid SVG (dev metric measured in one row only). */
    snprintf(path, sizeof path, "%s/run/train.log.tsv", tmp_dir);
    ck_assert(!rs_make_parent_dirs(path, &err));
    FILE *f = fopen(path, "w");
    fputs("step\tepoch\ttrain_loss\tdev_loss\tdev_metric\ttokens_per_s\tlr\twall_s\n"
          "100\t1\t3.5\t3.1\t-1.000000\t900.0\t0.002\t1.5\n"
          "200\t2\t1.2\tnan\t-1.000000\t910.0\t0.002\t3.0\n"
          "300\t3\t0.4\t0.6\t0.250000\t905.0\t0.002\t4.5\n",
          f);
    ck_assert_int_eq(fclose(f), 0);
    snprintf(cmd, sizeof cmd, "plot %s/run 2>/dev/null", tmp_dir);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 0);
    snprintf(path, sizeof path, "%s/run/train.svg", tmp_dir);
    assert_xmllint_accepts(path, 0);
    char *svg = slurp(path);
    ck_assert_ptr_nonnull(strstr(svg, "dev metric"));
    free(svg);
    snprintf(cmd, sizeof cmd, "plot %s/nothing-here 2>/dev/null", tmp_dir);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 1);
    testdir_remove(tmp_dir);
}
END_TEST

Suite *alignment_suite(void)
{
    Suite *s = suite_create("alignment");
    TCase *tc = tcase_create("alignment");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, greedy_alignment_rows_are_distributions);
    tcase_add_test(tc, forced_alignment_rows_are_distributions_and_batch_free);
    tcase_add_test(tc, hard_links_by_argmax_and_threshold);
    tcase_add_test(tc, pharaoh_output_parses_and_stays_in_range);
    tcase_add_test(tc, json_lines_parse_back);
    tcase_add_test(tc, tsv_and_text_hold_every_cell);
    tcase_add_test(tc, svg_and_html_are_valid_and_escaped);
    tcase_add_test(tc, pictures_drop_word_joiners_but_data_keeps_them);
    tcase_add_test(tc, words_from_pieces_keep_rows_distributions);
    tcase_add_test(tc, bpe_units_merge_into_words);
    tcase_add_test(tc, marian_suffixes);
    tcase_add_test(tc, align_translate_and_plot_commands);
    suite_add_tcase(s, tc);
    return s;
}
