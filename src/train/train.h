/* The training loop: minibatches bucketed by length and shuffled with the
 * model's seeded RNG, Adam, clipping by global norm, dev evaluation, and
 * checkpoints (last.ckpt, best.ckpt) with a TSV log in the model directory.
 * Same seed, data and thread count give the same model, bit for bit, and so
 * does a run killed at any instant and resumed from its last.ckpt.
 *
 * The training loss goes to train.loss.tsv (rundir.h): one row every
 * cfg.train.log_every steps and one before each save, each the mean over the steps
 * since the row before. No row spans a save, so a run resumed from any
 * checkpoint writes the rows the uninterrupted run writes (a save that an
 * interruption adds adds its row).
 *
 * What is saved when: after a dev evaluation (every cfg.train.eval_every steps, or
 * at each epoch's end when 0) the log row, then best.ckpt if the result is the
 * best so far, then last.ckpt; last.ckpt also at each epoch's end and every
 * cfg.train.save_every steps; with cfg.train.keep_last K, each save at the
 * regular interval (every save_every steps when set, else every evaluation)
 * is also kept as step-N.ckpt, the K most recent of them (to average); an
 * epoch's end or a stop between them is in last.ckpt only. With
 * cfg.train.max_minutes, no update starts that would end past the limit (by
 * the mean update time so far); the last step is evaluated and saved once,
 * after it. A kill
 * between two of these leaves last.ckpt at an
 * earlier step, from which the resumed run redoes the same work. */
#ifndef RS_TRAIN_H
#define RS_TRAIN_H

#include <signal.h>

#include "data/batch.h"
#include "data/dataset.h"
#include "model/model.h"
#include "model/codec.h"
#include "train/shards.h"

typedef struct rs_watch rs_watch; /* train/watch.h */

typedef struct {
    const char *dir; /* models/NAME: last.ckpt, best.ckpt, train.log.tsv, train.loss.tsv */
    /* For cfg.train.dev_bleu: dev BLEU of the detokenized greedy translations
     * against dev_refs[k] (the raw target of dev pair k) selects best.ckpt. */
    const rs_codec *codec;
    char *const *dev_refs;
    double report_seconds; /* progress every this many seconds */
    /* When *stop becomes non-zero (a signal handler sets it), the current
     * step is finished, last.ckpt saved and rs_train returns (RS_STOP_SIGNAL). */
    volatile sig_atomic_t *stop;
    /* Sentences whose alignments each evaluation appends to DIR/watch.jsonl,
     * and gold links for the dev AER (train/watch.h); NULL: none. */
    const rs_watch *watch;
} rs_train_options;

enum { RS_EV_PROGRESS, RS_EV_DEV, RS_EV_SAVED, RS_EV_STOPPED };

/* Why training stopped (RS_EV_STOPPED). */
typedef enum {
    RS_STOP_EPOCHS,    /* the last epoch is done */
    RS_STOP_MAX_STEPS, /* cfg.train.max_steps updates */
    RS_STOP_TIME,      /* cfg.train.max_minutes of wall time */
    RS_STOP_PATIENCE,  /* cfg.train.patience evaluations without improvement */
    RS_STOP_SIGNAL,    /* *options.stop was set */
} rs_stop_reason;

/* The epoch of a step is the one whose batches it trained on, counted from 1:
 * the step that ends epoch 1 is in epoch 1, the next in epoch 2. Every event
 * names its step's epoch so (rs_train_epoch_of_step). */
typedef struct {
    int kind;
    int64_t step, total_steps;
    int epoch;
    double loss, ppl; /* per target token since the last progress event */
    double tokens_per_s, eta_s, gnorm, lr, elapsed_s;
    /* RS_EV_PROGRESS: wall time per update since the start (evaluations and
     * saves included), and of it the gradient all-reduce across ranks (0 on one). */
    double step_s, allreduce_s;
    double dev_loss, dev_ppl, dev_exact;       /* dev_exact: fraction, -1 when not measured */
    double dev_bleu;                           /* -1 when not measured */
    double aer, align_precision, align_recall; /* dev alignment (watch.h); NAN when not measured */
    int stop;                                  /* early stopping: patience exhausted */
    int improved;                              /* the dev result is the best so far */
    const char *path;                          /* RS_EV_SAVED */
    rs_stop_reason reason;                     /* RS_EV_STOPPED */
} rs_train_event;

