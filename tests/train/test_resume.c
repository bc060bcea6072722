/* The checks of --resume (train/resume.h), called directly: which options may
 * change and how a change of another is refused, a checkpoint taken as a
 * run's (weights only refused, a dev set required by its configuration), and
 * the data given now against the fingerprint the checkpoint records, with
 * each wording of what differs and what --new-data resets. (tests/cmd/test_resume.c
 * runs the same through the program, with interruptions.) */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/checkpoint.h"
#include "testdir.h"
#include "tinymodel.h"
#include "train/fingerprint.h"
#include "train/resume.h"

#define CHANGEABLE                                                                                 \
    "--epochs, --max-steps, --max-minutes, --patience, --save-every, --keep-last, --log-every "    \
    "and --threads"

START_TEST(the_options_that_may_change)
{
    char buf[256];
    rs_resume_changeable(buf, sizeof buf);
    ck_assert_str_eq(buf, CHANGEABLE);
    /* A short buffer is cut, never overrun. */
    char small[12];
    rs_resume_changeable(small, sizeof small);
    ck_assert_str_eq(small, "--epochs, -");
}
END_TEST

static int apply(rs_config *cfg, const char *key, const char *value, rs_error *err)
{
    const char *keys[] = {key}, *values[] = {value};
    const rs_resume_given given = {keys, values, 1};
    return rs_resume_apply(cfg, &given, err);
}

START_TEST(settings_given_again)
{
    rs_config cfg;
    rs_config_defaults(&cfg);
    cfg.model.emb = 8;
    rs_error err = {{0}};
    /* How long and how fast: applied. */
    ck_assert_int_eq(apply(&cfg, "epochs", "7", &err), 0);
    ck_assert_int_eq(cfg.train.epochs, 7);
    ck_assert_int_eq(apply(&cfg, "threads", "3", &err), 0);
    ck_assert_int_eq(cfg.train.threads, 3);
    /* What is trained: the same value passes (in any spelling), another is
     * refused, naming both and what may change; cfg is left as it was. */
    ck_assert_int_eq(apply(&cfg, "emb", "8", &err), 0);
    ck_assert_int_eq(apply(&cfg, "lr", "0.0020", &err), 0);
    const rs_config before = cfg;
    ck_assert_int_eq(apply(&cfg, "emb", "16", &err), RS_TRAIN_REFUSED);
    ck_assert_str_eq(err.msg,
                     "--resume: the checkpoint was trained with emb=8, not 16; only " CHANGEABLE
                     " may change on resume");
    ck_assert(!memcmp(&cfg, &before, sizeof cfg));
    /* A flag (no value) sets it. */
    ck_assert_int_eq(apply(&cfg, "lowercase", NULL, &err), RS_TRAIN_REFUSED);
    ck_assert_msg(strstr(err.msg, "trained with lowercase=0, not 1"), "%s", err.msg);
    cfg.model.lowercase = 1;
    ck_assert_int_eq(apply(&cfg, "lowercase", NULL, &err), 0);
    /* A value that does not parse: refused with the option's message. */
    ck_assert_int_eq(apply(&cfg, "epochs", "many", &err), RS_TRAIN_REFUSED);
    ck_assert_str_eq(err.msg, "--epochs: 'many' is not an integer from 1 to 1000000");
    /* Several: each in turn, the first refusal stops. */
    const char *keys[] = {"max_steps", "hidden", "patience"}, *values[] = {"9", "99", "4"};
    const rs_resume_given given = {keys, values, 3};
    ck_assert_int_eq(rs_resume_apply(&cfg, &given, &err), RS_TRAIN_REFUSED);
    ck_assert_int_eq(cfg.train.max_steps, 9);
    ck_assert_int_eq(cfg.train.patience, 0);
}
END_TEST

/* A checkpoint of tiny_model_with_words in dir: with a training state (step
 * 5), or weights only. */
