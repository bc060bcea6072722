/* Checkpoints: a model (configuration, vocabularies, SentencePiece models,
 * parameters) and optionally what training needs to resume (Adam moments,
 * counters, RNG state, the fingerprint of the data trained on), in one
 * checksummed little-endian file. The exact
 * byte layout is in docs/checkpoint-format.md. */
#ifndef RS_CHECKPOINT_H
#define RS_CHECKPOINT_H

#include <stddef.h>
#include <stdio.h>

#include "common/error.h"
#include "model/model.h"

#define RS_CHECKPOINT_MAGIC "RNNSCKPT" /* 8 bytes, no NUL in the file */
#define RS_CHECKPOINT_VERSION 1

/* Writes the checkpoint atomically: to "path.tmp.<pid>" first (fflush, fsync),
 * then rename() over `path` and fsync of the directory, so an interrupted save
 * leaves the previous file intact. Creates missing parent directories.
 * Refuses a path that exists and is not a regular file (rs_atomic_open).
 * `state` may be NULL: then no training state is stored. */
int rs_checkpoint_save(const char *path, const rs_model *model, const rs_train_state *state,
                       rs_error *err);

/* Reads and verifies a checkpoint (magic, version, size, CRC-32, every section
 * and tensor shape against the layout of the stored configuration) and builds
 * *model from it. *model is overwritten (it must not hold a live model); on
 * failure it is zeroed, so rs_model_free on it is harmless, and nothing leaks.
 * `state` may be NULL to read the weights only. Otherwise it receives the
 * stored training state, or, when the file has none (e.g. made by import), a
 * fresh one from rs_train_state_alloc (step 0, zero moments). */
int rs_checkpoint_load(const char *path, rs_model *model, rs_train_state *state, rs_error *err);

/* The same from the file's bytes in memory (`path` names it in messages). The
 * loader reads only the fixed header first, so a file that is no checkpoint
 * (bad magic, wrong size) is refused without being read whole. Every message
 * names the file; the text settings must make a codec (known tokenizer,
 * SentencePiece models present and loadable when the tokenizer is spm). */
int rs_checkpoint_parse(const char *path, const unsigned char *data, size_t size, rs_model *model,
                        rs_train_state *state, rs_error *err);


#endif
