/* Pre-segmented training text and the text a reader gets: the post-processing
 * kinds (text/text.h rs_post_process), telling BPE, SentencePiece pieces and
 * joiners in training text (train/segmented.h), and, through the program,
 * that such text is refused without --tokenizer, that --tokenizer space
 * joins the pieces for dev BLEU (which then equals translate + bleu of the
 * same checkpoint) and translate, and that pairs with an empty side are left
 * out with a warning (--strict: refused), resumed runs included. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/checkpoint.h"
#include "model/config.h"
#include "testdir.h"
#include "testprog.h"
#include "text/corpus.h"
#include "text/text.h"
#include "train/segmented.h"

static char *post(const char *text, int kind)
{
    static char buf[256];
    char *out;
    rs_error err;
    ck_assert_msg(!rs_post_process(text, kind, &out, &err), "%s", err.msg);
    snprintf(buf, sizeof buf, "%s", out);
    free(out);
    return buf;
}

START_TEST(post_processing_kinds)
{
    ck_assert_str_eq(post("the hou@@ se is big", RS_POST_BPE), "the house is big");
    ck_assert_str_eq(post("a hou@@", RS_POST_BPE), "a hou");
    ck_assert_str_eq(post(RS_SPACE "the " RS_SPACE "hou se", RS_POST_SPM), "the house");
    ck_assert_str_eq(post(RS_SPACE "a", RS_POST_SPM), "a");
    ck_assert_str_eq(post("Hello " RS_JOINER ", world " RS_JOINER "!", RS_POST_JOINER),
                     "Hello, world!");
    ck_assert_str_eq(post("fin" RS_JOINER " ds", RS_POST_JOINER), "finds");
    ck_assert_str_eq(post("the hou@@ se", RS_POST_NONE), "the hou@@ se");
    ck_assert_str_eq(post("", RS_POST_SPM), "");
    char *out;
    rs_error err;
    ck_assert_int_eq(rs_post_process("x", 99, &out, &err), -1);
    /* The names, in the checkpoint and on the command line, are the kinds'. */
    ck_assert_str_eq(rs_post_process_names[RS_POST_BPE], "bpe");
    ck_assert_str_eq(rs_post_process_names[RS_POST_SPM], "sentencepiece");
    ck_assert_str_eq(rs_post_process_names[RS_POST_JOINER], "joiner");
}
END_TEST

/* A checkpoint written before post_process existed has no such line: it
 * reads as none. */
START_TEST(old_configurations_read_as_none)
{
    rs_config cfg;
    rs_error err;
    rs_config_defaults(&cfg);
    ck_assert_msg(!rs_config_parse(&cfg, "emb=8\ntokenizer=space\n", &err), "%s", err.msg);
    ck_assert_int_eq(cfg.model.post_process, RS_POST_NONE);
    ck_assert_msg(!rs_config_parse(&cfg, "post_process=bpe\n", &err), "%s", err.msg);
    ck_assert_int_eq(cfg.model.post_process, RS_POST_BPE);
    ck_assert_int_eq(rs_config_parse(&cfg, "post_process=wordpiece\n", &err), -1);
    /* A checkpoint committed before the field existed loads, as none. */
    rs_model m;
    ck_assert_msg(!rs_checkpoint_load("tests/fuzz/corpus/checkpoint/additive-word-state.ckpt", &m,
                                      NULL, &err),
                  "%s", err.msg);
    ck_assert_int_eq(m.cfg.post_process, RS_POST_NONE);
    rs_model_free(&m);
}
END_TEST

START_TEST(segmentation_is_told_by_its_marks)
{
    char *bpe[] = {"the hou@@ se", "a cat", "big", "fin@@"};
    rs_segmentation s = rs_detect_segmentation(bpe, 4);
    ck_assert_int_eq(s.kind, RS_POST_BPE);
    ck_assert(s.share == 0.5);
    char *spm[] = {RS_SPACE "the " RS_SPACE "cat", RS_SPACE "a"};
    ck_assert_int_eq(rs_detect_segmentation(spm, 2).kind, RS_POST_SPM);
    char *joiner[] = {"Hello " RS_JOINER ", world", "x"};
    ck_assert_int_eq(rs_detect_segmentation(joiner, 2).kind, RS_POST_JOINER);
    /* One line in twenty is natural text ("mail me @@ home"), not BPE. */
    char *plain[20];
    for (int i = 0; i < 20; i++)
        plain[i] = i ? "a plain line" : "mail me @@ home";
    ck_assert_int_eq(rs_detect_segmentation(plain, 20).kind, RS_POST_NONE);
    ck_assert_int_eq(rs_detect_segmentation(plain, 0).kind, RS_POST_NONE);
    ck_assert_str_eq(rs_segmentation_advice(RS_POST_BPE), "--tokenizer space --remove-bpe");
}
END_TEST

