/* The interchange format of docs/model.md ("Interchange names"):
 * safetensors, i.e. an 8-byte little-endian header length N, N bytes of JSON
 * header (padded with spaces so that the data starts at a multiple of 8), then
 * the tensors' little-endian F32 data. The header maps each tensor name to
 * {"dtype":"F32","shape":[rows, cols] or [rows],"data_offsets":[begin,end]}
 * (byte offsets into the data) and "__metadata__" to string values:
 *
 *   src_vocab, tgt_vocab  tokens in id order, a JSON array encoded as a string
 *   n, m, a, l            decimal sizes
 *   model                 "rnnsearch-default" for additive attention (model.md),
 *                         else "rnnsearch-" + attention name
 *   attention             additive, general or scaled-dot (a stored "dot" is refused: model/params.h)
 *   lowercase             "true" or "false"
 *   tokenizer             word, char, spm or space
 *   subwords              SentencePiece vocabulary size, "0" for none
 *   normalization         "NFC", or "none" for the space tokenizer
 *   spm_src, spm_tgt      SentencePiece models, base64 (only when present)
 *
 * Tensors of size 0 under the model's options are not written. */
#ifndef RS_SAFETENSORS_H
#define RS_SAFETENSORS_H

#include "common/error.h"
#include "model/model.h"

/* Writes the model (atomically, as checkpoints are written: a path that exists
 * and is not a regular file is refused, never replaced or streamed to). */
int rs_safetensors_export(const char *path, const rs_model *model, rs_error *err);

/* Reads a file in the format above and builds *model (overwritten; zeroed on
 * failure). Every tensor's presence, dtype, shape and data bounds are checked
 * against the layout for the metadata's sizes. Tolerated: missing model and
 * attention (additive assumed), missing text settings (defaults; tokenization
 * "whitespace" is taken as tokenizer "word"), unknown metadata keys. Training
 * settings of model->cfg are the defaults. */
int rs_safetensors_import(const char *path, rs_model *model, rs_error *err);

/* The same from the file's bytes in memory (`path` names it in messages).
 * Checked as the format specifies: the header length exactly (the header
 * begins with '{' and is JSON up to its last byte, spaces allowed at the end),
 * the tensors' data_offsets tiling the data section (no gap, no overlap, no
 * trailing bytes), every tensor of the layout present with its shape, and the
 * SentencePiece models present and loadable when the tokenizer is spm. */
int rs_safetensors_parse(const char *path, const unsigned char *data, size_t size, rs_model *model,
                         rs_error *err);

#endif
