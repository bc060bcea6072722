/* The JSON reader and writer, and safetensors export/import: exact round
 * trips, the shared conformance model, and refusal of malformed files. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testdir.h"
#include "testskip.h"
#include "common/byteorder.h"
#include "common/json.h"
#include "model/checkpoint.h"
#include "model/safetensors.h"
#include "text/spm.h"
#include "tinymodel.h"

/* ---- JSON ---------------------------------------------------------------- */

static rs_json *parse_ok_len(const char *text, size_t len)
{
    rs_error err = {{0}};
    rs_json *v = rs_json_parse(text, len, &err);
    ck_assert_msg(v != NULL, "'%.*s' refused: %s", (int)len, text, err.msg);
    return v;
}

static rs_json *parse_ok(const char *text)
{
    return parse_ok_len(text, strlen(text));
}

START_TEST(test_json_values)
{
    rs_json *v = parse_ok(" {\"a\": [1, -2.5e1, 0, true, false, null, {}, []],\n"
                          "  \"s\": \"q\\\"b\\\\s\\/ \\b\\f\\n\\r\\t "
                          "\\u00e9 \\u20AC \\ud83d\\ude00\","
                          "  \"big\": 9007199254740992, \"x\": \"\xc3\xa4\"} ");
    ck_assert_int_eq(v->type, RS_JSON_OBJECT);
    ck_assert_uint_eq(v->count, 4);
    const rs_json *a = rs_json_get(v, "a");
    ck_assert_ptr_nonnull(a);
    ck_assert_int_eq(a->type, RS_JSON_ARRAY);
    ck_assert_uint_eq(a->count, 8);
    ck_assert(a->items[0].type == RS_JSON_NUMBER && a->items[0].number == 1.0);
    ck_assert(a->items[1].number == -25.0);
    ck_assert(a->items[3].type == RS_JSON_TRUE);
    ck_assert(a->items[4].type == RS_JSON_FALSE);
    ck_assert(a->items[5].type == RS_JSON_NULL);
    ck_assert(a->items[6].type == RS_JSON_OBJECT && a->items[6].count == 0);
    ck_assert(a->items[7].type == RS_JSON_ARRAY && a->items[7].count == 0);
    uint64_t u;
    ck_assert_int_eq(rs_json_to_u64(&a->items[0], &u), 0);
    ck_assert_uint_eq(u, 1);
    ck_assert_int_eq(rs_json_to_u64(&a->items[1], &u), -1); /* negative, not integral */
    ck_assert_int_eq(rs_json_to_u64(&a->items[3], &u), -1); /* not a number */
    ck_assert_int_eq(rs_json_to_u64(rs_json_get(v, "big"), &u), 0);
    ck_assert(u == 9007199254740992ULL);
    const rs_json *s = rs_json_get(v, "s");
    ck_assert_str_eq(s->string, "q\"b\\s/ \b\f\n\r\t \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    ck_assert_uint_eq(s->len, strlen(s->string));
    ck_assert_str_eq(rs_json_get(v, "x")->string, "\xc3\xa4");
    ck_assert_ptr_null(rs_json_get(v, "missing"));
    ck_assert_ptr_null(rs_json_get(a, "a")); /* not an object */
    rs_json_free(v);

    /* A scalar at the top level is JSON too; the text need not end in NUL. */
    rs_error err = {{0}};
    v = rs_json_parse("123456", 3, &err);
    ck_assert_ptr_nonnull(v);
    ck_assert(v->number == 123.0);
    rs_json_free(v);
}
END_TEST

START_TEST(test_json_malformed)
{
    static const char *const bad[] = {
        "",
        "   ",
        "{",
        "}",
        "[1,]",
        "[1 2]",
        "{\"a\":1,}",
        "{\"a\" 1}",
        "{a:1}",
        "{'a':1}",
        "01",
        "1.",
        ".5",
        "-",
        "1e",
        "+1",
        "\"abc",
        "\"\\x\"",
        "\"\\u12\"",
        "\"\\u12g4\"",
        "\"\\ud800\"",
        "\"\\udc00\"",
        "\"\\ud800\\u0041\"",
        "\"\\u0000\"",
        "nul",
        "truth",
        "[1] 2",
        "\"a\nb\"",
        "\"\xff\"",
        "\"\xc3\"",
        "\"\xc0\xaf\"",
        "\"\xed\xa0\x80\"",
        "{\"a\":1,\"a\":2}",
        "// c\n1",
        "[1,,2]",
        "NaN",
        "Infinity",
        "[\"a\"]]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        rs_error err = {{0}};
        rs_json *v = rs_json_parse(bad[i], strlen(bad[i]), &err);
        ck_assert_msg(v == NULL, "accepted malformed JSON #%zu: %s", i, bad[i]);
        ck_assert_msg(strncmp(err.msg, "JSON: ", 6) == 0, "no message for #%zu", i);
        rs_json_free(v);
    }
    /* Nesting beyond the limit is refused rather than overflowing the stack. */
    char deep[2 * RS_JSON_MAX_DEPTH + 10];
    size_t n = RS_JSON_MAX_DEPTH + 5;
    memset(deep, '[', n);
    memset(deep + n, ']', n);
    rs_error err = {{0}};
    ck_assert_ptr_null(rs_json_parse(deep, 2 * n, &err));
    ck_assert_msg(strstr(err.msg, "deep"), "%s", err.msg);
}
END_TEST

START_TEST(test_json_write_string)
{
    const char *s = "tab\there \"quoted\" back\\slash \x01\x1f\x7f nl\n \xc3\xa9\xf0\x9f\x98\x80";
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(rs_json_write_string(f, s), 0);
    fclose(f);
    ck_assert_str_eq(text, "\"tab\\there \\\"quoted\\\" back\\\\slash \\u0001\\u001f\\u007f nl\\n "
                           "\xc3\xa9\xf0\x9f\x98\x80\"");
    rs_json *v = parse_ok(text);
    ck_assert_str_eq(v->string, s);
    rs_json_free(v);
    free(text);
}
END_TEST

/* ---- safetensors ----------------------------------------------------------- */

/* A small SentencePiece model of `pieces` pieces, serialized. */
static void spm_model(int pieces, char **blob, size_t *len)
{
    static const char *const sentences[] = {
        "the cat sat on the mat",  "a dog ran to the park",  "the bird sang in a tree",
        "we eat bread and cheese", "she reads the old book", "they walk home at night",
    };
    rs_error err = {{0}};
    ck_assert_msg(!rs_spm_train(sentences, 6, pieces, "unigram", blob, len, &err), "%s", err.msg);
}

/* tied: out.W is tgt_emb (maxout = emb = 3). */
static void make_model_tied(rs_model *m, const char *attention, int with_spm, int tied)
{
    rs_config cfg;
    rs_error err = {{0}};
    rs_config_defaults(&cfg);
    cfg.model.src_vocab = 8;
    cfg.model.tgt_vocab = 6;
    cfg.model.emb = 3;
    cfg.model.hidden = 4;
    cfg.model.att = 5;
    cfg.model.maxout = tied ? 3 : 2;
    cfg.model.tie_embeddings = tied;
    cfg.model.lowercase = 1;
    cfg.model.subwords = with_spm ? 500 : 0;
    cfg.model.tokenizer = with_spm ? RS_TOKENIZER_SPM : RS_TOKENIZER_CHAR;
    ck_assert(rs_config_set(&cfg, "attention", attention, &err) == 0);
    ck_assert_msg(!rs_model_alloc(m, &cfg, &err), "%s", err.msg);
    ck_assert(!rs_vocab_init(&m->src_vocab, &err));
    ck_assert(!rs_vocab_init(&m->tgt_vocab, &err));
    /* Tokens that need escaping twice (inside the array, inside the string). */
    const char *src[] = {"\"", "a\\b", "\xc3\xa9t\xc3\xa9", "\xf0\x9f\x98\x80"};
    const char *tgt[] = {"x\\\"y", "\x01"}; /* JSON escapes: a quote, a control character */
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(rs_vocab_add(&m->src_vocab, src[i], &err), RS_RESERVED + i);
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(rs_vocab_add(&m->tgt_vocab, tgt[i], &err), RS_RESERVED + i);
    rs_rng rng;
    rs_rng_seed(&rng, 17);
    for (size_t k = 0; k < m->layout.total; k++)
        m->params[k] = (float)(2.0 * rs_rng_uniform(&rng) - 1.0);
    if (with_spm) {
        /* Real models (import loads them) whose base64 ends in '=' and '==':
         * 347 and 373 bytes, 2 and 1 past a multiple of 3. */
        spm_model(24, &m->spm_src, &m->spm_src_len);
        spm_model(26, &m->spm_tgt, &m->spm_tgt_len);
        ck_assert_uint_eq(m->spm_src_len % 3, 2);
        ck_assert_uint_eq(m->spm_tgt_len % 3, 1);
    }
}

static void make_model(rs_model *m, const char *attention, int with_spm)
{
    make_model_tied(m, attention, with_spm, 0);
}

static char tmp_dir[64];

static void make_tmp_dir(void)
{
    testdir_make(tmp_dir, "rs_st");
}

static void tmp_path(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", tmp_dir, name);
}

/* The tests put at most these files in tmp_dir. */
static void remove_tmp_dir(void)
{
    static const char *const names[] = {"a.safetensors", "b.safetensors", "bad.safetensors",
                                        "a.ckpt"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char path[256];
        tmp_path(path, sizeof path, names[i]);
        unlink(path);
    }
    ck_assert_int_eq(rmdir(tmp_dir), 0);
}

static uint64_t header_len(const unsigned char *data)
{
    uint64_t n = 0;
    for (int i = 0; i < 8; i++)
        n |= (uint64_t)data[i] << (8 * i);
    return n;
}

static void assert_same_weights(const rs_model *a, const rs_model *b)
{
    ck_assert_int_eq(a->cfg.src_vocab, b->cfg.src_vocab);
    ck_assert_int_eq(a->cfg.tgt_vocab, b->cfg.tgt_vocab);
    ck_assert_int_eq(a->cfg.emb, b->cfg.emb);
    ck_assert_int_eq(a->cfg.hidden, b->cfg.hidden);
    ck_assert_int_eq(a->cfg.maxout, b->cfg.maxout);
    ck_assert_int_eq(a->cfg.attention, b->cfg.attention);
    ck_assert_uint_eq(a->layout.total, b->layout.total);
    ck_assert(!memcmp(a->params, b->params, a->layout.total * sizeof(float)));
    const rs_vocab *va[2] = {&a->src_vocab, &a->tgt_vocab}, *vb[2] = {&b->src_vocab, &b->tgt_vocab};
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(va[k]->size, vb[k]->size);
        for (int i = 0; i < va[k]->size; i++)
            ck_assert_str_eq(va[k]->tokens[i], vb[k]->tokens[i]);
    }
}

