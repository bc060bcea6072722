/* The data-parallel step: shards' summed gradients against one pass over the
 * whole batch (equal up to float rounding of the different summation order),
 * one shard against the plain forward/backward bit for bit, and the same
 * shard count giving the same bits run after run. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck.h"
#include "nn/optimizer.h"
#include "train/shards.h"

enum { NB = 7, MAX_LEN = 9 };

typedef struct {
    rs_model model;
    rs_batch batch;
    long tokens;
} shard_case;

/* NB pairs of lengths 1..8, ids within the vocabularies; tied: out.W is
 * tgt_emb (maxout = emb). */
static void shard_case_init_tied(shard_case *c, int tied)
{
    rs_config cfg;
    rs_error err;
    rs_config_defaults(&cfg);
    cfg.model.src_vocab = 11, cfg.model.tgt_vocab = 10, cfg.model.emb = 5, cfg.model.hidden = 6,
    cfg.model.att = 7, cfg.model.maxout = 4;
    if (tied)
        cfg.model.maxout = cfg.model.emb, cfg.model.tie_embeddings = 1;
    ck_assert_msg(rs_model_alloc(&c->model, &cfg, &err) == 0, "%s", err.msg);
    fill_uniform(c->model.params, c->model.layout.total, 0.5f, 3);
    ck_assert(rs_batch_alloc(&c->batch, NB, MAX_LEN, MAX_LEN, &err) == 0);
    static int src[NB][8], tgt[NB][8];
    const int *srcs[NB], *tgts[NB];
    int sc[NB], tc[NB];
    c->tokens = 0;
    for (int b = 0; b < NB; b++) {
        sc[b] = 1 + (b * 3) % 8;
        tc[b] = 1 + (b * 5) % 8;
        for (int k = 0; k < 8; k++) {
            src[b][k] = RS_RESERVED + (b + 2 * k) % 7;
            tgt[b][k] = RS_RESERVED + (3 * b + k) % 6;
        }
        srcs[b] = src[b];
        tgts[b] = tgt[b];
        c->tokens += tc[b] + 1;
    }
    ck_assert(rs_batch_fill(&c->batch, NB, srcs, sc, tgts, tc, &err) == 0);
}

static void shard_case_init(shard_case *c)
{
    shard_case_init_tied(c, 0);
}

static void shard_case_free(shard_case *c)
{
    rs_batch_free(&c->batch);
    rs_model_free(&c->model);
}

/* Loss and gradients of one step with `threads` shards (word dropout of both sides at `word`). */
static double step(shard_case *c, int threads, float *grads, float dropout, float word)
{
    rs_shards sh;
    rs_error err;
    ck_assert_msg(rs_shards_init(&sh, &c->model, threads, NB, MAX_LEN, MAX_LEN, grads, &err) == 0,
                  "%s", err.msg);
    const rs_dropout_rates rates = {dropout, word, word};
    double loss = rs_shards_step(&sh, &c->model, &c->batch, rates, 42, 0.1f, c->tokens, 0);
    rs_shards_free(&sh);
    return loss;
}

START_TEST(one_shard_is_the_plain_pass)
{
    shard_case c;
    shard_case_init(&c);
    size_t total = c.model.layout.total;
    float *a = calloc(total, sizeof(float)), *b = calloc(total, sizeof(float));
    ck_assert(a && b);
    double loss = step(&c, 1, a, 0.2f, 0.3f);
    rs_workspace ws;
    rs_error err;
    ck_assert(rs_workspace_alloc(&ws, &c.model, NB, MAX_LEN, MAX_LEN, &err) == 0);
    ws.dropout = (rs_dropout_rates){0.2f, 0.3f, 0.3f};
    rs_rng_seed(&ws.dropout_rng, 42);
    rs_tensors g;
    rs_tensors_bind(&g, &c.model.layout, b);
    const rs_network_weights w = rs_network_weights_of(&c.model);
    double ref = rs_network_forward(&ws, &w, &c.batch);
    rs_network_backward(&ws, &w, &c.batch, &g, 0.1f, 1.0f / (float)c.tokens);
    ck_assert(loss == ref);
    ck_assert_msg(!memcmp(a, b, sizeof(float) * total), "one shard differs from the plain pass");
    rs_workspace_free(&ws);
    free(a);
    free(b);
    shard_case_free(&c);
}
END_TEST

/* Untied, then tied (each shard adds both uses into its own buffer's tgt_emb). */
START_TEST(shards_sum_to_the_whole_batch)
{
    shard_case c;
    shard_case_init_tied(&c, _i);
    size_t total = c.model.layout.total;
    float *one = calloc(total, sizeof(float)), *many = calloc(total, sizeof(float));
    ck_assert(one && many);
    double loss1 = step(&c, 1, one, 0.0f, 0.0f);
    for (int threads = 2; threads <= NB + 2; threads += 3) {
        double loss = step(&c, threads, many, 0.0f, 0.0f);
        ck_assert_msg(fabs(loss - loss1) <= 1e-5 * fabs(loss1), "%d shards: loss %.9g vs %.9g",
                      threads, loss, loss1);
        double worst = 0.0;
        size_t at = 0;
        for (size_t i = 0; i < total; i++) {
            double d = fabs((double)many[i] - one[i]) / fmax(fabs(one[i]), 1e-3);
            if (d > worst) {
                worst = d;
                at = i;
            }
        }
        ck_assert_msg(worst <= 1e-4, "%d shards: gradient %zu off by %.3g relative (%g vs %g)",
                      threads, at, worst, many[at], one[at]);
    }
    free(one);
    free(many);
    shard_case_free(&c);
}
END_TEST

