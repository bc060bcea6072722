#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"

void rs_translation_free(rs_translation *t)
{
    free(t->ids);
    free(t->alignment);
    memset(t, 0, sizeof *t);
}

int rs_decoder_init(rs_decoder *dec, const rs_model *model, int max_B, int max_S, rs_error *err)
{
    memset(dec, 0, sizeof *dec);
    dec->model = model;
    dec->max_B = max_B;
    dec->max_S = max_S;
    const int n = model->cfg.hidden, V = model->cfg.tgt_vocab;
    if (rs_workspace_alloc(&dec->ws, model, max_B, max_S, 0, err) ||
        rs_step_workspace_alloc(&dec->sw, model, max_B, max_S, err) ||
        rs_batch_alloc(&dec->batch, max_B, max_S, 0, err))
        goto fail;
    dec->state = rs_calloc((size_t)max_B * n, sizeof(float), err);
    dec->next_state = rs_calloc((size_t)max_B * n, sizeof(float), err);
    dec->logprobs = rs_calloc((size_t)max_B * V, sizeof(float), err);
    dec->alpha = rs_calloc((size_t)max_B * max_S, sizeof(float), err);
    dec->prev = rs_calloc((size_t)max_B, sizeof(int), err);
    if (!dec->state || !dec->next_state || !dec->logprobs || !dec->alpha || !dec->prev)
        goto fail;
    return 0;
fail:
    rs_decoder_free(dec);
    return -1;
}

void rs_decoder_free(rs_decoder *dec)
{
    rs_workspace_free(&dec->ws);
    rs_step_workspace_free(&dec->sw);
    rs_batch_free(&dec->batch);
    free(dec->state);
    free(dec->next_state);
    free(dec->logprobs);
    free(dec->alpha);
    free(dec->prev);
    memset(dec, 0, sizeof *dec);
}

static int push_row(rs_translation *t, int step, const float *alpha, int want_alignment,
                    int token, rs_error *err)
{
    /* Grow by doubling: outputs are short and their length is not known. */
    if ((step & (step - 1)) == 0) {
        size_t cap = step ? 2 * (size_t)step : 1;
        int *ids = realloc(t->ids, cap * sizeof *ids);
        if (!ids)
            return rs_fail(err, "out of memory during decoding");
        t->ids = ids;
        if (want_alignment) {
            float *al = realloc(t->alignment, cap * t->src_len * sizeof *al);
            if (!al)
                return rs_fail(err, "out of memory during decoding");
            t->alignment = al;
        }
    }
    t->ids[step] = token;
    if (want_alignment)
        memcpy(t->alignment + (size_t)step * t->src_len, alpha, sizeof(float) * t->src_len);
    return 0;
}

int rs_greedy(rs_decoder *dec, int B, const int *const *src, const int *src_count, int max_len,
              int want_alignment, rs_translation *out, rs_error *err)
{
    const rs_model *model = dec->model;
    const int n = model->cfg.hidden, V = model->cfg.tgt_vocab;
    for (int b = 0; b < B; b++)
        memset(&out[b], 0, sizeof out[b]);
    if (rs_batch_fill(&dec->batch, B, src, src_count, NULL, NULL, err))
        return -1;
    const int S = dec->batch.S;
    rs_encode(&dec->ws, model, &dec->batch);
    memcpy(dec->state, dec->ws.dec_states, sizeof(float) * (size_t)B * n);
    int active = B;
    for (int b = 0; b < B; b++) {
        out[b].src_len = dec->batch.src_len[b];
        dec->prev[b] = RS_BOS;
    }
    /* A finished row keeps being computed (the batch stays dense); its prev
     * becomes RS_PAD, which marks it done and is a valid embedding row. */
    for (int step = 0; active > 0 && step <= max_len; step++) {
        rs_decoder_step(&dec->sw, dec->next_state, dec->logprobs, dec->alpha, dec->state, dec->prev,
                        dec->ws.keys, dec->ws.annotations, dec->batch.src_len, model, B, S);
        for (int b = 0; b < B; b++) {
            rs_translation *t = &out[b];
            if (dec->prev[b] == RS_PAD)
                continue;
            const float *lp = dec->logprobs + (size_t)b * V;
            /* At the length limit only </s> may follow. */
            int best = RS_EOS;
            if (step < max_len)
                for (int v = RS_UNK; v < V; v++)
                    if (v != RS_BOS && lp[v] > lp[best])
                        best = v;
            t->logprob += lp[best];
            if (push_row(t, step, dec->alpha + (size_t)b * S, want_alignment, best, err)) {
                for (int k = 0; k < B; k++)
                    rs_translation_free(&out[k]);
                return -1;
            }
            if (best == RS_EOS) {
                t->finished = step < max_len;
                t->len = step;
                dec->prev[b] = RS_PAD;
                active--;
            } else {
                dec->prev[b] = best;
            }
        }
        float *swap = dec->state;
        dec->state = dec->next_state;
        dec->next_state = swap;
    }
    return 0;
}
