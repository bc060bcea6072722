/* The whole network, forward and backward; network.h has the shapes and
 * docs/model.md the equations. The forward is four calls,
 *
 *   rs_encode               h_j = [→h_j ; ←h_j], keys U_a h_j + b_a, s_0 = tanh(W_init ←h_1 + b_init)
 *   decoder_cell_forward    for i = 1…T: c_i by attention over h, s_i = GRU(s_{i−1}, [E y_{i−1} ; c_i])
 *   rs_readout_forward         logits_i from s_i, E y_{i−1}, c_i
 *   rs_softmax_xent_forward    L = Σ_i −log p(y_i)
 *
 * and the backward the same calls in reverse, each block's backward beside
 * its forward (here, or in gru.c, attention.c, readout.c):
 *
 *   rs_softmax_xent_backward → rs_readout_backward → decoder_cell_backward for
 *   i = T…1 (ds_i = the readout's + the carry from step i+1) → the decoder's
 *   weights over all steps at once → encode_backward (both directions, s_0,
 *   the embeddings).
 *
 * Every gradient accumulates (+=) into the one gradient buffer, zeroed once
 * per step by the caller. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn/attention.h"
#include "nn/gru.h"
#include "nn/linalg.h"
#include "nn/network.h"
#include "nn/readout.h"
#include "nn/vecmath.h"

static float *take(float *base, size_t *offset, size_t count)
{
    float *p = base ? base + *offset : NULL;
    *offset += count;
    return p;
}

/* Assigns every buffer of RS_WORKSPACE_TABLE its place in the arena
 * (base NULL: only counts). */
static size_t carve(rs_workspace *ws, float *base, const rs_config *c, int ka_)
{
    const size_t B = (size_t)ws->max_B, S = (size_t)ws->max_S, T = (size_t)ws->max_T;
    const size_t m = (size_t)c->emb, n = (size_t)c->hidden, l = (size_t)c->maxout;
    const size_t V = (size_t)c->tgt_vocab, R = T * B, ka = (size_t)ka_;
    size_t at = 0;
#define RS_WS_TAKE(field, count, doc) ws->field = take(base, &at, count);
    RS_WORKSPACE_TABLE(RS_WS_TAKE)
#undef RS_WS_TAKE
    return at;
}

int rs_workspace_alloc(rs_workspace *ws, const rs_model *model, int max_B, int max_S, int max_T,
                       rs_error *err)
{
    memset(ws, 0, sizeof *ws);
    ws->max_B = max_B;
    ws->max_S = max_S;
    ws->max_T = max_T;
    const rs_config *c = &model->cfg;
    int ka = rs_attention_key_size(model->cfg.attention, c->hidden, c->att);
    size_t total = carve(ws, NULL, c, ka);
    ws->arena = rs_calloc(total, sizeof(float), err);
    ws->which = rs_calloc((size_t)max_T * max_B * c->maxout, 1, err);
    if (!ws->arena || !ws->which) {
        rs_workspace_free(ws);
        return -1;
    }
    carve(ws, ws->arena, c, ka);
    return 0;
}

void rs_workspace_free(rs_workspace *ws)
{
    free(ws->arena);
    free(ws->which);
    memset(ws, 0, sizeof *ws);
}

static void gather_rows(float *out, const float *table, const int *ids, int count, int width)
{
    for (int r = 0; r < count; r++)
        memcpy(out + (size_t)r * width, table + (size_t)ids[r] * width, sizeof(float) * width);
}

static void scatter_add_rows(float *table, const float *rows, const int *ids, int count, int width)
{
    for (int r = 0; r < count; r++) {
        float *dst = table + (size_t)ids[r] * width;
        const float *src = rows + (size_t)r * width;
        for (int k = 0; k < width; k++)
            dst[k] += src[k];
    }
}

/* The dropout masks of one forward pass; each is drawn from its own stream
 * derived from ws->dropout_rng, so none depends on another's size (nor on
 * whether another is drawn at all). */
