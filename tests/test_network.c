/* The whole network: every parameter tensor's gradient against finite
 * differences (for each attention kind), and a padded batch against its
 * sentences one at a time.
 *
 * Tolerance: the float32 loss (≈15 here) carries ≈1e-6 of rounding noise, so
 * central differences with h = 1e-2 are good to ≈5e-5 absolute; the metric
 * |a − n| / max(|a|, |n|, 1e-2) must stay below 5e-3. A wrong term gives O(1). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck.h"
#include "network.h"

typedef struct {
    rs_model model;
    rs_workspace ws;
    rs_batch batch;
} net_case;

/* Three pairs of different lengths, ids within Vs = 9, Vt = 8. */
static const int src0[] = {4, 5, 6, 7}, src1[] = {8}, src2[] = {5, 5, 4};
static const int tgt0[] = {4, 5}, tgt1[] = {6, 7, 4, 5}, tgt2[] = {7};
static const int *const srcs[] = {src0, src1, src2}, *const tgts[] = {tgt0, tgt1, tgt2};
static const int src_counts[] = {4, 1, 3}, tgt_counts[] = {2, 4, 1};

static void net_case_init(net_case *c, const char *attention)
{
    rs_config cfg;
    rs_error err;
    rs_config_defaults(&cfg);
    cfg.src_vocab = 9, cfg.tgt_vocab = 8, cfg.emb = 3, cfg.hidden = 4, cfg.att = 5, cfg.maxout = 3;
    ck_assert(rs_config_set(&cfg, "attention", attention, &err) == 0);
    ck_assert_msg(rs_model_alloc(&c->model, &cfg, &err) == 0, "%s", err.msg);
    fill_uniform(c->model.params, c->model.layout.total, 0.5f, 7);
    ck_assert(rs_workspace_alloc(&c->ws, &c->model, 3, 6, 6, &err) == 0);
    ck_assert(rs_batch_alloc(&c->batch, 3, 6, 6, &err) == 0);
}

static void net_case_free(net_case *c)
{
    rs_batch_free(&c->batch);
    rs_workspace_free(&c->ws);
    rs_model_free(&c->model);
}

static double net_loss(void *p)
{
    net_case *c = p;
    return rs_network_forward(&c->ws, &c->model, &c->batch);
}

static unsigned long long net_signature(void *p)
{
    net_case *c = p;
    return gradcheck_hash(c->ws.which, (size_t)c->batch.T * c->batch.B * c->model.cfg.maxout);
}

START_TEST(network_gradients_match_finite_differences)
{
    /* The four attention kinds, then additive with dropout (fixed masks). */
    static const char *const kinds[] = {"additive", "general", "dot", "scaled-dot", "additive"};
    net_case c;
    rs_error err;
    net_case_init(&c, kinds[_i]);
    if (_i == 4) {
        c.ws.dropout = 0.3f;
        rs_rng_seed(&c.ws.dropout_rng, 99);
    }
    ck_assert(rs_batch_fill(&c.batch, 3, srcs, src_counts, tgts, tgt_counts, &err) == 0);
    float *grad = calloc(c.model.layout.total, sizeof(float));
    rs_tensors g;
    rs_tensors_bind(&g, &c.model.layout, grad);
    net_loss(&c);
    rs_network_backward(&c.ws, &c.model, &c.batch, &g, 0.0f, 1.0f);
    int checked = 0;
    for (int i = 0; i < RS_NUM_PARAMS; i++) {
        const rs_tensor_info *t = &c.model.layout.info[i];
        if (!t->size)
            continue;
        gradcheck_result r = gradcheck_kinked(net_loss, net_signature, &c, c.model.params + t->offset, grad + t->offset,
                                       t->size, 40, 1e-2f, 1e-2);
        if (r.worst > 5e-3 || r.non_finite)
            fprintf(stderr, "%s %s: worst %.3g at %zu (analytic %.6g, numeric %.6g)\n", kinds[_i],
                    t->name, r.worst, r.worst_index, r.analytic, r.numeric);
        ck_assert_msg(!r.non_finite, "%s: non-finite gradient", t->name);
        ck_assert_msg(r.worst <= 5e-3, "%s %s: relative error %.3g", kinds[_i], t->name, r.worst);
        ck_assert_msg(r.checked >= (t->size < 40 ? (int)t->size : 40) / 2,
                      "%s: only %d samples away from maxout kinks", t->name, r.checked);
        checked++;
    }
    ck_assert_int_eq(checked, _i == 0 || _i == 4 ? RS_NUM_PARAMS - 1 : RS_NUM_PARAMS - 4);
    free(grad);
    net_case_free(&c);
}
END_TEST

START_TEST(padded_batch_equals_sentences_one_at_a_time)
{
    net_case c;
    rs_error err;
    net_case_init(&c, "additive");
    size_t total = c.model.layout.total;
    float *batched = calloc(total, sizeof(float)), *single = calloc(total, sizeof(float));
    rs_tensors gb, gs;
    rs_tensors_bind(&gb, &c.model.layout, batched);
    rs_tensors_bind(&gs, &c.model.layout, single);

    ck_assert(rs_batch_fill(&c.batch, 3, srcs, src_counts, tgts, tgt_counts, &err) == 0);
    double loss_batched = rs_network_forward(&c.ws, &c.model, &c.batch);
    float nll_rows[3] = {0};
    for (int t = 0; t < c.batch.T; t++)
        for (int b = 0; b < 3; b++)
            nll_rows[b] += c.ws.nll[t * 3 + b];
    rs_network_backward(&c.ws, &c.model, &c.batch, &gb, 0.0f, 1.0f);

    double loss_single = 0.0;
    for (int b = 0; b < 3; b++) {
        ck_assert(rs_batch_fill(&c.batch, 1, &srcs[b], &src_counts[b], &tgts[b], &tgt_counts[b], &err) == 0);
        double l = rs_network_forward(&c.ws, &c.model, &c.batch);
        ck_assert_double_eq_tol(l, nll_rows[b], 1e-5 * fabs(l));
        loss_single += l;
        rs_network_backward(&c.ws, &c.model, &c.batch, &gs, 0.0f, 1.0f);
    }
    ck_assert_double_eq_tol(loss_batched, loss_single, 1e-5 * fabs(loss_single));
    double worst = 0.0;
    for (size_t k = 0; k < total; k++) {
        double d = fabs((double)batched[k] - single[k]) / fmax(1e-3, fabs(single[k]));
        if (d > worst)
            worst = d;
    }
    ck_assert_msg(worst < 1e-4, "gradients differ by %.3g (relative)", worst);
    free(batched);
    free(single);
    net_case_free(&c);
}
END_TEST

Suite *network_suite(void)
{
    Suite *s = suite_create("network");
    TCase *tc = tcase_create("whole model");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, network_gradients_match_finite_differences, 0, 5);
    tcase_add_test(tc, padded_batch_equals_sentences_one_at_a_time);
    suite_add_tcase(s, tc);
    return s;
}