/* Import must fail, leave the model zeroed, and say `what`. */
static void assert_import_fails(const char *path, const char *what)
{
    rs_model m;
    rs_error err = {{0}};
    ck_assert_int_eq(rs_safetensors_import(path, &m, &err), -1);
    ck_assert_msg(strstr(err.msg, what) != NULL, "expected '%s' in: %s", what, err.msg);
    ck_assert_msg(!strncmp(err.msg, path, strlen(path)), "message lacks the file: %s", err.msg);
    ck_assert_ptr_null(m.params);
    rs_model_free(&m);
}

START_TEST(test_round_trip)
{
    static const char *const kinds[] = {"additive", "general", "scaled-dot", "none"};
    static const char *const names[] = {"rnnsearch-default", "rnnsearch-general",
                                        "rnnsearch-scaled-dot", "rnnsearch-none"};
    make_tmp_dir();
    for (int k = 0; k < 4; k++) {
        rs_model m, back;
        rs_error err = {{0}};
        char path[256];
        make_model(&m, kinds[k], k == 0);
        tmp_path(path, sizeof path, "a.safetensors");
        ck_assert_msg(!rs_safetensors_export(path, &m, &err), "%s", err.msg);
        ck_assert_msg(!rs_safetensors_import(path, &back, &err), "%s", err.msg);
        assert_same_weights(&m, &back);
        if (k == 0)
            ck_assert_int_eq(back.cfg.att, m.cfg.att);
        ck_assert_int_eq(back.cfg.lowercase, 1);
        ck_assert_int_eq(back.cfg.tokenizer, m.cfg.tokenizer);
        ck_assert_int_eq(back.cfg.subwords, m.cfg.subwords);
        ck_assert_uint_eq(back.spm_src_len, m.spm_src_len);
        ck_assert_uint_eq(back.spm_tgt_len, m.spm_tgt_len);
        if (m.spm_src) {
            ck_assert(!memcmp(back.spm_src, m.spm_src, m.spm_src_len));
            ck_assert(!memcmp(back.spm_tgt, m.spm_tgt, m.spm_tgt_len));
        } else {
            ck_assert_ptr_null(back.spm_src);
        }

        /* The header: metadata as model.md wants, absent tensors left out, data aligned. */
        size_t size;
        unsigned char *data = testfile_read(path, &size);
        uint64_t hl = header_len(data);
        ck_assert_uint_eq((8 + hl) % 8, 0);
        ck_assert_uint_eq(size, 8 + hl + 4 * m.layout.total);
        rs_json *h = parse_ok_len((const char *)data + 8, hl);
        const rs_json *meta = rs_json_get(h, "__metadata__");
        ck_assert_str_eq(rs_json_get(meta, "n")->string, "4");
        ck_assert_str_eq(rs_json_get(meta, "m")->string, "3");
        ck_assert_str_eq(rs_json_get(meta, "a")->string, "5");
        ck_assert_str_eq(rs_json_get(meta, "l")->string, "2");
        ck_assert_str_eq(rs_json_get(meta, "normalization")->string, "NFC");
        ck_assert_str_eq(rs_json_get(meta, "attention")->string, kinds[k]);
        ck_assert_str_eq(rs_json_get(meta, "model")->string, names[k]);
        ck_assert_ptr_nonnull(rs_json_get(h, "src_emb"));
        ck_assert_int_eq(rs_json_get(h, "att.W") != NULL, k == 0);
        ck_assert_int_eq(rs_json_get(h, "att.K") != NULL, k == 1 || k == 2);
        ck_assert_int_eq(back.cfg.attention, rs_attention_kind_parse(kinds[k]));
        const rs_json *dec = rs_json_get(h, "dec.W");
        ck_assert_str_eq(rs_json_get(dec, "dtype")->string, "F32");
        const rs_json *shape = rs_json_get(dec, "shape");
        ck_assert_uint_eq(shape->count, 2);
        ck_assert(shape->items[0].number == 12 && shape->items[1].number == 3 + 8);
        ck_assert_uint_eq(rs_json_get(rs_json_get(h, "out.bw"), "shape")->count, 1);
        rs_json_free(h);
        free(data);
        rs_model_free(&back);
        rs_model_free(&m);
    }
    remove_tmp_dir();
}
END_TEST

