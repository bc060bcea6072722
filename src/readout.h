/* The deep output with maxout (model.md; Bahdanau et al. A.2.2) and the
 * softmax cross-entropy over the target vocabulary:
 *
 *   t~_i   = U_o s_i + V_o E y_{i-1} + C_o c_i + b_o       [2l]
 *   t_i[k] = max(t~_i[2k], t~_i[2k+1])                     [l]
 *   p(y_i) = softmax(W_out t_i + b_out)                    [Vt]
 *
 * None of this recurs, so it runs over all R = T × B target positions at once:
 * four GEMMs forward (U_o, V_o, C_o, W_out). Shapes: R rows, n hidden,
 * m embedding, l maxout units, V target vocabulary. */
#ifndef RS_READOUT_H
#define RS_READOUT_H

#include "params.h"

/* tpre [R,2l]; t [R,l]; which [R,l] (0/1: which of the pair was the max);
 * logits [R,V]; states [R,n]; prev_emb [R,m] (row stride lde);
 * context [R,2n] (row stride ldc); t_mask [R,l] dropout multipliers applied
 * to t (NULL: none). */
void readout_forward(float *tpre, float *t, unsigned char *which, float *logits,
                     const float *states, const float *prev_emb, int lde, const float *context,
                     int ldc, const float *t_mask, const rs_tensors *w, int R, int n, int m, int l,
                     int V);

/* dstates [R,n] written; dprev_emb, dcontext += (same strides as forward);
 * parameter gradients in g +=; dt [R,l] and dtpre [R,2l] scratch. */
void readout_backward(float *dstates, float *dprev_emb, int lde, float *dcontext, int ldc,
                      const rs_tensors *g, float *dt, float *dtpre, const float *dlogits,
                      const float *t, const unsigned char *which, const float *states,
                      const float *prev_emb, const float *context, const float *t_mask,
                      const rs_tensors *w, int R, int n, int m, int l, int V);

/* Turns logits [R,V] into probabilities in place and writes nll[r] = -log p(target_r)
 * (0 where target_r is RS_PAD). Returns Σ nll. */
double softmax_xent_forward(float *probs, float *nll, const int *targets, int R, int V);

/* dlogits [R,V] = scale · (p − q) with q = (1−ε)·onehot(target) + ε/V (label
 * smoothing ε; 0 gives the plain cross-entropy), and 0 on RS_PAD rows.
 * Written in place over probs. */
void softmax_xent_backward(float *probs, const int *targets, float smoothing, float scale,
                           int R, int V);

#endif
