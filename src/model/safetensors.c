/* safetensors export and import of a model; the format is in safetensors.h. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/byteorder.h"
#include "model/codec.h"
#include "common/fileio.h"
#include "common/json.h"
#include "model/safetensors.h"

#define MAX_HEADER (100u << 20) /* bytes; as the reference implementation limits it */

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* ---- export -------------------------------------------------------------- */

/* Standard base64 with '=' padding (RFC 4648 section 4). */
static void write_base64(FILE *out, const unsigned char *p, size_t len)
{
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < len)
            v |= p[i + 2];
        putc(b64_alphabet[(v >> 18) & 63], out);
        putc(b64_alphabet[(v >> 12) & 63], out);
        putc(i + 1 < len ? b64_alphabet[(v >> 6) & 63] : '=', out);
        putc(i + 2 < len ? b64_alphabet[v & 63] : '=', out);
    }
}

/* The tokens as a JSON array, then that text as one JSON string. */
static int write_vocab_string(FILE *out, const rs_vocab *v, rs_error *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem)
        return rs_fail(err, "out of memory");
    putc('[', mem);
    for (int i = 0; i < v->size; i++) {
        if (i)
            fputs(", ", mem);
        rs_json_write_string(mem, v->tokens[i]);
    }
    putc(']', mem);
    int bad = ferror(mem);
    if (fclose(mem) || bad) {
        free(text);
        return rs_fail(err, "out of memory");
    }
    rs_json_write_string(out, text);
    free(text);
    return 0;
}

static void write_meta(FILE *out, const char *key, const char *value)
{
    fputs(",\n  ", out);
    rs_json_write_string(out, key);
    putc(':', out);
    rs_json_write_string(out, value);
}

static void write_meta_int(FILE *out, const char *key, int value)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%d", value);
    write_meta(out, key, buf);
}

/* How raw text becomes token ids, for another program (docs/tokenization.md). */
static const char *text_pipeline(const rs_model_config *cfg)
{
    if (cfg->tokenizer == RS_TOKENIZER_SPM)
        return "utf8 -> NFC -> whitespace runs to one space, trimmed -> lowercase if "
               "lowercase=true -> SentencePiece encode (spm_src/spm_tgt, base64 model "
               "protos) -> pieces looked up in src_vocab/tgt_vocab, unknown -> <unk> "
               "(id 1) -> </s> (id 3) appended";
    if (cfg->tokenizer == RS_TOKENIZER_SPACE)
        return "utf8 (no NFC) -> lowercase each code point if lowercase=true -> "
               "split at runs of Unicode white space -> tokens looked up in "
               "src_vocab/tgt_vocab, unknown -> <unk> (id 1) -> </s> (id 3) appended";
    return "utf8 -> NFC -> whitespace runs to one space, trimmed -> lowercase if "
           "lowercase=true -> rnnsearch word/char tokenizer "
           "(docs/tokenization.md) -> tokens looked up in src_vocab/tgt_vocab, "
           "unknown -> <unk> (id 1) -> </s> (id 3) appended";
}

/* The "__metadata__" object: vocabularies, sizes, names, the text pipeline
 * and the SentencePiece models. */
