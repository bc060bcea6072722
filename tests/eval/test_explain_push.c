/* explain's push (eval/explain_step.c): α_i forced onto source position j
 * makes step i's context exactly h_j; the translation after the push is
 * the prefix, the pushed step's greedy word, then greedy decoding from its
 * state, as a decoder run by hand gives it; pushing the model's own α
 * changes nothing (rs_greedy's translation); and a position, a step or an
 * α out of range is refused naming the value and the range. On a tiny
 * model trained for the test. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "eval/explain_step.h"
#include "search/decode.h"
#include "testdir.h"
#include "testprog.h"

static const char *const sentence = "das haus ist gross";
enum { S = 5 }; /* four words and </s> */

static char dir[64];
static rs_ready model;
static rs_codec codec;

static void train_model(void)
{
    char path[128], args[1024];
    static char text[65536];
    testdir_make(dir, "rnnsearch-explain-push");
    snprintf(path, sizeof path, "%s/train.tsv", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 20; i++)
        fputs("das haus ist gross\tthe house is big\nein kleines haus\ta small house\n"
              "das haus\tthe house\n",
              f);
    ck_assert_int_eq(fclose(f), 0);
    snprintf(args, sizeof args,
             "train --train %s --out %s/m --tokenizer space --epochs 40 --batch-size 6 --emb 8 "
             "--hidden 8 --att 6 --maxout 4 --lr 0.02 --threads 1 --quiet 2>&1",
             path, dir);
    ck_assert_msg(testprog_run(args, text, sizeof text) == 0, "%s", text);
    snprintf(path, sizeof path, "%s/m", dir);
    rs_error err;
    memset(&model, 0, sizeof model);
    memset(&codec, 0, sizeof codec);
    ck_assert_msg(!rs_cli_load_model(path, &model, &codec, &err), "%s", err.msg);
}

static void forget_model(void)
{
    rs_codec_free(&codec);
    rs_ready_free(&model);
    testdir_remove(dir);
}

/* The translation after pushing step i's α, by hand: the decoder along
 * the prefix to step i, its state replaced by the pushed step's s_i, y_i
 * the pushed step's best word, then the decoder's greedy words. */
static int by_hand(const rs_explained_step *x, int *out)
{
    rs_error err;
    rs_decoder dec;
    const rs_ready *models[1] = {&model};
    int src[S - 1], count = 0;
    for (int j = 0; j < S - 1; j++)
        src[j] = x->src_ids[j];
    const int *srcs = src;
    const int src_count = S - 1;
    ck_assert_msg(!rs_decoder_init(&dec, models, 1, 1, 1, S, &err), "%s", err.msg);
    ck_assert_msg(!rs_decoder_start(&dec, 1, &srcs, &src_count, 1, &err), "%s", err.msg);
    for (int k = 0; k < x->step; k++) {
        rs_decoder_step(&dec, &x->prefix[k]);
        if (k < x->step - 1) {
            out[count++] = x->prefix[k + 1];
            rs_decoder_select(&dec, NULL, 1);
        }
    }
    int y = RS_EOS;
    for (int v = 0; v < x->V; v++)
        if (v != RS_PAD && v != RS_BOS && v != RS_EOS && x->logp[v] > x->logp[y])
            y = v;
    for (int u = 0; u < x->n; u++)
        dec.member[0].next_state[u] = (float)x->s[u];
    rs_decoder_select(&dec, NULL, 1);
    const int limit = rs_output_limit(0, src_count);
    while (y != RS_EOS && count < limit) {
        out[count++] = y;
        rs_decoder_step(&dec, &y);
        rs_decoder_select(&dec, NULL, 1);
        int best = RS_EOS;
        for (int v = 0; v < x->V; v++)
            if (v != RS_PAD && v != RS_BOS && v != RS_EOS && dec.logits[v] > dec.logits[best])
                best = v;
        y = best;
    }
    rs_decoder_free(&dec);
    return count;
}

START_TEST(pushing_onto_j_makes_the_context_h_j)
{
    rs_error err;
    rs_explained_step plain;
    const rs_explain_step_request one = {.source = sentence, .step = 1};
    ck_assert_msg(!rs_explain_step_compute(&plain, &model, &codec, &one, &err), "%s", err.msg);
    rs_explained_step_free(&plain);
    int steps = 0, changed = 0;
    for (int i = 1; !steps || i <= steps; i++) {
        for (int j = 1; j <= S; j++) {
            rs_explained_step x;
            const rs_explain_step_request rq = {sentence, NULL, i, 1, j, NULL, 0, 0};
            ck_assert_msg(!rs_explain_step_compute(&x, &model, &codec, &rq, &err), "%s", err.msg);
            steps = x.old_count + 1;
            ck_assert_int_eq(x.S, S);
            ck_assert(x.pushed);
            for (int k = 0; k < S; k++)
                ck_assert_double_eq(x.alpha[k], k == j - 1 ? 1.0 : 0.0);
            /* c_i = h_j, exactly: 1·h_j plus zeros */
            for (int k = 0; k < 2 * x.n; k++)
                ck_assert_msg(x.c[k] == x.h[(size_t)(j - 1) * 2 * x.n + k],
                              "step %d, j %d, c[%d] %.17g, h_j %.17g", i, j, k, x.c[k],
                              x.h[(size_t)(j - 1) * 2 * x.n + k]);
            int want[64];
            const int count = by_hand(&x, want);
            ck_assert_int_eq(x.new_count, count);
            for (int k = 0; k < count; k++)
                ck_assert_int_eq(x.new_ids[k], want[k]);
            /* the prefix stays, and its rows of the alignment; the pushed row is α_i */
            for (int k = 0; k < i - 1; k++)
                ck_assert_int_eq(x.new_ids[k], x.old_ids[k]);
            for (int k = 0; k < (i - 1) * S; k++)
                ck_assert_float_eq(x.new_alpha[k], x.old_alpha[k]);
            for (int k = 0; k < S; k++)
                ck_assert_float_eq(x.new_alpha[(size_t)(i - 1) * S + k], k == j - 1 ? 1.0f : 0.0f);
            changed += strcmp(x.old_text, x.new_text) != 0;
            rs_explained_step_free(&x);
        }
    }
    ck_assert_int_ge(steps, 2);
    /* some push must change the translation, or the test shows nothing */
    ck_assert_int_gt(changed, 0);
}
END_TEST