static void save_checkpoint(const char *path, int with_state, int patience)
{
    rs_model model;
    tiny_model_with_words(&model, 4, "haus", 3);
    model.train.patience = patience;
    rs_train_state state = {0};
    rs_error err = {{0}};
    if (with_state) {
        ck_assert_msg(!rs_train_state_alloc(&state, &model, &err), "%s", err.msg);
        state.step = 5;
    }
    ck_assert_msg(!rs_checkpoint_save(path, &model, with_state ? &state : NULL, &err), "%s",
                  err.msg);
    rs_train_state_free(&state);
    rs_model_free(&model);
}

START_TEST(a_checkpoint_taken_as_a_run)
{
    char dir[64], path[128];
    testdir_make(dir, "rnnsearch-resume-load");
    snprintf(path, sizeof path, "%s/last.ckpt", dir);
    rs_error err = {{0}};
    const char *keys[] = {"epochs"}, *values[] = {"12"};
    const rs_resume_given given = {keys, values, 1};
    rs_train_run run;

    save_checkpoint(path, 1, 0);
    rs_train_run_init(&run);
    ck_assert_msg(rs_resume_load(&run, path, &given, 0, &err) == 0, "%s", err.msg);
    ck_assert(run.state.from_checkpoint);
    ck_assert_int_eq(run.state.step, 5);
    ck_assert_int_eq(run.model.train.epochs, 12);
    rs_train_run_free(&run);

    /* Weights only (average, import): nothing to go on from. */
    save_checkpoint(path, 0, 0);
    rs_train_run_init(&run);
    ck_assert_int_eq(rs_resume_load(&run, path, &given, 1, &err), RS_TRAIN_REFUSED);
    char want[1024];
    snprintf(want, sizeof want,
             "--resume: %s holds weights only, no training state (step, Adam moments, data "
             "position), as `average` and `import` write; nothing was changed. Resume from the "
             "run's own last.ckpt, or train a new model in another directory",
             path);
    ck_assert_str_eq(err.msg, want);
    rs_train_run_free(&run);

    /* A configuration that needs a dev set, resumed without one. */
    save_checkpoint(path, 1, 2);
    rs_train_run_init(&run);
    ck_assert_int_eq(rs_resume_load(&run, path, &given, 0, &err), RS_TRAIN_REFUSED);
    ck_assert_str_eq(err.msg, "the checkpoint was trained with --patience, which needs the dev "
                              "set: give it again with --dev or --dev-src/--dev-tgt");
    rs_train_run_free(&run);
    rs_train_run_init(&run);
    ck_assert_int_eq(rs_resume_load(&run, path, &given, 1, &err), 0);
    rs_train_run_free(&run);

    /* --patience 0 given again may lift that need. */
    const char *no_patience[] = {"patience"}, *zero[] = {"0"};
    const rs_resume_given lifted = {no_patience, zero, 1};
    rs_train_run_init(&run);
    ck_assert_int_eq(rs_resume_load(&run, path, &lifted, 0, &err), 0);
    rs_train_run_free(&run);

    /* A setting that may not change, and a file that is not there. */
    const char *emb[] = {"emb"}, *four[] = {"4"};
    const rs_resume_given other = {emb, four, 1};
    rs_train_run_init(&run);
    ck_assert_int_eq(rs_resume_load(&run, path, &other, 1, &err), RS_TRAIN_REFUSED);
    ck_assert_msg(strstr(err.msg, "trained with emb=3, not 4"), "%s", err.msg);
    rs_train_run_free(&run);
    snprintf(path, sizeof path, "%s/missing.ckpt", dir);
    rs_train_run_init(&run);
    ck_assert_int_eq(rs_resume_load(&run, path, &given, 1, &err), -1);
    ck_assert_msg(strstr(err.msg, "missing.ckpt"), "%s", err.msg);
    rs_train_run_free(&run);
    testdir_remove(dir);
}
END_TEST

/* The fingerprint a checkpoint records, with 40 training and 16 dev pairs. */
static rs_data_fingerprint then_fp(void)
{
    return (rs_data_fingerprint){1, 40, 0x11, 0x12, 16, 0x21, 0x22};
}

static const rs_data_given named_tsv[2] = {
    {"training", "--train", "train.tsv", "--src", NULL, "--tgt", NULL},
    {"dev", "--dev", "dev.tsv", "--dev-src", NULL, "--dev-tgt", NULL}};
