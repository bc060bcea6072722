/* The alignment model (src/nn/attention.c): each kind's backward pass (its
 * W_a gradient summed by rs_attention_query_backward) and its keys' against
 * central finite differences, with the loss L = Σ c ⊙ R for a fixed random R;
 * and the scores, weights and softmax against known answers. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "gradcheck.h"
#include "nn/attention.h"
#include "nn/attention_variants.h"

#define TOL GRADCHECK_LAYER_TOL
#define FLOOR GRADCHECK_LAYER_FLOOR

enum { AB = 2, AS = 4, AN = 3, AA = 5 };

/* A step of the model's kind, as the decoder step (network.c) calls it. */
static void attention_forward(const rs_attention_step *st, const rs_attention_source *src,
                              const rs_attention_weights *w)
{
    if (w->kind == RS_ATT_ADDITIVE)
        rs_attention_forward(st, src, w);
    else
        rs_attention_variant_forward(st, src, w);
}

static void attention_backward(const rs_attention_step_grads *d, const rs_attention_grads *g,
                               const rs_attention_step *st, const rs_attention_source *src,
                               const rs_attention_weights *w)
{
    if (w->kind == RS_ATT_ADDITIVE)
        rs_attention_backward(d, g, st, src, w);
    else
        rs_attention_variant_backward(d, g, st, src, w);
}

/* The kinds a model can have (model/params.h: 'dot' makes no model; none
 * is the fixed context c = [→h_S ; ←h_1]). */
static const int kinds[] = {RS_ATT_ADDITIVE, RS_ATT_GENERAL, RS_ATT_SCALED_DOT, RS_ATT_NONE};
enum { KINDS = sizeof kinds / sizeof *kinds };
typedef struct {
    int kind;
    float query[AB * AN], annotations[AS * AB * 2 * AN], keys[AS * AB * AA];
    float W_a[AA * AN], v_a[AA];
    float alpha[AB * AS], context[AB * 2 * AN], hidden[AB * AS * AA], query_proj[AB * AA];
    float weight[AB * 2 * AN];
    int src_len[AB];
} att_case;

static rs_attention_weights case_weights(const att_case *c)
{
    /* K or U_a is the keys' business: a step never reads it. */
    const int additive = c->kind == RS_ATT_ADDITIVE;
    return (rs_attention_weights){
        .kind = c->kind,
        .n = AN,
        .a = AA,
        .W = RS_LINEAR(additive ? RS_CMAT(c->W_a, AA, AN) : RS_CMAT(NULL, 0, 0)),
        .v = additive ? c->v_a : NULL};
}

static rs_attention_step case_step(att_case *c)
{
    return (rs_attention_step){.query = c->query,
                               .query_proj = c->query_proj,
                               .hidden = c->hidden,
                               .alpha = c->alpha,
                               .context = c->context};
}

static double att_loss(void *p)
{
    att_case *c = p;
    const rs_attention_weights w = case_weights(c);
    const rs_attention_source src = {c->keys, c->annotations, c->src_len, AB, AS, NULL, 0};
    const rs_attention_step st = case_step(c);
    attention_forward(&st, &src, &w);
    return gradcheck_weighted_sum(c->context, c->weight, AB * 2 * AN);
}

