/* The whole network of docs/model.md over a minibatch: encoder,
 * initial state, attention, decoder GRU, deep output and loss, forward and
 * hand-written backward; and the single decoder step that translation uses.
 *
 * Shapes: B batch, S source length, T target length (both with </s>),
 * R = T·B target positions, m embedding, n hidden, 2n annotation, a attention,
 * ka key size (a additive, n general and scaled-dot), l maxout units, V target
 * vocabulary. Memory order: time-major, row-major: a [T,B,n] buffer holds
 * step t, row b at offset (t·B + b)·n. All activations live in one arena
 * sized up front by rs_workspace_alloc (or, for translation,
 * rs_workspace_alloc_translation; nn/workspace.c) for the largest batch; nothing is
 * allocated per batch. Lifetimes: a forward buffer holds its value from the
 * forward pass to the end of the backward; its gradient twin (the same name
 * with d_, the same shape) holds dL/d of it during the backward. */
#ifndef RS_NETWORK_H
#define RS_NETWORK_H

#include "data/batch.h"
#include "model/model.h"
#include "nn/attention.h"
#include "nn/gru.h"
#include "nn/linear.h"
#include "nn/readout.h"

/* Every buffer of the workspace, in one table: X(field, floats, use,
 * shape and symbol). The struct's fields, the arena's size and the carving
 * of the arena all come from it. What each buffer holds, and which functions
 * write and read it, is written once, in docs/model.md's table ("Symbols,
 * buffers and functions"), under the symbol given here. Counts may use B,
 * S, T, R = T·B, m, n, ka, l, V (as size_t). Step i = 1..T of the decoder
 * is stored at t = i − 1 (dec_states at i).
 *
 * One table serves both workspaces; `use` says which buffers each carves:
 *   training (rs_workspace_alloc): every buffer, B sentences, T target
 *     steps;
 *   translation (rs_workspace_alloc_translation): ENC, sized for the
 *     encoder of B sentences and T = 0 (dec_states holds s_0 only), and
 *     STEP, sized for one decoder step (T = 1) of B rows, the
 *     hypotheses (beam search has K rows a sentence). Its TRAIN buffers are
 *     NULL.
 *
 * A second name for the same floats costs no memory and is
 * RS_WORKSPACE_SHARED's (probs, d_logits). */
