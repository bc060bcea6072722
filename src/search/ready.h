/* A model ready to decode: as every decoding road holds it (translate,
 * align, score, lexicon, serve, explain with a model, the C library and so
 * Python). One preparation for all of them, so that two of them given the
 * same input in the same batches compute the same bits on any BLAS kernel:
 * the transposed copies change which products the step calls, and a
 * road with them agrees with a road without only to rounding
 * (docs/guarantees.md, "Bits and rounding"). */
#ifndef RS_READY_H
#define RS_READY_H

#include <stddef.h>

#include "common/error.h"
#include "model/codec.h"
#include "model/model.h"

/* Resolves model_arg (a file, a run directory, models/NAME or NAME), loads
 * its weights (no training state), makes the decoder's transposed copies
 * and, when codec is not NULL, the model's text codec. The checkpoint's path
 * goes into path[path_size] when path is not NULL. int8 copies are asked for
 * separately (rs_network_quantize): the library makes them on first use. */
int rs_ready_model_load(const char *model_arg, rs_model *model, rs_codec *codec, char *path,
                        size_t path_size, rs_error *err);

#endif
