#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/utf8.h"

#include "model/params.h"
#include "model/vocab.h"

static const char *const reserved[RS_RESERVED] = {"<pad>", "<unk>", "<s>", "</s>"};

static uint64_t hash_token(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

/* Slot index holding `token`, or the empty slot where it would go. */
static int find_slot(const rs_vocab *v, const char *token)
{
    int mask = v->nslots - 1;
    int i = (int)(hash_token(token) & (uint64_t)mask);
    while (v->slots[i] && strcmp(v->tokens[v->slots[i] - 1], token))
        i = (i + 1) & mask;
    return i;
}

static int grow(rs_vocab *v, rs_error *err)
{
    int capacity = v->capacity ? 2 * v->capacity : 64;
    char **tokens = realloc(v->tokens, (size_t)capacity * sizeof *tokens);
    if (!tokens)
        return rs_fail(err, "out of memory growing a vocabulary");
    v->tokens = tokens;
    long *counts = realloc(v->counts, (size_t)capacity * sizeof *counts);
    if (!counts)
        return rs_fail(err, "out of memory growing a vocabulary");
    v->counts = counts;
    v->capacity = capacity;
    /* Keep the index at most half full. */
    int nslots = 2 * capacity;
    int *slots = calloc((size_t)nslots, sizeof *slots);
    if (!slots)
        return rs_fail(err, "out of memory growing a vocabulary");
    free(v->slots);
    v->slots = slots;
    v->nslots = nslots;
    for (int id = 0; id < v->size; id++)
        v->slots[find_slot(v, v->tokens[id])] = id + 1;
    return 0;
}

int rs_vocab_init(rs_vocab *vocab, rs_error *err)
{
    memset(vocab, 0, sizeof *vocab);
    for (int i = 0; i < RS_RESERVED; i++)
        if (rs_vocab_add(vocab, reserved[i], err) < 0) {
            rs_vocab_free(vocab);
            return -1;
        }
    for (int i = 0; i < RS_RESERVED; i++)
        vocab->counts[i] = 0;
    return 0;
}

void rs_vocab_free(rs_vocab *vocab)
{
    for (int i = 0; i < vocab->size; i++)
        free(vocab->tokens[i]);
    free(vocab->tokens);
    free(vocab->counts);
    free(vocab->slots);
    memset(vocab, 0, sizeof *vocab);
}

int rs_vocab_add(rs_vocab *vocab, const char *token, rs_error *err)
{
    if (vocab->nslots) {
        int slot = find_slot(vocab, token);
        if (vocab->slots[slot]) {
            int id = vocab->slots[slot] - 1;
            vocab->counts[id]++;
            return id;
        }
    }
    if (vocab->size == vocab->capacity && grow(vocab, err))
        return -1;
    char *copy = strdup(token);
    if (!copy)
        return rs_fail(err, "out of memory adding a token");
    int id = vocab->size++;
    vocab->tokens[id] = copy;
    vocab->counts[id] = 1;
    vocab->slots[find_slot(vocab, token)] = id + 1;
    return id;
}

int rs_vocab_read_token(rs_vocab *vocab, int id, const char *token, rs_error *err)
{
    /* The tokenizers split at white space, so no token holds any: one that
     * did (a line end, a tab) would break every line-aligned output. */
    const size_t blank = strcspn(token, " \t\n\r\v\f");
    if (token[blank])
        return rs_fail(err,
                       "token %d holds white space (byte 0x%02x at %zu): no tokenizer makes "
                       "such a token",
                       id, (unsigned char)token[blank], blank);
    if (id < RS_RESERVED) {
        /* rs_vocab_init put the reserved tokens there already. */
        if (strcmp(token, vocab->tokens[id]))
            return rs_fail(err, "id %d is '%s', not the reserved '%s'", id, token,
                           vocab->tokens[id]);
    } else {
        int got = rs_vocab_add(vocab, token, err);
        if (got < 0)
            return -1;
        if (got != id)
            return rs_fail(err, "token '%s' appears twice (ids %d and %d)", token, got, id);
    }
    vocab->counts[id] = 0;
    return 0;
}

int rs_vocab_id(const rs_vocab *vocab, const char *token)
{
    if (!vocab->nslots)
        return RS_UNK;
    int slot = find_slot(vocab, token);
    return vocab->slots[slot] ? vocab->slots[slot] - 1 : RS_UNK;
}

static const rs_vocab *sort_source;

static int by_count_then_bytes(const void *pa, const void *pb)
{
    int a = *(const int *)pa, b = *(const int *)pb;
    long ca = sort_source->counts[a], cb = sort_source->counts[b];
    if (ca != cb)
        return ca > cb ? -1 : 1;
    return strcmp(sort_source->tokens[a], sort_source->tokens[b]);
}

int rs_vocab_select(rs_vocab *out, const rs_vocab *counted, int min_freq, int max_size,
                    rs_error *err)
{
    if (rs_vocab_init(out, err))
        return -1;
    int n = counted->size - RS_RESERVED;
    int *order = rs_calloc((size_t)(n > 0 ? n : 1), sizeof *order, err);
    if (!order) {
        rs_vocab_free(out);
        return -1;
    }
    for (int i = 0; i < n; i++)
        order[i] = RS_RESERVED + i;
    sort_source = counted;
    qsort(order, (size_t)n, sizeof *order, by_count_then_bytes);
    for (int i = 0; i < n; i++) {
        if (max_size > 0 && out->size >= max_size)
            break;
        if (counted->counts[order[i]] < min_freq)
            break;
        int id = rs_vocab_add(out, counted->tokens[order[i]], err);
        if (id < 0) {
            free(order);
            rs_vocab_free(out);
            return -1;
        }
        out->counts[id] = counted->counts[order[i]];
    }
    free(order);
    return 0;
}

const char *rs_vocab_reserved(int id)
{
    return id >= 0 && id < RS_RESERVED ? reserved[id] : NULL;
}

int rs_vocab_copy(rs_vocab *dst, const rs_vocab *src, rs_error *err)
{
    if (rs_vocab_init(dst, err))
        return -1;
    for (int id = RS_RESERVED; id < src->size; id++)
        if (rs_vocab_add(dst, src->tokens[id], err) < 0) {
            rs_vocab_free(dst);
            return -1;
        }
    for (int id = 0; id < src->size; id++)
        dst->counts[id] = src->counts[id];
    return 0;
}

/* A vocabulary file being read: the line each token came from, for the
 * message of a repeat (lines[id], grown with the vocabulary). */
typedef struct {
    rs_vocab *v;
    const char *path;
    int *lines, cap;
} vocab_reader;

/* Records that token id came from line line_no. */
static int note_line(vocab_reader *r, int id, int line_no, rs_error *err)
{
    if (id >= r->cap) {
        const int cap = r->v->capacity > id ? r->v->capacity : id + 1;
        int *grown = realloc(r->lines, (size_t)cap * sizeof *grown);
        if (!grown)
            return rs_fail(err, "out of memory reading %s", r->path);
        memset(grown + r->cap, 0, (size_t)(cap - r->cap) * sizeof *grown);
        r->lines = grown;
        r->cap = cap;
    }
    r->lines[id] = line_no;
    return 0;
}

/* One line of a vocabulary file (len bytes, NUL-terminated, its \n gone). */
static int read_vocab_line(vocab_reader *r, char *line, size_t len, int line_no, rs_error *err)
{
    const char *path = r->path;
    if (len > 0 && line[len - 1] == '\r')
        line[--len] = 0;
    if (len == 0)
        return rs_fail(err, "%s:%d: an empty line (a vocabulary has one token a line)", path,
                       line_no);
    if (memchr(line, 0, len))
        return rs_fail(err, "%s:%d: a NUL byte (a vocabulary is text)", path, line_no);
    const size_t bad = rs_utf8_invalid((const unsigned char *)line, len);
    if (bad < len)
        return rs_fail(err, "%s:%d: invalid UTF-8 (byte 0x%02x at column %zu)", path, line_no,
                       (unsigned char)line[bad], bad + 1);
    const size_t token_len = strcspn(line, "\t ");
    if (token_len == 0)
        return rs_fail(err, "%s:%d: the line starts with white space, not a token", path, line_no);
    if (token_len < len) {
        /* "token<TAB>count" or "token count": the count is a whole number. */
        const char *count = line + token_len + 1;
        if (!*count || strspn(count, "0123456789") != strlen(count))
            return rs_fail(err,
                           "%s:%d: '%s' is not a token, nor a token then a tab or space and "
                           "a count",
                           path, line_no, line);
        line[token_len] = 0;
    }
    const int before = r->v->size;
    const int id = rs_vocab_add(r->v, line, err); /* a reserved token keeps its own id */
    if (id < 0)
        return -1;
    if (id < before && (id >= RS_RESERVED || r->lines[id]))
        return rs_fail(err, "%s:%d: token '%s' is given twice (first on line %d)", path, line_no,
                       line, r->lines[id]);
    r->v->counts[id] = 0;
    return note_line(r, id, line_no, err);
}

int rs_vocab_read_file(rs_vocab *vocab, const char *path, rs_error *err)
{
    unsigned char *data;
    size_t size;
    if (rs_read_file(path, &data, &size, err))
        return -1;
    vocab_reader r = {vocab, path, NULL, 0};
    int status = rs_vocab_init(vocab, err), line_no = 0;
    if (status == 0)
        status = note_line(&r, RS_RESERVED - 1, 0, err); /* reserved ids not yet seen: line 0 */
    /* A UTF-8 byte order mark, as some editors write, is not part of the first token (read as
     * one, it would make "\xEF\xBB\xBF<pad>" a token and move every later id up by one). */
    size_t start = 0;
    if (size >= 3 && !memcmp(data, "\xEF\xBB\xBF", 3))
        start = 3;
    for (size_t at = start; at < size && status == 0;) {
        unsigned char *eol = memchr(data + at, '\n', size - at);
        const size_t len = eol ? (size_t)(eol - (data + at)) : size - at;
        data[at + len] = 0; /* the line end, or the NUL after the data */
        status = read_vocab_line(&r, (char *)data + at, len, ++line_no, err);
        at += len + 1;
    }
    if (status == 0 && vocab->size == RS_RESERVED)
        status = rs_fail(err, "%s: no token besides the reserved ones (an empty vocabulary)", path);
    free(r.lines);
    free(data);
    if (status)
        rs_vocab_free(vocab);
    return status;
}

void rs_vocab_write(const rs_vocab *vocab, FILE *out, int *errnum)
{
    *errnum = 0;
    for (int id = 0; id < vocab->size; id++)
        if (fprintf(out, "%s\n", vocab->tokens[id]) < 0 && !*errnum)
            *errnum = errno ? errno : -1;
}
