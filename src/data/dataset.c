#include <stdlib.h>
#include <string.h>

#include "data/dataset.h"

int rs_tokenize_pairs(rs_tokenized *out, const rs_pairs *pairs, const rs_codec *codec,
                      const char *name, rs_error *err)
{
    memset(out, 0, sizeof *out);
    out->src = rs_calloc((size_t)pairs->count, sizeof(rs_tokens), err);
    out->tgt = rs_calloc((size_t)pairs->count, sizeof(rs_tokens), err);
    if (!out->src || !out->tgt) {
        rs_tokenized_free(out);
        return -1;
    }
    out->count = pairs->count;
    out->first = pairs->first;
    for (int i = 0; i < pairs->count; i++) {
        rs_error inner;
        if (rs_codec_tokens(codec, RS_SIDE_SRC, pairs->src[i], &out->src[i], &inner) ||
            rs_codec_tokens(codec, RS_SIDE_TGT, pairs->tgt[i], &out->tgt[i], &inner)) {
            rs_fail(err, "%s: pair %ld: %s", name, pairs->first + i + 1, inner.msg);
            rs_tokenized_free(out);
            return -1;
        }
    }
    return 0;
}

void rs_tokenized_free(rs_tokenized *t)
{
    for (int i = 0; i < t->count; i++) {
        rs_tokens_free(&t->src[i]);
        rs_tokens_free(&t->tgt[i]);
    }
    free(t->src);
    free(t->tgt);
    memset(t, 0, sizeof *t);
}

int rs_count_tokens(rs_vocab *counts, const rs_tokenized *t, int side, rs_error *err)
{
    for (int i = 0; i < t->count; i++) {
        const rs_tokens *s = side == RS_SIDE_SRC ? &t->src[i] : &t->tgt[i];
        for (int k = 0; k < s->count; k++)
            if (rs_vocab_add(counts, s->tokens[k], err) < 0)
                return -1;
    }
    return 0;
}

static int *map_ids(const rs_tokens *s, const rs_vocab *vocab, rs_error *err)
{
    int *ids = rs_calloc((size_t)(s->count ? s->count : 1), sizeof(int), err);
    if (ids)
        for (int k = 0; k < s->count; k++)
            ids[k] = rs_vocab_id(vocab, s->tokens[k]);
    return ids;
}

int rs_dataset_build(rs_dataset *out, const rs_tokenized *t, const rs_vocab *src_vocab,
                     const rs_vocab *tgt_vocab, int max_len, int *skipped, rs_error *err)
{
    memset(out, 0, sizeof *out);
    size_t n = (size_t)(t->count ? t->count : 1);
    out->src = rs_calloc(n, sizeof(int *), err);
    out->tgt = rs_calloc(n, sizeof(int *), err);
    out->src_len = rs_calloc(n, sizeof(int), err);
    out->tgt_len = rs_calloc(n, sizeof(int), err);
    out->line = rs_calloc(n, sizeof(int), err);
    if (!out->src || !out->tgt || !out->src_len || !out->tgt_len || !out->line) {
        rs_dataset_free(out);
        return -1;
    }
    int dropped = 0;
    for (int i = 0; i < t->count; i++) {
        if (max_len > 0 && (t->src[i].count > max_len || t->tgt[i].count > max_len)) {
            dropped++;
            continue;
        }
        int k = out->count;
        out->src[k] = map_ids(&t->src[i], src_vocab, err);
        out->tgt[k] = map_ids(&t->tgt[i], tgt_vocab, err);
        out->count++;
        if (!out->src[k] || !out->tgt[k]) {
            rs_dataset_free(out);
            return -1;
        }
        out->src_len[k] = t->src[i].count;
        out->tgt_len[k] = t->tgt[i].count;
        out->line[k] = i;
    }
    if (skipped)
        *skipped = dropped;
    return 0;
}

void rs_dataset_unknowns(const rs_dataset *d, int side, long *unk, long *tokens)
{
    *unk = 0, *tokens = 0;
    for (int i = 0; d && i < d->count; i++) {
        const int *ids = side ? d->tgt[i] : d->src[i];
        const int len = side ? d->tgt_len[i] : d->src_len[i];
        for (int k = 0; k < len; k++)
            *unk += ids[k] == RS_UNK;
        *tokens += len;
    }
}

void rs_dataset_free(rs_dataset *d)
{
    for (int i = 0; i < d->count; i++) {
        free(d->src[i]);
        free(d->tgt[i]);
    }
    free(d->src);
    free(d->tgt);
    free(d->src_len);
    free(d->tgt_len);
    free(d->line);
    memset(d, 0, sizeof *d);
}

static int compare_keys(const void *pa, const void *pb)
{
    long long a = *(const long long *)pa, b = *(const long long *)pb;
    return (a > b) - (a < b);
}

static void shuffle(int *x, int count, rs_rng *rng)
{
    for (int i = count - 1; i > 0; i--) {
        int j = (int)rs_rng_below(rng, (uint64_t)i + 1);
        int tmp = x[i];
        x[i] = x[j];
        x[j] = tmp;
    }
}