/* Weights that are not numbers, and tokens with white space in them, are
 * refused on import, by safetensors and checkpoint alike (and a checkpoint
 * of them is not written) (found by an outside
 * attack: a NaN model translated everything to empty lines with exit 0, a
 * token with a line end added lines to the output). */
START_TEST(test_nonfinite_weights_and_blank_tokens_refused)
{
    make_tmp_dir();
    rs_model m, back;
    rs_error err = {{0}};
    char path[256], ckpt[256];
    make_model(&m, "additive", 0);
    tmp_path(path, sizeof path, "a.safetensors");
    tmp_path(ckpt, sizeof ckpt, "a.ckpt");
    const float bad[2] = {NAN, INFINITY};
    for (int k = 0; k < 2; k++) {
        const float keep = m.params[m.layout.total - 1];
        m.params[m.layout.total - 1] = bad[k];
        ck_assert_msg(!rs_safetensors_export(path, &m, &err), "%s", err.msg);
        assert_import_fails(path, k ? "holds an infinity at entry" : "holds NaN at entry");
        /* Nor is such a checkpoint written (test_hostile_weights.c
         * makes one by hand: its loading is refused too). */
        ck_assert_int_eq(rs_checkpoint_save(ckpt, &m, NULL, &err), -1);
        ck_assert_msg(strstr(err.msg, "cannot save: tensor") && strstr(err.msg, "finite"), "%s",
                      err.msg);
        m.params[m.layout.total - 1] = keep;
    }
    ck_assert_msg(!rs_safetensors_export(path, &m, &err), "%s", err.msg);
    ck_assert_msg(!rs_safetensors_import(path, &back, &err), "%s", err.msg);
    rs_model_free(&back);
    /* A token with a line end, written as a checkpoint would be read. */
    rs_vocab v;
    ck_assert(!rs_vocab_init(&v, &err));
    ck_assert_int_eq(rs_vocab_read_token(&v, RS_RESERVED, "X\nY", &err), -1);
    ck_assert_msg(strstr(err.msg, "white space"), "%s", err.msg);
    ck_assert_int_eq(rs_vocab_read_token(&v, RS_RESERVED, "a\tb", &err), -1);
    ck_assert_int_eq(rs_vocab_read_token(&v, RS_RESERVED, "ok", &err), 0);
    rs_vocab_free(&v);
    rs_model_free(&m);
    remove_tmp_dir();
}
END_TEST

