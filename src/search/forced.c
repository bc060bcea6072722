/* Forced decoding (see forced.h): the decoder fed the known target, token by
 * token, summing the log-probability of each and keeping the alignment row
 * of each step; an ensemble averages both over its members. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/forced.h"
#include "accel/accel.h"
#include "nn/network.h"
#include "search/decode.h"

void rs_forced_free(rs_forced *f)
{
    free(f->token_logprobs);
    free(f->alignment);
    memset(f, 0, sizeof *f);
}

void rs_forced_free_all(rs_forced *f, int count)
{
    for (int i = 0; f && i < count; i++)
        rs_forced_free(&f[i]);
    free(f);
}

/* A batch's target positions before it takes fewer pairs than batch_size:
 * longer than any sentence of a real corpus, so that only a pathological
 * pair changes which pairs score together. */
enum { FORCED_STEPS = 400 };

/* The workspace and batch a batch of B pairs of up to S source and T target
 * positions fits: held while the batches fit it, made again for one that
 * does not, to that batch's own shape, so that one long pair among short
 * ones does not make every batch's workspace as long (B · T · V floats). */
typedef struct {
    rs_workspace ws;
    rs_batch batch;
    int B, S, T; /* held: 0 none */
} forced_space;

static void forced_space_free(forced_space *sp)
{
    if (sp->B) {
        rs_batch_free(&sp->batch);
        rs_workspace_free(&sp->ws);
    }
    sp->B = 0;
}

static int forced_space_fit(forced_space *sp, const rs_model *model, int B, int S, int T,
                            rs_error *err)
{
    if (sp->B && B <= sp->B && S <= sp->S && T <= sp->T)
        return 0;
    forced_space_free(sp);
    rs_error why;
    if (rs_workspace_alloc(&sp->ws, model, B, S, T, &why))
        return rs_fail(err, "forced decoding of %d pair%s of up to %d target tokens: %s", B,
                       RS_S(B), T - 1, why.msg);
    if (rs_batch_alloc(&sp->batch, B, S, T, err)) {
        rs_workspace_free(&sp->ws);
        return -1;
    }
    sp->B = B, sp->S = S, sp->T = T;
    return 0;
}

/* The pairs order[0..count) of data, batch_size to a batch, whose scores
 * (and alignments when want_alignment) every model's pass adds to out. */
typedef struct {
    const rs_dataset *data;
    const int *order;
    int count, batch_size, want_alignment;
    rs_forced *out;
} forced_pass;

/* Adds (1/K)·log p of each target token, and (1/K)·α when asked, of one
 * model to p->out, for the pairs p->order[0..count). */
static int score_with(const rs_ready *ready, float weight, const forced_pass *p, rs_error *err)
{
    const rs_dataset *data = p->data;
    const int *order = p->order;
    const int count = p->count, batch_size = p->batch_size, want_alignment = p->want_alignment;
    rs_forced *out = p->out;
    forced_space sp = {.B = 0};
    int status = 0;
    for (int from = 0, B; from < count && status == 0; from += B) {
        /* batch_size pairs, fewer where a long target would make the batch's
         * B · T rows more than batch_size · FORCED_STEPS: its rows'
         * logits are the workspace's largest part. */
        int S = 1, T = 1;
        for (B = 0; B < batch_size && from + B < count; B++) {
            const int i = order[from + B];
            const int S_i = data->src_len[i] + 1 > S ? data->src_len[i] + 1 : S;
            const int T_i = data->tgt_len[i] + 1 > T ? data->tgt_len[i] + 1 : T;
            if (B > 0 && (long)(B + 1) * T_i > (long)batch_size * FORCED_STEPS)
                break;
            S = S_i, T = T_i;
        }
        if (forced_space_fit(&sp, ready->model, B, S, T, err) ||
            rs_batch_from_dataset(&sp.batch, data, order + from, B, err)) {
            status = -1;
            break;
        }
        rs_batch *batch = &sp.batch;
        rs_workspace *ws = &sp.ws;
        const rs_network_weights w = rs_accel_weights(ready->model, ready->accel);
        rs_network_forward(ws, &w, batch);
        /* nll is [T,B]; alpha [T,B,S]: step t, row b at (t·B + b)·S. */
        const int cols_S = batch->S;
        for (int b = 0; b < B; b++) {
            rs_forced *f = &out[order[from + b]];
            const int rows = batch->tgt_len[b], cols = batch->src_len[b];
            for (int t = 0; t < rows; t++) {
                f->token_logprobs[t] -= weight * ws->nll[t * B + b];
                if (want_alignment)
                    for (int j = 0; j < cols; j++)
                        f->alignment[(size_t)t * cols + j] +=
                            weight * ws->alpha[((size_t)t * B + b) * cols_S + j];
            }
        }
    }
    forced_space_free(&sp);
    return status;
}

