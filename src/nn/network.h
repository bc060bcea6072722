/* The whole network of docs/model.md over a minibatch: encoder,
 * initial state, attention, decoder GRU, deep output and loss, forward and
 * hand-written backward; and the single decoder step that translation uses.
 *
 * Shapes: B batch, S source length, T target length (both with </s>),
 * R = T·B target positions, m embedding, n hidden, 2n annotation, a attention,
 * ka key size (a additive, n dot kinds), l maxout units, V target vocabulary.
 * Memory order: time-major, row-major: a [T,B,n] buffer holds step t, row b
 * at offset (t·B + b)·n. All activations live in one arena sized up front by
 * rs_workspace_alloc for the largest batch; nothing is allocated per batch. */
#ifndef RS_NETWORK_H
#define RS_NETWORK_H

#include "nn/attention.h"
#include "data/batch.h"
#include "model/model.h"

/* Every buffer of the training workspace, in one table:
 * X(field, floats, shape and meaning). The struct's fields, the arena's size
 * and the carving of the arena all come from it. Counts may use B, S, T,
 * R = T·B, m, n, ka, l, V (as size_t). */
#define RS_WORKSPACE_TABLE(X)                                                                      \
    /* encoder */                                                                                  \
    X(src_x, S *B *m, "[S,B,m] source embeddings")                                                 \
    X(src_mask, S *B, "[S,B] 1 on real tokens")                                                    \
    X(fwd_xproj, S *B * 3 * n, "[S,B,3n] W x + b, forward GRU")                                    \
    X(bwd_xproj, S *B * 3 * n, "[S,B,3n] W x + b, backward GRU")                                   \
    X(fwd_gates, S *B * 3 * n, "[S,B,3n] z, r, g")                                                 \
    X(bwd_gates, S *B * 3 * n, "[S,B,3n] z, r, g")                                                 \
    X(fwd_rh, S *B *n, "[S,B,n] r ⊙ h_prev")                                                       \
    X(bwd_rh, S *B *n, "[S,B,n] r ⊙ h_prev")                                                       \
    X(fwd_states, (S + 1) * B * n, "[S+1,B,n] [0] = 0, [j+1] = fwd_h_j")                           \
    X(bwd_states, (S + 1) * B * n, "[S+1,B,n] [j] = bwd_h_j, [S] = 0")                             \
    X(annotations, S *B * 2 * n, "[S,B,2n] h_j = [fwd_h_j ; bwd_h_j]")                             \
    X(keys, S *B *ka, "[S,B,ka] U_a h_j + b_a (or K h_j)")                                         \
    /* decoder */                                                                                  \
    X(dec_emb, R *m, "[T,B,m] E y_{i-1}")                                                          \
    X(tgt_mask, R, "[T,B]")                                                                        \
    X(dec_xproj, R * 3 * n, "[T,B,3n] W' u_i + b'")                                                \
    X(dec_gates, R * 3 * n, "[T,B,3n]")                                                            \
    X(dec_rh, R *n, "[T,B,n]")                                                                     \
    X(dec_states, (T + 1) * B * n, "[T+1,B,n] [0] = s_0, [i] = s_i")                               \
    X(alpha, R *S, "[T,B,S] alignment weights")                                                    \
    X(att_hidden, R *S *ka, "[T,B,S,a] tanh(W_a s + U_a h + b_a), additive")                       \
    X(context, R * 2 * n, "[T,B,2n] c_i")                                                          \
    X(query_proj, B *ka, "[B,a] scratch")                                                          \
    X(tpre, R * 2 * l, "[R,2l]")                                                                   \
    X(tmax, R *l, "[R,l]")                                                                         \
    X(probs, R *V, "[R,V] logits → probabilities → dlogits")                                       \
    X(nll, R, "[R] -log p(y_i), 0 on padding")                                                     \
    /* backward */                                                                                 \
    X(d_states, R *n, "[R,n] dL/ds_i from the readout")                                            \
    X(d_dec_emb, R *m, "[T,B,m]")                                                                  \
    X(d_context, R * 2 * n, "[T,B,2n]")                                                            \
    X(dec_dpre, R * 3 * n, "[T,B,3n]")                                                             \
    X(d_query_proj, R *ka, "[T,B,a]")                                                              \
    X(d_annotations, S *B * 2 * n, "[S,B,2n]")                                                     \
    X(d_keys, S *B *ka, "[S,B,ka]")                                                                \
    X(fwd_dpre, S *B * 3 * n, "[S,B,3n]")                                                          \
    X(bwd_dpre, S *B * 3 * n, "[S,B,3n]")                                                          \
    X(d_src_x, S *B *m, "[S,B,m]")                                                                 \
    X(dt, R *l, "[R,l]")                                                                           \
    X(dtpre, R * 2 * l, "[R,2l]")                                                                  \
    X(ds, B *n, "[B,n]")                                                                           \
    X(carry, B *n, "[B,n]")                                                                        \
    X(scratch, B *n, "[B,n]")                                                                      \
    X(d_scores, S, "[S]")                                                                          \
    /* dropout multipliers (training only) */                                                      \
    X(drop_src, S *B *m, "[S,B,m]")                                                                \
    X(drop_ann, S *B * 2 * n, "[S,B,2n]")                                                          \
    X(drop_emb, R *m, "[T,B,m]")                                                                   \
    X(drop_out, R *l, "[R,l]")                                                                     \
    X(drop_src_word, S *B, "[S,B] word dropout: one multiplier per source token")                  \
    X(drop_tgt_word, R, "[T,B] word dropout: one per previous-word input")