static void check_attention(int kind)
{
    att_case c;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    int ka = rs_attention_key_size(kind, AN, AA);
    fill_uniform(c.query, AB * AN, 1.0f, 11);
    fill_uniform(c.annotations, AS * AB * 2 * AN, 1.0f, 12);
    fill_uniform(c.keys, AS * AB * ka, 1.0f, 13);
    fill_uniform(c.W_a, AA * AN, 0.8f, 14);
    fill_uniform(c.v_a, AA, 1.0f, 15);
    fill_uniform(c.weight, AB * 2 * AN, 1.0f, 16);
    c.src_len[0] = AS, c.src_len[1] = 2;
    att_loss(&c);
    /* Padding gets exactly zero weight; each row sums to one (none: every
     * weight is 0, there is no alignment). */
    for (int j = 2; j < AS; j++)
        ck_assert(c.alpha[AS + j] == 0.0f);
    for (int b = 0; b < AB; b++) {
        float sum = 0.0f;
        for (int j = 0; j < AS; j++)
            sum += c.alpha[b * AS + j];
        ck_assert_float_eq_tol(sum, kind == RS_ATT_NONE ? 0.0f : 1.0f, 1e-6f);
    }
    float dquery[AB * AN] = {0}, dann[AS * AB * 2 * AN] = {0}, dkeys[AS * AB * AA] = {0};
    float dqp[AB * AA], dv[AA] = {0}, dW[AA * AN] = {0}, dalpha[AS], dscores[AS];
    const rs_attention_weights w = case_weights(&c);
    const rs_attention_source src = {c.keys, c.annotations, c.src_len, AB, AS, NULL, 0};
    const rs_attention_step st = case_step(&c);
    const rs_attention_step_grads d = {c.weight, dquery, dqp, dkeys, dann, dalpha, dscores};
    const int additive = kind == RS_ATT_ADDITIVE;
    const rs_attention_grads g = {additive ? dW : NULL, additive ? dv : NULL, NULL, NULL};
    attention_backward(&d, &g, &st, &src, &w);
    /* W_a's gradient is summed over all steps at once: here over this one. */
    rs_attention_query_backward(&g, RS_CMAT(dqp, AB, AA), RS_CMAT(c.query, AB, AN), &w);
    char what[64];
    snprintf(what, sizeof what, "%s dquery", rs_attention_kind_name(kind));
    gradcheck_expect(what, gradcheck(att_loss, &c, c.query, dquery, AB * AN, 100, 1e-2f, FLOOR),
                     TOL);
    snprintf(what, sizeof what, "%s dannotations", rs_attention_kind_name(kind));
    gradcheck_expect(
        what, gradcheck(att_loss, &c, c.annotations, dann, AS * AB * 2 * AN, 100, 1e-2f, FLOOR),
        TOL);
    snprintf(what, sizeof what, "%s dkeys", rs_attention_kind_name(kind));
    if (ka > 0) /* none has no keys */
        gradcheck_expect(
            what, gradcheck(att_loss, &c, c.keys, dkeys, (size_t)AS * AB * ka, 100, 1e-2f, FLOOR),
            TOL);
    if (additive) {
        gradcheck_expect("additive dW_a",
                         gradcheck(att_loss, &c, c.W_a, dW, AA * AN, 100, 1e-2f, FLOOR), TOL);
        gradcheck_expect("additive dv_a", gradcheck(att_loss, &c, c.v_a, dv, AA, 100, 1e-2f, FLOOR),
                         TOL);
    }
}

START_TEST(attention_matches_finite_differences)
{
    check_attention(kinds[_i]);
}
END_TEST

typedef struct {
    int kind;
    float annotations[AS * 2 * AN], U[AA * 2 * AN], b[AA], keys[AS * AA], weight[AS * AA];
} keys_case;

static rs_attention_weights keys_weights(const keys_case *c)
{
    const int additive = c->kind == RS_ATT_ADDITIVE;
    const int ka = rs_attention_key_size(c->kind, AN, AA);
    return (rs_attention_weights){.kind = c->kind,
                                  .n = AN,
                                  .a = AA,
                                  .U = RS_LINEAR(RS_CMAT(c->U, ka, 2 * AN)),
                                  .b = additive ? c->b : NULL};
}

static double keys_loss(void *p)
{
    keys_case *c = p;
    const int ka = rs_attention_key_size(c->kind, AN, AA);
    const rs_attention_weights w = keys_weights(c);
    rs_attention_keys_forward(RS_MAT(c->keys, AS, ka), RS_CMAT(c->annotations, AS, 2 * AN), &w);
    return gradcheck_weighted_sum(c->keys, c->weight, (size_t)AS * ka);
}

