/* The faster forms and their copies; accel.h says which products get which.
 * A form is the first member of its struct (wt_form, q8_form), so its
 * forward finds what it reads from the rs_linear_fast pointer it is given. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "accel/accel.h"
#include "accel/int8.h"
#include "accel/packed.h"
#include "accel/transposed.h"

/* ---- the two forms ---- */

/* By the transposed copy W_t [in,out] of W [out,in] (W itself for one row). */
typedef struct {
    rs_linear_fast base;
    rs_cmat W, W_t;
} wt_form;

static void wt_forward(const rs_linear_fast *f, rs_mat y, rs_cmat x, float beta)
{
    const wt_form *t = (const wt_form *)f;
    rs_matmul_forward_t(y, x, t->W, t->W_t, beta);
}

/* Where an int8 form quantizes its input: one thread's, a byte per entry
 * of x and a float per row, rows · (in + 4) bytes for an input x [rows,in]. */
typedef struct {
    void *data;
    size_t bytes;
} scratch;

/* By the int8 copy q, at its rows ids (NULL: all, in order). */
typedef struct {
    rs_linear_fast base;
    rs_q8_matrix q;
    const int *ids;
    const scratch *mem;
} q8_form;

/* The scratch as the int8 product takes it: scales [rows] first, then the
 * quantized input; too small a scratch becomes an empty one, which the
 * product's shape check reports. */
static rs_q8_scratch q8_scratch_of(const scratch *s, int rows)
{
    const size_t scales = sizeof(float) * (size_t)rows;
    if (!s->data || s->bytes < scales)
        return (rs_q8_scratch){.x = NULL, .scale = NULL, .bytes = 0, .rows = 0};
    return (rs_q8_scratch){.x = (int8_t *)s->data + scales,
                           .scale = s->data,
                           .bytes = s->bytes - scales,
                           .rows = rows};
}

static void q8_forward(const rs_linear_fast *f, rs_mat y, rs_cmat x, float beta)
{
    const q8_form *q = (const q8_form *)f;
    const rs_q8_scratch s = q8_scratch_of(q->mem, x.rows);
    rs_q8_forward(y, x, &q->q, q->ids, NULL, &s, beta);
}

/* ---- a model's copies, by parameter ---- */

/* Which rows of its parameter a product multiplies by: all, or a GRU's U
 * [3n,n] read as U_zr (rows 0..2n-1) and U_g (rows 2n..3n-1). */
enum { ROWS_ALL, ROWS_ZR, ROWS_G };

/* Which columns: all, or dec.W [3n, m+2n] read as W'_e (columns 0..m-1,
 * for E y) and W'_c (columns m..m+2n-1, for c). */
enum { COLS_ALL, COLS_E, COLS_C, COL_KINDS };

#define AT(view) offsetof(rs_network_weights, view)

/* Every forward product with a faster form: its rs_linear in the weights
 * view; the parameter whose copies it reads, by its index in params.h's
 * table (RS_P_*); which rows and columns of it; and whether a translation
 * step's view takes its int8 form (the decoder step's products). One table
 * for both views: the exact one takes the transposed copies' forms. The key
 * side is att.U for additive attention and att.K for the keyed kinds: a
 * model has one of the two, and the product reads that one's copy. The
 * table's order is the transposed block's (each parameter's copy where it
 * first appears): the layout the block has always had. */
