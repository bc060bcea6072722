/* One attention step worked through with every intermediate (see explain.h).
 * Shapes as in explain.h: nq queries [dq], nk keys [dk], values [dv], a. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/explain.h"

/* ---- parsing ----------------------------------------------------------- */

void rs_matrix_free(rs_matrix *m)
{
    free(m->v);
    memset(m, 0, sizeof *m);
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int rs_matrix_parse(rs_matrix *m, const char *text, rs_error *err)
{
    memset(m, 0, sizeof *m);
    if (!text)
        return rs_fail(err, "no numbers given");
    size_t cap = 1;
    for (const char *s = text; *s; s++)
        cap += *s == ',' || *s == ';';
    m->v = rs_calloc(cap, sizeof *m->v, err);
    if (!m->v)
        return -1;
    int row = 0, col = 0, count = 0;
    const char *p = text;
    for (;;) {
        const char *field = p;
        size_t flen = strcspn(p, ",;");
        while (is_blank(*p))
            p++;
        if (p == field + flen) {
            if (row == 0 && col == 0 && !field[flen]) {
                rs_fail(err, "no numbers given");
            } else if (col == 0 && field[flen] != ',') {
                rs_fail(err, "row %d is empty", row + 1);
            } else {
                rs_fail(err, "row %d, number %d is missing", row + 1, col + 1);
            }
            goto fail;
        }
        char *end;
        double x = strtod(p, &end);
        const char *q = end;
        while (is_blank(*q))
            q++;
        if (end == p || q != field + flen) {
            rs_fail(err, "'%.*s' (row %d, number %d) is not a number", (int)flen, field, row + 1,
                    col + 1);
            goto fail;
        }
        if (!isfinite(x)) {
            rs_fail(err, "'%.*s' (row %d, number %d) is not a finite number", (int)flen, field,
                    row + 1, col + 1);
            goto fail;
        }
        m->v[count++] = x;
        col++;
        p = field + flen;
        if (*p == ',') {
            p++;
            continue;
        }
        /* end of a row */
        if (row == 0) {
            m->cols = col;
        } else if (col != m->cols) {
            rs_fail(err, "row %d has %d number%s but row 1 has %d (rows must be equally long)",
                    row + 1, col, col == 1 ? "" : "s", m->cols);
            goto fail;
        }
        row++;
        col = 0;
        if (!*p)
            break;
        p++;
    }
    m->rows = row;
    return 0;
fail:
    rs_matrix_free(m);
    return -1;
}

void rs_explain_input_free(rs_explain_input *in)
{
    rs_matrix *all[] = {&in->keys, &in->values, &in->query, &in->mask, &in->W,
                        &in->Wq,   &in->Wk,     &in->v,     &in->b,    &in->state,
                        &in->emb,  &in->Uo,     &in->Vo,    &in->Co,   &in->bo};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        rs_matrix_free(all[i]);
}

/* ---- checking and computing -------------------------------------------- */

int rs_matrix_given(const rs_matrix *m)
{
    return m->rows > 0;
}

/* Length of a matrix given as a vector (one row or one column), or -1. */
static int vec_len(const rs_matrix *m)
{
    if (m->rows == 1)
        return m->cols;
    if (m->cols == 1)
        return m->rows;
    return -1;
}

/* The additive score's weights: Wq [a, dq], Wk [a, dk], v [a], b [a] if given. */
static int check_additive(const rs_explain_input *in, int dq, int dk, rs_error *err)
{
    if (!rs_matrix_given(&in->Wq) || !rs_matrix_given(&in->Wk) || !rs_matrix_given(&in->v))
        return rs_fail(err, "the additive score v . tanh(Wq q + Wk k) needs Wq, Wk and v");
    int a = in->Wq.rows;
    if (in->Wq.cols != dq)
        return rs_fail(err, "Wq is %d x %d but must have %d columns (the query size)", in->Wq.rows,
                       in->Wq.cols, dq);
    if (in->Wk.cols != dk)
        return rs_fail(err, "Wk is %d x %d but must have %d columns (the key size)", in->Wk.rows,
                       in->Wk.cols, dk);
    if (in->Wk.rows != a)
        return rs_fail(err,
                       "Wq is %d x %d and Wk %d x %d: both need a rows (the attention "
                       "size)",
                       a, dq, in->Wk.rows, dk);
    if (vec_len(&in->v) != a)
        return rs_fail(err, "v must be a vector of %d numbers (the rows of Wq), not %d x %d", a,
                       in->v.rows, in->v.cols);
    if (rs_matrix_given(&in->b) && vec_len(&in->b) != a)
        return rs_fail(err, "b must be a vector of %d numbers (the rows of Wq), not %d x %d", a,
                       in->b.rows, in->b.cols);
    return 0;
}

/* A mask, if given: 1 x nk or nq x nk of 0 and 1, no row hiding every key. */
static int check_mask(const rs_matrix *m, int nk, int nq, rs_error *err)
{
    if (!rs_matrix_given(m))
        return 0;
    if (m->cols != nk || (m->rows != 1 && m->rows != nq)) {
        if (nq == 1)
            return rs_fail(err, "the mask is %d x %d but must be 1 x %d (one entry per key)",
                           m->rows, m->cols, nk);
        return rs_fail(err,
                       "the mask is %d x %d but must be 1 x %d (all queries) or %d x %d "
                       "(one row per query)",
                       m->rows, m->cols, nk, nq, nk);
    }
    for (int i = 0; i < m->rows * m->cols; i++)
        if (m->v[i] != 0.0 && m->v[i] != 1.0)
            return rs_fail(err, "mask entries are 1 (keep) or 0 (hide), not %g", m->v[i]);
    for (int r = 0; r < m->rows; r++) {
        int kept = 0;
        for (int j = 0; j < nk; j++)
            kept += m->v[r * nk + j] == 1.0;
        if (!kept) {
            if (m->rows == 1)
                return rs_fail(err, "the mask hides every key: softmax over no keys is "
                                    "undefined");
            return rs_fail(err,
                           "the mask hides every key from query %d: softmax over no "
                           "keys is undefined",
                           r + 1);
        }
    }
    return 0;
}

/* The deep output's weights, if any: rows 2l (even, the same in all), C_o
 * [2l, dv], U_o [2l, ds], V_o [2l, de] with the embeddings, b_o 2l numbers. */
static int check_readout(const rs_explain_input *in, int nq, int dv, rs_error *err)
{
    const rs_matrix *W[] = {&in->Uo, &in->Vo, &in->Co};
    const char *names[] = {"Uo", "Vo", "Co"};
    int rows = 0;
    for (int k = 0; k < 3; k++)
        if (rs_matrix_given(W[k]))
            rows = W[k]->rows;
    if (!rows) {
        if (rs_matrix_given(&in->bo) || rs_matrix_given(&in->state) || rs_matrix_given(&in->emb))
            return rs_fail(err, "--bo, --state and --emb belong to the deep output: give --Co "
                                "(and --Uo, --Vo) too");
        return 0;
    }
    if (rows % 2)
        return rs_fail(err,
                       "the deep output's weights have %d rows: maxout takes pairs, so 2l "
                       "rows (an even number)",
                       rows);
    for (int k = 0; k < 3; k++)
        if (rs_matrix_given(W[k]) && W[k]->rows != rows)
            return rs_fail(err, "%s has %d rows but the other deep-output weights %d (2l each)",
                           names[k], W[k]->rows, rows);
    if (rs_matrix_given(&in->bo) && vec_len(&in->bo) != rows)
        return rs_fail(err, "bo must be a vector of %d numbers (2l), not %d x %d", rows,
                       in->bo.rows, in->bo.cols);
    if (rs_matrix_given(&in->Co) && in->Co.cols != dv)
        return rs_fail(err, "Co is %d x %d but must have %d columns (the context's size)",
                       in->Co.rows, in->Co.cols, dv);
    const rs_matrix *s = rs_matrix_given(&in->state) ? &in->state : &in->query;
    if (rs_matrix_given(&in->state) && s->rows != 1 && s->rows != nq)
        return rs_fail(err, "--state has %d rows: give one, or one per query (%d)", s->rows, nq);
    if (rs_matrix_given(&in->Uo) && in->Uo.cols != s->cols)
        return rs_fail(err, "Uo is %d x %d but must have %d columns (the size of %s)", in->Uo.rows,
                       in->Uo.cols, s->cols, rs_matrix_given(&in->state) ? "--state" : "the query");
    if (rs_matrix_given(&in->Vo) != rs_matrix_given(&in->emb))
        return rs_fail(err, "Vo and --emb go together (V_o times the previous word's embedding)");
    if (rs_matrix_given(&in->emb) && in->emb.rows != 1 && in->emb.rows != nq)
        return rs_fail(err, "--emb has %d rows: give one, or one per query (%d)", in->emb.rows, nq);
    if (rs_matrix_given(&in->Vo) && in->Vo.cols != in->emb.cols)
        return rs_fail(err, "Vo is %d x %d but must have %d columns (the size of --emb)",
                       in->Vo.rows, in->Vo.cols, in->emb.cols);
    return 0;
}

int rs_explain_check(const rs_explain_input *in, rs_error *err)
{
    if (in->score == RS_ATT_NONE)
        return rs_fail(err, RS_NO_ALIGNMENT_WHY);
    if ((unsigned)in->score > RS_ATT_SCALED_DOT)
        return rs_fail(err, "unknown score function");
    if (!rs_matrix_given(&in->keys))
        return rs_fail(err, "no keys given");
    if (!rs_matrix_given(&in->query))
        return rs_fail(err, "no query given");
    int nk = in->keys.rows, dk = in->keys.cols, nq = in->query.rows, dq = in->query.cols;
    const char *name = rs_attention_kind_name(in->score);
    if (rs_matrix_given(&in->values) && in->values.rows != nk)
        return rs_fail(err, "there are %d values but %d keys (one value per key, one per row)",
                       in->values.rows, nk);
    if (in->score != RS_ATT_GENERAL && rs_matrix_given(&in->W))
        return rs_fail(err, "the weights W are used by the general score only, not %s", name);
    if (in->score != RS_ATT_ADDITIVE && (rs_matrix_given(&in->Wq) || rs_matrix_given(&in->Wk) ||
                                         rs_matrix_given(&in->v) || rs_matrix_given(&in->b)))
        return rs_fail(err, "Wq, Wk, v and b are used by the additive score only, not %s", name);

    switch (in->score) {
    case RS_ATT_DOT:
    case RS_ATT_SCALED_DOT:
        if (dq != dk)
            return rs_fail(err,
                           "the %s score needs queries and keys of one size: the query has %d "
                           "numbers, each key %d",
                           name, dq, dk);
        break;
    case RS_ATT_GENERAL:
        if (!rs_matrix_given(&in->W))
            return rs_fail(err, "the general score q^T W k needs the weights W (%d x %d)", dq, dk);
        if (in->W.rows != dq || in->W.cols != dk)
            return rs_fail(err, "W is %d x %d but q^T W k needs %d x %d (query size x key size)",
                           in->W.rows, in->W.cols, dq, dk);
        break;
    case RS_ATT_ADDITIVE:
        if (check_additive(in, dq, dk, err))
            return -1;
        break;
    case RS_ATT_NONE: break; /* refused above */
    }
    const int dv = rs_matrix_given(&in->values) ? in->values.cols : dk;
    return check_mask(&in->mask, nk, nq, err) ? -1 : check_readout(in, nq, dv, err);
}

void rs_explain_result_free(rs_explain_result *res)
{
    double *all[] = {res->raw,     res->scores,  res->max,   res->exps, res->sums,
                     res->weights, res->context, res->tpre,  res->tmax, res->qW,
                     res->wq,      res->wk,      res->hidden};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]);
    free(res->keep);
    memset(res, 0, sizeof *res);
}

