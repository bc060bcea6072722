/* What `train` says (src/train/report.c): the progress line with and without
 * the all-reduce's share, each form of the dev line, quiet, the start's
 * <unk> shares with their warning, and the stop lines with the best model. */
#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testdir.h"
#include "train/report.h"

typedef struct {
    FILE *f;
    char *text;
    size_t size;
} capture;

static FILE *capture_begin(capture *c)
{
    c->text = NULL;
    c->f = open_memstream(&c->text, &c->size);
    ck_assert_ptr_nonnull(c->f);
    return c->f;
}

/* The text written since capture_begin (free it). */
static char *capture_end(capture *c)
{
    ck_assert_int_eq(fclose(c->f), 0);
    return c->text;
}

static char *event_text(const rs_train_event *ev, int quiet, int ranks)
{
    capture c;
    rs_train_report_event(capture_begin(&c), ev, quiet, ranks);
    return capture_end(&c);
}

START_TEST(progress_and_dev_lines)
{
    rs_train_event ev = {.kind = RS_EV_PROGRESS,
                         .step = 10,
                         .total_steps = 100,
                         .epoch = 1,
                         .loss = 2.5,
                         .ppl = 12.18,
                         .tokens_per_s = 900,
                         .gnorm = 1.5,
                         .lr = 0.001,
                         .eta_s = 90,
                         .step_s = 0.02,
                         .allreduce_s = 0.005};
    char *t = event_text(&ev, 0, 1);
    ck_assert_str_eq(t, "step 10/100 | epoch 1 | loss 2.5000 | ppl 12.18 | tok/s 900 | gnorm "
                        "1.500 | lr 0.001 | eta 90s\n");
    free(t);
    t = event_text(&ev, 0, 2);
    ck_assert_msg(strstr(t, "eta 90s | step 20.0 ms, all-reduce 5.00 ms (25%)\n"), "%s", t);
    free(t);
    t = event_text(&ev, 1, 2); /* quiet: no progress */
    ck_assert_str_eq(t, "");
    free(t);
    ev = (rs_train_event){.kind = RS_EV_DEV,
                          .step = 20,
                          .epoch = 2,
                          .dev_loss = 1.25,
                          .dev_ppl = 3.49,
                          .dev_bleu = 31.5,
                          .dev_exact = -1,
                          .lr = 0.5,
                          .improved = 1,
                          .stop = 1,
                          .aer = NAN};
    t = event_text(&ev, 1, 1); /* quiet keeps the evaluations */
    ck_assert_str_eq(t, "epoch 2 | step 20 | dev loss 1.2500 | dev ppl 3.49 | dev BLEU 31.50 | lr "
                        "0.5 | best | stopping (patience)\n");
    free(t);
    ev.dev_bleu = -1, ev.dev_exact = 0.5, ev.aer = 0.25, ev.align_precision = 0.8;
    ev.align_recall = 0.7;
    t = event_text(&ev, 0, 1);
    ck_assert_str_eq(t, "epoch 2 | step 20 | dev loss 1.2500 | dev ppl 3.49 | dev exact 50.00% | "
                        "best\nepoch 2 | step 20 | dev AER 25.00% | precision 80.00% | recall "
                        "70.00%\n");
    free(t);
    ev.dev_loss = NAN;
    ev.aer = NAN;
    t = event_text(&ev, 0, 1);
    ck_assert_str_eq(t, "epoch 2 | step 20 | no dev set\n");
    free(t);
    ev = (rs_train_event){.kind = RS_EV_SAVED, .path = "d/last.ckpt"};
    t = event_text(&ev, 0, 1);
    ck_assert_str_eq(t, "saved d/last.ckpt\n");
    free(t);
    t = event_text(&ev, 1, 1);
    ck_assert_str_eq(t, "");
    free(t);
}
END_TEST

START_TEST(the_start_counts_unknown_words_and_warns)
{
    int src0[] = {RS_UNK, 5, 6, 7}, tgt0[] = {5, 6}, *src[] = {src0}, *tgt[] = {tgt0};
    int src_len[] = {4}, tgt_len[] = {2};
    rs_train_run run;
    memset(&run, 0, sizeof run);
    run.train = (rs_dataset){1, src, tgt, src_len, tgt_len, NULL};
    run.skipped = 3;
    run.model.cfg.src_vocab = 40;
    run.model.cfg.tgt_vocab = 50;
    run.model.layout.total = 1234;
    capture c;
    rs_train_report_header(capture_begin(&c), &run, "models/x", 0, 80, "prog");
    char *t = capture_end(&c);
    ck_assert_msg(!strncmp(t,
                           "training models/x: 1 training pair (3 longer than 80 tokens left "
                           "out), 0 dev pairs\nvocabularies: 40 source, 50 target; 1234 "
                           "parameters\n<unk>: training source 25.00 %, training target "
                           "0.00 %,\nprog: warning: 25.0 % of the training source tokens are "
                           "<unk>: the vocabulary (max_vocab, min_freq, src_vocab) or the "
                           "tokenizer (word) leaves them out\nconfiguration: ",
                           strlen("training models/x: 1 training pair (3 longer than 80 tokens "
                                  "left out), 0 dev pairs\nvocabularies")),
                  "%s", t);
    ck_assert_msg(strstr(t, "(max_vocab, min_freq, src_vocab) or the tokenizer (word) leaves "
                            "them out\nconfiguration: ") &&
                      !strstr(t, "target tokens are <unk>"),
                  "%s", t);
    free(t);
}
END_TEST

START_TEST(the_stop_names_why_and_the_best_model)
{
    char dir[64];
    testdir_make(dir, "report");
    rs_train_state state = {.step = 40, .best_dev_loss = INFINITY, .best_dev_bleu = -1};
    rs_train_config cfg = {.epochs = 1, .patience = 2, .dev_bleu = 1};
    capture c;
    rs_train_report_stop(capture_begin(&c), RS_STOP_EPOCHS, 0, 1, &state, &cfg, dir);
    char *t = capture_end(&c), want[512];
    snprintf(want, sizeof want,
             "stopped: all 1 epoch done at step 40 (epoch 1)\nlast model: "
             "%s/last.ckpt\n",
             dir);
    ck_assert_str_eq(t, want);
    free(t);
    testfile_put(dir, "best.ckpt", "x");
    state.best_dev_bleu = 12.5;
    rs_train_report_stop(capture_begin(&c), RS_STOP_SIGNAL, SIGTERM, 2, &state, &cfg, dir);
    t = capture_end(&c);
    snprintf(want, sizeof want,
             "stopped: interrupted by SIGTERM at step 40 (epoch 2)\nlast "
             "model: %s/last.ckpt\nbest model: %s/best.ckpt (dev BLEU 12.50)\n",
             dir, dir);
    ck_assert_str_eq(t, want);
    free(t);
    cfg.dev_bleu = 0;
    state.best_dev_loss = 1.5f;
    rs_train_report_stop(capture_begin(&c), RS_STOP_PATIENCE, 0, 2, &state, &cfg, dir);
    t = capture_end(&c);
    ck_assert_msg(
        !strncmp(t, "stopped: 2 dev evaluations without improvement (--patience) at", 62) &&
            strstr(t, "best.ckpt (dev loss 1.5000)\n"),
        "%s", t);
    free(t);
    testdir_remove(dir);
}
END_TEST

Suite *report_suite(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("lines");
    tcase_add_test(tc, progress_and_dev_lines);
    tcase_add_test(tc, the_start_counts_unknown_words_and_warns);
    tcase_add_test(tc, the_stop_names_why_and_the_best_model);
    suite_add_tcase(s, tc);
    return s;
}
