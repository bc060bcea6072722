/* A training run before its first step (train/prepare.h), called directly:
 * the model directory claimed (locked, refused when it holds another model,
 * cleared for --overwrite), the options that need a dev set, and the data,
 * codec and model of a new run (vocabularies, the --max-len filter, swapped
 * sides, weights from the seed, SentencePiece models trained with a note
 * before each), of a resumed one, and the failures that name their file. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/checkpoint.h"
#include "testdir.h"
#include "train/prepare.h"
#include "train/resume.h"
#include "train/rundir.h"

START_TEST(claiming_a_directory)
{
    char dir[64], run[128];
    rs_error err = {{0}};
    int lock = -1, other = -1;
    testdir_make(dir, "rnnsearch-prepare-claim");
    snprintf(run, sizeof run, "%s/run", dir);

    /* A new directory is made, locked and holds our PID. */
    ck_assert_int_eq(rs_train_claim_dir(run, 0, 0, &lock, &err), 0);
    ck_assert_int_ge(lock, 0);
    char pid[32];
    snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    char path[256];
    snprintf(path, sizeof path, "%s/lock", run);
    testfile_expect(path, pid);
    /* A second claim while the first holds it fails (not a refusal: the
     * directory is busy, not the request wrong). */
    ck_assert_int_eq(rs_train_claim_dir(run, 0, 0, &other, &err), -1);
    ck_assert_msg(strstr(err.msg, "in use by another training"), "%s", err.msg);
    rs_train_unlock(lock);

    /* A directory that holds a model is refused, unless --overwrite clears it. */
    testfile_put(run, "last.ckpt", "x");
    testfile_put(run, "train.log.tsv", "step\n");
    ck_assert_int_eq(rs_train_claim_dir(run, 0, 0, &lock, &err), RS_TRAIN_REFUSED);
    char want[512];
    snprintf(want, sizeof want,
             "%s already holds a model; give --resume to continue it or --overwrite to replace it",
             run);
    ck_assert_str_eq(err.msg, want);
    ck_assert(testfile_exists(run, "last.ckpt"));
    rs_train_unlock(lock);
    ck_assert_int_eq(rs_train_claim_dir(run, 0, 1, &lock, &err), 0);
    ck_assert(!testfile_exists(run, "last.ckpt") && !testfile_exists(run, "train.log.tsv"));
    rs_train_unlock(lock);

    /* --resume: a run that stopped before its first save has nothing to
     * resume; one with last.ckpt is claimed. */
    testfile_put(run, "train.log.tsv", "step\n");
    ck_assert_int_eq(rs_train_claim_dir(run, 1, 0, &lock, &err), RS_TRAIN_REFUSED);
    snprintf(want, sizeof want,
             "%s has no last.ckpt to resume (training stopped before its first save); start "
             "again with --overwrite",
             run);
    ck_assert_str_eq(err.msg, want);
    rs_train_unlock(lock);
    testfile_put(run, "last.ckpt", "x");
    ck_assert_int_eq(rs_train_claim_dir(run, 1, 0, &lock, &err), 0);
    ck_assert(testfile_exists(run, "last.ckpt"));
    rs_train_unlock(lock);

    /* A directory that cannot be made fails, naming it. */
    snprintf(path, sizeof path, "%s/run/last.ckpt/sub", dir);
    ck_assert_int_eq(rs_train_claim_dir(path, 0, 0, &lock, &err), -1);
    ck_assert_msg(strstr(err.msg, "last.ckpt"), "%s", err.msg);
    testdir_remove(dir);
}
END_TEST

START_TEST(options_that_need_a_dev_set)
{
    rs_config cfg;
    rs_config_defaults(&cfg);
    ck_assert_ptr_null(rs_train_needs_dev_set(&cfg.train));
    cfg.train.lr_decay = 0.5f;
    ck_assert_str_eq(rs_train_needs_dev_set(&cfg.train), "--lr-decay");
    cfg.train.patience = 2;
    ck_assert_str_eq(rs_train_needs_dev_set(&cfg.train), "--patience");
    cfg.train.dev_translate = 1;
    ck_assert_str_eq(rs_train_needs_dev_set(&cfg.train), "--dev-translate");
    cfg.train.dev_bleu = 1;
    ck_assert_str_eq(rs_train_needs_dev_set(&cfg.train), "--dev-bleu");
}
END_TEST

/* A tiny configuration, every pair of the corpus below in the vocabularies. */
static void tiny_config(rs_config *cfg)
{
    rs_config_defaults(cfg);
    cfg->model.emb = 4, cfg->model.hidden = 4, cfg->model.att = 4, cfg->model.maxout = 2;
    cfg->train.max_len = 5;
}

