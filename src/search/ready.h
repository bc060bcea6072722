/* A model ready to decode: as every decoding road holds it (translate,
 * align, score, lexicon, serve, explain with a model, the C library and so
 * Python). One preparation for all of them, so that two of them given the
 * same input in the same batches compute the same bits on any BLAS kernel:
 * the transposed copies change which products the step calls, and a
 * road with them agrees with a road without only to rounding
 * (docs/guarantees.md, "Bits and rounding"). What a road may choose is
 * asked for here, once, in rs_ready_options. */
#ifndef RS_READY_H
#define RS_READY_H

#include <stddef.h>

#include "common/error.h"
#include "model/codec.h"
#include "model/model.h"

/* What a translator is built with beyond the float model: int8 copies of
 * the decoder step's products (translate --int8; accel/int8.h). NULL
 * options: the defaults (all 0). */
typedef struct {
    int int8;
} rs_ready_options;

/* Resolves model_arg (a file, a run directory, models/NAME or NAME), loads
 * its weights (no training state), makes the faster forms of its products
 * (accel/accel.h: the transposed copies, and the int8 ones when opt asks)
 * and, when codec is not NULL, the model's text codec. The checkpoint's path
 * goes into path[path_size] when path is not NULL. */
int rs_ready_model_load(const char *model_arg, const rs_ready_options *opt, rs_model *model,
                        rs_codec *codec, char *path, size_t path_size, rs_error *err);

/* Faster forms for a model already ready (rs_ready_model_load) as opt asks,
 * for a view of it: model stays as it is, and *view is model with the new
 * forms, *forms (sharing model's copies, so model must outlive them; free
 * them with rs_ready_forms_free, never through the view). The library's
 * translators ask for int8 this way, after their model is loaded. */
int rs_ready_model_view(const rs_model *model, const rs_ready_options *opt, rs_model *view,
                        struct rs_accel **forms, rs_error *err);
void rs_ready_forms_free(struct rs_accel *forms);

#endif