START_TEST(same_shard_count_same_bits)
{
    shard_case c;
    shard_case_init(&c);
    size_t total = c.model.layout.total;
    float *first = calloc(total, sizeof(float)), *again = calloc(total, sizeof(float));
    ck_assert(first && again);
    double loss = step(&c, 3, first, 0.3f, 0.2f);
    for (int round = 0; round < 5; round++) {
        ck_assert(step(&c, 3, again, 0.3f, 0.2f) == loss);
        ck_assert_msg(!memcmp(first, again, sizeof(float) * total), "round %d differs", round);
    }
    free(first);
    free(again);
    shard_case_free(&c);
}
END_TEST

/* The norm the step reports, and Adam by slices on the shards' threads. */
START_TEST(norm_and_adam_by_slices)
{
    shard_case c;
    shard_case_init(&c);
    const size_t total = c.model.layout.total;
    float *grads = calloc(total, sizeof(float)), *m = calloc(total, sizeof(float));
    float *v = calloc(total, sizeof(float)), *p = calloc(total, sizeof(float));
    float *m2 = calloc(total, sizeof(float)), *v2 = calloc(total, sizeof(float));
    ck_assert(grads && m && v && p && m2 && v2);
    rs_shards sh;
    rs_error err;
    ck_assert(rs_shards_init(&sh, &c.model, 3, NB, MAX_LEN, MAX_LEN, grads, &err) == 0);
    rs_shards_step(&sh, &c.model, &c.batch, (rs_dropout_rates){0}, 1, 0.0f, c.tokens, 0);
    double norm = rs_grad_norm(grads, total);
    ck_assert_msg(fabs(sh.grad_norm - norm) <= 1e-12 * norm, "norm %.17g vs %.17g", sh.grad_norm,
                  norm);
    memcpy(p, c.model.params, sizeof(float) * total);
    const rs_adam_settings adam = {0.01f, 0.9f, 0.999f, 1e-8f};
    rs_shards_adam(&sh, c.model.params, 0.5f, m, v, &adam, 1);
    rs_adam_update(p, grads, 0.5f, m2, v2, total, &adam, 1);
    ck_assert(!memcmp(p, c.model.params, sizeof(float) * total));
    ck_assert(!memcmp(m, m2, sizeof(float) * total) && !memcmp(v, v2, sizeof(float) * total));
    ck_assert(sh.grad_norm > 0.0);
    rs_shards_free(&sh);
    free(grads);
    free(m);
    free(v);
    free(p);
    free(m2);
    free(v2);
    shard_case_free(&c);
}
END_TEST

/* accumulate = 1 adds the batch's gradient to the sum so far: two steps over
 * the same batch, the second accumulating, give twice one step's gradient,
 * with one shard and with three, untied and tied. */
START_TEST(accumulating_adds_to_the_sum)
{
    shard_case c;
    shard_case_init_tied(&c, _i);
    size_t total = c.model.layout.total;
    float *once = calloc(total, sizeof(float)), *twice = calloc(total, sizeof(float));
    ck_assert(once && twice);
    for (int threads = 1; threads <= 3; threads += 2) {
        rs_shards sh;
        rs_error err;
        ck_assert(rs_shards_init(&sh, &c.model, threads, NB, MAX_LEN, MAX_LEN, once, &err) == 0);
        rs_shards_step(&sh, &c.model, &c.batch, (rs_dropout_rates){0}, 7, 0.0f, c.tokens, 0);
        rs_shards_free(&sh);
        ck_assert(rs_shards_init(&sh, &c.model, threads, NB, MAX_LEN, MAX_LEN, twice, &err) == 0);
        rs_shards_step(&sh, &c.model, &c.batch, (rs_dropout_rates){0}, 7, 0.0f, c.tokens, 0);
        rs_shards_step(&sh, &c.model, &c.batch, (rs_dropout_rates){0}, 7, 0.0f, c.tokens, 1);
        double norm = sh.grad_norm;
        rs_shards_free(&sh);
        for (size_t i = 0; i < total; i++)
            ck_assert_msg(fabsf(twice[i] - 2.0f * once[i]) <= 1e-6f * (1.0f + fabsf(once[i])),
                          "threads %d, [%zu]: %g vs 2 x %g", threads, i, twice[i], once[i]);
        ck_assert_double_eq_tol(norm, 2.0 * rs_grad_norm(once, total), 1e-5 * norm);
    }
    free(once);
    free(twice);
    shard_case_free(&c);
}
END_TEST

Suite *shards_suite(void)
{
    Suite *s = suite_create("shards");
    TCase *tc = tcase_create("step");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, one_shard_is_the_plain_pass);
    tcase_add_loop_test(tc, shards_sum_to_the_whole_batch, 0, 2);
    tcase_add_test(tc, same_shard_count_same_bits);
    tcase_add_test(tc, norm_and_adam_by_slices);
    tcase_add_loop_test(tc, accumulating_adds_to_the_sum, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}