static int plan_alloc(rs_epoch_plan *plan, int count, int batch_size, rs_error *err)
{
    memset(plan, 0, sizeof *plan);
    if (batch_size < 1)
        return rs_fail(err, "batch size must be at least 1");
    plan->count = count;
    plan->batches = (count + batch_size - 1) / batch_size;
    plan->order = rs_calloc((size_t)(count ? count : 1), sizeof(int), err);
    plan->start = rs_calloc((size_t)plan->batches + 1, sizeof(int), err);
    if (!plan->order || !plan->start) {
        rs_epoch_plan_free(plan);
        return -1;
    }
    for (int i = 0; i < count; i++)
        plan->order[i] = i;
    for (int k = 0; k <= plan->batches; k++)
        plan->start[k] = k * batch_size < count ? k * batch_size : count;
    return 0;
}

int rs_sequential_plan(rs_epoch_plan *plan, int count, int batch_size, rs_error *err)
{
    return plan_alloc(plan, count, batch_size, err);
}

/* Batch boundaries in the sorted order into cut[0 .. n] (cut[0] = 0,
 * cut[n] = count); returns n. */
static int cut_batches(const rs_dataset *d, const int *sorted, int count, int batch_size,
                       int batch_tokens, int *cut)
{
    int n = 0, size = 0;
    long longest = 0;
    cut[0] = 0;
    for (int p = 0; p < count; p++) {
        long len = d->tgt_len[sorted[p]] + 1;
        long grown = len > longest ? len : longest;
        if (size > 0 &&
            (size == batch_size || (batch_tokens > 0 && (size + 1) * grown > batch_tokens))) {
            cut[++n] = p;
            size = 0;
            grown = len;
        }
        size++;
        longest = grown;
    }
    if (count > 0)
        cut[++n] = count;
    return n;
}

int rs_epoch_plan_make(rs_epoch_plan *plan, const rs_dataset *d, int batch_size, int batch_tokens,
                       rs_rng *rng, rs_error *err)
{
    if (plan_alloc(plan, d->count, batch_size, err))
        return -1;
    const int count = d->count;
    long long *keys = rs_calloc((size_t)(count ? count : 1), sizeof(long long), err);
    int *sorted = rs_calloc((size_t)(count ? count : 1), sizeof(int), err);
    int *batch_order = rs_calloc((size_t)count + 1, sizeof(int), err);
    int *cut = rs_calloc((size_t)count + 1, sizeof(int), err);
    int *start = rs_calloc((size_t)count + 1, sizeof(int), err);
    if (!keys || !sorted || !batch_order || !cut || !start) {
        free(keys);
        free(sorted);
        free(batch_order);
        free(cut);
        free(start);
        rs_epoch_plan_free(plan);
        return -1;
    }
    /* Shuffle, then sort by (source length, target length, shuffled position):
     * the keys are unique, so equal lengths stay in their random order. */
    shuffle(plan->order, count, rng);
    const long long field = 1LL << 21;
    for (int p = 0; p < count; p++) {
        int i = plan->order[p];
        long long sl = d->src_len[i] < field ? d->src_len[i] : field - 1;
        long long tl = d->tgt_len[i] < field ? d->tgt_len[i] : field - 1;
        keys[p] = (sl << 42) | (tl << 21) | p;
    }
    qsort(keys, (size_t)count, sizeof *keys, compare_keys);
    for (int p = 0; p < count; p++)
        sorted[p] = plan->order[keys[p] & (field - 1)];
    /* Cut into batches and visit the batches in random order. */
    plan->batches = cut_batches(d, sorted, count, batch_size, batch_tokens, cut);
    free(plan->start);
    plan->start = start;
    for (int k = 0; k < plan->batches; k++)
        batch_order[k] = k;
    shuffle(batch_order, plan->batches, rng);
    int at = 0;
    for (int k = 0; k < plan->batches; k++) {
        plan->start[k] = at;
        for (int p = cut[batch_order[k]]; p < cut[batch_order[k] + 1]; p++)
            plan->order[at++] = sorted[p];
    }
    plan->start[plan->batches] = at;
    free(keys);
    free(sorted);
    free(batch_order);
    free(cut);
    return 0;
}

void rs_epoch_plan_free(rs_epoch_plan *plan)
{
    free(plan->order);
    free(plan->start);
    memset(plan, 0, sizeof *plan);
}

int rs_batch_from_dataset(rs_batch *batch, const rs_dataset *d, const int *order, int B,
                          rs_error *err)
{
    const int *src[B > 0 ? B : 1], *tgt[B > 0 ? B : 1];
    int src_count[B > 0 ? B : 1], tgt_count[B > 0 ? B : 1];
    for (int b = 0; b < B; b++) {
        src[b] = d->src[order[b]];
        tgt[b] = d->tgt[order[b]];
        src_count[b] = d->src_len[order[b]];
        tgt_count[b] = d->tgt_len[order[b]];
    }
    return rs_batch_fill(batch, B, src, src_count, tgt, tgt_count, err);
}

void rs_dataset_max_lengths(const rs_dataset *d, int *max_S, int *max_T)
{
    for (int i = 0; d && i < d->count; i++) {
        if (d->src_len[i] + 1 > *max_S)
            *max_S = d->src_len[i] + 1;
        if (d->tgt_len[i] + 1 > *max_T)
            *max_T = d->tgt_len[i] + 1;
    }
}
