/* Conformance: a random model in the interchange format and the
 * log-probabilities an independent float64 implementation of model.md
 * computes for pairs of words. Import + tokenize + score must reproduce every
 * value. Two sets: our own in tests/fixtures/conformance (written by
 * `tests/support/reference-score.py --conformance-fixture tests/fixtures/conformance`;
 * always checked) and the shared one in ../shared/conformance (checked when
 * present; RNNSEARCH_SHARED names another place). */
#include <check.h>

#include "testskip.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data/dataset.h"
#include "model/safetensors.h"
#include "search/forced.h"

static const char *shared_dir(void)
{
    const char *dir = getenv("RNNSEARCH_SHARED");
    return dir ? dir : "../shared";
}

/* Scores DIR/pairs.tsv under DIR/random.safetensors and compares with
 * DIR/expected_logprob.txt, one value a line; returns the worst relative error. */
static double check_conformance(const char *dir, double tol)
{
    char model_path[1024], pairs_path[1024], expected_path[1024];
    snprintf(model_path, sizeof model_path, "%s/random.safetensors", dir);
    snprintf(pairs_path, sizeof pairs_path, "%s/pairs.tsv", dir);
    snprintf(expected_path, sizeof expected_path, "%s/expected_logprob.txt", dir);
    rs_error err;
    rs_model model;
    ck_assert_msg(rs_safetensors_import(model_path, &model, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(model.cfg.attention, RS_ATT_ADDITIVE);
    rs_codec codec;
    rs_pairs pairs;
    rs_tokenized tok;
    rs_dataset data;
    ck_assert(rs_codec_for_model(&codec, &model, &err) == 0);
    ck_assert_msg(rs_pairs_read_tsv(pairs_path, 0, &pairs, &err) == 0, "%s", err.msg);
    ck_assert(rs_tokenize_pairs(&tok, &pairs, &codec, pairs_path, &err) == 0);
    ck_assert(rs_dataset_build(&data, &tok, &model.src_vocab, &model.tgt_vocab, 0, NULL, &err) ==
              0);
    ck_assert_int_gt(data.count, 0);
    rs_forced *scored = calloc((size_t)data.count, sizeof(rs_forced));
    ck_assert(scored != NULL);
    const rs_ready member_ready = rs_ready_plain(&model), *member = &member_ready;
    /* Batches of 7 mix lengths, so padding is exercised too. */
    ck_assert_msg(rs_forced_decode(&member, 1, &data, 7, 0, scored, &err) == 0, "%s", err.msg);
    FILE *f = fopen(expected_path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", expected_path);
    double worst = 0.0;
    for (int i = 0; i < data.count; i++) {
        double expected;
        ck_assert_msg(fscanf(f, "%lf", &expected) == 1, "%s: fewer than %d values", expected_path,
                      data.count);
        double rel = fabs(scored[i].logprob - expected) / fabs(expected);
        if (rel > worst)
            worst = rel;
        ck_assert_msg(rel <= tol, "%s pair %d: %.9f, expected %.9f (relative error %.3g)", dir,
                      i + 1, scored[i].logprob, expected, rel);
    }
    double extra;
    ck_assert_msg(fscanf(f, "%lf", &extra) == EOF, "%s: more values than the %d pairs",
                  expected_path, data.count);
    fclose(f);
    fprintf(stderr, "conformance %s: %d pairs, worst relative error %.3g\n", dir, data.count,
            worst);
    for (int i = 0; i < data.count; i++)
        rs_forced_free(&scored[i]);
    free(scored);
    rs_dataset_free(&data);
    rs_tokenized_free(&tok);
    rs_pairs_free(&pairs);
    rs_codec_free(&codec);
    rs_model_free(&model);
    return worst;
}

/* Ours: float32 arithmetic measured 3e-8 relative; 1e-5 leaves room for
 * other BLAS kernels and still fails on any wrong term. */
START_TEST(own_fixture_reproduces_reference_logprobs)
{
    check_conformance("tests/fixtures/conformance", 1e-5);
}
END_TEST

/* The shared data's README promises 1e-4 relative. */
START_TEST(shared_model_reproduces_reference_logprobs)
{
    char dir[1024], model_path[1100];
    snprintf(dir, sizeof dir, "%s/conformance", shared_dir());
    snprintf(model_path, sizeof model_path, "%s/random.safetensors", dir);
    if (access(model_path, R_OK) != 0) {
        char why[1200];
        snprintf(why, sizeof why, "conformance: %s not found (set RNNSEARCH_SHARED)", model_path);
        test_skip(why);
        return;
    }
    check_conformance(dir, 1e-4);
}
END_TEST

Suite *conformance_suite(void)
{
    Suite *s = suite_create("conformance");
    TCase *tc = tcase_create("reference log-probabilities");
    tcase_add_test(tc, own_fixture_reproduces_reference_logprobs);
    tcase_add_test(tc, shared_model_reproduces_reference_logprobs);
    suite_add_tcase(s, tc);
    return s;
}
