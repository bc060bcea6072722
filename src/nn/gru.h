/* The GRU cell of docs/model.md (Bahdanau et al. 2014, A.1.1):
 *
 *   z = σ(W_z x + U_z h_prev + b_z)
 *   r = σ(W_r x + U_r h_prev + b_r)
 *   g = tanh(W_g x + U_g (r ⊙ h_prev) + b_g)
 *   h = (1 - z) ⊙ h_prev + z ⊙ g
 *
 * with a mask per batch row: where mask = 0 the state is carried, h = h_prev.
 * Shapes: B batch rows, n hidden, in input size, R = steps × B.
 * W [3n, in], U [3n, n], b [3n]: rows z, then r, then g.
 * The input projection W x + b does not recur, so the caller computes it for
 * all steps in one GEMM (x_proj [B, 3n] per step). */
#ifndef RS_GRU_H
#define RS_GRU_H

/* h, r_h [B,n]; gates [B,3n] = (z, r, g) after their nonlinearities.
 * h_prev [B,n]; x_proj [B,3n]; U [3n,n]; mask [B] or NULL (all 1). */
void rs_gru_step_forward(float *h, float *gates, float *r_h, const float *h_prev,
                         const float *x_proj, const float *U, const float *mask, int B, int n);

/* dh_prev [B,n] += dL/dh_prev; dpre [B,3n] = dL/d(pre-activations of z, r, g)
 * (written, not accumulated); dh [B,n] the gradient arriving at h; scratch [B,n]. */
void rs_gru_step_backward(float *dh_prev, float *dpre, const float *dh, const float *gates,
                          const float *h_prev, const float *U, const float *mask, int B, int n,
                          float *scratch);

/* Recurrent parameter gradients over all R = steps × B rows at once (+=):
 * db [3n] += Σ dpre; dU_zr += dpre_zr^T h_prev; dU_g += dpre_g^T r_h.
 * dpre [R,3n], h_prev [R,n], r_h [R,n]. The input side, dW += dpre^T x,
 * is one GEMM the caller makes, since its inputs may be split in parts. */
void rs_gru_recurrent_backward(float *dU, float *db, const float *dpre, const float *h_prev,
                               const float *r_h, int R, int n);

#endif