START_TEST(empty_sides_are_skipped_and_counted)
{
    char dir[64], tsv[128], de[128], en[128];
    rs_pairs pairs;
    rs_pairs_skipped sk;
    rs_error err;
    testdir_make(dir, "rnnsearch-skip");
    snprintf(tsv, sizeof tsv, "%s/p.tsv", dir);
    testfile_put(dir, "p.tsv", "a\tb\n\nc\t \nd\te\n");
    ck_assert_msg(!rs_pairs_read_tsv_lenient(tsv, 0, &sk, &pairs, &err), "%s", err.msg);
    ck_assert_int_eq(pairs.count, 2);
    ck_assert_str_eq(pairs.src[1], "d");
    ck_assert_int_eq(sk.count, 2);
    ck_assert_int_eq(sk.first_line, 2);
    ck_assert_str_eq(sk.first_file, tsv);
    rs_pairs_free(&pairs);
    ck_assert_int_eq(rs_pairs_read_tsv(tsv, 0, &pairs, &err), -1);
    ck_assert_msg(strstr(err.msg, "p.tsv:2: empty line"), "%s", err.msg);
    /* A line without a tab is malformed, not empty: still an error. */
    testfile_put(dir, "p.tsv", "a\tb\nno tab\n");
    ck_assert_int_eq(rs_pairs_read_tsv_lenient(tsv, 0, &sk, &pairs, &err), -1);

    snprintf(de, sizeof de, "%s/p.de", dir);
    snprintf(en, sizeof en, "%s/p.en", dir);
    testfile_put(dir, "p.de", "a\nb\nc\n\ne\n");
    testfile_put(dir, "p.en", "A\n\nC\nD\nE\n");
    ck_assert_msg(!rs_pairs_read_parallel_lenient(de, en, &sk, &pairs, &err), "%s", err.msg);
    ck_assert_int_eq(pairs.count, 3);
    ck_assert_str_eq(pairs.src[1], "c");
    ck_assert_str_eq(pairs.tgt[2], "E");
    ck_assert_int_eq(sk.count, 2);
    ck_assert_int_eq(sk.first_line, 2);
    ck_assert_str_eq(sk.first_file, en);
    rs_pairs_free(&pairs);
    ck_assert_int_eq(rs_pairs_read_parallel(de, en, &pairs, &err), -1);
    ck_assert_msg(strstr(err.msg, "p.en:2: empty line"), "%s", err.msg);
    testdir_remove(dir);
}
END_TEST

/* A tiny BPE corpus: each word "hou@@ se" cut after three letters, the
 * target the source reversed; ref.en is the target without the cuts. */
static void write_bpe_corpus(const char *dir, const char *name, int count, unsigned seed)
{
    static const char *const words[] = {"house", "garden",   "window", "table",
                                        "river", "mountain", "bridge", "forest"};
    char path[3][256];
    const char *ext[3] = {"de", "en", "ref.en"};
    FILE *f[3];
    for (int k = 0; k < 3; k++) {
        snprintf(path[k], sizeof path[k], "%s/%s.%s", dir, name, ext[k]);
        ck_assert((f[k] = fopen(path[k], "w")) != NULL);
    }
    for (int i = 0; i < count; i++) {
        int w[4], n = 2 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 3;
        for (int j = 0; j < n; j++)
            w[j] = (int)((seed = seed * 1103515245u + 12345u) >> 16) % 8;
        for (int j = 0; j < n; j++) {
            const char *a = words[w[j]], *b = words[w[n - 1 - j]];
            fprintf(f[0], "%s%.3s@@ %s", j ? " " : "", a, a + 3);
            fprintf(f[1], "%s%.3s@@ %s", j ? " " : "", b, b + 3);
            fprintf(f[2], "%s%s", j ? " " : "", b);
        }
        for (int k = 0; k < 3; k++)
            fputc('\n', f[k]);
    }
    for (int k = 0; k < 3; k++)
        fclose(f[k]);
}

/* "BLEU = 92.29 ..." (bleu) or "(dev BLEU 92.29)" (train's last lines). */
static double number_after(const char *text, const char *label)
{
    const char *p = strstr(text, label);
    ck_assert_msg(p != NULL, "no '%s' in: %s", label, text);
    return strtod(p + strlen(label), NULL);
}

#define SMALL "--emb 16 --hidden 32 --att 16 --maxout 16 --lr 0.02 --threads 1"