/* A tied model exports as the untied model of model.md, out.W a copy of
 * tgt_emb; imported, it is untied and scores every pair as the tied one did. */
START_TEST(test_tied_model_exports_untied)
{
    make_tmp_dir();
    rs_model m, back;
    rs_error err = {{0}};
    char path[256];
    make_model_tied(&m, "additive", 0, 1);
    tmp_path(path, sizeof path, "a.safetensors");
    ck_assert_msg(!rs_safetensors_export(path, &m, &err), "%s", err.msg);
    ck_assert_msg(!rs_safetensors_import(path, &back, &err), "%s", err.msg);
    const size_t out_w = (size_t)m.cfg.tgt_vocab * m.cfg.maxout;
    size_t size;
    unsigned char *data = testfile_read(path, &size);
    uint64_t hl = header_len(data);
    ck_assert_uint_eq(size, 8 + hl + 4 * (m.layout.total + out_w));
    rs_json *h = parse_ok_len((const char *)data + 8, hl);
    ck_assert_str_eq(rs_json_get(rs_json_get(h, "__metadata__"), "model")->string,
                     "rnnsearch-default");
    const rs_json *shape = rs_json_get(rs_json_get(h, "out.W"), "shape");
    ck_assert(shape->items[0].number == 6 && shape->items[1].number == 3);
    rs_json_free(h);
    free(data);

    ck_assert_int_eq(back.cfg.tie_embeddings, 0);
    ck_assert_uint_eq(back.layout.total, m.layout.total + out_w);
    ck_assert_ptr_ne(back.w.out_W, back.w.tgt_emb);
    ck_assert(!memcmp(back.w.out_W, m.w.tgt_emb, sizeof(float) * out_w));
    for (int i = 0; i < RS_NUM_PARAMS; i++) {
        const rs_tensor_info *t = &m.layout.info[i];
        if (t->size)
            ck_assert_msg(!memcmp(back.params + back.layout.info[i].offset, m.params + t->offset,
                                  sizeof(float) * t->size),
                          "%s differs", t->name);
    }
    static const int src[] = {4, 5, 6, 7}, tgt[] = {5, 4, 4};
    for (int k = 1; k <= 3; k++) {
        double tied = tiny_forced_logprob(&m, src, k + 1, tgt, k, NULL);
        ck_assert(isfinite(tied));
        ck_assert_double_eq_tol(tiny_forced_logprob(&back, src, k + 1, tgt, k, NULL), tied,
                                1e-6 * fabs(tied));
    }
    rs_model_free(&back);
    rs_model_free(&m);
    remove_tmp_dir();
}
END_TEST

