/* The whole network, forward and backward; network.h has the shapes and the
 * buffers, docs/model.md the equations of both passes. The forward is four
 * calls,
 *
 *   rs_encode                  h_j = [→h_j ; ←h_j], keys U_a h_j + b_a, s_0 = tanh(W_init ←h_1 + b_init)
 *   decoder_step_forward       for i = 1…T: c_i by attention over h, s_i = GRU(s_{i−1}, [E y_{i−1} ; c_i])
 *   rs_readout_forward         logits_i from s_i, E y_{i−1}, c_i
 *   rs_softmax_xent_forward    L = Σ_i −log p(y_i)
 *
 * and the backward the same calls in reverse, each layer's backward beside
 * its forward and computing all of that layer's gradients, in network.h's
 * six stages:
 *
 *   readout_backward             rs_softmax_xent_backward, rs_readout_backward
 *   decoder_backward             decoder_step_backward for i = T…1, then what the
 *                                steps share, once (W_a, the decoder GRU's weights)
 *   target_embeddings_backward   E y_{i−1}
 *   keys_and_init_backward       the keys, the annotations, s_0
 *   encoder_backward             both directions, j = S…1 and 1…S
 *   source_embeddings_backward   E x_j
 *
 * Every buffer's gradient is its twin, d_ and its name (network.h), passed
 * explicitly. A state has two uses: one at its own position (s_i: the
 * readout; →h_j, ←h_j: the annotation) and one in the next step (the
 * recurrence, and s_{i−1} as the attention's query). Its gradient starts as
 * the first; the next step's backward adds its share, made whole in d_h_prev
 * first. That order is part of the result: float sums are not associative.
 * Parameter gradients accumulate (+=) into the one gradient buffer, zeroed
 * once per update by the caller. */
#include <stdlib.h>
#include <string.h>

#include "nn/attention.h"
#include "nn/attention_variants.h"
#include "nn/gru.h"
#include "nn/linalg.h"
#include "nn/linear.h"
#include "nn/network.h"
#include "nn/readout.h"
#include "nn/vecmath.h"

/* ---- the layers' weights ---- */

/* Their gradients, views into a gradient buffer of the same layout, and the
 * embedding tables'. */
typedef struct {
    rs_gru_grads enc_fwd, enc_bwd, dec;
    rs_attention_grads att;
    rs_readout_grads out;
    float *init_W, *init_b;
    float *src_emb, *tgt_emb;
} layer_grads;

/* A GRU's weights: W [3n,in] (a view), W_c (data NULL: none), U [3n,n]
 * read as U_zr and U_g, b [3n]. */
static rs_gru_weights gru_weights(int n, rs_cmat W, rs_cmat W_c, const float *U, const float *b)
{
    return (rs_gru_weights){.n = n,
                            .W = RS_LINEAR(W),
                            .W_c = RS_LINEAR(W_c),
                            .U_zr = RS_LINEAR(RS_CMAT(U, 2 * n, n)),
                            .U_g = RS_LINEAR(RS_CMAT(U + (size_t)2 * n * n, n, n)),
                            .b = b};
}

rs_network_weights rs_network_weights_of(const rs_model *model)
{
    const rs_tensors *t = &model->w;
    const rs_model_config *c = &model->cfg;
    const int m = c->emb, n = c->hidden, in = m + 2 * n;
    const rs_cmat none = {NULL, 0, 0, 0};
    rs_network_weights w = {.cfg = c,
                            .n = n,
                            .init_W = t->init_W,
                            .init_b = t->init_b,
                            .src_emb = t->src_emb,
                            .tgt_emb = t->tgt_emb};
    w.enc_fwd = gru_weights(n, RS_CMAT(t->enc_fwd_W, 3 * n, m), none, t->enc_fwd_U, t->enc_fwd_b);
    w.enc_bwd = gru_weights(n, RS_CMAT(t->enc_bwd_W, 3 * n, m), none, t->enc_bwd_U, t->enc_bwd_b);
    /* W' [3n, m+2n] read as its columns for E y_{i-1} (W'_e) and for c_i (W'_c). */
    w.dec = gru_weights(n, RS_CMAT_S(t->dec_W, 3 * n, m, in),
                        RS_CMAT_S(t->dec_W + m, 3 * n, 2 * n, in), t->dec_U, t->dec_b);
    w.att = rs_attention_weights_of(t, c->attention, n, c->att);
    w.out = rs_readout_weights_of(t, m, n, c->maxout, c->tgt_vocab);
    return w;
}

