/* Subword models: a C interface to the SentencePiece library (src/text/spm.cc).
 *
 * Text given here is already normalised by rnnsearch (text.h), so the models
 * trained here do no normalisation of their own (SentencePiece's "identity"
 * rule) and keep byte_fallback off. A space is the piece prefix "▁" (U+2581).
 *
 * Reserved pieces. rnnsearch's own vocabulary reserves ids 0..3 for <pad> <unk>
 * <s> </s>; rs_spm_train gives the model the same four pieces at the same ids
 * (<unk> as SentencePiece's unknown piece, the others as control pieces, which
 * no text produces). rs_spm_encode never returns one of those four strings
 * unless it stands for that piece: a run of characters the model does not know
 * that happens to spell one of them (or any piece of the model) comes back one
 * code point per piece. Loading a model in which a plain piece equals one of
 * the four strings fails.
 *
 * Round trip: rs_spm_decode(rs_spm_encode(text)) == text for normalised text
 * (single spaces, no space at either end), also for words and characters the
 * model never saw: unknown characters come back from rs_spm_encode as pieces
 * spelling themselves (not "<unk>"), and rs_spm_decode passes strings that
 * are not pieces of the model through verbatim. Exception: a literal "▁"
 * (U+2581) in the text comes back as a space, as in SentencePiece.
 *
 * Decoding follows SentencePiece: the unknown piece "<unk>" becomes the
 * model's unknown surface, " ⁇ " (U+2047 between spaces, so that "▁the <unk>
 * ▁cat" gives "the ⁇  cat" with two spaces) for the models trained here, and
 * control pieces (<pad> <s> </s>) decode to nothing. */
#ifndef RS_SPM_H
#define RS_SPM_H

#include <stddef.h>

#include "common/error.h"
#include "text/text.h"

typedef struct rs_spm rs_spm;

/* Trains a model of model_type "unigram" (also when NULL) or "bpe" with
 * exactly vocab_size pieces (the four reserved ones included; fails naming
 * the largest possible size when the sentences cannot fill it) on count
 * NUL-terminated UTF-8 sentences. Deterministic: the same sentences give the
 * same bytes (one thread, no sampling). Sentences longer than 65536 bytes are
 * left out by SentencePiece. The serialized model is returned in a new
 * buffer *blob of *blob_len bytes, which the caller frees. */
int rs_spm_train(const char *const *sentences, int count, int vocab_size, const char *model_type,
                 char **blob, size_t *blob_len, rs_error *err);

/* A model from its serialized bytes (as rs_spm_train returns and .model files
 * hold); fails on bytes that are not a usable model. Free with rs_spm_free. */
int rs_spm_load(rs_spm **out, const char *blob, size_t blob_len, rs_error *err);

/* A model from a .model file; also returns the file's bytes in a new buffer
 * *blob of *blob_len bytes (for the checkpoint), which the caller frees. */
int rs_spm_load_file(rs_spm **out, const char *path, char **blob, size_t *blob_len, rs_error *err);

/* Replaces the contents of out with the pieces of text (valid UTF-8).
 * On failure out is left empty. */
int rs_spm_encode(const rs_spm *spm, const char *text, rs_tokens *out, rs_error *err);

/* The text of count pieces, in a new string *out that the caller frees. */
int rs_spm_decode(const rs_spm *spm, const char *const *pieces, int count, char **out,
                  rs_error *err);

/* Number of pieces of the model, reserved ones included. */
int rs_spm_vocab_size(const rs_spm *spm);

/* The piece with this id if rs_spm_encode can return it (a plain or
 * user-defined piece): rnnsearch's vocabulary is built from these. NULL for
 * the unknown, control and unused pieces and for ids out of range. Valid
 * until rs_spm_free. */
const char *rs_spm_piece(const rs_spm *spm, int id);

void rs_spm_free(rs_spm *spm);

#endif
