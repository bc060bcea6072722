/* The paper's alignment model (Bahdanau et al. 2014, A.1.2), additive
 * attention, forward and backward; attention.h has the forward equations
 * and the shapes, attention_variants.c the other kinds. Backward for one
 * decoder step, from dc = ∂L/∂c_i:
 *
 *   c_i = Σ_j α_ij h_j                 dα_ij = dc · h_j,   dh_j += α_ij dc
 *   α_i = softmax(ε_i)                 dε_ij = α_ij (dα_ij − Σ_k α_ik dα_ik)
 *   ε_ij = v_a · φ_ij,  φ_ij = tanh(W_a s_{i−1} + key_j),  key_j = U_a h_j + b_a
 *                                      dpre_ij = dε_ij v_a ⊙ (1 − φ_ij²),   dv_a += dε_ij φ_ij
 *                                      dkey_j += dpre_ij,   d(W_a s_{i−1}) = Σ_j dpre_ij
 *                                      ds_{i−1} += W_aᵀ d(W_a s_{i−1})
 *
 * Padded positions have α = 0 and get no gradient. What the steps share is
 * taken back once, after all of them, in one product each: the keys to U_a
 * (or K), b_a and the annotations (rs_attention_keys_backward), and
 * d(W_a s_{i−1}) of every step to W_a (rs_attention_query_backward):
 *
 *   dU += Σ_j dkey_j h_jᵀ,  db_a += Σ_j dkey_j,  dh_j += Uᵀ dkey_j,  dW_a += Σ_i d(W_a s_{i−1}) s_{i−1}ᵀ
 */
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
    const int ka = rs_attention_key_size(kind, n, a);
    return (rs_attention_weights){
        .kind = kind,
        .n = n,
        .a = a,
        .W = RS_LINEAR(additive ? RS_CMAT(t->att_W, a, n) : RS_CMAT(NULL, 0, 0)),
        .v = additive ? t->att_v : NULL,
        .U = RS_LINEAR(RS_CMAT(key_side(t, kind), ka, 2 * n)),
        .b = additive ? t->att_b : NULL,
    };
}

rs_attention_grads rs_attention_grads_of(const rs_tensors *g, int kind)
{
    const int additive = kind == RS_ATT_ADDITIVE;
    return (rs_attention_grads){.W = additive ? g->att_W : NULL,
                                .v = additive ? g->att_v : NULL,
                                .U = key_side(g, kind),
                                .b = additive ? g->att_b : NULL};
}

int rs_attention_sentence(const rs_attention_source *src, int b)
{
    return src->sentence ? src->sentence[b] : b;
}

int rs_attention_source_rows(const rs_attention_source *src)
{
    return src->sentence ? src->N : src->B;
}

void rs_attention_keys_forward(rs_mat keys, rs_cmat annotations, const rs_attention_weights *w)
{
    if (w->kind == RS_ATT_NONE)
        return; /* no keys */
    /* key_j = U h_j (+ b_a) */
    rs_linear_forward(keys, annotations, &w->U, 0.0f);
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
    rs_matmul_backward_input(d_annotations, d_keys, w->U.W, 1.0f);
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

void rs_attention_weigh(float *alpha, float *context, const rs_attention_source *src, int b, int n2)
{
    const int len = src->src_len[b], N = rs_attention_source_rows(src);
    const size_t x = (size_t)rs_attention_sentence(src, b);
    rs_attention_softmax(alpha, len, src->S);
    /* c_b = Σ_j α_bj h_jb: the rows h_jb are N·2n apart in time-major order. */
    rs_vweighted_sum(context, alpha, src->annotations + x * n2, (size_t)N * n2,
                     (size_t)(len > 0 ? len : 0), (size_t)n2);
}

void rs_attention_weigh_backward(const rs_attention_step_grads *d, const float *alpha,
                                 const float *dc, const rs_attention_source *src, int b, int n2)
{
    const int len = src->src_len[b], N = rs_attention_source_rows(src);
    const size_t x = (size_t)rs_attention_sentence(src, b);
    /* forward was: c = Σ_j α_j h_j, so dα_j = dc · h_j and dh_j += α_j dc. */
    rs_vweighted_sum_backward(d->alpha, d->annotations + x * n2, dc, src->annotations + x * n2,
                              alpha, (size_t)N * n2, (size_t)(len > 0 ? len : 0), (size_t)n2);
    float weighted = 0.0f; /* Σ_k α_k dα_k */
    for (int j = 0; j < len; j++)
        weighted += alpha[j] * d->alpha[j];
    /* forward was: α = softmax(ε), so dε_j = α_j (dα_j - Σ_k α_k dα_k). */
    for (int j = 0; j < len; j++)
        d->scores[j] = alpha[j] * (d->alpha[j] - weighted);
}

void rs_attention_forward(const rs_attention_step *st, const rs_attention_source *src,
                          const rs_attention_weights *w)
{
    const int n = w->n, a = w->a, B = src->B, S = src->S, N = rs_attention_source_rows(src);
    /* W_a s_{i-1}: once per row, for all j */
    rs_linear_forward(RS_MAT(st->query_proj, B, a), RS_CMAT(st->query, B, n), &w->W, 0.0f);
    for (int b = 0; b < B; b++) {
        float *alpha = st->alpha + (size_t)b * S; /* the scores ε_j, then α = softmax(ε) */
        const size_t x = (size_t)rs_attention_sentence(src, b);
        for (int j = 0; j < src->src_len[b]; j++)
            /* ε_j = v_a · φ_j, φ_j = tanh(W_a s + key_j), φ kept */
            alpha[j] = rs_vtanh_add_dot(st->hidden + ((size_t)b * S + j) * a,
                                        st->query_proj + (size_t)b * a,
                                        src->keys + ((size_t)j * N + x) * a, w->v, (size_t)a);
        rs_attention_weigh(alpha, st->context + (size_t)b * 2 * n, src, b, 2 * n);
    }
}

void rs_attention_backward(const rs_attention_step_grads *d, const rs_attention_grads *g,
                           const rs_attention_step *st, const rs_attention_source *src,
                           const rs_attention_weights *w)
{
    const int n = w->n, a = w->a, B = src->B, S = src->S, N = rs_attention_source_rows(src);
    memset(d->query_proj, 0, sizeof(float) * (size_t)B * a);
    for (int b = 0; b < B; b++) {
        const float *alpha = st->alpha + (size_t)b * S;
        const size_t x = (size_t)rs_attention_sentence(src, b);
        rs_attention_weigh_backward(d, alpha, d->context + (size_t)b * 2 * n, src, b, 2 * n);
        /* forward was: ε = v_a · φ, φ = tanh(W_a s + key). */
        for (int j = 0; j < src->src_len[b]; j++)
            rs_vtanh_add_dot_backward(
                d->query_proj + (size_t)b * a, d->keys + ((size_t)j * N + x) * a, g->v,
                st->hidden + ((size_t)b * S + j) * a, w->v, d->scores[j], (size_t)a);
    }
    /* forward was: query_proj = W_a s. */
    rs_matmul_backward_input(RS_MAT(d->query, B, n), RS_CMAT(d->query_proj, B, a), w->W.W, 1.0f);
}

void rs_attention_query_backward(const rs_attention_grads *g, rs_cmat d_query_proj, rs_cmat queries,
                                 const rs_attention_weights *w)
{
    if (w->kind != RS_ATT_ADDITIVE)
        return;
    /* forward was: query_proj = W_a s, at every step. */
    rs_matmul_backward_weight(RS_MAT(g->W, w->a, w->n), d_query_proj, queries);
}
