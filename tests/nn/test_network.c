/* The whole network: every parameter tensor's gradient against finite
 * differences entry by entry and along a random direction per tensor (for
 * each attention kind, with dropout, with word dropout on top, and with tied
 * embeddings, without and with both dropouts), a padded batch against its
 * sentences one at a time, and the tied gradient against the sum of the
 * untied model's two.
 *
 * Entry-by-entry tolerance: the float32 loss (≈15 here) carries ≈1e-6 of
 * rounding noise, so central differences with h = 1e-2 are good to ≈5e-5
 * absolute; the metric |a − n| / max(|a|, |n|, 1e-2) must stay below 5e-3.
 * A wrong term gives O(1). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck.h"
#include "nn/network.h"
#include "tinymodel.h"

typedef struct {
    rs_model model;
    rs_network_weights w; /* the model's plain views */
    rs_workspace ws;
    rs_batch batch;
} net_case;

/* Three pairs of different lengths, ids within Vs = 9, Vt = 8. */
static const int src0[] = {4, 5, 6, 7}, src1[] = {8}, src2[] = {5, 5, 4};
static const int tgt0[] = {4, 5}, tgt1[] = {6, 7, 4, 5}, tgt2[] = {7};
static const int *const srcs[] = {src0, src1, src2}, *const tgts[] = {tgt0, tgt1, tgt2};
static const int src_counts[] = {4, 1, 3}, tgt_counts[] = {2, 4, 1};

static void net_case_init(net_case *c, const char *attention, int tied)
{
    rs_config cfg;
    rs_error err;
    rs_config_defaults(&cfg);
    cfg.model.src_vocab = 9, cfg.model.tgt_vocab = 8, cfg.model.emb = 3, cfg.model.hidden = 4,
    cfg.model.att = 5, cfg.model.maxout = 3;
    cfg.model.tie_embeddings = tied;
    ck_assert(rs_config_set(&cfg, "attention", attention, &err) == 0);
    ck_assert_msg(rs_model_alloc(&c->model, &cfg, &err) == 0, "%s", err.msg);
    c->w = rs_network_weights_of(&c->model);
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
    return rs_network_forward(&c->ws, &c->w, &c->batch);
}

/* Which half of each maxout pair won, at the real target positions only:
 * ties at padded positions do not touch the loss. */
static unsigned long long net_signature(void *p)
{
    net_case *c = p;
    const int l = c->model.cfg.maxout;
    unsigned long long h = 0;
    for (int r = 0; r < c->batch.T * c->batch.B; r++)
        if (c->batch.tgt_out[r] != RS_PAD)
            h = h * 31 + gradcheck_hash(c->ws.which + (size_t)r * l, (size_t)l) +
                (unsigned long long)r;
    return h;
}

/* The three attention kinds, then additive with dropout, then additive with
 * dropout and word dropout of both sides (fixed masks), then additive with
 * tied embeddings (out.W is tgt_emb: the finite differences of tgt_emb move
 * both uses at once), without and with both dropouts; then none (the fixed
 * context c = [→h_S ; ←h_1]), without and with dropout. */
static const char *const kinds[] = {"additive", "general",  "scaled-dot", "additive", "additive",
                                    "additive", "additive", "none",       "none"};
enum {
    VARIANTS = 9,
    DROPOUT_VARIANT = 3,
    WORD_DROPOUT_VARIANT = 4,
    TIED_VARIANT = 5,
    TIED_WORD_DROPOUT_VARIANT = 6,
    NONE_VARIANT = 7,
    NONE_DROPOUT_VARIANT = 8
};

static int is_tied(int v)
{
    return v == TIED_VARIANT || v == TIED_WORD_DROPOUT_VARIANT;
}

static int has_word_dropout(int v)
{
    return v == WORD_DROPOUT_VARIANT || v == TIED_WORD_DROPOUT_VARIANT;
}

/* Real positions (mask [steps,B] of 1 on them) whose word multiplier is 0,
 * and those whose multiplier is not. */
static void count_dropped(const float *word, const float *real, int steps, int B, int *dropped,
                          int *kept)
{
    *dropped = *kept = 0;
    for (int r = 0; r < steps * B; r++)
        if (real[r] > 0.0f)
            ++*(word[r] == 0.0f ? dropped : kept);
}

/* Sets c up as variant v with weights uniform in [-scale, scale] and runs
 * the three pairs forward. */