/* The result's buffers for nq queries of size dq, nk keys of size dk, values
 * of size dv (and, for the score kinds that have one, qW or the additive
 * projections and hidden layer). */
static int result_alloc(rs_explain_result *res, int score, rs_error *err)
{
    const int nq = res->nq, nk = res->nk, dk = res->dk, dv = res->dv, a = res->a;
    const size_t qk = (size_t)nq * (size_t)nk;
    res->raw = rs_calloc(qk, sizeof *res->raw, err);
    res->scores = rs_calloc(qk, sizeof *res->scores, err);
    res->keep = rs_calloc(qk, sizeof *res->keep, err);
    res->max = rs_calloc((size_t)nq, sizeof *res->max, err);
    res->exps = rs_calloc(qk, sizeof *res->exps, err);
    res->sums = rs_calloc((size_t)nq, sizeof *res->sums, err);
    res->weights = rs_calloc(qk, sizeof *res->weights, err);
    res->context = rs_calloc((size_t)nq * (size_t)dv, sizeof *res->context, err);
    int ok = res->raw && res->scores && res->keep && res->max && res->exps && res->sums &&
             res->weights && res->context;
    if (ok && res->l) {
        res->tpre = rs_calloc((size_t)nq * 2 * (size_t)res->l, sizeof *res->tpre, err);
        res->tmax = rs_calloc((size_t)nq * (size_t)res->l, sizeof *res->tmax, err);
        ok = res->tpre && res->tmax;
    }
    if (ok && score == RS_ATT_GENERAL)
        ok = (res->qW = rs_calloc((size_t)nq * (size_t)dk, sizeof *res->qW, err)) != NULL;
    if (ok && score == RS_ATT_ADDITIVE) {
        res->wq = rs_calloc((size_t)nq * (size_t)a, sizeof *res->wq, err);
        res->wk = rs_calloc((size_t)nk * (size_t)a, sizeof *res->wk, err);
        res->hidden = rs_calloc(qk * (size_t)a, sizeof *res->hidden, err);
        ok = res->wq && res->wk && res->hidden;
    }
    if (!ok)
        rs_explain_result_free(res);
    return ok ? 0 : -1;
}

