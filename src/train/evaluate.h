/* Dev evaluation of a training run (train/evaluate.c). */
#ifndef RS_EVALUATE_H
#define RS_EVALUATE_H

#include "data/dataset.h"
#include "model/model.h"
#include "train/train.h"

/* Greedy translations of the dev set through the translation pipeline (the
 * same output `rnnsearch translate` gives): the exact-match rate, and BLEU
 * when the options carry a codec and references (else bleu = -1). */
int rs_dev_translate(const rs_model *model, const rs_dataset *dev, const rs_train_options *options,
                     int batch_size, double *exact, double *bleu, rs_error *err);

#endif