enum { DROP_SRC, DROP_ANN, DROP_EMB, DROP_OUT, DROP_SRC_WORD, DROP_TGT_WORD };

/* Inverted dropout multipliers: 0 with probability p, else 1 / (1 - p). */
static void dropout_mask(float *mask, size_t count, float p, const rs_rng *base, int which)
{
    rs_rng stream = *base;
    rs_rng_seed(&stream, rs_rng_next(&stream) ^ (0x9e3779b97f4a7c15ULL * (uint64_t)(which + 1)));
    const float keep = 1.0f / (1.0f - p);
    for (size_t i = 0; i < count; i++)
        mask[i] = rs_rng_uniform(&stream) < p ? 0.0f : keep;
}

static void multiply(float *x, const float *mask, size_t count)
{
    for (size_t i = 0; i < count; i++)
        x[i] *= mask[i];
}

/* x [rows,width] row r *= mask[r]: word dropout, one multiplier per token. */
static void multiply_rows(float *x, const float *mask, size_t rows, size_t width)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t k = 0; k < width; k++)
            x[r * width + k] *= mask[r];
}

/* One direction of the bidirectional encoder (model.md, "Encoder"), with
 * what its forward pass keeps for the backward. Both directions read the
 * same source embeddings; the forward one reads positions j = 1..S, the
 * backward one j = S..1, each from a zero state. states [S+1,B,n] holds them
 * so that position j (0-based) reads states[j + reverse] and writes
 * states[j + 1 - reverse]: [0] = 0 and [j+1] = fwd_h_j forward, [j] = bwd_h_j
 * and [S] = 0 backward. */
typedef struct {
    int reverse;
    float *xproj, *gates, *rh, *states,
        *dpre;              /* [S,B,3n], [S,B,3n], [S,B,n], [S+1,B,n], [S,B,3n] */
    const float *W, *U, *b; /* [3n,m], [3n,n], [3n] */
    float *dW, *dU, *db;    /* their gradients (backward only) */
    int half;               /* its half of each annotation: 0 or n */
} encoder_direction;

static encoder_direction encoder_forward_direction(rs_workspace *ws, const rs_tensors *w,
                                                   const rs_tensors *g)
{
    return (encoder_direction){0,
                               ws->fwd_xproj,
                               ws->fwd_gates,
                               ws->fwd_rh,
                               ws->fwd_states,
                               ws->fwd_dpre,
                               w->enc_fwd_W,
                               w->enc_fwd_U,
                               w->enc_fwd_b,
                               g ? g->enc_fwd_W : NULL,
                               g ? g->enc_fwd_U : NULL,
                               g ? g->enc_fwd_b : NULL,
                               0};
}

static encoder_direction encoder_backward_direction(rs_workspace *ws, const rs_tensors *w,
                                                    const rs_tensors *g, int n)
{
    return (encoder_direction){1,
                               ws->bwd_xproj,
                               ws->bwd_gates,
                               ws->bwd_rh,
                               ws->bwd_states,
                               ws->bwd_dpre,
                               w->enc_bwd_W,
                               w->enc_bwd_U,
                               w->enc_bwd_b,
                               g ? g->enc_bwd_W : NULL,
                               g ? g->enc_bwd_U : NULL,
                               g ? g->enc_bwd_b : NULL,
                               n};
}

/* x_proj = W x + b for every position in one GEMM, then the recurrence;
 * the mask carries the state through padding, so each sentence's backward
 * direction starts from 0 at its own </s>. */
