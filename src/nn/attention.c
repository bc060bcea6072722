/* The alignment model, forward and backward; attention.h has the forward
 * equations and the shapes. Backward for one decoder step, from dc = ∂L/∂c_i:
 *
 *   c_i = Σ_j α_ij h_j                 dα_ij = dc · h_j,   dh_j += α_ij dc
 *   α_i = softmax(ε_i)                 dε_ij = α_ij (dα_ij − Σ_k α_ik dα_ik)
 *   additive: ε_ij = v_a · φ_ij,  φ_ij = tanh(W_a s_{i−1} + key_j),  key_j = U_a h_j + b_a
 *                                      dpre_ij = dε_ij v_a ⊙ (1 − φ_ij²),   dv_a += dε_ij φ_ij
 *                                      dkey_j += dpre_ij,   d(W_a s_{i−1}) = Σ_j dpre_ij
 *                                      ds_{i−1} += W_aᵀ d(W_a s_{i−1})
 *   dot kinds: ε_ij = σ s_{i−1} · key_j,  key_j = K h_j  (σ = 1, or 1/√n scaled)
 *                                      ds_{i−1} += σ dε_ij key_j,   dkey_j += σ dε_ij s_{i−1}
 *
 * Padded positions have α = 0 and get no gradient. What the steps share is
 * taken back once, after all of them, in one product each: the keys to U_a
 * (or K), b_a and the annotations (rs_attention_keys_backward), and
 * d(W_a s_{i−1}) of every step to W_a (rs_attention_query_backward):
 *
 *   dU += Σ_j dkey_j h_jᵀ,  db_a += Σ_j dkey_j,  dh_j += Uᵀ dkey_j,  dW_a += Σ_i d(W_a s_{i−1}) s_{i−1}ᵀ
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
#include "nn/linalg.h"
#include "nn/vecmath.h"

int rs_attention_key_size(int kind, int n, int a)
{
    if (kind == RS_ATT_NONE)
        return 0;
    return kind == RS_ATT_ADDITIVE ? a : n;
}

/* The key side's matrix: U_a (additive), none (NULL) or K. */
static float *key_side(const rs_tensors *t, int kind)
{
    if (kind == RS_ATT_NONE)
        return NULL;
    return kind == RS_ATT_ADDITIVE ? t->att_U : t->att_K;
}

rs_attention_weights rs_attention_weights_of(const rs_tensors *t, int kind, int n, int a)
{
    const int additive = kind == RS_ATT_ADDITIVE;
    return (rs_attention_weights){kind,
                                  n,
                                  a,
                                  additive ? t->att_W : NULL,
                                  additive ? t->att_v : NULL,
                                  key_side(t, kind),
                                  additive ? t->att_b : NULL,
                                  NULL,
                                  {0},
                                  NULL,
                                  NULL};
}

rs_attention_grads rs_attention_grads_of(const rs_tensors *g, int kind)
{
    const int additive = kind == RS_ATT_ADDITIVE;
    return (rs_attention_grads){additive ? g->att_W : NULL, additive ? g->att_v : NULL,
                                key_side(g, kind), additive ? g->att_b : NULL};
}

/* Row b's sentence, and the sentences' row stride (see rs_attention_source). */
static int sentence_of(const rs_attention_source *src, int b)
{
    return src->sentence ? src->sentence[b] : b;
}

static int source_rows(const rs_attention_source *src)
{
    return src->sentence ? src->N : src->B;
}

static float dot_scale(int kind, int n)
{
    return kind == RS_ATT_SCALED_DOT ? 1.0f / sqrtf((float)n) : 1.0f;
}

void rs_attention_keys_forward(rs_mat keys, rs_cmat annotations, const rs_attention_weights *w)
{
    if (w->kind == RS_ATT_NONE)
        return; /* no keys */
    const int ka = rs_attention_key_size(w->kind, w->n, w->a);
    /* key_j = U h_j (+ b_a) */
    rs_matmul_forward_t(keys, annotations, RS_CMAT(w->U, ka, 2 * w->n),
                        rs_wt_view(w->U_t, 2 * w->n, ka), 0.0f);
    if (w->b)
        rs_add_bias(keys.data, w->b, keys.rows, keys.cols, keys.stride);
}

