/* The attention kinds other than the paper's, forward and backward;
 * attention.h has their forward equations. Backward for one decoder step of
 * the dot kinds, after the weighing's (attention.c):
 *
 *   ε_ij = σ s_{i−1} · key_j,  key_j = K h_j  (σ = 1 general, 1/√n scaled-dot)
 *                                      ds_{i−1} += σ dε_ij key_j,   dkey_j += σ dε_ij s_{i−1}
 *
 * none (the fixed-length encoder–decoder, RNNencdec): no scores, no weights;
 * every step's context is the same c = [→h_S ; ←h_1], the forward half of the
 * annotation at the sentence's own last position S = src_len (not the
 * batch's padded end) and the backward half of the annotation at position 1:
 *
 *   c_i[0 … n−1] = h_S[0 … n−1]        dh_S[0 … n−1]  += dc_i[0 … n−1]
 *   c_i[n … 2n−1] = h_1[n … 2n−1]      dh_1[n … 2n−1] += dc_i[n … 2n−1]
 *
 * summed over the steps i as each step's backward runs. α is all 0: there is
 * no alignment. */
#include <math.h>
#include <string.h>

#include "nn/attention.h"
#include "nn/attention_variants.h"
#include "nn/vecmath.h"

static float dot_scale(int kind, int n)
{
    return kind == RS_ATT_SCALED_DOT ? 1.0f / sqrtf((float)n) : 1.0f;
}

/* The row of annotation j of row b's sentence, [2n] (time-major). */
static const float *annotation_of(const rs_attention_source *src, int j, int b, int n2)
{
    return src->annotations +
           ((size_t)j * rs_attention_source_rows(src) + (size_t)rs_attention_sentence(src, b)) * n2;
}

/* none: c_b = [→h_S ; ←h_1] of row b's sentence, S its own length, for
 * every step; α_b = 0. */
static void fixed_context_forward(const rs_attention_step *st, const rs_attention_source *src,
                                  int n)
{
    const int B = src->B, S = src->S;
    memset(st->alpha, 0, sizeof(float) * (size_t)B * S);
    for (int b = 0; b < B; b++) {
        float *c = st->context + (size_t)b * 2 * n;
        memcpy(c, annotation_of(src, src->src_len[b] - 1, b, 2 * n), sizeof(float) * n);
        memcpy(c + n, annotation_of(src, 0, b, 2 * n) + n, sizeof(float) * n);
    }
}

/* Its backward: forward was c = [h_S[0 … n−1] ; h_1[n … 2n−1]], a copy,
 * so dh_S[0 … n−1] += dc[0 … n−1] and dh_1[n … 2n−1] += dc[n … 2n−1]. */
static void fixed_context_backward(const rs_attention_step_grads *d, const rs_attention_source *src,
                                   int n)
{
    const size_t N = (size_t)rs_attention_source_rows(src), n2 = 2 * (size_t)n;
    for (int b = 0; b < src->B; b++) {
        const float *dc = d->context + (size_t)b * n2;
        const size_t x = (size_t)rs_attention_sentence(src, b);
        const size_t last = (size_t)src->src_len[b] - 1;
        rs_vaxpy(d->annotations + (last * N + x) * n2, 1.0f, dc, (size_t)n);
        rs_vaxpy(d->annotations + x * n2 + n, 1.0f, dc + n, (size_t)n);
    }
}

/* general and scaled-dot: ε_j = σ s · key_j, then the weighing. */
static void dot_forward(const rs_attention_step *st, const rs_attention_source *src,
                        const rs_attention_weights *w)
{
    const int n = w->n, B = src->B, S = src->S, N = rs_attention_source_rows(src);
    const float scale = dot_scale(w->kind, n);
    for (int b = 0; b < B; b++) {
        float *alpha = st->alpha + (size_t)b * S; /* the scores ε_j, then α = softmax(ε) */
        const size_t x = (size_t)rs_attention_sentence(src, b);
        for (int j = 0; j < src->src_len[b]; j++)
            /* ε_j = scale · s · key_j */
            alpha[j] = scale * rs_vdot(st->query + (size_t)b * n,
                                       src->keys + ((size_t)j * N + x) * n, (size_t)n);
        rs_attention_weigh(alpha, st->context + (size_t)b * 2 * n, src, b, 2 * n);
    }
}

static void dot_backward(const rs_attention_step_grads *d, const rs_attention_step *st,
                         const rs_attention_source *src, const rs_attention_weights *w)
{
    const int n = w->n, B = src->B, S = src->S, N = rs_attention_source_rows(src);
    const float scale = dot_scale(w->kind, n);
    for (int b = 0; b < B; b++) {
        const size_t x = (size_t)rs_attention_sentence(src, b);
        rs_attention_weigh_backward(d, st->alpha + (size_t)b * S, d->context + (size_t)b * 2 * n,
                                    src, b, 2 * n);
        const float *q = st->query + (size_t)b * n;
        float *dq = d->query + (size_t)b * n;
        for (int j = 0; j < src->src_len[b]; j++) {
            /* forward was: ε = scale · s · key. */
            const float *key = src->keys + ((size_t)j * N + x) * n;
            float *dkey = d->keys + ((size_t)j * N + x) * n;
            float ds = scale * d->scores[j];
            for (int k = 0; k < n; k++) {
                dq[k] += ds * key[k];
                dkey[k] += ds * q[k];
            }
        }
    }
}

void rs_attention_variant_forward(const rs_attention_step *st, const rs_attention_source *src,
                                  const rs_attention_weights *w)
{
    if (w->kind == RS_ATT_NONE)
        fixed_context_forward(st, src, w->n);
    else
        dot_forward(st, src, w);
}

void rs_attention_variant_backward(const rs_attention_step_grads *d, const rs_attention_grads *g,
                                   const rs_attention_step *st, const rs_attention_source *src,
                                   const rs_attention_weights *w)
{
    if (w->kind == RS_ATT_NONE)
        fixed_context_backward(d, src, w->n);
    else
        dot_backward(d, st, src, w);
}