// clang-format off
#define RS_WORKSPACE_TABLE(X)                                                                      \
    /* encoder (rs_encode) */                                                                      \
    X(src_x,         S * B * m,       ENC,   "[S,B,m]   x̄_j")                                     \
    X(src_mask,      S * B,           ENC,   "[S,B]     source mask")                              \
    X(fwd_xproj,     S * B * 3 * n,   ENC,   "[S,B,3n]  x_proj_j (forward)")                       \
    X(fwd_gates,     S * B * 3 * n,   ENC,   "[S,B,3n]  z_j, r_j, g_j (forward)")                  \
    X(fwd_rh,        S * B * n,       ENC,   "[S,B,n]   r_j ⊙ h_{j-1}")                            \
    X(fwd_states,    (S + 1) * B * n, ENC,   "[S+1,B,n] →h_j at j")                                \
    X(bwd_xproj,     S * B * 3 * n,   ENC,   "[S,B,3n]  x_proj_j (backward)")                      \
    X(bwd_gates,     S * B * 3 * n,   ENC,   "[S,B,3n]  z_j, r_j, g_j (backward)")                 \
    X(bwd_rh,        S * B * n,       ENC,   "[S,B,n]   r_j ⊙ h_{j+1}")                            \
    X(bwd_states,    (S + 1) * B * n, ENC,   "[S+1,B,n] ←h_j at j-1")                              \
    X(annotations,   S * B * 2 * n,   ENC,   "[S,B,2n]  h_j")                                      \
    X(keys,          S * B * ka,      ENC,   "[S,B,ka]  key_j")                                    \
    /* decoder (rs_network_forward, rs_network_step) */                                           \
    X(dec_emb,       R * m,           STEP,  "[T,B,m]   ẽ_i")                                      \
    X(tgt_mask,      R,               TRAIN, "[T,B]     target mask")                              \
    X(query_proj,    B * ka,          STEP,  "[B,a]     query_proj_i")                             \
    X(att_hidden,    R * S * ka,      STEP,  "[T,B,S,a] φ_ij")                                     \
    X(alpha,         R * S,           TRAIN, "[T,B,S]   ε_ij, α_ij")                               \
    X(context,       R * 2 * n,       STEP,  "[T,B,2n]  c_i")                                      \
    X(dec_xproj,     R * 3 * n,       STEP,  "[T,B,3n]  x_proj_i")                                 \
    X(dec_gates,     R * 3 * n,       STEP,  "[T,B,3n]  z_i, r_i, g_i")                            \
    X(dec_rh,        R * n,           STEP,  "[T,B,n]   r_i ⊙ s_{i-1}")                            \
    X(dec_states,    (T + 1) * B * n, ENC,   "[T+1,B,n] pre_0, s_0; s_i at i")                     \
    /* deep output and loss */                                                                     \
    X(tpre,          R * 2 * l,       STEP,  "[R,2l]    t̃_i")                                     \
    X(tmax,          R * l,           STEP,  "[R,l]     t_i")                                      \
    X(logits,        R * V,           TRAIN, "[R,V]     logits_i")                                 \
    X(nll,           R,               TRAIN, "[R]       ℓ_i")                                      \
    /* gradients (rs_network_backward): dL/d of the buffer named without d_; one step's only       \
     * where a value is used within its step (full twins: T times their size for nothing) */       \
    X(d_src_x,       S * B * m,       TRAIN, "[S,B,m]")                                            \
    X(d_fwd_xproj,   S * B * 3 * n,   TRAIN, "[S,B,3n]")                                           \
    X(d_fwd_states,  (S + 1) * B * n, TRAIN, "[S+1,B,n]")                                          \
    X(d_bwd_xproj,   S * B * 3 * n,   TRAIN, "[S,B,3n]")                                           \
    X(d_bwd_states,  (S + 1) * B * n, TRAIN, "[S+1,B,n]")                                          \
    X(d_annotations, S * B * 2 * n,   TRAIN, "[S,B,2n]")                                           \
    X(d_keys,        S * B * ka,      TRAIN, "[S,B,ka]")                                           \
    X(d_init_pre,    B * n,           TRAIN, "[B,n]     of pre_0")                                 \
    X(d_dec_emb,     R * m,           TRAIN, "[T,B,m]")                                            \
    X(d_query_proj,  R * ka,          TRAIN, "[T,B,a]")                                            \
    X(d_alpha,       S,               TRAIN, "[S]       one row's")                                \
    X(d_scores,      S,               TRAIN, "[S]       one row's, of ε")                          \
    X(d_context,     R * 2 * n,       TRAIN, "[T,B,2n]")                                           \
    X(d_dec_xproj,   R * 3 * n,       TRAIN, "[T,B,3n]")                                           \
    X(d_rh,          B * n,           TRAIN, "[B,n]     one step's")                               \
    X(d_h_prev,      B * n,           TRAIN, "[B,n]     a step's share")                           \
    X(d_dec_states,  (T + 1) * B * n, TRAIN, "[T+1,B,n]")                                          \
    X(d_tpre,        R * 2 * l,       TRAIN, "[R,2l]")                                             \
    X(d_tmax,        R * l,           TRAIN, "[R,l]")                                              \
    /* dropout multipliers (training only) */                                                      \
    X(drop_src,      S * B * m,       TRAIN, "[S,B,m]   μ")                                        \
    X(drop_ann,      S * B * 2 * n,   TRAIN, "[S,B,2n]  μ")                                        \
    X(drop_emb,      R * m,           TRAIN, "[T,B,m]   μ")                                        \
    X(drop_out,      R * l,           TRAIN, "[R,l]     μ")                                        \
    X(drop_src_word, S * B,           TRAIN, "[S,B]     μ, by token")                              \
    X(drop_tgt_word, R,               TRAIN, "[T,B]     μ, by token")

