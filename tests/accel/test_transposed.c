/* Transposed copies of the decoding weights (src/accel/transposed.c): the copy
 * is Wᵀ, bit for bit; the product by it is the product by W to float32
 * rounding (another call, so another order of sums on some kernels:
 * tests/support/roads.h), for one row and many, dense and strided W, writing and
 * accumulating, on shapes of the real models' products; a model's
 * translation step and its teacher-forced loss agree to rounding with the
 * copies and without, and are the same bits when run twice with them; a W_t
 * whose shape is not Wᵀ's goes to the shape handler. The same_bits suite
 * holds translate's outputs to the fixture's with the copies in use. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/batch.h"
#include "model/model.h"
#include "nn/linalg.h"
#include "nn/network.h"
#include "accel/accel.h"
#include "accel/transposed.h"
#include "roads.h"
#include "tinymodel.h"

static uint32_t next_u32(uint32_t *state)
{
    *state = *state * 1664525u + 1013904223u;
    return *state >> 8;
}

static void fill(float *x, size_t count, uint32_t *state)
{
    for (size_t i = 0; i < count; i++)
        x[i] = (float)(next_u32(state) & 0xffff) / 32768.0f - 1.0f;
}

START_TEST(the_copy_is_the_transpose)
{
    enum { R = 37, C = 70, STRIDE = 75 };
    static float W[R * STRIDE], t[C * R];
    uint32_t st = 1;
    fill(W, sizeof W / sizeof *W, &st);
    rs_transpose(t, RS_CMAT_S(W, R, C, STRIDE));
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++)
            ck_assert(t[c * R + r] == W[r * STRIDE + c]);
}
END_TEST

/* (out, in): the output layer, a GRU's U_zr, W'_c (in > OpenBLAS's K
 * block), a maxout product, an odd one. */
static const int shapes[][2] = {{1500, 128}, {512, 256}, {768, 512}, {256, 128}, {37, 19}};
static const int rows[] = {1, 2, 3, 7, 16, 33, 64};

START_TEST(the_product_by_the_copy_is_the_product_to_rounding)
{
    const int out = shapes[_i][0], in = shapes[_i][1], stride = in + 5;
    float *W = malloc(sizeof(float) * out * stride), *t = malloc(sizeof(float) * in * out);
    float *x = malloc(sizeof(float) * 64 * in), *y0 = malloc(sizeof(float) * 64 * out),
          *y1 = malloc(sizeof(float) * 64 * out), *before = malloc(sizeof(float) * 64 * out);
    uint32_t st = 7 + (uint32_t)_i;
    fill(W, (size_t)out * stride, &st);
    fill(x, (size_t)64 * in, &st);
    rs_transpose(t, RS_CMAT_S(W, out, in, stride));
    for (size_t k = 0; k < sizeof rows / sizeof *rows; k++)
        for (int beta = 0; beta <= 1; beta++) {
            const int B = rows[k];
            fill(before, (size_t)B * out, &st);
            memcpy(y0, before, sizeof(float) * B * out);
            memcpy(y1, before, sizeof(float) * B * out);
            const rs_cmat Wv = RS_CMAT_S(W, out, in, stride);
            rs_matmul_forward(RS_MAT(y0, B, out), RS_CMAT(x, B, in), Wv, (float)beta);
            rs_matmul_forward_t(RS_MAT(y1, B, out), RS_CMAT(x, B, in), Wv, RS_CMAT(t, in, out),
                                (float)beta);
            char what[96];
            snprintf(what, sizeof what, "[%d,%d] x [%d,%d]ᵀ, beta %d, the copy's product", B, in,
                     out, in, beta);
            roads_expect_product(what, y0, y1, x, W, stride, beta ? before : NULL, B, out, in);
        }
    free(W), free(t), free(x), free(y0), free(y1), free(before);
}
END_TEST

static char shape_message[512];

static void keep_message(const char *message)
{
    strncpy(shape_message, message, sizeof shape_message - 1);
}

START_TEST(a_copy_of_the_wrong_shape_is_a_shape_error)
{
    float W[6] = {0}, t[6] = {0}, x[4] = {0}, y[6] = {1, 1, 1, 1, 1, 1};
    rs_shape_handler previous = rs_set_shape_handler(keep_message);
    shape_message[0] = 0;
    /* W [3,2]: its copy must be [2,3], not [3,2] */
    rs_matmul_forward_t(RS_MAT(y, 2, 3), RS_CMAT(x, 2, 2), RS_CMAT(W, 3, 2), RS_CMAT(t, 3, 2),
                        0.0f);
    rs_set_shape_handler(previous);
    ck_assert_msg(strstr(shape_message, "rs_matmul_forward_t"), "%s", shape_message);
    ck_assert(y[0] == 1.0f); /* skipped */
}
END_TEST

/* A model of real proportions (widths over OpenBLAS's unroll, the context
 * product's in over its K block), each attention kind (_i: tiny_kinds). */
