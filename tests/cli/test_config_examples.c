/* Configuration files as Joey NMT 1, Joey NMT 2 and OpenNMT-py 3 users write
 * them (tests/fixtures/configs, on 40 pairs of corpora/reorder): each either
 * trains the model it describes, checked setting by setting in the
 * checkpoint, or is refused with every reason in one run, each on its line.
 * --out on the command line keeps the model out of the source tree. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/config/alias.h"
#include "model/checkpoint.h"
#include "model/config.h"
#include "model/vocab.h"
#include "text/text.h"
#include "testdir.h"
#include "testprog.h"

#define FIXTURES "tests/fixtures/configs/"

/* Trains with the file into dir/m and loads the checkpoint. */
static void train(const char *file, const char *dir, rs_model *m)
{
    char cmd[1024], out[8192] = "", ckpt[256];
    snprintf(cmd, sizeof cmd, "train --config " FIXTURES "%s --out %s/m --quiet 2>&1", file, dir);
    const int status = testprog_run_all(cmd, out, sizeof out);
    ck_assert_msg(status == 0, "%s: status %d\n%s", file, status, out);
    snprintf(ckpt, sizeof ckpt, "%s/m/last.ckpt", dir);
    rs_error err;
    ck_assert_msg(rs_checkpoint_load(ckpt, m, NULL, &err) == 0, "%s", err.msg);
}

/* The file is refused (exit 2) with a problem on each of `lines` (0 ends
 * them), in that order, and no other: their count is said once. */
static void refused(const char *file, const int *lines)
{
    char dir[64], cmd[1024], out[16384] = "";
    testdir_make(dir, "rnnsearch-examples");
    snprintf(cmd, sizeof cmd, "train --config " FIXTURES "%s --out %s/m", file, dir);
    ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 2);
    int n = 0;
    const char *at = out;
    for (; lines[n]; n++) {
        char want[256];
        snprintf(want, sizeof want, "rnnsearch train: " FIXTURES "%s:%d: ", file, lines[n]);
        const char *found = strstr(at, want);
        ck_assert_msg(found, "%s: no problem on line %d (after the earlier ones) in\n%s", file,
                      lines[n], out);
        at = found + strlen(want);
    }
    char count[256];
    snprintf(count, sizeof count, FIXTURES "%s: %d problems (above); nothing was done\n", file, n);
    ck_assert_msg(strstr(out, count), "%s: no '%s' in\n%s", file, count, out);
    testdir_remove(dir);
}

START_TEST(joey1_gru_file_trains_what_it_says)
{
    char dir[64];
    testdir_make(dir, "rnnsearch-examples");
    rs_model m;
    train("joey1_bahdanau_gru.yaml", dir, &m);
    ck_assert(m.cfg.emb == 8 && m.cfg.hidden == 12 && m.cfg.attention == RS_ATT_ADDITIVE);
    /* level: word is Joey's split at spaces, not our punctuation-splitting word. */
    ck_assert(m.cfg.lowercase == 1 && m.cfg.tokenizer == RS_TOKENIZER_SPACE);
    ck_assert(m.train.seed == 42 && m.train.lr == 0.001f && m.train.batch_size == 8);
    ck_assert(m.train.lr_schedule == RS_LR_PLATEAU && m.train.lr_decay == 0.5f);
    ck_assert(m.train.max_vocab == 100 + RS_RESERVED && m.train.max_len == 50);
    ck_assert(m.train.dropout == 0.1f && m.train.init_scale == 0.1f);
    ck_assert(m.train.max_steps == 3 && m.train.eval_every == 2 && m.train.log_every == 1);
    rs_model_free(&m);
    testdir_remove(dir);
}
END_TEST

START_TEST(joey1_iwslt_file_is_refused_with_every_reason)
{
    /* test:, alpha, learning_rate_min, max_output_length, print_valid_sents,
     * two LSTMs, two dropouts, hidden_dropout, input feeding and
     * init_hidden: last (use_cuda: True is a notice: CPUs). */
    static const int lines[] = {12, 21, 27, 41, 42, 46, 55, 61, 62, 64, 65, 0};
    refused("joey1_iwslt_deen_bahdanau.yaml", lines);
}
END_TEST