static const struct {
    size_t at;
    int param, rows, cols, int8;
} products[] = {
    {AT(enc_fwd.U_zr), RS_P_enc_fwd_U, ROWS_ZR, COLS_ALL, 0},
    {AT(enc_fwd.U_g), RS_P_enc_fwd_U, ROWS_G, COLS_ALL, 0},
    {AT(enc_bwd.U_zr), RS_P_enc_bwd_U, ROWS_ZR, COLS_ALL, 0},
    {AT(enc_bwd.U_g), RS_P_enc_bwd_U, ROWS_G, COLS_ALL, 0},
    {AT(enc_fwd.W), RS_P_enc_fwd_W, ROWS_ALL, COLS_ALL, 0},
    {AT(enc_bwd.W), RS_P_enc_bwd_W, ROWS_ALL, COLS_ALL, 0},
    {AT(att.U), RS_P_att_U, ROWS_ALL, COLS_ALL, 0},
    {AT(att.U), RS_P_att_K, ROWS_ALL, COLS_ALL, 0},
    {AT(dec.W), RS_P_dec_W, ROWS_ALL, COLS_E, 1},
    {AT(dec.W_c), RS_P_dec_W, ROWS_ALL, COLS_C, 1},
    {AT(dec.U_zr), RS_P_dec_U, ROWS_ZR, COLS_ALL, 1},
    {AT(dec.U_g), RS_P_dec_U, ROWS_G, COLS_ALL, 1},
    {AT(att.W), RS_P_att_W, ROWS_ALL, COLS_ALL, 1},
    {AT(out.U_o), RS_P_out_U, ROWS_ALL, COLS_ALL, 1},
    {AT(out.V_o), RS_P_out_V, ROWS_ALL, COLS_ALL, 1},
    {AT(out.C_o), RS_P_out_C, ROWS_ALL, COLS_ALL, 1},
    {AT(out.W_out), RS_P_out_W, ROWS_ALL, COLS_ALL, 1},
};
enum { PRODUCTS = sizeof products / sizeof *products };

#undef AT

/* The int8 copies are of a parameter's columns as its products read them
 * (dec.W's two blocks quantized apart, each row with its own scale): one
 * per parameter and column kind. */
enum { Q8S = RS_NUM_PARAMS * COL_KINDS };

static int q8_key(int i)
{
    return products[i].param * COL_KINDS + products[i].cols;
}

/* The copies, and the exact view's forms over them. */
struct rs_accel {
    float *block;                   /* the transposed copies, or NULL */
    const float *wt[RS_NUM_PARAMS]; /* parameter p's copy in block (NULL: none) */
    rs_q8_matrix *q8;               /* [Q8S] the int8 copies (by q8_key), or NULL */
    int owns_block, owns_q8;        /* 0: another object's, shared */
    wt_form wt_forms[PRODUCTS];
};
typedef struct rs_accel accel;

/* Parameter p [rows, cols] as the layers read it (out.W of a tied model:
 * tgt_emb's floats); no rows where the model has none (att.W, att.U or
 * att.K, by attention kind). */
static rs_cmat param_of(const rs_model *model, int p)
{
    const rs_tensor_info *t = rs_tensor_storage(&model->layout, p);
    return t ? RS_CMAT(model->params + t->offset, t->rows, t->cols) : RS_CMAT(NULL, 0, 0);
}

/* Whether product i is the first to read its parameter. */
static int first_reader(int i)
{
    for (int k = 0; k < i; k++)
        if (products[k].param == products[i].param)
            return 0;
    return 1;
}

/* The rows first..first+count-1 of product i's parameter [out, ·] that it
 * multiplies by: all, or of a GRU's U [3n,n] those of z and r, or of g. */
static void rows_of(int i, int out, int *first, int *count)
{
    const int n = out / 3;
    *first = products[i].rows == ROWS_G ? 2 * n : 0;
    *count = products[i].rows == ROWS_ZR ? 2 * n : products[i].rows == ROWS_G ? n : out;
}

/* The columns product i reads of its parameter's `total`: all, or dec.W's
 * first m (W'_e, for E y) or the rest (W'_c, for c); the first at *col. */
static int cols_of(int i, const rs_model *model, int total, int *col)
{
    const int m = model->cfg.emb, kind = products[i].cols;
    *col = kind == COLS_C ? m : 0;
    return kind == COLS_E ? m : kind == COLS_C ? total - m : total;
}

/* Every parameter's transpose, one after another in one block, in the
 * table's order. A parameter [out, in] is copied whole: the copy of dec.W
 * [m+2n, 3n] holds W'_eᵀ then W'_cᵀ. */
static int make_transposed(accel *a, const rs_model *model, rs_error *err)
{
    size_t total = 0;
    for (int i = 0; i < PRODUCTS; i++) {
        const rs_cmat v = param_of(model, products[i].param);
        total += first_reader(i) ? (size_t)v.rows * v.cols : 0;
    }
    a->block = rs_calloc_large(total, sizeof(float), err);
    if (!a->block)
        return -1;
    a->owns_block = 1;
    float *next = a->block;
    for (int i = 0; i < PRODUCTS; i++) {
        const rs_cmat v = param_of(model, products[i].param);
        if (!first_reader(i) || !v.rows)
            continue;
        a->wt[products[i].param] = next;
        rs_transpose(next, v);
        next += (size_t)v.rows * v.cols;
    }
    return 0;
}

