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
                        &in->Wq,   &in->Wk,     &in->v,     &in->b};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        rs_matrix_free(all[i]);
}

/* ---- checking and computing -------------------------------------------- */

static int given(const rs_matrix *m)
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

int rs_explain_check(const rs_explain_input *in, rs_error *err)
{
    if ((unsigned)in->score > RS_ATT_SCALED_DOT)
        return rs_fail(err, "unknown score function");
    if (!given(&in->keys))
        return rs_fail(err, "no keys given");
    if (!given(&in->query))
        return rs_fail(err, "no query given");
    int nk = in->keys.rows, dk = in->keys.cols, nq = in->query.rows, dq = in->query.cols;
    const char *name = rs_attention_kind_name(in->score);
    if (given(&in->values) && in->values.rows != nk)
        return rs_fail(err, "there are %d values but %d keys (one value per key, one per row)",
                       in->values.rows, nk);
    if (in->score != RS_ATT_GENERAL && given(&in->W))
        return rs_fail(err, "the weights W are used by the general score only, not %s", name);
    if (in->score != RS_ATT_ADDITIVE &&
        (given(&in->Wq) || given(&in->Wk) || given(&in->v) || given(&in->b)))
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
        if (!given(&in->W))
            return rs_fail(err, "the general score q^T W k needs the weights W (%d x %d)", dq, dk);
        if (in->W.rows != dq || in->W.cols != dk)
            return rs_fail(err, "W is %d x %d but q^T W k needs %d x %d (query size x key size)",
                           in->W.rows, in->W.cols, dq, dk);
        break;
    case RS_ATT_ADDITIVE: {
        if (!given(&in->Wq) || !given(&in->Wk) || !given(&in->v))
            return rs_fail(err, "the additive score v . tanh(Wq q + Wk k) needs Wq, Wk and v");
        int a = in->Wq.rows;
        if (in->Wq.cols != dq)
            return rs_fail(err, "Wq is %d x %d but must have %d columns (the query size)",
                           in->Wq.rows, in->Wq.cols, dq);
        if (in->Wk.cols != dk)
            return rs_fail(err, "Wk is %d x %d but must have %d columns (the key size)",
                           in->Wk.rows, in->Wk.cols, dk);
        if (in->Wk.rows != a)
            return rs_fail(err,
                           "Wq is %d x %d and Wk %d x %d: both need a rows (the attention "
                           "size)",
                           a, dq, in->Wk.rows, dk);
        if (vec_len(&in->v) != a)
            return rs_fail(err, "v must be a vector of %d numbers (the rows of Wq), not %d x %d", a,
                           in->v.rows, in->v.cols);
        if (given(&in->b) && vec_len(&in->b) != a)
            return rs_fail(err, "b must be a vector of %d numbers (the rows of Wq), not %d x %d", a,
                           in->b.rows, in->b.cols);
        break;
    }
    }

    if (given(&in->mask)) {
        const rs_matrix *m = &in->mask;
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
    }
    return 0;
}

