/* The model's parameters: one table (RS_PARAM_TABLE) yields the tensor sizes,
 * the named views into one contiguous float buffer, the checkpoint index and
 * the interchange (safetensors) names of docs/model.md.
 *
 * Sizes: Vs/Vt vocabularies, m embedding, n hidden, a attention, l maxout.
 * Every matrix is row-major [out, in] and maps column vectors, y = W x.
 * A tensor whose size is 0 under the chosen options (e.g. att.K with additive
 * attention) is absent from checkpoints and exports. With tie_embeddings, out.W
 * has size 0 and shares tgt_emb's floats (l == m): its view points there in
 * every buffer of the layout (parameters, gradients, Adam moments), so both
 * uses add into one gradient, and export writes tgt_emb again as out.W. */
#ifndef RS_PARAMS_H
#define RS_PARAMS_H

#include <stddef.h>

#include "model/config.h"

/* The attention's score (model.md, "Other attention scores"). The values
 * are those of the names in configurations and checkpoints. RS_ATT_DOT is
 * the parameter-free s · h, which no model has: s has n entries and h 2n, so
 * rs_layout_init refuses it (until 29, "dot" named s · (K h), general's
 * function under a second name); eval/explain's scores, over vectors it is
 * given, still compute it. RS_ATT_NONE is the fixed-length encoder–decoder
 * (RNNencdec, Cho et al. 2014, as Bahdanau et al. compare it): the decoder
 * reads one context for every step and there are no attention tensors. */
typedef enum {
    RS_ATT_ADDITIVE = 0, /* v · tanh(W s + U h + b)  (model.md) */
    RS_ATT_GENERAL,      /* s · (K h), K [n, 2n]                */
    RS_ATT_DOT,          /* s · h: refused, see above           */
    RS_ATT_SCALED_DOT,   /* s · (K h) / sqrt(n)                 */
    RS_ATT_NONE,         /* no attention: c = [→h_S ; ←h_1]      */
} rs_attention_kind;

/* Why a model with --attention none has no alignment, for the messages of
 * everything that would show one (align, explain, translate's alignment
 * outputs, serve, the training watch). */
#define RS_NO_ALIGNMENT_WHY                                                                        \
    "a model with --attention none (the fixed-length encoder-decoder) has no alignment: its "      \
    "decoder reads one fixed context c = [fwd h_S ; bwd h_1] at every step, with no weights "      \
    "over the source words"

/* Returns -1 for an unknown name. */
int rs_attention_kind_parse(const char *name);
const char *rs_attention_kind_name(int kind);

/* X(field, "export name", rows, cols): cols == 0 means a vector of `rows`.
 * Expressions may use: Vs, Vt, m, n, a, l, additive (1 when additive attention),
 * keyed (1 when general or scaled-dot: att.K), tied (1 when tie_embeddings).
 * With --attention none both additive and keyed are 0: no att.* tensor. */
#define RS_PARAM_TABLE(X)                                                                          \
    X(src_emb, "src_emb", Vs, m)                                                                   \
    X(tgt_emb, "tgt_emb", Vt, m)                                                                   \
    X(enc_fwd_W, "enc_fwd.W", 3 * n, m)                                                            \
    X(enc_fwd_U, "enc_fwd.U", 3 * n, n)                                                            \
    X(enc_fwd_b, "enc_fwd.b", 3 * n, 0)                                                            \
    X(enc_bwd_W, "enc_bwd.W", 3 * n, m)                                                            \
    X(enc_bwd_U, "enc_bwd.U", 3 * n, n)                                                            \
    X(enc_bwd_b, "enc_bwd.b", 3 * n, 0)                                                            \
    X(init_W, "init.W", n, n)                                                                      \
    X(init_b, "init.b", n, 0)                                                                      \
    X(att_W, "att.W", additive *a, n)                                                              \
    X(att_U, "att.U", additive *a, 2 * n)                                                          \
    X(att_b, "att.b", additive *a, 0)                                                              \
    X(att_v, "att.v", additive *a, 0)                                                              \
    X(att_K, "att.K", keyed *n, 2 * n)                                                             \
    X(dec_W, "dec.W", 3 * n, m + 2 * n)                                                            \
    X(dec_U, "dec.U", 3 * n, n)                                                                    \
    X(dec_b, "dec.b", 3 * n, 0)                                                                    \
    X(out_U, "out.U", 2 * l, n)                                                                    \
    X(out_V, "out.V", 2 * l, m)                                                                    \
    X(out_C, "out.C", 2 * l, 2 * n)                                                                \
    X(out_b, "out.b", 2 * l, 0)                                                                    \
    X(out_W, "out.W", (1 - tied) * Vt, l)                                                          \
    X(out_bw, "out.bw", Vt, 0)