START_TEST(attention_keys_match_finite_differences)
{
    keys_case c;
    c.kind = kinds[_i];
    int ka = rs_attention_key_size(c.kind, AN, AA);
    fill_uniform(c.annotations, AS * 2 * AN, 1.0f, 21);
    fill_uniform(c.U, AA * 2 * AN, 1.0f, 22);
    fill_uniform(c.b, AA, 1.0f, 23);
    fill_uniform(c.weight, AS * AA, 1.0f, 24);
    float dann[AS * 2 * AN] = {0}, dU[AA * 2 * AN] = {0}, db[AA] = {0};
    const rs_attention_weights w = keys_weights(&c);
    const rs_attention_grads g = {NULL, NULL, dU, c.kind == RS_ATT_ADDITIVE ? db : NULL};
    rs_attention_keys_backward(RS_MAT(dann, AS, 2 * AN), &g, RS_CMAT(c.weight, AS, ka),
                               RS_CMAT(c.annotations, AS, 2 * AN), &w);
    gradcheck_expect("keys dannotations",
                     gradcheck(keys_loss, &c, c.annotations, dann, AS * 2 * AN, 100, 1e-2f, FLOOR),
                     TOL);
    if (ka == 0) /* none: no keys, no U, nothing sent back */
        return;
    gradcheck_expect(
        "keys dU", gradcheck(keys_loss, &c, c.U, dU, (size_t)ka * 2 * AN, 100, 1e-2f, FLOOR), TOL);
    if (c.kind == RS_ATT_ADDITIVE)
        gradcheck_expect("keys db", gradcheck(keys_loss, &c, c.b, db, AA, 100, 1e-2f, FLOOR), TOL);
}
END_TEST

/* Rows that read their sentence through the map (a beam's rows, rows left
 * after others finished) get exactly what a copy of that sentence gives. */
START_TEST(attention_rows_read_their_sentence_through_the_map)
{
    att_case c;
    memset(&c, 0, sizeof c);
    c.kind = kinds[_i];
    const int ka = rs_attention_key_size(c.kind, AN, AA);
    fill_uniform(c.annotations, AS * AB * 2 * AN, 1.0f, 41);
    fill_uniform(c.keys, AS * AB * ka, 1.0f, 42);
    fill_uniform(c.W_a, AA * AN, 0.8f, 43);
    fill_uniform(c.v_a, AA, 1.0f, 44);
    enum { ROWS = 3 };
    const int sentence[ROWS] = {1, 0, 1}, src_len[AB] = {AS, 2};
    int row_len[ROWS];
    float query[ROWS * AN], copy_keys[AS * ROWS * AA], copy_ann[AS * ROWS * 2 * AN];
    fill_uniform(query, ROWS * AN, 1.0f, 45);
    for (int r = 0; r < ROWS; r++) {
        row_len[r] = src_len[sentence[r]];
        for (int j = 0; j < AS; j++) {
            memcpy(copy_keys + ((size_t)j * ROWS + r) * ka,
                   c.keys + ((size_t)j * AB + sentence[r]) * ka, sizeof(float) * ka);
            memcpy(copy_ann + ((size_t)j * ROWS + r) * 2 * AN,
                   c.annotations + ((size_t)j * AB + sentence[r]) * 2 * AN, sizeof(float) * 2 * AN);
        }
    }
    const rs_attention_weights w = case_weights(&c);
    float alpha[2][ROWS * AS], hidden[2][ROWS * AS * AA], qp[2][ROWS * AA], ctx[2][ROWS * 2 * AN];
    const rs_attention_source mapped = {c.keys, c.annotations, row_len, ROWS, AS, sentence, AB};
    const rs_attention_source copied = {copy_keys, copy_ann, row_len, ROWS, AS, NULL, 0};
    rs_attention_step st[2];
    for (int k = 0; k < 2; k++)
        st[k] = (rs_attention_step){.query = query,
                                    .query_proj = qp[k],
                                    .hidden = hidden[k],
                                    .alpha = alpha[k],
                                    .context = ctx[k]};
    attention_forward(&st[0], &mapped, &w);
    attention_forward(&st[1], &copied, &w);
    ck_assert(!memcmp(ctx[0], ctx[1], sizeof ctx[0]));
    ck_assert(!memcmp(alpha[0], alpha[1], sizeof alpha[0]));
}
END_TEST

/* none: c = [→h_S ; ←h_1] with S each row's own length, however long the
 * padded batch; the same c for any query. */
