/* The model directory of a training run (train/rundir.c): one training at a
 * time, what training writes there, and how a resumed run tidies it. */
#ifndef RS_RUNDIR_H
#define RS_RUNDIR_H

#include <stdint.h>
#include <stdio.h>

#include "common/error.h"
#include "train/train.h"

/* Takes an exclusive lock on DIR/lock (creating DIR), held until
 * rs_train_unlock or the process ends, and writes our PID into it. Another
 * holder is refused with its PID. */
int rs_train_lock(const char *dir, int *fd, rs_error *err);
void rs_train_unlock(int fd);

/* Whether dir is a training run's directory: its lock (DIR/lock holding a
 * PID, which stays after the run), train.log.tsv, train.loss.tsv or
 * watch.jsonl is there. Other commands write nothing into it but what they
 * own (train/output.c). */
int rs_rundir_is_run(const char *dir);

/* Whether dir holds a model (last.ckpt, best.ckpt, step-N.ckpt,
 * train.log.tsv, watch.jsonl), and removing it and the logs (for --overwrite). */
int rs_train_dir_has_model(const char *dir);
int rs_train_clear_dir(const char *dir, rs_error *err);

/* Whether name (a file name, no directory) is one training writes or manages
 * in its directory: last.ckpt, best.ckpt, step-N.ckpt (pruned by
 * --keep-last), the logs, the vocabularies, the lock, and their temporaries. */
int rs_rundir_is_training_name(const char *name);

/* Whether dir holds a file that no training run writes (its first name in
 * name[size]): a fresh run is not started among another program's files. */
int rs_rundir_foreign(const char *dir, char *name, size_t size);

/* Keeps the K most recent step-N.ckpt files, removing older ones. */
int rs_rundir_prune_steps(const char *dir, int keep, rs_error *err);

/* Removes the *.tmp.PID files of saves that were killed. */
int rs_rundir_remove_temporaries(const char *dir, rs_error *err);

/* Keeps the first `header` lines of the file at path and the lines after them
 * that start with `prefix` and a step of at most `step`, up to the first that
 * does not; a last line without its newline (a write torn by a kill) goes
 * too. A missing file is left missing. */
int rs_rundir_truncate_rows(const char *path, int header, const char *prefix, int64_t step,
                            rs_error *err);

/* The dev evaluations, a row each (rs_rundir_append_log): what plot draws and
 * serve's training view reads. The one spelling of the name. */
#define RS_TRAIN_LOG "train.log.tsv"
#define RS_LOSS_TABLE "train.loss.tsv"    /* the training loss every cfg.train.log_every steps */
#define RS_SRC_VOCAB_FILE "src_vocab.txt" /* the vocabularies a run uses (rs_rundir_write_vocabs) */
#define RS_TGT_VOCAB_FILE "tgt_vocab.txt"

/* Writes the model's vocabularies beside its checkpoints as DIR/src_vocab.txt
 * and DIR/tgt_vocab.txt, one token a line in id order (model/vocab.h
 * rs_vocab_write: what train --src-vocab/--tgt-vocab reads back to the same
 * ids), each replaced atomically (common/fileio.h). */
int rs_rundir_write_vocabs(const char *dir, const rs_model *model, rs_error *err);
#define RS_TEXT_LOG "train.log" /* what training shows on stderr (written by cmd/) */
#define RS_CONFIG_COPY                                                                             \
    "config.yaml" /* the --config file a run was started with, as Joey NMT keeps it */

/* What a run that failed before its first step leaves of a directory it
 * made: nothing. Releases its lock, removes DIR/lock and, with text_log,
 * DIR/train.log (the run's log was there), then the directory when nothing
 * else is in it. */
void rs_rundir_forget(const char *dir, int lock, int text_log);


/* Keeps the headers of train.log.tsv and train.loss.tsv and their rows up to
 * `step`: rows after it were written by a run killed before its next
 * checkpoint, and the resumed run writes them again. */
int rs_rundir_truncate_log(const char *dir, int64_t step, rs_error *err);

/* One row of train.loss.tsv: the mean training loss (nats per target token,
 * </s> included) of the `steps` updates up to `step`, over `tokens` target
 * tokens; the learning rate and gradient norm of the last of them. */
typedef struct {
    int64_t step;
    int epoch, steps;
    long tokens;
    double loss, lr, gnorm;
} rs_loss_row;

/* Appends a row to DIR/train.loss.tsv (with its header when new). */
int rs_rundir_append_loss(const char *dir, const rs_loss_row *row, rs_error *err);

/* Appends the row of a dev evaluation to DIR/train.log.tsv (written whole,
 * then synced). */
int rs_rundir_append_log(const char *dir, const rs_train_event *ev, double train_loss,
                         rs_error *err);

#endif