static void free_q8(rs_q8_matrix *q8)
{
    for (int i = 0; q8 && i < Q8S; i++)
        rs_q8_matrix_free(&q8[i]);
    free(q8);
}

/* The decoder step's int8 copies, each of all the rows of the columns its
 * products read (a product reads rows of it: rs_q8_rows). */
static int make_int8(accel *a, const rs_model *model, rs_error *err)
{
    a->q8 = rs_calloc(Q8S, sizeof *a->q8, err);
    if (!a->q8)
        return -1;
    a->owns_q8 = 1;
    for (int i = 0; i < PRODUCTS; i++) {
        const rs_cmat v = param_of(model, products[i].param);
        rs_q8_matrix *q = &a->q8[q8_key(i)];
        if (!products[i].int8 || !v.rows || q->rows)
            continue;
        int col;
        const int cols = cols_of(i, model, v.cols, &col);
        if (rs_q8_matrix_init(q, RS_CMAT_S(v.data + col, v.rows, cols, v.stride), err))
            return -1;
    }
    return 0;
}

/* ---- the views ---- */

/* Product i's rs_linear in the view w. */
static rs_linear *product_in(rs_network_weights *w, int i)
{
    return (rs_linear *)((char *)w + products[i].at);
}

/* The exact view's forms: product i by its part of its parameter through
 * the transposed copy, whose columns its rows are (forward NULL: no copy). */
static void make_wt_forms(accel *a, const rs_model *model)
{
    for (int i = 0; i < PRODUCTS; i++) {
        const int p = products[i].param;
        const rs_cmat v = param_of(model, p);
        if (!a->wt[p])
            continue;
        int first, count, col;
        rows_of(i, v.rows, &first, &count);
        const int cols = cols_of(i, model, v.cols, &col);
        a->wt_forms[i] = (wt_form){
            .base = {.forward = wt_forward},
            .W = RS_CMAT_S(v.data + (size_t)first * v.stride + col, count, cols, v.stride),
            .W_t = RS_CMAT_S(a->wt[p] + (size_t)col * v.rows + first, cols, count, v.rows)};
    }
}

rs_network_weights rs_accel_weights(const rs_model *model, const rs_accel *a)
{
    rs_network_weights w = rs_network_weights_of(model);
    for (int i = 0; a && i < PRODUCTS; i++)
        if (a->wt_forms[i].base.forward)
            product_in(&w, i)->fast = &a->wt_forms[i].base;
    return w;
}

struct rs_accel_step {
    const accel *a; /* the copies its forms read (NULL: none) */
    rs_network_weights w;
    q8_form forms[PRODUCTS];
    scratch mem;
};

rs_accel_step *rs_accel_step_new(const rs_model *model, const rs_accel *a, int max_rows,
                                 rs_error *err)
{
    rs_accel_step *s = rs_calloc(1, sizeof *s, err);
    if (!s)
        return NULL;
    s->a = a;
    s->w = rs_accel_weights(model, a);
    if (!a || !a->q8)
        return s;
    /* the widest input of a step's products: E y [m], c [2n], t [l] */
    const rs_model_config *c = &model->cfg;
    size_t width = (size_t)2 * c->hidden;
    width = (size_t)c->emb > width ? (size_t)c->emb : width;
    width = (size_t)c->maxout > width ? (size_t)c->maxout : width;
    s->mem.bytes = (size_t)max_rows * (width + sizeof(float));
    s->mem.data = rs_calloc(s->mem.bytes, 1, err);
    if (!s->mem.data) {
        rs_accel_step_free(s);
        return NULL;
    }
    for (int i = 0; i < PRODUCTS; i++) {
        const rs_q8_matrix *q = &a->q8[q8_key(i)];
        if (!products[i].int8 || !q->rows)
            continue;
        int first, count;
        rows_of(i, q->rows, &first, &count);
        s->forms[i] = (q8_form){
            .base = {.forward = q8_forward}, .q = rs_q8_rows(q, first, count), .mem = &s->mem};
        product_in(&s->w, i)->fast = &s->forms[i].base;
    }
    return s;
}