void rs_attention_keys_backward(rs_mat d_annotations, const rs_attention_grads *g, rs_cmat d_keys,
                                rs_cmat annotations, const rs_attention_weights *w)
{
    if (w->kind == RS_ATT_NONE)
        return;
    const int ka = rs_attention_key_size(w->kind, w->n, w->a);
    /* forward was: key_j = U h_j (+ b_a). */
    rs_matmul_backward_input(d_annotations, d_keys, RS_CMAT(w->U, ka, 2 * w->n), 1.0f);
    rs_matmul_backward_weight(RS_MAT(g->U, ka, 2 * w->n), d_keys, annotations);
    if (g->b)
        rs_add_row_sums(g->b, d_keys.data, d_keys.rows, d_keys.cols, d_keys.stride);
}

void rs_attention_softmax(float *x, int len, int total)
{
    if (len > 0) {
        float sum = (float)rs_vexp_shift_sum(x, x, rs_vmax(x, (size_t)len), (size_t)len);
        for (int j = 0; j < len; j++)
            x[j] /= sum;
    }
    for (int j = len < 0 ? 0 : len; j < total; j++)
        x[j] = 0.0f;
}

/* The row of annotation j of row b's sentence, [2n] (time-major). */
static const float *annotation_of(const rs_attention_source *src, int j, int b, int n2)
{
    return src->annotations + ((size_t)j * source_rows(src) + (size_t)sentence_of(src, b)) * n2;
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
    const size_t N = (size_t)source_rows(src), n2 = 2 * (size_t)n;
    for (int b = 0; b < src->B; b++) {
        const float *dc = d->context + (size_t)b * n2;
        const size_t x = (size_t)sentence_of(src, b), last = (size_t)src->src_len[b] - 1;
        rs_vaxpy(d->annotations + (last * N + x) * n2, 1.0f, dc, (size_t)n);
        rs_vaxpy(d->annotations + x * n2 + n, 1.0f, dc + n, (size_t)n);
    }
}

void rs_attention_forward(const rs_attention_step *st, const rs_attention_source *src,
                          const rs_attention_weights *w)
{
    if (w->kind == RS_ATT_NONE) {
        fixed_context_forward(st, src, w->n);
        return;
    }
    const int kind = w->kind, n = w->n, a = w->a, B = src->B, S = src->S, N = source_rows(src);
    const int ka = rs_attention_key_size(kind, n, a), n2 = 2 * n;
    /* W_a s_{i-1}: once per row, for all j */
    if (kind == RS_ATT_ADDITIVE)
        rs_q8_or_float_forward(RS_MAT(st->query_proj, B, a), RS_CMAT(st->query, B, n),
                               RS_CMAT(w->W, a, n), rs_wt_view(w->W_t, n, a), w->q8_W, &w->q8_x,
                               0.0f);
    const float scale = dot_scale(kind, n);
    for (int b = 0; b < B; b++) {
        float *alpha = st->alpha + (size_t)b * S; /* the scores ε_j, then α = softmax(ε) */
        const int len = src->src_len[b];
        const size_t x = (size_t)sentence_of(src, b);
        for (int j = 0; j < len; j++) {
            const float *key = src->keys + ((size_t)j * N + x) * ka;
            if (kind == RS_ATT_ADDITIVE)
                /* ε_j = v_a · φ_j, φ_j = tanh(W_a s + key_j), φ kept */
                alpha[j] = rs_vtanh_add_dot(st->hidden + ((size_t)b * S + j) * a,
                                            st->query_proj + (size_t)b * a, key, w->v, (size_t)a);
            else
                /* ε_j = scale · s · key_j */
                alpha[j] = scale * rs_vdot(st->query + (size_t)b * n, key, (size_t)n);
        }
        rs_attention_softmax(alpha, len, S);
        /* c_b = Σ_j α_bj h_jb: the rows h_jb are N·2n apart in time-major order. */
        float *c = st->context + (size_t)b * n2;
        memset(c, 0, sizeof(float) * n2);
        for (int j = 0; j < len; j++)
            rs_vaxpy(c, alpha[j], src->annotations + ((size_t)j * N + x) * n2, (size_t)n2);
    }
}

