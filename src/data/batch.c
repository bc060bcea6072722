#include <stdlib.h>
#include <string.h>

#include "data/batch.h"
#include "model/vocab.h"

int rs_batch_alloc(rs_batch *batch, int max_B, int max_S, int max_T, rs_error *err)
{
    memset(batch, 0, sizeof *batch);
    batch->max_B = max_B;
    batch->max_S = max_S;
    batch->max_T = max_T;
    batch->src = rs_calloc((size_t)max_S * max_B, sizeof(int), err);
    batch->src_len = rs_calloc((size_t)max_B, sizeof(int), err);
    batch->tgt_in = rs_calloc((size_t)(max_T > 0 ? max_T : 1) * max_B, sizeof(int), err);
    batch->tgt_out = rs_calloc((size_t)(max_T > 0 ? max_T : 1) * max_B, sizeof(int), err);
    batch->tgt_len = rs_calloc((size_t)max_B, sizeof(int), err);
    if (!batch->src || !batch->src_len || !batch->tgt_in || !batch->tgt_out || !batch->tgt_len) {
        rs_batch_free(batch);
        const double T = max_T > 0 ? max_T : 1;
        return rs_fail_memory(err, sizeof(int) * (double)max_B * (max_S + 2 * T + 2),
                              "a batch of %d pairs of up to %d source and %d target positions",
                              max_B, max_S, max_T);
    }
    return 0;
}

void rs_batch_free(rs_batch *batch)
{
    free(batch->src);
    free(batch->src_len);
    free(batch->tgt_in);
    free(batch->tgt_out);
    free(batch->tgt_len);
    memset(batch, 0, sizeof *batch);
}

int rs_batch_fill(rs_batch *batch, int B, const int *const *src, const int *src_count,
                  const int *const *tgt, const int *tgt_count, rs_error *err)
{
    int S = 0, T = 0;
    for (int b = 0; b < B; b++) {
        if (src_count[b] + 1 > S)
            S = src_count[b] + 1;
        if (tgt && tgt_count[b] + 1 > T)
            T = tgt_count[b] + 1;
    }
    if (B > batch->max_B || S > batch->max_S || T > batch->max_T)
        return rs_fail(err, "batch of %d pairs, lengths %d/%d exceeds the workspace (%d, %d/%d)", B,
                       S, T, batch->max_B, batch->max_S, batch->max_T);
    batch->B = B;
    batch->S = S;
    batch->T = T;
    for (int b = 0; b < B; b++) {
        batch->src_len[b] = src_count[b] + 1;
        for (int j = 0; j < S; j++)
            batch->src[j * B + b] = j < src_count[b]    ? src[b][j]
                                    : j == src_count[b] ? RS_EOS
                                                        : RS_PAD;
        if (!tgt)
            continue;
        batch->tgt_len[b] = tgt_count[b] + 1;
        for (int t = 0; t < T; t++) {
            batch->tgt_in[t * B + b] = t == 0 ? RS_BOS : t <= tgt_count[b] ? tgt[b][t - 1] : RS_PAD;
            batch->tgt_out[t * B + b] = t < tgt_count[b]    ? tgt[b][t]
                                        : t == tgt_count[b] ? RS_EOS
                                                            : RS_PAD;
        }
    }
    return 0;
}

static int compare_int_pairs(const void *pa, const void *pb)
{
    const int *a = pa, *b = pb;
    return a[0] != b[0] ? a[0] - b[0] : a[1] - b[1];
}

int rs_batch_length_order(int count, const int *len, int *order, rs_error *err)
{
    int *keyed = rs_calloc((size_t)count * 2 + 2, sizeof(int), err); /* [count] (len, i) */
    if (!keyed)
        return -1;
    for (int i = 0; i < count; i++) {
        keyed[2 * i] = len[i];
        keyed[2 * i + 1] = i;
    }
    qsort(keyed, (size_t)count, 2 * sizeof(int), compare_int_pairs);
    for (int i = 0; i < count; i++)
        order[i] = keyed[2 * i + 1];
    free(keyed);
    return 0;
}