typedef void (*rs_train_report)(void *ctx, const rs_train_event *event);

/* The learning rate of update `step` (from 1) under cfg.train.lr_schedule, w =
 * cfg.train.warmup, lr_scale the plateau decay so far (cfg.train.lr_decay per dev
 * evaluation without improvement; 1 without one):
 *   constant, plateau: lr · lr_scale · min(1, step / w)   (w = 0: no warm-up)
 *   noam:              lr · n^-0.5 · min(step^-0.5, step · w^-1.5) · lr_scale
 *   inverse-sqrt:      lr · w^0.5  · min(step^-0.5, step · w^-1.5) · lr_scale
 *   exponential:       the constant rate · r^⌊max(step − s + d, 0) / d⌋   (r decay_rate,
 *                      s decay_start, d decay_steps: OpenNMT-py's exponential_decay)
 * (n the model's hidden size; docs/configuration.md). */
float rs_train_learning_rate(const rs_train_config *cfg, int hidden, float lr_scale, int64_t step);

/* One update: plan batches [first, first + count) of data, their target
 * tokens (the whole update's, every rank's: rs_train_update_tokens) and the
 * step it makes (its dropout masks). */
typedef struct {
    const rs_dataset *data;
    const rs_epoch_plan *plan;
    int first, count;
    long tokens;
    int64_t step;
} rs_update_batches;

/* Target tokens of the update's batches, </s> included. */
long rs_train_update_tokens(const rs_update_batches *u);

/* The step rs_train takes per update, in its two halves (`bench` times
 * them). First forward and backward over each batch of the update, on every
 * core (shards.h): the loss Σ -log p over their `tokens` target tokens into
 * *loss, and in the shards' gradient buffer [layout.total] the gradient of
 * the per-token mean over all of them (label smoothing included), with its
 * global norm in *gnorm. Dropout masks come from (seed, step, batch of the
 * update, rank), so a resumed run draws the same ones. Across ranks
 * (dist.h), each computes its rows [lo, hi) of every batch, a rank being one
 * more shard, and the loss and gradient are the sums over ranks (`tokens`
 * counts the whole update's). batch is filled with each batch in turn. */
int rs_train_gradient(rs_shards *shards, rs_batch *batch, const rs_model *model,
                      const rs_update_batches *u, double *loss, double *gnorm, rs_error *err);

/* Then the update of the parameters from that gradient of norm gnorm:
 * clipped to model->train.clip, state->step counted, the optimizer
 * (model->train's optimizer and settings, its state in state's two buffers)
 * at the learning rate of the new step, which is returned. */
float rs_train_apply(rs_shards *shards, rs_model *model, rs_train_state *state, double gnorm);

/* The epoch of the last step a state has done (0 before the first). */
int rs_train_epoch_of_step(const rs_train_state *state);

/* Trains from state (fresh or loaded from last.ckpt) until a stop reason.
 * state->data becomes the fingerprint of train and dev (the caller compares
 * a resumed state's with it first; see rs_data_fingerprint_of), and a state
 * whose position in the epoch does not fit this data is refused.
 * The caller holds the directory's lock (rs_train_lock). Temporary files of
 * saves that were killed are removed first, and log rows after state->step
 * (written after the checkpoint by a run that was then killed) are dropped.
 * A non-finite loss or gradient norm stops training with an error naming the
 * step; the checkpoints on disk are then those of the last good step. */
int rs_train(rs_model *model, rs_train_state *state, const rs_dataset *train, const rs_dataset *dev,
             const rs_train_options *options, rs_train_report report, void *ctx, rs_error *err);


#endif