/* Names that share the floats of a buffer of the table, X(field, of, doc).
 * The [R,V] output layer is the workspace's largest buffer, and each of these
 * three is dead once the next is made: a buffer each would add 2·R·V floats
 * and, with their memory traffic, about 2% to a training step of config S
 * (docs/performance.md; a micro-benchmark of the loss layer at R = 2560,
 * V = 5913). The names keep the meanings apart; the functions take them as
 * separate arguments and work in place. */
#define RS_WORKSPACE_SHARED(X)                                                                     \
    X(probs,    logits, "[R,V] p(· | y_<i, x): rs_softmax_xent_forward, in place of the logits")   \
    X(d_logits, logits, "[R,V] dL/dlogits: rs_softmax_xent_backward, in place of the probs")
// clang-format on

/* The dropout probabilities of a training step (all 0 outside training);
 * kept units are scaled by 1 / (1 - p). */
typedef struct {
    float element;  /* each unit of embeddings, annotations and readout */
    float src_word; /* a source token's whole embedding */
    float tgt_word; /* a decoder step's whole previous-word input E y_{i-1} */
} rs_dropout_rates;

typedef enum { RS_WS_TRAINING, RS_WS_TRANSLATION } rs_workspace_kind;

typedef struct {
    rs_workspace_kind kind;
    int max_B, max_S, max_T; /* sentences, source and target positions (T 0: translation) */
    int max_rows;            /* translation: a step's rows, B = max_rows in STEP counts */
    /* Dropout (training only): rates, and the RNG state the masks of the
     * next forward pass are derived from (the same state, the same masks;
     * each mask has its own stream, so no mask depends on another's size). */
    rs_dropout_rates dropout;
    rs_rng dropout_rng;
    /* Called, when set, with progress_ctx between two steps of each
     * recurrence of the backward (the decoder's, both encoder directions'):
     * where a data-parallel step lets the sums across processes it has
     * started move on, as MPI moves a non-blocking sum only inside its calls
     * (train/buckets.c). It reads and writes nothing of the network's. */
    void (*progress)(void *ctx);
    void *progress_ctx;
    float *arena;
    unsigned char *which; /* [R,l] maxout argmax (translation: [rows,l]) */
#define RS_WS_FIELD(field, count, use, doc) float *field;
    RS_WORKSPACE_TABLE(RS_WS_FIELD)
#undef RS_WS_FIELD
#define RS_WS_SHARED_FIELD(field, of, doc) float *field;
    RS_WORKSPACE_SHARED(RS_WS_SHARED_FIELD)
#undef RS_WS_SHARED_FIELD
} rs_workspace;

int rs_workspace_alloc(rs_workspace *ws, const rs_model *model, int max_B, int max_S, int max_T,
                       rs_error *err);
/* Translation's workspace: the encoder for max_B sentences of up to max_S
 * positions, and one decoder step for max_rows rows over them. */
int rs_workspace_alloc_translation(rs_workspace *ws, const rs_model *model, int max_B, int max_rows,
                                   int max_S, rs_error *err);
void rs_workspace_free(rs_workspace *ws);

/* The floats rs_workspace_alloc_translation(…, max_B, max_rows, max_S)
 * allocates in its arena (computed in double: a message's figure, which
 * must not wrap around). */
double rs_workspace_translation_floats(const rs_model *model, int max_B, int max_rows, int max_S);

/* Every layer's weights: views into a model's parameters (and its sizes,
 * cfg), each forward product an rs_linear. rs_network_weights_of gives the
 * plain ones, which training uses; accel/ gives the same views with other
 * forms of some products (accel/accel.h), which decoding uses. Read only:
 * threads may share one. */
typedef struct {
    const rs_model_config *cfg;
    int n;
    rs_gru_weights enc_fwd, enc_bwd, dec;
    rs_attention_weights att;
    rs_readout_weights out;
    const float *init_W, *init_b;   /* [n,n], [n] */
    const float *src_emb, *tgt_emb; /* [Vs,m], [Vt,m] */
} rs_network_weights;

