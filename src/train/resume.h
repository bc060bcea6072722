/* Continuing a training run from its last.ckpt (train/resume.c), so that it
 * is the same run: the checkpoint must hold a training state, the settings
 * given again must agree with its configuration (but for how long and how
 * fast to train, and what to save), and the data given now must be the data
 * whose fingerprint it records (train/fingerprint.h), unless the caller says
 * the run goes on on other data. Each check returns 0, -1 or
 * RS_TRAIN_REFUSED (train/prepare.h) with the reason in err; nothing prints. */
#ifndef RS_RESUME_H
#define RS_RESUME_H

#include <stddef.h>

#include "common/error.h"
#include "model/config.h"
#include "model/model.h"
#include "train/prepare.h"

/* "--epochs, --max-steps, … and --threads": the options whose value may
 * change on resume (rs_config_resumable, '_' written '-'), for messages and
 * help. */
void rs_resume_changeable(char *buf, size_t size);

/* Configuration settings given again for a resumed run: rs_config keys
 * ("batch_size") with their values as given (NULL for a flag, which sets it). */
typedef struct {
    const char *const *keys;
    const char *const *values;
    int count;
} rs_resume_given;

/* Applies to cfg (a checkpoint's) each setting given that may change on
 * resume (rs_config_may_change_on_resume); every other must leave cfg's
 * value as it is, else RS_TRAIN_REFUSED: "--resume: the checkpoint was
 * trained with KEY=THEN, not NOW; only … may change on resume". A value that
 * does not parse is refused with rs_config_set_option's message. */
int rs_resume_apply(rs_config *cfg, const rs_resume_given *given, rs_error *err);

/* Loads the checkpoint ckpt into run->model and run->state (every rank reads
 * it; a failure on one is a failure on all), then refuses a checkpoint of
 * weights only (`average`, `import`: no step, moments or data position to go
 * on from), applies the settings given (rs_resume_apply) and, when has_dev
 * is 0, refuses a configuration that needs a dev set
 * (rs_train_needs_dev_set). */
int rs_resume_load(rs_train_run *run, const char *ckpt, const rs_resume_given *given, int has_dev,
                   rs_error *err);

/* A set of pairs (training or dev) as the request named it, for messages:
 * the option that gave the file, and the file (NULL when not given). */
typedef struct {
    const char *what; /* "training", "dev" */
    const char *tsv_option, *tsv;
    const char *src_option, *src, *tgt_option, *tgt;
} rs_data_given;

/* What the data check has to tell besides a refusal: up to two notes
 * ("note: … records no fingerprint of its data …", "--new-data: continuing
 * … on other training data"). */
#define RS_RESUME_MAX_NOTES 2
typedef struct {
    int count;
    char text[RS_RESUME_MAX_NOTES][1024];
} rs_resume_notes;

/* The data given now (its fingerprint `now`, and how it was named: given[0]
 * the training set, given[1] the dev set) against the fingerprint that state,
 * loaded from ckpt, records. Other data is refused (RS_TRAIN_REFUSED, naming
 * the set and side that differ and the pair counts), unless new_data accepts
 * it: then an epoch in progress on other training data starts again from its
 * beginning (state->batches_done = 0: its position means nothing in this
 * data), and a dev set that changed starts its records anew (best dev loss
 * and BLEU, evaluations without improvement: a result on other dev pairs is
 * no measure to beat), each with a note. A checkpoint from before
 * fingerprints cannot be checked: a note says so (and with new_data its epoch
 * in progress starts again). rs_train records the fingerprint of the data
 * given now either way. */
int rs_resume_check_data(const char *ckpt, rs_train_state *state, const rs_data_fingerprint *now,
                         const rs_data_given given[2], int new_data, rs_resume_notes *notes,
                         rs_error *err);

#endif