/* ../shared, or $RNNSEARCH_SHARED; NULL (after saying so) when absent. */
static const char *conformance_file(char *path, size_t size)
{
    const char *shared = getenv("RNNSEARCH_SHARED");
    snprintf(path, size, "%s/conformance/random.safetensors", shared ? shared : "../shared");
    if (access(path, R_OK)) {
        char why[1200];
        snprintf(why, sizeof why, "safetensors: %s/conformance not found (set RNNSEARCH_SHARED)",
                 shared ? shared : "../shared");
        test_skip(why);
        return NULL;
    }
    return path;
}

START_TEST(test_conformance_model)
{
    char path[4096];
    if (!conformance_file(path, sizeof path))
        return;
    rs_model m;
    rs_error err = {{0}};
    ck_assert_msg(!rs_safetensors_import(path, &m, &err), "%s", err.msg);
    ck_assert_int_eq(m.src_vocab.size, 20);
    ck_assert_int_eq(m.tgt_vocab.size, 17);
    ck_assert_int_eq(m.cfg.src_vocab, 20);
    ck_assert_int_eq(m.cfg.tgt_vocab, 17);
    ck_assert_int_eq(m.cfg.hidden, 8);
    ck_assert_int_eq(m.cfg.emb, 6);
    ck_assert_int_eq(m.cfg.att, 7);
    ck_assert_int_eq(m.cfg.maxout, 5);
    ck_assert_int_eq(m.cfg.attention, RS_ATT_ADDITIVE);
    ck_assert_int_eq(m.cfg.tokenizer, RS_TOKENIZER_WORD);
    ck_assert_str_eq(m.src_vocab.tokens[4], "w4");
    ck_assert_str_eq(m.tgt_vocab.tokens[16], "t16");
    ck_assert_int_eq(rs_vocab_id(&m.src_vocab, "w19"), 19);

    /* Re-exported, the data is byte for byte the original's (same tensor order). */
    char out[256];
    make_tmp_dir();
    tmp_path(out, sizeof out, "a.safetensors");
    ck_assert_msg(!rs_safetensors_export(out, &m, &err), "%s", err.msg);
    size_t size_a, size_b;
    unsigned char *a = testfile_read(path, &size_a), *b = testfile_read(out, &size_b);
    uint64_t ha = header_len(a), hb = header_len(b);
    ck_assert_uint_eq(size_a - 8 - ha, size_b - 8 - hb);
    ck_assert(!memcmp(a + 8 + ha, b + 8 + hb, size_a - 8 - ha));
    free(a);
    free(b);
    remove_tmp_dir();
    rs_model_free(&m);
}
END_TEST

