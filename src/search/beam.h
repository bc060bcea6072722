/* Beam search with length normalisation, batched over sentences: each of B
 * sentences keeps K hypotheses, all B·K decoded together as one batch; a
 * sentence whose search is over leaves the batch. */
#ifndef RS_BEAM_H
#define RS_BEAM_H

#include "search/decode.h"

typedef struct {
    int beam;             /* K */
    float length_penalty; /* α: hypotheses ranked by log p / (length)^α, length with </s> */
    int n_best;           /* hypotheses returned per sentence (≤ K) */
    int max_len;          /* output tokens at most (without </s>); 0: rs_output_limit's rule */
    int want_alignment;
} rs_beam_options;

typedef struct {
    rs_decoder dec; /* sized for max_sentences · K rows */
    int max_sentences, beam, max_S;
} rs_beam_search;

int rs_beam_init(rs_beam_search *bs, const rs_ready *const *models, int n_models, int max_sentences,
                 int beam, int max_S, rs_error *err);
void rs_beam_free(rs_beam_search *bs);

/* out[b * n_best + r] receives the r-th best translation of sentence b
 * (ranked by its score, log p / length^α; logprob holds the raw Σ log p), or
 * a zeroed entry (ids NULL, len 0) when fewer hypotheses were found. */
int rs_beam_translate(rs_beam_search *bs, int B, const int *const *src, const int *src_count,
                      const rs_beam_options *opt, rs_hypothesis *out, rs_error *err);

#endif
