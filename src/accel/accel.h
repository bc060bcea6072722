/* The faster forms of a model's forward products (nn/linear.h), made once
 * when a translator is built (search/ready.h) and never for training: the
 * layers in nn/ compute the equations of docs/model.md, and this layer gives
 * some of their products another road to the same y.
 *
 *   transposed copies (accel/transposed.h): every product a translation
 *     makes, the same bits as the plain product on most BLAS kernels;
 *   int8 copies (accel/int8.h, translate --int8): the decoder step's
 *     products (the GRU's W'_e, W'_c and U, the attention's W_a, the deep
 *     output's U_o, V_o, C_o and the output layer W_out) in a translation
 *     step (rs_network_step), within int8.h's bound; there the int8 form is
 *     taken over the transposed one. The encoder's products stay float (they
 *     run once per source word, the step's once per target word and
 *     hypothesis), and so do teacher-forced passes (score, forced
 *     alignments), which stay exact.
 *
 * The copies live in one object per readied model (rs_accel, held beside
 * the model by whatever readied it: search/ready.h), shared by threads,
 * each the copy of a parameter of params.h's table (RS_P_*; dec.W's int8
 * copies by its two blocks of columns, W'_e and W'_c). The forms over them
 * are handed to nn/ as weight views (rs_network_weights, nn/network.h),
 * each product an rs_linear with its form: nn/ computes with whatever view
 * it is given. The exact view's forms
 * live with the copies; a translation step's int8 forms quantize their
 * input in working memory of their own, so each decoder has its own step
 * view (rs_accel_step). Shapes: m embedding, n hidden, a attention, l
 * maxout units, V target vocabulary. */
#ifndef RS_ACCEL_H
#define RS_ACCEL_H

#include "common/error.h"
#include "model/model.h"
#include "nn/linear.h"
#include "nn/network.h"

/* Which copies to make: transposed, int8 (each 0 or 1). */
typedef struct {
    int transposed, int8;
} rs_accel_options;

/* A model's copies and the exact view's forms. */
typedef struct rs_accel rs_accel;

/* New copies for model's products, as opt asks. Copies that had (NULL:
 * none) holds are shared rather than made again, so had must outlive the
 * new object. NULL and err filled on failure (a weight that is not finite
 * cannot be quantized; memory). */
rs_accel *rs_accel_new(const rs_model *model, const rs_accel *had, const rs_accel_options *opt,
                       rs_error *err);
void rs_accel_free(rs_accel *a);

/* The weights every forward pass of a readied model computes with
 * (rs_encode, rs_network_forward): the forms of a's transposed copies,
 * which give the plain products' numbers to float32 rounding; with a NULL
 * (or without transposed copies), model's plain views. Views into model and
 * a: valid while both are. */
rs_network_weights rs_accel_weights(const rs_model *model, const rs_accel *a);

/* A translation step's weights, for one thread: rs_accel_weights with the
 * int8 forms where a has int8 copies (numbers that differ, within
 * int8.h's bound: so that teacher-forced passes, score and forced
 * alignments, stay exact), and the working memory those forms quantize a
 * step's input in, for up to max_rows rows. */
typedef struct rs_accel_step rs_accel_step;
rs_accel_step *rs_accel_step_new(const rs_model *model, const rs_accel *a, int max_rows,
                                 rs_error *err);
void rs_accel_step_free(rs_accel_step *s);
const rs_network_weights *rs_accel_step_weights(const rs_accel_step *s);

/* The output layer of a shortlist (search/decode.h): W_out's rows at the
 * chosen ids, in the form the model's output layer has in step's weights.
 * Per decoder member: for up to max_count rows of l floats. */
typedef struct rs_accel_rows rs_accel_rows;
rs_accel_rows *rs_accel_rows_new(const rs_accel_step *step, int max_count, int l, rs_error *err);
void rs_accel_rows_free(rs_accel_rows *r);

/* The product of W_out's rows ids[count] (W_out [V,l] the model's, tgt_emb
 * when tied) in r: with int8 copies (those of r's step), their rows read at
 * the ids; else the float rows gathered and, with transposed copies and
 * many_rows (products of more than one row will be asked for), their
 * transpose too. r must hold count rows. */
rs_linear rs_accel_rows_gather(rs_accel_rows *r, const rs_model *model, const int *ids, int count,
                               int many_rows);

#endif
