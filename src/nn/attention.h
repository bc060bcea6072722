/* The alignment model: scores ε_ij of every source annotation h_j against the
 * decoder's query s_{i-1}, weights α_ij = softmax_j(ε_ij) over the real source
 * positions only (padding gets α = 0 exactly), context c_i = Σ_j α_ij h_j.
 *
 *   additive (model.md):  φ_ij = tanh(W_a s_{i-1} + U_a h_j + b_a),  ε_ij = v_a · φ_ij
 *   general:              ε_ij = s_{i-1} · (K h_j)
 *   scaled-dot:           ε_ij = s_{i-1} · (K h_j) / √n
 *   none:                 no scores: c_i = c = [→h_S ; ←h_1] for every i, S the
 *                         sentence's own length, and α_ij = 0 (no alignment)
 *
 * The key side (U_a h_j + b_a, or K h_j) does not depend on i: it is computed
 * once per batch for all positions (rs_attention_keys_forward), and its
 * gradients once after all steps (rs_attention_keys_backward); so is the
 * query side's dW_a (rs_attention_query_backward). A step's forward and
 * backward are rs_attention_forward and rs_attention_backward for the
 * paper's additive score (attention.c), rs_attention_variant_forward and
 * _backward for the others (attention_variants.h); the decoder step
 * (network.c) calls the one of its model's kind.
 * Shapes: B batch, S source length (max of the batch), n hidden, 2n annotation,
 * a attention size, ka key size (a for additive, 0 for none, n otherwise).
 * Source-side tensors are time-major: annotations [S,B,2n], keys [S,B,ka]. */
#ifndef RS_ATTENTION_H
#define RS_ATTENTION_H

#include "model/params.h"
#include "nn/linalg.h"
#include "nn/linear.h"

/* Key size for the kind: a (additive), 0 (none: no keys) or n. */
int rs_attention_key_size(int kind, int n, int a);

/* The attention's weights: kind, n hidden, a attention size; the query side
 * W_a [a,n] and v_a [a] (additive; data NULL otherwise); the key side U,
 * which is U_a [a,2n] with b_a [a] (additive) or K [n,2n] with no bias;
 * none has no tensors (all NULL). */
typedef struct {
    int kind, n, a;
    rs_linear W;    /* W_a [a,n] */
    const float *v; /* v_a [a] */
    rs_linear U;    /* U_a [a,2n] or K [n,2n] */
    const float *b; /* b_a [a] or NULL */
} rs_attention_weights;

/* Their gradients, the same shapes and names; all accumulate (+=). */
typedef struct {
    float *W, *v, *U, *b;
} rs_attention_grads;

/* The views of the attention's tensors in t (the parameters or, with
 * grads_of, a gradient buffer of the same layout): the one place that
 * knows the key side is att.U for additive attention and att.K otherwise. */
rs_attention_weights rs_attention_weights_of(const rs_tensors *t, int kind, int n, int a);
rs_attention_grads rs_attention_grads_of(const rs_tensors *g, int kind);

/* keys [R,ka] = annotations [R,2n] Uᵀ (+ b_a for additive), R = S·B;
 * nothing for none. */
void rs_attention_keys_forward(rs_mat keys, rs_cmat annotations, const rs_attention_weights *w);

/* Its backward: annotations' gradient d_annotations [R,2n] += d_keys U;
 * dU += d_keysᵀ annotations; db += Σ d_keys (additive). */
void rs_attention_keys_backward(rs_mat d_annotations, const rs_attention_grads *g, rs_cmat d_keys,
                                rs_cmat annotations, const rs_attention_weights *w);

/* What a step's B rows attend over: the keys [S,N,ka] and annotations
 * [S,N,2n] of N sentences (time-major, as the encoder wrote them); row b
 * reads sentence sentence[b] (sentence NULL: row b reads sentence b, N = B),
 * whose src_len[b] (≥ 1) real positions come first, S at most. The map lets
 * the K rows of a beam, or the rows left when others have finished, read
 * their sentence where the encoder put it, with no copy (Marian's mapped
 * context). */
typedef struct {
    const float *keys, *annotations;
    const int *src_len;
    int B, S;
    const int *sentence; /* [B] or NULL */
    int N;               /* sentences in keys and annotations (their row stride) */
} rs_attention_source;

/* One step's buffers over B rows. Read: query s_{i-1} [B,n]. Written:
 * query_proj [B,a] W_a s_{i-1} and hidden [B,S,a] the φ_ij (additive; NULL
 * otherwise), alpha [B,S] the α_ij, context [B,2n] c_i. */
typedef struct {
    const float *query;
    float *query_proj, *hidden, *alpha, *context;
} rs_attention_step;

/* The gradients of a step's buffers and of the source it read, named as
 * they are: context [B,2n] = dL/dc_i (read); query [B,n] accumulates (+=);
 * query_proj [B,a] is written (additive); keys and annotations, laid out as
 * the source's, accumulate. alpha and scores [S] are one row's dL/dα and
 * dL/dε, rewritten for each row (the weights and scores of all rows are not
 * needed at once). */
typedef struct {
    const float *context;
    float *query, *query_proj;
    float *keys, *annotations;
    float *alpha, *scores;
} rs_attention_step_grads;

/* What every kind's step shares (attention.c). */
/* Row b's sentence, and the sentences' row stride (see rs_attention_source). */
int rs_attention_sentence(const rs_attention_source *src, int b);
int rs_attention_source_rows(const rs_attention_source *src);

/* Row b of a step, once its scores ε_j are in alpha [S] (j < src_len[b]):
 * α = softmax(ε) in place (0 past src_len[b]), context [2n] c = Σ_j α_j h_j. */
void rs_attention_weigh(float *alpha, float *context, const rs_attention_source *src, int b,
                        int n2);

/* Its backward from dc [2n]: dh_j += α_j dc into d->annotations, and
 * d->scores[j] = dε_j (d->alpha holds dα_j). */
void rs_attention_weigh_backward(const rs_attention_step_grads *d, const float *alpha,
                                 const float *dc, const rs_attention_source *src, int b, int n2);

/* The additive score's step (w->kind RS_ATT_ADDITIVE): c_i = Σ_j α_ij h_j
 * with α_i = softmax_j(v_a · tanh(W_a s_{i-1} + key_j)). */
void rs_attention_forward(const rs_attention_step *st, const rs_attention_source *src,
                          const rs_attention_weights *w);

/* Its backward, into d and (dv_a, per step) g. */
void rs_attention_backward(const rs_attention_step_grads *d, const rs_attention_grads *g,
                           const rs_attention_step *st, const rs_attention_source *src,
                           const rs_attention_weights *w);

/* The query side's weights over all R = T·B steps' rows at once (additive;
 * nothing otherwise): dW_a += d_query_projᵀ queries, d_query_proj [R,a] the
 * steps' query_proj gradients, queries [R,n] their s_{i-1}. */
void rs_attention_query_backward(const rs_attention_grads *g, rs_cmat d_query_proj, rs_cmat queries,
                                 const rs_attention_weights *w);

/* Softmax of x[0..len) in place; entries len..total-1 set to exactly 0. */
void rs_attention_softmax(float *x, int len, int total);

#endif