/* What does not depend on the pair, computed once and shared by every pair
 * (as the model hoists U_a h_j): qᵢᵀW (general), Wq qᵢ + b and Wk k_j
 * (additive). */
static void project(rs_explain_result *res, const rs_explain_input *in)
{
    const int nq = res->nq, nk = res->nk, dq = res->dq, dk = res->dk, a = res->a;
    for (int i = 0; i < nq; i++) {
        const double *q = in->query.v + (size_t)i * dq;
        if (res->qW)
            for (int c = 0; c < dk; c++) {
                double s = 0.0;
                for (int r = 0; r < dq; r++)
                    s += q[r] * in->W.v[(size_t)r * dk + c];
                res->qW[(size_t)i * dk + c] = s;
            }
        if (res->wq)
            for (int t = 0; t < a; t++) {
                double s = rs_matrix_given(&in->b) ? in->b.v[t] : 0.0;
                for (int r = 0; r < dq; r++)
                    s += in->Wq.v[(size_t)t * dq + r] * q[r];
                res->wq[(size_t)i * a + t] = s;
            }
    }
    if (res->wk)
        for (int j = 0; j < nk; j++)
            for (int t = 0; t < a; t++) {
                double s = 0.0;
                for (int r = 0; r < dk; r++)
                    s += in->Wk.v[(size_t)t * dk + r] * in->keys.v[(size_t)j * dk + r];
                res->wk[(size_t)j * a + t] = s;
            }
}