static const rs_data_given named_files[2] = {
    {"training", "--train", NULL, "--src", "s.txt", "--tgt", "t.txt"},
    {"dev", "--dev", NULL, "--dev-src", "ds.txt", "--dev-tgt", "dt.txt"}};

#define REFUSAL_TAIL                                                                               \
    ". Resuming would not continue that run (its epoch order and step counts refer to its "        \
    "data): give the data it was trained on, or --new-data to continue training on this data "     \
    "(e.g. to fine-tune)"

/* The refusal of `now` against then_fp(), given as `named`. */
static void expect_refusal(const rs_data_fingerprint *now, const rs_data_given named[2],
                           const char *clauses)
{
    rs_train_state state = {.data = then_fp(),
                            .batches_done = 3,
                            .best_dev_loss = 2.5f,
                            .best_dev_bleu = 30.0f,
                            .bad_evals = 2};
    rs_resume_notes notes;
    rs_error err = {{0}};
    ck_assert_int_eq(rs_resume_check_data("m/last.ckpt", &state, now, named, 0, &notes, &err),
                     RS_TRAIN_REFUSED);
    char want[2048];
    snprintf(want, sizeof want, "--resume: m/last.ckpt was trained on other data: %s" REFUSAL_TAIL,
             clauses);
    ck_assert_str_eq(err.msg, want);
    ck_assert_int_eq(notes.count, 0);
    /* Nothing reset. */
    ck_assert(state.batches_done == 3 && state.best_dev_loss == 2.5f &&
              state.best_dev_bleu == 30.0f && state.bad_evals == 2);
}

START_TEST(other_data_is_refused_saying_what_differs)
{
    rs_data_fingerprint now = then_fp();
    now.train_src_crc = 0x99;
    expect_refusal(&now, named_tsv,
                   "the training data differs from --train train.tsv (the source side; 40 pairs "
                   "now, 40 then)");
    /* Two files: the one that differs is named, or both. */
    expect_refusal(&now, named_files,
                   "the training data differs from --src s.txt (the source side; 40 pairs now, "
                   "40 then)");
    now = then_fp();
    now.train_tgt_crc = 0x99;
    expect_refusal(&now, named_files,
                   "the training data differs from --tgt t.txt (the target side; 40 pairs now, "
                   "40 then)");
    /* A pair count that differs counts for both sides. */
    now = then_fp();
    now.train_pairs = 39;
    expect_refusal(&now, named_files,
                   "the training data differs from --src s.txt and --tgt t.txt (both sides; 39 "
                   "pairs now, 40 then)");
    expect_refusal(&now, named_tsv,
                   "the training data differs from --train train.tsv (both sides; 39 pairs now, "
                   "40 then)");
    /* The dev set: other, none now, none then; with the training data's too. */
    now = then_fp();
    now.dev_tgt_crc = 0x99;
    expect_refusal(&now, named_tsv,
                   "the dev data differs from --dev dev.tsv (the target side; 16 pairs now, 16 "
                   "then)");
    now.dev_pairs = 0, now.dev_src_crc = 0, now.dev_tgt_crc = 0;
    expect_refusal(&now, named_tsv,
                   "it was trained with a dev set of 16 pairs, and none is given now");
    now.train_src_crc = 0x99;
    expect_refusal(&now, named_tsv,
                   "the training data differs from --train train.tsv (the source side; 40 pairs "
                   "now, 40 then); it was trained with a dev set of 16 pairs, and none is given "
                   "now");
    rs_train_state state = {.data = then_fp()};
    state.data.dev_pairs = 0, state.data.dev_src_crc = 0, state.data.dev_tgt_crc = 0;
    now = then_fp();
    rs_resume_notes notes;
    rs_error err = {{0}};
    ck_assert_int_eq(
        rs_resume_check_data("m/last.ckpt", &state, &now, named_files, 0, &notes, &err),
        RS_TRAIN_REFUSED);
    ck_assert_msg(strstr(err.msg, "other data: it was trained without a dev set, and --dev-src "
                                  "ds.txt gives one now. Resuming"),
                  "%s", err.msg);
}
END_TEST

