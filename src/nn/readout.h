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

#include "nn/linalg.h"
#include "model/params.h"

/* The three inputs over R positions: states s_i [R,n], the previous words'
 * embeddings E y_{i-1} [R,m] and the contexts c_i [R,2n] (views, so each may
 * be a block of a wider buffer). */
typedef struct {
    rs_cmat states, prev_emb, context;
} rs_readout_inputs;

/* Their gradients: states written, prev_emb and context accumulated (+=). */
typedef struct {
    rs_mat states, prev_emb, context;
} rs_readout_input_grads;

/* What the forward keeps for the backward: tpre [R,2l] t~; t [R,l] after
 * maxout and dropout; which [R,l] (0/1: which of each pair was the max);
 * t_mask [R,l] dropout multipliers applied to t (NULL: none). */
typedef struct {
    float *tpre, *t;
    unsigned char *which;
    const float *t_mask;
} rs_readout_saved;

/* logits [R,V] = W_out t + b_out, t = maxout(U_o s + V_o e + C_o c + b_o);
 * l maxout units, V target vocabulary. */
void rs_readout_forward(float *logits, const rs_readout_saved *saved, const rs_readout_inputs *in,
                        const rs_tensors *w, int l, int V);

/* The backward for dlogits [R,V]: input gradients into d, parameter
 * gradients into g (+=); dt [R,l] and dtpre [R,2l] scratch. */
void rs_readout_backward(const rs_readout_input_grads *d, const rs_tensors *g, float *dt,
                         float *dtpre, const float *dlogits, const rs_readout_saved *saved,
                         const rs_readout_inputs *in, const rs_tensors *w, int l, int V);

/* Turns logits [R,V] into probabilities in place and writes nll[r] = -log p(target_r)
 * (0 where target_r is RS_PAD). Returns Σ nll. */
double rs_softmax_xent_forward(float *probs, float *nll, const int *targets, int R, int V);

/* dlogits [R,V] = scale · (p − q) with q = (1−ε)·onehot(target) + ε/V (label
 * smoothing ε; 0 gives the plain cross-entropy), and 0 on RS_PAD rows.
 * Written in place over probs. */
void rs_softmax_xent_backward(float *probs, const int *targets, float smoothing, float scale, int R,
                              int V);

#endif
