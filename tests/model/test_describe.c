/* What a model holds, for people (src/model/describe.c). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/describe.h"
#include "tinymodel.h"

/* What was printed, in a new string (*text, for free()). */
static char *described(const rs_model *m, const rs_train_state *s)
{
    static char *text;
    static size_t size;
    FILE *f = open_memstream(&text, &size);
    ck_assert_ptr_nonnull(f);
    rs_model_describe(f, m, s);
    fclose(f);
    return text;
}

/* Every tensor with its size, the total as the layout counts it, the
 * vocabularies and the text settings; a fresh state is weights only. */
START_TEST(tensors_vocabularies_and_text)
{
    rs_model m;
    tiny_model_with_words(&m, 4, "haus", 1);
    const rs_train_state fresh = {.best_dev_loss = INFINITY, .best_dev_bleu = -1};
    char *text = described(&m, &fresh);
    char want[128];
    for (int i = 0; i < RS_NUM_PARAMS; i++)
        if (m.layout.info[i].size) {
            snprintf(want, sizeof want, "#   %-10s ", m.layout.info[i].name);
            ck_assert_msg(strstr(text, want), "no line for %s in\n%s", want, text);
        }
    snprintf(want, sizeof want, "%12zu (%.1f MB as float32)\n", m.layout.total,
             (double)m.layout.total * 4 / 1e6);
    ck_assert_msg(strstr(text, want), "%s", text);
    snprintf(want, sizeof want, "# vocabularies: source %d tokens, target %d tokens\n",
             m.src_vocab.size, m.tgt_vocab.size);
    ck_assert_msg(strstr(text, want), "%s", text);
    ck_assert_ptr_nonnull(strstr(text, "# text: tokenizer word, lowercase "));
    ck_assert_ptr_nonnull(strstr(text, "# training: no training state (weights only)\n"));
    free(text);
    rs_model_free(&m);
}
END_TEST

/* A trained state's counters; none for a dev loss or BLEU never measured. */
START_TEST(training_counters)
{
    rs_model m;
    tiny_model_with_words(&m, 4, "haus", 1);
    rs_train_state s = {.step = 120,
                        .epoch = 2,
                        .batches_done = 3,
                        .best_dev_loss = 0.0f,
                        .best_dev_bleu = 12.5f,
                        .bad_evals = 1,
                        .lr_scale = 0.5f};
    char *text = described(&m, &s);
    ck_assert_msg(strstr(text, "# training: step 120, epoch 2 (+3 batches), best dev loss 0.0000 "
                               "(ppl 1.00), best dev BLEU 12.50, 1 evaluation without "
                               "improvement, lr scale 0.5\n"),
                  "%s", text);
    free(text);
    s.best_dev_loss = INFINITY, s.best_dev_bleu = -1, s.bad_evals = 2, s.batches_done = 0;
    text = described(&m, &s);
    ck_assert_msg(strstr(text, "epoch 2, best dev loss none, best dev BLEU none, 2 evaluations"),
                  "%s", text);
    free(text);
    rs_model_free(&m);
}
END_TEST

Suite *describe_suite(void)
{
    Suite *s = suite_create("describe");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, tensors_vocabularies_and_text);
    tcase_add_test(tc, training_counters);
    suite_add_tcase(s, tc);
    return s;
}
