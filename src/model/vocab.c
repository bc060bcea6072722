#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>


#include "model/params.h"
#include "model/vocab.h"
#include "text/corpus.h"

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

/* The white space no token holds: the tokenizers split at it, and a token
 * with a line end or a tab would break every line-aligned output. One rule
 * for a vocabulary file and a checkpoint's vocabulary, so that a file training
 * accepts never makes a checkpoint every reader refuses. Returns the offset
 * of the first such byte, or strlen(token). */
static size_t white_space_at(const char *token)
{
    return strcspn(token, " \t\n\r\v\f");
}

int rs_vocab_read_token(rs_vocab *vocab, int id, const char *token, rs_error *err)
{
    const size_t blank = white_space_at(token);
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
    long *lines;
    int cap;
} vocab_reader;

/* Records that token id came from line line_no. */
static int note_line(vocab_reader *r, int id, long line_no, rs_error *err)
{
    if (id >= r->cap) {
        const int cap = r->v->capacity > id ? r->v->capacity : id + 1;
        long *grown = realloc(r->lines, (size_t)cap * sizeof *grown);
        if (!grown)
            return rs_fail(err, "out of memory reading %s", r->path);
        memset(grown + r->cap, 0, (size_t)(cap - r->cap) * sizeof *grown);
        r->lines = grown;
        r->cap = cap;
    }
    r->lines[id] = line_no;
    return 0;
}

/* 1 when the line is a Marian YAML vocabulary's "TOKEN: ID" entry for a
 * reserved token ("</s>: 0", "<unk>: 1"), which every such file has: read as
 * OpenNMT's "token count" it would make "</s>:" a token. */
static int marian_entry(const char *token, const char *count)
{
    const size_t len = strlen(token);
    if (len < 2 || token[len - 1] != ':' || !count)
        return 0;
    for (int id = 0; id < RS_RESERVED; id++)
        if (strlen(reserved[id]) == len - 1 && !strncmp(token, reserved[id], len - 1))
            return 1;
    return 0;
}

/* One line of a vocabulary file (len bytes, NUL-terminated, its line end
 * gone; the line reader has refused NUL bytes and invalid UTF-8). */
static int read_vocab_line(vocab_reader *r, char *line, size_t len, long line_no, rs_error *err)
{
    const char *path = r->path;
    if (len == 0)
        return rs_fail(err, "%s:%ld: an empty line (a vocabulary has one token a line)", path,
                       line_no);
    const size_t token_len = strcspn(line, "\t ");
    if (token_len == 0)
        return rs_fail(err, "%s:%ld: the line starts with white space, not a token", path, line_no);
    const char *count = NULL;
    if (token_len < len) {
        /* "token<TAB>count" or "token count": the count is a whole number. */
        count = line + token_len + 1;
        if (!*count || strspn(count, "0123456789") != strlen(count))
            return rs_fail(err,
                           "%s:%ld: '%s' is not a token, nor a token then a tab or space and "
                           "a count",
                           path, line_no, line);
        line[token_len] = 0;
    }
    if (marian_entry(line, count))
        return rs_fail(err,
                       "%s:%ld: '%s %s' is a Marian YAML vocabulary's entry (TOKEN: ID); a "
                       "vocabulary file has one token a line, optionally a tab or space and a "
                       "count",
                       path, line_no, line, count);
    const size_t blank = white_space_at(line);
    if (line[blank])
        return rs_fail(err,
                       "%s:%ld: the token holds white space (byte 0x%02x at column %zu), which "
                       "no tokenizer makes",
                       path, line_no, (unsigned char)line[blank], blank + 1);
    const int before = r->v->size;
    const int id = rs_vocab_add(r->v, line, err); /* a reserved token keeps its own id */
    if (id < 0)
        return -1;
    if (id < before && (id >= RS_RESERVED || r->lines[id]))
        return rs_fail(err, "%s:%ld: token '%s' is given twice (first on line %ld)", path, line_no,
                       line, r->lines[id]);
    r->v->counts[id] = 0;
    return note_line(r, id, line_no, err);
}

int rs_vocab_read_file(rs_vocab *vocab, const char *path, rs_error *err)
{
    /* The reader of every text input: line ends \n, \r\n and a lone \r, a
     * byte order mark dropped, NUL bytes, invalid UTF-8 and overlong lines
     * refused by file and line, gzip decompressed. */
    rs_line_reader lr;
    if (rs_line_reader_open(&lr, path, err))
        return -1;
    vocab_reader r = {vocab, lr.name, NULL, 0};
    int status = rs_vocab_init(vocab, err);
    if (status == 0)
        status = note_line(&r, RS_RESERVED - 1, 0, err); /* reserved ids not yet seen: line 0 */
    while (status == 0) {
        char *line;
        size_t len;
        const int got = rs_line_reader_next(&lr, &line, &len, err);
        if (got <= 0) {
            status = got;
            break;
        }
        status = read_vocab_line(&r, line, len, lr.line, err);
    }
    if (status == 0 && vocab->size == RS_RESERVED)
        status =
            rs_fail(err, "%s: no token besides the reserved ones (an empty vocabulary)", lr.name);
    free(r.lines);
    rs_line_reader_close(&lr);
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