/* Exports a small model to bad.safetensors and replaces the first `from` in
 * its header by `to` (same length), or truncates it to `keep` bytes if from is NULL. */
static void damaged_file(char *path, size_t size, const char *from, const char *to, size_t keep)
{
    rs_model m;
    rs_error err = {{0}};
    make_model(&m, "additive", 0);
    tmp_path(path, size, "bad.safetensors");
    ck_assert_msg(!rs_safetensors_export(path, &m, &err), "%s", err.msg);
    rs_model_free(&m);
    size_t n;
    unsigned char *data = testfile_read(path, &n);
    if (from) {
        size_t k = strlen(from);
        ck_assert_uint_eq(k, strlen(to));
        char *hit = NULL;
        for (size_t i = 8; i + k <= 8 + header_len(data) && !hit; i++)
            if (!memcmp(data + i, from, k))
                hit = (char *)data + i;
        ck_assert_msg(hit != NULL, "'%s' not in the header", from);
        memcpy(hit, to, k);
        testfile_write(path, data, n);
    } else {
        testfile_write(path, data, keep < n ? keep : n);
    }
    free(data);
}

START_TEST(test_refused)
{
    char path[256];
    make_tmp_dir();
    /* Malformed JSON header. */
    damaged_file(path, sizeof path, "{\"__metadata__\":{", "[\"__metadata__\":{", 0);
    assert_import_fails(path, "bad header");
    damaged_file(path, sizeof path, "\"F32\",\"shape\"", "\"F32\",,shape\"", 0);
    assert_import_fails(path, "bad header");
    /* Wrong shape, dtype, names and offsets. */
    damaged_file(path, sizeof path, "\"shape\":[8,3]", "\"shape\":[3,8]", 0);
    assert_import_fails(path, "wrong shape");
    damaged_file(path, sizeof path, "\"shape\":[12]", "\"shape\":[13]", 0);
    assert_import_fails(path, "wrong shape");
    damaged_file(path, sizeof path, "\"dtype\":\"F32\"", "\"dtype\":\"F16\"", 0);
    assert_import_fails(path, "dtype F16");
    damaged_file(path, sizeof path, "\"out.bw\"", "\"out.bx\"", 0);
    assert_import_fails(path, "unknown tensor 'out.bx'");
    damaged_file(path, sizeof path, "\"att.v\"", "\"att.K\"", 0);
    assert_import_fails(path, "not part of a model");
    damaged_file(path, sizeof path, "\"data_offsets\":[0,", "\"data_offsets\":[4,", 0);
    assert_import_fails(path, "data bytes");
    /* Sizes and vocabularies. */
    damaged_file(path, sizeof path, "\"n\":\"4\"", "\"n\":\"3\"", 0);
    assert_import_fails(path, "wrong shape");
    /* Sizes asking for more than the file holds: refused before allocating. */
    damaged_file(path, sizeof path, "\"n\":\"4\"", "\"n\":\"9\"", 0);
    assert_import_fails(path, "the tensors of the sizes in __metadata__ need");
    damaged_file(path, sizeof path, "\"m\":\"3\"", "\"m\":\"x\"", 0);
    assert_import_fails(path, "not a size");
    damaged_file(path, sizeof path, "<unk>", "<UNK>", 0);
    assert_import_fails(path, "reserved");
    damaged_file(path, sizeof path, "\"model\":\"rnnsearch-default\"",
                 "\"model\":\"rnnsearch-defaulx\"", 0);
    assert_import_fails(path, "unknown model");
    /* Truncated data, truncated header, too short for a length. */
    damaged_file(path, sizeof path, NULL, NULL, 200);
    assert_import_fails(path, "truncated");
    rs_model m;
    rs_error err = {{0}};
    make_model(&m, "additive", 0);
    tmp_path(path, sizeof path, "bad.safetensors");
    ck_assert(!rs_safetensors_export(path, &m, &err));
    size_t n;
    unsigned char *data = testfile_read(path, &n);
    testfile_write(path, data, n - 4);
    assert_import_fails(path, "need");
    testfile_write(path, data, 5);
    assert_import_fails(path, "truncated");
    free(data);
    rs_model_free(&m);
    remove_tmp_dir();
}
END_TEST

