/* The alignment model: scores ε_ij of every source annotation h_j against the
 * decoder's query s_{i-1}, weights α_ij = softmax_j(ε_ij) over the real source
 * positions only (padding gets α = 0 exactly), context c_i = Σ_j α_ij h_j.
 *
 *   additive (model.md):  ε_ij = v_a · tanh(W_a s_{i-1} + U_a h_j + b_a)
 *   general, dot:         ε_ij = s_{i-1} · (K h_j)
 *   scaled-dot:           ε_ij = s_{i-1} · (K h_j) / √n
 *
 * The key side (U_a h_j + b_a, or K h_j) does not depend on i: it is computed
 * once per batch for all positions (rs_attention_keys_forward).
 * Shapes: B batch, S source length (max of the batch), n hidden, 2n annotation,
 * a attention size, ka key size (a for additive, n otherwise).
 * Source-side tensors are time-major: annotations [S,B,2n], keys [S,B,ka]. */
#ifndef RS_ATTENTION_H
#define RS_ATTENTION_H

#include "model/params.h"

/* Key size for the kind: a (additive) or n. */
int rs_attention_key_size(int kind, int n, int a);

/* keys [R,ka] = annotations [R,2n] · U^T (+ b for additive); U is att.U or att.K. */
void rs_attention_keys_forward(int kind, float *keys, const float *annotations, const float *U,
                               const float *b, int R, int n, int a);

/* dannotations [R,2n] += dkeys U; dU += dkeys^T annotations; db += Σ dkeys (additive). */
void rs_attention_keys_backward(int kind, float *dannotations, float *dU, float *db,
                                const float *dkeys, const float *annotations, const float *U, int R,
                                int n, int a);

/* The weights of one step's attention: kind, n hidden, a attention size;
 * W_a [a,n] and v_a [a] (additive only, NULL otherwise). */
typedef struct {
    int kind, n, a;
    const float *W_a, *v_a;
} rs_attention_weights;

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

/* What a step's forward keeps for its backward: alpha [B,S] the weights;
 * hidden [B,S,a] tanh(W_a s + key) (additive; NULL otherwise); query_proj
 * [B,a] W_a s (additive; scratch). */
typedef struct {
    float *alpha, *hidden, *query_proj;
} rs_attention_saved;

/* Gradients a step's backward accumulates (+=): query [B,n], annotations
 * [S,B,2n], keys [S,B,ka], v_a [a]; query_proj [B,a] is written (additive:
 * dL/d(W_a s), for the caller's dW_a hoisted over all steps). */
typedef struct {
    float *query, *annotations, *keys, *query_proj, *v_a;
} rs_attention_grads;

/* context [B,2n] = Σ_j α_j h_j with α = softmax_j(ε(query [B,n], key_j)). */
void rs_attention_forward(float *context, const rs_attention_saved *saved, const float *query,
                          const rs_attention_source *src, const rs_attention_weights *w);

/* The backward of rs_attention_forward for dcontext [B,2n]; scratch [S]. */
void rs_attention_backward(const rs_attention_grads *d, const float *dcontext,
                           const rs_attention_saved *saved, const float *query,
                           const rs_attention_source *src, const rs_attention_weights *w,
                           float *scratch);

/* Softmax of x[0..len) in place; entries len..total-1 set to exactly 0. */
void rs_attention_softmax(float *x, int len, int total);

#endif