rs_network_weights rs_network_weights_of(const rs_model *model);

/* Encoder and initial state only: fills annotations, keys and dec_states[0].
 * Dropout, when ws->dropout.element > 0, applies to the source embeddings and the
 * annotations (the attention's keys and values; not the initial state);
 * word dropout, when ws->dropout.src_word > 0, to whole source embeddings. */
void rs_encode(rs_workspace *ws, const rs_network_weights *w, const rs_batch *batch);

/* Teacher-forced forward pass; returns Σ -log p(y|x) over the batch and
 * leaves each position's -log p in ws->nll. With ws->dropout.element > 0 it also
 * drops target embeddings and the maxout readout (inverted dropout); with
 * ws->dropout.tgt_word > 0, whole previous-word embeddings E y_{i-1} (the
 * decoder's and the deep output's input alike). */
double rs_network_forward(rs_workspace *ws, const rs_network_weights *w, const rs_batch *batch);

/* The backward, model.md's backward in six stages run in this order; each
 * completes the gradients of a run of params.h's tensors, which no later
 * stage writes (rs_backward_stage_tensors), so a data-parallel caller may
 * start their sum across processes between stages (train/buckets.c):
 *
 *   READOUT            loss and deep output           out_U … out_bw
 *   DECODER            the decoder through time, then
 *                      what its steps share (and W_a)  dec_W … dec_b
 *   TARGET_EMBEDDINGS  E y_{i-1}                       tgt_emb (a tied out.W's too)
 *   KEYS_AND_INIT      attention keys, annotations,
 *                      initial state                   init_W … att_K
 *   ENCODER            both directions through time    enc_fwd_W … enc_bwd_b
 *   SOURCE_EMBEDDINGS  E x_j                           src_emb */
typedef enum {
    RS_BACKWARD_READOUT,
    RS_BACKWARD_DECODER,
    RS_BACKWARD_TARGET_EMBEDDINGS,
    RS_BACKWARD_KEYS_AND_INIT,
    RS_BACKWARD_ENCODER,
    RS_BACKWARD_SOURCE_EMBEDDINGS,
    RS_BACKWARD_STAGES
} rs_backward_stage;

/* The tensors first..last (params.h indices) whose gradients stage completes. */
void rs_backward_stage_tensors(rs_backward_stage stage, int *first, int *last);

/* One stage of the backward of the last forward, the stages before it done:
 * grads += scale · dL/dθ's part (L the summed loss, or its label-smoothed
 * version with smoothing > 0; both read by the READOUT stage alone). */
void rs_network_backward_stage(rs_workspace *ws, const rs_network_weights *w, const rs_batch *batch,
                               const rs_tensors *grads, float smoothing, float scale,
                               rs_backward_stage stage);

/* Every stage in order: the whole backward. Call after rs_network_forward. */
void rs_network_backward(rs_workspace *ws, const rs_network_weights *w, const rs_batch *batch,
                         const rs_tensors *grads, float smoothing, float scale);

/* What one translation step gives: next_state s_i [B,n], t [B,l] = t_i
 * (the deep output after maxout, where the step ends: the output layer and
 * the log-normaliser, over the words the search asks for, are the search's,
 * search/decode.c) and alpha [B,S] the alignment. */
typedef struct {
    float *next_state, *t, *alpha;
} rs_step_out;

/* One decoder step for translation, over B rows (hypotheses) with their own
 * copies of the source side (keys [S,B,ka], annotations [S,B,2n], src_len [B]).
 * Inputs: state [B,n] = s_{i-1}, prev [B] = y_{i-1}. Outputs: next_state
 * [B,n] = s_i, t [B,l] = t_i, alpha [B,S]. It runs the same decoder cell and
 * deep output as the training forward pass, in the STEP buffers of a
 * translation workspace (the training one's at T = 1, under the same
 * names). */
void rs_network_step(rs_workspace *ws, const rs_step_out *out, const float *state, const int *prev,
                     const rs_attention_source *src, const rs_network_weights *w);

#endif