/* Replaces the first `from` in the header of path by `to` (any length),
 * rewriting the header length; the data stays as it was. */
static void rewrite_header(const char *path, const char *from, const char *to)
{
    size_t n;
    unsigned char *data = testfile_read(path, &n);
    uint64_t hl = header_len(data);
    size_t k = strlen(from), t = strlen(to);
    char *hit = NULL;
    for (size_t i = 8; i + k <= 8 + hl && !hit; i++)
        if (!memcmp(data + i, from, k))
            hit = (char *)data + i;
    ck_assert_msg(hit != NULL, "'%s' not in the header", from);
    size_t at = (size_t)((unsigned char *)hit - data);
    size_t out_size = n - k + t;
    unsigned char *out = malloc(out_size);
    ck_assert_ptr_nonnull(out);
    memcpy(out, data, at);
    memcpy(out + at, to, t);
    memcpy(out + at + t, data + at + k, n - at - k);
    rs_put_le64(out, hl - k + t);
    testfile_write(path, out, out_size);
    free(out);
    free(data);
}

/* The data_offsets text of tensor `name` in the header, e.g. "[888,936]". */
static void offsets_of(const char *path, const char *name, char *out, size_t size)
{
    size_t n;
    unsigned char *data = testfile_read(path, &n);
    rs_json *h = parse_ok_len((const char *)data + 8, header_len(data));
    const rs_json *o = rs_json_get(rs_json_get(h, name), "data_offsets");
    ck_assert_ptr_nonnull(o);
    snprintf(out, size, "[%.0f,%.0f]", o->items[0].number, o->items[1].number);
    rs_json_free(h);
    free(data);
}

