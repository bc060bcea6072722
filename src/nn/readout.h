/* The deep output with maxout (model.md; Bahdanau et al. A.2.2) and the
 * softmax cross-entropy over the target vocabulary:
 *
 *   t̃_i    = U_o s_i + V_o E y_{i-1} + C_o c_i + b_o       [2l]
 *   t_i[k] = max(t̃_i[2k], t̃_i[2k+1])                       [l]
 *   logits = W_out t_i + b_out,  p(y_i) = softmax(logits)  [Vt]
 *
 * None of this recurs, so it runs over all R = T × B target positions at once:
 * four GEMMs forward (U_o, V_o, C_o, W_out). Shapes: R rows, n hidden,
 * m embedding, l maxout units, V target vocabulary. */
#ifndef RS_READOUT_H
#define RS_READOUT_H

#include "model/params.h"
#include "nn/linalg.h"
#include "nn/linear.h"

/* The readout's weights: U_o [2l,n], V_o [2l,m], C_o [2l,2n], b_o [2l],
 * W_out [V,l] (tgt_emb's floats when tied), b_out [V]. A search may compute
 * the logits of some words only: V of them, W_out and b_out those words'
 * rows. */
typedef struct {
    int l, V;
    rs_linear U_o, V_o, C_o;
    const float *b_o;
    rs_linear W_out;
    const float *b_out;
} rs_readout_weights;

/* Their gradients, the same shapes and names; all accumulate (+=). */
typedef struct {
    float *U_o, *V_o, *C_o, *b_o, *W_out, *b_out;
} rs_readout_grads;

/* The views of the readout's tensors in t (parameters or gradients): m
 * embedding, n hidden, l maxout units, V target vocabulary. */
rs_readout_weights rs_readout_weights_of(const rs_tensors *t, int m, int n, int l, int V);
rs_readout_grads rs_readout_grads_of(const rs_tensors *g);

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

/* The readout's buffers over R rows: tpre [R,2l] t̃; tmax [R,l] t after
 * maxout and dropout; logits [R,V]; which [R,l] (0/1: which of each pair
 * was the max) and t_mask [R,l] (dropout multipliers of t; NULL: none), what
 * the forward keeps beside them. Their gradients use the same type, the
 * same names: tpre and tmax written, logits = dL/dlogits read, which and
 * t_mask unused (NULL). */
typedef struct {
    float *tpre, *tmax, *logits;
    unsigned char *which;
    const float *t_mask;
} rs_readout_acts;

/* Its two halves, which rs_readout_forward runs in turn: the deep output
 * t = maxout(U_o s + V_o e + C_o c + b_o) ⊙ t_mask into tpre, tmax and
 * which (where a translation step ends, rs_network_step); and the output
 * layer logits = W_out t + b_out [R,V] from tmax (the search's, over the
 * words it asks for: w's V rows). */
void rs_readout_maxout_forward(const rs_readout_acts *acts, const rs_readout_inputs *in,
                               const rs_readout_weights *w);
void rs_readout_logits_forward(const rs_readout_acts *acts, int R, const rs_readout_weights *w);

/* logits = W_out t + b_out, t = maxout(U_o s + V_o e + C_o c + b_o) ⊙ t_mask. */
void rs_readout_forward(const rs_readout_acts *acts, const rs_readout_inputs *in,
                        const rs_readout_weights *w);

/* The backward from d->logits: d->tmax and d->tpre, the inputs' gradients
 * into d_in and the weights' into g. */
void rs_readout_backward(const rs_readout_acts *d, const rs_readout_input_grads *d_in,
                         const rs_readout_grads *g, const rs_readout_acts *acts,
                         const rs_readout_inputs *in, const rs_readout_weights *w);

/* probs [R,V] = softmax of each row of logits [R,V] (probs may be logits:
 * in place), and nll[r] = -log p(target_r) (0 where target_r is RS_PAD).
 * Returns Σ nll. */
double rs_softmax_xent_forward(float *probs, float *nll, const float *logits, const int *targets,
                               int R, int V);

/* d_logits [R,V] = scale · (p − q) with p = probs [R,V] and q = (1−ε)·onehot(target)
 * + ε/V (label smoothing ε; 0 gives the plain cross-entropy), and 0 on RS_PAD
 * rows. d_logits may be probs (in place). */
void rs_softmax_xent_backward(float *d_logits, const float *probs, const int *targets,
                              float smoothing, float scale, int R, int V);

#endif