void rs_explain_result_free(rs_explain_result *res)
{
    double *all[] = {res->raw,     res->scores, res->max, res->exps, res->sums, res->weights,
                     res->context, res->output, res->qW,  res->wq,   res->wk,   res->hidden};
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
    const int nq = res->nq, nk = res->nk, dq = res->dq, dk = res->dk, dv = res->dv, a = res->a;
    const size_t qk = (size_t)nq * (size_t)nk;
    res->raw = rs_calloc(qk, sizeof *res->raw, err);
    res->scores = rs_calloc(qk, sizeof *res->scores, err);
    res->keep = rs_calloc(qk, sizeof *res->keep, err);
    res->max = rs_calloc((size_t)nq, sizeof *res->max, err);
    res->exps = rs_calloc(qk, sizeof *res->exps, err);
    res->sums = rs_calloc((size_t)nq, sizeof *res->sums, err);
    res->weights = rs_calloc(qk, sizeof *res->weights, err);
    res->context = rs_calloc((size_t)nq * (size_t)dv, sizeof *res->context, err);
    res->output = rs_calloc((size_t)nq * (size_t)(dq + dv), sizeof *res->output, err);
    int ok = res->raw && res->scores && res->keep && res->max && res->exps && res->sums &&
             res->weights && res->context && res->output;
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
                double s = given(&in->b) ? in->b.v[t] : 0.0;
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
        given(&in->mask) ? in->mask.v + (size_t)(in->mask.rows == 1 ? 0 : i) * nk : NULL;
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
 * c_i = Σ_j α_ij v_j and the output [qᵢ ; cᵢ]. */
static void softmax_and_context(rs_explain_result *res, const rs_explain_input *in,
                                const rs_matrix *V, int i)
{
    const int nk = res->nk, dq = res->dq, dv = res->dv;
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
    double *out = res->output + (size_t)i * (dq + dv);
    memcpy(out, in->query.v + (size_t)i * dq, (size_t)dq * sizeof *out);
    memcpy(out + dq, c, (size_t)dv * sizeof *out);
}

int rs_explain_compute(rs_explain_result *res, const rs_explain_input *in, rs_error *err)
{
    memset(res, 0, sizeof *res);
    if (rs_explain_check(in, err) < 0)
        return -1;
    const rs_matrix *V = given(&in->values) ? &in->values : &in->keys;
    res->nq = in->query.rows, res->nk = in->keys.rows, res->dq = in->query.cols;
    res->dk = in->keys.cols, res->dv = V->cols;
    res->a = in->score == RS_ATT_ADDITIVE ? in->Wq.rows : 0;
    if (result_alloc(res, in->score, err))
        return -1;
    res->divisor = in->scale || in->score == RS_ATT_SCALED_DOT ? sqrt((double)res->dk) : 1.0;
    project(res, in);
    for (int i = 0; i < res->nq; i++) {
        res->max[i] = score_row(res, in, i);
        softmax_and_context(res, in, V, i);
    }
    return 0;
}

/* ---- the report -------------------------------------------------------- */

/* Expansions like "1.0000*2.0000 + ..." are written out up to this many terms. */
#define MAX_TERMS 8

typedef struct {
    char *p;
    size_t len, cap;
    int failed;
    int digits;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_printf(sbuf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = 1;
            return;
        }
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = 2 * b->cap + (size_t)n + 1;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
}

/* A number as printed: fixed decimals, no "-0.0000", infinities spelled out. */
static const char *num(char out[64], double x, int digits)
{
    if (isinf(x))
        return x < 0 ? "-inf" : "inf";
    if (isnan(x))
        return "nan";
    snprintf(out, 64, "%.*f", digits, x);
    if (out[0] == '-' && strspn(out + 1, "0.") == strlen(out + 1))
        memmove(out, out + 1, strlen(out));
    return out;
}

static void sb_num(sbuf *b, double x)
{
    char t[64];
    sb_printf(b, "%s", num(t, x, b->digits));
}

/* A factor in a product: negative numbers in parentheses. */
static void sb_factor(sbuf *b, double x)
{
    char t[64];
    const char *s = num(t, x, b->digits);
    sb_printf(b, s[0] == '-' ? "(%s)" : "%s", s);
}

static void sb_vec(sbuf *b, const double *x, int n)
{
    sb_printf(b, "(");
    for (int i = 0; i < n; i++) {
        if (i)
            sb_printf(b, ", ");
        sb_num(b, x[i]);
    }
    sb_printf(b, ")");
}

/* x1*y1 + x2*y2 + ... = */
static void sb_products(sbuf *b, const double *x, const double *y, int n)
{
    if (n > MAX_TERMS)
        return;
    for (int i = 0; i < n; i++) {
        if (i)
            sb_printf(b, " + ");
        sb_factor(b, x[i]);
        sb_printf(b, "*");
        sb_factor(b, y[i]);
    }
    sb_printf(b, " = ");
}

/* Rows of a matrix, columns right-aligned; `keep` (optional) marks entries to
 * print, others print as "-inf"; `extra` (optional) adds a column after a bar. */
static void sb_matrix(sbuf *b, const char *title, const double *x, int rows, int cols,
                      const int *keep, const double *extra, const char *extra_name)
{
    char t[64];
    int width = 1, ewidth = extra_name ? (int)strlen(extra_name) : 0;
    for (int i = 0; i < rows * cols; i++) {
        int w = (int)strlen(keep && !keep[i] ? "-inf" : num(t, x[i], b->digits));
        if (w > width)
            width = w;
    }
    for (int i = 0; extra && i < rows; i++) {
        int w = (int)strlen(num(t, extra[i], b->digits));
        if (w > ewidth)
            ewidth = w;
    }
    sb_printf(b, "%s (%d x %d):\n", title, rows, cols);
    if (extra_name) {
        sb_printf(b, "   %*s", cols * (width + 2) - 2, "");
        sb_printf(b, " | %*s\n", ewidth, extra_name);
    }
    for (int r = 0; r < rows; r++) {
        sb_printf(b, "  ");
        for (int c = 0; c < cols; c++) {
            int i = r * cols + c;
            sb_printf(b, " %*s", width + (c ? 1 : 0),
                      keep && !keep[i] ? "-inf" : num(t, x[i], b->digits));
        }
        if (extra)
            sb_printf(b, " | %*s", ewidth, num(t, extra[r], b->digits));
        sb_printf(b, "\n");
    }
}

static void header(sbuf *b, const rs_explain_input *in, const rs_explain_result *res)
{
    sb_printf(b, "attention step: %s score%s, %d quer%s of size %d, %d key%s of size %d, ",
              rs_attention_kind_name(in->score),
              in->scale && in->score != RS_ATT_SCALED_DOT ? " scaled by 1/sqrt(dk)" : "", res->nq,
              res->nq == 1 ? "y" : "ies", res->dq, res->nk, res->nk == 1 ? "" : "s", res->dk);
    if (given(&in->values))
        sb_printf(b, "values of size %d\n", res->dv);
    else
        sb_printf(b, "values = the keys\n");
    if (in->score == RS_ATT_ADDITIVE)
        sb_printf(b, "attention size a = %d%s\n", res->a, given(&in->b) ? "" : ", no bias b");
}

static void score_formula(sbuf *b, const rs_explain_input *in, const char *e)
{
    switch (in->score) {
    case RS_ATT_DOT:
    case RS_ATT_SCALED_DOT: sb_printf(b, "%s = q . k_j", e); break;
    case RS_ATT_GENERAL: sb_printf(b, "%s = q^T W k_j", e); break;
    case RS_ATT_ADDITIVE:
        sb_printf(b, "%s = v . tanh(Wq q + Wk k_j%s)", e, given(&in->b) ? " + b" : "");
        break;
    }
}

/* The query, keys, values and weights of the problem. */
static void report_inputs(sbuf *b, const rs_explain_input *in, const rs_explain_result *res)
{
    const int nk = res->nk, dq = res->dq, dk = res->dk, dv = res->dv;
    const double *q = in->query.v;
    const rs_matrix *V = given(&in->values) ? &in->values : &in->keys;
    header(b, in, res);
    sb_printf(b, "\nquery  q = ");
    sb_vec(b, q, dq);
    sb_printf(b, "\n");
    for (int j = 0; j < nk; j++) {
        sb_printf(b, "key    k_%d = ", j + 1);
        sb_vec(b, in->keys.v + (size_t)j * dk, dk);
        if (given(&in->values)) {
            sb_printf(b, "    value v_%d = ", j + 1);
            sb_vec(b, V->v + (size_t)j * dv, dv);
        }
        if (!res->keep[j])
            sb_printf(b, "    (hidden by the mask)");
        sb_printf(b, "\n");
    }
    if (in->score == RS_ATT_GENERAL) {
        sb_printf(b, "W (%d x %d):\n", dq, dk);
        for (int r = 0; r < dq; r++) {
            sb_printf(b, "  ");
            sb_vec(b, in->W.v + (size_t)r * dk, dk);
            sb_printf(b, "\n");
        }
    }
}

/* 1. Each key's score e_j, with every product written out. */
static void report_scores(sbuf *b, const rs_explain_input *in, const rs_explain_result *res)
{
    const int nk = res->nk, dk = res->dk, a = res->a;
    const double *q = in->query.v;
    const int scaled = res->divisor != 1.0;
    char t[64];
    sb_printf(b, "\n1. scores  ");
    score_formula(b, in, scaled ? "r_j" : "e_j");
    if (scaled)
        sb_printf(b, ",  e_j = r_j / sqrt(%d) = r_j / %s", dk, num(t, res->divisor, b->digits));
    sb_printf(b, "\n");
    if (in->score == RS_ATT_GENERAL) {
        sb_printf(b, "   q^T W = ");
        sb_vec(b, res->qW, dk);
        sb_printf(b, "   (entry c is sum_i q_i W_ic)\n");
    }
    if (in->score == RS_ATT_ADDITIVE) {
        sb_printf(b, "   Wq q%s = ", given(&in->b) ? " + b" : "");
        sb_vec(b, res->wq, a);
        sb_printf(b, "\n   v = ");
        sb_vec(b, in->v.v, a);
        sb_printf(b, "\n");
    }
    for (int j = 0; j < nk; j++) {
        const double *k = in->keys.v + (size_t)j * dk;
        const char *r = scaled ? "r" : "e";
        if (in->score == RS_ATT_ADDITIVE) {
            const double *h = res->hidden + (size_t)j * a;
            sb_printf(b, "   Wk k_%d = ", j + 1);
            sb_vec(b, res->wk + (size_t)j * a, a);
            sb_printf(b, "\n   h_%d = tanh(Wq q%s + Wk k_%d) = tanh", j + 1,
                      given(&in->b) ? " + b" : "", j + 1);
            sb_printf(b, "(");
            for (int u = 0; u < a; u++) {
                sb_printf(b, u ? ", " : "");
                sb_num(b, res->wq[u] + res->wk[(size_t)j * a + u]);
            }
            sb_printf(b, ") = ");
            sb_vec(b, h, a);
            sb_printf(b, "\n   %s_%d = v . h_%d = ", r, j + 1, j + 1);
            sb_products(b, in->v.v, h, a);
        } else {
            sb_printf(b, "   %s_%d = ", r, j + 1);
            sb_products(b, in->score == RS_ATT_GENERAL ? res->qW : q, k, dk);
        }
        sb_num(b, res->raw[j]);
        if (!res->keep[j]) {
            sb_printf(b, "   hidden by the mask: e_%d = -inf\n", j + 1);
            continue;
        }
        if (scaled) {
            sb_printf(b, "   e_%d = ", j + 1);
            sb_num(b, res->raw[j]);
            sb_printf(b, " / %s = ", num(t, res->divisor, b->digits));
            sb_num(b, res->raw[j] / res->divisor);
        }
        sb_printf(b, "\n");
    }
}

/* 2. x_j = exp(e_j - m) and their sum. */
static void report_exponentials(sbuf *b, const rs_explain_input *in, const rs_explain_result *res)
{
    const int nk = res->nk;
    char t[64];
    sb_printf(b, "\n2. exponentials  x_j = exp(e_j - m),  m = max_j e_j = %s%s\n",
              num(t, res->max[0], b->digits), given(&in->mask) ? " over the visible keys" : "");
    sb_printf(b, "   (subtracting m changes no weight and keeps exp from overflowing)\n");
    for (int j = 0; j < nk; j++) {
        sb_printf(b, "   x_%d = ", j + 1);
        if (!res->keep[j]) {
            sb_printf(b, "0   (hidden by the mask)\n");
            continue;
        }
        sb_printf(b, "exp(");
        sb_num(b, res->scores[j]);
        sb_printf(b, " - ");
        sb_factor(b, res->max[0]);
        sb_printf(b, ") = exp(");
        sb_num(b, res->scores[j] - res->max[0]);
        sb_printf(b, ") = ");
        sb_num(b, res->exps[j]);
        sb_printf(b, "\n");
    }
    sb_printf(b, "   sum s = ");
    if (nk <= MAX_TERMS) {
        int first = 1;
        for (int j = 0; j < nk; j++) {
            if (!res->keep[j])
                continue;
            sb_printf(b, first ? "" : " + ");
            sb_num(b, res->exps[j]);
            first = 0;
        }
        sb_printf(b, " = ");
    }
    sb_num(b, res->sums[0]);
    sb_printf(b, "\n");
    /* The textbook form exp(e_j) / sum_k exp(e_k), when its numbers stay readable. */
    double plain_sum = 0.0;
    for (int j = 0; j < nk; j++)
        if (res->keep[j])
            plain_sum += exp(res->scores[j]);
    if (plain_sum < 1e12 && plain_sum > 1e-12 && nk <= MAX_TERMS) {
        sb_printf(b, "   (without subtracting m: ");
        for (int j = 0; j < nk; j++) {
            if (!res->keep[j])
                continue;
            sb_printf(b, "exp(e_%d) = ", j + 1);
            sb_num(b, exp(res->scores[j]));
            sb_printf(b, ", ");
        }
        sb_printf(b, "sum ");
        sb_num(b, plain_sum);
        sb_printf(b, ": the same weights)\n");
    }
}

/* 3. The weights a_j = x_j / s. */
static void report_weights(sbuf *b, const rs_explain_input *in, const rs_explain_result *res)
{
    const int nk = res->nk;
    sb_printf(b, "\n3. weights (softmax)  a_j = x_j / s\n");
    for (int j = 0; j < nk; j++) {
        sb_printf(b, "   a_%d = ", j + 1);
        if (!res->keep[j]) {
            sb_printf(b, "0 exactly   (hidden by the mask)\n");
            continue;
        }
        sb_num(b, res->exps[j]);
        sb_printf(b, " / ");
        sb_num(b, res->sums[0]);
        sb_printf(b, " = ");
        sb_num(b, res->weights[j]);
        sb_printf(b, "\n");
    }
    sb_printf(b, "   weights a = ");
    sb_vec(b, res->weights, nk);
    sb_printf(b, "\n");
}

/* 4. The context c = sum_j a_j v_j, and 5. the output [q ; c]. */
static void report_context(sbuf *b, const rs_explain_input *in, const rs_explain_result *res)
{
    const int nk = res->nk, dq = res->dq, dv = res->dv;
    const rs_matrix *V = given(&in->values) ? &in->values : &in->keys;
    sb_printf(b, "\n4. context  c = sum_j a_j v_j%s\n", given(&in->values) ? "" : "  (v_j = k_j)");
    if (nk <= MAX_TERMS) {
        sb_printf(b, "   c = ");
        for (int j = 0; j < nk; j++) {
            if (j)
                sb_printf(b, " + ");
            sb_factor(b, res->weights[j]);
            sb_printf(b, "*");
            sb_vec(b, V->v + (size_t)j * dv, dv);
        }
        sb_printf(b, "\n     = ");
    } else {
        sb_printf(b, "   c = ");
    }
    sb_vec(b, res->context, dv);
    sb_printf(b, "\n");

    sb_printf(b, "\n5. output  [q ; c] = ");
    sb_vec(b, res->output, dq + dv);
    sb_printf(b, "\n");
}

/* One query worked through, step by step. */
static void report_one(sbuf *b, const rs_explain_input *in, const rs_explain_result *res)
{
    report_inputs(b, in, res);
    report_scores(b, in, res);
    report_exponentials(b, in, res);
    report_weights(b, in, res);
    report_context(b, in, res);
}

static void report_matrix(sbuf *b, const rs_explain_input *in, const rs_explain_result *res)
{
    int nq = res->nq, nk = res->nk, dq = res->dq, dk = res->dk, dv = res->dv, a = res->a;
    char t[64];

    header(b, in, res);
    sb_printf(b, "\n");
    sb_matrix(b, "Q, one query per row", in->query.v, nq, dq, NULL, NULL, NULL);
    sb_matrix(b, "K, one key per row", in->keys.v, nk, dk, NULL, NULL, NULL);
    if (given(&in->values))
        sb_matrix(b, "V, one value per row", in->values.v, nk, dv, NULL, NULL, NULL);
    if (given(&in->mask)) {
        int digits = b->digits;
        b->digits = 0;
        sb_matrix(b, "mask, 1 keep 0 hide", in->mask.v, in->mask.rows, nk, NULL, NULL, NULL);
        b->digits = digits;
    }
    if (in->score == RS_ATT_GENERAL)
        sb_matrix(b, "W", in->W.v, dq, dk, NULL, NULL, NULL);
    if (in->score == RS_ATT_ADDITIVE) {
        sb_matrix(b, "Wq", in->Wq.v, a, dq, NULL, NULL, NULL);
        sb_matrix(b, "Wk", in->Wk.v, a, dk, NULL, NULL, NULL);
        sb_printf(b, "v = ");
        sb_vec(b, in->v.v, a);
        sb_printf(b, "\n");
        if (given(&in->b)) {
            sb_printf(b, "b = ");
            sb_vec(b, in->b.v, a);
            sb_printf(b, "\n");
        }
    }

    sb_printf(b, "\n1. scores  ");
    switch (in->score) {
    case RS_ATT_DOT:
    case RS_ATT_SCALED_DOT: sb_printf(b, "S = Q K^T"); break;
    case RS_ATT_GENERAL: sb_printf(b, "S = (Q W) K^T"); break;
    case RS_ATT_ADDITIVE:
        sb_printf(b, "S_ij = v . tanh(Wq q_i%s + Wk k_j)", given(&in->b) ? " + b" : "");
        break;
    }
    if (res->divisor != 1.0)
        sb_printf(b, " / sqrt(%d) (= %s)", dk, num(t, res->divisor, b->digits));
    if (given(&in->mask))
        sb_printf(b, ", -inf where the mask hides a key");
    sb_printf(b, "\n");
    if (in->score == RS_ATT_GENERAL)
        sb_matrix(b, "Q W", res->qW, nq, dk, NULL, NULL, NULL);
    if (in->score == RS_ATT_ADDITIVE) {
        sb_matrix(b, given(&in->b) ? "Wq q_i + b, one query per row" : "Wq q_i, one query per row",
                  res->wq, nq, a, NULL, NULL, NULL);
        sb_matrix(b, "Wk k_j, one key per row", res->wk, nk, a, NULL, NULL, NULL);
    }
    sb_matrix(b, "S", res->scores, nq, nk, res->keep, NULL, NULL);

    sb_printf(b, "\n2. exponentials  X_ij = exp(S_ij - m_i),  m_i = max_j S_ij (row maximum)\n");
    sb_printf(b, "   (subtracting m_i changes no weight and keeps exp from overflowing)\n");
    sb_printf(b, "   m = ");
    sb_vec(b, res->max, nq);
    sb_printf(b, "\n");
    sb_matrix(b, "X, with row sums s_i", res->exps, nq, nk, NULL, res->sums, "s_i");

    sb_printf(b, "\n3. weights (row-wise softmax)  A_ij = X_ij / s_i\n");
    sb_matrix(b, "A", res->weights, nq, nk, NULL, NULL, NULL);

    sb_printf(b, "\n4. context  C = A V%s\n", given(&in->values) ? "" : "  (V = K)");
    sb_matrix(b, "C, one context per query", res->context, nq, dv, NULL, NULL, NULL);

    sb_printf(b, "\n5. output  [Q C], each query followed by its context\n");
    sb_matrix(b, "[Q C]", res->output, nq, dq + dv, NULL, NULL, NULL);
}

int rs_explain_report(const rs_explain_input *in, const rs_explain_result *res, int digits,
                      char **text, rs_error *err)
{
    *text = NULL;
    if (digits < 0 || digits > 17)
        return rs_fail(err, "digits must be 0 to 17, not %d", digits);
    sbuf b = {NULL, 0, 0, 0, digits};
    b.p = malloc(4096);
    if (!b.p)
        return rs_fail(err, "out of memory writing the explanation");
    b.cap = 4096;
    b.p[0] = '\0';
    if (res->nq == 1)
        report_one(&b, in, res);
    else
        report_matrix(&b, in, res);
    if (b.failed) {
        free(b.p);
        return rs_fail(err, "out of memory writing the explanation");
    }
    *text = b.p;
    return 0;
}