START_TEST(bpe_without_a_tokenizer_is_refused)
{
    char dir[64], args[1024], out[8192], path[128];
    testdir_make(dir, "rnnsearch-bpe-refused");
    write_bpe_corpus(dir, "train", 40, 1);
    snprintf(args, sizeof args,
             "train --src %s/train.de --tgt %s/train.en --out %s/m --epochs 1 " SMALL, dir, dir,
             dir);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "train.de: looks segmented by BPE ('@@ ' on 100% of lines); pass "
                              "--tokenizer space --remove-bpe"),
                  "%s", out);
    /* The refused start left nothing: no directory, lock or log. */
    snprintf(path, sizeof path, "%s/m", dir);
    ck_assert_int_ne(access(path, F_OK), 0);
    /* --remove-bpe alone does not say how to tokenize. */
    snprintf(args, sizeof args,
             "train --src %s/train.de --tgt %s/train.en --out %s/m --epochs 1 --remove-bpe " SMALL,
             dir, dir, dir);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_int_ne(access(path, F_OK), 0);
    /* A tokenizer given is the user's choice. */
    snprintf(args, sizeof args,
             "train --src %s/train.de --tgt %s/train.en --out %s/m --epochs 1 --quiet "
             "--tokenizer word " SMALL,
             dir, dir, dir);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    snprintf(args, sizeof args, "info -m %s/m", dir);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    ck_assert_msg(strstr(out, "post_process = none"), "%s", out);
    testdir_remove(dir);
}
END_TEST

/* The dev BLEU training logs for best.ckpt is what a user measures with
 * translate and bleu against the unsegmented references. */
START_TEST(dev_bleu_scores_the_joined_text)
{
    char dir[64], args[2048], out[16384];
    testdir_make(dir, "rnnsearch-bpe-bleu");
    write_bpe_corpus(dir, "train", 200, 1);
    write_bpe_corpus(dir, "dev", 20, 7);
    snprintf(args, sizeof args,
             "train --src %s/train.de --tgt %s/train.en --dev-src %s/dev.de --dev-tgt %s/dev.en "
             "--out %s/m --epochs 30 --dev-bleu --tokenizer space " SMALL,
             dir, dir, dir, dir, dir);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    ck_assert_msg(strstr(out, "train.de: looks segmented by BPE ('@@ ' on 100% of lines): dev "
                              "BLEU and translate join the pieces (post_process=bpe"),
                  "%s", out);
    const double dev_bleu = number_after(out, "(dev BLEU ");
    ck_assert_msg(dev_bleu > 20.0, "the model learnt too little to compare: %s", out);
    snprintf(args, sizeof args, "info -m %s/m", dir);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    ck_assert_msg(strstr(out, "post_process = bpe"), "%s", out);

    /* translate joins by default, as --remove-bpe would; bleu agrees. */
    snprintf(args, sizeof args,
             "translate -m %s/m/best.ckpt --quiet %s/dev.de > %s/hyp && "
             "%s translate -m %s/m/best.ckpt --quiet --remove-bpe %s/dev.de > %s/hyp2 && "
             "cmp %s/hyp %s/hyp2 && %s bleu %s/hyp %s/dev.ref.en 2>/dev/null",
             dir, dir, dir, testprog_path(), dir, dir, dir, dir, dir, testprog_path(), dir, dir);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    const double bleu = number_after(out, "BLEU = ");
    ck_assert_msg(bleu == dev_bleu, "dev BLEU %.2f, translate + bleu %.2f", dev_bleu, bleu);

    /* --resume keeps the checkpoint's post_process: the same command goes on,
     * --remove-bpe agrees with it, --post-process none is refused. */
    snprintf(args, sizeof args,
             "train --src %s/train.de --tgt %s/train.en --dev-src %s/dev.de --dev-tgt %s/dev.en "
             "--out %s/m --epochs 31 --dev-bleu --tokenizer space --resume --remove-bpe " SMALL,
             dir, dir, dir, dir, dir);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    snprintf(
        args, sizeof args,
        "train --src %s/train.de --tgt %s/train.en --dev-src %s/dev.de --dev-tgt %s/dev.en "
        "--out %s/m --epochs 32 --dev-bleu --tokenizer space --resume --post-process none " SMALL,
        dir, dir, dir, dir, dir);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "trained with post_process=bpe, not none"), "%s", out);

    /* --post-process none gives the pieces back. */
    snprintf(args, sizeof args, "translate -m %s/m/best.ckpt --quiet --post-process none %s/dev.de",
             dir, dir);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    ck_assert_msg(strstr(out, "@@ "), "%s", out);
    testfile_put(dir, "keep.yaml", "translation:\n  post_process: none\n");
    snprintf(args, sizeof args,
             "translate -m %s/m/best.ckpt --quiet --config %s/keep.yaml %s/dev.de", dir, dir, dir);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    ck_assert_msg(strstr(out, "@@ "), "%s", out);
    /* The safetensors export carries it to an imported checkpoint. */
    snprintf(args, sizeof args,
             "export -m %s/m/best.ckpt -o %s/m.safetensors 2>&1 && %s import %s/m.safetensors -o "
             "%s/imported.ckpt 2>&1 && %s info -m %s/imported.ckpt",
             dir, dir, testprog_path(), dir, dir, testprog_path(), dir);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    ck_assert_msg(strstr(out, "post_process = bpe"), "%s", out);
    snprintf(args, sizeof args, "translate -m %s/m/best.ckpt --post-process wordpiece %s/dev.de",
             dir, dir);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    testdir_remove(dir);
}
END_TEST