static void direction_forward(const encoder_direction *d, const float *src_x, const float *src_mask,
                              int S, int B, int m, int n)
{
    const size_t Bn = (size_t)B * n, Bn3 = 3 * Bn;
    rs_matmul_forward(RS_MAT(d->xproj, S * B, 3 * n), RS_CMAT(src_x, S * B, m),
                      RS_CMAT(d->W, 3 * n, m), 0.0f);
    rs_add_bias(d->xproj, d->b, S * B, 3 * n, 3 * n);
    memset(d->states + (d->reverse ? S : 0) * Bn, 0, sizeof(float) * Bn);
    for (int k = 0; k < S; k++) {
        const int j = d->reverse ? S - 1 - k : k;
        rs_gru_step_forward(d->states + (j + 1 - d->reverse) * Bn, d->gates + j * Bn3,
                            d->rh + j * Bn, d->states + (j + d->reverse) * Bn, d->xproj + j * Bn3,
                            d->U, src_mask + j * B, B, n);
    }
}

/* The recurrence backward, last position read first; each step's dh is the
 * annotation's gradient (this direction's half) plus what the next step
 * carries back. Then the parameter gradients over all positions at once. */
static void direction_backward(rs_workspace *ws, const encoder_direction *d, int S, int B, int m,
                               int n)
{
    const size_t Bn = (size_t)B * n, Bn3 = 3 * Bn;
    memset(ws->carry, 0, sizeof(float) * Bn);
    for (int k = S - 1; k >= 0; k--) {
        const int j = d->reverse ? S - 1 - k : k;
        for (int b = 0; b < B; b++)
            for (int i = 0; i < n; i++)
                ws->ds[(size_t)b * n + i] =
                    ws->d_annotations[((size_t)j * B + b) * 2 * n + d->half + i] +
                    ws->carry[(size_t)b * n + i];
        memset(ws->carry, 0, sizeof(float) * Bn);
        rs_gru_step_backward(ws->carry, d->dpre + j * Bn3, ws->ds, d->gates + j * Bn3,
                             d->states + (j + d->reverse) * Bn, d->U, ws->src_mask + j * B, B, n,
                             ws->scratch);
    }
    /* forward was: x_proj = W x + b. */
    rs_matmul_backward_weight(RS_MAT(d->dW, 3 * n, m), RS_CMAT(d->dpre, S * B, 3 * n),
                              RS_CMAT(ws->src_x, S * B, m));
    rs_gru_recurrent_backward(d->dU, d->db, d->dpre, d->states + d->reverse * Bn, d->rh, S * B, n);
}

void rs_encode(rs_workspace *ws, const rs_model *model, const rs_batch *batch)
{
    const rs_tensors *w = &model->w;
    const int B = batch->B, S = batch->S, m = model->cfg.emb, n = model->cfg.hidden;
    const size_t Bn = (size_t)B * n;
    gather_rows(ws->src_x, w->src_emb, batch->src, S * B, m);
    const float p = ws->dropout.element;
    if (p > 0.0f) {
        dropout_mask(ws->drop_src, (size_t)S * B * m, p, &ws->dropout_rng, DROP_SRC);
        dropout_mask(ws->drop_ann, (size_t)S * B * 2 * n, p, &ws->dropout_rng, DROP_ANN);
        multiply(ws->src_x, ws->drop_src, (size_t)S * B * m);
    }
    if (ws->dropout.src_word > 0.0f) {
        dropout_mask(ws->drop_src_word, (size_t)S * B, ws->dropout.src_word, &ws->dropout_rng,
                     DROP_SRC_WORD);
        multiply_rows(ws->src_x, ws->drop_src_word, (size_t)S * B, (size_t)m);
    }
    for (int j = 0; j < S; j++)
        for (int b = 0; b < B; b++)
            ws->src_mask[j * B + b] = j < batch->src_len[b] ? 1.0f : 0.0f;

    const encoder_direction fwd = encoder_forward_direction(ws, w, NULL);
    const encoder_direction bwd = encoder_backward_direction(ws, w, NULL, n);
    direction_forward(&fwd, ws->src_x, ws->src_mask, S, B, m, n);
    direction_forward(&bwd, ws->src_x, ws->src_mask, S, B, m, n);

    /* h_j = [fwd_h_j ; bwd_h_j] */
    for (int j = 0; j < S; j++)
        for (int b = 0; b < B; b++) {
            float *h = ws->annotations + ((size_t)j * B + b) * 2 * n;
            memcpy(h, ws->fwd_states + (j + 1) * Bn + (size_t)b * n, sizeof(float) * n);
            memcpy(h + n, ws->bwd_states + j * Bn + (size_t)b * n, sizeof(float) * n);
        }
    if (ws->dropout.element > 0.0f)
        multiply(ws->annotations, ws->drop_ann, (size_t)S * B * 2 * n);
    rs_attention_keys_forward(model->cfg.attention, ws->keys, ws->annotations,
                              model->cfg.attention == RS_ATT_ADDITIVE ? w->att_U : w->att_K,
                              w->att_b, S * B, n, model->cfg.att);

    /* s_0 = tanh(W_init bwd_h_1 + b_init); bwd_states[0] is bwd_h_1 of every row. */
    rs_matmul_forward(RS_MAT(ws->dec_states, B, n), RS_CMAT(ws->bwd_states, B, n),
                      RS_CMAT(w->init_W, n, n), 0.0f);
    rs_add_bias(ws->dec_states, w->init_b, B, n, n);
    rs_vtanh(ws->dec_states, ws->dec_states, Bn);
}

