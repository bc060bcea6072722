/* The GRU, forward and backward; gru.h has the forward equations and the
 * shapes. One step backward, from dh = ∂L/∂h (every use of h already summed
 * by the caller), writing dx_proj for ∂L/∂x_proj, which is also the gradient
 * of the gates' pre-activations:
 *
 *   ∂L/∂z = dh ⊙ (g − h_prev)              dx_proj_z = ∂L/∂z ⊙ z ⊙ (1 − z)
 *   ∂L/∂g = dh ⊙ z                         dx_proj_g = ∂L/∂g ⊙ (1 − g²)
 *   d(r ⊙ h_prev) = U_gᵀ dx_proj_g          dx_proj_r = d(r ⊙ h_prev) ⊙ h_prev ⊙ r ⊙ (1 − r)
 *   dh_prev += dh ⊙ (1 − z) + d(r ⊙ h_prev) ⊙ r + U_zrᵀ [dx_proj_z ; dx_proj_r]
 *   dc += W_cᵀ dx_proj                     (the decoder's context)
 *
 * and where mask = 0 (h = h_prev): dh_prev += dh, dx_proj = 0
 * (rs_gru_step_backward). The weights' gradients do not recur, so each is
 * summed over all steps in one product (rs_gru_weights_backward):
 *
 *   dW += Σ_t dx_proj xᵀ,   dW_c += Σ_t dx_proj cᵀ,   dU_zr += Σ_t [dx_proj_z ; dx_proj_r] h_prevᵀ,
 *   dU_g += Σ_t dx_proj_g (r ⊙ h_prev)ᵀ,   db += Σ_t dx_proj,   dx += W dx_proj (each step). */
#include <string.h>

#include "nn/gru.h"
#include "nn/linalg.h"
#include "nn/vecmath.h"

void rs_gru_input_forward(rs_mat xproj, rs_cmat x, const rs_gru_weights *w)
{
    /* x_proj = W x + b */
    rs_linear_forward(xproj, x, &w->W, 0.0f);
    rs_add_bias(xproj.data, w->b, xproj.rows, xproj.cols, xproj.stride);
}

void rs_gru_step_forward(const rs_gru_step *st, const rs_gru_weights *w, const float *mask, int B)
{
    const int n = w->n, n3 = 3 * n;
    float *gates = st->gates, *r_h = st->rh;
    /* x_proj += W_c c (the decoder's context) */
    if (st->context)
        rs_linear_forward(RS_MAT(st->xproj, B, n3), RS_CMAT(st->context, B, 2 * n), &w->W_c, 1.0f);
    memcpy(gates, st->xproj, sizeof(float) * (size_t)B * n3);
    /* z and r pre-activations += U_zr h_prev: one GEMM for both gates. */
    rs_linear_forward(RS_MAT_S(gates, B, 2 * n, n3), RS_CMAT(st->h_prev, B, n), &w->U_zr, 1.0f);
    for (int b = 0; b < B; b++) /* z, r = σ(·); r ⊙ h_prev */
        rs_vgru_gates(gates + (size_t)b * n3, r_h + (size_t)b * n, st->h_prev + (size_t)b * n,
                      (size_t)n);
    /* g pre-activation += U_g (r ⊙ h_prev). */
    rs_linear_forward(RS_MAT_S(gates + 2 * n, B, n, n3), RS_CMAT(r_h, B, n), &w->U_g, 1.0f);
    for (int b = 0; b < B; b++) { /* g = tanh(·); h = (1 − z)⊙h_prev + z⊙g where mask ≠ 0 */
        float *z = gates + (size_t)b * n3;
        rs_vgru_state(st->h + (size_t)b * n, z + 2 * n, z, st->h_prev + (size_t)b * n,
                      mask ? mask[b] : 1.0f, (size_t)n);
    }
}

void rs_gru_step_backward(const rs_gru_step_grads *d, const rs_gru_step *st,
                          const rs_gru_weights *w, const float *mask, int B)
{
    const int n = w->n, n3 = 3 * n;
    /* forward was: h = (1-z)⊙h_prev + z⊙g where mask = 1, else h = h_prev. */
    for (int b = 0; b < B; b++) {
        const float *z = st->gates + (size_t)b * n3, *g = z + 2 * n;
        const float *hp = st->h_prev + (size_t)b * n, *dh = d->h + (size_t)b * n;
        float *dx = d->xproj + (size_t)b * n3, *dhp = d->h_prev + (size_t)b * n;
        if (mask && mask[b] == 0.0f) {
            for (int k = 0; k < n; k++)
                dhp[k] += dh[k];
            memset(dx, 0, sizeof(float) * n3);
            continue;
        }
        rs_vgru_state_backward(dx, dx + 2 * n, dhp, z, g, hp, dh, (size_t)n);
    }
    /* g = tanh(x_proj_g + U_g (r⊙h_prev)): d(r⊙h_prev) = U_g^T dx_proj_g. */
    rs_matmul_backward_input(RS_MAT(d->rh, B, n), RS_CMAT_S(d->xproj + 2 * n, B, n, n3), w->U_g.W,
                             0.0f);
    for (int b = 0; b < B; b++) {
        const float *r = st->gates + (size_t)b * n3 + n, *hp = st->h_prev + (size_t)b * n;
        const float *d_rh = d->rh + (size_t)b * n;
        float *dx = d->xproj + (size_t)b * n3, *dhp = d->h_prev + (size_t)b * n;
        if (mask && mask[b] == 0.0f)
            continue;
        rs_vgru_reset_backward(dx + n, dhp, r, hp, d_rh, (size_t)n); /* rh = r ⊙ h_prev */
    }
    /* z, r = σ(x_proj_zr + U_zr h_prev): dh_prev += U_zr^T dx_proj_zr. */
    rs_matmul_backward_input(RS_MAT(d->h_prev, B, n), RS_CMAT_S(d->xproj, B, 2 * n, n3), w->U_zr.W,
                             1.0f);
    /* x_proj = W x + W_c c + b: dc += W_c^T dx_proj (the decoder's context). */
    if (d->context)
        rs_matmul_backward_input(RS_MAT(d->context, B, 2 * n), RS_CMAT(d->xproj, B, n3), w->W_c.W,
                                 1.0f);
}

void rs_gru_weights_backward(rs_mat dx, const rs_gru_grads *g, rs_cmat d_xproj,
                             const rs_gru_run *run, const rs_gru_weights *w)
{
    const int n = w->n, R = d_xproj.rows;
    /* forward was: x_proj = W x + W_c c + b. */
    rs_matmul_backward_weight(g->W, d_xproj, run->x);
    if (run->context.data)
        rs_matmul_backward_weight(g->W_c, d_xproj, run->context);
    /* z, r = σ(x_proj_zr + U_zr h_prev), g = tanh(x_proj_g + U_g (r⊙h_prev)). */
    const rs_cmat d_zr = {d_xproj.data, R, 2 * n, d_xproj.stride};
    const rs_cmat d_g = {d_xproj.data + 2 * n, R, n, d_xproj.stride};
    rs_matmul_backward_weight(RS_MAT(g->U, 2 * n, n), d_zr, run->h_prev);
    rs_matmul_backward_weight(RS_MAT(g->U + (size_t)2 * n * n, n, n), d_g, run->rh);
    rs_add_row_sums(g->b, d_xproj.data, R, 3 * n, d_xproj.stride);
    if (dx.data)
        rs_matmul_backward_input(dx, d_xproj, w->W.W, 1.0f);
}
