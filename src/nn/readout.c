/* The deep output and the loss, forward and backward; readout.h has the
 * forward equations and the shapes. Backward over all R target positions at
 * once, from the loss scale · Σ_i −Σ_v q_v log p_v (scale = 1 / target tokens):
 *
 *   dlogits = scale · (p − q),  q = (1 − ε) onehot(y) + ε/V   (rs_softmax_xent_backward; ε smoothing)
 *   dW_out += dlogitsᵀ t,  db_out += Σ dlogits,  dt = dlogits W_out
 *   t[k] = max(t̃[2k], t̃[2k+1]) ⊙ mask[k]    dt̃ = dt ⊙ mask at the larger of each pair, 0 at the other
 *   t̃ = U_o s + V_o E y + C_o c + b_o   dU_o += dt̃ᵀ s,  dV_o += dt̃ᵀ E y,  dC_o += dt̃ᵀ c,  db_o += Σ dt̃
 *                                      ds = dt̃ U_o,  d(E y) += dt̃ V_o,  dc += dt̃ C_o
 *
 * ds is written, the readout being the one use of s_i the network keeps apart
 * (it adds it to the other uses' sum itself); E y and c have other uses, so
 * theirs accumulate. */
#include <math.h>
#include <string.h>

#include "model/vocab.h"
#include "nn/linalg.h"
#include "nn/readout.h"
#include "nn/vecmath.h"

rs_readout_weights rs_readout_weights_of(const rs_tensors *t, int m, int n, int l, int V)
{
    return (rs_readout_weights){.l = l,
                                .V = V,
                                .U_o = RS_LINEAR(RS_CMAT(t->out_U, 2 * l, n)),
                                .V_o = RS_LINEAR(RS_CMAT(t->out_V, 2 * l, m)),
                                .C_o = RS_LINEAR(RS_CMAT(t->out_C, 2 * l, 2 * n)),
                                .b_o = t->out_b,
                                .W_out = RS_LINEAR(RS_CMAT(t->out_W, V, l)),
                                .b_out = t->out_bw};
}

rs_readout_grads rs_readout_grads_of(const rs_tensors *g)
{
    return (rs_readout_grads){.U_o = g->out_U,
                              .V_o = g->out_V,
                              .C_o = g->out_C,
                              .b_o = g->out_b,
                              .W_out = g->out_W,
                              .b_out = g->out_bw};
}

void rs_readout_maxout_forward(const rs_readout_acts *acts, const rs_readout_inputs *in,
                               const rs_readout_weights *w)
{
    const int R = in->states.rows, l = w->l, l2 = 2 * l;
    float *tpre = acts->tpre, *t = acts->tmax;
    /* t̃ = U_o s + V_o e + C_o c + b_o */
    const rs_mat t_pre = RS_MAT(tpre, R, l2);
    rs_linear_forward(t_pre, in->states, &w->U_o, 0.0f);
    rs_linear_forward(t_pre, in->prev_emb, &w->V_o, 1.0f);
    rs_linear_forward(t_pre, in->context, &w->C_o, 1.0f);
    rs_add_bias(tpre, w->b_o, R, l2, l2);
    /* t[k] = max(t̃[2k], t̃[2k+1]) (⊙ the dropout mask) */
    for (int r = 0; r < R; r++) {
        const float *p = tpre + (size_t)r * l2;
        for (int k = 0; k < l; k++) {
            /* Ties pick the first of the pair, the same in forward and backward. */
            unsigned char second = p[2 * k + 1] > p[2 * k];
            acts->which[(size_t)r * l + k] = second;
            t[(size_t)r * l + k] = p[2 * k + second];
        }
    }
    if (acts->t_mask)
        for (size_t i = 0; i < (size_t)R * l; i++)
            t[i] *= acts->t_mask[i];
}

void rs_readout_logits_forward(const rs_readout_acts *acts, int R, const rs_readout_weights *w)
{
    /* logits = W_out t + b_out */
    rs_linear_forward(RS_MAT(acts->logits, R, w->V), RS_CMAT(acts->tmax, R, w->l), &w->W_out, 0.0f);
    rs_add_bias(acts->logits, w->b_out, R, w->V, w->V);
}

