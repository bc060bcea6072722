/* Reading a training run's logs back (`rnnsearch plot`): DIR/train.log.tsv,
 * a row per dev evaluation, and train.loss.tsv beside it, a row every
 * --log-every steps (rundir.h writes both), as learning curves
 * (common/curves.h). */
#ifndef RS_TRAINLOG_H
#define RS_TRAINLOG_H

#include <stddef.h>

#include "common/curves.h"
#include "common/error.h"

/* The log an argument names: DIR/train.log.tsv, a bare model NAME's where -m
 * looks ($RNNSEARCH_MODELS/NAME, then ./models/NAME; a missing log is then
 * the first place's), or the file itself. */
void rs_train_log_path(const char *arg, char *log, size_t size);

/* Reads a TSV log: a header naming the columns (step, train_loss, dev_loss,
 * dev_metric, aer; in any order, step and train_loss required) and one row
 * per evaluation. Unparsable numbers ("nan") are NAN; dev_metric < 0 means
 * not measured. A log without rows is an error. */
int rs_train_log_read(const char *path, rs_curves *s, rs_error *err);

/* train.loss.tsv beside the log, when it is there and is not the log itself
 * (t stays empty otherwise). */
int rs_train_loss_read(const char *log, rs_curves *t, rs_error *err);

#endif
