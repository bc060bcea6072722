/* The GRU step (src/nn/gru.c): its backward pass against central finite
 * differences, with the loss L = Σ h ⊙ W for a fixed random W (so that a
 * permuted gradient fails), the bias gradient and a masked row. */
#include <check.h>

#include "gradcheck.h"
#include "nn/gru.h"

#define TOL GRADCHECK_LAYER_TOL
#define FLOOR GRADCHECK_LAYER_FLOOR

enum { GB = 3, GN = 4 };
typedef struct {
    float h_prev[GB * GN], x_proj[GB * 3 * GN], U[3 * GN * GN], mask[GB];
    float h[GB * GN], gates[GB * 3 * GN], r_h[GB * GN], weight[GB * GN];
} gru_case;

static double gru_loss(void *p)
{
    gru_case *c = p;
    rs_gru_step_forward(c->h, c->gates, c->r_h, c->h_prev, c->x_proj, c->U, c->mask, GB, GN);
    return gradcheck_weighted_sum(c->h, c->weight, GB * GN);
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
    rs_gru_step_backward(dh_prev, dpre, c.weight, c.gates, c.h_prev, c.U, c.mask, GB, GN, scratch);
    rs_gru_recurrent_backward(dU, db, dpre, c.h_prev, c.r_h, GB, GN);
    gradcheck_expect("gru dh_prev",
                     gradcheck(gru_loss, &c, c.h_prev, dh_prev, GB * GN, 100, 1e-2f, FLOOR), TOL);
    gradcheck_expect("gru dx_proj",
                     gradcheck(gru_loss, &c, c.x_proj, dpre, GB * 3 * GN, 100, 1e-2f, FLOOR), TOL);
    gradcheck_expect("gru dU", gradcheck(gru_loss, &c, c.U, dU, 3 * GN * GN, 100, 1e-2f, FLOOR),
                     TOL);
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

Suite *gru_suite(void)
{
    Suite *s = suite_create("gru");
    TCase *tc = tcase_create("gradients");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, gru_step_matches_finite_differences);
    suite_add_tcase(s, tc);
    return s;
}
