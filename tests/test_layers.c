/* Each layer's backward pass against central finite differences, with the
 * loss L = Σ out ⊙ W for a fixed random W (so that a permuted gradient fails),
 * and the attention core against known answers. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "gradcheck.h"
#include "gru.h"
#include "model.h"
#include "readout.h"

/* float32 forward passes: the loss carries ~1e-6 absolute rounding noise, so a
 * central difference with h = 1e-2 is good to ~1e-4; gradients below FLOOR are
 * compared in absolute terms. */
#define TOL 2e-3
#define FLOOR 1e-2

static void expect_close(const char *what, gradcheck_result r, double tol)
{
    if (r.worst > tol || r.non_finite)
        fprintf(stderr, "%s: worst error %.3g at %zu (analytic %.6g, numeric %.6g)\n", what,
                r.worst, r.worst_index, r.analytic, r.numeric);
    ck_assert_msg(!r.non_finite, "%s: non-finite value", what);
    ck_assert_msg(r.checked > 0, "%s: nothing checked", what);
    ck_assert_msg(r.worst <= tol, "%s: worst relative error %.3g > %.3g", what, r.worst, tol);
}

static double weighted_sum(const float *x, const float *w, size_t count)
{
    double s = 0.0;
    for (size_t i = 0; i < count; i++)
        s += (double)x[i] * w[i];
    return s;
}

/* ---- GRU step ---- */

enum { GB = 3, GN = 4 };
typedef struct {
    float h_prev[GB * GN], x_proj[GB * 3 * GN], U[3 * GN * GN], mask[GB];
    float h[GB * GN], gates[GB * 3 * GN], r_h[GB * GN], weight[GB * GN];
} gru_case;

static double gru_loss(void *p)
{
    gru_case *c = p;
    gru_step_forward(c->h, c->gates, c->r_h, c->h_prev, c->x_proj, c->U, c->mask, GB, GN);
    return weighted_sum(c->h, c->weight, GB * GN);
}

START_TEST(gru_step_matches_finite_differences)
{
    gru_case c;
    fill_uniform(c.h_prev, GB * GN, 0.8f, 1);
    fill_uniform(c.x_proj, GB * 3 * GN, 1.0f, 2);
    fill_uniform(c.U, 3 * GN * GN, 0.7f, 3);
    fill_uniform(c.weight, GB * GN, 1.0f, 4);
    c.mask[0] = 1.0f, c.mask[1] = 0.0f, c.mask[2] = 1.0f; /* row 1 carries its state */
    gru_loss(&c);
    float dh_prev[GB * GN] = {0}, dpre[GB * 3 * GN], dU[3 * GN * GN] = {0}, db[3 * GN] = {0};
    float scratch[GB * GN];
    gru_step_backward(dh_prev, dpre, c.weight, c.gates, c.h_prev, c.U, c.mask, GB, GN, scratch);
    gru_recurrent_backward(dU, db, dpre, c.h_prev, c.r_h, GB, GN);
    expect_close("gru dh_prev", gradcheck(gru_loss, &c, c.h_prev, dh_prev, GB * GN, 100, 1e-2f, FLOOR), TOL);
    expect_close("gru dx_proj", gradcheck(gru_loss, &c, c.x_proj, dpre, GB * 3 * GN, 100, 1e-2f, FLOOR), TOL);
    expect_close("gru dU", gradcheck(gru_loss, &c, c.U, dU, 3 * GN * GN, 100, 1e-2f, FLOOR), TOL);
    /* The bias adds to x_proj: its gradient is the column sum of dpre. */
    for (int k = 0; k < 3 * GN; k++) {
        float sum = 0.0f;
        for (int b = 0; b < GB; b++)
            sum += dpre[b * 3 * GN + k];
        ck_assert_float_eq_tol(db[k], sum, 1e-6f);
    }
    /* A masked row passes its gradient straight through. */
    for (int k = 0; k < GN; k++)
        ck_assert_float_eq_tol(dh_prev[GN + k], c.weight[GN + k], 1e-7f);
}
END_TEST

/* ---- attention ---- */

enum { AB = 2, AS = 4, AN = 3, AA = 5 };
typedef struct {
    int kind;
    float query[AB * AN], annotations[AS * AB * 2 * AN], keys[AS * AB * AA];
    float W_a[AA * AN], v_a[AA];
    float alpha[AB * AS], context[AB * 2 * AN], hidden[AB * AS * AA], query_proj[AB * AA];
    float weight[AB * 2 * AN];
    int src_len[AB];
} att_case;