static layer_grads grads_of(const rs_tensors *g, const rs_network_weights *w)
{
    const rs_model_config *c = w->cfg;
    const int m = c->emb, n = c->hidden, in = m + 2 * n;
    const rs_mat none = {NULL, 0, 0, 0};
    layer_grads d;
    d.enc_fwd = (rs_gru_grads){
        .W = RS_MAT(g->enc_fwd_W, 3 * n, m), .W_c = none, .U = g->enc_fwd_U, .b = g->enc_fwd_b};
    d.enc_bwd = (rs_gru_grads){
        .W = RS_MAT(g->enc_bwd_W, 3 * n, m), .W_c = none, .U = g->enc_bwd_U, .b = g->enc_bwd_b};
    d.dec = (rs_gru_grads){.W = RS_MAT_S(g->dec_W, 3 * n, m, in),
                           .W_c = RS_MAT_S(g->dec_W + m, 3 * n, 2 * n, in),
                           .U = g->dec_U,
                           .b = g->dec_b};
    d.att = rs_attention_grads_of(g, c->attention);
    d.out = rs_readout_grads_of(g);
    d.init_W = g->init_W;
    d.init_b = g->init_b;
    d.src_emb = g->src_emb;
    d.tgt_emb = g->tgt_emb;
    return d;
}

/* ---- embeddings and dropout ---- */

/* x [count,width] = the rows ids of table, ⊙ drop [count,width] and, by row,
 * ⊙ word [count] (either NULL: none). */
static void embedding_forward(float *x, const float *table, const int *ids, int count, int width,
                              const float *drop, const float *word)
{
    for (int r = 0; r < count; r++) {
        float *row = x + (size_t)r * width;
        memcpy(row, table + (size_t)ids[r] * width, sizeof(float) * width);
        if (drop)
            for (int k = 0; k < width; k++)
                row[k] *= drop[(size_t)r * width + k];
        if (word)
            for (int k = 0; k < width; k++)
                row[k] *= word[r];
    }
}

/* Its backward: row ids[r] of d_table += dx [count,width] row r ⊙ the same
 * multipliers, rows in order (a token's rows add up in the order they come). */