/* --tokenizer space with --post-process none: the pieces are kept, as said. */
START_TEST(post_process_given_is_kept)
{
    char dir[64], args[1024], out[8192];
    testdir_make(dir, "rnnsearch-bpe-kept");
    write_bpe_corpus(dir, "train", 40, 1);
    snprintf(args, sizeof args,
             "train --src %s/train.de --tgt %s/train.en --out %s/m --epochs 1 --quiet "
             "--tokenizer space --post-process none " SMALL,
             dir, dir, dir);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    ck_assert_msg(!strstr(out, "looks segmented"), "%s", out);
    snprintf(args, sizeof args, "info -m %s/m", dir);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    ck_assert_msg(strstr(out, "post_process = none"), "%s", out);
    testdir_remove(dir);
}
END_TEST

/* post_process joins the model's output, the target side: its kind comes
 * from the target text (BPE'd sources and SentencePiece targets are
 * post_process=sentencepiece), and a target side that is not segmented is
 * left as it is (none), whatever the source side looks like. */
START_TEST(post_process_follows_the_target_side)
{
    char dir[64], args[2048], out[8192];
    testdir_make(dir, "rnnsearch-bpe-target");
    write_bpe_corpus(dir, "train", 40, 1);
    snprintf(args, sizeof args,
             "sed 's/^/\xE2\x96\x81/; s/ / \xE2\x96\x81/g' %s/train.ref.en > %s/sp.en", dir, dir);
    ck_assert_msg(testprog_shell(args, out, sizeof out) == 0, "%s", out);
    static const struct {
        const char *target, *post_process, *says;
    } cases[] = {
        {"sp.en", "post_process = sentencepiece", "sp.en: looks segmented by SentencePiece"},
        {"train.ref.en", "post_process = none", "the target side does not"},
    };
    for (int i = 0; i < 2; i++) {
        snprintf(
            args, sizeof args,
            "train --src %s/train.de --tgt %s/%s --out %s/m%d --epochs 1 --tokenizer space " SMALL,
            dir, dir, cases[i].target, dir, i);
        ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
        ck_assert_msg(strstr(out, cases[i].says), "%s", out);
        snprintf(args, sizeof args, "info -m %s/m%d", dir, i);
        ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
        ck_assert_msg(strstr(out, cases[i].post_process), "%s: %s", cases[i].target, out);
    }
    testdir_remove(dir);
}
END_TEST

/* Empty lines: left out with a warning naming the file, the count and the
 * first line; --strict (or strict: true in a file) stops at the first with
 * file:line and leaves no directory; the dev set likewise; a resumed run on
 * the same files finds its data (the fingerprint is of the pairs kept). */
