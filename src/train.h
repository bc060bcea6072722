/* The training loop: minibatches bucketed by length and shuffled with the
 * model's seeded RNG, Adam, clipping by global norm, dev evaluation, and
 * checkpoints (last.ckpt, best.ckpt) with a TSV log in the model directory.
 * Same seed, data and thread count give the same model, bit for bit. */
#ifndef RS_TRAIN_H
#define RS_TRAIN_H

#include "dataset.h"
#include "model.h"

typedef struct {
    const char *dir;   /* models/NAME: last.ckpt, best.ckpt, train.log.tsv */
    int eval_every;    /* dev evaluation every N steps (0: at each epoch's end) */
    int dev_translate; /* also translate the dev set greedily (exact match) */
    /* With both: dev BLEU of the detokenized greedy translations against
     * dev_refs[k] (the raw target of dev pair k), which then selects best.ckpt. */
    const rs_codec *codec;
    char *const *dev_refs;
    double report_seconds; /* progress every this many seconds */
} rs_train_options;

enum { RS_EV_PROGRESS, RS_EV_DEV, RS_EV_SAVED, RS_EV_SKIPPED_BATCH };

typedef struct {
    int kind;
    int64_t step, total_steps;
    int epoch;
    double loss, ppl;         /* per target token since the last progress event */
    double tokens_per_s, eta_s, gnorm, lr, elapsed_s;
    double dev_loss, dev_ppl, dev_exact; /* dev_exact: fraction, -1 when not measured */
    double dev_bleu;          /* -1 when not measured */
    int stop;                 /* early stopping: patience exhausted */
    int improved;             /* the dev result is the best so far */
    const char *path;         /* RS_EV_SAVED */
} rs_train_event;

typedef void (*rs_train_report)(void *ctx, const rs_train_event *event);

int rs_train(rs_model *model, rs_train_state *state, const rs_dataset *train,
             const rs_dataset *dev, const rs_train_options *options, rs_train_report report,
             void *ctx, rs_error *err);

/* Greedy translations of the dev set through the translation pipeline (the
 * same output `rnnsearch translate` gives): the exact-match rate, and BLEU
 * when the options carry a codec and references (else bleu = -1). */
int rs_dev_translate(const rs_model *model, const rs_dataset *dev, const rs_train_options *options,
                     int batch_size, double *exact, double *bleu, rs_error *err);

#endif
