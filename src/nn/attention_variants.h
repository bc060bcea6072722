/* The attention kinds beside the paper's additive one (attention.h has all
 * their equations): general and scaled-dot, scores s_{i-1} · key_j over
 * keys K h_j, and none, the fixed context of the encoder–decoder without
 * attention. The decoder step (network.c) calls these for every kind but
 * additive. */
#ifndef RS_ATTENTION_VARIANTS_H
#define RS_ATTENTION_VARIANTS_H

#include "nn/attention.h"

/* c_i = Σ_j α_ij h_j with α_i = softmax_j(s_{i-1} · key_j) (scaled by 1/√n
 * for scaled-dot); for none c_i = [→h_S ; ←h_1] (the annotations' halves)
 * and α_i = 0. */
void rs_attention_variant_forward(const rs_attention_step *st, const rs_attention_source *src,
                                  const rs_attention_weights *w);
/* Its backward; for none, dc_i's halves added to d->annotations at
 * (S, forward half) and (1, backward half). */
void rs_attention_variant_backward(const rs_attention_step_grads *d, const rs_attention_grads *g,
                                   const rs_attention_step *st, const rs_attention_source *src,
                                   const rs_attention_weights *w);

#endif
