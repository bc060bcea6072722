/* The faster forms and their copies; accel.h says which products get which.
 * A form is the first member of its struct (wt_form, q8_form), so its
 * forward finds what it reads from the rs_linear_fast pointer it is given. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "accel/accel.h"
#include "accel/int8.h"
#include "accel/transposed.h"
#include "nn/attention.h"
#include "nn/readout.h"

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

/* ---- a model's copies ---- */

/* The matrices with copies, in the order of the transposed block: each a
 * tensor of params.h's table (RS_PARAM_TABLE) as the layers read it
 * (matrices_of): enc_fwd.U, enc_bwd.U, enc_fwd.W, enc_bwd.W, the
 * attention's key side (att.U, or att.K), dec.W's columns for E y (W'_e)
 * and for c (W'_c), dec.U, att.W, out.U, out.V, out.C and out.W (tgt_emb's
 * floats when tied). */
enum {
    M_ENC_FWD_U,
    M_ENC_BWD_U,
    M_ENC_FWD_W,
    M_ENC_BWD_W,
    M_ATT_U,
    M_DEC_W,
    M_DEC_W_C,
    M_DEC_U,
    M_ATT_W,
    M_OUT_U,
    M_OUT_V,
    M_OUT_C,
    M_OUT_W,
    MATRICES
};

/* The decoder step's, which have int8 copies: [M_DEC_W, M_OUT_W]. */
enum { Q_FIRST = M_DEC_W, Q8S = MATRICES - M_DEC_W };

/* Which rows of its matrix a product multiplies by: all, or a GRU's U read
 * as U_zr (rows 0..2n-1) and U_g (rows 2n..3n-1). */
enum { ROWS_ALL, ROWS_ZR, ROWS_G };

/* Every forward product with a faster form: its rs_linear in the weights
 * view, the matrix whose copies it reads, and which rows. One table for
 * both views: the exact one takes the transposed copies' forms, the step's
 * the int8 ones where the matrix has them (M_DEC_W on). */
static const struct {
    size_t at;
    int matrix, rows;
} products[] = {
    {offsetof(rs_network_weights, enc_fwd.W), M_ENC_FWD_W, ROWS_ALL},
    {offsetof(rs_network_weights, enc_fwd.U_zr), M_ENC_FWD_U, ROWS_ZR},
    {offsetof(rs_network_weights, enc_fwd.U_g), M_ENC_FWD_U, ROWS_G},
    {offsetof(rs_network_weights, enc_bwd.W), M_ENC_BWD_W, ROWS_ALL},
    {offsetof(rs_network_weights, enc_bwd.U_zr), M_ENC_BWD_U, ROWS_ZR},
    {offsetof(rs_network_weights, enc_bwd.U_g), M_ENC_BWD_U, ROWS_G},
    {offsetof(rs_network_weights, att.U), M_ATT_U, ROWS_ALL},
    {offsetof(rs_network_weights, dec.W), M_DEC_W, ROWS_ALL},
    {offsetof(rs_network_weights, dec.W_c), M_DEC_W_C, ROWS_ALL},
    {offsetof(rs_network_weights, dec.U_zr), M_DEC_U, ROWS_ZR},
    {offsetof(rs_network_weights, dec.U_g), M_DEC_U, ROWS_G},
    {offsetof(rs_network_weights, att.W), M_ATT_W, ROWS_ALL},
    {offsetof(rs_network_weights, out.U_o), M_OUT_U, ROWS_ALL},
    {offsetof(rs_network_weights, out.V_o), M_OUT_V, ROWS_ALL},
    {offsetof(rs_network_weights, out.C_o), M_OUT_C, ROWS_ALL},
    {offsetof(rs_network_weights, out.W_out), M_OUT_W, ROWS_ALL},
};
enum { PRODUCTS = sizeof products / sizeof *products };

/* The copies, and the exact view's forms over them. */
struct rs_accel {
    float *block;              /* the transposed copies, or NULL */
    const float *wt[MATRICES]; /* copy i in block (NULL: a matrix of no rows) */
    rs_q8_matrix *q8;          /* [Q8S] the int8 copies (M_DEC_W first), or NULL */
    int owns_block, owns_q8;   /* 0: another object's, shared */
    wt_form wt_forms[PRODUCTS];
    rs_network_weights exact; /* the model's views with the wt_forms */
};
typedef struct rs_accel accel;

/* The float matrices, as the layers read them (model.md's names). */
static void matrices_of(const rs_model *model, rs_cmat v[MATRICES])
{
    const rs_tensors *t = &model->w;
    const rs_model_config *c = &model->cfg;
    const int m = c->emb, n = c->hidden, in = m + 2 * n;
    const rs_attention_weights att = rs_attention_weights_of(t, c->attention, n, c->att);
    const rs_readout_weights out = rs_readout_weights_of(t, m, n, c->maxout, c->tgt_vocab);
    v[M_ENC_FWD_U] = RS_CMAT(t->enc_fwd_U, 3 * n, n);
    v[M_ENC_BWD_U] = RS_CMAT(t->enc_bwd_U, 3 * n, n);
    v[M_ENC_FWD_W] = RS_CMAT(t->enc_fwd_W, 3 * n, m);
    v[M_ENC_BWD_W] = RS_CMAT(t->enc_bwd_W, 3 * n, m);
    v[M_ATT_U] = att.U.W;
    v[M_DEC_W] = RS_CMAT_S(t->dec_W, 3 * n, m, in);
    v[M_DEC_W_C] = RS_CMAT_S(t->dec_W + m, 3 * n, 2 * n, in);
    v[M_DEC_U] = RS_CMAT(t->dec_U, 3 * n, n);
    v[M_ATT_W] = att.W.W;
    v[M_OUT_U] = out.U_o.W;
    v[M_OUT_V] = out.V_o.W;
    v[M_OUT_C] = out.C_o.W;
    v[M_OUT_W] = out.W_out.W;
}