static const char corpus[] = "a b\tx\n"
                             "b c\ty z\n"
                             "a a a a a a\tx\n" /* 6 source tokens: over max_len 5 */
                             "c\tz z\n";
static const char dev_pairs[] = "a\tx\nb\ty\nc\tz\na b c\tx y z\n";

/* The weights of a new run of corpus (or its sides exchanged) from seed. */
static void prepare_new(const char *dir, rs_train_run *run, rs_config *cfg, int swap, int seed)
{
    char train[128], dev[128];
    snprintf(train, sizeof train, "%s/train.tsv", dir);
    snprintf(dev, sizeof dev, "%s/dev.tsv", dir);
    rs_train_inputs in = {.train_tsv = train, .dev_tsv = dev, .swap = swap};
    tiny_config(cfg);
    cfg->train.seed = seed;
    rs_error err = {{0}};
    rs_train_run_init(run);
    ck_assert_msg(rs_train_prepare(&in, cfg, 0, run, &err) == 0, "%s", err.msg);
}

START_TEST(a_new_run_from_its_data)
{
    char dir[64];
    testdir_make(dir, "rnnsearch-prepare-new");
    testfile_put(dir, "train.tsv", corpus);
    testfile_put(dir, "dev.tsv", dev_pairs);
    rs_train_run run, again, other, swapped;
    rs_config cfg, cfg2;
    prepare_new(dir, &run, &cfg, 0, 7);

    /* Vocabularies of every training token (the long pair's too: the filter
     * comes after), their sizes in the configuration and the model. */
    ck_assert_int_eq(cfg.model.src_vocab, RS_RESERVED + 3);
    ck_assert_int_eq(cfg.model.tgt_vocab, RS_RESERVED + 3);
    ck_assert_int_eq(run.model.cfg.src_vocab, cfg.model.src_vocab);
    ck_assert_int_eq(run.model.src_vocab.size, cfg.model.src_vocab);
    ck_assert_int_ne(rs_vocab_id(&run.model.src_vocab, "c"), RS_UNK);
    ck_assert_int_eq(rs_vocab_id(&run.model.src_vocab, "x"), RS_UNK);
    /* The pairs over --max-len are left out and counted; dev keeps all. */
    ck_assert_int_eq(run.train.count, 3);
    ck_assert_int_eq(run.skipped, 1);
    ck_assert_int_eq(run.dev.count, 4);
    ck_assert_int_eq(run.train_pairs.count, 4);
    /* Watched: the first RS_WATCH_DEFAULT_COUNT dev pairs; no gold links. */
    ck_assert_int_eq(run.watch.count, RS_WATCH_DEFAULT_COUNT);
    ck_assert_str_eq(run.watch.source[0], "a");
    ck_assert_ptr_null(run.watch.gold);
    /* A fresh training state: step 0. */
    ck_assert(!run.state.from_checkpoint && run.state.step == 0);

    /* The weights are the seed's: the same again, others from another seed. */
    prepare_new(dir, &again, &cfg2, 0, 7);
    ck_assert_uint_eq(again.model.layout.total, run.model.layout.total);
    ck_assert(
        !memcmp(again.model.params, run.model.params, run.model.layout.total * sizeof(float)));
    prepare_new(dir, &other, &cfg2, 0, 8);
    ck_assert(memcmp(other.model.params, run.model.params, run.model.layout.total * sizeof(float)));

    /* --swap: the target words are the source vocabulary. */
    prepare_new(dir, &swapped, &cfg2, 1, 7);
    ck_assert_int_ne(rs_vocab_id(&swapped.model.src_vocab, "x"), RS_UNK);
    ck_assert_int_eq(rs_vocab_id(&swapped.model.src_vocab, "c"), RS_UNK);

    rs_train_run_free(&run);
    rs_train_run_free(&again);
    rs_train_run_free(&other);
    rs_train_run_free(&swapped);
    testdir_remove(dir);
}
END_TEST

typedef struct {
    int count;
    char text[4][128];
} notes_seen;

static void note(void *ctx, const char *text)
{
    notes_seen *seen = ctx;
    if (seen->count < 4)
        snprintf(seen->text[seen->count++], sizeof seen->text[0], "%s", text);
}