/* The backward of rs_encode, its steps in reverse: the attention keys, the
 * annotations' dropout, the initial decoder state, the two directions, the
 * source embeddings. On entry d_annotations holds what the decoder's
 * attention sent back and carry holds dL/ds_0. */
static void encode_backward(rs_workspace *ws, const rs_model *model, const rs_batch *batch,
                            const rs_tensors *g)
{
    const rs_tensors *w = &model->w;
    const int kind = model->cfg.attention;
    const int B = batch->B, S = batch->S, m = model->cfg.emb, n = model->cfg.hidden;
    const size_t Bn = (size_t)B * n;
    rs_attention_keys_backward(kind, ws->d_annotations,
                               kind == RS_ATT_ADDITIVE ? g->att_U : g->att_K, g->att_b, ws->d_keys,
                               ws->annotations, kind == RS_ATT_ADDITIVE ? w->att_U : w->att_K,
                               S * B, n, model->cfg.att);
    if (ws->dropout.element > 0.0f)
        multiply(ws->d_annotations, ws->drop_ann, (size_t)S * B * 2 * n);

    /* forward was: s_0 = tanh(W_init bwd_h_1 + b_init); carry holds dL/ds_0.
     * From the line above on, d_annotations is the gradient of the states
     * before the annotations' dropout, and s_0 read bwd_h_1 before it too. */
    for (size_t k = 0; k < Bn; k++)
        ws->scratch[k] = ws->carry[k] * (1.0f - ws->dec_states[k] * ws->dec_states[k]);
    rs_matmul_backward_weight(RS_MAT(g->init_W, n, n), RS_CMAT(ws->scratch, B, n),
                              RS_CMAT(ws->bwd_states, B, n));
    rs_add_row_sums(g->init_b, ws->scratch, B, n, n);
    rs_matmul_backward_input(RS_MAT_S(ws->d_annotations + n, B, n, 2 * n),
                             RS_CMAT(ws->scratch, B, n), RS_CMAT(w->init_W, n, n), 1.0f);

    const encoder_direction fwd = encoder_forward_direction(ws, w, g);
    const encoder_direction bwd = encoder_backward_direction(ws, w, g, n);
    direction_backward(ws, &fwd, S, B, m, n);
    direction_backward(ws, &bwd, S, B, m, n);
    /* Both directions read src_x: its gradient is the sum of theirs. */
    rs_matmul_backward_input(RS_MAT(ws->d_src_x, S * B, m), RS_CMAT(ws->fwd_dpre, S * B, 3 * n),
                             RS_CMAT(w->enc_fwd_W, 3 * n, m), 0.0f);
    rs_matmul_backward_input(RS_MAT(ws->d_src_x, S * B, m), RS_CMAT(ws->bwd_dpre, S * B, 3 * n),
                             RS_CMAT(w->enc_bwd_W, 3 * n, m), 1.0f);
    /* forward was: src_x = E x_j ⊙ drop_src ⊙ drop_src_word (by row). */
    if (ws->dropout.element > 0.0f)
        multiply(ws->d_src_x, ws->drop_src, (size_t)S * B * m);
    if (ws->dropout.src_word > 0.0f)
        multiply_rows(ws->d_src_x, ws->drop_src_word, (size_t)S * B, (size_t)m);
    scatter_add_rows(g->src_emb, ws->d_src_x, batch->src, S * B, m);
}

