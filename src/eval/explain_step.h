/* One real decoder step of a trained model, worked as docs/model.md writes
 * it, for `rnnsearch explain -m MODEL "sentence" --step i`.
 *
 * The source side and the decoder state s_{i-1} come from the model's own
 * code (rs_decoder: the encoder, then steps 1 … i−1 along the prefix), so
 * they are the floats that translate and align use. Step i itself is then
 * recomputed in double precision from those floats and the loaded weights,
 * every intermediate kept, so that each number can be checked by hand; the
 * model's own float32 step i is kept beside it (model_alpha, model_state) to
 * show that the two agree to float32 rounding.
 *
 * Shapes: S source positions (</s> included), n hidden, 2n annotation, m
 * embedding, a attention size, ka key size (a additive, n general and
 * scaled-dot), l maxout units, V target vocabulary. Row-major, as model.md:
 * h [S,2n], keys [S,ka], phi [S,a]. Steps are counted from 1 as in
 * model.md (step i reads y_{i-1}; y_0 = <s>). */
#ifndef RS_EXPLAIN_STEP_H
#define RS_EXPLAIN_STEP_H

#include "model/codec.h"
#include "model/model.h"
#include "search/ready.h"

/* What to explain: a sentence, a step i ≥ 1, and the prefix y_1 … y_{i-1}:
 * the given target's tokens (target not NULL), else the greedy translation's.
 *
 * A push (a teacher's question "what if step i had looked at x_j?"): step
 * i's α is not the softmax of the scores but the one given, α_i = one-hot j
 * (has_attend, attend = j) or alpha[S]; the context c_i = Σ_j α_ij h_j, the state s_i and
 * the deep output are recomputed from it (in double, as the rest of the
 * step), y_i is the greedy word of that step, and greedy decoding goes on
 * from s_i in the model's own float32 steps. The prefix is the greedy
 * translation's (a push continues it, so no target). */
typedef struct {
    const char *source;
    const char *target;  /* NULL: the greedy prefix */
    int step;            /* i, from 1 */
    int has_attend;      /* 1: push α_i = one-hot attend */
    int attend;          /* j, from 1 (x_S = </s>) */
    const double *alpha; /* [n_alpha] α_i as given (≥ 0, summing to 1), or NULL */
    int n_alpha;
    int json_names; /* messages name step, attend, alpha and target as a JSON
                       body's members ('step', serve's POST /api/push), not as
                       explain's options (--step) */
} rs_explain_step_request;

typedef struct {
    int kind; /* rs_attention_kind: additive, general or scaled-dot */
    int S, n, m, a, ka, l, V;
    int step;           /* i */
    int *src_ids;       /* [S] x_1 … x_S, x_S = </s> */
    char **src_words;   /* [S] the tokens as align shows them (a word out of the
                           vocabulary as written, not <unk>), "</s>" last */
    int *prefix;        /* [step] y_0 = <s>, y_1 … y_{i-1} */
    int next;           /* y_i of the prefix's sequence: the target's token or the
                                greedy word at step i (</s> past the end); -1: none */
    double *s_prev;     /* [n] s_{i-1} (the model's float32 state, widened) */
    double *h;          /* [S,2n] h_j = [→h_j ; ←h_j] */
    double *keys;       /* [S,ka] U_a h_j + b_a (additive) or K h_j */
    double *query;      /* [ka] W_a s_{i-1} (additive); s_{i-1} itself otherwise */
    double *phi;        /* [S,a] tanh(W_a s_{i-1} + U_a h_j + b_a) (additive only) */
    double *e;          /* [S] ε_ij */
    double *alpha;      /* [S] α_ij */
    double *c;          /* [2n] c_i */
    double *emb;        /* [m] tgt_emb[y_{i-1}] */
    double *xproj;      /* [3n] W' u_i + b' = W'_e emb + W'_c c_i + b' (z, r, g thirds) */
    double *rec;        /* [3n] U'_z s_{i-1}, U'_r s_{i-1}, U'_g (r ⊙ s_{i-1}) */
    double *z, *r, *g;  /* [n] the gates and the candidate */
    double *s;          /* [n] s_i */
    double *tpre;       /* [2l] t̃_i */
    double *t;          /* [l] t_i = maxout(t̃_i) */
    int *which;         /* [l] 0 or 1: which of the pair t_i[k] took */
    double *logp;       /* [V] log p(y_i = v | y_<i, x) */
    float *model_alpha; /* [S] α of the model's own float32 step i */
    float *model_state; /* [n] s_i of that step */
    int model_best;     /* the word greedy search takes from that step's logits */
    /* A push (rs_explain_step_request's attend or alpha): alpha holds the α
     * given, softmax_alpha the one the scores e give; the greedy
     * translation before (old_ids) and after the push (new_ids: y_1 …
     * y_{i-1} of the prefix, the pushed step's y_i, then greedy), </s> not
     * included, as text too; and the alignment of each, as translate keeps
     * it: a row per output token then one for </s> (the step that ended it),
     * S columns (old_alpha greedy search's rows; new_alpha the model's rows
     * along the prefix, the pushed α_i, then the decoding's). */
    int pushed;
    double *softmax_alpha; /* [S] */
    int *old_ids, old_count, *new_ids, new_count;
    char *old_text, *new_text;
    float *old_alpha; /* [(old_count + 1) × S] */
    float *new_alpha; /* [(new_count + 1) × S] */
} rs_explained_step;

/* Tokenizes the request with the model's codec, runs the model to s_{i-1}
 * and works step i (pushed when asked, then decoding on from it). Fails (bad
 * input, the message naming it) on an empty or out-of-range step, a step
 * past the prefix (the greedy translation or the target, with its </s>, has
 * T + 1 steps), a push onto a position outside 1 … S or an α of another
 * length than S, negative or not summing to 1, a push with a target, or a
 * model without attention. */
int rs_explain_step_compute(rs_explained_step *out, const rs_ready *model, const rs_codec *codec,
                            const rs_explain_step_request *rq, rs_error *err);
void rs_explained_step_free(rs_explained_step *x);

/* The target tokens of ids[count] (the vocabulary's; "<unk>" for an id
 * outside it), as the translations before and after a push are made of:
 * a malloc'd array of count + 1 (the caller frees it, not the tokens, which
 * are the model's), or NULL with err. */
const char **rs_explain_target_tokens(const rs_model *model, const int *ids, int count,
                                      rs_error *err);

/* The walk-through as text (*text malloc'd): vectors of up to `full`
 * entries in full (full < 0: every vector in full), longer ones as their
 * first and last entries and their norm, marked as abbreviated; `top` words
 * with their probabilities; numbers with `digits` decimals. */
int rs_explain_step_report(const rs_explained_step *x, const rs_model *model, int digits, int full,
                           int top, char **text, rs_error *err);

#endif
