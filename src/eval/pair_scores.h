/* What `rnnsearch score` prints: for each pair of an input, a line with the
 * natural-log probability the models give its target (forced decoding,
 * </s> included) and, per token, the mean, the target tokens as the model
 * sees them and each one's log-probability. */
#ifndef RS_PAIR_SCORES_H
#define RS_PAIR_SCORES_H

#include <stdio.h>

#include "search/forced.h"
#include "search/pairs_input.h"

/* Pairs read, scored and written at a time: memory does not grow with the
 * input. Within one, pairs of similar length score together. */
enum { RS_SCORE_CHUNK = 4096 };

typedef struct {
    const rs_ready *const *models; /* one model, or an ensemble's */
    int n_models;
    int batch_size; /* pairs scored together */
    int per_token;  /* four tab-separated columns: total, mean, tokens, their log-probabilities */
} rs_pair_scoring;

/* One line per pair of data (scored[data->count], with token
 * log-probabilities for per_token) to out; vocab: the target's. */
void rs_pair_scores_print(FILE *out, const rs_dataset *data, const rs_forced *scored,
                          const rs_vocab *vocab, int per_token);

/* Every pair of in, RS_SCORE_CHUNK at a time: read (a target may be empty,
 * an empty translation: its score is that of </s> alone), made ids (ids),
 * scored and its lines written to out, flushed. An empty input is zero
 * pairs, said to ids->warn (rs_note_empty: "nothing scored"). */
int rs_pair_scores_write(FILE *out, const rs_pairs_input *in, const rs_pairs_ids *ids,
                         const rs_pair_scoring *how, rs_error *err);

#endif