/* One step of the decoder recurrence (model.md), shared by the training
 * forward pass and translation: the attention over the source with query
 * s_{i-1}, then s_i = GRU(s_{i-1}, W' [E y_{i-1} ; c_i] + b'). What it
 * writes: state s_i [B,n]; gates [B,3n] and rh [B,n] as in
 * rs_gru_step_forward; context c_i [B,2n]; the attention's saved state; xproj
 * [B,3n] holds the embedding half W'_e E y_{i-1} + b' on entry and the whole
 * input projection on return. */
typedef struct {
    float *state, *gates, *rh, *context, *xproj;
    rs_attention_saved att;
} decoder_step;

/* mask [B] (0: the sentence has ended, the state is carried) or NULL. */
static void decoder_cell_forward(const decoder_step *st, const float *s_prev,
                                 const rs_attention_source *src, const float *mask,
                                 const rs_model *model)
{
    const rs_tensors *w = &model->w;
    const int B = src->B, m = model->cfg.emb, n = model->cfg.hidden, in = m + 2 * n;
    const rs_attention_weights aw = {model->cfg.attention, n, model->cfg.att, w->att_W, w->att_v};
    rs_attention_forward(st->context, &st->att, s_prev, src, &aw);
    /* x_proj += W'_c c_i (W'_c: the context columns of W', [3n,2n] of the [3n,m+2n]). */
    rs_matmul_forward(RS_MAT(st->xproj, B, 3 * n), RS_CMAT(st->context, B, 2 * n),
                      RS_CMAT_S(w->dec_W + m, 3 * n, 2 * n, in), 1.0f);
    rs_gru_step_forward(st->state, st->gates, st->rh, s_prev, st->xproj, w->dec_U, mask, B, n);
}

/* The backward of decoder step t, its forward in reverse: the GRU, the
 * context's share of the input projection, the attention. ds holds
 * dL/ds_t; dL/ds_{t-1} (through the recurrence and the attention query)
 * goes to carry, which the caller has zeroed. */
static void decoder_cell_backward(rs_workspace *ws, const rs_model *model, const rs_batch *batch,
                                  const rs_tensors *g, int t)
{
    const rs_tensors *w = &model->w;
    const int B = batch->B, S = batch->S, m = model->cfg.emb, n = model->cfg.hidden;
    const int a = model->cfg.att, in = m + 2 * n,
              ka = rs_attention_key_size(model->cfg.attention, n, a);
    const size_t Bn = (size_t)B * n, Bn3 = 3 * Bn;
    const float *s_prev = ws->dec_states + t * Bn;
    float *dpre = ws->dec_dpre + t * Bn3, *dctx = ws->d_context + (size_t)t * B * 2 * n;
    rs_gru_step_backward(ws->carry, dpre, ws->ds, ws->dec_gates + t * Bn3, s_prev, w->dec_U,
                         ws->tgt_mask + t * B, B, n, ws->scratch);
    /* forward was: x_proj += W'_c c_i. */
    rs_matmul_backward_input(RS_MAT(dctx, B, 2 * n), RS_CMAT(dpre, B, 3 * n),
                             RS_CMAT_S(w->dec_W + m, 3 * n, 2 * n, in), 1.0f);
    const rs_attention_weights aw = {model->cfg.attention, n, a, w->att_W, w->att_v};
    const rs_attention_source src = {ws->keys, ws->annotations, batch->src_len, B, S, NULL, 0};
    const rs_attention_saved saved = {ws->alpha + (size_t)t * B * S,
                                      ws->att_hidden + (size_t)t * B * S * ka, NULL};
    const rs_attention_grads d = {ws->carry, ws->d_annotations, ws->d_keys,
                                  ws->d_query_proj + (size_t)t * B * a, g->att_v};
    rs_attention_backward(&d, dctx, &saved, s_prev, &src, &aw, ws->d_scores);
}