static void variant_forward(net_case *c, int v, float scale)
{
    rs_error err;
    net_case_init(c, kinds[v], is_tied(v));
    fill_uniform(c->model.params, c->model.layout.total, scale, 7);
    if (v == DROPOUT_VARIANT || v == NONE_DROPOUT_VARIANT) {
        c->ws.dropout.element = 0.3f;
        rs_rng_seed(&c->ws.dropout_rng, 99);
    }
    if (has_word_dropout(v)) {
        c->ws.dropout = (rs_dropout_rates){0.2f, 0.4f, 0.4f};
        rs_rng_seed(&c->ws.dropout_rng, 99);
    }
    ck_assert(rs_batch_fill(&c->batch, 3, srcs, src_counts, tgts, tgt_counts, &err) == 0);
    net_loss(c);
    if (has_word_dropout(v)) {
        /* The check means something only if both sides drop some real tokens and keep others. */
        int dropped, kept;
        count_dropped(c->ws.drop_src_word, c->ws.src_mask, c->batch.S, c->batch.B, &dropped, &kept);
        ck_assert_msg(dropped > 0 && kept > 0, "source: %d dropped, %d kept", dropped, kept);
        count_dropped(c->ws.drop_tgt_word, c->ws.tgt_mask, c->batch.T, c->batch.B, &dropped, &kept);
        ck_assert_msg(dropped > 0 && kept > 0, "target: %d dropped, %d kept", dropped, kept);
    }
}

/* variant_forward, then backward: returns the gradient (free it). */
static float *variant_gradient(net_case *c, int v, float scale)
{
    variant_forward(c, v, scale);
    float *grad = calloc(c->model.layout.total, sizeof(float));
    ck_assert(grad != NULL);
    rs_tensors g;
    rs_tensors_bind(&g, &c->model.layout, grad);
    rs_network_backward(&c->ws, &c->w, &c->batch, &g, 0.0f, 1.0f);
    return grad;
}

/* Tensors present: all but att.K (additive), all but att.W, U, b, v
 * (general, scaled-dot) or none of the five att.* (none); and out.W when
 * tied. */
static int tensors_present(int v)
{
    const int absent = !strcmp(kinds[v], "additive") ? 1 : !strcmp(kinds[v], "none") ? 5 : 4;
    return RS_NUM_PARAMS - absent - is_tied(v);
}

START_TEST(network_gradients_match_finite_differences)
{
    net_case c;
    float *grad = variant_gradient(&c, _i, 0.5f);
    int checked = 0;
    for (int i = 0; i < RS_NUM_PARAMS; i++) {
        const rs_tensor_info *t = &c.model.layout.info[i];
        if (!t->size)
            continue;
        gradcheck_result r =
            gradcheck_kinked(net_loss, net_signature, &c, c.model.params + t->offset,
                             grad + t->offset, t->size, 40, 1e-2f, 1e-2);
        if (r.worst > 5e-3 || r.non_finite)
            fprintf(stderr, "%s %s: worst %.3g at %zu (analytic %.6g, numeric %.6g)\n", kinds[_i],
                    t->name, r.worst, r.worst_index, r.analytic, r.numeric);
        ck_assert_msg(!r.non_finite, "%s: non-finite gradient", t->name);
        ck_assert_msg(r.worst <= 5e-3, "%s %s: relative error %.3g", kinds[_i], t->name, r.worst);
        ck_assert_msg(r.checked >= (t->size < 40 ? (int)t->size : 40) / 2,
                      "%s: only %d samples away from maxout kinks", t->name, r.checked);
        checked++;
    }
    ck_assert_int_eq(checked, tensors_present(_i));
    free(grad);
    net_case_free(&c);
}
END_TEST

/* Directions per tensor: each a random one (gradcheck_seed: none chosen by
 * hand; RNNSEARCH_GRADCHECK_SEED picks another set). */
enum { DIRECTIONS = 10 };

/* What the directional checks of one variant found: per tensor, whether every
 * direction held and the finest relative error one of them could resolve. */
typedef struct {
    int checked, failed;
    double worst;                /* the largest |⟨g, d⟩ − slope| / bound */
    double power[RS_NUM_PARAMS]; /* per tensor: the smallest bound / |⟨g, d⟩| */
} directional_report;

/* Runs DIRECTIONS directional checks on every tensor of variant v against
 * grad (scaled by scale[i] for tensor i: the planted errors). quiet: print
 * nothing (a run that is expected to fail). */
