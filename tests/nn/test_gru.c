/* The GRU (src/nn/gru.c): one step, its input projection and every gradient
 * its backward computes (h_prev, the input x, the decoder's context, W, W_c,
 * U, b) against central finite differences, with the loss L = Σ h ⊙ R for a
 * fixed random R (so that a permuted gradient fails), with and without the
 * context, and a masked row. */
#include <check.h>
#include <string.h>

#include "gradcheck.h"
#include "nn/gru.h"

#define TOL GRADCHECK_LAYER_TOL
#define FLOOR GRADCHECK_LAYER_FLOOR

enum { GB = 3, GN = 4, GI = 5 };
typedef struct {
    int with_context;
    float x[GB * GI], context[GB * 2 * GN], h_prev[GB * GN], mask[GB];
    float W[3 * GN * GI], W_c[3 * GN * 2 * GN], U[3 * GN * GN], b[3 * GN];
    float xproj[GB * 3 * GN], gates[GB * 3 * GN], rh[GB * GN], h[GB * GN], weight[GB * GN];
} gru_case;

static rs_gru_weights case_weights(gru_case *c)
{
    const rs_cmat W_c = c->with_context ? RS_CMAT(c->W_c, 3 * GN, 2 * GN) : RS_CMAT(NULL, 0, 0);
    return (rs_gru_weights){.n = GN,
                            .W = RS_LINEAR(RS_CMAT(c->W, 3 * GN, GI)),
                            .W_c = RS_LINEAR(W_c),
                            .U_zr = RS_LINEAR(RS_CMAT(c->U, 2 * GN, GN)),
                            .U_g = RS_LINEAR(RS_CMAT(c->U + 2 * GN * GN, GN, GN)),
                            .b = c->b};
}

static rs_gru_step case_step(gru_case *c)
{
    return (rs_gru_step){.h_prev = c->h_prev,
                         .context = c->with_context ? c->context : NULL,
                         .xproj = c->xproj,
                         .gates = c->gates,
                         .rh = c->rh,
                         .h = c->h};
}

static double gru_loss(void *p)
{
    gru_case *c = p;
    const rs_gru_weights w = case_weights(c);
    const rs_gru_step st = case_step(c);
    rs_gru_input_forward(RS_MAT(c->xproj, GB, 3 * GN), RS_CMAT(c->x, GB, GI), &w);
    rs_gru_step_forward(&st, &w, c->mask, GB);
    return gradcheck_weighted_sum(c->h, c->weight, GB * GN);
}

START_TEST(gru_matches_finite_differences)
{
    gru_case c;
    memset(&c, 0, sizeof c);
    c.with_context = _i;
    fill_uniform(c.x, GB * GI, 1.0f, 1);
    fill_uniform(c.context, GB * 2 * GN, 1.0f, 2);
    fill_uniform(c.h_prev, GB * GN, 0.8f, 3);
    fill_uniform(c.W, 3 * GN * GI, 0.7f, 4);
    fill_uniform(c.W_c, 3 * GN * 2 * GN, 0.5f, 5);
    fill_uniform(c.U, 3 * GN * GN, 0.7f, 6);
    fill_uniform(c.b, 3 * GN, 0.5f, 7);
    fill_uniform(c.weight, GB * GN, 1.0f, 8);
    c.mask[0] = 1.0f, c.mask[1] = 0.0f, c.mask[2] = 1.0f; /* row 1 carries its state */
    gru_loss(&c);

    float dh_prev[GB * GN] = {0}, dcontext[GB * 2 * GN] = {0}, dx[GB * GI] = {0};
    float dxproj[GB * 3 * GN], drh[GB * GN];
    float dW[3 * GN * GI] = {0}, dW_c[3 * GN * 2 * GN] = {0}, dU[3 * GN * GN] = {0},
                      db[3 * GN] = {0};
    const rs_gru_weights w = case_weights(&c);
    const rs_gru_step st = case_step(&c);
    const rs_gru_step_grads d = {c.weight, dh_prev, c.with_context ? dcontext : NULL, dxproj, drh};
    rs_gru_step_backward(&d, &st, &w, c.mask, GB);
    const rs_gru_grads g = {RS_MAT(dW, 3 * GN, GI), RS_MAT(dW_c, 3 * GN, 2 * GN), dU, db};
    const rs_gru_run run = {RS_CMAT(c.x, GB, GI),
                            c.with_context ? RS_CMAT(c.context, GB, 2 * GN) : RS_CMAT(NULL, 0, 0),
                            RS_CMAT(c.h_prev, GB, GN), RS_CMAT(c.rh, GB, GN)};
    rs_gru_weights_backward(RS_MAT(dx, GB, GI), &g, RS_CMAT(dxproj, GB, 3 * GN), &run, &w);

    gradcheck_expect("gru dh_prev",
                     gradcheck(gru_loss, &c, c.h_prev, dh_prev, GB * GN, 100, 1e-2f, FLOOR), TOL);
    gradcheck_expect("gru dx", gradcheck(gru_loss, &c, c.x, dx, GB * GI, 100, 1e-2f, FLOOR), TOL);
    gradcheck_expect("gru dW", gradcheck(gru_loss, &c, c.W, dW, 3 * GN * GI, 100, 1e-2f, FLOOR),
                     TOL);
    gradcheck_expect("gru dU", gradcheck(gru_loss, &c, c.U, dU, 3 * GN * GN, 100, 1e-2f, FLOOR),
                     TOL);
    gradcheck_expect("gru db", gradcheck(gru_loss, &c, c.b, db, 3 * GN, 100, 1e-2f, FLOOR), TOL);
    if (c.with_context) {
        gradcheck_expect(
            "gru dcontext",
            gradcheck(gru_loss, &c, c.context, dcontext, GB * 2 * GN, 100, 1e-2f, FLOOR), TOL);
        gradcheck_expect("gru dW_c",
                         gradcheck(gru_loss, &c, c.W_c, dW_c, 3 * GN * 2 * GN, 100, 1e-2f, FLOOR),
                         TOL);
    } else {
        /* Without a context nothing reaches W_c. */
        for (int k = 0; k < 3 * GN * 2 * GN; k++)
            ck_assert(dW_c[k] == 0.0f);
    }
    /* A masked row passes its gradient straight through, and nothing to x_proj. */
    for (int k = 0; k < GN; k++)
        ck_assert_float_eq_tol(dh_prev[GN + k], c.weight[GN + k], 1e-7f);
    for (int k = 0; k < 3 * GN; k++)
        ck_assert(dxproj[3 * GN + k] == 0.0f);
}
END_TEST

Suite *gru_suite(void)
{
    Suite *s = suite_create("gru");
    TCase *tc = tcase_create("gradients");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, gru_matches_finite_differences, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}