void rs_attention_backward(const rs_attention_step_grads *d, const rs_attention_grads *g,
                           const rs_attention_step *st, const rs_attention_source *src,
                           const rs_attention_weights *w)
{
    if (w->kind == RS_ATT_NONE) {
        fixed_context_backward(d, src, w->n);
        return;
    }
    const int kind = w->kind, n = w->n, a = w->a, B = src->B, S = src->S, N = source_rows(src);
    const int ka = rs_attention_key_size(kind, n, a), n2 = 2 * n;
    const float scale = dot_scale(kind, n);
    if (kind == RS_ATT_ADDITIVE)
        memset(d->query_proj, 0, sizeof(float) * (size_t)B * a);
    for (int b = 0; b < B; b++) {
        const float *alpha = st->alpha + (size_t)b * S, *dc = d->context + (size_t)b * n2;
        const int len = src->src_len[b];
        const size_t x = (size_t)sentence_of(src, b);
        /* forward was: c = Σ_j α_j h_j, so dα_j = dc · h_j and dh_j += α_j dc. */
        float weighted = 0.0f; /* Σ_k α_k dα_k */
        for (int j = 0; j < len; j++) {
            const float *h = src->annotations + ((size_t)j * N + x) * n2;
            float *dh = d->annotations + ((size_t)j * N + x) * n2;
            d->alpha[j] = rs_vdot(dc, h, (size_t)n2);
            rs_vaxpy(dh, alpha[j], dc, (size_t)n2);
            weighted += alpha[j] * d->alpha[j];
        }
        /* forward was: α = softmax(ε), so dε_j = α_j (dα_j - Σ_k α_k dα_k). */
        for (int j = 0; j < len; j++)
            d->scores[j] = alpha[j] * (d->alpha[j] - weighted);
        for (int j = 0; j < len; j++) {
            float *dkey = d->keys + ((size_t)j * N + x) * ka;
            if (kind == RS_ATT_ADDITIVE) {
                /* forward was: ε = v_a · φ, φ = tanh(W_a s + key). */
                rs_vtanh_add_dot_backward(d->query_proj + (size_t)b * a, dkey, g->v,
                                          st->hidden + ((size_t)b * S + j) * a, w->v, d->scores[j],
                                          (size_t)a);
            } else {
                /* forward was: ε = scale · s · key. */
                const float *key = src->keys + ((size_t)j * N + x) * ka;
                const float *q = st->query + (size_t)b * n;
                float *dq = d->query + (size_t)b * n;
                float ds = scale * d->scores[j];
                for (int k = 0; k < n; k++) {
                    dq[k] += ds * key[k];
                    dkey[k] += ds * q[k];
                }
            }
        }
    }
    /* forward was: query_proj = W_a s. */
    if (kind == RS_ATT_ADDITIVE)
        rs_matmul_backward_input(RS_MAT(d->query, B, n), RS_CMAT(d->query_proj, B, a),
                                 RS_CMAT(w->W, a, n), 1.0f);
}

void rs_attention_query_backward(const rs_attention_grads *g, rs_cmat d_query_proj, rs_cmat queries,
                                 const rs_attention_weights *w)
{
    if (w->kind != RS_ATT_ADDITIVE)
        return;
    /* forward was: query_proj = W_a s, at every step. */
    rs_matmul_backward_weight(RS_MAT(g->W, w->a, w->n), d_query_proj, queries);
}
