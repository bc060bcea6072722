/* The GRU cell, forward and backward; gru.h has the forward equations and the
 * shapes. One step backward, from dh = ∂L/∂h (every use of h already summed
 * by the caller), pre_* being the gates' pre-activations:
 *
 *   ∂L/∂z = dh ⊙ (g − h_prev)              dpre_z = ∂L/∂z ⊙ z ⊙ (1 − z)
 *   ∂L/∂g = dh ⊙ z                         dpre_g = ∂L/∂g ⊙ (1 − g²)
 *   ∂L/∂(r ⊙ h_prev) = U_gᵀ dpre_g          dpre_r = ∂L/∂(r ⊙ h_prev) ⊙ h_prev ⊙ r ⊙ (1 − r)
 *   dh_prev += dh ⊙ (1 − z) + ∂L/∂(r ⊙ h_prev) ⊙ r + U_zrᵀ [dpre_z ; dpre_r]
 *
 * and where mask = 0 (h = h_prev): dh_prev += dh, dpre = 0 (rs_gru_step_backward).
 * The recurrent weights' gradients do not recur, so they are summed over all
 * steps in two products (rs_gru_recurrent_backward):
 *
 *   dU_zr += Σ_t [dpre_z ; dpre_r] h_prevᵀ,   dU_g += Σ_t dpre_g (r ⊙ h_prev)ᵀ,   db += Σ_t dpre
 *
 * and dW += Σ_t dpre xᵀ is the caller's, beside its input projection. */
#include <string.h>

#include "nn/gru.h"
#include "nn/linalg.h"
#include "nn/vecmath.h"

void rs_gru_step_forward(float *h, float *gates, float *r_h, const float *h_prev,
                         const float *x_proj, const float *U, const float *mask, int B, int n)
{
    const double phase_t0 = rs_phase_start();
    const int n3 = 3 * n;
    const float *U_g = U + (size_t)2 * n * n; /* [n,n]: the rows of g */
    memcpy(gates, x_proj, sizeof(float) * (size_t)B * n3);
    /* z and r pre-activations += U_zr h_prev: one GEMM for both gates. */
    rs_matmul_forward(RS_MAT_S(gates, B, 2 * n, n3), RS_CMAT(h_prev, B, n), RS_CMAT(U, 2 * n, n),
                      1.0f);
    for (int b = 0; b < B; b++) {
        float *zr = gates + (size_t)b * n3;
        const float *hp = h_prev + (size_t)b * n;
        rs_vsigmoid(zr, zr, (size_t)2 * n);
        for (int k = 0; k < n; k++)
            r_h[(size_t)b * n + k] = zr[n + k] * hp[k];
    }
    /* g pre-activation += U_g (r ⊙ h_prev). */
    rs_matmul_forward(RS_MAT_S(gates + 2 * n, B, n, n3), RS_CMAT(r_h, B, n), RS_CMAT(U_g, n, n),
                      1.0f);
    for (int b = 0; b < B; b++) {
        float *z = gates + (size_t)b * n3, *g = z + 2 * n;
        const float *hp = h_prev + (size_t)b * n;
        float *hb = h + (size_t)b * n;
        float m = mask ? mask[b] : 1.0f;
        rs_vtanh(g, g, (size_t)n);
        for (int k = 0; k < n; k++) {
            float h_new = (1.0f - z[k]) * hp[k] + z[k] * g[k];
            hb[k] = m != 0.0f ? h_new : hp[k];
        }
    }
    rs_phase_stop(RS_PHASE_RECURRENCE, phase_t0);
}

void rs_gru_step_backward(float *dh_prev, float *dpre, const float *dh, const float *gates,
                          const float *h_prev, const float *U, const float *mask, int B, int n,
                          float *scratch)
{
    const double phase_t0 = rs_phase_start();
    const int n3 = 3 * n;
    const float *U_g = U + (size_t)2 * n * n; /* [n,n]: the rows of g */
    /* forward was: h = (1-z)⊙h_prev + z⊙g where mask = 1, else h = h_prev. */
    for (int b = 0; b < B; b++) {
        const float *z = gates + (size_t)b * n3, *g = z + 2 * n;
        const float *hp = h_prev + (size_t)b * n, *dhb = dh + (size_t)b * n;
        float *dp = dpre + (size_t)b * n3, *dhp = dh_prev + (size_t)b * n;
        if (mask && mask[b] == 0.0f) {
            for (int k = 0; k < n; k++)
                dhp[k] += dhb[k];
            memset(dp, 0, sizeof(float) * n3);
            continue;
        }
        for (int k = 0; k < n; k++) {
            float dz = dhb[k] * (g[k] - hp[k]); /* dL/dz */
            float dg = dhb[k] * z[k];           /* dL/dg */
            dhp[k] += dhb[k] * (1.0f - z[k]);
            dp[k] = dz * z[k] * (1.0f - z[k]);         /* through σ */
            dp[2 * n + k] = dg * (1.0f - g[k] * g[k]); /* through tanh */
        }
    }
    /* g = tanh(... + U_g (r⊙h_prev)): dL/d(r⊙h_prev) = U_g^T dpre_g. */
    rs_matmul_backward_input(RS_MAT(scratch, B, n), RS_CMAT_S(dpre + 2 * n, B, n, n3),
                             RS_CMAT(U_g, n, n), 0.0f);
    for (int b = 0; b < B; b++) {
        const float *r = gates + (size_t)b * n3 + n, *hp = h_prev + (size_t)b * n;
        const float *d_rh = scratch + (size_t)b * n;
        float *dp = dpre + (size_t)b * n3, *dhp = dh_prev + (size_t)b * n;
        if (mask && mask[b] == 0.0f)
            continue;
        for (int k = 0; k < n; k++) {
            float dr = d_rh[k] * hp[k]; /* dL/dr */
            dhp[k] += d_rh[k] * r[k];
            dp[n + k] = dr * r[k] * (1.0f - r[k]);
        }
    }
    /* z, r = σ(... + U_zr h_prev): dh_prev += U_zr^T dpre_zr. */
    rs_matmul_backward_input(RS_MAT(dh_prev, B, n), RS_CMAT_S(dpre, B, 2 * n, n3),
                             RS_CMAT(U, 2 * n, n), 1.0f);
    rs_phase_stop(RS_PHASE_RECURRENCE, phase_t0);
}

void rs_gru_recurrent_backward(float *dU, float *db, const float *dpre, const float *h_prev,
                               const float *r_h, int R, int n)
{
    const double phase_t0 = rs_phase_start();
    const int n3 = 3 * n;
    rs_matmul_backward_weight(RS_MAT(dU, 2 * n, n), RS_CMAT_S(dpre, R, 2 * n, n3),
                              RS_CMAT(h_prev, R, n));
    rs_matmul_backward_weight(RS_MAT(dU + (size_t)2 * n * n, n, n),
                              RS_CMAT_S(dpre + 2 * n, R, n, n3), RS_CMAT(r_h, R, n));
    rs_add_row_sums(db, dpre, R, n3, n3);
    rs_phase_stop(RS_PHASE_RECURRENCE, phase_t0);
}