static int write_metadata(FILE *h, const rs_model *model, rs_error *err)
{
    const rs_model_config *cfg = &model->cfg;
    fputs("{\"__metadata__\":{\n  \"src_vocab\":", h);
    if (write_vocab_string(h, &model->src_vocab, err))
        return -1;
    fputs(",\n  \"tgt_vocab\":", h);
    if (write_vocab_string(h, &model->tgt_vocab, err))
        return -1;
    write_meta_int(h, "n", cfg->hidden);
    write_meta_int(h, "m", cfg->emb);
    write_meta_int(h, "a", cfg->att);
    write_meta_int(h, "l", cfg->maxout);
    char name[RS_STR_MAX + 16];
    if (model->cfg.attention == RS_ATT_ADDITIVE)
        snprintf(name, sizeof name, "rnnsearch-default");
    else
        snprintf(name, sizeof name, "rnnsearch-%s", rs_attention_kind_name(model->cfg.attention));
    write_meta(h, "model", name);
    write_meta(h, "attention", rs_attention_kind_name(model->cfg.attention));
    write_meta(h, "lowercase", cfg->lowercase ? "true" : "false");
    write_meta(h, "tokenizer", rs_tokenizer_names[cfg->tokenizer]);
    write_meta_int(h, "subwords", cfg->subwords);
    write_meta(h, "normalization", cfg->tokenizer == RS_TOKENIZER_SPACE ? "none" : "NFC");
    write_meta(h, "text_pipeline", text_pipeline(cfg));
    write_meta(h, "post_process", rs_post_process_names[cfg->post_process]);
    const char *spm_keys[2] = {"spm_src", "spm_tgt"};
    const char *spm[2] = {model->spm_src, model->spm_tgt};
    size_t spm_len[2] = {model->spm_src_len, model->spm_tgt_len};
    for (int k = 0; k < 2; k++)
        if (spm[k]) {
            fprintf(h, ",\n  \"%s\":\"", spm_keys[k]);
            write_base64(h, (const unsigned char *)spm[k], spm_len[k]);
            putc('"', h);
        }
    fputs("}", h);
    return 0;
}

/* Each tensor's entry: dtype, shape and byte range in the data. A shared
 * tensor (out.W of a tied model) is written as a copy of the one it shares,
 * under its own name: the file is the untied model of model.md. */
static void write_tensor_index(FILE *h, const rs_model *model)
{
    size_t offset = 0;
    for (int i = 0; i < RS_NUM_PARAMS; i++) {
        const rs_tensor_info *t = rs_tensor_storage(&model->layout, i);
        if (!t)
            continue;
        fputs(",\n", h);
        rs_json_write_string(h, model->layout.info[i].name);
        if (t->cols)
            fprintf(h, ":{\"dtype\":\"F32\",\"shape\":[%d,%d]", t->rows, t->cols);
        else
            fprintf(h, ":{\"dtype\":\"F32\",\"shape\":[%d]", t->rows);
        fprintf(h, ",\"data_offsets\":[%zu,%zu]}", offset, offset + 4 * t->size);
        offset += 4 * t->size;
    }
    fputs("}", h);
}

static int build_header(const rs_model *model, char **text, size_t *len, rs_error *err)
{
    FILE *h = open_memstream(text, len);
    if (!h)
        return rs_fail(err, "out of memory");
    if (write_metadata(h, model, err)) {
        fclose(h);
        free(*text);
        return -1;
    }
    write_tensor_index(h, model);
    /* Spaces after the JSON so that the data starts 8-byte aligned. */
    long pos = ftell(h);
    while (pos >= 0 && pos % 8) {
        putc(' ', h);
        pos++;
    }
    int bad = ferror(h) || pos < 0;
    if (fclose(h) || bad) {
        free(*text);
        return rs_fail(err, "out of memory building the safetensors header");
    }
    return 0;
}

int rs_safetensors_export(const char *path, const rs_model *model, rs_error *err)
{
    if (model->src_vocab.size != model->cfg.src_vocab ||
        model->tgt_vocab.size != model->cfg.tgt_vocab)
        return rs_fail(err,
                       "cannot export: vocabularies hold %d and %d tokens, the config says "
                       "%d and %d",
                       model->src_vocab.size, model->tgt_vocab.size, model->cfg.src_vocab,
                       model->cfg.tgt_vocab);
    char *header = NULL;
    size_t header_len = 0;
    if (build_header(model, &header, &header_len, err))
        return -1;
    rs_atomic_file af;
    if (rs_atomic_open(&af, path, err)) {
        free(header);
        return -1;
    }
    unsigned char len_bytes[8];
    rs_put_le64(len_bytes, header_len);
    errno = 0;
    if (fwrite(len_bytes, 1, 8, af.f) != 8 || fwrite(header, 1, header_len, af.f) != header_len)
        af.errnum = errno ? errno : -1;
    free(header);
    unsigned char chunk[4 * 4096];
    for (int i = 0; i < RS_NUM_PARAMS && !af.errnum; i++) {
        const rs_tensor_info *t = rs_tensor_storage(&model->layout, i);
        for (size_t done = 0; t && done < t->size && !af.errnum;) {
            size_t k = t->size - done < 4096 ? t->size - done : 4096;
            rs_f32_to_le(chunk, model->params + t->offset + done, k);
            errno = 0;
            if (fwrite(chunk, 1, 4 * k, af.f) != 4 * k)
                af.errnum = errno ? errno : -1;
            done += k;
        }
    }
    return rs_atomic_commit(&af, err);
}