START_TEST(joey2_sentencepiece_file_trains_on_pieces)
{
    char dir[64];
    testdir_make(dir, "rnnsearch-examples");
    rs_model m;
    train("joey2_rnn_sp.yaml", dir, &m);
    /* level: bpe with the model file is SentencePiece, never words split at
     * spaces: the checkpoint holds the model file's bytes for both sides. */
    ck_assert_int_eq(m.cfg.tokenizer, RS_TOKENIZER_SPM);
    size_t size;
    unsigned char *model = testfile_read(FIXTURES "data/sp.model", &size);
    ck_assert(m.spm_src && m.spm_tgt && m.spm_src_len == size && m.spm_tgt_len == size);
    ck_assert(!memcmp(m.spm_src, model, size) && !memcmp(m.spm_tgt, model, size));
    free(model);
    ck_assert(m.cfg.emb == 8 && m.cfg.hidden == 12 && m.train.seed == 7);
    ck_assert(m.train.label_smoothing == 0.1f && m.train.max_len == 100);
    rs_model_free(&m);
    testdir_remove(dir);
}
END_TEST

START_TEST(joey2_iwslt14_sp_file_is_refused_with_every_reason)
{
    /* test:, each side's voc_file, alpha and Moses pre-tokenizer, beam_alpha,
     * token batches (testing and training), lowercased sacreBLEU, adam_betas,
     * learning_rate_min, print_valid_sents, keep_best_ckpts, four
     * initializer settings, tied embeddings, and the Transformer's keys
     * (use_cuda: True is a notice). */
    static const int lines[] = {12, 22,  28,  29,  38,  44,  45,  50,  52,  57, 63, 67,
                                72, 82,  83,  86,  87,  88,  89,  90,  91,  94, 95, 96,
                                99, 102, 104, 106, 107, 108, 111, 114, 116, 0};
    refused("joey2_iwslt14_deen_sp.yaml", lines);
}
END_TEST

/* A config text and the message it must be refused with (after its path). */
typedef struct {
    const char *text, *says;
} refusal;

/* Each of bad[count], written to path, makes `train --config` exit 2 saying
 * its message; cmd[cmd_size] is left holding the last command run. */
static void expect_refusals(const char *dir, const char *path, const refusal *bad, size_t count,
                            char *cmd, size_t cmd_size)
{
    char out[4096];
    for (size_t i = 0; i < count; i++) {
        testfile_write(path, (const unsigned char *)bad[i].text, strlen(bad[i].text));
        snprintf(cmd, cmd_size, "train --train x.tsv --out %s/m --config %s", dir, path);
        ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 2);
        char want[512];
        snprintf(want, sizeof want, "%s%s", path, bad[i].says);
        ck_assert_msg(strstr(out, want), "no '%s' in\n%s", want, out);
    }
}

START_TEST(joey2_subword_keys_are_read_or_refused_never_split_at_spaces)
{
    char dir[64], path[256], cmd[512];
    testdir_make(dir, "rnnsearch-examples");
    snprintf(path, sizeof path, "%s/c.yaml", dir);
    static const refusal bad[] = {
        {"data:\n  src:\n    level: bpe\n",
         ":3: 'src.level: bpe' (Joey NMT 2) without tokenizer_cfg: model_file: Joey NMT 2 "
         "splits level: bpe text with a SentencePiece model"},
        {"data:\n  trg:\n    level: bpe\n    tokenizer_type: subword-nmt\n"
         "    tokenizer_cfg:\n      codes: bpe.codes\n",
         ":4: 'trg.tokenizer_type: subword-nmt' (Joey NMT 2): rnnsearch does not apply BPE "
         "codes while reading"},
        {"data:\n  src:\n    level: word\n    tokenizer_type: sentencepiece\n",
         ":4: 'src.tokenizer_type: sentencepiece' (Joey NMT 2): a tokenizer splits level: bpe "
         "only"},
        {"data:\n  src:\n    level: bpe\n    tokenizer_type: sentencepiece\n    tokenizer_cfg:\n"
         "      model_file: a.model\n  trg:\n    level: word\n",
         ":8: 'trg.level' and 'src.level' (line 3) both give rnnsearch's 'tokenizer', with "
         "different values"},
        {"transforms: [bpe]\nsrc_subword_model: codes\n",
         ":1: 'transforms: bpe' (OpenNMT-py): rnnsearch applies no such transform"},
        {"transforms: [sentencepiece]\nsrc_subword_model: a.model\nsrc_subword_alpha: 0.1\n",
         ":1: 'transforms: sentencepiece' (OpenNMT-py): give both src_subword_model: and "
         "tgt_subword_model:"},
    };
    expect_refusals(dir, path, bad, sizeof bad / sizeof *bad, cmd, sizeof cmd);
    testdir_remove(dir);
}
END_TEST

