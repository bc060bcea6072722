/* The alignment model, forward and backward; attention.h has the forward
 * equations and the shapes. Backward for one decoder step, from dc = ∂L/∂c_i:
 *
 *   c_i = Σ_j α_ij h_j                 dα_ij = dc · h_j,   dh_j += α_ij dc
 *   α_i = softmax(ε_i)                 dε_ij = α_ij (dα_ij − Σ_k α_ik dα_ik)
 *   additive: ε_ij = v_a · t_ij,  t_ij = tanh(W_a s_{i−1} + U_a h_j + b_a)
 *                                      dpre_ij = dε_ij v_a ⊙ (1 − t_ij²),   dv_a += dε_ij t_ij
 *                                      dkey_j += dpre_ij,   ds_{i−1} += W_aᵀ Σ_j dpre_ij
 *   dot kinds: ε_ij = σ s_{i−1} · key_j (σ = 1, or 1/√n scaled)
 *                                      ds_{i−1} += σ dε_ij key_j,   dkey_j += σ dε_ij s_{i−1}
 *
 * Padded positions have α = 0 and get no gradient. The keys' gradients are
 * taken back to U_a (or K) and to the annotations once per batch
 * (rs_attention_keys_backward), as the keys were computed once. */
#include <math.h>
#include <string.h>

#include "nn/attention.h"
#include "nn/linalg.h"
#include "nn/vecmath.h"

int rs_attention_key_size(int kind, int n, int a)
{
    return kind == RS_ATT_ADDITIVE ? a : n;
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

void rs_attention_keys_forward(int kind, float *keys, const float *annotations, const float *U,
                               const float *b, int R, int n, int a)
{
    const double phase_t0 = rs_phase_start();
    int ka = rs_attention_key_size(kind, n, a);
    rs_matmul_forward(RS_MAT(keys, R, ka), RS_CMAT(annotations, R, 2 * n), RS_CMAT(U, ka, 2 * n),
                      0.0f);
    if (kind == RS_ATT_ADDITIVE)
        rs_add_bias(keys, b, R, ka, ka);
    rs_phase_stop(RS_PHASE_ATTENTION, phase_t0);
}

void rs_attention_keys_backward(int kind, float *dannotations, float *dU, float *db,
                                const float *dkeys, const float *annotations, const float *U, int R,
                                int n, int a)
{
    const double phase_t0 = rs_phase_start();
    int ka = rs_attention_key_size(kind, n, a);
    rs_matmul_backward_input(RS_MAT(dannotations, R, 2 * n), RS_CMAT(dkeys, R, ka),
                             RS_CMAT(U, ka, 2 * n), 1.0f);
    rs_matmul_backward_weight(RS_MAT(dU, ka, 2 * n), RS_CMAT(dkeys, R, ka),
                              RS_CMAT(annotations, R, 2 * n));
    if (kind == RS_ATT_ADDITIVE)
        rs_add_row_sums(db, dkeys, R, ka, ka);
    rs_phase_stop(RS_PHASE_ATTENTION, phase_t0);
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

void rs_attention_forward(float *context, const rs_attention_saved *saved, const float *query,
                          const rs_attention_source *src, const rs_attention_weights *w)
{
    const double phase_t0 = rs_phase_start();
    const int kind = w->kind, n = w->n, a = w->a, B = src->B, S = src->S, N = source_rows(src);
    const int ka = rs_attention_key_size(kind, n, a), n2 = 2 * n;
    if (kind == RS_ATT_ADDITIVE)
        rs_matmul_forward(RS_MAT(saved->query_proj, B, a), RS_CMAT(query, B, n),
                          RS_CMAT(w->W_a, a, n), 0.0f);
    const float scale = dot_scale(kind, n);
    for (int b = 0; b < B; b++) {
        float *scores = saved->alpha + (size_t)b * S;
        const int len = src->src_len[b];
        const size_t x = (size_t)sentence_of(src, b);
        for (int j = 0; j < len; j++) {
            const float *key = src->keys + ((size_t)j * N + x) * ka;
            if (kind == RS_ATT_ADDITIVE)
                /* ε_j = v_a · tanh(W_a s + U_a h_j + b_a), the tanh kept */
                scores[j] =
                    rs_vtanh_add_dot(saved->hidden + ((size_t)b * S + j) * a,
                                     saved->query_proj + (size_t)b * a, key, w->v_a, (size_t)a);
            else
                scores[j] = scale * rs_vdot(query + (size_t)b * n, key, (size_t)n);
        }
        rs_attention_softmax(scores, len, S);
        /* c_b = Σ_j α_bj h_jb: the rows h_jb are B·2n apart in time-major order. */
        float *c = context + (size_t)b * n2;
        memset(c, 0, sizeof(float) * n2);
        for (int j = 0; j < len; j++)
            rs_vaxpy(c, scores[j], src->annotations + ((size_t)j * N + x) * n2, (size_t)n2);
    }
    rs_phase_stop(RS_PHASE_ATTENTION, phase_t0);
}

void rs_attention_backward(const rs_attention_grads *d, const float *dcontext,
                           const rs_attention_saved *saved, const float *query,
                           const rs_attention_source *src, const rs_attention_weights *w,
                           float *scratch)
{
    const double phase_t0 = rs_phase_start();
    const int kind = w->kind, n = w->n, a = w->a, B = src->B, S = src->S, N = source_rows(src);
    const int ka = rs_attention_key_size(kind, n, a), n2 = 2 * n;
    const float scale = dot_scale(kind, n);
    if (kind == RS_ATT_ADDITIVE)
        memset(d->query_proj, 0, sizeof(float) * (size_t)B * a);
    for (int b = 0; b < B; b++) {
        const float *al = saved->alpha + (size_t)b * S, *dc = dcontext + (size_t)b * n2;
        const int len = src->src_len[b];
        const size_t x = (size_t)sentence_of(src, b);
        float *dscore = scratch;
        /* forward was: c = Σ_j α_j h_j, so dα_j = dc · h_j and dh_j += α_j dc. */
        float weighted = 0.0f;
        for (int j = 0; j < len; j++) {
            const float *h = src->annotations + ((size_t)j * N + x) * n2;
            float *dh = d->annotations + ((size_t)j * N + x) * n2;
            float da = rs_vdot(dc, h, (size_t)n2);
            rs_vaxpy(dh, al[j], dc, (size_t)n2);
            dscore[j] = da;
            weighted += al[j] * da;
        }
        /* forward was: α = softmax(ε), so dε_j = α_j (dα_j - Σ_k α_k dα_k). */
        for (int j = 0; j < len; j++)
            dscore[j] = al[j] * (dscore[j] - weighted);
        for (int j = 0; j < len; j++) {
            float *dkey = d->keys + ((size_t)j * N + x) * ka;
            if (kind == RS_ATT_ADDITIVE) {
                /* forward was: ε = v · t, t = tanh(W_a s + key). */
                rs_vtanh_add_dot_backward(d->query_proj + (size_t)b * a, dkey, d->v_a,
                                          saved->hidden + ((size_t)b * S + j) * a, w->v_a,
                                          dscore[j], (size_t)a);
            } else {
                /* forward was: ε = scale · s · key. */
                const float *key = src->keys + ((size_t)j * N + x) * ka;
                const float *q = query + (size_t)b * n;
                float *dq = d->query + (size_t)b * n;
                float ds = scale * dscore[j];
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
                                 RS_CMAT(w->W_a, a, n), 1.0f);
    rs_phase_stop(RS_PHASE_ATTENTION, phase_t0);
}