void rs_accel_step_free(rs_accel_step *s)
{
    if (!s)
        return;
    free(s->mem.data);
    free(s);
}

const rs_network_weights *rs_accel_step_weights(const rs_accel_step *s)
{
    return &s->w;
}

rs_accel *rs_accel_new(const rs_model *model, const rs_accel *had, const rs_accel_options *opt,
                       rs_error *err)
{
    accel *a = rs_calloc(1, sizeof *a, err);
    if (!a)
        return NULL;
    if (opt->transposed && had && had->block) {
        a->block = had->block;
        memcpy(a->wt, had->wt, sizeof a->wt);
    } else if (opt->transposed && make_transposed(a, model, err)) {
        rs_accel_free(a);
        return NULL;
    }
    if (opt->int8 && had && had->q8) {
        a->q8 = had->q8;
    } else if (opt->int8 && make_int8(a, model, err)) {
        rs_accel_free(a);
        return NULL;
    }
    make_wt_forms(a, model);
    rs_packed_open(a, model->params, model->layout.total); /* held still while a lives */
    return a;
}

void rs_accel_free(rs_accel *a)
{
    if (!a)
        return;
    rs_packed_free(a);
    if (a->owns_block)
        free(a->block);
    if (a->owns_q8)
        free_q8(a->q8);
    free(a);
}

/* ---- a shortlist's output layer ---- */

struct rs_accel_rows {
    const accel *a; /* the step's copies */
    int max_count, l;
    float *W, *W_t; /* [max_count,l], [l,max_count] */
    wt_form wt;
    q8_form q8;
    const scratch *mem; /* the step's */
};

rs_accel_rows *rs_accel_rows_new(const rs_accel_step *step, int max_count, int l, rs_error *err)
{
    rs_accel_rows *r = rs_calloc(1, sizeof *r, err);
    if (!r)
        return NULL;
    r->a = step->a;
    r->mem = &step->mem;
    r->max_count = max_count;
    r->l = l;
    r->W = rs_calloc((size_t)max_count * l, sizeof(float), err);
    r->W_t = r->W ? rs_calloc((size_t)max_count * l, sizeof(float), err) : NULL;
    if (!r->W_t) {
        rs_accel_rows_free(r);
        return NULL;
    }
    return r;
}

void rs_accel_rows_free(rs_accel_rows *r)
{
    if (!r)
        return;
    free(r->W);
    free(r->W_t);
    free(r);
}

rs_linear rs_accel_rows_gather(rs_accel_rows *r, const rs_model *model, const int *ids, int count,
                               int many_rows)
{
    const accel *a = r->a;
    const size_t l = (size_t)r->l, V = (size_t)model->cfg.tgt_vocab, K = (size_t)count;
    const rs_cmat rows = RS_CMAT(r->W, count, r->l);
    if (a && a->q8) {
        /* The int8 rows are read at the ids: the floats are not gathered
         * (rows' values unused, its shape the product's). */
        r->q8 = (q8_form){.base = {.forward = q8_forward},
                          .q = a->q8[RS_P_out_W * COL_KINDS + COLS_ALL],
                          .ids = ids,
                          .mem = r->mem};
        return (rs_linear){.W = rows, .fast = &r->q8.base};
    }
    const float *W = model->cfg.tie_embeddings ? model->w.tgt_emb : model->w.out_W;
    for (size_t j = 0; j < K; j++)
        memcpy(r->W + j * l, W + (size_t)ids[j] * l, sizeof(float) * l);
    if (!a || !a->block || !many_rows)
        return RS_LINEAR(rows);
    /* Their transpose from the model's, row i of W_outᵀ at the ids, for the
     * products of more than one row. */
    const float *W_t = a->wt[RS_P_out_W];
    for (size_t i = 0; i < l; i++)
        for (size_t j = 0; j < K; j++)
            r->W_t[i * K + j] = W_t[i * V + (size_t)ids[j]];
    r->wt =
        (wt_form){.base = {.forward = wt_forward}, .W = rows, .W_t = RS_CMAT(r->W_t, r->l, count)};
    return (rs_linear){.W = rows, .fast = &r->wt.base};
}
