/* The deep output with maxout and the softmax cross-entropy (src/nn/readout.c):
 * backward passes against central finite differences (maxout kinks skipped),
 * with label smoothing and a dropout mask, and -log p of a uniform
 * distribution. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck.h"
#include "model/model.h"
#include "nn/readout.h"

#define TOL GRADCHECK_LAYER_TOL
#define FLOOR GRADCHECK_LAYER_FLOOR

enum { RR = 4, RN = 3, RM = 2, RL = 3, RV = 6 };
typedef struct {
    rs_model model;
    float states[RR * RN], emb[RR * RM], context[RR * 2 * RN];
    float tpre[RR * 2 * RL], t[RR * RL], logits[RR * RV], weight[RR * RV], t_mask[RR * RL];
    unsigned char which[RR * RL];
} readout_case;

static rs_readout_acts case_acts(readout_case *c)
{
    return (rs_readout_acts){
        .tpre = c->tpre, .tmax = c->t, .logits = c->logits, .which = c->which, .t_mask = c->t_mask};
}

static rs_readout_inputs case_inputs(readout_case *c)
{
    return (rs_readout_inputs){RS_CMAT(c->states, RR, RN), RS_CMAT(c->emb, RR, RM),
                               RS_CMAT(c->context, RR, 2 * RN)};
}

static double readout_loss(void *p)
{
    readout_case *c = p;
    const rs_readout_acts acts = case_acts(c);
    const rs_readout_inputs in = case_inputs(c);
    const rs_readout_weights w = rs_readout_weights_of(&c->model.w, RM, RN, RL, RV);
    rs_readout_forward(&acts, &in, &w);
    return gradcheck_weighted_sum(c->logits, c->weight, RR * RV);
}

static unsigned long long readout_signature(void *p)
{
    readout_case *c = p;
    return gradcheck_hash(c->which, sizeof c->which);
}

static void tiny_config(rs_config *cfg, int Vs, int Vt, int m, int n, int a, int l)
{
    rs_config_defaults(cfg);
    cfg->model.src_vocab = Vs, cfg->model.tgt_vocab = Vt, cfg->model.emb = m, cfg->model.hidden = n,
    cfg->model.att = a;
    cfg->model.maxout = l;
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
    const rs_readout_acts acts = case_acts(&c), d = {.tpre = dtpre, .tmax = dt, .logits = c.weight};
    const rs_readout_inputs in = case_inputs(&c);
    const rs_readout_input_grads d_in = {RS_MAT(dstates, RR, RN), RS_MAT(demb, RR, RM),
                                         RS_MAT(dctx, RR, 2 * RN)};
    const rs_readout_weights w = rs_readout_weights_of(&c.model.w, RM, RN, RL, RV);
    const rs_readout_grads dw = rs_readout_grads_of(&g);
    rs_readout_backward(&d, &d_in, &dw, &acts, &in, &w);
    gradcheck_expect("readout dstates",
                     gradcheck_kinked(readout_loss, readout_signature, &c, c.states, dstates,
                                      RR * RN, 100, 1e-2f, FLOOR),
                     TOL);
    gradcheck_expect("readout demb",
                     gradcheck_kinked(readout_loss, readout_signature, &c, c.emb, demb, RR * RM,
                                      100, 1e-2f, FLOOR),
                     TOL);
    gradcheck_expect("readout dcontext",
                     gradcheck_kinked(readout_loss, readout_signature, &c, c.context, dctx,
                                      RR * 2 * RN, 100, 1e-2f, FLOOR),
                     TOL);
    const int tensors[] = {RS_P_out_U, RS_P_out_V, RS_P_out_C, RS_P_out_b, RS_P_out_W, RS_P_out_bw};
    for (size_t i = 0; i < sizeof tensors / sizeof *tensors; i++) {
        const rs_tensor_info *t = &c.model.layout.info[tensors[i]];
        gradcheck_expect(t->name,
                         gradcheck_kinked(readout_loss, readout_signature, &c,
                                          c.model.params + t->offset, grad + t->offset, t->size,
                                          100, 1e-2f, FLOOR),
                         TOL);
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
    rs_softmax_xent_forward(c->probs, c->nll, c->logits, c->targets, RR, RV);
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
        float grad[RR * RV], in_place[RR * RV];
        rs_softmax_xent_backward(grad, c.probs, c.targets, c.smoothing, 1.0f, RR, RV);
        /* The workspace turns the probabilities into dlogits in place: the same bits. */
        memcpy(in_place, c.probs, sizeof in_place);
        rs_softmax_xent_backward(in_place, in_place, c.targets, c.smoothing, 1.0f, RR, RV);
        ck_assert(!memcmp(in_place, grad, sizeof grad));
        gradcheck_expect(s ? "xent (smoothed)" : "xent",
                         gradcheck(xent_loss, &c, c.logits, grad, RR * RV, 100, 1e-2f, FLOOR), TOL);
    }
    /* In place (the workspace's probs share the logits' floats): the same bits. */
    float probs[RR * RV], nll[RR];
    xent_loss(&c);
    memcpy(probs, c.logits, sizeof probs);
    rs_softmax_xent_forward(probs, nll, probs, c.targets, RR, RV);
    ck_assert(!memcmp(probs, c.probs, sizeof probs) && !memcmp(nll, c.nll, sizeof nll));
    /* -log p of a uniform distribution is log V. */
    float uniform[RV] = {0}, uniform_nll;
    int target = 4;
    rs_softmax_xent_forward(uniform, &uniform_nll, uniform, &target, 1, RV);
    ck_assert_float_eq_tol(uniform_nll, logf(RV), 1e-6f);
}
END_TEST

Suite *readout_suite(void)
{
    Suite *s = suite_create("readout");
    TCase *tc = tcase_create("gradients");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, readout_matches_finite_differences);
    tcase_add_test(tc, softmax_xent_matches_finite_differences);
    suite_add_tcase(s, tc);
    return s;
}