static void embedding_backward(float *d_table, const float *dx, const int *ids, int count,
                               int width, const float *drop, const float *word)
{
    for (int r = 0; r < count; r++) {
        float *dst = d_table + (size_t)ids[r] * width;
        const float *src = dx + (size_t)r * width;
        for (int k = 0; k < width; k++) {
            float d = src[k];
            if (drop)
                d *= drop[(size_t)r * width + k];
            if (word)
                d *= word[r];
            dst[k] += d;
        }
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

/* ---- the encoder ---- */

/* One direction of the bidirectional encoder (model.md, "Encoder"): its
 * buffers and their gradients. Both directions read the same source
 * embeddings; the forward one reads positions j = 1..S, the backward one
 * j = S..1, each from a zero state. states [S+1,B,n] holds them so that
 * position j (0-based here) reads states[j + reverse] and writes
 * states[j + 1 - reverse]: [0] = 0 and [j+1] = →h_{j+1} forward, [j] =
 * ←h_{j+1} and [S] = 0 backward. */
typedef struct {
    int reverse;
    const float *x, *mask;              /* [S,B,m] x̄, [S,B] (both directions') */
    float *xproj, *gates, *rh, *states; /* [S,B,3n], [S,B,3n], [S,B,n], [S+1,B,n] */
    float *d_x, *d_xproj, *d_states;    /* twins of x (both add to it), xproj, states */
    float *d_rh, *d_h_prev;             /* one step's: of rh, and its share of h_prev's */
} encoder_direction;

static encoder_direction direction_of(const rs_workspace *ws, int reverse)
{
    encoder_direction d = {.reverse = reverse,
                           .x = ws->src_x,
                           .mask = ws->src_mask,
                           .d_x = ws->d_src_x,
                           .d_rh = ws->d_rh,
                           .d_h_prev = ws->d_h_prev};
    d.xproj = reverse ? ws->bwd_xproj : ws->fwd_xproj;
    d.gates = reverse ? ws->bwd_gates : ws->fwd_gates;
    d.rh = reverse ? ws->bwd_rh : ws->fwd_rh;
    d.states = reverse ? ws->bwd_states : ws->fwd_states;
    d.d_xproj = reverse ? ws->d_bwd_xproj : ws->d_fwd_xproj;
    d.d_states = reverse ? ws->d_bwd_states : ws->d_fwd_states;
    return d;
}

/* Position j's step of direction d. */
static rs_gru_step direction_step(const encoder_direction *d, int j, int B, int n)
{
    const size_t Bn = (size_t)B * n;
    return (rs_gru_step){.h_prev = d->states + (j + d->reverse) * Bn,
                         .context = NULL,
                         .xproj = d->xproj + 3 * j * Bn,
                         .gates = d->gates + 3 * j * Bn,
                         .rh = d->rh + j * Bn,
                         .h = d->states + (j + 1 - d->reverse) * Bn};
}

/* Its gradients: dh whole in d_states, the step's share of h_prev's into
 * d_h_prev. */
static rs_gru_step_grads direction_step_grads(const encoder_direction *d, int j, int B, int n)
{
    const size_t Bn = (size_t)B * n;
    return (rs_gru_step_grads){.h = d->d_states + (j + 1 - d->reverse) * Bn,
                               .h_prev = d->d_h_prev,
                               .context = NULL,
                               .xproj = d->d_xproj + 3 * j * Bn,
                               .rh = d->d_rh};
}

/* x_proj = W x̄_j + b for every position in one product, then the
 * recurrence; the mask carries the state through padding, so each
 * sentence's backward direction starts from 0 at its own </s>. */
static void direction_forward(const encoder_direction *d, const rs_gru_weights *w, int S, int B,
                              int m)
{
    const int n = w->n;
    const size_t Bn = (size_t)B * n;
    rs_gru_input_forward(RS_MAT(d->xproj, S * B, 3 * n), RS_CMAT(d->x, S * B, m), w);
    memset(d->states + (d->reverse ? S : 0) * Bn, 0, sizeof(float) * Bn);
    for (int k = 0; k < S; k++) {
        const int j = d->reverse ? S - 1 - k : k;
        const rs_gru_step st = direction_step(d, j, B, n);
        rs_gru_step_forward(&st, w, d->mask + j * B, B);
    }
}

/* A step of a recurrence's backward is done: the caller's sums in flight
 * may move on (rs_workspace's progress). */
static void step_done(const rs_workspace *ws)
{
    if (ws->progress)
        ws->progress(ws->progress_ctx);
}

/* The recurrence backward, last position read first: each state's gradient
 * in d_states is whole once the step after it has added its share (made in
 * d_h_prev). Then what all positions share, once: the weights' gradients
 * and the input's, d_x += d_x_proj W. */
static void direction_backward(const encoder_direction *d, const rs_gru_grads *g,
                               const rs_gru_weights *w, int S, int B, int m, const rs_workspace *ws)
{
    const int n = w->n;
    const size_t Bn = (size_t)B * n;
    for (int k = S - 1; k >= 0; k--) {
        const int j = d->reverse ? S - 1 - k : k;
        const rs_gru_step st = direction_step(d, j, B, n);
        const rs_gru_step_grads dst = direction_step_grads(d, j, B, n);
        memset(d->d_h_prev, 0, sizeof(float) * Bn);
        rs_gru_step_backward(&dst, &st, w, d->mask + j * B, B);
        /* h_prev's gradient: its annotation's share (there already), then this step's. */
        rs_vaxpy(d->d_states + (j + d->reverse) * Bn, 1.0f, d->d_h_prev, Bn);
        step_done(ws);
    }
    const rs_gru_run run = {.x = RS_CMAT(d->x, S * B, m),
                            .context = RS_CMAT(NULL, 0, 0),
                            .h_prev = RS_CMAT(d->states + d->reverse * Bn, S * B, n),
                            .rh = RS_CMAT(d->rh, S * B, n)};
    rs_gru_weights_backward(RS_MAT(d->d_x, S * B, m), g, RS_CMAT(d->d_xproj, S * B, 3 * n), &run,
                            w);
}

/* h_j = [→h_j ; ←h_j] ⊙ drop (drop [S,B,2n], or NULL). */
static void annotations_forward(float *annotations, const float *fwd_states,
                                const float *bwd_states, const float *drop, int S, int B, int n)
{
    const size_t Bn = (size_t)B * n, count = (size_t)S * B * 2 * n;
    for (int j = 0; j < S; j++)
        for (int b = 0; b < B; b++) {
            float *h = annotations + ((size_t)j * B + b) * 2 * n;
            memcpy(h, fwd_states + (j + 1) * Bn + (size_t)b * n, sizeof(float) * n);
            memcpy(h + n, bwd_states + j * Bn + (size_t)b * n, sizeof(float) * n);
        }
    if (drop)
        for (size_t i = 0; i < count; i++)
            annotations[i] *= drop[i];
}

/* Its backward: the states' gradients start as their annotation's share,
 * d→h_j = d_annotations ⊙ drop (forward half), d←h_j the backward half;
 * the states nothing reads (the zero ones) start at 0. */
static void annotations_backward(float *d_fwd_states, float *d_bwd_states,
                                 const float *d_annotations, const float *drop, int S, int B, int n)
{
    const size_t Bn = (size_t)B * n;
    memset(d_fwd_states, 0, sizeof(float) * Bn);
    memset(d_bwd_states + S * Bn, 0, sizeof(float) * Bn);
    for (int j = 0; j < S; j++)
        for (int b = 0; b < B; b++)
            for (int half = 0; half < 2; half++) {
                const size_t at = ((size_t)j * B + b) * 2 * n + (size_t)half * n;
                float *dh = half ? d_bwd_states + j * Bn + (size_t)b * n
                                 : d_fwd_states + (j + 1) * Bn + (size_t)b * n;
                for (int k = 0; k < n; k++)
                    dh[k] = drop ? d_annotations[at + k] * drop[at + k] : d_annotations[at + k];
            }
}

/* s_0 = tanh(W_init h1 + b_init) over B rows, h1 = ←h_1 [B,n] (written in
 * s0's place, then squashed). */
static void init_forward(float *s0, const float *h1, const rs_network_weights *w, int B)
{
    const int n = w->n;
    const rs_linear W_init = RS_LINEAR(RS_CMAT(w->init_W, n, n));
    rs_linear_forward(RS_MAT(s0, B, n), RS_CMAT(h1, B, n), &W_init, 0.0f);
    rs_add_bias(s0, w->init_b, B, n, n);
    rs_vtanh(s0, s0, (size_t)B * n);
}

/* Its backward from d_s0 [B,n]: d_pre [B,n] (written) the gradient of
 * W_init h1 + b_init, the weights' gradients into g, and d_h1 [B,n] +=
 * d_pre W_init. */
static void init_backward(float *d_h1, float *d_pre, const layer_grads *g, const float *d_s0,
                          const float *s0, const float *h1, const rs_network_weights *w, int B)
{
    const int n = w->n;
    /* forward was: s_0 = tanh(pre). */
    for (size_t k = 0; k < (size_t)B * n; k++)
        d_pre[k] = d_s0[k] * (1.0f - s0[k] * s0[k]);
    /* forward was: pre = W_init h1 + b_init. */
    rs_matmul_backward_weight(RS_MAT(g->init_W, n, n), RS_CMAT(d_pre, B, n), RS_CMAT(h1, B, n));
    rs_add_row_sums(g->init_b, d_pre, B, n, n);
    rs_matmul_backward_input(RS_MAT(d_h1, B, n), RS_CMAT(d_pre, B, n), RS_CMAT(w->init_W, n, n),
                             1.0f);
}

void rs_encode(rs_workspace *ws, const rs_network_weights *w, const rs_batch *batch)
{
    const int B = batch->B, S = batch->S, m = w->cfg->emb, n = w->n;
    const int ka = rs_attention_key_size(w->cfg->attention, n, w->cfg->att);
    const int drop = ws->dropout.element > 0.0f, word = ws->dropout.src_word > 0.0f;
    if (drop) {
        dropout_mask(ws->drop_src, (size_t)S * B * m, ws->dropout.element, &ws->dropout_rng,
                     DROP_SRC);
        dropout_mask(ws->drop_ann, (size_t)S * B * 2 * n, ws->dropout.element, &ws->dropout_rng,
                     DROP_ANN);
    }
    if (word)
        dropout_mask(ws->drop_src_word, (size_t)S * B, ws->dropout.src_word, &ws->dropout_rng,
                     DROP_SRC_WORD);
    /* x̄_j = E x_j ⊙ drop_src ⊙ drop_src_word (by row) */
    embedding_forward(ws->src_x, w->src_emb, batch->src, S * B, m, drop ? ws->drop_src : NULL,
                      word ? ws->drop_src_word : NULL);
    for (int j = 0; j < S; j++)
        for (int b = 0; b < B; b++)
            ws->src_mask[j * B + b] = j < batch->src_len[b] ? 1.0f : 0.0f;

    const encoder_direction fwd = direction_of(ws, 0), bwd = direction_of(ws, 1);
    direction_forward(&fwd, &w->enc_fwd, S, B, m);
    direction_forward(&bwd, &w->enc_bwd, S, B, m);
    annotations_forward(ws->annotations, ws->fwd_states, ws->bwd_states, drop ? ws->drop_ann : NULL,
                        S, B, n);
    rs_attention_keys_forward(RS_MAT(ws->keys, S * B, ka), RS_CMAT(ws->annotations, S * B, 2 * n),
                              &w->att);
    /* bwd_states[0] is ←h_1 of every row. */
    init_forward(ws->dec_states, ws->bwd_states, w, B);
}

/* The backward of rs_encode, its steps in reverse, in three stages: the
 * attention keys, the annotations and the initial decoder state; the two
 * directions; the source embeddings. On entry d_annotations holds what every
 * decoder step's attention sent back and d_dec_states[0] holds dL/ds_0. */
static void keys_and_init_backward(const rs_workspace *ws, const layer_grads *g,
                                   const rs_network_weights *w, const rs_batch *batch)
{
    const int B = batch->B, S = batch->S, n = w->n;
    const int ka = rs_attention_key_size(w->cfg->attention, n, w->cfg->att);
    const int drop = ws->dropout.element > 0.0f;
    rs_attention_keys_backward(RS_MAT(ws->d_annotations, S * B, 2 * n), &g->att,
                               RS_CMAT(ws->d_keys, S * B, ka),
                               RS_CMAT(ws->annotations, S * B, 2 * n), &w->att);
    annotations_backward(ws->d_fwd_states, ws->d_bwd_states, ws->d_annotations,
                         drop ? ws->drop_ann : NULL, S, B, n);
    /* ←h_1 is read by s_0 too: its share joins the annotation's. */
    init_backward(ws->d_bwd_states, ws->d_init_pre, g, ws->d_dec_states, ws->dec_states,
                  ws->bwd_states, w, B);
}

static void encoder_backward(const rs_workspace *ws, const layer_grads *g,
                             const rs_network_weights *w, const rs_batch *batch)
{
    const int B = batch->B, S = batch->S, m = w->cfg->emb;
    const encoder_direction fwd = direction_of(ws, 0), bwd = direction_of(ws, 1);
    /* Both directions read src_x: its gradient is the sum of theirs. */
    memset(ws->d_src_x, 0, sizeof(float) * (size_t)S * B * m);
    direction_backward(&fwd, &g->enc_fwd, &w->enc_fwd, S, B, m, ws);
    direction_backward(&bwd, &g->enc_bwd, &w->enc_bwd, S, B, m, ws);
}

static void source_embeddings_backward(const rs_workspace *ws, const layer_grads *g,
                                       const rs_network_weights *w, const rs_batch *batch)
{
    const int drop = ws->dropout.element > 0.0f, word = ws->dropout.src_word > 0.0f;
    /* forward was: src_x = E x_j ⊙ drop_src ⊙ drop_src_word (by row). */
    embedding_backward(g->src_emb, ws->d_src_x, batch->src, batch->S * batch->B, w->cfg->emb,
                       drop ? ws->drop_src : NULL, word ? ws->drop_src_word : NULL);
}

/* ---- the decoder ---- */

/* The buffers of one decoder step (model.md): the attention over the source
 * with query s_{i-1}, then s_i = GRU(s_{i-1}, W' [E y_{i-1} ; c_i] + b'),
 * whose context is the attention's; and their gradients. */
typedef struct {
    rs_attention_step att;
    rs_gru_step gru;
} decoder_step;

typedef struct {
    rs_attention_step_grads att;
    rs_gru_step_grads gru;
} decoder_step_grads;

/* Step i = t + 1 of the training workspace: s_{i-1} is dec_states[t]. */
static decoder_step training_step(const rs_workspace *ws, int t, int B, int S, int n, int ka)
{
    const size_t Bn = (size_t)B * n, Bt = (size_t)t * B;
    const float *s_prev = ws->dec_states + t * Bn;
    float *context = ws->context + Bt * 2 * n;
    return (decoder_step){.att = {.query = s_prev,
                                  .query_proj = ws->query_proj,
                                  .hidden = ws->att_hidden + Bt * S * ka,
                                  .alpha = ws->alpha + Bt * S,
                                  .context = context},
                          .gru = {.h_prev = s_prev,
                                  .context = context,
                                  .xproj = ws->dec_xproj + 3 * t * Bn,
                                  .gates = ws->dec_gates + 3 * t * Bn,
                                  .rh = ws->dec_rh + t * Bn,
                                  .h = ws->dec_states + (t + 1) * Bn}};
}

/* Its gradients: dL/ds_i whole in d_dec_states, the step's share of
 * s_{i-1}'s (the GRU's and the query's) into d_h_prev. */
static decoder_step_grads training_step_grads(const rs_workspace *ws, int t, int B, int n, int ka)
{
    const size_t Bn = (size_t)B * n, Bt = (size_t)t * B;
    float *d_context = ws->d_context + Bt * 2 * n;
    return (decoder_step_grads){.att = {.context = d_context,
                                        .query = ws->d_h_prev,
                                        .query_proj = ws->d_query_proj + Bt * ka,
                                        .keys = ws->d_keys,
                                        .annotations = ws->d_annotations,
                                        .alpha = ws->d_alpha,
                                        .scores = ws->d_scores},
                                .gru = {.h = ws->d_dec_states + (t + 1) * Bn,
                                        .h_prev = ws->d_h_prev,
                                        .context = d_context,
                                        .xproj = ws->d_dec_xproj + 3 * t * Bn,
                                        .rh = ws->d_rh}};
}

/* mask [B] (0: the sentence has ended, the state is carried) or NULL.
 * st->gru.xproj holds W'_e E y_{i-1} + b' on entry (all steps' at once). */
static void decoder_step_forward(const decoder_step *st, const rs_attention_source *src,
                                 const float *mask, const rs_network_weights *w, int B)
{
    if (w->att.kind == RS_ATT_ADDITIVE) /* the paper's score */
        rs_attention_forward(&st->att, src, &w->att);
    else
        rs_attention_variant_forward(&st->att, src, &w->att);
    rs_gru_step_forward(&st->gru, &w->dec, mask, B);
}

/* Its backward, the forward in reverse: the GRU (and the context's share of
 * its input projection), the attention. */
static void decoder_step_backward(const decoder_step_grads *d, const layer_grads *g,
                                  const decoder_step *st, const rs_attention_source *src,
                                  const float *mask, const rs_network_weights *w, int B)
{
    rs_gru_step_backward(&d->gru, &st->gru, &w->dec, mask, B);
    if (w->att.kind == RS_ATT_ADDITIVE)
        rs_attention_backward(&d->att, &g->att, &st->att, src, &w->att);
    else
        rs_attention_variant_backward(&d->att, &g->att, &st->att, src, &w->att);
}

/* The deep output's buffers and inputs over the R = T·B target positions. */
static rs_readout_acts readout_acts(const rs_workspace *ws)
{
    return (rs_readout_acts){.tpre = ws->tpre,
                             .tmax = ws->tmax,
                             .logits = ws->logits,
                             .which = ws->which,
                             .t_mask = ws->dropout.element > 0.0f ? ws->drop_out : NULL};
}

static rs_readout_inputs readout_inputs(const rs_workspace *ws, int B, int T, int m, int n)
{
    const int R = T * B;
    return (rs_readout_inputs){.states = RS_CMAT(ws->dec_states + (size_t)B * n, R, n),
                               .prev_emb = RS_CMAT(ws->dec_emb, R, m),
                               .context = RS_CMAT(ws->context, R, 2 * n)};
}

double rs_network_forward(rs_workspace *ws, const rs_network_weights *w, const rs_batch *batch)
{
    const rs_model_config *c = w->cfg;
    const int B = batch->B, S = batch->S, T = batch->T, R = T * B;
    const int m = c->emb, n = c->hidden, l = c->maxout, V = c->tgt_vocab;
    const int ka = rs_attention_key_size(c->attention, n, c->att);
    const int drop = ws->dropout.element > 0.0f, word = ws->dropout.tgt_word > 0.0f;

    rs_encode(ws, w, batch);

    if (drop) {
        dropout_mask(ws->drop_emb, (size_t)R * m, ws->dropout.element, &ws->dropout_rng, DROP_EMB);
        dropout_mask(ws->drop_out, (size_t)R * l, ws->dropout.element, &ws->dropout_rng, DROP_OUT);
    }
    if (word)
        dropout_mask(ws->drop_tgt_word, (size_t)R, ws->dropout.tgt_word, &ws->dropout_rng,
                     DROP_TGT_WORD);
    /* E y_{i-1} ⊙ drop_emb ⊙ drop_tgt_word (by row): one mask for the decoder
     * GRU and the deep output, which both read it. */
    embedding_forward(ws->dec_emb, w->tgt_emb, batch->tgt_in, R, m, drop ? ws->drop_emb : NULL,
                      word ? ws->drop_tgt_word : NULL);
    for (int t = 0; t < T; t++)
        for (int b = 0; b < B; b++)
            ws->tgt_mask[t * B + b] = t < batch->tgt_len[b] ? 1.0f : 0.0f;
    /* u_i = [E y_{i-1} ; c_i]: the embedding's part of W' u_i + b', all steps at once. */
    rs_gru_input_forward(RS_MAT(ws->dec_xproj, R, 3 * n), RS_CMAT(ws->dec_emb, R, m), &w->dec);

    const rs_attention_source src = {.keys = ws->keys,
                                     .annotations = ws->annotations,
                                     .src_len = batch->src_len,
                                     .B = B,
                                     .S = S};
    for (int t = 0; t < T; t++) {
        const decoder_step st = training_step(ws, t, B, S, n, ka);
        decoder_step_forward(&st, &src, ws->tgt_mask + t * B, w, B);
    }

    const rs_readout_acts acts = readout_acts(ws);
    const rs_readout_inputs in = readout_inputs(ws, B, T, m, n);
    rs_readout_forward(&acts, &in, &w->out);
    return rs_softmax_xent_forward(ws->probs, ws->nll, ws->logits, batch->tgt_out, R, V);
}

/* The forward pass's calls in reverse, in the stages of network.h: loss and
 * deep output, the decoder steps last first (then what they share, once),
 * the target embeddings, the encoder's. Every parameter gradient accumulates
 * (+=) into grads. */

/* The loss and the deep output. */
static void readout_backward(const rs_workspace *ws, const layer_grads *g,
                             const rs_network_weights *w, const rs_batch *batch, float smoothing,
                             float scale)
{
    const rs_model_config *c = w->cfg;
    const int B = batch->B, T = batch->T, R = T * B;
    const int m = c->emb, n = c->hidden, V = c->tgt_vocab;
    const size_t Bn = (size_t)B * n;
    rs_softmax_xent_backward(ws->d_logits, ws->probs, batch->tgt_out, smoothing, scale, R, V);
    /* The readout writes the first share of dL/ds_i (i = 1..T) and adds the
     * first of E y_{i-1}'s and c_i's; s_0 has no readout. */
    memset(ws->d_dec_states, 0, sizeof(float) * Bn);
    memset(ws->d_dec_emb, 0, sizeof(float) * (size_t)R * m);
    memset(ws->d_context, 0, sizeof(float) * (size_t)R * 2 * n);
    const rs_readout_acts acts = readout_acts(ws);
    const rs_readout_acts d_acts = {.tpre = ws->d_tpre, .tmax = ws->d_tmax, .logits = ws->d_logits};
    const rs_readout_inputs in = readout_inputs(ws, B, T, m, n);
    const rs_readout_input_grads d_in = {.states = RS_MAT(ws->d_dec_states + Bn, R, n),
                                         .prev_emb = RS_MAT(ws->d_dec_emb, R, m),
                                         .context = RS_MAT(ws->d_context, R, 2 * n)};
    rs_readout_backward(&d_acts, &d_in, &g->out, &acts, &in, &w->out);
}

/* The decoder through time, then what every step shares, once. */
static void decoder_backward(const rs_workspace *ws, const layer_grads *g,
                             const rs_network_weights *w, const rs_batch *batch)
{
    const rs_model_config *c = w->cfg;
    const int B = batch->B, S = batch->S, T = batch->T, R = T * B;
    const int m = c->emb, n = c->hidden;
    const int ka = rs_attention_key_size(c->attention, n, c->att);
    const size_t Bn = (size_t)B * n;
    /* Step i sends back the second share of dL/ds_{i-1} (recurrence and
     * query), and its share of every annotation's and key's. */
    memset(ws->d_annotations, 0, sizeof(float) * (size_t)S * B * 2 * n);
    memset(ws->d_keys, 0, sizeof(float) * (size_t)S * B * ka);
    const rs_attention_source src = {.keys = ws->keys,
                                     .annotations = ws->annotations,
                                     .src_len = batch->src_len,
                                     .B = B,
                                     .S = S};
    for (int t = T - 1; t >= 0; t--) {
        const decoder_step st = training_step(ws, t, B, S, n, ka);
        const decoder_step_grads dst = training_step_grads(ws, t, B, n, ka);
        memset(ws->d_h_prev, 0, sizeof(float) * Bn);
        decoder_step_backward(&dst, g, &st, &src, ws->tgt_mask + t * B, w, B);
        rs_vaxpy(ws->d_dec_states + t * Bn, 1.0f, ws->d_h_prev, Bn);
        step_done(ws);
    }

    /* What every step shares, once: W_a of the attention's query side, and
     * the decoder GRU's weights (x_proj = W'_e E y_{i-1} + W'_c c_i + b'). */
    rs_attention_query_backward(&g->att, RS_CMAT(ws->d_query_proj, R, ka),
                                RS_CMAT(ws->dec_states, R, n), &w->att);
    const rs_gru_run run = {.x = RS_CMAT(ws->dec_emb, R, m),
                            .context = RS_CMAT(ws->context, R, 2 * n),
                            .h_prev = RS_CMAT(ws->dec_states, R, n),
                            .rh = RS_CMAT(ws->dec_rh, R, n)};
    rs_gru_weights_backward(RS_MAT(ws->d_dec_emb, R, m), &g->dec,
                            RS_CMAT(ws->d_dec_xproj, R, 3 * n), &run, &w->dec);
}

static void target_embeddings_backward(const rs_workspace *ws, const layer_grads *g,
                                       const rs_network_weights *w, const rs_batch *batch)
{
    const int drop = ws->dropout.element > 0.0f, word = ws->dropout.tgt_word > 0.0f;
    /* forward was: dec_emb = E y_{i-1} ⊙ drop_emb ⊙ drop_tgt_word (by row). */
    embedding_backward(g->tgt_emb, ws->d_dec_emb, batch->tgt_in, batch->T * batch->B, w->cfg->emb,
                       drop ? ws->drop_emb : NULL, word ? ws->drop_tgt_word : NULL);
}

/* The tensors each stage completes (network.h). */
static const int stage_tensors[RS_BACKWARD_STAGES][2] = {
    [RS_BACKWARD_READOUT] = {RS_P_out_U, RS_P_out_bw},
    [RS_BACKWARD_DECODER] = {RS_P_dec_W, RS_P_dec_b},
    [RS_BACKWARD_TARGET_EMBEDDINGS] = {RS_P_tgt_emb, RS_P_tgt_emb},
    [RS_BACKWARD_KEYS_AND_INIT] = {RS_P_init_W, RS_P_att_K},
    [RS_BACKWARD_ENCODER] = {RS_P_enc_fwd_W, RS_P_enc_bwd_b},
    [RS_BACKWARD_SOURCE_EMBEDDINGS] = {RS_P_src_emb, RS_P_src_emb},
};

void rs_backward_stage_tensors(rs_backward_stage stage, int *first, int *last)
{
    *first = stage_tensors[stage][0];
    *last = stage_tensors[stage][1];
}

void rs_network_backward_stage(rs_workspace *ws, const rs_network_weights *w, const rs_batch *batch,
                               const rs_tensors *grads, float smoothing, float scale,
                               rs_backward_stage stage)
{
    const layer_grads g = grads_of(grads, w);
    switch (stage) {
    case RS_BACKWARD_READOUT: readout_backward(ws, &g, w, batch, smoothing, scale); break;
    case RS_BACKWARD_DECODER: decoder_backward(ws, &g, w, batch); break;
    case RS_BACKWARD_TARGET_EMBEDDINGS: target_embeddings_backward(ws, &g, w, batch); break;
    case RS_BACKWARD_KEYS_AND_INIT: keys_and_init_backward(ws, &g, w, batch); break;
    case RS_BACKWARD_ENCODER: encoder_backward(ws, &g, w, batch); break;
    case RS_BACKWARD_SOURCE_EMBEDDINGS: source_embeddings_backward(ws, &g, w, batch); break;
    case RS_BACKWARD_STAGES: /* not a stage */ break;
    }
}

void rs_network_backward(rs_workspace *ws, const rs_network_weights *w, const rs_batch *batch,
                         const rs_tensors *grads, float smoothing, float scale)
{
    for (int s = 0; s < RS_BACKWARD_STAGES; s++)
        rs_network_backward_stage(ws, w, batch, grads, smoothing, scale, (rs_backward_stage)s);
}

/* ---- one decoder step, for translation ---- */

void rs_network_step(rs_workspace *ws, const rs_step_out *out, const float *state, const int *prev,
                     const rs_attention_source *src, const rs_network_weights *w)
{
    const int B = src->B, m = w->cfg->emb, n = w->n;
    embedding_forward(ws->dec_emb, w->tgt_emb, prev, B, m, NULL, NULL);
    rs_gru_input_forward(RS_MAT(ws->dec_xproj, B, 3 * n), RS_CMAT(ws->dec_emb, B, m), &w->dec);
    const decoder_step st = {.att = {.query = state,
                                     .query_proj = ws->query_proj,
                                     .hidden = ws->att_hidden,
                                     .alpha = out->alpha,
                                     .context = ws->context},
                             .gru = {.h_prev = state,
                                     .context = ws->context,
                                     .xproj = ws->dec_xproj,
                                     .gates = ws->dec_gates,
                                     .rh = ws->dec_rh,
                                     .h = out->next_state}};
    decoder_step_forward(&st, src, NULL, w, B);
    /* t_i = maxout(U_o s_i + V_o E y_{i-1} + C_o c_i + b_o): the step ends here;
     * the output layer over the words the search asks for is its own. */
    const rs_readout_acts acts = {.tpre = ws->tpre, .tmax = out->t, .which = ws->which};
    const rs_readout_inputs in = {.states = RS_CMAT(out->next_state, B, n),
                                  .prev_emb = RS_CMAT(ws->dec_emb, B, m),
                                  .context = RS_CMAT(ws->context, B, 2 * n)};
    rs_readout_maxout_forward(&acts, &in, &w->out);
}
