#include <math.h>
#include <string.h>

#include "linalg.h"
#include "readout.h"
#include "vecmath.h"

void readout_forward(float *tpre, float *t, unsigned char *which, float *logits,
                     const float *states, const float *prev_emb, int lde, const float *context,
                     int ldc, const float *t_mask, const rs_tensors *w, int R, int n, int m, int l,
                     int V)
{
    const double phase_t0 = rs_phase_start();
    const int l2 = 2 * l;
    rs_gemm(0, 1, R, l2, n, 1.0f, states, n, w->out_U, n, 0.0f, tpre, l2);
    rs_gemm(0, 1, R, l2, m, 1.0f, prev_emb, lde, w->out_V, m, 1.0f, tpre, l2);
    rs_gemm(0, 1, R, l2, 2 * n, 1.0f, context, ldc, w->out_C, 2 * n, 1.0f, tpre, l2);
    rs_add_bias(tpre, w->out_b, R, l2, l2);
    for (int r = 0; r < R; r++) {
        const float *p = tpre + (size_t)r * l2;
        for (int k = 0; k < l; k++) {
            /* Ties pick the first of the pair, the same in forward and backward. */
            unsigned char second = p[2 * k + 1] > p[2 * k];
            which[(size_t)r * l + k] = second;
            t[(size_t)r * l + k] = p[2 * k + second];
        }
    }
    if (t_mask)
        for (size_t i = 0; i < (size_t)R * l; i++)
            t[i] *= t_mask[i];
    rs_gemm(0, 1, R, V, l, 1.0f, t, l, w->out_W, l, 0.0f, logits, V);
    rs_add_bias(logits, w->out_bw, R, V, V);
    rs_phase_stop(RS_PHASE_OUTPUT, phase_t0);
}

void readout_backward(float *dstates, float *dprev_emb, int lde, float *dcontext, int ldc,
                      const rs_tensors *g, float *dt, float *dtpre, const float *dlogits,
                      const float *t, const unsigned char *which, const float *states,
                      const float *prev_emb, const float *context, const float *t_mask,
                      const rs_tensors *w, int R, int n, int m, int l, int V)
{
    const double phase_t0 = rs_phase_start();
    const int l2 = 2 * l;
    /* forward was: logits = W_out t + b_out. */
    rs_gemm(1, 0, V, l, R, 1.0f, dlogits, V, t, l, 1.0f, g->out_W, l);
    rs_add_row_sums(g->out_bw, dlogits, R, V, V);
    rs_gemm(0, 0, R, l, V, 1.0f, dlogits, V, w->out_W, l, 0.0f, dt, l);
    if (t_mask)
        for (size_t i = 0; i < (size_t)R * l; i++)
            dt[i] *= t_mask[i];
    /* forward was: t[k] = max(t~[2k], t~[2k+1]): the gradient goes to the max. */
    memset(dtpre, 0, sizeof(float) * (size_t)R * l2);
    for (int r = 0; r < R; r++)
        for (int k = 0; k < l; k++)
            dtpre[(size_t)r * l2 + 2 * k + which[(size_t)r * l + k]] = dt[(size_t)r * l + k];
    /* forward was: t~ = U_o s + V_o e + C_o c + b_o. */
    rs_gemm(1, 0, l2, n, R, 1.0f, dtpre, l2, states, n, 1.0f, g->out_U, n);
    rs_gemm(1, 0, l2, m, R, 1.0f, dtpre, l2, prev_emb, lde, 1.0f, g->out_V, m);
    rs_gemm(1, 0, l2, 2 * n, R, 1.0f, dtpre, l2, context, ldc, 1.0f, g->out_C, 2 * n);
    rs_add_row_sums(g->out_b, dtpre, R, l2, l2);
    rs_gemm(0, 0, R, n, l2, 1.0f, dtpre, l2, w->out_U, n, 0.0f, dstates, n);
    rs_gemm(0, 0, R, m, l2, 1.0f, dtpre, l2, w->out_V, m, 1.0f, dprev_emb, lde);
    rs_gemm(0, 0, R, 2 * n, l2, 1.0f, dtpre, l2, w->out_C, 2 * n, 1.0f, dcontext, ldc);
    rs_phase_stop(RS_PHASE_OUTPUT, phase_t0);
}

double softmax_xent_forward(float *probs, float *nll, const int *targets, int R, int V)
{
    const double phase_t0 = rs_phase_start();
    double total = 0.0;
    for (int r = 0; r < R; r++) {
        float *p = probs + (size_t)r * V;
        const float logit_y = p[targets[r]];
        const float max = rs_vmax(p, (size_t)V);
        const double sum = rs_vexp_shift_sum(p, p, max, (size_t)V);
        /* log p(y) = logit_y - max - log Σ exp(logit - max): finite even where p(y) underflows. */
        float logp = (float)((double)logit_y - max - log(sum));
        rs_vscale_shift(p, (float)(1.0 / sum), 0.0f, (size_t)V);
        nll[r] = targets[r] == RS_PAD ? 0.0f : -logp;
        total += nll[r];
    }
    rs_phase_stop(RS_PHASE_OUTPUT, phase_t0);
    return total;
}

void softmax_xent_backward(float *probs, const int *targets, float smoothing, float scale,
                           int R, int V)
{
    const double phase_t0 = rs_phase_start();
    const float uniform = smoothing / (float)V;
    for (int r = 0; r < R; r++) {
        float *p = probs + (size_t)r * V;
        if (targets[r] == RS_PAD) {
            memset(p, 0, sizeof(float) * V);
            continue;
        }
        rs_vscale_shift(p, scale, uniform, (size_t)V);
        p[targets[r]] -= scale * (1.0f - smoothing);
    }
    rs_phase_stop(RS_PHASE_OUTPUT, phase_t0);
}
