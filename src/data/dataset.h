/* Sentence pairs as token ids, and the order in which training visits them. */
#ifndef RS_DATASET_H
#define RS_DATASET_H

#include "data/batch.h"
#include "model/codec.h"
#include "text/corpus.h"
#include "common/rng.h"

/* Tokenized pairs (strings), kept while vocabularies are built. */
typedef struct {
    int count;
    rs_tokens *src, *tgt; /* [count] */
    long first;           /* the pairs' `first` (text/corpus.h): messages count from it */
} rs_tokenized;

/* Id sequences without the </s> that batches append. */
typedef struct {
    int count;
    int **src, **tgt; /* [count][len] */
    int *src_len, *tgt_len;
    int *line; /* [count] index of the pair in its file (0-based) */
} rs_dataset;

int rs_tokenize_pairs(rs_tokenized *out, const rs_pairs *pairs, const rs_codec *codec,
                      const char *name, rs_error *err);
void rs_tokenized_free(rs_tokenized *t);

/* Counts every token of one side (0 source, 1 target) into a counting vocabulary. */
int rs_count_tokens(rs_vocab *counts, const rs_tokenized *t, int side, rs_error *err);

/* Maps tokens to ids; pairs with a side longer than max_len tokens are left
 * out when max_len > 0 (training), and *skipped counts them. */
int rs_dataset_build(rs_dataset *out, const rs_tokenized *t, const rs_vocab *src_vocab,
                     const rs_vocab *tgt_vocab, int max_len, int *skipped, rs_error *err);
void rs_dataset_free(rs_dataset *d);

/* Of one side's tokens (0 source, 1 target; </s> not counted), how many are
 * <unk> (*unk) in all (*tokens): what a vocabulary leaves out of the data. */
void rs_dataset_unknowns(const rs_dataset *d, int side, long *unk, long *tokens);

/* The batch lengths d needs: *max_S, *max_T raised to its longest source
 * and target + 1 (the </s> batches append); a NULL d leaves them. */
void rs_dataset_max_lengths(const rs_dataset *d, int *max_S, int *max_T);

/* The batches of one epoch: pairs sorted by length (so a batch wastes little
 * on padding), ties broken at random, cut into batches of at most batch_size
 * pairs and, when batch_tokens > 0, at most batch_tokens target tokens
 * counting padding and </s> (pairs × (longest target + 1); a pair longer than
 * that forms a batch alone), and the batches shuffled. order[count] holds
 * pair indices; batch k is order[start[k] .. start[k+1]). The cuts depend on
 * the lengths only, so every epoch has the same number of batches. */
typedef struct {
    int count, batches;
    int *order, *start; /* [count], [batches + 1] */
} rs_epoch_plan;

int rs_epoch_plan_make(rs_epoch_plan *plan, const rs_dataset *d, int batch_size, int batch_tokens,
                       rs_rng *rng, rs_error *err);
void rs_epoch_plan_free(rs_epoch_plan *plan);

/* Batches in order without shuffling (evaluation): same layout as a plan. */
int rs_sequential_plan(rs_epoch_plan *plan, int count, int batch_size, rs_error *err);

/* Fills batch with the pairs order[0..B). */
int rs_batch_from_dataset(rs_batch *batch, const rs_dataset *d, const int *order, int B,
                          rs_error *err);

#endif
