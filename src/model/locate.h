/* Where models live and how a model argument (`-m MODEL`) is found, for the
 * command line and the library alike.
 *
 *   - a checkpoint file: that file;
 *   - a model directory: its best.ckpt, else its last.ckpt;
 *   - a bare NAME (no '/'): the directory NAME in $RNNSEARCH_MODELS when that
 *     is set, then in ./models.
 *
 * Training writes `--name NAME` to the models directory: $RNNSEARCH_MODELS
 * when set (and not empty), else ./models. */
#ifndef RS_LOCATE_H
#define RS_LOCATE_H

#include <stddef.h>

#include "common/error.h"

#define RS_MODELS_ENV "RNNSEARCH_MODELS"

/* The models directory: $RNNSEARCH_MODELS, or "models". */
const char *rs_models_dir(void);

/* The checkpoint model_arg names, into path[size]. A missing model's message
 * lists every place looked at. */
int rs_model_locate(const char *model_arg, char *path, size_t size, rs_error *err);

/* The directory of a training run arg names, into dir[size]: a directory
 * as given, else a bare NAME where -m looks ($RNNSEARCH_MODELS/NAME, then
 * models/NAME). A missing one's message lists every place looked at. */
int rs_run_dir_locate(const char *arg, char *dir, size_t size, rs_error *err);

/* The directory training writes model NAME to: <models directory>/NAME. NAME
 * must be a plain name (no '/', not "." or ".."). */
int rs_model_dir_for(const char *name, char *dir, size_t size, rs_error *err);

#endif
