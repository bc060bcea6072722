/* The whole network's loss and gradient against an independent computation:
 * tests/support/reference-score.py, a plain-Python float64 model.md, computed
 * Σ -log p of three pairs and its gradient (central differences, h = 1e-6)
 * for tiny models (Vs = Vt = 9, m = 3, n = 4, a = 5, l = 3) with additive and
 * with scaled-dot attention, and without (none: the fixed context
 * c = [→h_S ; ←h_1]). The fixture in tests/fixtures/gradient/ holds
 * the weights (KIND.safetensors), the pairs as ids without </s> (pairs.txt)
 * and the loss and every tensor's gradient (KIND.grad.txt: `loss X`, then
 * `tensor NAME COUNT` and COUNT values). Regenerate it with
 *
 *     tests/support/reference-score.py --gradient-fixture tests/fixtures/gradient
 *
 * (fixed seeds: the same files come out). Unlike the finite-difference tests,
 * this compares our float32 backward pass with a computation that shares no
 * code with it. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/network.h"
#include "model/safetensors.h"

#define FIXTURE_DIR "tests/fixtures/gradient"
enum { MAX_PAIRS = 8, MAX_LEN = 16 };

/* Gradients are of order 1e-4 to 1; float32 rounding leaves ~1e-6 relative,
 * and up to 5e-8 absolute where terms cancel (measured worst: 4.7e-5 of the
 * floor, in enc_fwd.U). Entries below FLOOR are compared in absolute terms.
 * A gradient 0.4% off anywhere in a tensor fails by a factor of 20. */
#define GRAD_TOL 2e-4
#define FLOOR 1e-3

typedef struct {
    int count;
    int src[MAX_PAIRS][MAX_LEN], tgt[MAX_PAIRS][MAX_LEN];
    int src_count[MAX_PAIRS], tgt_count[MAX_PAIRS];
} id_pairs;

/* One side of a pairs.txt line: ids separated by spaces, up to the tab or end. */
static int parse_ids(const char **p, int *ids)
{
    int count = 0;
    char *end;
    for (;;) {
        while (**p == ' ')
            (*p)++;
        if (**p == '\t' || **p == '\n' || **p == '\0')
            break; /* strtol would skip the tab */
        long v = strtol(*p, &end, 10);
        if (end == *p)
            break;
        ck_assert_int_lt(count, MAX_LEN);
        ids[count++] = (int)v;
        *p = end;
    }
    return count;
}

static void read_pairs(id_pairs *pairs)
{
    FILE *f = fopen(FIXTURE_DIR "/pairs.txt", "r");
    ck_assert_msg(f != NULL, "cannot open " FIXTURE_DIR "/pairs.txt");
    char line[512];
    pairs->count = 0;
    while (fgets(line, sizeof line, f)) {
        int i = pairs->count++;
        ck_assert_int_le(pairs->count, MAX_PAIRS);
        const char *p = line;
        pairs->src_count[i] = parse_ids(&p, pairs->src[i]);
        ck_assert_msg(*p == '\t', "pairs.txt line %d: no tab after the source ids", i + 1);
        p++;
        pairs->tgt_count[i] = parse_ids(&p, pairs->tgt[i]);
    }
    fclose(f);
    ck_assert_int_gt(pairs->count, 0);
}

