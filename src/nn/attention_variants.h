/* The attention kinds beside the paper's additive one (attention.h has all
 * their equations): general and scaled-dot, scores s_{i-1} · key_j over
 * keys K h_j, and none, the fixed context of the encoder–decoder without
 * attention. rs_attention_forward and rs_attention_backward (attention.c)
 * send every kind but additive here. Also what both files share: reading
 * the source by row, and the weighing of the annotations by α. */
#ifndef RS_ATTENTION_VARIANTS_H
#define RS_ATTENTION_VARIANTS_H

#include "nn/attention.h"

void rs_attention_variant_forward(const rs_attention_step *st, const rs_attention_source *src,
                                  const rs_attention_weights *w);
void rs_attention_variant_backward(const rs_attention_step_grads *d, const rs_attention_grads *g,
                                   const rs_attention_step *st, const rs_attention_source *src,
                                   const rs_attention_weights *w);

/* Row b's sentence, and the sentences' row stride (see rs_attention_source). */
int rs_attention_sentence(const rs_attention_source *src, int b);
int rs_attention_source_rows(const rs_attention_source *src);

/* Row b of a step, once its scores ε_j are in alpha [S] (j < src_len[b]):
 * α = softmax(ε) in place (0 past src_len[b]), context [2n] c = Σ_j α_j h_j. */
void rs_attention_weigh(float *alpha, float *context, const rs_attention_source *src, int b,
                        int n2);

/* Its backward from dc [2n]: dh_j += α_j dc into d->annotations, and
 * d->scores[j] = dε_j (d->alpha holds dα_j). */
void rs_attention_weigh_backward(const rs_attention_step_grads *d, const float *alpha,
                                 const float *dc, const rs_attention_source *src, int b, int n2);

#endif
