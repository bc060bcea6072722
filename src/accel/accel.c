/* The faster forms and their copies; accel.h says which products get which.
 * A form is the first member of its struct (wt_form, q8_form), so its
 * forward finds what it reads from the rs_linear_fast pointer it is given. */
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

static void wt_forward(const rs_linear_fast *f, rs_mat y, rs_cmat x, float beta, rs_scratch scratch)
{
    const wt_form *t = (const wt_form *)f;
    rs_matmul_forward_t(y, x, t->W, t->W_t, beta);
}

/* By the int8 copy q, at its rows ids (NULL: all, in order). */
typedef struct {
    rs_linear_fast base;
    rs_q8_matrix q;
    const int *ids;
} q8_form;

/* The caller's scratch as the int8 product takes it: scales [rows] first,
 * then the quantized input; too small a scratch becomes an empty one, which
 * the product's shape check reports. */
static rs_q8_scratch q8_scratch_of(rs_scratch s, int rows)
{
    const size_t scales = sizeof(float) * (size_t)rows;
    if (!s.data || s.bytes < scales)
        return (rs_q8_scratch){.x = NULL, .scale = NULL, .bytes = 0, .rows = 0};
    return (rs_q8_scratch){
        .x = (int8_t *)s.data + scales, .scale = s.data, .bytes = s.bytes - scales, .rows = rows};
}

static void q8_forward(const rs_linear_fast *f, rs_mat y, rs_cmat x, float beta, rs_scratch scratch)
{
    const q8_form *q = (const q8_form *)f;
    const rs_q8_scratch s = q8_scratch_of(scratch, x.rows);
    rs_q8_forward(y, x, &q->q, q->ids, NULL, &s, beta);
}

/* ---- a model's copies ---- */

/* The matrices with copies, in the order of the transposed block. */
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

/* The copies and the forms over them; table first (model->fast). */
typedef struct {
    rs_network_fast table;
    float *block;                   /* the transposed copies, or NULL */
    const float *wt[MATRICES];      /* copy i in block (NULL: a matrix of no rows) */
    rs_q8_matrix *q8;               /* [Q8S] the int8 copies (M_DEC_W first), or NULL */
    int owns_block, owns_q8;        /* 0: another object's, shared */
    wt_form wt_forms[MATRICES + 3]; /* the GRUs' U give two each */
    q8_form q8_forms[Q8S + 1];
} accel;

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

/* ---- the table ---- */

/* The form of the product by rows first..first+count−1 of v[i] (all of
 * them, or the GRU's U_zr and U_g of U) through its transposed copy, whose
 * columns those are; NULL without a copy. */
static const rs_linear_fast *wt_of(accel *a, int *used, const rs_cmat v[MATRICES], int i, int first,
                                   int count)
{
    if (!a->wt[i])
        return NULL;
    const int in = v[i].cols, out = v[i].rows;
    wt_form *f = &a->wt_forms[(*used)++];
    *f = (wt_form){.base = {.forward = wt_forward},
                   .W = RS_CMAT_S(v[i].data + (size_t)first * v[i].stride, count, in, v[i].stride),
                   .W_t = RS_CMAT_S(a->wt[i] + first, in, count, out)};
    return &f->base;
}

/* The same for the int8 copy of v[i], its rows first..first+count−1. */
static const rs_linear_fast *q8_of(accel *a, int *used, int i, int first, int count)
{
    const rs_q8_matrix *q = &a->q8[i - Q_FIRST];
    if (!q->rows)
        return NULL;
    q8_form *f = &a->q8_forms[(*used)++];
    *f = (q8_form){.base = {.forward = q8_forward}, .q = rs_q8_rows(q, first, count)};
    return &f->base;
}

/* A GRU's forms by its matrices W, W_c (or -1: none) and U [3n,n]. */
static rs_gru_fast gru_wt(accel *a, int *used, const rs_cmat v[MATRICES], int W, int W_c, int U)
{
    const int n = v[U].cols;
    return (rs_gru_fast){.W = wt_of(a, used, v, W, 0, v[W].rows),
                         .W_c = W_c < 0 ? NULL : wt_of(a, used, v, W_c, 0, v[W_c].rows),
                         .U_zr = wt_of(a, used, v, U, 0, 2 * n),
                         .U_g = wt_of(a, used, v, U, 2 * n, n)};
}

/* The table: the transposed copies' forms for every forward pass where
 * there are copies, and the int8 ones for the translation step's products
 * where there are those (rs_network_fast). */