START_TEST(subwords_are_trained_with_a_note)
{
    char dir[64], cmd[256], train[128];
    testdir_make(dir, "rnnsearch-prepare-spm");
    snprintf(cmd, sizeof cmd, "head -n 40 corpora/reorder/train.tsv > %s/train.tsv", dir);
    ck_assert(system(cmd) == 0);
    snprintf(train, sizeof train, "%s/train.tsv", dir);
    notes_seen seen = {0};
    rs_train_inputs in = {.train_tsv = train, .no_watch = 1, .note = note, .note_ctx = &seen};
    rs_config cfg;
    tiny_config(&cfg);
    cfg.train.max_len = 80;
    cfg.model.tokenizer = RS_TOKENIZER_SPM;
    cfg.model.subwords = 40;
    rs_train_run run;
    rs_train_run_init(&run);
    rs_error err = {{0}};
    ck_assert_msg(rs_train_prepare(&in, &cfg, 0, &run, &err) == 0, "%s", err.msg);
    /* One note before each side's training, in order. */
    ck_assert_int_eq(seen.count, 2);
    ck_assert_str_eq(seen.text[0], "training a 40-piece SentencePiece model for the source side");
    ck_assert_str_eq(seen.text[1], "training a 40-piece SentencePiece model for the target side");
    /* The model owns both SentencePiece models; its vocabularies are theirs. */
    ck_assert(run.model.spm_src && run.model.spm_src_len && run.model.spm_tgt);
    ck_assert_ptr_null(run.spm_blob[0]);
    ck_assert_int_eq(cfg.model.src_vocab, 40);
    ck_assert_int_eq(run.watch.count, 0); /* no_watch */
    rs_train_run_free(&run);
    testdir_remove(dir);
}
END_TEST