/* The transposed copies alone, as every decoding road makes them. */
static const rs_accel_options transposed = {.transposed = 1};

static void model_of(rs_model *model, int kind)
{
    const tiny_shape shape = {40, 300, 48, 80, 72, 40, kind};
    tiny_model_shaped(model, &shape, 0.3f, 11);
}

START_TEST(a_step_with_the_copies_is_the_step_to_rounding)
{
    enum { B = 3, ROWS = 9, LEN = 6 };
    rs_model model;
    model_of(&model, tiny_kinds[_i]);
    const int n = model.cfg.hidden, V = model.cfg.tgt_vocab;
    const int ka = rs_attention_key_size(model.cfg.attention, n, model.cfg.att);
    rs_workspace ws;
    rs_error err;
    ck_assert_int_eq(rs_workspace_alloc_translation(&ws, &model, B, ROWS, LEN, &err), 0);
    static float state[ROWS * 80], keys[LEN * B * 80], ann[LEN * B * 160];
    static float next[3][ROWS * 80], logits[3][ROWS * 300], lse[3][ROWS], alpha[3][ROWS * LEN];
    uint32_t st = 5;
    fill(state, sizeof state / sizeof *state, &st);
    ck_assert(ka <= 80 && n <= 80); /* the arrays' widths */
    fill(keys, (size_t)LEN * B * ka, &st);
    fill(ann, (size_t)LEN * B * 2 * n, &st);
    const int src_len[ROWS] = {6, 2, 5, 6, 1, 3, 4, 6, 2};
    const int sentence[ROWS] = {0, 1, 2, 0, 1, 2, 0, 1, 2};
    const int prev[ROWS] = {5, 7, 1, 2, 290, 3, 4, 9, 10};
    for (int rows_now = 1; rows_now <= ROWS; rows_now += ROWS - 1) {
        const rs_attention_source src = {keys, ann, src_len, rows_now, LEN, sentence, B};
        /* Without the copies, with them, and with them again. */
        rs_accel *a = NULL;
        for (int pass = 0; pass < 3; pass++) {
            if (pass == 1)
                ck_assert(a = rs_accel_new(&model, NULL, &transposed, &err));
            rs_accel_step *step = rs_accel_step_new(&model, a, ROWS, &err);
            ck_assert(step);
            const rs_network_weights *w = rs_accel_step_weights(step);
            ck_assert(pass == 0 || w->dec.U_g.fast);
            const rs_step_out out = {next[pass], ws.tmax, alpha[pass]};
            rs_network_step(&ws, &out, state, prev, &src, w);
            tiny_step_output(&ws, &w->out, rows_now, logits[pass], lse[pass]);
            rs_accel_step_free(step);
        }
        roads_expect_close("the next state", next[0], next[1], (size_t)rows_now * n);
        roads_expect_close("the logits", logits[0], logits[1], (size_t)rows_now * V);
        roads_expect_close("the log-normalisers", lse[0], lse[1], (size_t)rows_now);
        roads_expect_close("the alignment", alpha[0], alpha[1], (size_t)rows_now * LEN);
        /* One road run twice: the same bits. */
        ck_assert(!memcmp(next[1], next[2], sizeof(float) * rows_now * n));
        ck_assert(!memcmp(logits[1], logits[2], sizeof(float) * rows_now * V));
        ck_assert(!memcmp(lse[1], lse[2], sizeof(float) * rows_now));
        ck_assert(!memcmp(alpha[1], alpha[2], sizeof(float) * rows_now * LEN));
        rs_accel_free(a);
    }
    rs_workspace_free(&ws);
    rs_model_free(&model);
}
END_TEST

/* A shortlist's rows of W_out, gathered, and their transpose: the step's
 * logits over them agree to rounding either way. */
