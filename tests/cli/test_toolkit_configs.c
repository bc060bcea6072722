/* What other toolkits' files mean for the optimizer and the tokens:
 * OpenNMT-py trains with SGD and its exponential decay unless told otherwise,
 * its optim: and Joey NMT's optimizer: name ours, a rate not given is the
 * optimizer's own; Joey's word level and OpenNMT-py's untransformed text are
 * split at spaces; and training says how much of its data is <unk>.
 * Each file trains a step or two on the small data of tests/fixtures/configs
 * and the checkpoint says what was trained. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/checkpoint.h"
#include "model/config.h"
#include "model/locate.h"
#include "testdir.h"
#include "testprog.h"

#define DATA "tests/fixtures/configs/data/"

/* OpenNMT-py 3's corpora and steps, then `rest`. */
#define ONMT                                                                                       \
    "data:\n  corpus_1:\n    path_src: " DATA "train.en\n    path_tgt: " DATA "train.rv\n"         \
    "train_steps: 2\nencoder_type: brnn\nhidden_size: 16\nword_vec_size: 8\n"

/* Joey NMT 2's data and training, then `rest` inside training:. */
#define JOEY                                                                                       \
    "data:\n  train: " DATA "train\n  src:\n    lang: en\n    level: word\n"                       \
    "  trg:\n    lang: rv\n    level: word\nmodel:\n  encoder:\n    hidden_size: 8\n"              \
    "  decoder:\n    hidden_size: 8\ntraining:\n  updates: 2\n"

/* Writes text to dir/c.yaml, trains with it into dir/m, loads the checkpoint
 * (0), or returns the exit status with the output in out. */
static int train_text(const char *dir, const char *text, rs_model *m, char *out, size_t size)
{
    char path[256], cmd[1024];
    snprintf(path, sizeof path, "%s/c.yaml", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "train --config %s --out %s/m --overwrite --quiet --threads 1 2>&1",
             path, dir);
    const int status = testprog_run_all(cmd, out, size);
    if (status)
        return status;
    snprintf(path, sizeof path, "%s/m/last.ckpt", dir);
    rs_error err;
    ck_assert_msg(rs_checkpoint_load(path, m, NULL, &err) == 0, "%s", err.msg);
    return 0;
}

static void trains(const char *dir, const char *text, rs_model *m)
{
    char out[8192] = "";
    ck_assert_msg(train_text(dir, text, m, out, sizeof out) == 0, "%s\n%s", text, out);
}

START_TEST(opennmt_without_optim_is_sgd_with_its_decay)
{
    char dir[64];
    testdir_make(dir, "rnnsearch-toolkits");
    rs_model m;
    /* learning_rate alone: OpenNMT-py's SGD at that rate, not Adam. */
    trains(dir, ONMT "learning_rate: 0.15\n", &m);
    ck_assert_int_eq(m.train.optimizer, RS_OPT_SGD);
    ck_assert(m.train.lr == 0.15f);
    ck_assert_int_eq(m.train.lr_schedule, RS_LR_EXPONENTIAL);
    ck_assert(m.train.decay_rate == 0.5f && m.train.decay_start == 50000 &&
              m.train.decay_steps == 10000);
    rs_model_free(&m);
    /* Nothing said: SGD at OpenNMT-py's default rate 1; its decay keys read. */
    trains(dir, ONMT "learning_rate_decay: 0.7\nstart_decay_steps: 10\ndecay_steps: 5\n", &m);
    ck_assert_int_eq(m.train.optimizer, RS_OPT_SGD);
    ck_assert(m.train.lr == 1.0f);
    ck_assert(m.train.decay_rate == 0.7f && m.train.decay_start == 10 && m.train.decay_steps == 5);
    rs_model_free(&m);
    /* decay_method: noam is noam, not the exponential decay. */
    trains(dir, ONMT "optim: adam\nlearning_rate: 2\ndecay_method: noam\nwarmup_steps: 4\n", &m);
    ck_assert_int_eq(m.train.optimizer, RS_OPT_ADAM);
    ck_assert_int_eq(m.train.lr_schedule, RS_LR_NOAM);
    rs_model_free(&m);
    testdir_remove(dir);
}
END_TEST

