/* The deep output and the loss, forward and backward; readout.h has the
 * forward equations and the shapes. Backward over all R target positions at
 * once, from the loss scale · Σ_i −Σ_v q_v log p_v (scale = 1 / target tokens):
 *
 *   dlogits = scale · (p − q),  q = (1 − ε) onehot(y) + ε/V   (rs_softmax_xent_backward; ε smoothing)
 *   dW_out += dlogitsᵀ t,  db_out += Σ dlogits,  dt = dlogits W_out   (dropout: masked as t was)
 *   t[k] = max(t̃[2k], t̃[2k+1])        dt̃ goes to the larger of the pair, 0 to the other
 *   t̃ = U_o s + V_o E y + C_o c + b_o   dU_o += dt̃ᵀ s,  dV_o += dt̃ᵀ E y,  dC_o += dt̃ᵀ c,  db_o += Σ dt̃
 *                                      ds = dt̃ U_o,  d(E y) += dt̃ V_o,  dc += dt̃ C_o
 *
 * ds is written, the readout being the first of s's uses whose gradient the
 * network sums; E y and c have other uses, so theirs accumulate. */
#include <math.h>
#include <string.h>

#include "nn/linalg.h"
#include "model/vocab.h"
#include "nn/readout.h"
#include "nn/vecmath.h"

void rs_readout_forward(float *logits, const rs_readout_saved *saved, const rs_readout_inputs *in,
                        const rs_tensors *w, int l, int V)
{
    const double phase_t0 = rs_phase_start();
    const int R = in->states.rows, n = in->states.cols, m = in->prev_emb.cols, l2 = 2 * l;
    float *tpre = saved->tpre, *t = saved->t;
    /* t~ = U_o s + V_o e + C_o c + b_o */
    const rs_mat t_pre = RS_MAT(tpre, R, l2);
    rs_matmul_forward(t_pre, in->states, RS_CMAT(w->out_U, l2, n), 0.0f);
    rs_matmul_forward(t_pre, in->prev_emb, RS_CMAT(w->out_V, l2, m), 1.0f);
    rs_matmul_forward(t_pre, in->context, RS_CMAT(w->out_C, l2, 2 * n), 1.0f);
    rs_add_bias(tpre, w->out_b, R, l2, l2);
    /* t[k] = max(t~[2k], t~[2k+1]) */
    for (int r = 0; r < R; r++) {
        const float *p = tpre + (size_t)r * l2;
        for (int k = 0; k < l; k++) {
            /* Ties pick the first of the pair, the same in forward and backward. */
            unsigned char second = p[2 * k + 1] > p[2 * k];
            saved->which[(size_t)r * l + k] = second;
            t[(size_t)r * l + k] = p[2 * k + second];
        }
    }
    if (saved->t_mask)
        for (size_t i = 0; i < (size_t)R * l; i++)
            t[i] *= saved->t_mask[i];
    /* logits = W_out t + b_out */
    rs_matmul_forward(RS_MAT(logits, R, V), RS_CMAT(t, R, l), RS_CMAT(w->out_W, V, l), 0.0f);
    rs_add_bias(logits, w->out_bw, R, V, V);
    rs_phase_stop(RS_PHASE_OUTPUT, phase_t0);
}

void rs_readout_backward(const rs_readout_input_grads *d, const rs_tensors *g, float *dt,
                         float *dtpre, const float *dlogits, const rs_readout_saved *saved,
                         const rs_readout_inputs *in, const rs_tensors *w, int l, int V)
{
    const double phase_t0 = rs_phase_start();
    const int R = in->states.rows, n = in->states.cols, m = in->prev_emb.cols, l2 = 2 * l;
    /* forward was: logits = W_out t + b_out. */
    const rs_cmat d_logits = RS_CMAT(dlogits, R, V);
    rs_matmul_backward_weight(RS_MAT(g->out_W, V, l), d_logits, RS_CMAT(saved->t, R, l));
    rs_add_row_sums(g->out_bw, dlogits, R, V, V);
    rs_matmul_backward_input(RS_MAT(dt, R, l), d_logits, RS_CMAT(w->out_W, V, l), 0.0f);
    if (saved->t_mask)
        for (size_t i = 0; i < (size_t)R * l; i++)
            dt[i] *= saved->t_mask[i];
    /* forward was: t[k] = max(t~[2k], t~[2k+1]): the gradient goes to the max. */
    memset(dtpre, 0, sizeof(float) * (size_t)R * l2);
    for (int r = 0; r < R; r++)
        for (int k = 0; k < l; k++)
            dtpre[(size_t)r * l2 + 2 * k + saved->which[(size_t)r * l + k]] = dt[(size_t)r * l + k];
    /* forward was: t~ = U_o s + V_o e + C_o c + b_o. */
    const rs_cmat d_tpre = RS_CMAT(dtpre, R, l2);
    rs_matmul_backward_weight(RS_MAT(g->out_U, l2, n), d_tpre, in->states);
    rs_matmul_backward_weight(RS_MAT(g->out_V, l2, m), d_tpre, in->prev_emb);
    rs_matmul_backward_weight(RS_MAT(g->out_C, l2, 2 * n), d_tpre, in->context);
    rs_add_row_sums(g->out_b, dtpre, R, l2, l2);
    rs_matmul_backward_input(d->states, d_tpre, RS_CMAT(w->out_U, l2, n), 0.0f);
    rs_matmul_backward_input(d->prev_emb, d_tpre, RS_CMAT(w->out_V, l2, m), 1.0f);
    rs_matmul_backward_input(d->context, d_tpre, RS_CMAT(w->out_C, l2, 2 * n), 1.0f);
    rs_phase_stop(RS_PHASE_OUTPUT, phase_t0);
}

double rs_softmax_xent_forward(float *probs, float *nll, const int *targets, int R, int V)
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

void rs_softmax_xent_backward(float *probs, const int *targets, float smoothing, float scale, int R,
                              int V)
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
