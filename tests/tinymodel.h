/* A tiny random model and teacher-forced scoring, for the decoding tests. */
#ifndef RS_TEST_TINYMODEL_H
#define RS_TEST_TINYMODEL_H

#include "model/model.h"

/* Vs = 10, Vt = 12, m = 4, n = 5, a = 6, l = 3, weights uniform in [-scale, scale]
 * from seed, eos_bias added to the output bias of </s> (random models rarely
 * stop otherwise); vocabularies are left empty (ids only). */
void tiny_model_make(rs_model *model, const char *attention, float scale, float eos_bias,
                     unsigned seed);

/* The model of attention kind `kind` (rs_attention_kind) used by the decoding
 * tests: scale 0.5 and a seed and </s> bias with which greedy decoding of
 * tiny_srcs stops early for some sentences and runs to the limit for others. */
void tiny_model_of_kind(rs_model *model, int kind);

/* Four sources of ids (the last empty: just </s>). */
enum { TINY_SENTENCES = 4 };
extern const int *const tiny_srcs[TINY_SENTENCES];
extern const int tiny_src_counts[TINY_SENTENCES];

/* log p(tgt | src) under teacher forcing (rs_network_forward), </s> appended
 * to both; probs, when not NULL, receives p(· | y_<i) of each target step,
 * [(tgt_count + 1) × Vt]. */
double tiny_forced_logprob(const rs_model *model, const int *src, int src_count, const int *tgt,
                           int tgt_count, float *probs);

#endif