START_TEST(opennmt_adagrad_reads_its_rate_and_accumulator)
{
    char dir[64];
    testdir_make(dir, "rnnsearch-toolkits");
    rs_model m;
    /* The summarisation example's optimizer lines. */
    trains(dir, ONMT "optim: adagrad\nlearning_rate: 0.15\nadagrad_accumulator_init: 0.1\n", &m);
    ck_assert_int_eq(m.train.optimizer, RS_OPT_ADAGRAD);
    ck_assert(m.train.lr == 0.15f && m.train.adagrad_init == 0.1f);
    rs_model_free(&m);
    trains(dir, ONMT "optim: adadelta\n", &m);
    ck_assert_int_eq(m.train.optimizer, RS_OPT_ADADELTA);
    ck_assert(m.train.lr == 1.0f && m.train.rho == 0.95f);
    rs_model_free(&m);
    /* An optimizer rnnsearch lacks is refused, naming those it has. */
    char out[8192] = "";
    ck_assert_int_ne(train_text(dir, ONMT "optim: sparseadam\n", &m, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "'optim: sparseadam' (Joey NMT/OpenNMT-py): rnnsearch's optimizers "
                              "are adam, sgd, adadelta and adagrad"),
                  "%s", out);
    testdir_remove(dir);
}
END_TEST

START_TEST(joey_optimizer_names_are_ours)
{
    char dir[64];
    testdir_make(dir, "rnnsearch-toolkits");
    rs_model m;
    /* Joey's rate with a named optimizer too: build_optimizer reads
     * learning_rate (3.0e-4) whatever the optimizer. */
    trains(dir, JOEY "  optimizer: adadelta\n", &m);
    ck_assert_int_eq(m.train.optimizer, RS_OPT_ADADELTA);
    ck_assert(m.train.lr == 3.0e-4f);
    rs_model_free(&m);
    trains(dir, JOEY "  optimizer: sgd\n  learning_rate: 0.5\n  momentum: 0\n", &m);
    ck_assert_int_eq(m.train.optimizer, RS_OPT_SGD);
    ck_assert(m.train.lr == 0.5f);
    /* A Joey file has no OpenNMT-py schedule added. */
    ck_assert_int_eq(m.train.lr_schedule, RS_LR_CONSTANT);
    rs_model_free(&m);
    char out[8192] = "";
    ck_assert_int_ne(
        train_text(dir, JOEY "  optimizer: sgd\n  momentum: 0.9\n", &m, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "'momentum: 0.9' (Joey NMT/OpenNMT-py): rnnsearch's SGD has no "
                              "momentum"),
                  "%s", out);
    ck_assert_int_ne(train_text(dir, JOEY "  optimizer: rmsprop\n", &m, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "'optimizer: rmsprop'"), "%s", out);
    testdir_remove(dir);
}
END_TEST

/* A Joey NMT file that names no optimizer trains as Joey 2.3's
 * build_optimizer would: SGD (no momentum), at learning_rate 3.0e-4 unless
 * the file gives one, and says so in its notices; the command line still
 * wins. (Joey's own configurations all name theirs: these are the suite's
 * Joey text, not a toolkit's file.) */
