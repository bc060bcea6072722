/* One attention step worked through in double precision, with every
 * intermediate kept, so that `rnnsearch explain` can print numbers a person can
 * check by hand.
 *
 * Shapes: nq queries of size dq, nk keys of size dk, nk values of size dv
 * (the keys themselves unless given), a = attention size (additive only).
 * Matrices are row-major [rows, cols] and map column vectors, y = W x, as in
 * docs/model.md. For query q and key k_j:
 *
 *   dot         e_j = q . k_j                     (dq == dk)
 *   scaled-dot  e_j = q . k_j / sqrt(dk)
 *   general     e_j = q^T W k_j                   W: [dq, dk]
 *   additive    e_j = v . tanh(Wq q + Wk k_j + b) Wq: [a, dq], Wk: [a, dk], v, b: [a]
 *                                                 (b optional; Bahdanau's alignment model)
 *
 * `scale` divides any score by sqrt(dk) (scaled-dot is dot with it on). Then,
 * per query, with masked keys left out (their weight is exactly 0):
 *
 *   m = max_j e_j,  x_j = exp(e_j - m),  s = sum_j x_j,  a_j = x_j / s
 *   c = sum_j a_j v_j
 *
 * and, when its weights are given, the model's deep output (docs/model.md;
 * not Luong's [q ; c], which no model here computes), with s the new decoder
 * state (--state; the query when not given) and e the previous word's
 * embedding: t~ = U_o s + V_o e + C_o c + b_o [2l], t[k] = max(t~[2k], t~[2k+1]).
 * Terms whose weights are not given are left out.
 *
 * Subtracting m leaves the weights unchanged and keeps exp from overflowing. */
#ifndef RS_EXPLAIN_H
#define RS_EXPLAIN_H

#include "common/error.h"
#include "model/params.h"

typedef struct {
    int rows, cols;
    double *v; /* [rows, cols], owned; rows == 0: not given */
} rs_matrix;

/* Parses "1,0;0,1;1,1": rows separated by ';', numbers by ','. Every row must
 * have the same count; numbers must be finite. On failure m is empty. */
int rs_matrix_parse(rs_matrix *m, const char *text, rs_error *err);
void rs_matrix_free(rs_matrix *m);
/* Whether m was given (an optional input left out has no rows). */
int rs_matrix_given(const rs_matrix *m);


/* The problem. Matrices not given have rows == 0. Owned by whoever filled it. */
typedef struct {
    rs_attention_kind score; /* the model's attention kinds (model/params.h) */
    int scale;               /* divide scores by sqrt(dk) */
    rs_matrix keys;          /* [nk, dk] */
    rs_matrix values;        /* [nk, dv], or not given: the keys */
    rs_matrix query;         /* [nq, dq] */
    rs_matrix mask;          /* [1 or nq, nk] of 0 (hide) and 1 (keep), or not given */
    rs_matrix W;             /* general: [dq, dk] */
    rs_matrix Wq;            /* additive: [a, dq] */
    rs_matrix Wk;            /* additive: [a, dk] */
    rs_matrix v;             /* additive: a numbers (one row or one column) */
    rs_matrix b;             /* additive: a numbers, or not given (zero) */
    /* the deep output (optional): C_o [2l, dv], U_o [2l, ds], V_o [2l, de], b_o [2l] */
    rs_matrix state; /* [1 or nq, ds] s_i; not given: the queries */
    rs_matrix emb;   /* [1 or nq, de] the previous word's embedding (with V_o) */
    rs_matrix Uo, Vo, Co, bo;
} rs_explain_input;

void rs_explain_input_free(rs_explain_input *in);

/* Every intermediate of the step; buffers owned, freed by rs_explain_result_free. */
typedef struct {
    int nq, nk, dq, dk, dv, a;
    double divisor;  /* 1, or sqrt(dk) when scaled */
    double *raw;     /* [nq, nk] scores before the division */
    double *scores;  /* [nq, nk] e = raw / divisor; -INFINITY where masked */
    int *keep;       /* [nq, nk] 1 = key visible to this query */
    double *max;     /* [nq] m, the largest visible score */
    double *exps;    /* [nq, nk] exp(e - m); 0 where masked */
    double *sums;    /* [nq] */
    double *weights; /* [nq, nk] softmax; exactly 0 where masked */
    double *context; /* [nq, dv] */
    int l;           /* maxout units; 0: no deep output given */
    double *tpre;    /* [nq, 2l] t~ */
    double *tmax;    /* [nq, l] t = maxout(t~) */
    double *qW;      /* general: [nq, dk] q^T W */
    double *wq;      /* additive: [nq, a] Wq q + b */
    double *wk;      /* additive: [nk, a] Wk k_j */
    double *hidden;  /* additive: [nq, nk, a] tanh(Wq q + Wk k_j + b) */
} rs_explain_result;

/* Checks shapes and values (ragged or missing matrices, size mismatches, a
 * mask that hides every key of a query): a failure here is bad input. */
int rs_explain_check(const rs_explain_input *in, rs_error *err);

/* Runs rs_explain_check, then computes every intermediate into res. */
int rs_explain_compute(rs_explain_result *res, const rs_explain_input *in, rs_error *err);
void rs_explain_result_free(rs_explain_result *res);

/* The walk-through as text (malloc'd in *text), numbers with `digits` decimals:
 * step by step for one query, in matrix form for several. */
int rs_explain_report(const rs_explain_input *in, const rs_explain_result *res, int digits,
                      char **text, rs_error *err);

#endif