static double att_loss(void *p)
{
    att_case *c = p;
    attention_forward(c->kind, c->alpha, c->context, c->hidden, c->query_proj, c->query, c->keys,
                      c->annotations, c->src_len, c->W_a, c->v_a, AB, AS, AN, AA);
    return weighted_sum(c->context, c->weight, AB * 2 * AN);
}

static void check_attention(int kind)
{
    att_case c;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    int ka = attention_key_size(kind, AN, AA);
    fill_uniform(c.query, AB * AN, 1.0f, 11);
    fill_uniform(c.annotations, AS * AB * 2 * AN, 1.0f, 12);
    fill_uniform(c.keys, AS * AB * ka, 1.0f, 13);
    fill_uniform(c.W_a, AA * AN, 0.8f, 14);
    fill_uniform(c.v_a, AA, 1.0f, 15);
    fill_uniform(c.weight, AB * 2 * AN, 1.0f, 16);
    c.src_len[0] = AS, c.src_len[1] = 2;
    att_loss(&c);
    /* Padding gets exactly zero weight; each row sums to one. */
    for (int j = 2; j < AS; j++)
        ck_assert(c.alpha[AS + j] == 0.0f);
    for (int b = 0; b < AB; b++) {
        float sum = 0.0f;
        for (int j = 0; j < AS; j++)
            sum += c.alpha[b * AS + j];
        ck_assert_float_eq_tol(sum, 1.0f, 1e-6f);
    }
    float dquery[AB * AN] = {0}, dann[AS * AB * 2 * AN] = {0}, dkeys[AS * AB * AA] = {0};
    float dqp[AB * AA], dv[AA] = {0}, dW[AA * AN] = {0}, scratch[AS];
    attention_backward(kind, dquery, dann, dkeys, dqp, dv, c.weight, c.alpha, c.hidden, c.query,
                       c.keys, c.annotations, c.src_len, c.W_a, c.v_a, AB, AS, AN, AA, scratch);
    char what[64];
    snprintf(what, sizeof what, "%s dquery", rs_attention_kind_name(kind));
    expect_close(what, gradcheck(att_loss, &c, c.query, dquery, AB * AN, 100, 1e-2f, FLOOR), TOL);
    snprintf(what, sizeof what, "%s dannotations", rs_attention_kind_name(kind));
    expect_close(what, gradcheck(att_loss, &c, c.annotations, dann, AS * AB * 2 * AN, 100, 1e-2f, FLOOR), TOL);
    snprintf(what, sizeof what, "%s dkeys", rs_attention_kind_name(kind));
    expect_close(what, gradcheck(att_loss, &c, c.keys, dkeys, (size_t)AS * AB * ka, 100, 1e-2f, FLOOR), TOL);
    if (kind == RS_ATT_ADDITIVE) {
        /* dW_a = dquery_proj^T query, which the network hoists over steps. */
        for (int k = 0; k < AA; k++)
            for (int i = 0; i < AN; i++)
                for (int b = 0; b < AB; b++)
                    dW[k * AN + i] += dqp[b * AA + k] * c.query[b * AN + i];
        expect_close("additive dW_a", gradcheck(att_loss, &c, c.W_a, dW, AA * AN, 100, 1e-2f, FLOOR), TOL);
        expect_close("additive dv_a", gradcheck(att_loss, &c, c.v_a, dv, AA, 100, 1e-2f, FLOOR), TOL);
    }
}

START_TEST(attention_matches_finite_differences)
{
    check_attention(_i);
}
END_TEST

typedef struct {
    int kind;
    float annotations[AS * 2 * AN], U[AA * 2 * AN], b[AA], keys[AS * AA], weight[AS * AA];
} keys_case;

static double keys_loss(void *p)
{
    keys_case *c = p;
    attention_keys_forward(c->kind, c->keys, c->annotations, c->U, c->b, AS, AN, AA);
    return weighted_sum(c->keys, c->weight, (size_t)AS * attention_key_size(c->kind, AN, AA));
}

