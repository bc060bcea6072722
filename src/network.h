/* The whole network of ../shared/docs/model.md over a minibatch: encoder,
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

#include "batch.h"
#include "model.h"

typedef struct {
    int max_B, max_S, max_T;
    /* Dropout (training only): probability, and the RNG state the masks of
     * the next forward pass are drawn from (the same state, the same masks). */
    float dropout;
    rs_rng dropout_rng;
    float *drop_src, *drop_ann, *drop_emb, *drop_out; /* [S,B,m] [S,B,2n] [T,B,m] [R,l] */
    float *arena;
    unsigned char *which;   /* [R,l] maxout argmax */
    /* encoder */
    float *src_x;           /* [S,B,m] source embeddings */
    float *src_mask;        /* [S,B] 1 on real tokens */
    float *fwd_xproj, *bwd_xproj; /* [S,B,3n] W x + b */
    float *fwd_gates, *bwd_gates; /* [S,B,3n] z, r, g */
    float *fwd_rh, *bwd_rh;       /* [S,B,n] r ⊙ h_prev */
    float *fwd_states;      /* [S+1,B,n]: [0] = 0, [j+1] = fwd_h of position j */
    float *bwd_states;      /* [S+1,B,n]: [j] = bwd_h of position j, [S] = 0 */
    float *annotations;     /* [S,B,2n] h_j = [fwd_h_j ; bwd_h_j] */
    float *keys;            /* [S,B,ka] U_a h_j + b_a (or K h_j) */
    /* decoder */
    float *dec_emb;         /* [T,B,m] E y_{i-1} */
    float *tgt_mask;        /* [T,B] */
    float *dec_xproj;       /* [T,B,3n] W' u_i + b' */
    float *dec_gates;       /* [T,B,3n] */
    float *dec_rh;          /* [T,B,n] */
    float *dec_states;      /* [T+1,B,n]: [0] = s_0, [i] = s_i */
    float *alpha;           /* [T,B,S] alignment weights */
    float *att_hidden;      /* [T,B,S,a] tanh(W_a s + U_a h + b_a), additive only */
    float *context;         /* [T,B,2n] c_i */
    float *query_proj;      /* [B,a] scratch */
    float *tpre;            /* [R,2l] */
    float *tmax;            /* [R,l] */
    float *probs;           /* [R,V] logits → probabilities → dlogits */
    float *nll;             /* [R] -log p(y_i), 0 on padding */
    /* backward */
    float *d_states;        /* [R,n] dL/ds_i from the readout */
    float *d_dec_emb;       /* [T,B,m] */
    float *d_context;       /* [T,B,2n] */
    float *dec_dpre;        /* [T,B,3n] */
    float *d_query_proj;    /* [T,B,a] */
    float *d_annotations;   /* [S,B,2n] */
    float *d_keys;          /* [S,B,ka] */
    float *fwd_dpre, *bwd_dpre; /* [S,B,3n] */
    float *d_src_x;         /* [S,B,m] */
    float *dt, *dtpre;      /* [R,l], [R,2l] */
    float *ds, *carry, *scratch; /* [B,n] each */
    float *d_scores;        /* [S] */
} rs_workspace;

int rs_workspace_alloc(rs_workspace *ws, const rs_model *model, int max_B, int max_S, int max_T,
                       rs_error *err);
void rs_workspace_free(rs_workspace *ws);

/* Encoder and initial state only: fills annotations, keys and dec_states[0].
 * Dropout, when ws->dropout > 0, applies to the source embeddings and the
 * annotations (the attention's keys and values; not the initial state). */
void rs_encode(rs_workspace *ws, const rs_model *model, const rs_batch *batch);

/* Teacher-forced forward pass; returns Σ -log p(y|x) over the batch and
 * leaves each position's -log p in ws->nll. With ws->dropout > 0 it also
 * drops target embeddings and the maxout readout (inverted dropout). */
double rs_network_forward(rs_workspace *ws, const rs_model *model, const rs_batch *batch);

/* Backward of the last forward: grads += scale · dL/dθ (L the summed loss, or
 * its label-smoothed version with smoothing > 0). Call after rs_network_forward. */
void rs_network_backward(rs_workspace *ws, const rs_model *model, const rs_batch *batch,
                         const rs_tensors *grads, float smoothing, float scale);

/* One decoder step for translation, over B hypotheses with their own copies
 * of the source side (keys [S,B,ka], annotations [S,B,2n], src_len [B]).
 * Inputs: state [B,n] = s_{i-1}, prev [B] = y_{i-1}. Outputs: next_state
 * [B,n] = s_i, logprobs [B,V] = log p(y_i | …), alpha [B,S]. */
typedef struct {
    int max_B, max_S;
    float *arena;
    unsigned char *which;
    float *emb, *context, *xproj, *gates, *rh, *hidden, *query_proj, *tpre, *tmax;
} rs_step_workspace;

int rs_step_workspace_alloc(rs_step_workspace *sw, const rs_model *model, int max_B, int max_S,
                            rs_error *err);
void rs_step_workspace_free(rs_step_workspace *sw);
void rs_decoder_step(rs_step_workspace *sw, float *next_state, float *logprobs, float *alpha,
                     const float *state, const int *prev, const float *keys,
                     const float *annotations, const int *src_len, const rs_model *model, int B,
                     int S);

/* log-softmax of each row of x [R,V] in place. */
void rs_log_softmax(float *x, int R, int V);

#endif