static void check_fixture(const char *kind)
{
    char path[256];
    rs_error err;
    rs_model model;
    snprintf(path, sizeof path, FIXTURE_DIR "/%s.safetensors", kind);
    ck_assert_msg(rs_safetensors_import(path, &model, &err) == 0, "%s", err.msg);
    ck_assert_str_eq(rs_attention_names[model.cfg.attention], kind);

    id_pairs pairs;
    read_pairs(&pairs);
    const int *src[MAX_PAIRS], *tgt[MAX_PAIRS];
    for (int i = 0; i < pairs.count; i++)
        src[i] = pairs.src[i], tgt[i] = pairs.tgt[i];
    rs_workspace ws;
    rs_batch batch;
    ck_assert(rs_workspace_alloc(&ws, &model, pairs.count, MAX_LEN + 1, MAX_LEN + 1, &err) == 0);
    ck_assert(rs_batch_alloc(&batch, pairs.count, MAX_LEN + 1, MAX_LEN + 1, &err) == 0);
    ck_assert_msg(
        rs_batch_fill(&batch, pairs.count, src, pairs.src_count, tgt, pairs.tgt_count, &err) == 0,
        "%s", err.msg);
    float *grad = calloc(model.layout.total, sizeof(float));
    ck_assert(grad != NULL);
    rs_tensors g;
    rs_tensors_bind(&g, &model.layout, grad);
    const rs_network_weights w = rs_network_weights_of(&model);
    double loss = rs_network_forward(&ws, &w, &batch);
    rs_network_backward(&ws, &w, &batch, &g, 0.0f, 1.0f);

    snprintf(path, sizeof path, FIXTURE_DIR "/%s.grad.txt", kind);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    double expected_loss;
    ck_assert_msg(fscanf(f, " loss %lf", &expected_loss) == 1, "%s: no loss line", path);
    ck_assert_msg(fabs(loss - expected_loss) <= 1e-6 * fabs(expected_loss),
                  "%s: loss %.9f, expected %.9f", kind, loss, expected_loss);

    int seen[RS_NUM_PARAMS] = {0}, tensors = 0;
    char name[64];
    size_t count;
    double worst = 0.0;
    while (fscanf(f, " tensor %63s %zu", name, &count) == 2) {
        int index = rs_param_index(name);
        ck_assert_msg(index >= 0, "%s: unknown tensor '%s'", path, name);
        const rs_tensor_info *t = &model.layout.info[index];
        ck_assert_msg(count == t->size && !seen[index], "%s: tensor %s: %zu values (size %zu)",
                      path, name, count, t->size);
        seen[index] = 1;
        tensors++;
        double tensor_worst = 0.0;
        size_t worst_at = 0;
        float worst_got = 0.0f;
        double worst_want = 0.0;
        for (size_t k = 0; k < count; k++) {
            double want;
            ck_assert_msg(fscanf(f, "%lf", &want) == 1, "%s: %s has fewer than %zu values", path,
                          name, count);
            float got = grad[t->offset + k];
            ck_assert_msg(isfinite(got), "%s %s[%zu]: non-finite gradient", kind, name, k);
            double e = fabs(got - want) / fmax(fabs(want), FLOOR);
            if (e > tensor_worst || k == 0)
                tensor_worst = e, worst_at = k, worst_got = got, worst_want = want;
        }
        if (tensor_worst > GRAD_TOL)
            fprintf(stderr, "%s %s: worst error %.3g at %zu (ours %.9g, reference %.9g)\n", kind,
                    name, tensor_worst, worst_at, worst_got, worst_want);
        ck_assert_msg(tensor_worst <= GRAD_TOL, "%s %s[%zu]: %.9g, reference %.9g (error %.3g)",
                      kind, name, worst_at, worst_got, worst_want, tensor_worst);
        worst = fmax(worst, tensor_worst);
    }
    ck_assert_msg(feof(f) || fscanf(f, " %*s") == EOF, "%s: unparsed text after the tensors", path);
    fclose(f);
    for (int i = 0; i < RS_NUM_PARAMS; i++)
        ck_assert_msg(seen[i] == (model.layout.info[i].size > 0), "%s: tensor %s %s", path,
                      model.layout.info[i].name, seen[i] ? "should be absent" : "is missing");
    fprintf(stderr, "gradient fixture %s: loss relative error %.2g, %d tensors, worst error %.2g\n",
            kind, fabs(loss - expected_loss) / fabs(expected_loss), tensors, worst);

    free(grad);
    rs_batch_free(&batch);
    rs_workspace_free(&ws);
    rs_model_free(&model);
}

START_TEST(additive_gradient_matches_python_reference)
{
    check_fixture("additive");
}
END_TEST

START_TEST(scaled_dot_gradient_matches_python_reference)
{
    check_fixture("scaled-dot");
}
END_TEST

START_TEST(none_gradient_matches_python_reference)
{
    check_fixture("none");
}
END_TEST

Suite *gradient_fixture_suite(void)
{
    Suite *s = suite_create("gradient fixture");
    TCase *tc = tcase_create("python reference");
    tcase_add_test(tc, additive_gradient_matches_python_reference);
    tcase_add_test(tc, scaled_dot_gradient_matches_python_reference);
    tcase_add_test(tc, none_gradient_matches_python_reference);
    suite_add_tcase(s, tc);
    return s;
}