START_TEST(attention_keys_match_finite_differences)
{
    keys_case c;
    c.kind = _i;
    int ka = attention_key_size(c.kind, AN, AA);
    fill_uniform(c.annotations, AS * 2 * AN, 1.0f, 21);
    fill_uniform(c.U, AA * 2 * AN, 1.0f, 22);
    fill_uniform(c.b, AA, 1.0f, 23);
    fill_uniform(c.weight, AS * AA, 1.0f, 24);
    float dann[AS * 2 * AN] = {0}, dU[AA * 2 * AN] = {0}, db[AA] = {0};
    attention_keys_backward(c.kind, dann, dU, db, c.weight, c.annotations, c.U, AS, AN, AA);
    expect_close("keys dannotations", gradcheck(keys_loss, &c, c.annotations, dann, AS * 2 * AN, 100, 1e-2f, FLOOR), TOL);
    expect_close("keys dU", gradcheck(keys_loss, &c, c.U, dU, (size_t)ka * 2 * AN, 100, 1e-2f, FLOOR), TOL);
    if (c.kind == RS_ATT_ADDITIVE)
        expect_close("keys db", gradcheck(keys_loss, &c, c.b, db, AA, 100, 1e-2f, FLOOR), TOL);
}
END_TEST

START_TEST(attention_known_answers)
{
    /* Dot scores of query (1,2) against keys (1,0), (0,1), (1,1) are (1,2,3);
     * with the keys as values the context is (0.7553, 0.9100). */
    float query[2] = {1, 2}, keys[6] = {1, 0, 0, 1, 1, 1};
    float annotations[12] = {1, 0, 0, 0, 0, 1, 0, 0, 1, 1, 0, 0};
    float alpha[3], context[4];
    int len = 3;
    attention_forward(RS_ATT_DOT, alpha, context, NULL, NULL, query, keys, annotations, &len, NULL,
                      NULL, 1, 3, 2, 1);
    ck_assert_float_eq_tol(alpha[0], 0.0900f, 5e-5f);
    ck_assert_float_eq_tol(alpha[1], 0.2447f, 5e-5f);
    ck_assert_float_eq_tol(alpha[2], 0.6652f, 5e-5f);
    ck_assert_float_eq_tol(context[0], 0.7553f, 5e-5f);
    ck_assert_float_eq_tol(context[1], 0.9100f, 5e-5f);
    ck_assert(context[2] == 0.0f && context[3] == 0.0f);
    float scores[5] = {1, 5, 2, 1, 1};
    attention_softmax(scores, 5, 5);
    const float expected[5] = {0.0166f, 0.9052f, 0.0451f, 0.0166f, 0.0166f};
    for (int j = 0; j < 5; j++)
        ck_assert_float_eq_tol(scores[j], expected[j], 5e-5f);
    /* Masked entries are exactly zero and the rest still sums to one. */
    float masked[4] = {3, 1, 100, 100};
    attention_softmax(masked, 2, 4);
    ck_assert(masked[2] == 0.0f && masked[3] == 0.0f);
    ck_assert_float_eq_tol(masked[0] + masked[1], 1.0f, 1e-6f);
}
END_TEST

/* ---- deep output and loss ---- */

enum { RR = 4, RN = 3, RM = 2, RL = 3, RV = 6 };
typedef struct {
    rs_model model;
    float states[RR * RN], emb[RR * RM], context[RR * 2 * RN];
    float tpre[RR * 2 * RL], t[RR * RL], logits[RR * RV], weight[RR * RV], t_mask[RR * RL];
    unsigned char which[RR * RL];
} readout_case;

static double readout_loss(void *p)
{
    readout_case *c = p;
    readout_forward(c->tpre, c->t, c->which, c->logits, c->states, c->emb, RM, c->context, 2 * RN,
                    c->t_mask, &c->model.w, RR, RN, RM, RL, RV);
    return weighted_sum(c->logits, c->weight, RR * RV);
}

static unsigned long long readout_signature(void *p)
{
    readout_case *c = p;
    return gradcheck_hash(c->which, sizeof c->which);
}

static void tiny_config(rs_config *cfg, int Vs, int Vt, int m, int n, int a, int l)
{
    rs_config_defaults(cfg);
    cfg->src_vocab = Vs, cfg->tgt_vocab = Vt, cfg->emb = m, cfg->hidden = n, cfg->att = a;
    cfg->maxout = l;
}

