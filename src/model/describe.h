/* What a model holds, for people (`rnnsearch info`), as '#' comment lines:
 * every parameter tensor's shape and size and their total, the vocabulary
 * sizes, the text settings, and the training counters (step, epoch, best dev
 * loss and BLEU) when the state has them. */
#ifndef RS_DESCRIBE_H
#define RS_DESCRIBE_H

#include <stdio.h>

#include "model/model.h"

void rs_model_describe(FILE *out, const rs_model *m, const rs_train_state *state);

#endif