/* ---- import -------------------------------------------------------------- */

/* A metadata string, NULL when absent; -1 when present but not a string. */
static int meta_get(const rs_json *meta, const char *key, const char **out, const char *path,
                    rs_error *err)
{
    const rs_json *v = rs_json_get(meta, key);
    *out = NULL;
    if (!v)
        return 0;
    if (v->type != RS_JSON_STRING)
        return rs_fail(err, "%s: __metadata__ value '%s' is a %s, not a string", path, key,
                       rs_json_type_name(v->type));
    *out = v->string;
    return 0;
}

static int meta_size(const rs_json *meta, const char *key, int required, int *out, const char *path,
                     rs_error *err)
{
    const char *s;
    if (meta_get(meta, key, &s, path, err))
        return -1;
    if (!s) {
        if (required)
            return rs_fail(err, "%s: __metadata__ has no '%s'", path, key);
        return 0;
    }
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 0 || v > (1L << 24))
        return rs_fail(err, "%s: __metadata__ '%s' is '%s', not a size", path, key, s);
    *out = (int)v;
    return 0;
}

static int b64_value(int c)
{
    const char *p = c ? strchr(b64_alphabet, c) : NULL;
    return p ? (int)(p - b64_alphabet) : -1;
}

static int decode_base64(const char *s, char **out, size_t *out_len, const char *what,
                         const char *path, rs_error *err)
{
    size_t len = strlen(s);
    if (len % 4)
        return rs_fail(err, "%s: %s is not base64 (length %zu)", path, what, len);
    char *buf = rs_calloc(len / 4 * 3 + 1, 1, err);
    if (!buf)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < len; i += 4) {
        int v[4], pad = 0;
        for (int k = 0; k < 4; k++) {
            /* '=' only as the last one or two characters of the text. */
            if (s[i + k] == '=' && i + 4 == len && k >= 2 && (k == 3 || s[i + 3] == '=')) {
                v[k] = 0;
                pad++;
            } else if ((v[k] = b64_value((unsigned char)s[i + k])) < 0) {
                free(buf);
                return rs_fail(err, "%s: %s is not base64 (character %zu)", path, what, i + k);
            }
        }
        uint32_t bits =
            (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        buf[n++] = (char)(bits >> 16);
        if (pad < 2)
            buf[n++] = (char)(bits >> 8);
        if (pad < 1)
            buf[n++] = (char)bits;
    }
    *out = buf;
    *out_len = n;
    return 0;
}

