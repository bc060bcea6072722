/* Translation of token-id sequences: greedy decoding, batched over sentences,
 * with each output's alignment matrix kept on request. */
#ifndef RS_DECODE_H
#define RS_DECODE_H

#include "network.h"

typedef struct {
    int len;          /* output tokens, without </s> */
    int *ids;         /* [len] */
    int src_len;      /* source positions, </s> included */
    float *alignment; /* [(len + 1) × src_len] rows: output tokens then </s>; NULL unless asked */
    double logprob;   /* Σ log p of the output and its </s> (or of the last step, if cut off) */
    int finished;     /* 0 when the maximum length stopped it before </s> */
} rs_translation;

void rs_translation_free(rs_translation *t);

typedef struct {
    const rs_model *model;
    int max_B, max_S;
    rs_workspace ws;
    rs_step_workspace sw;
    rs_batch batch;
    float *state, *next_state; /* [max_B, n] */
    float *logprobs;           /* [max_B, V] */
    float *alpha;              /* [max_B, max_S] */
    int *prev;                 /* [max_B] */
} rs_decoder;

int rs_decoder_init(rs_decoder *dec, const rs_model *model, int max_B, int max_S, rs_error *err);
void rs_decoder_free(rs_decoder *dec);

/* Greedy translation of B sentences (ids without </s>); out[B] receives the
 * results (free each with rs_translation_free). The output stops at </s> or
 * after max_len tokens. */
int rs_greedy(rs_decoder *dec, int B, const int *const *src, const int *src_count, int max_len,
              int want_alignment, rs_translation *out, rs_error *err);

#endif