/* Every matrix's transpose, one after another in one block. */
static int make_transposed(accel *a, const rs_cmat v[MATRICES], rs_error *err)
{
    size_t total = 0;
    for (int i = 0; i < MATRICES; i++)
        total += (size_t)v[i].rows * v[i].cols;
    a->block = rs_calloc_large(total, sizeof(float), err);
    if (!a->block)
        return -1;
    a->owns_block = 1;
    float *next = a->block;
    for (int i = 0; i < MATRICES; i++) {
        a->wt[i] = v[i].rows ? next : NULL;
        rs_transpose(next, v[i]);
        next += (size_t)v[i].rows * v[i].cols;
    }
    return 0;
}

static void free_q8(rs_q8_matrix *q8)
{
    for (int i = 0; q8 && i < Q8S; i++)
        rs_q8_matrix_free(&q8[i]);
    free(q8);
}

/* The decoder step's int8 copies (a W_a of no rows without additive
 * attention: an empty copy). */
static int make_int8(accel *a, const rs_cmat v[MATRICES], rs_error *err)
{
    a->q8 = rs_calloc(Q8S, sizeof *a->q8, err);
    if (!a->q8)
        return -1;
    a->owns_q8 = 1;
    for (int i = 0; i < Q8S; i++)
        if (v[Q_FIRST + i].rows && rs_q8_matrix_init(&a->q8[i], v[Q_FIRST + i], err))
            return -1;
    return 0;
}

/* ---- the views ---- */

/* Product i's rs_linear in the view w. */
static rs_linear *product_in(rs_network_weights *w, int i)
{
    return (rs_linear *)((char *)w + products[i].at);
}

/* The rows first..first+count-1 of product i's matrix [out,in] that it
 * multiplies by: all, or of a GRU's U [3n,n] those of z and r, or of g. */
static void rows_of(int i, int out, int *first, int *count)
{
    const int n = out / 3;
    *first = products[i].rows == ROWS_G ? 2 * n : 0;
    *count = products[i].rows == ROWS_ZR ? 2 * n : products[i].rows == ROWS_G ? n : out;
}

/* The exact view's forms: product i by its rows of v[matrix] through the
 * transposed copy, whose columns those are (forward NULL: no copy). */
static void make_wt_forms(accel *a, const rs_cmat v[MATRICES])
{
    for (int i = 0; i < PRODUCTS; i++) {
        const int k = products[i].matrix, in = v[k].cols, out = v[k].rows;
        int first, count;
        rows_of(i, out, &first, &count);
        if (!a->wt[k])
            continue;
        a->wt_forms[i] = (wt_form){
            .base = {.forward = wt_forward},
            .W = RS_CMAT_S(v[k].data + (size_t)first * v[k].stride, count, in, v[k].stride),
            .W_t = RS_CMAT_S(a->wt[k] + first, in, count, out)};
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
        const int k = products[i].matrix;
        if (k < Q_FIRST || !a->q8[k - Q_FIRST].rows)
            continue;
        int first, count;
        rows_of(i, a->q8[k - Q_FIRST].rows, &first, &count);
        s->forms[i] = (q8_form){.base = {.forward = q8_forward},
                                .q = rs_q8_rows(&a->q8[k - Q_FIRST], first, count),
                                .mem = &s->mem};
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
    rs_cmat v[MATRICES];
    matrices_of(model, v);
    accel *a = rs_calloc(1, sizeof *a, err);
    if (!a)
        return NULL;
    if (opt->transposed && had && had->block) {
        a->block = had->block;
        memcpy(a->wt, had->wt, sizeof a->wt);
    } else if (opt->transposed && make_transposed(a, v, err)) {
        rs_accel_free(a);
        return NULL;
    }
    if (opt->int8 && had && had->q8) {
        a->q8 = had->q8;
    } else if (opt->int8 && make_int8(a, v, err)) {
        rs_accel_free(a);
        return NULL;
    }
    make_wt_forms(a, v);
    return a;
}

void rs_accel_free(rs_accel *a)
{
    if (!a)
        return;
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
                          .q = a->q8[M_OUT_W - Q_FIRST],
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
    const float *W_t = a->wt[M_OUT_W];
    for (size_t i = 0; i < l; i++)
        for (size_t j = 0; j < K; j++)
            r->W_t[i * K + j] = W_t[i * V + (size_t)ids[j]];
    r->wt =
        (wt_form){.base = {.forward = wt_forward}, .W = rows, .W_t = RS_CMAT(r->W_t, r->l, count)};
    return (rs_linear){.W = rows, .fast = &r->wt.base};
}
