/* The report of one attention step worked by hand (see explain.h): every
 * intermediate of rs_explain_compute as text, one section per stage
 * (inputs, scores, exponentials, weights, context), at the digits asked for.
 * Shapes as in explain.h: nq queries [dq], nk keys [dk], values [dv], a. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/explain.h"

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
    /* Fixed point while it fits the page; a number of 1e15 or more (or one
     * that fixed point would show as 0) in exponent form, all its digits kept. */
    if (fabs(x) >= 1e15 || (x != 0 && fabs(x) < 0.5 * pow(10.0, -digits)))
        snprintf(out, 64, "%.*e", digits, x);
    else
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
    if (rs_matrix_given(&in->values))
        sb_printf(b, "values of size %d\n", res->dv);
    else
        sb_printf(b, "values = the keys\n");
    if (in->score == RS_ATT_ADDITIVE)
        sb_printf(b, "attention size a = %d%s\n", res->a,
                  rs_matrix_given(&in->b) ? "" : ", no bias b");
}

static void score_formula(sbuf *b, const rs_explain_input *in, const char *e)
{
    switch (in->score) {
    case RS_ATT_DOT:
    case RS_ATT_SCALED_DOT: sb_printf(b, "%s = q . k_j", e); break;
    case RS_ATT_GENERAL: sb_printf(b, "%s = q^T W k_j", e); break;
    case RS_ATT_ADDITIVE:
        sb_printf(b, "%s = v . tanh(Wq q + Wk k_j%s)", e, rs_matrix_given(&in->b) ? " + b" : "");
        break;
    case RS_ATT_NONE: break; /* no scores: rs_explain_check refuses it */
    }
}

/* The query, keys, values and weights of the problem. */
static void report_inputs(sbuf *b, const rs_explain_input *in, const rs_explain_result *res)
{
    const int nk = res->nk, dq = res->dq, dk = res->dk, dv = res->dv;
    const double *q = in->query.v;
    const rs_matrix *V = rs_matrix_given(&in->values) ? &in->values : &in->keys;
    header(b, in, res);
    sb_printf(b, "\nquery  q = ");
    sb_vec(b, q, dq);
    sb_printf(b, "\n");
    for (int j = 0; j < nk; j++) {
        sb_printf(b, "key    k_%d = ", j + 1);
        sb_vec(b, in->keys.v + (size_t)j * dk, dk);
        if (rs_matrix_given(&in->values)) {
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
        sb_printf(b, "   Wq q%s = ", rs_matrix_given(&in->b) ? " + b" : "");
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
                      rs_matrix_given(&in->b) ? " + b" : "", j + 1);
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
              num(t, res->max[0], b->digits),
              rs_matrix_given(&in->mask) ? " over the visible keys" : "");
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

/* 5. The model's deep output from the context (docs/model.md), when its
 * weights are given; else what it would be. Never Luong's [q ; c]. */
static void report_readout(sbuf *b, const rs_explain_input *in, const rs_explain_result *res)
{
    const int l = res->l, nq = res->nq;
    sb_printf(b, "\n5. deep output (docs/model.md)  t~ = U_o s + V_o e + C_o c + b_o,  "
                 "t[k] = max(t~[2k], t~[2k+1])\n");
    if (!l) {
        sb_printf(b,
                  "   not computed: give --Co (2l x %d) and optionally --Uo, --Vo with --emb, "
                  "--bo.\n   The model reads c through this maxout layer (s: the new decoder "
                  "state s_i, e: the previous word's embedding), not as [q ; c];\n   "
                  "`rnnsearch explain -m MODEL` works a trained model's step whole.\n",
                  res->dv);
        return;
    }
    sb_printf(b, "   s = %s; terms computed:%s%s%s%s\n",
              rs_matrix_given(&in->state) ? "--state" : "the query (no --state given)",
              rs_matrix_given(&in->Uo) ? " U_o s" : "", rs_matrix_given(&in->Vo) ? " V_o e" : "",
              rs_matrix_given(&in->Co) ? " C_o c" : "", rs_matrix_given(&in->bo) ? " b_o" : "");
    for (int i = 0; i < nq; i++) {
        if (nq > 1)
            sb_printf(b, "   query %d:\n", i + 1);
        sb_printf(b, "   t~ = ");
        sb_vec(b, res->tpre + (size_t)i * 2 * l, 2 * l);
        sb_printf(b, "\n   t  = ");
        sb_vec(b, res->tmax + (size_t)i * l, l);
        sb_printf(b, "   (max of each pair: ");
        for (int k = 0; k < l && k < MAX_TERMS; k++) {
            const double *tp = res->tpre + (size_t)i * 2 * l + 2 * k;
            sb_printf(b, k ? ", max(" : "max(");
            sb_num(b, tp[0]);
            sb_printf(b, ", ");
            sb_num(b, tp[1]);
            sb_printf(b, ")");
        }
        sb_printf(b, "%s)\n", l > MAX_TERMS ? ", ..." : "");
    }
}

/* 4. The context c = sum_j a_j v_j. */
static void report_context(sbuf *b, const rs_explain_input *in, const rs_explain_result *res)
{
    const int nk = res->nk, dv = res->dv;
    const rs_matrix *V = rs_matrix_given(&in->values) ? &in->values : &in->keys;
    sb_printf(b, "\n4. context  c = sum_j a_j v_j%s\n",
              rs_matrix_given(&in->values) ? "" : "  (v_j = k_j)");
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
    report_readout(b, in, res);
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
    if (rs_matrix_given(&in->values))
        sb_matrix(b, "V, one value per row", in->values.v, nk, dv, NULL, NULL, NULL);
    if (rs_matrix_given(&in->mask)) {
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
        if (rs_matrix_given(&in->b)) {
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
        sb_printf(b, "S_ij = v . tanh(Wq q_i%s + Wk k_j)", rs_matrix_given(&in->b) ? " + b" : "");
        break;
    case RS_ATT_NONE: break; /* refused by rs_explain_check */
    }
    if (res->divisor != 1.0)
        sb_printf(b, " / sqrt(%d) (= %s)", dk, num(t, res->divisor, b->digits));
    if (rs_matrix_given(&in->mask))
        sb_printf(b, ", -inf where the mask hides a key");
    sb_printf(b, "\n");
    if (in->score == RS_ATT_GENERAL)
        sb_matrix(b, "Q W", res->qW, nq, dk, NULL, NULL, NULL);
    if (in->score == RS_ATT_ADDITIVE) {
        sb_matrix(b,
                  rs_matrix_given(&in->b) ? "Wq q_i + b, one query per row"
                                          : "Wq q_i, one query per row",
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

    sb_printf(b, "\n4. context  C = A V%s\n", rs_matrix_given(&in->values) ? "" : "  (V = K)");
    sb_matrix(b, "C, one context per query", res->context, nq, dv, NULL, NULL, NULL);

    report_readout(b, in, res);
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
