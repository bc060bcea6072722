/* A tiny random model and teacher-forced scoring, for the decoding tests. */
#ifndef RS_TEST_TINYMODEL_H
#define RS_TEST_TINYMODEL_H

#include "model/model.h"
#include "nn/network.h"

/* The sizes of a tiny model (the rest of the configuration as defaulted). */
typedef struct {
    int src_vocab, tgt_vocab, emb, hidden, att, maxout, attention;
} tiny_shape;

/* The one way the suites make a random model: `shape`, every parameter
 * uniform in [-scale, scale] from seed; vocabularies empty (ids only). Fails
 * the test on any error. */
void tiny_model_shaped(rs_model *model, const tiny_shape *shape, float scale, unsigned seed);

/* A model with words, for tests that save, average or inspect checkpoints:
 * emb 3, the given hidden size, att 5, maxout 2, additive attention; source
 * vocabulary <4 reserved> "das" src_token, target <4 reserved> "the";
 * parameters uniform in [-1, 1] from seed. */
void tiny_model_with_words(rs_model *model, int hidden, const char *src_token, unsigned seed);

/* Vs = 10, Vt = 12, m = 4, n = 5, a = 6, l = 3, weights uniform in [-scale, scale]
 * from seed, eos_bias added to the output bias of </s> (random models rarely
 * stop otherwise); vocabularies are left empty (ids only). */
void tiny_model_make(rs_model *model, const char *attention, float scale, float eos_bias,
                     unsigned seed);

/* The model of attention kind `kind` (rs_attention_kind) used by the decoding
 * tests: scale 0.5 and a seed and </s> bias with which greedy decoding of
 * tiny_srcs stops early for some sentences and runs to the limit for others. */
void tiny_model_of_kind(rs_model *model, int kind);

/* The attention kinds a model can have (RS_ATT_DOT makes none). */
enum { TINY_KINDS = 3 };
extern const int tiny_kinds[TINY_KINDS];

/* Four sources of ids (the last empty: just </s>). */
enum { TINY_SENTENCES = 4 };
extern const int *const tiny_srcs[TINY_SENTENCES];
extern const int tiny_src_counts[TINY_SENTENCES];

/* log p(tgt | src) under teacher forcing (rs_network_forward), </s> appended
 * to both; probs, when not NULL, receives p(· | y_<i) of each target step,
 * [(tgt_count + 1) × Vt]. */
double tiny_forced_logprob(const rs_model *model, const int *src, int src_count, const int *tgt,
                           int tgt_count, float *probs);

/* After rs_network_step over rows rows, the output layer a search puts on
 * it (search/decode.c): logits [rows,V] = W_out t_i + b_out from ws->tmax
 * by out (its V words), and lse [rows] their log-normalisers. */
void tiny_step_output(const rs_workspace *ws, const rs_readout_weights *out, int rows,
                      float *logits, float *lse);

#endif