START_TEST(a_resumed_run_keeps_its_model)
{
    char dir[64], ckpt[128], train[128];
    testdir_make(dir, "rnnsearch-prepare-resume");
    testfile_put(dir, "train.tsv", corpus);
    testfile_put(dir, "dev.tsv", dev_pairs);
    rs_train_run first, resumed;
    rs_config cfg;
    prepare_new(dir, &first, &cfg, 0, 7);
    rs_error err = {{0}};
    snprintf(ckpt, sizeof ckpt, "%s/last.ckpt", dir);
    ck_assert_msg(!rs_checkpoint_save(ckpt, &first.model, &first.state, &err), "%s", err.msg);

    /* Other training data, with a word ("d") the checkpoint's vocabulary
     * lacks: the vocabulary, the weights and the state stay the checkpoint's. */
    testfile_put(dir, "train.tsv", "a b\tx\nd\ty\n");
    snprintf(train, sizeof train, "%s/train.tsv", dir);
    rs_train_inputs in = {.train_tsv = train, .no_watch = 1};
    const rs_resume_given none = {NULL, NULL, 0};
    rs_train_run_init(&resumed);
    ck_assert_msg(rs_resume_load(&resumed, ckpt, &none, 0, &err) == 0, "%s", err.msg);
    rs_config stored = rs_model_settings(&resumed.model);
    ck_assert_msg(rs_train_prepare(&in, &stored, 1, &resumed, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(resumed.model.src_vocab.size, first.model.src_vocab.size);
    ck_assert_int_ne(rs_vocab_id(&resumed.model.src_vocab, "c"), RS_UNK);
    ck_assert_int_eq(rs_vocab_id(&resumed.model.src_vocab, "d"), RS_UNK);
    ck_assert(!memcmp(resumed.model.params, first.model.params,
                      first.model.layout.total * sizeof(float)));
    ck_assert_int_eq(resumed.train.count, 2);
    ck_assert_int_eq(resumed.dev.count, 0);
    ck_assert(resumed.state.from_checkpoint);
    rs_train_run_free(&first);
    rs_train_run_free(&resumed);
    testdir_remove(dir);
}
END_TEST

START_TEST(missing_files_are_named)
{
    char dir[64], train[128], missing[128];
    testdir_make(dir, "rnnsearch-prepare-missing");
    testfile_put(dir, "train.tsv", corpus);
    snprintf(train, sizeof train, "%s/train.tsv", dir);
    snprintf(missing, sizeof missing, "%s/missing.tsv", dir);
    const rs_train_inputs cases[] = {
        {.train_tsv = missing},
        {.train_src = train, .train_tgt = missing},
        {.train_tsv = train, .dev_tsv = missing},
        {.train_tsv = train, .watch_file = missing},
        {.train_tsv = train, .no_watch = 1, .dev_align = missing},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        rs_config cfg;
        tiny_config(&cfg);
        rs_train_run run;
        rs_train_run_init(&run);
        rs_error err = {{0}};
        ck_assert_int_eq(rs_train_prepare(&cases[i], &cfg, 0, &run, &err), -1);
        ck_assert_msg(strstr(err.msg, "missing.tsv"), "case %zu: %s", i, err.msg);
        rs_train_run_free(&run);
    }
    testdir_remove(dir);
}
END_TEST

/* A new run's vocabularies from the data, with shared_vocab, or from files
 * (with or without the reserved tokens, counts after a tab); rundir's files
 * of them, which read back to the same ids and which --overwrite leaves; and
 * a resumed run given a vocabulary file other than its own, refused. */
static void prepare_with(const char *dir, const rs_train_inputs *given, int shared,
                         rs_train_run *run)
{
    char train[128];
    snprintf(train, sizeof train, "%s/train.tsv", dir);
    rs_train_inputs in = *given;
    in.train_tsv = train;
    in.no_watch = 1;
    rs_config cfg;
    tiny_config(&cfg);
    cfg.model.shared_vocab = shared;
    rs_error err = {{0}};
    rs_train_run_init(run);
    ck_assert_msg(rs_train_prepare(&in, &cfg, 0, run, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(cfg.model.src_vocab, run->model.src_vocab.size);
    ck_assert_int_eq(cfg.model.tgt_vocab, run->model.tgt_vocab.size);
}

static void assert_same_vocab(const rs_vocab *a, const rs_vocab *b)
{
    ck_assert_int_eq(a->size, b->size);
    for (int id = 0; id < a->size; id++)
        ck_assert_str_eq(a->tokens[id], b->tokens[id]);
}

START_TEST(vocabularies_from_files_or_shared)
{
    char dir[64], src[128], tgt[128], ckpt[128];
    testdir_make(dir, "rnnsearch-prepare-vocab");
    testfile_put(dir, "train.tsv", corpus);
    testfile_put(dir, "src.txt", "c\nq\n");              /* Joey's form, no reserved tokens */
    testfile_put(dir, "tgt.txt", "<unk>\nz\t5\ny\t2\n"); /* OpenNMT-py's, <unk> first */
    snprintf(src, sizeof src, "%s/src.txt", dir);
    snprintf(tgt, sizeof tgt, "%s/tgt.txt", dir);
    rs_train_run files, shared, shared_file;

    prepare_with(dir, &(rs_train_inputs){.src_vocab = src, .tgt_vocab = tgt}, 0, &files);
    ck_assert_int_eq(files.model.src_vocab.size, RS_RESERVED + 2);
    ck_assert_int_eq(rs_vocab_id(&files.model.src_vocab, "c"), RS_RESERVED);
    ck_assert_int_eq(rs_vocab_id(&files.model.src_vocab, "q"), RS_RESERVED + 1);
    ck_assert_int_eq(rs_vocab_id(&files.model.src_vocab, "a"), RS_UNK); /* in the data only */
    ck_assert_str_eq(files.model.tgt_vocab.tokens[RS_UNK], "<unk>");
    ck_assert_int_eq(rs_vocab_id(&files.model.tgt_vocab, "z"), RS_RESERVED);
    ck_assert_int_eq(rs_vocab_id(&files.model.tgt_vocab, "y"), RS_RESERVED + 1);

    /* Shared: both sides' tokens in one vocabulary, the same for both. */
    prepare_with(dir, &(rs_train_inputs){0}, 1, &shared);
    ck_assert_int_eq(shared.model.src_vocab.size, RS_RESERVED + 6);
    assert_same_vocab(&shared.model.src_vocab, &shared.model.tgt_vocab);
    ck_assert_int_ne(rs_vocab_id(&shared.model.src_vocab, "x"), RS_UNK);
    ck_assert_int_ne(rs_vocab_id(&shared.model.tgt_vocab, "a"), RS_UNK);
    /* Shared, from the one file given. */
    prepare_with(dir, &(rs_train_inputs){.tgt_vocab = tgt}, 1, &shared_file);
    assert_same_vocab(&shared_file.model.src_vocab, &files.model.tgt_vocab);
    assert_same_vocab(&shared_file.model.tgt_vocab, &files.model.tgt_vocab);

    /* The run's files: one token a line, read back to the same vocabularies,
     * left by --overwrite (they may be the new run's input) and not foreign. */
    rs_error err = {{0}};
    ck_assert_msg(!rs_rundir_write_vocabs(dir, &files.model, &err), "%s", err.msg);
    snprintf(ckpt, sizeof ckpt, "%s/" RS_SRC_VOCAB_FILE, dir);
    testfile_expect(ckpt, "<pad>\n<unk>\n<s>\n</s>\nc\nq\n");
    rs_train_run again;
    char written_src[128], written_tgt[128];
    snprintf(written_src, sizeof written_src, "%s/" RS_SRC_VOCAB_FILE, dir);
    snprintf(written_tgt, sizeof written_tgt, "%s/" RS_TGT_VOCAB_FILE, dir);
    prepare_with(dir, &(rs_train_inputs){.src_vocab = written_src, .tgt_vocab = written_tgt}, 0,
                 &again);
    assert_same_vocab(&again.model.src_vocab, &files.model.src_vocab);
    assert_same_vocab(&again.model.tgt_vocab, &files.model.tgt_vocab);
    ck_assert_int_eq(rs_train_clear_dir(dir, &err), 0);
    ck_assert(testfile_exists(dir, RS_SRC_VOCAB_FILE) && testfile_exists(dir, RS_TGT_VOCAB_FILE));

    /* Resumed with a vocabulary file: its own passes, another is refused. */
    snprintf(ckpt, sizeof ckpt, "%s/last.ckpt", dir);
    ck_assert_msg(!rs_checkpoint_save(ckpt, &files.model, &files.state, &err), "%s", err.msg);
    char train[128];
    snprintf(train, sizeof train, "%s/train.tsv", dir);
    const rs_resume_given none = {NULL, NULL, 0};
    for (int other = 0; other < 2; other++) {
        rs_train_run resumed;
        rs_train_run_init(&resumed);
        ck_assert_msg(rs_resume_load(&resumed, ckpt, &none, 0, &err) == 0, "%s", err.msg);
        rs_config stored = rs_model_settings(&resumed.model);
        rs_train_inputs in = {.train_tsv = train, .no_watch = 1, .src_vocab = other ? tgt : src};
        const int status = rs_train_prepare(&in, &stored, 1, &resumed, &err);
        ck_assert_int_eq(status, other ? RS_TRAIN_REFUSED : 0);
        if (other)
            ck_assert_msg(strstr(err.msg, "is not the source vocabulary the checkpoint was "
                                          "trained with (id 4 is 'z' there, 'c' in the "
                                          "checkpoint)"),
                          "%s", err.msg);
        rs_train_run_free(&resumed);
    }
    rs_train_run_free(&files);
    rs_train_run_free(&shared);
    rs_train_run_free(&shared_file);
    rs_train_run_free(&again);
    testdir_remove(dir);
}
END_TEST

START_TEST(the_log_and_the_config_copy_follow_the_output_rule)
{
    char dir[64], data[128], log[128];
    testdir_make(dir, "prepare_log");
    testfile_put(dir, "pairs.tsv", "a\tb\n");
    testfile_put(dir, "run.yaml", "data:\n  train: pairs.tsv\n");
    snprintf(data, sizeof data, "%s/pairs.tsv", dir);
    snprintf(log, sizeof log, "%s/mine.log", dir);
    rs_train_inputs in = {.train_tsv = data};
    rs_error err = {{0}};
    ck_assert_msg(!rs_train_log_check(&in, NULL, log, &err), "%s", err.msg);
    ck_assert_int_ne(rs_train_log_check(&in, NULL, data, &err), 0); /* an input */
    ck_assert_msg(strstr(err.msg, "pairs.tsv"), "%s", err.msg);
    char config[128];
    snprintf(config, sizeof config, "%s/run.yaml", dir);
    ck_assert_int_ne(rs_train_log_check(&in, config, config, &err), 0);
    /* The copy: written into the run's directory, and never over itself. */
    char run[128], copy[160];
    snprintf(run, sizeof run, "%s/run", dir);
    ck_assert_int_eq(mkdir(run, 0777), 0);
    static const char text[] = "data:\n  train: pairs.tsv\n";
    ck_assert_msg(!rs_train_copy_config(run, config, text, sizeof text - 1, &err), "%s", err.msg);
    snprintf(copy, sizeof copy, "%s/%s", run, RS_CONFIG_COPY);
    testfile_expect(copy, text);
    ck_assert_msg(!rs_train_copy_config(run, copy, "other", 5, &err), "%s", err.msg);
    testfile_expect(copy, text);
    testdir_remove(dir);
}
END_TEST

Suite *prepare_suite(void)
{
    Suite *s = suite_create("prepare");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, claiming_a_directory);
    tcase_add_test(tc, the_log_and_the_config_copy_follow_the_output_rule);
    tcase_add_test(tc, options_that_need_a_dev_set);
    tcase_add_test(tc, a_new_run_from_its_data);
    tcase_add_test(tc, subwords_are_trained_with_a_note);
    tcase_add_test(tc, a_resumed_run_keeps_its_model);
    tcase_add_test(tc, missing_files_are_named);
    tcase_add_test(tc, vocabularies_from_files_or_shared);
    suite_add_tcase(s, tc);
    return s;
}
