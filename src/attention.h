/* The alignment model: scores ε_ij of every source annotation h_j against the
 * decoder's query s_{i-1}, weights α_ij = softmax_j(ε_ij) over the real source
 * positions only (padding gets α = 0 exactly), context c_i = Σ_j α_ij h_j.
 *
 *   additive (model.md):  ε_ij = v_a · tanh(W_a s_{i-1} + U_a h_j + b_a)
 *   general, dot:         ε_ij = s_{i-1} · (K h_j)
 *   scaled-dot:           ε_ij = s_{i-1} · (K h_j) / √n
 *
 * The key side (U_a h_j + b_a, or K h_j) does not depend on i: it is computed
 * once per batch for all positions (attention_keys_forward).
 * Shapes: B batch, S source length (max of the batch), n hidden, 2n annotation,
 * a attention size, ka key size (a for additive, n otherwise).
 * Source-side tensors are time-major: annotations [S,B,2n], keys [S,B,ka]. */
#ifndef RS_ATTENTION_H
#define RS_ATTENTION_H

#include "params.h"

/* Key size for the kind: a (additive) or n. */
int attention_key_size(int kind, int n, int a);

/* keys [R,ka] = annotations [R,2n] · U^T (+ b for additive); U is att.U or att.K. */
void attention_keys_forward(int kind, float *keys, const float *annotations, const float *U,
                            const float *b, int R, int n, int a);

/* dannotations [R,2n] += dkeys U; dU += dkeys^T annotations; db += Σ dkeys (additive). */
void attention_keys_backward(int kind, float *dannotations, float *dU, float *db,
                             const float *dkeys, const float *annotations, const float *U,
                             int R, int n, int a);

/* One decoder step. alpha [B,S]; context [B,2n]; hidden [B,S,a] saved tanh
 * (additive; NULL otherwise); query_proj [B,a] scratch; query [B,n];
 * src_len [B] real lengths (≥ 1); W_a [a,n], v_a [a] (additive only). */
void attention_forward(int kind, float *alpha, float *context, float *hidden, float *query_proj,
                       const float *query, const float *keys, const float *annotations,
                       const int *src_len, const float *W_a, const float *v_a, int B, int S,
                       int n, int a);

/* Backward of one step, accumulating (+=) into dquery [B,n], dannotations
 * [S,B,2n], dkeys [S,B,ka] and dv_a [a]; dquery_proj [B,a] is written
 * (additive: dL/d(W_a s), for the caller's hoisted dW_a). scratch [S]. */
void attention_backward(int kind, float *dquery, float *dannotations, float *dkeys,
                        float *dquery_proj, float *dv_a, const float *dcontext,
                        const float *alpha, const float *hidden, const float *query,
                        const float *keys, const float *annotations, const int *src_len,
                        const float *W_a, const float *v_a, int B, int S, int n, int a,
                        float *scratch);

/* Softmax of x[0..len) in place; entries len..total-1 set to exactly 0. */
void attention_softmax(float *x, int len, int total);

#endif