START_TEST(the_same_data_or_new_data_accepted)
{
    rs_resume_notes notes;
    rs_error err = {{0}};
    /* The same data: nothing to say, nothing changed. */
    rs_train_state state = {.data = then_fp(), .batches_done = 3, .best_dev_loss = 2.5f};
    rs_data_fingerprint now = then_fp();
    ck_assert_int_eq(rs_resume_check_data("m/last.ckpt", &state, &now, named_tsv, 0, &notes, &err),
                     0);
    ck_assert_int_eq(notes.count, 0);
    ck_assert_int_eq(state.batches_done, 3);

    /* --new-data, other training data: the epoch starts again, with a note. */
    now.train_tgt_crc = 0x99;
    ck_assert_int_eq(rs_resume_check_data("m/last.ckpt", &state, &now, named_tsv, 1, &notes, &err),
                     0);
    ck_assert_int_eq(notes.count, 1);
    ck_assert_str_eq(notes.text[0], "--new-data: continuing m/last.ckpt on other training data, "
                                    "from the beginning of an epoch");
    ck_assert_int_eq(state.batches_done, 0);
    ck_assert(state.best_dev_loss == 2.5f); /* the dev set is the same */
    /* At an epoch's start already, the note says no more. */
    ck_assert_int_eq(rs_resume_check_data("m/last.ckpt", &state, &now, named_tsv, 1, &notes, &err),
                     0);
    ck_assert_str_eq(notes.text[0], "--new-data: continuing m/last.ckpt on other training data");

    /* Another dev set too: its records start anew. */
    state = (rs_train_state){.data = then_fp(),
                             .batches_done = 3,
                             .best_dev_loss = 2.5f,
                             .best_dev_bleu = 30.0f,
                             .bad_evals = 2};
    now.dev_src_crc = 0x99;
    ck_assert_int_eq(rs_resume_check_data("m/last.ckpt", &state, &now, named_tsv, 1, &notes, &err),
                     0);
    ck_assert_int_eq(notes.count, 2);
    ck_assert_str_eq(notes.text[1], "--new-data: continuing m/last.ckpt with another dev set; "
                                    "best.ckpt is chosen anew on it");
    ck_assert(state.batches_done == 0 && isinf(state.best_dev_loss) &&
              state.best_dev_bleu == -1.0f && state.bad_evals == 0);
}
END_TEST

START_TEST(a_checkpoint_without_a_fingerprint)
{
    rs_resume_notes notes;
    rs_error err = {{0}};
    rs_train_state state = {.batches_done = 3}; /* data.known = 0 */
    rs_data_fingerprint now = then_fp();
    ck_assert_int_eq(rs_resume_check_data("m/last.ckpt", &state, &now, named_tsv, 0, &notes, &err),
                     0);
    ck_assert_int_eq(notes.count, 1);
    ck_assert_str_eq(notes.text[0], "note: m/last.ckpt records no fingerprint of its data (written "
                                    "by an older rnnsearch), so the data given now cannot be "
                                    "checked");
    ck_assert_int_eq(state.batches_done, 3);
    /* --new-data takes the user at the word: the epoch starts again. */
    ck_assert_int_eq(rs_resume_check_data("m/last.ckpt", &state, &now, named_tsv, 1, &notes, &err),
                     0);
    ck_assert_int_eq(notes.count, 1);
    ck_assert_int_eq(state.batches_done, 0);
}
END_TEST

Suite *resume_checks_suite(void)
{
    Suite *s = suite_create("resume_checks");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, the_options_that_may_change);
    tcase_add_test(tc, settings_given_again);
    tcase_add_test(tc, a_checkpoint_taken_as_a_run);
    tcase_add_test(tc, other_data_is_refused_saying_what_differs);
    tcase_add_test(tc, the_same_data_or_new_data_accepted);
    tcase_add_test(tc, a_checkpoint_without_a_fingerprint);
    suite_add_tcase(s, tc);
    return s;
}