START_TEST(empty_lines_are_left_out)
{
    char dir[64], args[1024], out[8192], path[128];
    testdir_make(dir, "rnnsearch-empty");
    testfile_put(dir, "train.tsv", "a b\tb a\n\nc d\td c\n\t\ne f\t \na c\tc a\n");
    testfile_put(dir, "dev.tsv", "a b\tb a\n\nc d\td c\n");
    const char *small = "--emb 4 --hidden 4 --att 4 --maxout 2 --epochs 1 --threads 1";
    snprintf(args, sizeof args,
             "train --train %s/train.tsv --dev %s/dev.tsv --out %s/m %s --strict", dir, dir, dir,
             small);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "train.tsv:2: empty line"), "%s", out);
    snprintf(path, sizeof path, "%s/m", dir);
    ck_assert_int_ne(access(path, F_OK), 0);
    testfile_put(dir, "strict.yaml", "data:\n  strict: true\n");
    snprintf(args, sizeof args,
             "train --train %s/train.tsv --dev %s/dev.tsv --out %s/m %s --config %s/strict.yaml",
             dir, dir, dir, small, dir);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "train.tsv:2: empty line"), "%s", out);
    ck_assert_int_ne(access(path, F_OK), 0);

    /* The dev set by the same rule. */
    testfile_put(dir, "clean.tsv", "a b\tb a\n");
    snprintf(args, sizeof args,
             "train --train %s/clean.tsv --dev %s/dev.tsv --out %s/m %s --strict", dir, dir, dir,
             small);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "dev.tsv:2: empty line"), "%s", out);
    ck_assert_int_ne(access(path, F_OK), 0);

    snprintf(args, sizeof args, "train --train %s/train.tsv --dev %s/dev.tsv --out %s/m %s", dir,
             dir, dir, small);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    ck_assert_msg(strstr(out, "train.tsv: 3 training pairs with an empty side left out, the first "
                              "at line 2"),
                  "%s", out);
    ck_assert_msg(strstr(out, "dev.tsv: 1 dev pair with an empty side left out, the first at "
                              "line 2"),
                  "%s", out);
    ck_assert_msg(strstr(out, ": 3 training pairs (0 longer"), "%s", out);
    ck_assert_msg(strstr(out, "), 2 dev pairs"), "%s", out);
    /* The same files again: the fingerprint matches (--epochs once: an option
     * given twice is refused). */
    snprintf(args, sizeof args,
             "train --train %s/train.tsv --dev %s/dev.tsv --out %s/m --emb 4 --hidden 4 --att 4 "
             "--maxout 2 --threads 1 --epochs 2 --resume",
             dir, dir, dir);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    ck_assert_msg(strstr(out, "resuming"), "%s", out);
    testdir_remove(dir);
}
END_TEST

/* A run with no pair left to train on is refused before its first step,
 * saying why, and leaves no directory: every pair empty on a side, or every
 * pair longer than --max-len. */
START_TEST(no_pairs_left_leaves_nothing)
{
    char dir[64], args[1024], out[8192], path[128];
    testdir_make(dir, "rnnsearch-nopairs");
    testfile_put(dir, "empty.tsv", "\t\na b\t\n \tc\n");
    testfile_put(dir, "long.tsv", "a b c d\te f g h\n");
    const char *small = "--emb 4 --hidden 4 --att 4 --maxout 2 --epochs 1 --threads 1";
    snprintf(path, sizeof path, "%s/m", dir);
    snprintf(args, sizeof args, "train --train %s/empty.tsv --out %s %s", dir, path, small);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "empty.tsv: no training pairs (every pair has an empty side)"), "%s",
                  out);
    ck_assert_int_ne(access(path, F_OK), 0);
    snprintf(args, sizeof args, "train --train %s/long.tsv --out %s %s --max-len 2", dir, path,
             small);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "long.tsv: no training pairs: all 1 are longer than --max-len 2"),
                  "%s", out);
    ck_assert_int_ne(access(path, F_OK), 0);
    /* A dev set with no pair left is refused before the run starts too: it
     * began, wrote its directory and stopped at the first evaluation ("dev
     * BLEU needs the text codec and the dev references"), or ran with no dev
     * set at all. */
    testfile_put(dir, "ok.tsv", "a b\tc d\n");
    snprintf(args, sizeof args, "train --train %s/ok.tsv --dev %s/empty.tsv --dev-bleu --out %s %s",
             dir, dir, path, small);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "empty.tsv: no dev pairs (every pair has an empty side)"), "%s", out);
    ck_assert_int_ne(access(path, F_OK), 0);
    testdir_remove(dir);
}
END_TEST

Suite *segmented_suite(void)
{
    Suite *s = suite_create("segmented");
    TCase *tc = tcase_create("segmented");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, post_processing_kinds);
    tcase_add_test(tc, old_configurations_read_as_none);
    tcase_add_test(tc, segmentation_is_told_by_its_marks);
    tcase_add_test(tc, empty_sides_are_skipped_and_counted);
    tcase_add_test(tc, bpe_without_a_tokenizer_is_refused);
    tcase_add_test(tc, dev_bleu_scores_the_joined_text);
    tcase_add_test(tc, post_process_given_is_kept);
    tcase_add_test(tc, post_process_follows_the_target_side);
    tcase_add_test(tc, empty_lines_are_left_out);
    tcase_add_test(tc, no_pairs_left_leaves_nothing);
    suite_add_tcase(s, tc);
    return s;
}