static directional_report directional_checks(net_case *c, int v, const float *grad,
                                             const double *scale, int quiet)
{
    directional_report rep = {0};
    float *planted = malloc(c->model.layout.total * sizeof(float));
    ck_assert(planted != NULL);
    for (int i = 0; i < RS_NUM_PARAMS; i++) {
        const rs_tensor_info *t = &c->model.layout.info[i];
        rep.power[i] = INFINITY;
        if (!t->size)
            continue;
        for (size_t k = 0; k < t->size; k++)
            planted[t->offset + k] = (float)(grad[t->offset + k] * scale[i]);
        for (int k = 0; k < DIRECTIONS; k++) {
            gradcheck_dir_result r = gradcheck_direction(
                net_loss, net_signature, c, c->model.params + t->offset, planted + t->offset,
                t->size, gradcheck_seed((unsigned)v, (unsigned)i, (unsigned)k), 0.1f, 1e-6);
            const int holds = gradcheck_direction_holds(&r);
            if (!holds && !quiet)
                fprintf(stderr,
                        "%s %s direction %d (RNNSEARCH_GRADCHECK_SEED): <g,d> %.9g, fitted "
                        "slope %.9g, difference %.3g > bound %.3g (se %.3g, eps %g%s)\n",
                        kinds[v], t->name, k, r.analytic, r.numeric, fabs(r.analytic - r.numeric),
                        r.bound, r.se, r.eps, r.kinked ? ", every step crossed a kink" : "");
            rep.failed += !holds;
            if (!r.kinked && r.bound > 0.0)
                rep.worst = fmax(rep.worst, fabs(r.analytic - r.numeric) / r.bound);
            if (!r.kinked && r.power < rep.power[i])
                rep.power[i] = r.power;
        }
        rep.checked++;
    }
    free(planted);
    return rep;
}

static void unit_scales(double *scale)
{
    for (int i = 0; i < RS_NUM_PARAMS; i++)
        scale[i] = 1.0;
}

/* Every tensor's gradient along DIRECTIONS random directions, each within the
 * bound that the loss's measured rounding allows (gradcheck.h); and the checks
 * can see: each tensor resolves a 1 % error in some direction. */
START_TEST(network_directional_gradients)
{
    /* Weights of scale 1 rather than 0.5: with 0.5 the attention barely moves
     * the loss, so ⟨g, d⟩ of att.* is ~5e-4 and rounding hides a 2% error. */
    net_case c;
    float *grad = variant_gradient(&c, _i, 1.0f);
    double scale[RS_NUM_PARAMS];
    unit_scales(scale);
    const directional_report rep = directional_checks(&c, _i, grad, scale, 0);
    ck_assert_int_eq(rep.checked, tensors_present(_i));
    ck_assert_msg(rep.failed == 0, "%s: %d directions outside their bounds", kinds[_i], rep.failed);
    double coarsest = 0.0;
    for (int i = 0; i < RS_NUM_PARAMS; i++)
        if (c.model.layout.info[i].size) {
            ck_assert_msg(rep.power[i] <= 1e-2, "%s %s: no direction resolves a 1%% error (%.3g)",
                          kinds[_i], c.model.layout.info[i].name, rep.power[i]);
            coarsest = fmax(coarsest, rep.power[i]);
        }
    fprintf(stderr,
            "directional %s (variant %d): %d tensors x %d directions, within bounds "
            "(at most %.2g of one); the coarsest tensor resolves %.2g\n",
            kinds[_i], _i, rep.checked, DIRECTIONS, rep.worst, coarsest);
    free(grad);
    net_case_free(&c);
}
END_TEST

/* The checks' power, planted: the whole gradient scaled by 1.004 fails some
 * direction of the additive model, and att.W's alone 2 % too large fails one
 * of att.W's (the errors these checks exist for). */
START_TEST(network_directional_gradients_catch_planted_errors)
{
    net_case c;
    float *grad = variant_gradient(&c, 0, 1.0f);
    double scale[RS_NUM_PARAMS];
    for (int i = 0; i < RS_NUM_PARAMS; i++)
        scale[i] = 1.004;
    directional_report rep = directional_checks(&c, 0, grad, scale, 1);
    ck_assert_msg(rep.failed > 0, "a gradient scaled by 1.004 passed every direction");
    const int att_W = rs_param_index("att.W");
    ck_assert(att_W >= 0 && c.model.layout.info[att_W].size > 0);
    unit_scales(scale);
    scale[att_W] = 1.02;
    rep = directional_checks(&c, 0, grad, scale, 1);
    ck_assert_msg(rep.failed > 0, "att.W's gradient 2%% too large passed every direction");
    free(grad);
    net_case_free(&c);
}
END_TEST