START_TEST(readout_matches_finite_differences)
{
    static readout_case c;
    rs_config cfg;
    rs_error err;
    tiny_config(&cfg, 5, RV, RM, RN, 2, RL);
    ck_assert_int_eq(rs_model_alloc(&c.model, &cfg, &err), 0);
    fill_uniform(c.model.params, c.model.layout.total, 1.0f, 31);
    fill_uniform(c.states, RR * RN, 1.0f, 32);
    fill_uniform(c.emb, RR * RM, 1.0f, 33);
    fill_uniform(c.context, RR * 2 * RN, 1.0f, 34);
    fill_uniform(c.weight, RR * RV, 1.0f, 35);
    /* A dropout mask: some units dropped, the rest scaled by 1 / (1 - p). */
    for (int i = 0; i < RR * RL; i++)
        c.t_mask[i] = i % 3 == 1 ? 0.0f : 1.5f;
    readout_loss(&c);
    float *grad = calloc(c.model.layout.total, sizeof(float));
    rs_tensors g;
    rs_tensors_bind(&g, &c.model.layout, grad);
    float dstates[RR * RN], demb[RR * RM] = {0}, dctx[RR * 2 * RN] = {0};
    float dt[RR * RL], dtpre[RR * 2 * RL];
    readout_backward(dstates, demb, RM, dctx, 2 * RN, &g, dt, dtpre, c.weight, c.t, c.which,
                     c.states, c.emb, c.context, c.t_mask, &c.model.w, RR, RN, RM, RL, RV);
    expect_close("readout dstates", gradcheck_kinked(readout_loss, readout_signature, &c, c.states, dstates, RR * RN, 100, 1e-2f, FLOOR), TOL);
    expect_close("readout demb", gradcheck_kinked(readout_loss, readout_signature, &c, c.emb, demb, RR * RM, 100, 1e-2f, FLOOR), TOL);
    expect_close("readout dcontext", gradcheck_kinked(readout_loss, readout_signature, &c, c.context, dctx, RR * 2 * RN, 100, 1e-2f, FLOOR), TOL);
    const int tensors[] = {RS_P_out_U, RS_P_out_V, RS_P_out_C, RS_P_out_b, RS_P_out_W, RS_P_out_bw};
    for (size_t i = 0; i < sizeof tensors / sizeof *tensors; i++) {
        const rs_tensor_info *t = &c.model.layout.info[tensors[i]];
        expect_close(t->name, gradcheck_kinked(readout_loss, readout_signature, &c, c.model.params + t->offset, grad + t->offset, t->size, 100, 1e-2f, FLOOR), TOL);
    }
    free(grad);
    rs_model_free(&c.model);
}
END_TEST

typedef struct {
    float logits[RR * RV], probs[RR * RV], nll[RR], smoothing;
    int targets[RR];
} xent_case;

static double xent_loss(void *p)
{
    xent_case *c = p;
    memcpy(c->probs, c->logits, sizeof c->probs);
    softmax_xent_forward(c->probs, c->nll, c->targets, RR, RV);
    /* The label-smoothed loss: -Σ_r [(1-ε) log p_y + ε/V Σ_v log p_v]. */
    double total = 0.0;
    for (int r = 0; r < RR; r++) {
        if (c->targets[r] == RS_PAD)
            continue;
        double sum_log = 0.0;
        for (int v = 0; v < RV; v++)
            sum_log += log((double)c->probs[r * RV + v]);
        total += (1.0 - c->smoothing) * c->nll[r] - c->smoothing / RV * sum_log;
    }
    return total;
}

START_TEST(softmax_xent_matches_finite_differences)
{
    xent_case c;
    fill_uniform(c.logits, RR * RV, 3.0f, 41);
    c.targets[0] = 4, c.targets[1] = RS_PAD, c.targets[2] = 5, c.targets[3] = 1;
    for (int s = 0; s < 2; s++) {
        c.smoothing = s ? 0.1f : 0.0f;
        xent_loss(&c);
        float grad[RR * RV];
        memcpy(grad, c.probs, sizeof grad);
        softmax_xent_backward(grad, c.targets, c.smoothing, 1.0f, RR, RV);
        expect_close(s ? "xent (smoothed)" : "xent", gradcheck(xent_loss, &c, c.logits, grad, RR * RV, 100, 1e-2f, FLOOR), TOL);
    }
    /* -log p of a uniform distribution is log V. */
    float uniform[RV] = {0}, nll;
    int target = 4;
    softmax_xent_forward(uniform, &nll, &target, 1, RV);
    ck_assert_float_eq_tol(nll, logf(RV), 1e-6f);
}
END_TEST

Suite *layers_suite(void)
{
    Suite *s = suite_create("layers");
    TCase *tc = tcase_create("gradients");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, gru_step_matches_finite_differences);
    tcase_add_loop_test(tc, attention_matches_finite_differences, 0, 4);
    tcase_add_loop_test(tc, attention_keys_match_finite_differences, 0, 4);
    tcase_add_test(tc, readout_matches_finite_differences);
    tcase_add_test(tc, softmax_xent_matches_finite_differences);
    suite_add_tcase(s, tc);
    TCase *known = tcase_create("known answers");
    tcase_add_test(known, attention_known_answers);
    suite_add_tcase(s, known);
    return s;
}