START_TEST(fixed_context_reads_each_sentences_own_ends)
{
    att_case c;
    memset(&c, 0, sizeof c);
    c.kind = RS_ATT_NONE;
    fill_uniform(c.annotations, AS * AB * 2 * AN, 1.0f, 51);
    fill_uniform(c.query, AB * AN, 1.0f, 52);
    c.src_len[0] = AS, c.src_len[1] = 2;
    const rs_attention_weights w = case_weights(&c);
    const rs_attention_source src = {NULL, c.annotations, c.src_len, AB, AS, NULL, 0};
    const rs_attention_step st = case_step(&c);
    attention_forward(&st, &src, &w);
    for (int b = 0; b < AB; b++) {
        const float *last = c.annotations + ((size_t)(c.src_len[b] - 1) * AB + b) * 2 * AN;
        const float *first = c.annotations + (size_t)b * 2 * AN;
        for (int k = 0; k < AN; k++) {
            ck_assert(c.context[b * 2 * AN + k] == last[k]);
            ck_assert(c.context[b * 2 * AN + AN + k] == first[AN + k]);
        }
    }
    float before[AB * 2 * AN];
    memcpy(before, c.context, sizeof before);
    fill_uniform(c.query, AB * AN, 1.0f, 53);
    attention_forward(&st, &src, &w);
    ck_assert(!memcmp(before, c.context, sizeof before));
}
END_TEST

START_TEST(attention_known_answers)
{
    /* General scores of query (1,2) against keys K h_j = (1,0), (0,1), (1,1)
     * are (1,2,3); with the keys as values the context is (0.7553, 0.9100). */
    float query[2] = {1, 2}, keys[6] = {1, 0, 0, 1, 1, 1};
    float annotations[12] = {1, 0, 0, 0, 0, 1, 0, 0, 1, 1, 0, 0};
    float alpha[3], context[4];
    int len = 3;
    const rs_attention_weights w = {.kind = RS_ATT_GENERAL, .n = 2, .a = 1};
    const rs_attention_source src = {keys, annotations, &len, 1, 3, NULL, 0};
    const rs_attention_step st = {.query = query, .alpha = alpha, .context = context};
    attention_forward(&st, &src, &w);
    ck_assert_float_eq_tol(alpha[0], 0.0900f, 5e-5f);
    ck_assert_float_eq_tol(alpha[1], 0.2447f, 5e-5f);
    ck_assert_float_eq_tol(alpha[2], 0.6652f, 5e-5f);
    ck_assert_float_eq_tol(context[0], 0.7553f, 5e-5f);
    ck_assert_float_eq_tol(context[1], 0.9100f, 5e-5f);
    ck_assert(context[2] == 0.0f && context[3] == 0.0f);
    float scores[5] = {1, 5, 2, 1, 1};
    rs_attention_softmax(scores, 5, 5);
    const float expected[5] = {0.0166f, 0.9052f, 0.0451f, 0.0166f, 0.0166f};
    for (int j = 0; j < 5; j++)
        ck_assert_float_eq_tol(scores[j], expected[j], 5e-5f);
    /* Masked entries are exactly zero and the rest still sums to one. */
    float masked[4] = {3, 1, 100, 100};
    rs_attention_softmax(masked, 2, 4);
    ck_assert(masked[2] == 0.0f && masked[3] == 0.0f);
    ck_assert_float_eq_tol(masked[0] + masked[1], 1.0f, 1e-6f);
}
END_TEST

Suite *attention_suite(void)
{
    Suite *s = suite_create("attention");
    TCase *tc = tcase_create("gradients");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, attention_matches_finite_differences, 0, KINDS);
    tcase_add_loop_test(tc, attention_keys_match_finite_differences, 0, KINDS);
    tcase_add_loop_test(tc, attention_rows_read_their_sentence_through_the_map, 0, KINDS);
    suite_add_tcase(s, tc);
    TCase *known = tcase_create("known answers");
    tcase_add_test(known, attention_known_answers);
    tcase_add_test(known, fixed_context_reads_each_sentences_own_ends);
    suite_add_tcase(s, known);
    return s;
}