/* The dropout probabilities of a training step (all 0 outside training);
 * kept units are scaled by 1 / (1 - p). */
typedef struct {
    float element;  /* each unit of embeddings, annotations and readout */
    float src_word; /* a source token's whole embedding */
    float tgt_word; /* a decoder step's whole previous-word input E y_{i-1} */
} rs_dropout_rates;

typedef struct {
    int max_B, max_S, max_T;
    /* Dropout (training only): rates, and the RNG state the masks of the
     * next forward pass are derived from (the same state, the same masks;
     * each mask has its own stream, so no mask depends on another's size). */
    rs_dropout_rates dropout;
    rs_rng dropout_rng;
    float *arena;
    unsigned char *which; /* [R,l] maxout argmax */
#define RS_WS_FIELD(field, count, doc) float *field;
    RS_WORKSPACE_TABLE(RS_WS_FIELD)
#undef RS_WS_FIELD
} rs_workspace;

int rs_workspace_alloc(rs_workspace *ws, const rs_model *model, int max_B, int max_S, int max_T,
                       rs_error *err);
void rs_workspace_free(rs_workspace *ws);

/* Encoder and initial state only: fills annotations, keys and dec_states[0].
 * Dropout, when ws->dropout.element > 0, applies to the source embeddings and the
 * annotations (the attention's keys and values; not the initial state);
 * word dropout, when ws->dropout.src_word > 0, to whole source embeddings. */
void rs_encode(rs_workspace *ws, const rs_model *model, const rs_batch *batch);

/* Teacher-forced forward pass; returns Σ -log p(y|x) over the batch and
 * leaves each position's -log p in ws->nll. With ws->dropout.element > 0 it also
 * drops target embeddings and the maxout readout (inverted dropout); with
 * ws->dropout.tgt_word > 0, whole previous-word embeddings E y_{i-1} (the
 * decoder's and the deep output's input alike). */
double rs_network_forward(rs_workspace *ws, const rs_model *model, const rs_batch *batch);

/* Backward of the last forward: grads += scale · dL/dθ (L the summed loss, or
 * its label-smoothed version with smoothing > 0). Call after rs_network_forward. */
void rs_network_backward(rs_workspace *ws, const rs_model *model, const rs_batch *batch,
                         const rs_tensors *grads, float smoothing, float scale);

/* One decoder step for translation, over B rows (hypotheses) with their own
 * copies of the source side (keys [S,B,ka], annotations [S,B,2n], src_len [B]).
 * Inputs: state [B,n] = s_{i-1}, prev [B] = y_{i-1}. Outputs: next_state
 * [B,n] = s_i, logits [B,V] and lse [B], so that log p(y_i = v | …) =
 * logits[v] − lse (greedy search takes the argmax of the logits without
 * normalising the row), alpha [B,S]. It runs the same decoder cell as the
 * training forward pass. */
#define RS_STEP_WORKSPACE_TABLE(X)                                                                 \
    X(emb, B *m, "[B,m] E y_{i-1}")                                                                \
    X(context, B * 2 * n, "[B,2n] c_i")                                                            \
    X(xproj, B * 3 * n, "[B,3n] W' u_i + b'")                                                      \
    X(gates, B * 3 * n, "[B,3n]")                                                                  \
    X(rh, B *n, "[B,n]")                                                                           \
    X(hidden, B *S *ka, "[B,S,a] attention tanh")                                                  \
    X(query_proj, B *ka, "[B,a]")                                                                  \
    X(tpre, B * 2 * l, "[B,2l]")                                                                   \
    X(tmax, B *l, "[B,l]")                                                                         \
    X(exp_row, V, "[V] exp(logit − max), for the normaliser")

typedef struct {
    int max_B, max_S;
    float *arena;
    unsigned char *which;
#define RS_WS_FIELD(field, count, doc) float *field;
    RS_STEP_WORKSPACE_TABLE(RS_WS_FIELD)
#undef RS_WS_FIELD
} rs_step_workspace;

int rs_step_workspace_alloc(rs_step_workspace *sw, const rs_model *model, int max_B, int max_S,
                            rs_error *err);
void rs_step_workspace_free(rs_step_workspace *sw);
/* What one translation step gives: next_state s_i [B,n], logits [B,V], lse
 * [B] their log-normalisers (log p(v) = logits[v] - lse), alpha [B,S] the
 * alignment. */
typedef struct {
    float *next_state, *logits, *lse, *alpha;
} rs_step_out;

/* One decoder step for B rows from state s_{i-1} [B,n] and the previous
 * tokens prev [B], attending over src. */
void rs_network_step(rs_step_workspace *sw, const rs_step_out *out, const float *state,
                     const int *prev, const rs_attention_source *src, const rs_model *model);

/* log Σ_v exp(row[v]) of a row of V logits (the log-softmax normaliser);
 * scratch [V]. */
float rs_log_normalizer(const float *row, float *scratch, int V);


#endif