START_TEST(test_layout_of_the_data)
{
    char path[256], a[64], b[64], from[128], to[128];
    size_t n;
    make_tmp_dir();
    /* A header length one byte short: a header of JSON and one padding space
     * whose length field leaves the space out, so the JSON parses and every
     * tensor would be read a byte off. */
    damaged_file(path, sizeof path, NULL, NULL, (size_t)-1);
    unsigned char *data = testfile_read(path, &n);
    uint64_t hl = header_len(data);
    unsigned char *padded = malloc(n + 1);
    ck_assert_ptr_nonnull(padded);
    memcpy(padded, data, 8 + hl);
    padded[8 + hl] = ' ';
    memcpy(padded + 8 + hl + 1, data + 8 + hl, n - 8 - hl);
    testfile_write(path, padded, n + 1);
    assert_import_fails(path, "1 bytes after the last tensor");
    rs_put_le64(padded, hl + 1); /* the right length */
    testfile_write(path, padded, n + 1);
    rs_model m;
    rs_error err = {{0}};
    ck_assert_msg(!rs_safetensors_import(path, &m, &err), "%s", err.msg);
    rs_model_free(&m);
    rs_put_le64(padded, hl + 2); /* one byte long */
    testfile_write(path, padded, n + 1);
    assert_import_fails(path, "");
    free(padded);
    /* Trailing bytes after the last tensor. */
    unsigned char *longer = calloc(n + 4, 1);
    ck_assert_ptr_nonnull(longer);
    memcpy(longer, data, n);
    testfile_write(path, longer, n + 4);
    assert_import_fails(path, "4 bytes after the last tensor");
    free(longer);
    free(data);
    /* Two tensors of one size sharing bytes: an overlap (and a gap). */
    damaged_file(path, sizeof path, NULL, NULL, (size_t)-1);
    offsets_of(path, "enc_fwd.b", a, sizeof a);
    offsets_of(path, "enc_bwd.b", b, sizeof b);
    snprintf(from, sizeof from,
             "\"enc_bwd.b\":{\"dtype\":\"F32\",\"shape\":[12],\"data_offsets\":%s", b);
    snprintf(to, sizeof to, "\"enc_bwd.b\":{\"dtype\":\"F32\",\"shape\":[12],\"data_offsets\":%s",
             a);
    rewrite_header(path, from, to);
    assert_import_fails(path, "overlap");
    /* Two tensors exchanging places is fine: the ranges still tile the data. */
    damaged_file(path, sizeof path, NULL, NULL, (size_t)-1);
    offsets_of(path, "enc_fwd.b", a, sizeof a);
    offsets_of(path, "enc_bwd.b", b, sizeof b);
    snprintf(from, sizeof from, "\"data_offsets\":%s", a);
    snprintf(to, sizeof to, "\"data_offsets\":%s", b);
    char from2[128], to2[128];
    snprintf(from2, sizeof from2, "\"shape\":[12],\"data_offsets\":%s", b);
    snprintf(to2, sizeof to2, "\"shape\":[12],\"data_offsets\":X%s", a);
    rewrite_header(path, from2, to2); /* enc_bwd.b -> a, marked to keep it apart */
    rewrite_header(path, from, to);   /* enc_fwd.b -> b */
    rewrite_header(path, "X[", "[");
    ck_assert_msg(!rs_safetensors_import(path, &m, &err), "%s", err.msg);
    rs_model_free(&m);
    /* A header that is not an object from its first byte. */
    damaged_file(path, sizeof path, NULL, NULL, (size_t)-1);
    rewrite_header(path, "{\"__metadata__\"", " {\"__metadata__\"");
    assert_import_fails(path, "begin with '{'");
    remove_tmp_dir();
}
END_TEST

/* With tokenizer spm, both SentencePiece models must be there and load. */
START_TEST(test_sentencepiece_blobs)
{
    char path[256];
    rs_model m;
    rs_error err = {{0}};
    make_tmp_dir();
    tmp_path(path, sizeof path, "bad.safetensors");
    make_model(&m, "additive", 1);
    ck_assert_msg(!rs_safetensors_export(path, &m, &err), "%s", err.msg);
    rewrite_header(path, "\"spm_tgt\":", "\"spm_xxx\":");
    assert_import_fails(path, "SentencePiece");
    /* Valid base64, not a model: a protobuf cannot start with field 0. */
    ck_assert_msg(!rs_safetensors_export(path, &m, &err), "%s", err.msg);
    rewrite_header(path, "\"spm_src\":\"", "\"spm_src\":\"AAAA");
    assert_import_fails(path, "sentencepiece");
    /* Unknown tokenizer. */
    ck_assert_msg(!rs_safetensors_export(path, &m, &err), "%s", err.msg);
    rewrite_header(path, "\"tokenizer\":\"spm\"", "\"tokenizer\":\"bpe\"");
    assert_import_fails(path, "unsupported tokenizer 'bpe'");
    rs_model_free(&m);
    remove_tmp_dir();
}
END_TEST

Suite *safetensors_suite(void)
{
    Suite *s = suite_create("safetensors");
    TCase *tc = tcase_create("safetensors");
    tcase_add_test(tc, test_json_values);
    tcase_add_test(tc, test_json_malformed);
    tcase_add_test(tc, test_json_write_string);
    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_nonfinite_weights_and_blank_tokens_refused);
    tcase_add_test(tc, test_conformance_model);
    tcase_add_test(tc, test_tied_model_exports_untied);
    tcase_add_test(tc, test_refused);
    tcase_add_test(tc, test_layout_of_the_data);
    tcase_add_test(tc, test_sentencepiece_blobs);
    suite_add_tcase(s, tc);
    return s;
}