static void make_table(accel *a, const rs_cmat v[MATRICES], int n)
{
    rs_network_fast *t = &a->table;
    int used = 0;
    memset(t, 0, sizeof *t);
    if (a->block) {
        t->all.enc_fwd = gru_wt(a, &used, v, M_ENC_FWD_W, -1, M_ENC_FWD_U);
        t->all.enc_bwd = gru_wt(a, &used, v, M_ENC_BWD_W, -1, M_ENC_BWD_U);
        t->all.dec = gru_wt(a, &used, v, M_DEC_W, M_DEC_W_C, M_DEC_U);
        t->all.att_W = wt_of(a, &used, v, M_ATT_W, 0, v[M_ATT_W].rows);
        t->all.att_U = wt_of(a, &used, v, M_ATT_U, 0, v[M_ATT_U].rows);
        t->all.out_U = wt_of(a, &used, v, M_OUT_U, 0, v[M_OUT_U].rows);
        t->all.out_V = wt_of(a, &used, v, M_OUT_V, 0, v[M_OUT_V].rows);
        t->all.out_C = wt_of(a, &used, v, M_OUT_C, 0, v[M_OUT_C].rows);
        t->all.out_W = wt_of(a, &used, v, M_OUT_W, 0, v[M_OUT_W].rows);
    }
    if (!a->q8)
        return;
    used = 0;
    t->step.dec = (rs_gru_fast){.W = q8_of(a, &used, M_DEC_W, 0, 3 * n),
                                .W_c = q8_of(a, &used, M_DEC_W_C, 0, 3 * n),
                                .U_zr = q8_of(a, &used, M_DEC_U, 0, 2 * n),
                                .U_g = q8_of(a, &used, M_DEC_U, 2 * n, n)};
    if (v[M_ATT_W].rows)
        t->step.att_W = q8_of(a, &used, M_ATT_W, 0, v[M_ATT_W].rows);
    t->step.out_U = q8_of(a, &used, M_OUT_U, 0, v[M_OUT_U].rows);
    t->step.out_V = q8_of(a, &used, M_OUT_V, 0, v[M_OUT_V].rows);
    t->step.out_C = q8_of(a, &used, M_OUT_C, 0, v[M_OUT_C].rows);
    t->step.out_W = q8_of(a, &used, M_OUT_W, 0, v[M_OUT_W].rows);
}

rs_network_fast *rs_accel_new(const rs_model *model, const rs_accel_options *opt, rs_error *err)
{
    const accel *had = (const accel *)model->fast;
    rs_cmat v[MATRICES];
    matrices_of(model, v);
    accel *a = rs_calloc(1, sizeof *a, err);
    if (!a)
        return NULL;
    if (opt->transposed && had && had->block) {
        a->block = had->block;
        memcpy(a->wt, had->wt, sizeof a->wt);
    } else if (opt->transposed && make_transposed(a, v, err)) {
        rs_accel_free(&a->table);
        return NULL;
    }
    if (opt->int8 && had && had->q8) {
        a->q8 = had->q8;
    } else if (opt->int8 && make_int8(a, v, err)) {
        rs_accel_free(&a->table);
        return NULL;
    }
    make_table(a, v, model->cfg.hidden);
    return &a->table;
}

void rs_accel_free(rs_network_fast *fast)
{
    accel *a = (accel *)fast;
    if (!a)
        return;
    if (a->owns_block)
        free(a->block);
    if (a->owns_q8)
        free_q8(a->q8);
    free(a);
}

int rs_accel_attach(rs_model *model, const rs_accel_options *opt, rs_error *err)
{
    accel *had = (accel *)model->fast;
    const rs_accel_options want = {.transposed = opt->transposed || (had && had->block),
                                   .int8 = opt->int8 || (had && had->q8)};
    if (had && want.transposed == !!had->block && want.int8 == !!had->q8)
        return 0;
    rs_network_fast *fresh = rs_accel_new(model, &want, err);
    if (!fresh)
        return -1;
    if (had && model->fast_free) { /* the new forms take over the copies they share */
        accel *a = (accel *)fresh;
        if (a->block && a->block == had->block) {
            a->owns_block = had->owns_block;
            had->owns_block = 0;
        }
        if (a->q8 && a->q8 == had->q8) {
            a->owns_q8 = had->owns_q8;
            had->owns_q8 = 0;
        }
        model->fast_free(model->fast);
    }
    model->fast = fresh;
    model->fast_free = rs_accel_free;
    return 0;
}

int rs_network_quantize(rs_model *model, rs_error *err)
{
    return rs_accel_attach(model, &(rs_accel_options){.int8 = 1}, err);
}

int rs_network_transpose(rs_model *model, rs_error *err)
{
    return rs_accel_attach(model, &(rs_accel_options){.transposed = 1}, err);
}

/* ---- a shortlist's output layer ---- */

struct rs_accel_rows {
    int max_count, l;
    float *W, *W_t; /* [max_count,l], [l,max_count] */
    wt_form wt;
    q8_form q8;
};

rs_accel_rows *rs_accel_rows_new(int max_count, int l, rs_error *err)
{
    rs_accel_rows *r = rs_calloc(1, sizeof *r, err);
    if (!r)
        return NULL;
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
    const accel *a = (const accel *)model->fast;
    const size_t l = (size_t)r->l, V = (size_t)model->cfg.tgt_vocab, K = (size_t)count;
    const rs_cmat rows = RS_CMAT(r->W, count, r->l);
    if (a && a->q8) {
        /* The int8 rows are read at the ids: the floats are not gathered
         * (rows' values unused, its shape the product's). */
        r->q8 =
            (q8_form){.base = {.forward = q8_forward}, .q = a->q8[M_OUT_W - Q_FIRST], .ids = ids};
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