/* Joey NMT 1's level: bpe names files already split by subword-nmt: the
 * pieces are read as they are (tokenizer: space) and joined again for dev
 * BLEU and translate (post_process: bpe), not split into words. */
START_TEST(joey1_bpe_level_reads_the_pieces)
{
    char dir[64], cmd[1024], text[1024];
    testdir_make(dir, "rnnsearch-examples");
    for (int side = 0; side < 2; side++) {
        const char *lang = side ? "rv" : "en";
        snprintf(cmd, sizeof cmd,
                 "sed -E 's/([a-z]{2})([a-z]{2,})/\\1@@ \\2/g' " FIXTURES
                 "data/train.%s > %s/bpe.%s",
                 lang, dir, lang);
        ck_assert_int_eq(system(cmd), 0);
    }
    snprintf(text, sizeof text,
             "data:\n  src: en\n  trg: rv\n  train: %s/bpe\n  level: bpe\n"
             "model:\n  encoder:\n    hidden_size: 8\n    embeddings: {embedding_dim: 8}\n"
             "training:\n  updates: 1\n  model_dir: %s/m\n",
             dir, dir);
    snprintf(cmd, sizeof cmd, "%s/joey.yaml", dir);
    testfile_write(cmd, (const unsigned char *)text, strlen(text));
    char out[8192] = "", ckpt[256];
    snprintf(text, sizeof text, "train --config %s/joey.yaml --quiet 2>&1", dir);
    ck_assert_msg(testprog_run_all(text, out, sizeof out) == 0, "%s", out);
    snprintf(ckpt, sizeof ckpt, "%s/m/last.ckpt", dir);
    rs_model m;
    rs_error err;
    ck_assert_msg(rs_checkpoint_load(ckpt, &m, NULL, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(m.cfg.tokenizer, RS_TOKENIZER_SPACE);
    ck_assert_int_eq(m.cfg.post_process, RS_POST_BPE);
    ck_assert_int_ge(rs_vocab_id(&m.src_vocab, "th@@"), RS_RESERVED);
    rs_model_free(&m);
    testdir_remove(dir);
}
END_TEST

START_TEST(opennmt3_quickstart_trains)
{
    char dir[64];
    testdir_make(dir, "rnnsearch-examples");
    rs_model m;
    train("opennmt3_toy_en_de.yaml", dir, &m);
    /* The onmt_build_vocab-style files (token<TAB>count) are the vocabularies. */
    ck_assert_int_eq(m.src_vocab.size, 54 + RS_RESERVED);
    ck_assert_int_eq(m.tgt_vocab.size, 54 + RS_RESERVED);
    ck_assert(m.train.max_steps == 3 && m.train.eval_every == 2 && m.train.save_every == 2);
    rs_model_free(&m);
    testdir_remove(dir);
}
END_TEST

START_TEST(opennmt3_brnn_halves_the_hidden_size)
{
    char dir[64];
    testdir_make(dir, "rnnsearch-examples");
    rs_model m;
    train("opennmt3_brnn_sp.yaml", dir, &m);
    /* hidden_size 24 split across brnn's two directions: 12 each. */
    ck_assert_int_eq(m.cfg.hidden, 12);
    ck_assert(m.cfg.emb == 8 && m.cfg.attention == RS_ATT_ADDITIVE);
    ck_assert(m.cfg.tokenizer == RS_TOKENIZER_SPM && m.spm_src && m.spm_tgt);
    ck_assert(m.train.dropout == 0.1f && m.train.lr == 0.002f && m.train.seed == 5);
    ck_assert(m.train.batch_size == 8 && m.train.max_len == 60);
    ck_assert(m.train.max_vocab == 100 + RS_RESERVED && m.train.keep_last == 2);
    rs_model_free(&m);
    testdir_remove(dir);
}
END_TEST

START_TEST(opennmt3_defaults_file_is_refused_with_every_reason)
{
    /* onmt_tokenize, a second corpus (two paths), BPE codes as subword
     * models (two), encoder_type: rnn, LSTM, two layers, input feeding, two
     * dropouts and their steps, token batches (SGD and its decay are read:
     * optimizer sgd, the exponential schedule; the GPU is a notice). */
    static const int lines[] = {14, 16, 17, 22, 23, 25, 26, 27, 30, 32, 33, 40, 0};
    refused("opennmt3_defaults.yaml", lines);
}
END_TEST

START_TEST(opennmt3_keys_that_cannot_be_read_say_why)
{
    char dir[64], path[256], cmd[512], out[4096];
    testdir_make(dir, "rnnsearch-examples");
    snprintf(path, sizeof path, "%s/c.yaml", dir);
    static const refusal bad[] = {
        {"hidden_size: 24\n", ":1: 'hidden_size: 24' (OpenNMT-py) without encoder_type: "
                              "OpenNMT-py's default encoder (rnn) runs one direction"},
        {"encoder_type: brnn\nrnn_size: 25\n",
         ":2: 'rnn_size: 25' (OpenNMT-py) with encoder_type: brnn: an even number"},
        {"encoder_type: transformer\nrnn_size: 24\n",
         ":1: 'encoder_type: transformer' (OpenNMT-py): rnnsearch's encoder is a bidirectional "
         "GRU"},
        {"data:\n  corpus_1:\n    path_src: a\n    path_align: a.align\n",
         ":4: 'corpus_1.path_align' (OpenNMT-py): rnnsearch's attention learns without "
         "alignment guidance"},
        {"layers: 2\n", ":1: 'layers: 2' (Joey NMT/OpenNMT-py): rnnsearch has one GRU layer"},
        {"batch_type: tokens\n", ":1: 'batch_type: tokens' (Joey NMT/OpenNMT-py): rnnsearch's "
                                 "batch_size counts sentences; for batches of N tokens write "
                                 "batch_tokens: N"},
        {"transforms: [filtertoolong, tokendrop]\n",
         ":1: 'transforms: tokendrop' (OpenNMT-py): rnnsearch applies no such transform"},
        {"transforms: []\nlayers: 1\nencoder_type: brnn\nhidden_size: 9\n",
         ":4: 'hidden_size: 9' (OpenNMT-py) with encoder_type: brnn: an even number"},
        {"src_vocab_size: 100\ntgt_vocab_size: 200\n",
         ":2: 'tgt_vocab_size' and 'src_vocab_size' (line 1) both give rnnsearch's 'max_vocab', "
         "with different values"},
    };
    expect_refusals(dir, path, bad, sizeof bad / sizeof *bad, cmd, sizeof cmd);
    /* An empty transforms list and one layer are what rnnsearch does. */
    const char *fine = "transforms: []\nlayers: 1\nencoder_type: brnn\nhidden_size: 9\n";
    testfile_write(path, (const unsigned char *)fine, strlen(fine));
    ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 2);
    ck_assert_msg(!strstr(out, "transforms") && !strstr(out, "layers") && !strstr(out, "problems"),
                  "%s", out);
    testdir_remove(dir);
}
END_TEST

/* Every name the table reads as one of ours is in docs/configuration.md's
 * table, so that the documentation cannot fall behind the code. */
START_TEST(every_renamed_key_is_documented)
{
    size_t size;
    char *doc = (char *)testfile_read("docs/configuration.md", &size);
    const char *section, *key, *ours;
    for (int i = 0; rs_config_alias_entry(i, &section, &key, &ours); i++) {
        if (!ours)
            continue;
        /* As `key`, or in code with a section or value: `data: key`, `key: N`. */
        char quoted[3][128];
        snprintf(quoted[0], sizeof quoted[0], "`%s`", key);
        snprintf(quoted[1], sizeof quoted[1], " %s`", key);
        snprintf(quoted[2], sizeof quoted[2], "`%s:", key);
        ck_assert_msg(strstr(doc, quoted[0]) || strstr(doc, quoted[1]) || strstr(doc, quoted[2]),
                      "docs/configuration.md does not name %s", quoted[0]);
    }
    free(doc);
}
END_TEST

Suite *config_examples_suite(void)
{
    Suite *s = suite_create("config_examples");
    TCase *tc = tcase_create("config_examples");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, joey1_gru_file_trains_what_it_says);
    tcase_add_test(tc, joey1_iwslt_file_is_refused_with_every_reason);
    tcase_add_test(tc, joey2_sentencepiece_file_trains_on_pieces);
    tcase_add_test(tc, joey2_iwslt14_sp_file_is_refused_with_every_reason);
    tcase_add_test(tc, joey2_subword_keys_are_read_or_refused_never_split_at_spaces);
    tcase_add_test(tc, joey1_bpe_level_reads_the_pieces);
    tcase_add_test(tc, opennmt3_quickstart_trains);
    tcase_add_test(tc, opennmt3_brnn_halves_the_hidden_size);
    tcase_add_test(tc, opennmt3_defaults_file_is_refused_with_every_reason);
    tcase_add_test(tc, opennmt3_keys_that_cannot_be_read_say_why);
    tcase_add_test(tc, every_renamed_key_is_documented);
    suite_add_tcase(s, tc);
    return s;
}