double rs_network_forward(rs_workspace *ws, const rs_model *model, const rs_batch *batch)
{
    const rs_tensors *w = &model->w;
    const rs_config *c = &model->cfg;
    const int B = batch->B, S = batch->S, T = batch->T, R = T * B;
    const int m = c->emb, n = c->hidden, a = c->att, l = c->maxout, V = c->tgt_vocab;
    const int in = m + 2 * n, ka = rs_attention_key_size(model->cfg.attention, n, a);
    const size_t Bn = (size_t)B * n, Bn3 = 3 * Bn;

    rs_encode(ws, model, batch);

    gather_rows(ws->dec_emb, w->tgt_emb, batch->tgt_in, R, m);
    const float *t_mask = NULL;
    if (ws->dropout.element > 0.0f) {
        dropout_mask(ws->drop_emb, (size_t)R * m, ws->dropout.element, &ws->dropout_rng, DROP_EMB);
        dropout_mask(ws->drop_out, (size_t)R * l, ws->dropout.element, &ws->dropout_rng, DROP_OUT);
        multiply(ws->dec_emb, ws->drop_emb, (size_t)R * m);
        t_mask = ws->drop_out;
    }
    /* dec_emb feeds both the decoder GRU and the deep output: one mask for both. */
    if (ws->dropout.tgt_word > 0.0f) {
        dropout_mask(ws->drop_tgt_word, (size_t)R, ws->dropout.tgt_word, &ws->dropout_rng,
                     DROP_TGT_WORD);
        multiply_rows(ws->dec_emb, ws->drop_tgt_word, (size_t)R, (size_t)m);
    }
    for (int t = 0; t < T; t++)
        for (int b = 0; b < B; b++)
            ws->tgt_mask[t * B + b] = t < batch->tgt_len[b] ? 1.0f : 0.0f;
    /* u_i = [E y_{i-1} ; c_i]: the embedding half of W' u_i + b' for all steps at once. */
    rs_matmul_forward(RS_MAT(ws->dec_xproj, R, 3 * n), RS_CMAT(ws->dec_emb, R, m),
                      RS_CMAT_S(w->dec_W, 3 * n, m, in), 0.0f);
    rs_add_bias(ws->dec_xproj, w->dec_b, R, 3 * n, 3 * n);

    const rs_attention_source src = {ws->keys, ws->annotations, batch->src_len, B, S, NULL, 0};
    for (int t = 0; t < T; t++) {
        const decoder_step st = {ws->dec_states + (t + 1) * Bn,
                                 ws->dec_gates + t * Bn3,
                                 ws->dec_rh + t * Bn,
                                 ws->context + (size_t)t * B * 2 * n,
                                 ws->dec_xproj + t * Bn3,
                                 {ws->alpha + (size_t)t * B * S,
                                  ws->att_hidden + (size_t)t * B * S * ka, ws->query_proj}};
        decoder_cell_forward(&st, ws->dec_states + t * Bn, &src, ws->tgt_mask + t * B, model);
    }

    const rs_readout_saved saved = {ws->tpre, ws->tmax, ws->which, t_mask};
    const rs_readout_inputs inputs = {RS_CMAT(ws->dec_states + Bn, R, n),
                                      RS_CMAT(ws->dec_emb, R, m), RS_CMAT(ws->context, R, 2 * n)};
    rs_readout_forward(ws->probs, &saved, &inputs, w, l, V);
    return rs_softmax_xent_forward(ws->probs, ws->nll, batch->tgt_out, R, V);
}