enum {
#define RS_PARAM_ENUM(field, name, rows, cols) RS_P_##field,
    RS_PARAM_TABLE(RS_PARAM_ENUM)
#undef RS_PARAM_ENUM
        RS_NUM_PARAMS
};

typedef struct {
    const char *name; /* interchange name */
    int rows, cols;   /* cols == 0: a vector of `rows` floats */
    size_t offset;    /* into the contiguous buffer, in floats */
    size_t size;      /* rows * max(cols, 1); 0 when absent */
    int shares;       /* the index of the present tensor whose floats this absent one
                         uses (out.W of a tied model: tgt_emb), else -1 */
} rs_tensor_info;

/* Named views into one buffer (parameters, gradients or Adam moments alike). */
typedef struct {
#define RS_PARAM_FIELD(field, name, rows, cols) float *field;
    RS_PARAM_TABLE(RS_PARAM_FIELD)
#undef RS_PARAM_FIELD
} rs_tensors;

typedef struct {
    rs_tensor_info info[RS_NUM_PARAMS];
    size_t total; /* floats in the buffer */
} rs_layout;

/* Bounds on what rs_layout_init accepts, from the command line, a checkpoint
 * or an import alike: sizes m, n, a, l, vocabulary sizes, and parameters in
 * all (floats; 2^32 floats are 16 GB). */
#define RS_MAX_DIM 65536
#define RS_MAX_VOCAB (1 << 24)
#define RS_MAX_PARAMS ((size_t)1 << 32)

/* Computes sizes and offsets for the configuration's sizes and attention kind;
 * fails on sizes outside the bounds above. */
int rs_layout_init(rs_layout *layout, const rs_model_config *cfg, rs_error *err);

/* The present tensor holding tensor i's floats: i itself, the tensor it
 * shares, or NULL when i is absent. */
const rs_tensor_info *rs_tensor_storage(const rs_layout *layout, int i);

/* Points every view into `buffer` (layout->total floats); a shared tensor's
 * view at the floats it shares, an absent one's at NULL. */
void rs_tensors_bind(rs_tensors *views, const rs_layout *layout, float *buffer);

/* The largest weight a model may hold, in magnitude. With every size at most
 * 65536 (RS_MAX_DIM) and |w| ≤ B, the largest value a forward pass makes is
 * a logit, |W_out t + b_out| ≤ l·B·(m·B² + 3n·B + B) + B (|s|, |h|, |c| ≤ 1
 * by their tanh, the embeddings ≤ B): about 4.3e27 for B = 1e6, far below
 * FLT_MAX (3.4e38), so that every score, log-probability and alignment of
 * such a model is a finite number. A weight of 3e38 is finite too, and made
 * NaN scores and all-zero alignments that were printed as results. Trained
 * models hold weights of a few units. */
#define RS_PARAM_MAX_ABS 1e6f

/* Fails, naming the tensor and the entry, when a present tensor of params
 * (layout->total floats) holds a NaN, an infinity or a number past
 * ±RS_PARAM_MAX_ABS: weights read from a file (or about to be written) must
 * be numbers whose products stay finite, or translations, scores and
 * alignments are silently NaN or empty. */
int rs_params_check_bounded(const rs_layout *layout, const float *params, rs_error *err);

/* Index of the tensor with this interchange name, or -1. */
int rs_param_index(const char *name);

#endif