START_TEST(joey_without_optimizer_is_sgd_at_joeys_rate)
{
    char dir[64], out[16384] = "", cmd[1024];
    testdir_make(dir, "rnnsearch-toolkits");
    rs_model m;
    ck_assert_msg(train_text(dir, JOEY, &m, out, sizeof out) == 0, "%s", out);
    ck_assert_int_eq(m.train.optimizer, RS_OPT_SGD);
    ck_assert_msg(m.train.lr == 3.0e-4f, "lr %g", (double)m.train.lr);
    ck_assert_int_eq(m.train.lr_schedule, RS_LR_CONSTANT);
    rs_model_free(&m);
    snprintf(cmd, sizeof cmd, "train --config %s/c.yaml --out %s/m --overwrite --threads 1 2>&1",
             dir, dir);
    ck_assert_msg(testprog_run_all(cmd, out, sizeof out) == 0, "%s", out);
    ck_assert_msg(strstr(out, "notices on ") &&
                      strstr(out, "optimizer not given: Joey NMT's SGD, as Joey NMT trains (its "
                                  "learning_rate 3.0e-4 unless given; no momentum)") &&
                      strstr(out, "optimizer=sgd lr=0.0003"),
                  "%s", out);
    /* A rate given is kept. */
    trains(dir, JOEY "  learning_rate: 0.5\n", &m);
    ck_assert_int_eq(m.train.optimizer, RS_OPT_SGD);
    ck_assert(m.train.lr == 0.5f);
    rs_model_free(&m);
    /* The command line wins over Joey's defaults, as over the file's keys. */
    snprintf(cmd, sizeof cmd,
             "train --config %s/c.yaml --out %s/m --overwrite --quiet --threads 1 "
             "--optimizer adam 2>&1",
             dir, dir);
    ck_assert_msg(testprog_run_all(cmd, out, sizeof out) == 0, "%s", out);
    snprintf(cmd, sizeof cmd, "%s/m/last.ckpt", dir);
    rs_error err;
    ck_assert_msg(rs_checkpoint_load(cmd, &m, NULL, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(m.train.optimizer, RS_OPT_ADAM);
    ck_assert(m.train.lr == 0.5f);
    rs_model_free(&m);
    testdir_remove(dir);
}
END_TEST

START_TEST(a_rate_given_is_kept_and_a_rate_not_given_is_the_optimizers)
{
    char dir[64], cmd[1024], out[8192];
    testdir_make(dir, "rnnsearch-toolkits");
    const char *const optimizers[] = {"adam", "sgd", "adadelta", "adagrad"};
    const float lr[] = {0.002f, 1.0f, 1.0f, 0.1f};
    for (int k = 0; k < 4; k++)
        for (int given = 0; given < 2; given++) {
            snprintf(cmd, sizeof cmd,
                     "train --src " DATA "train.en --tgt " DATA "train.rv --out %s/m --overwrite "
                     "--quiet --max-steps 1 --emb 8 --hidden 8 --att 8 --maxout 8 --optimizer %s%s "
                     "2>&1",
                     dir, optimizers[k], given ? " --lr 0.25" : "");
            ck_assert_msg(testprog_run_all(cmd, out, sizeof out) == 0, "%s", out);
            char path[256];
            snprintf(path, sizeof path, "%s/m/last.ckpt", dir);
            rs_model m;
            rs_error err;
            ck_assert_msg(rs_checkpoint_load(path, &m, NULL, &err) == 0, "%s", err.msg);
            ck_assert_int_eq(m.train.optimizer, k);
            ck_assert_msg(m.train.lr == (given ? 0.25f : lr[k]), "%s: lr %g", optimizers[k],
                          (double)m.train.lr);
            rs_model_free(&m);
        }
    testdir_remove(dir);
}
END_TEST

START_TEST(word_levels_and_plain_opennmt_split_at_spaces)
{
    char dir[64];
    testdir_make(dir, "rnnsearch-toolkits");
    rs_model m;
    /* Joey's level: word is str.split(); OpenNMT-py without a tokenizing
     * transform reads the tokens between spaces: both tokenizer: space,
     * which the checkpoint keeps for translate. */
    trains(dir, JOEY, &m);
    ck_assert_int_eq(m.cfg.tokenizer, RS_TOKENIZER_SPACE);
    rs_model_free(&m);
    trains(dir, ONMT, &m);
    ck_assert_int_eq(m.cfg.tokenizer, RS_TOKENIZER_SPACE);
    rs_model_free(&m);
    /* Ours stays ours. */
    trains(dir, ONMT "tokenizer: char\n", &m);
    ck_assert_int_eq(m.cfg.tokenizer, RS_TOKENIZER_CHAR);
    rs_model_free(&m);
    testdir_remove(dir);
}
END_TEST

/* Training starts by saying how much of each side is <unk>, and warns above 2 %. */
START_TEST(training_reports_the_unknown_share_of_each_side)
{
    char dir[64], cmd[1024], out[16384];
    testdir_make(dir, "rnnsearch-toolkits");
    const char *base = "train --src " DATA "train.en --tgt " DATA "train.rv --dev-src " DATA
                       "dev.en --dev-tgt " DATA "dev.rv --out %s/m --overwrite --max-steps 1 "
                       "--emb 8 --hidden 8 --att 8 --maxout 8 %s 2>&1";
    snprintf(cmd, sizeof cmd, base, dir, "");
    ck_assert_msg(testprog_run_all(cmd, out, sizeof out) == 0, "%s", out);
    /* Its own vocabulary covers the training data; dev has words of its own. */
    ck_assert_msg(strstr(out, "<unk>: training source 0.00 %, training target 0.00 %, dev source "),
                  "%s", out);
    ck_assert_msg(!strstr(out, "% of the training"), "%s", out);
    /* Ten words of each side: most training tokens are <unk>. */
    snprintf(cmd, sizeof cmd, base, dir, "--max-vocab 14");
    ck_assert_msg(testprog_run_all(cmd, out, sizeof out) == 0, "%s", out);
    ck_assert_msg(strstr(out, "rnnsearch train: warning: ") &&
                      strstr(out, " % of the training source tokens are <unk>: the vocabulary "
                                  "(max_vocab, min_freq, src_vocab) or the tokenizer (word)") &&
                      strstr(out, " % of the training target tokens are <unk>"),
                  "%s", out);
    testdir_remove(dir);
}
END_TEST

/* Joey NMT 2.3's top-level keys, as every config of that version has them. */
#define JOEY23_TOP                                                                                 \
    "name: toy\njoeynmt_version: 2.3.0\nuse_cuda: True\nfp16: True\nrandom_seed: 42\n"

START_TEST(joey23_top_level_keys_are_read_and_one_file_trains_and_translates)
{
    char dir[64], text[2048], path[256], cmd[1024], out[16384];
    testdir_make(dir, "rnnsearch-toolkits");
    /* model_dir is where the model goes and where translate --config finds it. */
    snprintf(text, sizeof text, JOEY23_TOP "model_dir: %s/joey\n" JOEY, dir);
    snprintf(path, sizeof path, "%s/c.yaml", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "train --config %s --quiet 2>&1", path);
    ck_assert_msg(testprog_run_all(cmd, out, sizeof out) == 0, "%s", out);
    /* use_cuda and fp16 asked for: one notice each, in the notices block. */
    ck_assert_msg(strstr(out, "notices on ") &&
                      strstr(out, ":3: 'use_cuda: True': rnnsearch computes on CPUs, in float32") &&
                      strstr(out, ":4: 'fp16: True': rnnsearch computes on CPUs"),
                  "%s", out);
    /* Joey's defaults where the file is silent and rnnsearch differs. */
    ck_assert_msg(strstr(out, "Joey NMT clips no gradient unless clip_grad_norm is given") &&
                      strstr(out, "Joey NMT initialises the weights with Xavier") &&
                      strstr(out, "optimizer not given: Joey NMT's SGD, as Joey NMT trains (its "
                                  "learning_rate 3.0e-4 unless given"),
                  "%s", out);
    char ckpt[256];
    snprintf(ckpt, sizeof ckpt, "%s/joey/last.ckpt", dir);
    rs_model m;
    rs_error err;
    ck_assert_msg(rs_checkpoint_load(ckpt, &m, NULL, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(m.train.seed, 42);
    rs_model_free(&m);
    snprintf(cmd, sizeof cmd, "translate --config %s < " DATA "dev.en 2>&1", path);
    ck_assert_msg(testprog_run_all(cmd, out, sizeof out) == 0, "%s", out);

    /* Without model_dir, the top-level name is the model, for both. */
    snprintf(text, sizeof text, JOEY23_TOP JOEY);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, RS_MODELS_ENV "=%s %s train --config %s --quiet 2>&1", dir,
             testprog_path(), path);
    ck_assert_msg(testprog_shell(cmd, out, sizeof out) == 0, "%s", out);
    snprintf(cmd, sizeof cmd, RS_MODELS_ENV "=%s %s translate --config %s < " DATA "dev.en 2>&1",
             dir, testprog_path(), path);
    ck_assert_msg(testprog_shell(cmd, out, sizeof out) == 0, "%s", out);
    snprintf(ckpt, sizeof ckpt, "%s/toy/last.ckpt", dir);
    ck_assert_msg(access(ckpt, F_OK) == 0, "no %s", ckpt);
    testdir_remove(dir);
}
END_TEST

START_TEST(joey_voc_min_freq_0_is_every_token)
{
    char dir[64];
    testdir_make(dir, "rnnsearch-toolkits");
    rs_model m;
    trains(dir,
           "data:\n  train: " DATA "train\n  src:\n    lang: en\n    level: word\n"
           "    voc_min_freq: 0\n  trg:\n    lang: rv\n    level: word\n    voc_min_freq: 0\n"
           "training:\n  updates: 1\n",
           &m);
    ck_assert_int_eq(m.train.min_freq, 1);
    rs_model_free(&m);
    testdir_remove(dir);
}
END_TEST

/* Sorted lines of a file, to compare a vocabulary's tokens and counts. */
static char *sorted_lines(const char *path)
{
    char cmd[512], out[8192];
    snprintf(cmd, sizeof cmd, "LC_ALL=C sort %s", path);
    ck_assert_int_eq(testprog_shell(cmd, out, sizeof out), 0);
    return strdup(out);
}

START_TEST(opennmt_vocabularies_not_built_yet_are_built)
{
    char dir[64], text[2048], out[16384];
    testdir_make(dir, "rnnsearch-toolkits");
    rs_model m;
    /* The quickstart's order: vocabularies named before onmt_build_vocab ran. */
    snprintf(text, sizeof text,
             ONMT "src_vocab: %s/run/example.vocab.src\n"
                  "tgt_vocab: %s/run/example.vocab.tgt\n",
             dir, dir);
    ck_assert_msg(train_text(dir, text, &m, out, sizeof out) == 0, "%s", out);
    ck_assert_msg(strstr(out, "/run/example.vocab.src did not exist: built from the training "
                              "data's source side as onmt_build_vocab would (54 tokens"),
                  "%s", out);
    /* Tokens and counts as the onmt_build_vocab-style fixture has them. */
    char path[256];
    snprintf(path, sizeof path, "%s/run/example.vocab.tgt", dir);
    char *built = sorted_lines(path), *fixture = sorted_lines(DATA "vocab.rv");
    ck_assert_str_eq(built, fixture);
    free(built);
    free(fixture);
    ck_assert_int_eq(m.tgt_vocab.size, 54 + 4);
    rs_model_free(&m);
    /* Built once: the next run reads it, saying nothing. */
    ck_assert_msg(train_text(dir, text, &m, out, sizeof out) == 0, "%s", out);
    ck_assert_msg(!strstr(out, "did not exist"), "%s", out);
    rs_model_free(&m);
    /* share_vocab: one file of both sides' tokens, at src_vocab; tgt_vocab unread. */
    snprintf(text, sizeof text,
             ONMT "share_vocab: true\nsrc_vocab: %s/shared.vocab\n"
                  "tgt_vocab: %s/never.vocab\n",
             dir, dir);
    ck_assert_msg(train_text(dir, text, &m, out, sizeof out) == 0, "%s", out);
    ck_assert_msg(strstr(out, "/shared.vocab did not exist: built from the training data's two "
                              "sides") &&
                      strstr(out, "'tgt_vocab' with share_vocab: OpenNMT-py reads src_vocab alone"),
                  "%s", out);
    snprintf(path, sizeof path, "%s/never.vocab", dir);
    ck_assert(access(path, F_OK) != 0);
    ck_assert(m.cfg.shared_vocab == 1 && m.src_vocab.size == 108 + 4);
    rs_model_free(&m);
    testdir_remove(dir);
}
END_TEST

/* OpenNMT-py cuts a vocabulary file to src_vocab_size (32768 unless told),
 * the most frequent first as onmt_build_vocab writes them. */
START_TEST(opennmt_vocabulary_files_are_cut_to_their_size)
{
    char dir[64], out[16384];
    testdir_make(dir, "rnnsearch-toolkits");
    rs_model m;
    ck_assert_msg(train_text(dir,
                             ONMT "src_vocab: " DATA "vocab.en\ntgt_vocab: " DATA "vocab.rv\n"
                                  "src_vocab_size: 10\ntgt_vocab_size: 10\n",
                             &m, out, sizeof out) == 0,
                  "%s", out);
    ck_assert_int_eq(m.src_vocab.size, 10 + 4);
    ck_assert_int_eq(m.tgt_vocab.size, 10 + 4);
    /* the file's first ten after the reserved ids */
    ck_assert_str_eq(m.src_vocab.tokens[4], "that");
    ck_assert_int_eq(m.train.max_vocab, 14);
    rs_model_free(&m);
    ck_assert_msg(train_text(dir, ONMT "src_vocab: " DATA "vocab.en\ntgt_vocab: " DATA "vocab.rv\n",
                             &m, out, sizeof out) == 0,
                  "%s", out);
    ck_assert_int_eq(m.train.max_vocab, 32768 + 4);
    ck_assert_int_eq(m.src_vocab.size, 54 + 4);
    rs_model_free(&m);
    testdir_remove(dir);
}
END_TEST

/* A file of rnnsearch's own keys, some of them Joey's words too (patience,
 * epochs, batch_size), is nobody else's: no toolkit notices. */
START_TEST(our_own_file_gets_no_toolkit_notices)
{
    char dir[64], out[16384];
    testdir_make(dir, "rnnsearch-toolkits");
    rs_model m;
    ck_assert_msg(train_text(dir,
                             "data:\n  src: " DATA "train.en\n  tgt: " DATA "train.rv\n"
                             "training:\n  patience: 0\n  epochs: 1\n  batch_size: 8\n"
                             "  max_steps: 1\n",
                             &m, out, sizeof out) == 0,
                  "%s", out);
    ck_assert_msg(!strstr(out, "notices on") && !strstr(out, "Joey"), "%s", out);
    rs_model_free(&m);
    testdir_remove(dir);
}
END_TEST

#define GENUINE "tests/fixtures/toolkits/"

/* The genuine file is refused (exit 2) with `problems` reasons, each naming
 * its toolkit's key (no "unknown key"), among them each of `says`. */
static void refused_genuine(const char *file, int problems, const char *const *says)
{
    char dir[64], cmd[1024], out[32768] = "";
    testdir_make(dir, "rnnsearch-genuine");
    snprintf(cmd, sizeof cmd, "train --config " GENUINE "%s --out %s/m 2>&1", file, dir);
    ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 2);
    char count[256];
    snprintf(count, sizeof count, GENUINE "%s: %d problems (above); nothing was done", file,
             problems);
    ck_assert_msg(strstr(out, count), "%s: no '%s' in\n%s", file, count, out);
    ck_assert_msg(!strstr(out, "unknown key"), "%s: a key without its reason:\n%s", file, out);
    for (int i = 0; says[i]; i++)
        ck_assert_msg(strstr(out, says[i]), "%s: no '%s' in\n%s", file, says[i], out);
    testdir_remove(dir);
}

START_TEST(genuine_joey_configs_are_refused_with_every_reason)
{
    /* iwslt14_deen_bpe: a Transformer on subword-nmt BPE with AdamW. */
    static const char *const iwslt[] = {
        "joey_iwslt14_deen_bpe.yaml:39: 'src.tokenizer_type: subword-nmt' (Joey NMT 2)",
        "'optimizer: adamw' (Joey NMT/OpenNMT-py): rnnsearch's optimizers are adam, sgd",
        "'encoder.type: transformer'", NULL};
    refused_genuine("joey_iwslt14_deen_bpe.yaml", 31, iwslt);
    /* rnn_reverse: LSTMs, input feeding, a zero initial state. */
    static const char *const reverse[] = {"'encoder.rnn_type: lstm'",
                                          "'decoder.input_feeding: True'",
                                          "'decoder.init_hidden: zero'", NULL};
    refused_genuine("joey_rnn_reverse.yaml", 17, reverse);
    /* rnn_small: three encoder layers, two decoder layers, value clipping. */
    static const char *const small[] = {"'encoder.num_layers: 3'", "'decoder.num_layers: 2'",
                                        "'clip_grad_val: 1.0'", NULL};
    refused_genuine("joey_rnn_small.yaml", 23, small);
    static const char *const transformer[] = {"'encoder.type: transformer'",
                                              "'load_model: toy_model/60.ckpt'", NULL};
    refused_genuine("joey_transformer_small.yaml", 30, transformer);
}
END_TEST

START_TEST(genuine_opennmt_summarisation_is_refused_for_copy_attention)
{
    static const char *const says[] = {
        "onmt_cnndm.yaml:9: 'src_seq_length_trunc: 400'",
        "onmt_cnndm.yaml:34: 'copy_attn: true' (Joey NMT/OpenNMT-py): "
        "rnnsearch has no copy attention",
        NULL};
    refused_genuine("onmt_cnndm.yaml", 5, says);
}
END_TEST

/* The quickstart as its page assembles it: vocabularies not built yet, the
 * vocabulary keys twice, a GPU; trains SGD on text split at spaces, and
 * translate --config on the same file finds the model. */
START_TEST(genuine_opennmt_quickstart_trains_and_translates)
{
    char dir[64], cmd[1024], out[32768], path[256];
    testdir_make(dir, "rnnsearch-genuine");
    snprintf(cmd, sizeof cmd,
             "sed 's|tests/fixtures/toolkits/run/|%s/run/|' " GENUINE
             "onmt_toy_en_de.yaml > %s/q.yaml",
             dir, dir);
    ck_assert(system(cmd) == 0);
    snprintf(path, sizeof path, "%s/q.yaml", dir);
    snprintf(cmd, sizeof cmd, "train --config %s --max-steps 2 --quiet 2>&1", path);
    ck_assert_msg(testprog_run_all(cmd, out, sizeof out) == 0, "%s", out);
    ck_assert_msg(strstr(out, "/run/example.vocab.src did not exist: built") &&
                      strstr(out, ":24: 'src_vocab' given again (first on line 6)") &&
                      strstr(out, ":29: 'gpu_ranks: [0]': rnnsearch computes on CPUs") &&
                      strstr(out, "OpenNMT-py's default model is a 2-layer LSTM"),
                  "%s", out);
    char ckpt[256];
    snprintf(ckpt, sizeof ckpt, "%s/run/model/last.ckpt", dir);
    rs_model m;
    rs_error err;
    ck_assert_msg(rs_checkpoint_load(ckpt, &m, NULL, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(m.train.optimizer, RS_OPT_SGD);
    ck_assert(m.train.lr == 1.0f && m.train.lr_schedule == RS_LR_EXPONENTIAL);
    ck_assert_int_eq(m.cfg.tokenizer, RS_TOKENIZER_SPACE);
    ck_assert(m.train.eval_every == 500 && m.train.save_every == 500);
    rs_model_free(&m);
    snprintf(cmd, sizeof cmd, "translate --config %s < " GENUINE "data/src-val.txt 2>&1", path);
    ck_assert_msg(testprog_run_all(cmd, out, sizeof out) == 0, "%s", out);
    testdir_remove(dir);
}
END_TEST

Suite *toolkit_configs_suite(void)
{
    Suite *s = suite_create("toolkit_configs");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, opennmt_without_optim_is_sgd_with_its_decay);
    tcase_add_test(tc, opennmt_adagrad_reads_its_rate_and_accumulator);
    tcase_add_test(tc, joey_optimizer_names_are_ours);
    tcase_add_test(tc, joey_without_optimizer_is_sgd_at_joeys_rate);
    tcase_add_test(tc, a_rate_given_is_kept_and_a_rate_not_given_is_the_optimizers);
    tcase_add_test(tc, word_levels_and_plain_opennmt_split_at_spaces);
    tcase_add_test(tc, training_reports_the_unknown_share_of_each_side);
    tcase_add_test(tc, joey23_top_level_keys_are_read_and_one_file_trains_and_translates);
    tcase_add_test(tc, joey_voc_min_freq_0_is_every_token);
    tcase_add_test(tc, opennmt_vocabularies_not_built_yet_are_built);
    tcase_add_test(tc, our_own_file_gets_no_toolkit_notices);
    tcase_add_test(tc, opennmt_vocabulary_files_are_cut_to_their_size);
    tcase_add_test(tc, genuine_joey_configs_are_refused_with_every_reason);
    tcase_add_test(tc, genuine_opennmt_summarisation_is_refused_for_copy_attention);
    tcase_add_test(tc, genuine_opennmt_quickstart_trains_and_translates);
    suite_add_tcase(s, tc);
    return s;
}