/* Query i's scores: e_ij = score(qᵢ, k_j) (raw), divided by the divisor where
 * the mask keeps key j, −∞ where it hides it; returns their maximum over kept
 * keys. */
static double score_row(rs_explain_result *res, const rs_explain_input *in, int i)
{
    const int nk = res->nk, dq = res->dq, dk = res->dk, a = res->a;
    const double *q = in->query.v + (size_t)i * dq;
    const double *mask_row =
        rs_matrix_given(&in->mask) ? in->mask.v + (size_t)(in->mask.rows == 1 ? 0 : i) * nk : NULL;
    double m = -INFINITY;
    for (int j = 0; j < nk; j++) {
        const double *k = in->keys.v + (size_t)j * dk;
        size_t ij = (size_t)i * nk + j;
        double s = 0.0;
        if (in->score == RS_ATT_DOT || in->score == RS_ATT_SCALED_DOT) {
            for (int r = 0; r < dk; r++)
                s += q[r] * k[r];
        } else if (in->score == RS_ATT_GENERAL) {
            for (int r = 0; r < dk; r++)
                s += res->qW[(size_t)i * dk + r] * k[r];
        } else {
            double *h = res->hidden + ij * a;
            for (int t = 0; t < a; t++) {
                h[t] = tanh(res->wq[(size_t)i * a + t] + res->wk[(size_t)j * a + t]);
                s += in->v.v[t] * h[t];
            }
        }
        res->raw[ij] = s;
        res->keep[ij] = mask_row ? mask_row[j] == 1.0 : 1;
        res->scores[ij] = res->keep[ij] ? s / res->divisor : -INFINITY;
        if (res->keep[ij] && res->scores[ij] > m)
            m = res->scores[ij];
    }
    return m;
}

/* Query i's softmax, α_ij = exp(e_ij − m) / Σ_j' exp(e_ij' − m), then
 * c_i = Σ_j α_ij v_j. */