/* The forward pass's calls in reverse: loss and deep output, the decoder
 * steps last first (then the decoder's parameters over all steps at once),
 * the target embeddings, the encoder. Every gradient accumulates (+=) into g. */
void rs_network_backward(rs_workspace *ws, const rs_model *model, const rs_batch *batch,
                         const rs_tensors *g, float smoothing, float scale)
{
    const rs_tensors *w = &model->w;
    const rs_config *c = &model->cfg;
    const int B = batch->B, S = batch->S, T = batch->T, R = T * B;
    const int m = c->emb, n = c->hidden, a = c->att, l = c->maxout, V = c->tgt_vocab;
    const int in = m + 2 * n, ka = rs_attention_key_size(model->cfg.attention, n, a);
    const size_t Bn = (size_t)B * n;
    const int drop = ws->dropout.element > 0.0f;

    rs_softmax_xent_backward(ws->probs, batch->tgt_out, smoothing, scale, R, V);
    memset(ws->d_dec_emb, 0, sizeof(float) * (size_t)R * m);
    memset(ws->d_context, 0, sizeof(float) * (size_t)R * 2 * n);
    const rs_readout_saved saved = {ws->tpre, ws->tmax, ws->which, drop ? ws->drop_out : NULL};
    const rs_readout_inputs inputs = {RS_CMAT(ws->dec_states + Bn, R, n),
                                      RS_CMAT(ws->dec_emb, R, m), RS_CMAT(ws->context, R, 2 * n)};
    const rs_readout_input_grads d_inputs = {
        RS_MAT(ws->d_states, R, n), RS_MAT(ws->d_dec_emb, R, m), RS_MAT(ws->d_context, R, 2 * n)};
    rs_readout_backward(&d_inputs, g, ws->dt, ws->dtpre, ws->probs, &saved, &inputs, w, l, V);

    /* s_i receives gradient from the readout at i and, through carry, from
     * the recurrence and the attention query at i+1. */
    memset(ws->d_annotations, 0, sizeof(float) * (size_t)S * B * 2 * n);
    memset(ws->d_keys, 0, sizeof(float) * (size_t)S * B * ka);
    memset(ws->carry, 0, sizeof(float) * Bn);
    for (int t = T - 1; t >= 0; t--) {
        for (size_t k = 0; k < Bn; k++)
            ws->ds[k] = ws->d_states[t * Bn + k] + ws->carry[k];
        memset(ws->carry, 0, sizeof(float) * Bn);
        decoder_cell_backward(ws, model, batch, g, t);
    }

    /* The decoder's parameters, all steps at once: x_proj = W'_e E y_{i-1} +
     * W'_c c_i + b' and the recurrence; the attention's query side W_a s. */
    const rs_cmat dpre = RS_CMAT(ws->dec_dpre, R, 3 * n);
    rs_matmul_backward_weight(RS_MAT_S(g->dec_W, 3 * n, m, in), dpre, RS_CMAT(ws->dec_emb, R, m));
    rs_matmul_backward_weight(RS_MAT_S(g->dec_W + m, 3 * n, 2 * n, in), dpre,
                              RS_CMAT(ws->context, R, 2 * n));
    rs_gru_recurrent_backward(g->dec_U, g->dec_b, ws->dec_dpre, ws->dec_states, ws->dec_rh, R, n);
    rs_matmul_backward_input(RS_MAT(ws->d_dec_emb, R, m), dpre, RS_CMAT_S(w->dec_W, 3 * n, m, in),
                             1.0f);
    if (model->cfg.attention == RS_ATT_ADDITIVE)
        rs_matmul_backward_weight(RS_MAT(g->att_W, a, n), RS_CMAT(ws->d_query_proj, R, a),
                                  RS_CMAT(ws->dec_states, R, n));

    /* forward was: dec_emb = E y_{i-1} ⊙ drop_emb ⊙ drop_tgt_word (by row). */
    if (drop)
        multiply(ws->d_dec_emb, ws->drop_emb, (size_t)R * m);
    if (ws->dropout.tgt_word > 0.0f)
        multiply_rows(ws->d_dec_emb, ws->drop_tgt_word, (size_t)R, (size_t)m);
    scatter_add_rows(g->tgt_emb, ws->d_dec_emb, batch->tgt_in, R, m);

    encode_backward(ws, model, batch, g);
}

