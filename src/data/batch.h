/* A minibatch of token ids, time-major and right-padded with RS_PAD.
 * S and T count the appended </s>: a sentence of k tokens has length k + 1. */
#ifndef RS_BATCH_H
#define RS_BATCH_H

#include "common/error.h"

typedef struct {
    int B, S, T; /* rows, longest source, longest target in this batch */
    int max_B, max_S, max_T;
    int *src;     /* [S,B] x_j; RS_PAD past src_len */
    int *src_len; /* [B] */
    int *tgt_in;  /* [T,B] y_{i-1}: <s>, y_1, …; RS_PAD past tgt_len */
    int *tgt_out; /* [T,B] y_i; RS_PAD past tgt_len */
    int *tgt_len; /* [B] */
} rs_batch;

int rs_batch_alloc(rs_batch *batch, int max_B, int max_S, int max_T, rs_error *err);
void rs_batch_free(rs_batch *batch);

/* Fills the batch from B id sequences (without </s>; it is appended here).
 * tgt may be NULL (translation: no targets). */
int rs_batch_fill(rs_batch *batch, int B, const int *const *src, const int *src_count,
                  const int *const *tgt, const int *tgt_count, rs_error *err);

/* order[0..count) = the indices 0..count) sorted by len[i], then by i:
 * sentences taken in this order make batches of similar length (less padding),
 * and the order does not depend on anything but the lengths. */
int rs_batch_length_order(int count, const int *len, int *order, rs_error *err);

#endif