static void softmax_and_context(rs_explain_result *res, const rs_explain_input *in,
                                const rs_matrix *V, int i)
{
    const int nk = res->nk, dv = res->dv;
    const double m = res->max[i];
    double sum = 0.0;
    for (int j = 0; j < nk; j++) {
        size_t ij = (size_t)i * nk + j;
        /* masked keys are left out of the sum, not added as exp(-inf) */
        res->exps[ij] = res->keep[ij] ? exp(res->scores[ij] - m) : 0.0;
        sum += res->exps[ij];
    }
    res->sums[i] = sum;
    for (int j = 0; j < nk; j++) {
        size_t ij = (size_t)i * nk + j;
        res->weights[ij] = res->keep[ij] ? res->exps[ij] / sum : 0.0;
    }
    double *c = res->context + (size_t)i * dv;
    for (int j = 0; j < nk; j++)
        for (int r = 0; r < dv; r++)
            c[r] += res->weights[(size_t)i * nk + j] * V->v[(size_t)j * dv + r];
}

/* y += W x: W [rows, cols] row-major, x [cols]. */
static void add_product(double *y, const rs_matrix *W, const double *x)
{
    for (int r = 0; r < W->rows; r++)
        for (int k = 0; k < W->cols; k++)
            y[r] += W->v[(size_t)r * W->cols + k] * x[k];
}

/* Query i's deep output (model.md): t~ = U_o s + V_o e + C_o c + b_o, then
 * t[k] = max(t~[2k], t~[2k+1]) (the first of a tie, as the model). */
static void deep_output(rs_explain_result *res, const rs_explain_input *in, int i)
{
    const int l = res->l;
    double *tp = res->tpre + (size_t)i * 2 * l;
    const rs_matrix *s = rs_matrix_given(&in->state) ? &in->state : &in->query;
    for (int k = 0; k < 2 * l; k++)
        tp[k] = rs_matrix_given(&in->bo) ? in->bo.v[k] : 0.0;
    if (rs_matrix_given(&in->Uo))
        add_product(tp, &in->Uo, s->v + (size_t)(s->rows == 1 ? 0 : i) * s->cols);
    if (rs_matrix_given(&in->Vo))
        add_product(tp, &in->Vo, in->emb.v + (size_t)(in->emb.rows == 1 ? 0 : i) * in->emb.cols);
    if (rs_matrix_given(&in->Co))
        add_product(tp, &in->Co, res->context + (size_t)i * res->dv);
    for (int k = 0; k < l; k++)
        res->tmax[(size_t)i * l + k] = tp[2 * k + 1] > tp[2 * k] ? tp[2 * k + 1] : tp[2 * k];
}

int rs_explain_compute(rs_explain_result *res, const rs_explain_input *in, rs_error *err)
{
    memset(res, 0, sizeof *res);
    if (rs_explain_check(in, err) < 0)
        return -1;
    const rs_matrix *V = rs_matrix_given(&in->values) ? &in->values : &in->keys;
    res->nq = in->query.rows, res->nk = in->keys.rows, res->dq = in->query.cols;
    res->dk = in->keys.cols, res->dv = V->cols;
    res->a = in->score == RS_ATT_ADDITIVE ? in->Wq.rows : 0;
    res->l = rs_matrix_given(&in->Co)   ? in->Co.rows / 2
             : rs_matrix_given(&in->Uo) ? in->Uo.rows / 2
             : rs_matrix_given(&in->Vo) ? in->Vo.rows / 2
                                        : 0;
    if (result_alloc(res, in->score, err))
        return -1;
    res->divisor = in->scale || in->score == RS_ATT_SCALED_DOT ? sqrt((double)res->dk) : 1.0;
    project(res, in);
    for (int i = 0; i < res->nq; i++) {
        res->max[i] = score_row(res, in, i);
        softmax_and_context(res, in, V, i);
        if (res->l)
            deep_output(res, in, i);
    }
    /* Inputs near the largest doubles overflow a product or a score: say so
     * rather than show weights that are not numbers. */
    for (int k = 0; k < res->nq * res->nk; k++)
        if (!isfinite(res->weights[k]))
            return rs_fail(err, "the scores overflow (the numbers are too large for double "
                                "precision): scale the inputs down");
    for (int k = 0; k < res->nq * res->dv; k++)
        if (!isfinite(res->context[k]))
            return rs_fail(err, "the context overflows (the values are too large for double "
                                "precision): scale the values down");
    return 0;
}
