/* The conformance data of ../shared/conformance: a random model in the
 * interchange format and the log-probabilities an independent float64
 * implementation of model.md computes for 30 pairs. Import + score must
 * reproduce every value to 1e-4 relative. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dataset.h"
#include "safetensors.h"
#include "forced.h"

static const char *shared_dir(void)
{
    const char *dir = getenv("RNNSEARCH_SHARED");
    return dir ? dir : "../shared";
}

START_TEST(imported_model_reproduces_reference_logprobs)
{
    char model_path[1024], pairs_path[1024], expected_path[1024];
    snprintf(model_path, sizeof model_path, "%s/conformance/random.safetensors", shared_dir());
    snprintf(pairs_path, sizeof pairs_path, "%s/conformance/pairs.tsv", shared_dir());
    snprintf(expected_path, sizeof expected_path, "%s/conformance/expected_logprob.txt", shared_dir());
    if (access(model_path, R_OK) != 0) {
        fprintf(stderr, "SKIP conformance: %s not found (set RNNSEARCH_SHARED)\n", model_path);
        return;
    }
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
    ck_assert(rs_dataset_build(&data, &tok, &model.src_vocab, &model.tgt_vocab, 0, NULL, &err) == 0);
    ck_assert_int_eq(data.count, 30);
    double logprob[30];
    rs_forced scored[30];
    const rs_model *member = &model;
    /* Batches of 7 mix lengths, so padding is exercised too. */
    ck_assert(rs_forced_decode(&member, 1, &data, 7, 0, scored, &err) == 0);
    for (int i = 0; i < 30; i++) {
        logprob[i] = scored[i].logprob;
        rs_forced_free(&scored[i]);
    }
    FILE *f = fopen(expected_path, "r");
    ck_assert(f != NULL);
    double worst = 0.0;
    for (int i = 0; i < 30; i++) {
        double expected;
        ck_assert_int_eq(fscanf(f, "%lf", &expected), 1);
        double rel = fabs(logprob[i] - expected) / fabs(expected);
        if (rel > worst)
            worst = rel;
        ck_assert_msg(rel <= 1e-4, "pair %d: %.9f, expected %.9f (relative error %.3g)", i + 1,
                      logprob[i], expected, rel);
    }
    fclose(f);
    fprintf(stderr, "conformance: 30 pairs, worst relative error %.3g\n", worst);
    rs_dataset_free(&data);
    rs_tokenized_free(&tok);
    rs_pairs_free(&pairs);
    rs_codec_free(&codec);
    rs_model_free(&model);
}
END_TEST

Suite *conformance_suite(void)
{
    Suite *s = suite_create("conformance");
    TCase *tc = tcase_create("shared reference");
    tcase_add_test(tc, imported_model_reproduces_reference_logprobs);
    suite_add_tcase(s, tc);
    return s;
}
