/* Checkpoint averaging: the element-wise mean of the parameters of several
 * models of one architecture (e.g. the last checkpoints of a run), which
 * usually translates better than any one of them. */
#ifndef RS_AVERAGE_H
#define RS_AVERAGE_H

#include "common/error.h"
#include "model/model.h"

typedef struct {
    rs_model mean; /* the first model added; its parameters become the mean */
    double *sum;   /* [mean.layout.total] running sums, in double */
    int count;     /* models added */
} rs_average;

/* Fails, saying what differs, unless a and b have the same architecture and
 * text handling (sizes, attention, lower-casing, tokenizer, subwords), the
 * same vocabularies token by token and the same SentencePiece models:
 * what makes their parameters mean the same thing. Training settings
 * (learning rate, seed, epochs, ...) may differ. */
int rs_models_match(const rs_model *a, const rs_model *b, rs_error *err);

/* Adds a model. The first is taken over (*model is left zeroed); later ones
 * must match it (rs_models_match) and stay the caller's. */
int rs_average_add(rs_average *avg, rs_model *model, rs_error *err);

/* Writes the mean of the models added into avg->mean.params (which keeps the
 * first model's configuration and vocabularies). */
void rs_average_finish(rs_average *avg);

/* The mean of the checkpoints args[0..n) name (files or model directories,
 * as -m finds them: model/locate.h), finished; a checkpoint that does not
 * match the first fails naming both ("PATH does not match FIRST: …"). */
int rs_average_checkpoints(rs_average *avg, const char *const *args, int n, rs_error *err);

void rs_average_free(rs_average *avg);

#endif