/* Parses a vocabulary metadata string (a JSON array of strings) into v. */
static int import_vocab(const rs_json *meta, const char *key, rs_vocab *v, const char *path,
                        rs_error *err)
{
    const char *s;
    if (meta_get(meta, key, &s, path, err))
        return -1;
    if (!s)
        return rs_fail(err, "%s: __metadata__ has no '%s'", path, key);
    rs_error inner;
    rs_json *arr = rs_json_parse(s, strlen(s), &inner);
    if (!arr)
        return rs_fail(err, "%s: __metadata__ '%s': %s", path, key, inner.msg);
    if (arr->type != RS_JSON_ARRAY) {
        rs_fail(err, "%s: __metadata__ '%s' is a %s, not an array", path, key,
                rs_json_type_name(arr->type));
        goto fail;
    }
    if (arr->count < RS_RESERVED || arr->count > RS_MAX_VOCAB) {
        rs_fail(err, "%s: '%s' has %zu tokens", path, key, arr->count);
        goto fail;
    }
    if (rs_vocab_init(v, err))
        goto fail;
    for (size_t i = 0; i < arr->count; i++) {
        const rs_json *t = &arr->items[i];
        if (t->type != RS_JSON_STRING || t->len == 0) {
            rs_fail(err, "%s: '%s' entry %zu is not a non-empty string", path, key, i);
            goto fail;
        }
        if (rs_vocab_read_token(v, (int)i, t->string, &inner)) {
            rs_fail(err, "%s: '%s' %s", path, key, inner.msg);
            goto fail;
        }
    }
    rs_json_free(arr);
    return 0;
fail:
    rs_json_free(arr);
    rs_vocab_free(v);
    return -1;
}

/* Sizes, attention and text settings from the metadata, onto defaults. */
static int import_config(const rs_json *meta, rs_config *cfg, const char *path, rs_error *err)
{
    rs_config_defaults(cfg);
    if (meta_size(meta, "n", 1, &cfg->model.hidden, path, err) ||
        meta_size(meta, "m", 1, &cfg->model.emb, path, err) ||
        meta_size(meta, "l", 1, &cfg->model.maxout, path, err))
        return -1;

    const char *model, *attention;
    if (meta_get(meta, "model", &model, path, err) ||
        meta_get(meta, "attention", &attention, path, err))
        return -1;
    int kind = RS_ATT_ADDITIVE;
    if (model) {
        const char *prefix = "rnnsearch-";
        size_t plen = strlen(prefix);
        if (!strcmp(model, "rnnsearch-default"))
            kind = RS_ATT_ADDITIVE;
        else if (!strncmp(model, prefix, plen) && rs_attention_kind_parse(model + plen) >= 0)
            kind = rs_attention_kind_parse(model + plen);
        else
            return rs_fail(err,
                           "%s: unknown model '%s' (rnnsearch-default or rnnsearch-"
                           "ATTENTION expected)",
                           path, model);
    }
    if (attention) {
        int k = rs_attention_kind_parse(attention);
        if (k < 0)
            return rs_fail(err, "%s: unknown attention '%s'", path, attention);
        if (model && k != kind)
            return rs_fail(err, "%s: model '%s' contradicts attention '%s'", path, model,
                           attention);
        kind = k;
    }
    cfg->model.attention = kind;
    /* a only matters to additive attention; other kinds may leave it out. */
    if (meta_size(meta, "a", kind == RS_ATT_ADDITIVE, &cfg->model.att, path, err))
        return -1;

    const char *lowercase, *tokenizer, *tokenization, *post;
    if (meta_get(meta, "post_process", &post, path, err))
        return -1;
    if (post && (cfg->model.post_process = rs_config_name_index(rs_post_process_names, post)) < 0)
        return rs_fail(err, "%s: unknown post_process '%s' (none, bpe, sentencepiece or joiner)",
                       path, post);
    if (meta_get(meta, "lowercase", &lowercase, path, err) ||
        meta_get(meta, "tokenizer", &tokenizer, path, err) ||
        meta_get(meta, "tokenization", &tokenization, path, err) ||
        meta_size(meta, "subwords", 0, &cfg->model.subwords, path, err))
        return -1;
    if (lowercase) {
        if (!strcmp(lowercase, "true") || !strcmp(lowercase, "1") || !strcmp(lowercase, "yes"))
            cfg->model.lowercase = 1;
        else if (!strcmp(lowercase, "false") || !strcmp(lowercase, "0") || !strcmp(lowercase, "no"))
            cfg->model.lowercase = 0;
        else
            return rs_fail(err, "%s: __metadata__ 'lowercase' is '%s', not true or false", path,
                           lowercase);
    }
    if (!tokenizer)
        tokenizer = tokenization;
    if (tokenizer) {
        /* Tokens split at whitespace are what our word tokenizer yields. */
        if (!strcmp(tokenizer, "whitespace"))
            tokenizer = "word";
        if ((cfg->model.tokenizer = rs_config_name_index(rs_tokenizer_names, tokenizer)) < 0)
            return rs_fail(err, "%s: unsupported tokenizer '%s' (word, char, spm or space)", path,
                           tokenizer);
    }
    return 0;
}

