/* Forced decoding (teacher forcing): the log-probability a model gives a
 * known translation, token by token, and the alignment it uses on the way.
 * The one path behind `score`, forced alignments (`align --ref`, serve's
 * /api/align) and training's dev loss. An ensemble averages the members'
 * per-token log-probabilities (and alignments), as translation does. */
#ifndef RS_FORCED_H
#define RS_FORCED_H

#include "model/codec.h"
#include "data/dataset.h"
#include "model/model.h"
#include "search/ready.h"

typedef struct {
    double logprob;        /* Σ log p(y_i | y_<i, x), </s> included */
    int src_len, tgt_len;  /* tokens, </s> not included */
    float *token_logprobs; /* [tgt_len + 1] (the last is </s>), or NULL */
    float *alignment;      /* [(tgt_len + 1) × (src_len + 1)], or NULL */
    int cut;               /* rs_forced_text: source tokens cut by the length rule */
} rs_forced;

void rs_forced_free(rs_forced *f);
/* Frees f[0..count) and the array f itself (NULL: nothing). */
void rs_forced_free_all(rs_forced *f, int count);

enum { RS_FORCED_TOKENS = 1, RS_FORCED_ALIGNMENT = 2 };

/* Scores every pair of data into out[data->count] (want: RS_FORCED_* flags
 * for the optional arrays), batch_size pairs at a time, pairs of similar
 * length together. On failure nothing is left allocated in out. */
int rs_forced_decode(const rs_ready *const *models, int n_models, const rs_dataset *data,
                     int batch_size, int want, rs_forced *out, rs_error *err);

/* The raw text of one pair and what to compute of it. */
typedef struct {
    const char *source, *target;
    int max_src_len; /* the source is cut to this many tokens (rs_cut_sources' rule) */
    int want;        /* RS_FORCED_* */
} rs_forced_pair;

/* One pair of raw text through the models' codec: the tokens it was cut into
 * (src_tokens, tgt_tokens: [out->src_len], [out->tgt_len], to free with
 * rs_tokens_free), and its forced decoding, with the source tokens cut by
 * the length rule in out->cut. */
int rs_forced_text(const rs_ready *const *models, int n_models, const rs_codec *codec,
                   const rs_forced_pair *pair, rs_forced *out, rs_tokens *src_tokens,
                   rs_tokens *tgt_tokens, rs_error *err);

/* The source-length rule of translation (translate.h) for pairs: every source
 * of tok longer than max_src_len tokens is cut to its first max_src_len;
 * cut[i] receives the number of tokens dropped from pair i (0: none). */
void rs_cut_sources(rs_tokenized *tok, int max_src_len, int *cut);

#endif