START_TEST(a_shortlist_step_with_its_transpose_is_the_step_to_rounding)
{
    enum { B = 2, ROWS = 6, LEN = 5, COUNT = 37 };
    rs_model model;
    model_of(&model, RS_ATT_ADDITIVE);
    const int n = model.cfg.hidden, l = model.cfg.maxout, V = model.cfg.tgt_vocab;
    const int ka = rs_attention_key_size(model.cfg.attention, n, model.cfg.att);
    rs_workspace ws;
    rs_error err;
    ck_assert_int_eq(rs_workspace_alloc_translation(&ws, &model, B, ROWS, LEN, &err), 0);
    static float state[ROWS * 80], keys[LEN * B * 80], ann[LEN * B * 160];
    static float next[ROWS * 80], logits[2][ROWS * COUNT], lse[2][ROWS], alpha[ROWS * LEN];
    static float rows_W[COUNT * 40], rows_b[COUNT];
    int ids[COUNT];
    uint32_t st = 9;
    fill(state, sizeof state / sizeof *state, &st);
    fill(keys, (size_t)LEN * B * ka, &st);
    fill(ann, (size_t)LEN * B * 2 * n, &st);
    for (int j = 0; j < COUNT; j++) {
        ids[j] = j < 4 ? j : 4 + 7 * j % (V - 4);
        memcpy(rows_W + j * l, model.w.out_W + (size_t)ids[j] * l, sizeof(float) * l);
        rows_b[j] = model.w.out_bw[ids[j]];
    }
    const int src_len[ROWS] = {5, 2, 4, 5, 1, 3};
    const int sentence[ROWS] = {0, 1, 0, 1, 0, 1}, prev[ROWS] = {5, 7, 1, 2, 290, 3};
    const rs_attention_source src = {keys, ann, src_len, ROWS, LEN, sentence, B};
    /* The rows as gathered here, then as accel/ gathers them for a model
     * with transposed copies (their transpose too). */
    rs_accel *a = NULL;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1)
            ck_assert(a = rs_accel_new(&model, NULL, &transposed, &err));
        rs_accel_step *step = rs_accel_step_new(&model, a, ROWS, &err);
        rs_accel_rows *gathered = step ? rs_accel_rows_new(step, COUNT, l, &err) : NULL;
        ck_assert(gathered);
        const rs_network_weights *w = rs_accel_step_weights(step);
        rs_readout_weights chosen = w->out;
        chosen.W_out = pass ? rs_accel_rows_gather(gathered, &model, ids, COUNT, 1)
                            : RS_LINEAR(RS_CMAT(rows_W, COUNT, l));
        chosen.b_out = rows_b;
        chosen.V = COUNT;
        ck_assert(pass == 0 || chosen.W_out.fast);
        const rs_step_out out = {next, ws.tmax, alpha};
        rs_network_step(&ws, &out, state, prev, &src, w);
        tiny_step_output(&ws, &chosen, ROWS, logits[pass], lse[pass]);
        rs_accel_rows_free(gathered);
        rs_accel_step_free(step);
    }
    roads_expect_close("the shortlist's logits", logits[0], logits[1], ROWS * COUNT);
    roads_expect_close("the shortlist's log-normalisers", lse[0], lse[1], ROWS);
    rs_workspace_free(&ws);
    rs_accel_free(a);
    rs_model_free(&model);
}
END_TEST

START_TEST(the_loss_with_the_copies_is_the_loss_to_rounding)
{
    rs_model model;
    model_of(&model, RS_ATT_ADDITIVE);
    rs_workspace ws;
    rs_batch batch;
    rs_error err;
    ck_assert_int_eq(rs_workspace_alloc(&ws, &model, 3, 8, 8, &err), 0);
    ck_assert_int_eq(rs_batch_alloc(&batch, 3, 8, 8, &err), 0);
    const int s0[] = {4, 5, 6, 7, 8, 9}, s1[] = {10, 11}, s2[] = {12, 13, 14, 15};
    const int t0[] = {20, 21, 22}, t1[] = {23, 24, 25, 26, 27}, t2[] = {299};
    const int *srcs[] = {s0, s1, s2}, *tgts[] = {t0, t1, t2};
    const int src_counts[] = {6, 2, 4}, tgt_counts[] = {3, 5, 1};
    ck_assert_int_eq(rs_batch_fill(&batch, 3, srcs, src_counts, tgts, tgt_counts, &err), 0);
    const rs_network_weights plain_w = rs_accel_weights(&model, NULL);
    const double plain = rs_network_forward(&ws, &plain_w, &batch);
    rs_accel *a = rs_accel_new(&model, NULL, &transposed, &err);
    ck_assert(a);
    const rs_network_weights w = rs_accel_weights(&model, a);
    ck_assert(w.out.W_out.fast && !plain_w.out.W_out.fast);
    const double copied = rs_network_forward(&ws, &w, &batch);
    roads_expect_close_value("the loss with the copies", plain, copied);
    ck_assert(rs_network_forward(&ws, &w, &batch) == copied); /* one road twice */
    rs_batch_free(&batch);
    rs_workspace_free(&ws);
    rs_accel_free(a);
    rs_model_free(&model);
}
END_TEST

Suite *transposed_suite(void)
{
    Suite *s = suite_create("transposed");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, the_copy_is_the_transpose);
    tcase_add_loop_test(tc, the_product_by_the_copy_is_the_product_to_rounding, 0,
                        sizeof shapes / sizeof *shapes);
    tcase_add_test(tc, a_copy_of_the_wrong_shape_is_a_shape_error);
    tcase_add_loop_test(tc, a_step_with_the_copies_is_the_step_to_rounding, 0, TINY_KINDS);
    tcase_add_test(tc, a_shortlist_step_with_its_transpose_is_the_step_to_rounding);
    tcase_add_test(tc, the_loss_with_the_copies_is_the_loss_to_rounding);
    suite_add_tcase(s, tc);
    return s;
}