typedef struct {
    uint64_t begin, end; /* data_offsets */
    const char *name;
} byte_range;

static int by_begin(const void *a, const void *b)
{
    const byte_range *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* The format wants the tensors' byte ranges to tile the data section: no
 * gap, no overlap, nothing after the last (so no bytes hide in the file). */
static int check_tiling(byte_range *ranges, int count, size_t data_size, const char *path,
                        rs_error *err)
{
    qsort(ranges, (size_t)count, sizeof *ranges, by_begin);
    uint64_t at = 0;
    for (int k = 0; k < count; k++) {
        if (ranges[k].begin < at)
            return rs_fail(err, "%s: tensor '%s' data_offsets [%llu, %llu] overlap tensor '%s'",
                           path, ranges[k].name, (unsigned long long)ranges[k].begin,
                           (unsigned long long)ranges[k].end, ranges[k - 1].name);
        if (ranges[k].begin > at)
            return rs_fail(err,
                           "%s: %llu bytes of the data section before tensor '%s' belong "
                           "to no tensor",
                           path, (unsigned long long)(ranges[k].begin - at), ranges[k].name);
        at = ranges[k].end;
    }
    if (at != data_size)
        return rs_fail(err,
                       "%s: %llu bytes after the last tensor's data (the header length or "
                       "the data_offsets are wrong)",
                       path, (unsigned long long)(data_size - at));
    return 0;
}

/* Checks one header entry against the layout and copies its data; *range
 * receives its byte range. */
static int import_tensor(const char *name, const rs_json *desc, rs_model *m,
                         const unsigned char *data, size_t data_size, byte_range *range,
                         const char *path, rs_error *err)
{
    int i = rs_param_index(name);
    if (i < 0)
        return rs_fail(err, "%s: unknown tensor '%s'", path, name);
    const rs_tensor_info *t = &m->layout.info[i];
    if (!t->size)
        return rs_fail(err, "%s: tensor '%s' is not part of a model with attention '%s'", path,
                       name, rs_attention_names[m->cfg.attention]);
    if (desc->type != RS_JSON_OBJECT)
        return rs_fail(err, "%s: entry '%s' is not an object", path, name);
    const rs_json *dtype = rs_json_get(desc, "dtype");
    const rs_json *shape = rs_json_get(desc, "shape");
    const rs_json *offsets = rs_json_get(desc, "data_offsets");
    if (!dtype || dtype->type != RS_JSON_STRING)
        return rs_fail(err, "%s: tensor '%s' has no dtype", path, name);
    if (strcmp(dtype->string, "F32"))
        return rs_fail(err, "%s: tensor '%s' has dtype %s; only F32 is supported", path, name,
                       dtype->string);
    if (!shape || shape->type != RS_JSON_ARRAY)
        return rs_fail(err, "%s: tensor '%s' has no shape", path, name);
    size_t want_dims = t->cols ? 2 : 1;
    uint64_t dims[2] = {0, 0};
    int shape_ok = shape->count == want_dims;
    for (size_t k = 0; shape_ok && k < want_dims; k++)
        shape_ok = !rs_json_to_u64(&shape->items[k], &dims[k]);
    if (!shape_ok || dims[0] != (uint64_t)t->rows || (t->cols && dims[1] != (uint64_t)t->cols)) {
        char want[64];
        if (t->cols)
            snprintf(want, sizeof want, "[%d, %d]", t->rows, t->cols);
        else
            snprintf(want, sizeof want, "[%d]", t->rows);
        return rs_fail(err,
                       "%s: tensor '%s' has the wrong shape: the sizes in __metadata__ "
                       "need %s",
                       path, name, want);
    }
    uint64_t begin, end;
    if (!offsets || offsets->type != RS_JSON_ARRAY || offsets->count != 2 ||
        rs_json_to_u64(&offsets->items[0], &begin) || rs_json_to_u64(&offsets->items[1], &end))
        return rs_fail(err, "%s: tensor '%s' has no valid data_offsets", path, name);
    if (begin > end || end > data_size)
        return rs_fail(err,
                       "%s: tensor '%s' data_offsets [%llu, %llu] lie outside the %zu "
                       "data bytes",
                       path, name, (unsigned long long)begin, (unsigned long long)end, data_size);
    if (end - begin != 4 * (uint64_t)t->size)
        return rs_fail(err, "%s: tensor '%s' has %llu data bytes, its shape needs %zu", path, name,
                       (unsigned long long)(end - begin), 4 * t->size);
    rs_f32_from_le(m->params + t->offset, data + begin, t->size);
    *range = (byte_range){begin, end, t->name};
    return 0;
}

int rs_safetensors_import(const char *path, rs_model *model, rs_error *err)
{
    memset(model, 0, sizeof *model);
    unsigned char *file;
    size_t size;
    if (rs_read_file(path, &file, &size, err))
        return -1;
    int rc = rs_safetensors_parse(path, file, size, model, err);
    free(file);
    return rc;
}

/* The header of a safetensors file: its 8-byte length, then a JSON object
 * with a __metadata__ object. Returns the parsed header (*header_len set) or
 * NULL with err set. */
static rs_json *parse_header(const char *path, const unsigned char *file, size_t size,
                             uint64_t *header_len, rs_error *err)
{
    if (size < 8) {
        rs_fail(err, "%s: truncated: %zu bytes, less than the 8-byte header length", path, size);
        return NULL;
    }
    *header_len = rs_get_le64(file);
    if (*header_len > size - 8) {
        rs_fail(err, "%s: truncated or not safetensors: header length %llu, file %zu bytes", path,
                (unsigned long long)*header_len, size);
        return NULL;
    }
    if (*header_len > MAX_HEADER) {
        rs_fail(err, "%s: header of %llu bytes is too large", path,
                (unsigned long long)*header_len);
        return NULL;
    }
    /* The format: the header begins with '{' and may end in spaces only. */
    if (*header_len == 0 || file[8] != '{') {
        rs_fail(err, "%s: bad header: it does not begin with '{'", path);
        return NULL;
    }
    rs_error inner;
    rs_json *header = rs_json_parse((const char *)file + 8, (size_t)*header_len, &inner);
    if (!header) {
        rs_fail(err, "%s: bad header: %s", path, inner.msg);
        return NULL;
    }
    const rs_json *meta = NULL;
    if (header->type != RS_JSON_OBJECT)
        rs_fail(err, "%s: the header is a JSON %s, not an object", path,
                rs_json_type_name(header->type));
    else if (!(meta = rs_json_get(header, "__metadata__")) || meta->type != RS_JSON_OBJECT)
        rs_fail(err, "%s: the header has no __metadata__ object (vocabularies and sizes)", path);
    if (!meta || meta->type != RS_JSON_OBJECT) {
        rs_json_free(header);
        return NULL;
    }
    return header;
}

/* The model the metadata describes: configuration, vocabularies (which give
 * Vs and Vt), the parameter buffer, SentencePiece models; checked to make a
 * codec. data_bytes, the size of the data section, must hold the tensors
 * before their buffer is allocated: a small file cannot ask for gigabytes. */
static int model_from_metadata(const rs_json *meta, size_t data_bytes, const char *path,
                               rs_model *m, rs_error *err)
{
    rs_config cfg;
    if (import_config(meta, &cfg, path, err))
        return -1;
    rs_vocab src, tgt;
    memset(&src, 0, sizeof src);
    memset(&tgt, 0, sizeof tgt);
    if (import_vocab(meta, "src_vocab", &src, path, err))
        return -1;
    if (import_vocab(meta, "tgt_vocab", &tgt, path, err)) {
        rs_vocab_free(&src);
        return -1;
    }
    cfg.model.src_vocab = src.size;
    cfg.model.tgt_vocab = tgt.size;
    rs_layout layout;
    int bad = rs_layout_init(&layout, &cfg.model, err);
    if (!bad && data_bytes / 4 < layout.total)
        bad = rs_fail(err,
                      "%s: the data section is %zu bytes; the tensors of the sizes in "
                      "__metadata__ need %zu",
                      path, data_bytes, 4 * layout.total);
    if (bad || rs_model_alloc(m, &cfg, err)) {
        rs_vocab_free(&src);
        rs_vocab_free(&tgt);
        return -1;
    }
    m->src_vocab = src;
    m->tgt_vocab = tgt;
    const char *spm_keys[2] = {"spm_src", "spm_tgt"};
    char **spm[2] = {&m->spm_src, &m->spm_tgt};
    size_t *spm_len[2] = {&m->spm_src_len, &m->spm_tgt_len};
    for (int k = 0; k < 2; k++) {
        const char *s;
        if (meta_get(meta, spm_keys[k], &s, path, err))
            return -1;
        if (s && decode_base64(s, spm[k], spm_len[k], spm_keys[k], path, err))
            return -1;
    }
    /* Text settings that cannot make a codec (SentencePiece models missing or
     * unloadable when the tokenizer is spm) are refused here. */
    rs_codec codec;
    if (rs_codec_for_model(&codec, m, err))
        return -1;
    rs_codec_free(&codec);
    return 0;
}

/* Every tensor of the header into m's parameters: each name known and given
 * once, none missing, and together tiling the data section exactly. */
static int import_tensors(const rs_json *header, const unsigned char *data, size_t data_size,
                          const char *path, rs_model *m, rs_error *err)
{
    int seen[RS_NUM_PARAMS] = {0};
    byte_range ranges[RS_NUM_PARAMS];
    int range_count = 0;
    for (size_t k = 0; k < header->count; k++) {
        const char *name = header->keys[k];
        if (!strcmp(name, "__metadata__"))
            continue;
        if (import_tensor(name, &header->items[k], m, data, data_size, &ranges[range_count], path,
                          err))
            return -1;
        /* import_tensor refused unknown names; the JSON reader, repeated keys. */
        seen[rs_param_index(name)] = 1;
        range_count++;
    }
    for (int i = 0; i < RS_NUM_PARAMS; i++)
        if (m->layout.info[i].size && !seen[i])
            return rs_fail(err, "%s: tensor '%s' is missing", path, m->layout.info[i].name);
    return check_tiling(ranges, range_count, data_size, path, err);
}

int rs_safetensors_parse(const char *path, const unsigned char *file, size_t size, rs_model *model,
                         rs_error *err)
{
    memset(model, 0, sizeof *model);
    rs_model m;
    memset(&m, 0, sizeof m);
    uint64_t header_len = 0;
    rs_json *header = parse_header(path, file, size, &header_len, err);
    if (!header)
        goto fail;
    const unsigned char *data = file + 8 + header_len;
    const size_t data_size = size - 8 - (size_t)header_len;
    if (model_from_metadata(rs_json_get(header, "__metadata__"), data_size, path, &m, err) ||
        import_tensors(header, data, data_size, path, &m, err) ||
        rs_params_check_bounded(&m.layout, m.params, err))
        goto fail;
    rs_json_free(header);
    *model = m;
    return 0;
fail:
    rs_error_name_file(err, path);
    rs_json_free(header);
    rs_model_free(&m);
    return -1;
}
