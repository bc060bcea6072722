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

#include "accel/accel.h"
#include "common/error.h"
#include "model/codec.h"
#include "model/model.h"

/* What a translator is built with beyond the float model: int8 copies of
 * the decoder step's products (translate --int8; accel/int8.h). NULL
 * options: the defaults (all 0). */
typedef struct {
    int int8;
} rs_ready_options;

/* A model and the copies of its parameters that the faster forms of its
 * products read (accel/accel.h), made once when it is readied, never per
 * call, and freed with it: the model itself knows nothing of them. Every
 * decoding road reads a model through one (search/decode.h, forced.h,
 * translate.h). accel NULL: the plain products (rs_ready_plain). */
typedef struct {
    const rs_model *model;
    const rs_accel *accel;
} rs_ready;

/* Resolves model_arg (a file, a run directory, models/NAME or NAME), loads
 * its weights (no training state) into a model of ready's own, makes the
 * copies its faster forms read (the transposed ones, and the int8 ones when
 * opt asks) and, when codec is not NULL, the model's text codec. The
 * checkpoint's path goes into path[path_size] when path is not NULL. Free
 * with rs_ready_free (model and copies together). */
int rs_ready_load(rs_ready *ready, const char *model_arg, const rs_ready_options *opt,
                  rs_codec *codec, char *path, size_t path_size, rs_error *err);
void rs_ready_free(rs_ready *ready);

/* model as it is, with no copies: the plain products (a model in training,
 * whose parameters still change: its dev passes). Owns nothing; never
 * rs_ready_free it. */
rs_ready rs_ready_plain(const rs_model *model);

/* Copies for a model already ready as opt asks, for a view of it: *view is
 * ready's model with new copies (sharing ready's, so ready must outlive
 * view). The library's translators ask for int8 this way, after their
 * model is loaded. Free with rs_ready_view_free (the copies only). */
int rs_ready_view(const rs_ready *ready, const rs_ready_options *opt, rs_ready *view,
                  rs_error *err);
void rs_ready_view_free(rs_ready *view);

#endif