int rs_forced_decode(const rs_ready *const *models, int n_models, const rs_dataset *data,
                     int batch_size, int want, rs_forced *out, rs_error *err)
{
    memset(out, 0, sizeof *out * (size_t)data->count);
    if (batch_size < 1)
        return rs_fail(err, "batch size %d: must be at least 1", batch_size);
    if (n_models < 1)
        return rs_fail(err, "no model given");
    if (data->count == 0)
        return 0;
    const int want_alignment = (want & RS_FORCED_ALIGNMENT) != 0;
    if (want_alignment && rs_alignment_check(models, n_models, "forced alignment", err))
        return -1;
    int *order = rs_calloc((size_t)data->count, sizeof(int), err);
    /* Pairs of similar source length score together. */
    int status = order ? rs_batch_length_order(data->count, data->src_len, order, err) : -1;
    for (int i = 0; i < data->count && status == 0; i++) {
        rs_forced *f = &out[i];
        f->src_len = data->src_len[i];
        f->tgt_len = data->tgt_len[i];
        f->token_logprobs = rs_calloc((size_t)f->tgt_len + 1, sizeof(float), err);
        if (want_alignment)
            f->alignment =
                rs_calloc((size_t)(f->tgt_len + 1) * (f->src_len + 1), sizeof(float), err);
        if (!f->token_logprobs || (want_alignment && !f->alignment))
            status = -1;
    }
    /* An empty source has one translation, the empty one, whose log p is 0
     * (translate's n-best list gives an empty line F0= 0 without decoding):
     * so it scores, its </s> aligned to the source's. Its pairs are first in
     * the length order and are not decoded. */
    int empty = 0;
    for (; status == 0 && empty < data->count && data->src_len[order[empty]] == 0; empty++) {
        rs_forced *f = &out[order[empty]];
        if (f->tgt_len > 0)
            status = rs_fail(err,
                             "pair %d: an empty source has no translation but the empty one "
                             "(translate gives an empty line for it)",
                             (data->line ? data->line[order[empty]] : order[empty]) + 1);
        else if (want_alignment)
            f->alignment[0] = 1.0f;
    }
    const float weight = 1.0f / (float)n_models;
    const forced_pass pass = {.data = data,
                              .order = order + empty,
                              .count = data->count - empty,
                              .batch_size = batch_size,
                              .want_alignment = want_alignment,
                              .out = out};
    for (int k = 0; k < n_models && status == 0; k++)
        status = score_with(models[k], weight, &pass, err);
    for (int i = 0; i < data->count && status == 0; i++) {
        rs_forced *f = &out[i];
        for (int t = 0; t <= f->tgt_len; t++)
            f->logprob += f->token_logprobs[t];
        if (!(want & RS_FORCED_TOKENS)) {
            free(f->token_logprobs);
            f->token_logprobs = NULL;
        }
    }
    free(order);
    if (status)
        for (int i = 0; i < data->count; i++)
            rs_forced_free(&out[i]);
    return status;
}

int rs_forced_text(const rs_ready *const *models, int n_models, const rs_codec *codec,
                   const rs_forced_pair *pair, rs_forced *out, rs_tokens *src_tokens,
                   rs_tokens *tgt_tokens, rs_error *err)
{
    int cut = 0;
    const char *source = pair->source, *target = pair->target;
    const int want = pair->want;
    memset(out, 0, sizeof *out);
    memset(src_tokens, 0, sizeof *src_tokens);
    memset(tgt_tokens, 0, sizeof *tgt_tokens);
    int *src_ids = NULL, *tgt_ids = NULL, status = -1;
    rs_error inner;
    if (rs_codec_tokens(codec, RS_SIDE_SRC, source, src_tokens, &inner)) {
        rs_fail(err, "source: %s", inner.msg);
        goto done;
    }
    if (rs_codec_tokens(codec, RS_SIDE_TGT, target, tgt_tokens, &inner)) {
        rs_fail(err, "target: %s", inner.msg);
        goto done;
    }
    if (src_tokens->count == 0) {
        rs_fail(err, "the source is empty");
        goto done;
    }
    rs_tokenized one_pair = {.count = 1, .src = src_tokens};
    rs_cut_sources(&one_pair, pair->max_src_len, &cut);
    src_ids = rs_calloc((size_t)src_tokens->count + 1, sizeof(int), err);
    tgt_ids = rs_calloc((size_t)tgt_tokens->count + 1, sizeof(int), err);
    if (!src_ids || !tgt_ids)
        goto done;
    for (int k = 0; k < src_tokens->count; k++)
        src_ids[k] = rs_vocab_id(&models[0]->model->src_vocab, src_tokens->tokens[k]);
    for (int k = 0; k < tgt_tokens->count; k++)
        tgt_ids[k] = rs_vocab_id(&models[0]->model->tgt_vocab, tgt_tokens->tokens[k]);
    int line = 0;
    rs_dataset one = {.count = 1,
                      .src = &src_ids,
                      .tgt = &tgt_ids,
                      .src_len = &src_tokens->count,
                      .tgt_len = &tgt_tokens->count,
                      .line = &line};
    status = rs_forced_decode(models, n_models, &one, 1, want, out, err);
    out->cut = cut;
done:
    if (status) {
        rs_tokens_free(src_tokens);
        rs_tokens_free(tgt_tokens);
    }
    free(src_ids);
    free(tgt_ids);
    return status;
}

void rs_cut_sources(rs_tokenized *tok, int max_src_len, int *cut)
{
    for (int i = 0; i < tok->count; i++) {
        rs_tokens *s = &tok->src[i];
        cut[i] = s->count > max_src_len ? s->count - max_src_len : 0;
        for (; s->count > max_src_len; s->count--)
            free(s->tokens[s->count - 1]);
    }
}