/* Additive untied, then tied: the sentences' gradients are added into one
 * buffer, so a tied write that overwrote instead of adding would lose the
 * earlier ones. Then none: its context reads →h_S at each sentence's own
 * last position, not the batch's padded end (sources of 4, 1 and 3 tokens). */
START_TEST(padded_batch_equals_sentences_one_at_a_time)
{
    net_case c;
    rs_error err;
    net_case_init(&c, _i == 2 ? "none" : "additive", _i == 1);
    size_t total = c.model.layout.total;
    float *batched = calloc(total, sizeof(float)), *single = calloc(total, sizeof(float));
    rs_tensors gb, gs;
    rs_tensors_bind(&gb, &c.model.layout, batched);
    rs_tensors_bind(&gs, &c.model.layout, single);

    ck_assert(rs_batch_fill(&c.batch, 3, srcs, src_counts, tgts, tgt_counts, &err) == 0);
    double loss_batched = rs_network_forward(&c.ws, &c.w, &c.batch);
    float nll_rows[3] = {0};
    for (int t = 0; t < c.batch.T; t++)
        for (int b = 0; b < 3; b++)
            nll_rows[b] += c.ws.nll[t * 3 + b];
    rs_network_backward(&c.ws, &c.w, &c.batch, &gb, 0.0f, 1.0f);

    double loss_single = 0.0;
    for (int b = 0; b < 3; b++) {
        ck_assert(rs_batch_fill(&c.batch, 1, &srcs[b], &src_counts[b], &tgts[b], &tgt_counts[b],
                                &err) == 0);
        double l = rs_network_forward(&c.ws, &c.w, &c.batch);
        ck_assert_double_eq_tol(l, nll_rows[b], 1e-5 * fabs(l));
        loss_single += l;
        rs_network_backward(&c.ws, &c.w, &c.batch, &gs, 0.0f, 1.0f);
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

/* The tied model is the untied one with out.W = tgt_emb: the same loss, and
 * tgt_emb's gradient is the untied model's tgt_emb gradient plus its out.W
 * gradient (one accumulated into the other), every other gradient the same.
 * Two passes go into each buffer, as accumulated batches and shard 0 do:
 * dropping either use, or a write that replaces instead of adding (in
 * whichever order the two uses come), fails here. */
START_TEST(tied_gradient_is_the_sum_of_both_uses)
{
    net_case tied, untied;
    rs_error err;
    net_case_init(&tied, "additive", 1);
    net_case_init(&untied, "additive", 0);
    fill_uniform(tied.model.params, tied.model.layout.total, 0.5f, 11);
    /* Every untied tensor from the floats that back it in the tied model. */
    for (int i = 0; i < RS_NUM_PARAMS; i++) {
        const rs_tensor_info *from = rs_tensor_storage(&tied.model.layout, i);
        const rs_tensor_info *to = rs_tensor_storage(&untied.model.layout, i);
        ck_assert_int_eq(from != NULL, to != NULL);
        if (to) {
            ck_assert_uint_eq(from->size, to->size);
            memcpy(untied.model.params + to->offset, tied.model.params + from->offset,
                   sizeof(float) * to->size);
        }
    }
    ck_assert_ptr_eq(tied.model.w.out_W, tied.model.w.tgt_emb);
    ck_assert_uint_eq(untied.model.layout.total - tied.model.layout.total,
                      untied.model.layout.info[RS_P_out_W].size);
    net_case *cs[2] = {&tied, &untied};
    float *grad[2];
    rs_tensors g[2];
    double loss[2];
    for (int k = 0; k < 2; k++) {
        ck_assert(rs_batch_fill(&cs[k]->batch, 3, srcs, src_counts, tgts, tgt_counts, &err) == 0);
        grad[k] = calloc(cs[k]->model.layout.total, sizeof(float));
        ck_assert(grad[k] != NULL);
        rs_tensors_bind(&g[k], &cs[k]->model.layout, grad[k]);
        for (int pass = 0; pass < 2; pass++) {
            loss[k] = net_loss(cs[k]);
            rs_network_backward(&cs[k]->ws, &cs[k]->w, &cs[k]->batch, &g[k], 0.0f, 1.0f);
        }
    }
    ck_assert(loss[0] == loss[1]);
    const size_t emb = untied.model.layout.info[RS_P_tgt_emb].size;
    double worst = 0.0, out_part = 0.0, emb_part = 0.0;
    for (size_t k = 0; k < emb; k++) {
        double sum = (double)g[1].tgt_emb[k] + g[1].out_W[k];
        worst = fmax(worst, fabs(g[0].tgt_emb[k] - sum) / fmax(1e-3, fabs(sum)));
        out_part += fabs(g[1].out_W[k]);
        emb_part += fabs(g[1].tgt_emb[k]);
    }
    /* Both parts matter: neither is negligible beside the other. */
    ck_assert_msg(out_part > 0.1 * emb_part && emb_part > 0.1 * out_part, "%g %g", out_part,
                  emb_part);
    ck_assert_msg(worst < 1e-5, "tied tgt_emb gradient differs from the sum by %.3g", worst);
    for (int i = 0; i < RS_NUM_PARAMS; i++) {
        const rs_tensor_info *t = &tied.model.layout.info[i];
        if (!t->size || i == RS_P_tgt_emb)
            continue;
        const rs_tensor_info *u = &untied.model.layout.info[i];
        ck_assert_msg(!memcmp(grad[0] + t->offset, grad[1] + u->offset, sizeof(float) * t->size),
                      "%s: gradients differ", t->name);
    }
    for (int k = 0; k < 2; k++) {
        free(grad[k]);
        net_case_free(cs[k]);
    }
}
END_TEST

/* Row r of x [rows,m] is all zeros (returns 1), or row ids[r] of the table
 * times keep exactly (returns 0); anything else fails. */
static int dropped_row(const float *x, const float *table, const int *ids, int r, int m, float keep)
{
    const float *row = x + (size_t)r * m, *emb = table + (size_t)ids[r] * m;
    int zeros = 0;
    for (int k = 0; k < m; k++)
        zeros += row[k] == 0.0f;
    if (zeros == m)
        return 1;
    for (int k = 0; k < m; k++)
        ck_assert_msg(row[k] == emb[k] * keep, "row %d, [%d]: %g, not 0 nor %g x %g", r, k, row[k],
                      emb[k], keep);
    return 0;
}

/* Word dropout drops whole embedding rows, a fraction close to p of them,
 * scales the kept ones by 1 / (1 - p), and leaves the element dropout masks
 * as they are without it (each mask its own stream). */
START_TEST(word_dropout_drops_whole_rows_at_its_rate)
{
    enum { B = 64, LEN = 31, SEEDS = 4 };
    const float p_src = 0.25f, p_tgt = 0.5f;
    rs_config cfg;
    rs_error err;
    rs_config_defaults(&cfg);
    cfg.model.src_vocab = 9, cfg.model.tgt_vocab = 8, cfg.model.emb = 4, cfg.model.hidden = 3,
    cfg.model.att = 3, cfg.model.maxout = 2;
    rs_model model;
    rs_workspace ws, plain;
    rs_batch batch;
    ck_assert(rs_model_alloc(&model, &cfg, &err) == 0);
    const rs_network_weights w = rs_network_weights_of(&model);
    fill_uniform(model.params, model.layout.total, 0.5f, 11);
    ck_assert(rs_workspace_alloc(&ws, &model, B, LEN + 1, LEN + 1, &err) == 0);
    ck_assert(rs_workspace_alloc(&plain, &model, B, LEN + 1, LEN + 1, &err) == 0);
    ck_assert(rs_batch_alloc(&batch, B, LEN + 1, LEN + 1, &err) == 0);
    static int src[B][LEN], tgt[B][LEN];
    const int *srcs_[B], *tgts_[B];
    int counts[B];
    for (int b = 0; b < B; b++) {
        for (int k = 0; k < LEN; k++) {
            src[b][k] = RS_RESERVED + (b + 3 * k) % 5;
            tgt[b][k] = RS_RESERVED + (2 * b + k) % 4;
        }
        srcs_[b] = src[b], tgts_[b] = tgt[b], counts[b] = LEN;
    }
    ck_assert(rs_batch_fill(&batch, B, srcs_, counts, tgts_, counts, &err) == 0);
    const int S = batch.S, T = batch.T;
    const float src_keep = 1.0f / (1.0f - p_src), tgt_keep = 1.0f / (1.0f - p_tgt);
    int src_dropped = 0, tgt_dropped = 0;
    for (int seed = 0; seed < SEEDS; seed++) {
        plain.dropout.element = 0.1f;
        ws.dropout = (rs_dropout_rates){0.1f, p_src, p_tgt};
        rs_rng_seed(&ws.dropout_rng, 500 + seed);
        rs_rng_seed(&plain.dropout_rng, 500 + seed);
        rs_network_forward(&plain, &w, &batch);
        rs_network_forward(&ws, &w, &batch);
        ck_assert(!memcmp(ws.drop_src, plain.drop_src, sizeof(float) * S * B * cfg.model.emb));
        ck_assert(
            !memcmp(ws.drop_ann, plain.drop_ann, sizeof(float) * S * B * 2 * cfg.model.hidden));
        ck_assert(!memcmp(ws.drop_emb, plain.drop_emb, sizeof(float) * T * B * cfg.model.emb));
        ck_assert(!memcmp(ws.drop_out, plain.drop_out, sizeof(float) * T * B * cfg.model.maxout));
        /* Without element dropout, to see the embeddings themselves. */
        ws.dropout.element = 0.0f;
        rs_network_forward(&ws, &w, &batch);
        for (int r = 0; r < S * B; r++) {
            int d = dropped_row(ws.src_x, model.w.src_emb, batch.src, r, cfg.model.emb, src_keep);
            ck_assert(ws.drop_src_word[r] == (d ? 0.0f : src_keep));
            src_dropped += d;
        }
        for (int r = 0; r < T * B; r++) {
            int d =
                dropped_row(ws.dec_emb, model.w.tgt_emb, batch.tgt_in, r, cfg.model.emb, tgt_keep);
            ck_assert(ws.drop_tgt_word[r] == (d ? 0.0f : tgt_keep));
            tgt_dropped += d;
        }
    }
    const double src_rate = (double)src_dropped / (SEEDS * S * B);
    const double tgt_rate = (double)tgt_dropped / (SEEDS * T * B);
    /* 8192 draws each: a standard deviation of 0.005 at most. */
    ck_assert_msg(fabs(src_rate - p_src) < 0.02, "source: %.4f dropped, not %.2f", src_rate, p_src);
    ck_assert_msg(fabs(tgt_rate - p_tgt) < 0.02, "target: %.4f dropped, not %.2f", tgt_rate, p_tgt);
    rs_batch_free(&batch);
    rs_workspace_free(&plain);
    rs_workspace_free(&ws);
    rs_model_free(&model);
}
END_TEST

/* Translation's workspace (one table with training's) carves the encoder's
 * buffers for its sentences and one step's for its rows, none of training's,
 * and its encoder gives what a training workspace's gives. */
START_TEST(translation_workspace_is_the_encoder_and_one_step)
{
    enum { B = 3, ROWS = 12, LEN = 5 };
    rs_error err;
    rs_model model;
    tiny_model_make(&model, "additive", 0.5f, 0.0f, 3);
    const rs_network_weights w = rs_network_weights_of(&model);
    rs_workspace tr, training;
    ck_assert(rs_workspace_alloc_translation(&tr, &model, B, ROWS, LEN + 1, &err) == 0);
    ck_assert(rs_workspace_alloc(&training, &model, B, LEN + 1, 0, &err) == 0);
    ck_assert(!tr.d_src_x && !tr.drop_src && !tr.logits && !tr.nll && !tr.alpha && !tr.d_logits);
    const size_t n = (size_t)model.cfg.hidden, m = (size_t)model.cfg.emb;
    /* dec_emb is the step's [ROWS,m], right before query_proj in the table */
    ck_assert(tr.query_proj == tr.dec_emb + ROWS * m);
    /* dec_states is s_0 alone, [B,n], before tpre */
    ck_assert(tr.tpre == tr.dec_states + B * n);
    rs_batch batch;
    ck_assert(rs_batch_alloc(&batch, B, LEN + 1, 0, &err) == 0);
    static const int s0[] = {4, 5, 6, 7, 8}, s1[] = {5, 9}, s2[] = {6, 6, 7};
    const int *sources[B] = {s0, s1, s2}, counts[B] = {5, 2, 3};
    ck_assert(rs_batch_fill(&batch, B, sources, counts, NULL, NULL, &err) == 0);
    rs_encode(&tr, &w, &batch);
    rs_encode(&training, &w, &batch);
    const size_t S = (size_t)batch.S;
    ck_assert(!memcmp(tr.annotations, training.annotations, sizeof(float) * S * B * 2 * n));
    ck_assert(!memcmp(tr.dec_states, training.dec_states, sizeof(float) * B * n));
    rs_batch_free(&batch);
    rs_workspace_free(&tr);
    rs_workspace_free(&training);
    rs_model_free(&model);
}
END_TEST


/* The backward's stages (network.h), run one by one as a data-parallel
 * step runs them: their tensors partition the table, each once; each
 * stage's gradients, taken as soon as it is done, are already equal, bit
 * for bit, to what the whole backward leaves (a stage that names a tensor
 * too early, or a later one that writes it, would send a partial gradient
 * to the other ranks); the stages give rs_network_backward's bits; and
 * progress comes at least once per step of every recurrence (S = 4 source
 * positions in two directions, T = 5 decoder steps). */
static void count_progress(void *ctx)
{
    (*(int *)ctx)++;
}

START_TEST(backward_stages_complete_their_gradients)
{
    net_case c;
    variant_forward(&c, _i, 0.5f);
    const rs_layout *layout = &c.model.layout;
    float *grad = calloc(layout->total, sizeof(float));
    float *snapshot = calloc(layout->total, sizeof(float));
    ck_assert(grad && snapshot);
    int named[RS_NUM_PARAMS] = {0}, progress = 0;
    rs_tensors g;
    rs_tensors_bind(&g, layout, grad);
    c.ws.progress = count_progress;
    c.ws.progress_ctx = &progress;
    for (int s = 0; s < RS_BACKWARD_STAGES; s++) {
        int first, last;
        rs_backward_stage_tensors((rs_backward_stage)s, &first, &last);
        ck_assert_int_le(first, last);
        rs_network_backward_stage(&c.ws, &c.w, &c.batch, &g, 0.0f, 1.0f, (rs_backward_stage)s);
        for (int i = first; i <= last; i++) {
            const rs_tensor_info *t = &layout->info[i];
            named[i]++;
            memcpy(snapshot + t->offset, grad + t->offset, sizeof(float) * t->size);
        }
    }
    for (int i = 0; i < RS_NUM_PARAMS; i++)
        ck_assert_msg(named[i] == 1, "%s named by %d stages", layout->info[i].name, named[i]);
    /* Present tensors only: a tied out.W's floats are tgt_emb's. */
    for (int i = 0; i < RS_NUM_PARAMS; i++) {
        const rs_tensor_info *t = &layout->info[i];
        ck_assert_msg(!memcmp(snapshot + t->offset, grad + t->offset, sizeof(float) * t->size),
                      "%s changed after its stage was done", t->name);
    }
    /* Not a vacuous comparison: the snapshots saw real gradients. */
    double sumsq = 0.0;
    for (size_t k = 0; k < layout->total; k++)
        sumsq += (double)snapshot[k] * snapshot[k];
    ck_assert(sumsq > 0.0);
    ck_assert_int_ge(progress, 2 * c.batch.S + c.batch.T);
    net_case whole_case;
    float *whole = variant_gradient(&whole_case, _i, 0.5f);
    ck_assert(!memcmp(grad, whole, sizeof(float) * layout->total));
    free(grad);
    free(whole);
    free(snapshot);
    net_case_free(&c);
    net_case_free(&whole_case);
}
END_TEST

Suite *network_suite(void)
{
    Suite *s = suite_create("network");
    TCase *tc = tcase_create("whole model");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, network_gradients_match_finite_differences, 0, VARIANTS);
    tcase_add_loop_test(tc, network_directional_gradients, 0, VARIANTS);
    tcase_add_test(tc, network_directional_gradients_catch_planted_errors);
    tcase_add_loop_test(tc, padded_batch_equals_sentences_one_at_a_time, 0, 3);
    tcase_add_test(tc, tied_gradient_is_the_sum_of_both_uses);
    tcase_add_test(tc, word_dropout_drops_whole_rows_at_its_rate);
    tcase_add_test(tc, translation_workspace_is_the_encoder_and_one_step);
    tcase_add_loop_test(tc, backward_stages_complete_their_gradients, 0, VARIANTS);
    suite_add_tcase(s, tc);
    return s;
}
