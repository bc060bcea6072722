/* The GRU of docs/model.md (Bahdanau et al. 2014, A.1.1 for the encoder,
 * A.2.2 for the decoder, whose input u_i = [E y_{i-1} ; c_i] comes in two
 * parts):
 *
 *   x_proj = W x + W_c c + b                    (W_c c: the decoder's context only)
 *   z = σ(x_proj_z + U_z h_prev)
 *   r = σ(x_proj_r + U_r h_prev)
 *   g = tanh(x_proj_g + U_g (r ⊙ h_prev))
 *   h = (1 - z) ⊙ h_prev + z ⊙ g
 *
 * with a mask per batch row: where mask = 0 the state is carried, h = h_prev.
 * Shapes: B batch rows, n hidden, in input size, R = steps × B.
 * W [3n, in], W_c [3n, 2n], U [3n, n], b [3n]: rows z, then r, then g.
 *
 * W x + b does not recur, so it is one product over all steps before the
 * recurrence (rs_gru_input_forward, Marian's applyInput); so are the
 * weights' gradients after it (rs_gru_weights_backward). The decoder's W_c c
 * needs c_i, which needs s_{i-1}: it is added step by step. */
#ifndef RS_GRU_H
#define RS_GRU_H

#include "nn/linalg.h"
#include "nn/linear.h"

/* A GRU's weights. W is a view, so that the decoder's W' [3n, m+2n] is read
 * as its two column blocks: W = W'_e (the embedding's columns) and W_c =
 * W'_c (the context's). The encoder has no W_c (its data NULL). U [3n, n]
 * is read as its rows for z and r, U_zr [2n, n], and for g, U_g [n, n]:
 * one product for both gates, one for g. */
typedef struct {
    int n;          /* hidden size */
    rs_linear W;    /* [3n, in] */
    rs_linear W_c;  /* [3n, 2n] or data NULL */
    rs_linear U_zr; /* [2n, n]: rows 0..2n-1 of U */
    rs_linear U_g;  /* [n, n]: rows 2n..3n-1 of U */
    const float *b; /* [3n] */
} rs_gru_weights;

/* Their gradients, the same shapes; every one accumulates (+=). */
typedef struct {
    rs_mat W, W_c;
    float *U, *b;
} rs_gru_grads;

/* One step over B rows. Read: h_prev [B,n], context c [B,2n] (the decoder's;
 * NULL otherwise). x_proj [B,3n] holds W x + b on entry and W x + W_c c + b
 * on return. Written: gates [B,3n] = (z, r, g) after their nonlinearities,
 * rh [B,n] = r ⊙ h_prev, h [B,n]. */
typedef struct {
    const float *h_prev, *context;
    float *xproj, *gates, *rh, *h;
} rs_gru_step;

/* The gradients of a step's buffers, named as they are: h [B,n] = dL/dh,
 * every use of h already summed (read); h_prev [B,n] and context [B,2n]
 * accumulate (+=); xproj [B,3n] (dL/dx_proj, which is also dL/d of the
 * gates' pre-activations) and rh [B,n] are written. */
typedef struct {
    const float *h;
    float *h_prev, *context, *xproj, *rh;
} rs_gru_step_grads;

/* x_proj [R,3n] = W x + b for the R rows of x [R,in] at once. */
void rs_gru_input_forward(rs_mat xproj, rs_cmat x, const rs_gru_weights *w);

/* mask [B] (0: carry the state) or NULL (all 1). */
void rs_gru_step_forward(const rs_gru_step *st, const rs_gru_weights *w, const float *mask, int B);
void rs_gru_step_backward(const rs_gru_step_grads *d, const rs_gru_step *st,
                          const rs_gru_weights *w, const float *mask, int B);

/* What the R = steps × B rows of a run multiplied the weights by: x [R,in],
 * context [R,2n] (the decoder's; data NULL otherwise), h_prev [R,n] each
 * step's previous state, rh [R,n]. */
typedef struct {
    rs_cmat x, context, h_prev, rh;
} rs_gru_run;

/* The gradients of what every step shares, each one product over all R rows
 * (d_xproj [R,3n], all steps' step gradients): the weights' into g, and the
 * input's, dx [R,in] += d_xproj W (dx.data NULL: not wanted). */
void rs_gru_weights_backward(rs_mat dx, const rs_gru_grads *g, rs_cmat d_xproj,
                             const rs_gru_run *run, const rs_gru_weights *w);

#endif
