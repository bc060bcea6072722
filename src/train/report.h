/* What `train` says to people, as lines written to a stream (the command
 * logs them with the time, common/log.h): each progress and dev evaluation,
 * what is trained on what when a run starts, and why it stopped and where
 * its models are. The text is that of docs/training.md's examples. */
#ifndef RS_TRAIN_REPORT_H
#define RS_TRAIN_REPORT_H

#include <stdio.h>

#include "train/prepare.h"
#include "train/train.h"

/* An event's lines: a progress line ("step N/M | epoch E | loss … | eta
 * …s", with the all-reduce's share of the step when ranks > 1), the dev
 * evaluation's (loss, perplexity, BLEU or exact matches, "| best"; the
 * alignment error rate when measured) and "saved FILE"; quiet leaves out
 * progress and saves. Nothing for RS_EV_STOPPED (rs_train_report_stop). */
void rs_train_report_event(FILE *out, const rs_train_event *ev, int quiet, int ranks);

/* A run's start: "training DIR: N training pairs (K longer than max_len
 * tokens left out), D dev pairs" ("resuming" with resume), the vocabulary
 * sizes and parameter count, the share of <unk> in each side of the
 * training and dev data with "PROG: warning: …" for each above 2 % (words
 * the vocabulary or the tokenizer leaves out are otherwise trained on and
 * scored silently as one token), and "configuration: " with the model's
 * settings. */
void rs_train_report_header(FILE *out, const rs_train_run *run, const char *dir, int resume,
                            int max_len, const char *prog);

/* Why training stopped ("stopped: all N epochs done at step S (epoch E)";
 * sig: the signal of RS_STOP_SIGNAL), then "last model: DIR/last.ckpt" and,
 * when DIR holds one, "best model: DIR/best.ckpt (dev BLEU …)". */
void rs_train_report_stop(FILE *out, rs_stop_reason reason, int sig, int epoch,
                          const rs_train_state *state, const rs_train_config *cfg, const char *dir);

#endif
