/* Checkpoints: a model (configuration, vocabularies, SentencePiece models,
 * parameters) and optionally what training needs to resume (Adam moments,
 * counters, RNG state), in one checksummed little-endian file. The exact
 * byte layout is in docs/checkpoint-format.md. */
#ifndef RS_CHECKPOINT_H
#define RS_CHECKPOINT_H

#include <stddef.h>
#include <stdio.h>

#include "error.h"
#include "model.h"

#define RS_CHECKPOINT_MAGIC "RNNSCKPT" /* 8 bytes, no NUL in the file */
#define RS_CHECKPOINT_VERSION 1

/* Writes the checkpoint atomically: to "path.tmp.<pid>" first (fflush, fsync),
 * then rename() over `path` and fsync of the directory, so an interrupted save
 * leaves the previous file intact. Creates missing parent directories.
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

/* Creates the directory holding `path` (and its parents) when missing. */
int rs_make_parent_dirs(const char *path, rs_error *err);

/* Replacing a file so that readers see the old or the new one, never a part:
 * rs_atomic_open creates parent directories and opens "path.tmp.<pid>";
 * write to af.f (a writer may record the errno of a failed write in
 * af.errnum); rs_atomic_commit checks for write errors, fflush + fsync +
 * fclose, renames over `path` and fsyncs the directory. On failure of either
 * (or by rs_atomic_abort) the temporary file is removed. Both free af. */
typedef struct {
    FILE *f;
    char *tmp;  /* temporary name, owned */
    char *path; /* final name, owned */
    int errnum; /* errno of the first failed write, -1 if unknown, 0 if none */
} rs_atomic_file;

int rs_atomic_open(rs_atomic_file *af, const char *path, rs_error *err);
int rs_atomic_commit(rs_atomic_file *af, rs_error *err);
void rs_atomic_abort(rs_atomic_file *af);

/* Reads a whole regular file into a new buffer (*size bytes, plus a NUL not
 * counted in *size). */
int rs_read_file(const char *path, unsigned char **data, size_t *size, rs_error *err);

/* Byte order: floats as IEEE 754 binary32, little-endian, whatever the host. */
void rs_f32_to_le(unsigned char *dst, const float *src, size_t count);
void rs_f32_from_le(float *dst, const unsigned char *src, size_t count);

#endif