/* Pushing the α the softmax gives anyway leaves greedy search's translation. */
START_TEST(pushing_the_models_own_alpha_changes_nothing)
{
    rs_error err;
    for (int i = 1; i <= 3; i++) {
        rs_explained_step plain, x;
        const rs_explain_step_request rq = {.source = sentence, .step = i};
        ck_assert_msg(!rs_explain_step_compute(&plain, &model, &codec, &rq, &err), "%s", err.msg);
        const rs_explain_step_request push = {sentence, NULL, i, 0, 0, plain.alpha, plain.S, 0};
        ck_assert_msg(!rs_explain_step_compute(&x, &model, &codec, &push, &err), "%s", err.msg);
        ck_assert_str_eq(x.new_text, x.old_text);
        ck_assert_int_eq(x.new_count, x.old_count);
        for (int k = 0; k < plain.S; k++)
            ck_assert_double_eq(x.softmax_alpha[k], plain.alpha[k]);
        rs_explained_step_free(&plain);
        rs_explained_step_free(&x);
    }
}
END_TEST

START_TEST(pushes_out_of_range_are_refused)
{
    static const double two[] = {0.5, 0.5}, neg[] = {1.5, -0.5, 0, 0, 0},
                        half[] = {0.25, 0.25, 0, 0, 0};
    static const struct {
        rs_explain_step_request rq;
        const char *said;
    } bad[] = {
        {{"das haus ist gross", NULL, 1, 1, 0, NULL, 0, 0},
         "--attend 0: the sentence has 4 tokens and </s>, so positions 1 to 5"},
        {{"das haus ist gross", NULL, 1, 1, 6, NULL, 0, 0},
         "--attend 6: the sentence has 4 tokens and </s>, so positions 1 to 5"},
        {{"das haus ist gross", NULL, 40, 1, 2, NULL, 0, 0},
         "--step 40: the greedy translation has"},
        {{"das haus ist gross", NULL, 1, 0, 0, two, 2, 0},
         "--alpha has 2 values: the sentence has 4 "
         "tokens and </s>, so 5 values"},
        {{"das haus ist gross", NULL, 1, 0, 0, neg, 5, 0}, "--alpha: value 2 is -0.5"},
        {{"das haus ist gross", NULL, 1, 0, 0, half, 5, 0}, "--alpha sums to 0.5"},
        {{"das haus ist gross", "the house", 1, 1, 2, NULL, 0, 0}, "leave out --target"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        rs_explained_step x;
        rs_error err = {{0}};
        ck_assert_int_eq(rs_explain_step_compute(&x, &model, &codec, &bad[k].rq, &err), -1);
        ck_assert_msg(strstr(err.msg, bad[k].said), "%zu: '%s' not in '%s'", k, bad[k].said,
                      err.msg);
    }
    /* the command: the α table marked, the translation before and after */
    char args[1024], *out, *errs;
    snprintf(args, sizeof args, "explain -m %s/m '%s' --step 1 --attend 4", dir, sentence);
    ck_assert_msg(testprog_run_split(args, &out, &errs) == 0, "%s", errs);
    ck_assert_msg(strstr(out, "α_ij pushed") && strstr(out, "9. the push") &&
                      strstr(out, "   before: ") && strstr(out, "   after:  "),
                  "%s", out);
    free(out), free(errs);
    snprintf(args, sizeof args, "explain -m %s/m '%s' --step 1 --alpha 0,0,0.5,0.5,x", dir,
             sentence);
    ck_assert_int_eq(testprog_run_split(args, &out, &errs), 2);
    ck_assert_msg(strstr(errs, "value 5 is not a number"), "%s", errs);
    free(out), free(errs);
    snprintf(args, sizeof args, "explain -m %s/m '%s' --step 1 --attend 9", dir, sentence);
    ck_assert_int_eq(testprog_run_split(args, &out, &errs), 2);
    ck_assert_msg(
        strstr(errs, "--attend 9: the sentence has 4 tokens and </s>, so positions 1 to 5"), "%s",
        errs);
    free(out), free(errs);
}
END_TEST

Suite *explain_push_suite(void)
{
    Suite *s = suite_create("explain_push");
    TCase *tc = tcase_create("push");
    tcase_set_timeout(tc, 120);
    /* one model for the three tests, trained once in the runner */
    tcase_add_unchecked_fixture(tc, train_model, forget_model);
    tcase_add_test(tc, pushing_onto_j_makes_the_context_h_j);
    tcase_add_test(tc, pushing_the_models_own_alpha_changes_nothing);
    tcase_add_test(tc, pushes_out_of_range_are_refused);
    suite_add_tcase(s, tc);
    return s;
}
