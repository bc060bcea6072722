/* A vocabulary: tokens and their ids (the reserved four first) in a hash
 * table, with counts, and the selection of a training vocabulary from them.
 * Its files are read and written by vocab_file.c. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* The white space no token holds: the tokenizers split at it, and a token
 * with a line end or a tab would break every line-aligned output. One rule
 * for a vocabulary file and a checkpoint's vocabulary, so that a file training
 * accepts never makes a checkpoint every reader refuses. Returns the offset
 * of the first such byte, or strlen(token). */
size_t rs_vocab_white_space_at(const char *token)
{
    return strcspn(token, " \t\n\r\v\f");
}

int rs_vocab_read_token(rs_vocab *vocab, int id, const char *token, rs_error *err)
{
    const size_t blank = rs_vocab_white_space_at(token);
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