/* ---- one decoder step, for translation ---- */

static size_t carve_step(rs_step_workspace *sw, float *base, const rs_config *c, int ka_)
{
    const size_t B = (size_t)sw->max_B, S = (size_t)sw->max_S;
    const size_t m = (size_t)c->emb, n = (size_t)c->hidden, l = (size_t)c->maxout;
    const size_t V = (size_t)c->tgt_vocab, ka = (size_t)ka_;
    size_t at = 0;
#define RS_WS_TAKE(field, count, doc) sw->field = take(base, &at, count);
    RS_STEP_WORKSPACE_TABLE(RS_WS_TAKE)
#undef RS_WS_TAKE
    return at;
}

int rs_step_workspace_alloc(rs_step_workspace *sw, const rs_model *model, int max_B, int max_S,
                            rs_error *err)
{
    memset(sw, 0, sizeof *sw);
    sw->max_B = max_B;
    sw->max_S = max_S;
    int ka = rs_attention_key_size(model->cfg.attention, model->cfg.hidden, model->cfg.att);
    size_t total = carve_step(sw, NULL, &model->cfg, ka);
    sw->arena = rs_calloc(total, sizeof(float), err);
    sw->which = rs_calloc((size_t)max_B * model->cfg.maxout, 1, err);
    if (!sw->arena || !sw->which) {
        rs_step_workspace_free(sw);
        return -1;
    }
    carve_step(sw, sw->arena, &model->cfg, ka);
    return 0;
}

void rs_step_workspace_free(rs_step_workspace *sw)
{
    free(sw->arena);
    free(sw->which);
    memset(sw, 0, sizeof *sw);
}

float rs_log_normalizer(const float *row, float *scratch, int V)
{
    const float max = rs_vmax(row, (size_t)V);
    return max + (float)log(rs_vexp_shift_sum(scratch, row, max, (size_t)V));
}

void rs_network_step(rs_step_workspace *sw, const rs_step_out *out, const float *state,
                     const int *prev, const rs_attention_source *src, const rs_model *model)
{
    const rs_tensors *w = &model->w;
    const rs_config *c = &model->cfg;
    const int B = src->B, m = c->emb, n = c->hidden, l = c->maxout, V = c->tgt_vocab;
    const int in = m + 2 * n;
    gather_rows(sw->emb, w->tgt_emb, prev, B, m);
    rs_matmul_forward(RS_MAT(sw->xproj, B, 3 * n), RS_CMAT(sw->emb, B, m),
                      RS_CMAT_S(w->dec_W, 3 * n, m, in), 0.0f);
    rs_add_bias(sw->xproj, w->dec_b, B, 3 * n, 3 * n);
    const decoder_step st = {out->next_state, sw->gates, sw->rh,
                             sw->context,     sw->xproj, {out->alpha, sw->hidden, sw->query_proj}};
    decoder_cell_forward(&st, state, src, NULL, model);
    const rs_readout_saved saved = {sw->tpre, sw->tmax, sw->which, NULL};
    const rs_readout_inputs inputs = {RS_CMAT(out->next_state, B, n), RS_CMAT(sw->emb, B, m),
                                      RS_CMAT(sw->context, B, 2 * n)};
    rs_readout_forward(out->logits, &saved, &inputs, w, l, V);
    for (int b = 0; b < B; b++)
        out->lse[b] = rs_log_normalizer(out->logits + (size_t)b * V, sw->exp_row, V);
}