void rs_readout_forward(const rs_readout_acts *acts, const rs_readout_inputs *in,
                        const rs_readout_weights *w)
{
    rs_readout_maxout_forward(acts, in, w);
    rs_readout_logits_forward(acts, in->states.rows, w);
}

void rs_readout_backward(const rs_readout_acts *d, const rs_readout_input_grads *d_in,
                         const rs_readout_grads *g, const rs_readout_acts *acts,
                         const rs_readout_inputs *in, const rs_readout_weights *w)
{
    const int R = in->states.rows, n = in->states.cols, m = in->prev_emb.cols;
    const int l = w->l, l2 = 2 * l, V = w->V;
    /* forward was: logits = W_out t + b_out. */
    const rs_cmat d_logits = RS_CMAT(d->logits, R, V);
    rs_matmul_backward_weight(RS_MAT(g->W_out, V, l), d_logits, RS_CMAT(acts->tmax, R, l));
    rs_add_row_sums(g->b_out, d->logits, R, V, V);
    rs_matmul_backward_input(RS_MAT(d->tmax, R, l), d_logits, w->W_out.W, 0.0f);
    /* forward was: t[k] = max(t̃[2k], t̃[2k+1]) ⊙ mask[k]: the gradient goes to the max. */
    memset(d->tpre, 0, sizeof(float) * (size_t)R * l2);
    for (int r = 0; r < R; r++)
        for (int k = 0; k < l; k++) {
            const size_t i = (size_t)r * l + k;
            const float dt = acts->t_mask ? d->tmax[i] * acts->t_mask[i] : d->tmax[i];
            d->tpre[(size_t)r * l2 + 2 * k + acts->which[i]] = dt;
        }
    /* forward was: t̃ = U_o s + V_o e + C_o c + b_o. */
    const rs_cmat d_tpre = RS_CMAT(d->tpre, R, l2);
    rs_matmul_backward_weight(RS_MAT(g->U_o, l2, n), d_tpre, in->states);
    rs_matmul_backward_weight(RS_MAT(g->V_o, l2, m), d_tpre, in->prev_emb);
    rs_matmul_backward_weight(RS_MAT(g->C_o, l2, 2 * n), d_tpre, in->context);
    rs_add_row_sums(g->b_o, d->tpre, R, l2, l2);
    rs_matmul_backward_input(d_in->states, d_tpre, w->U_o.W, 0.0f);
    rs_matmul_backward_input(d_in->prev_emb, d_tpre, w->V_o.W, 1.0f);
    rs_matmul_backward_input(d_in->context, d_tpre, w->C_o.W, 1.0f);
}

double rs_softmax_xent_forward(float *probs, float *nll, const float *logits, const int *targets,
                               int R, int V)
{
    double total = 0.0;
    for (int r = 0; r < R; r++) {
        const float *x = logits + (size_t)r * V;
        float *p = probs + (size_t)r * V;
        const float logit_y = x[targets[r]];
        const float max = rs_vmax(x, (size_t)V);
        const double sum = rs_vexp_shift_sum(p, x, max, (size_t)V);
        /* log p(y) = logit_y - max - log Σ exp(logit - max): finite even where p(y) underflows. */
        float logp = (float)((double)logit_y - max - log(sum));
        rs_vscale_shift(p, (float)(1.0 / sum), 0.0f, (size_t)V);
        nll[r] = targets[r] == RS_PAD ? 0.0f : -logp;
        total += nll[r];
    }
    return total;
}

void rs_softmax_xent_backward(float *d_logits, const float *probs, const int *targets,
                              float smoothing, float scale, int R, int V)
{
    const float uniform = smoothing / (float)V;
    for (int r = 0; r < R; r++) {
        float *d = d_logits + (size_t)r * V;
        const float *p = probs + (size_t)r * V;
        if (targets[r] == RS_PAD) {
            memset(d, 0, sizeof(float) * V);
            continue;
        }
        if (d != p)
            memcpy(d, p, sizeof(float) * V);
        /* forward was: L = -Σ_v q_v log p_v, p = softmax(logits). */
        rs_vscale_shift(d, scale, uniform, (size_t)V);
        d[targets[r]] -= scale * (1.0f - smoothing);
    }
}
