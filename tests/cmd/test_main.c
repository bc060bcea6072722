/* The program as a user meets it: exit statuses, messages that name the file
 * and the problem, and a checkpoint that refuses corruption without harm. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "model/checkpoint.h"
#include "testdir.h"
#include "testprog.h"
#include "tinymodel.h"

/* Where a help text quotes a measurement ("measured", a speed-up such as
 * "3.7x", a BLEU difference), or NULL: help says what an option does, and
 * figures, which change with every machine and fix, live in
 * docs/performance.md (issue 42: translate --help's int8 and shortlist
 * figures outlived the bug that made them). */
static const char *measurement_in(const char *text)
{
    for (const char *p = text; *p; p++) {
        if (!strncmp(p, "measured", 8) || !strncmp(p, "BLEU -", 6) || !strncmp(p, "BLEU +", 6))
            return p;
        if (*p >= '0' && *p <= '9' && p[1] == 'x' && (p[2] == ' ' || p[2] == ',' || p[2] == ')'))
            return p;
    }
    return NULL;
}

START_TEST(help_version_and_usage_errors)
{
    char out[16384];
    ck_assert_int_eq(testprog_run_all("--help", out, sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, "translate"));
    ck_assert_int_eq(testprog_run_all("--version", out, sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, "rnnsearch"));
    ck_assert_int_eq(testprog_run_all("no-such-command", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "no-such-command"));
    /* A misspelt command or long option: the nearest is named, as for configuration keys. */
    ck_assert_int_eq(testprog_run_all("trian", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "unknown command 'trian' (did you mean 'train'?)"), "%s", out);
    ck_assert_int_eq(testprog_run_all("train --hiden 8", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "unknown option '--hiden' (did you mean '--hidden'?)"), "%s", out);
    ck_assert_int_eq(testprog_run_all("translate --bema=3", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "unknown option '--bema' (did you mean '--beam'?)"), "%s", out);
    /* What was printed must reach standard output: a full disk fails. */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s --help 2>&1 > /dev/full", testprog_path());
    ck_assert_int_eq(testprog_shell(cmd, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "cannot write standard output"), "%s", out);
    ck_assert_int_eq(
        testprog_run_all("aer corpora/dates/dev.align corpora/dates/dev.align > /dev/full", out,
                         sizeof out),
        1);
    ck_assert_int_eq(testprog_run_all("translate --zzzzzzzz", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "unknown option '--zzzzzzzz'\n"), "%s", out);
    static const char *const commands[] = {"train",  "translate", "score",   "tokenize",
                                           "export", "import",    "lexicon", "serve"};
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
        char args[64];
        snprintf(args, sizeof args, "%s --help", commands[i]);
        ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 0);
        ck_assert_msg(strstr(out, "usage:") != NULL, "%s --help prints no usage", commands[i]);
        const char *figure = measurement_in(out);
        ck_assert_msg(!figure,
                      "%s --help quotes a measurement (docs/performance.md has them): %.60s",
                      commands[i], figure);
        snprintf(args, sizeof args, "%s --no-such-option", commands[i]);
        ck_assert_msg(testprog_run_all(args, out, sizeof out) == 2, "%s accepts an unknown option",
                      commands[i]);
    }
    ck_assert_int_eq(testprog_run_all("translate < /dev/null", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "-m"));
    ck_assert_int_eq(testprog_run_all("train --train x.tsv --batch-size zero", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "--batch-size"));
}
END_TEST

START_TEST(bad_training_data_is_named)
{
    char out[16384], dir[] = "/tmp/rnnsearch-cli-XXXXXX", args[512], path[300];
    ck_assert(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/bad.tsv", dir);
    FILE *f = fopen(path, "w");
    fputs("one\tun\ntwo deux\n", f);
    fclose(f);
    snprintf(args, sizeof args, "train --train %s --out %s/m", path, dir);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "bad.tsv:2") != NULL, "no file:line in: %s", out);
    /* With --strict, a side of white space only is refused like an empty one. */
    f = fopen(path, "w");
    fputs("one\tun\n \t deux\n", f);
    fclose(f);
    snprintf(args, sizeof args, "train --train %s --out %s/m --strict", path, dir);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "bad.tsv:2: the sentence in column 1 is only white space") != NULL,
                  "%s", out);
    snprintf(args, sizeof args, "train --train %s/missing.tsv --out %s/m", dir, dir);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 1);
    ck_assert_ptr_nonnull(strstr(out, "missing.tsv"));
    snprintf(args, sizeof args, "rm -rf %s", dir);
    ck_assert(system(args) == 0);
}
END_TEST

START_TEST(corrupt_checkpoint_is_refused_and_kept)
{
    char out[16384], dir[] = "/tmp/rnnsearch-cli-XXXXXX", args[1024], path[300];
    ck_assert(mkdtemp(dir) != NULL);
    snprintf(args, sizeof args,
             "train --train corpora/reorder/dev.tsv --out %s/m --epochs 1 --emb 8 --hidden 8 "
             "--att 8 --maxout 4 --quiet",
             dir);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    ck_assert_msg(!strstr(out, "best"), "%s", out);
    /* The model's own tokenization, as ids with </s> appended. */
    snprintf(args, sizeof args, "tokenize -m %s/m --ids <<'EOF'\nthe tall horse zzzz\nEOF", dir);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    int ids[8], count = sscanf(out, "%d %d %d %d %d", &ids[0], &ids[1], &ids[2], &ids[3], &ids[4]);
    ck_assert_int_eq(count, 5);
    ck_assert_int_eq(ids[3], 1); /* an unknown word is <unk> */
    ck_assert_int_eq(ids[4], 3); /* </s> */
    ck_assert(ids[0] >= 4 && ids[1] >= 4 && ids[2] >= 4);
    /* Without a dev set there is no best model: no best.ckpt, none announced,
     * and -m DIR is last.ckpt. */
    snprintf(path, sizeof path, "%s/m/best.ckpt", dir);
    ck_assert_int_ne(access(path, F_OK), 0);
    snprintf(args, sizeof args, "translate -m %s/m < corpora/reorder/test.tsv", dir);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    snprintf(args, sizeof args, "cp %s/m/last.ckpt %s/m/copy.ckpt", dir, dir);
    ck_assert(system(args) == 0);
    snprintf(path, sizeof path, "%s/m/copy.ckpt", dir);
    /* Flip one byte in the middle of the file. */
    FILE *f = fopen(path, "r+b");
    ck_assert(f != NULL);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, size / 2, SEEK_SET);
    int c = fgetc(f);
    fseek(f, size / 2, SEEK_SET);
    fputc(c ^ 0x55, f);
    fclose(f);
    snprintf(args, sizeof args, "translate -m %s < corpora/reorder/test.tsv", path);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "copy.ckpt") != NULL, "the message does not name the file: %s", out);
    /* A truncated file too. */
    snprintf(args, sizeof args, "truncate -s %ld %s/m/last.ckpt", size / 3, dir);
    ck_assert(system(args) == 0);
    snprintf(args, sizeof args, "score -m %s/m/last.ckpt corpora/reorder/test.tsv", dir);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 1);
    ck_assert_ptr_nonnull(strstr(out, "last.ckpt"));
    snprintf(args, sizeof args, "rm -rf %s", dir);
    ck_assert(system(args) == 0);
}
END_TEST

/* One convention: -h and --help print usage and exit 0; problems with options
 * are reported in one wording that names the option, exit 2. */
START_TEST(one_option_convention)
{
    char out[16384], args[256];
    static const char *const commands[] = {"train",  "translate", "score", "align",   "tokenize",
                                           "export", "import",    "bleu",  "explain", "plot",
                                           "bench",  "average",   "info",  "serve"};
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
        static const char *const help[] = {"-h", "--help"};
        for (int h = 0; h < 2; h++) {
            snprintf(args, sizeof args, "%s %s", commands[i], help[h]);
            ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s exits non-zero", args);
            ck_assert_msg(strstr(out, "usage:") != NULL, "%s prints no usage", args);
        }
        snprintf(args, sizeof args, "%s --no-such-option", commands[i]);
        ck_assert_msg(testprog_run_all(args, out, sizeof out) == 2, "%s accepts an unknown option",
                      commands[i]);
        char want[128];
        snprintf(want, sizeof want,
                 "rnnsearch %s: unknown option '--no-such-option'\nTry 'rnnsearch %s --help'.",
                 commands[i], commands[i]);
        ck_assert_msg(strstr(out, want) != NULL, "%s: %s", commands[i], out);
        snprintf(args, sizeof args, "%s -Z", commands[i]);
        ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
        ck_assert_msg(strstr(out, "unknown option '-Z'") != NULL, "%s", out);
        snprintf(args, sizeof args, "%s --help=yes", commands[i]);
        ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
        ck_assert_msg(strstr(out, "option '--help' takes no value") != NULL, "%s", out);
    }
    ck_assert_int_eq(testprog_run_all("--no-such-option", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "rnnsearch: unknown option '--no-such-option'"));
    /* A missing value and a bad value name the option. */
    ck_assert_int_eq(testprog_run_all("plot x --output", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "option '--output' needs a value") != NULL, "%s", out);
    ck_assert_int_eq(testprog_run_all("export -m", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "option '-m' needs a value") != NULL, "%s", out);
    ck_assert_int_eq(testprog_run_all("explain --keys 1 --query 1 --digits 99", out, sizeof out),
                     2);
    ck_assert_msg(strstr(out, "--digits: '99' is not an integer from 0 to 17") != NULL, "%s", out);
    ck_assert_int_eq(testprog_run_all("bleu --metric ter a b", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "--metric: 'ter' is not one of bleu, chrf or both") != NULL, "%s",
                  out);
    /* An option given once may not be given twice. */
    ck_assert_int_eq(testprog_run_all("export -m a -m b -o x", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "-m given twice") != NULL, "%s", out);
}
END_TEST

/* The two ways a command reports: rs_cli_fail ("PROG: message", exit 1) and
 * rs_cli_usage_error (the same and "Try 'PROG --help'.", exit 2). */
START_TEST(failures_and_usage_errors_are_reported_alike)
{
    char dir[128], path[256];
    testdir_make(dir, "rs_report");
    snprintf(path, sizeof path, "%s/stderr", dir);
    FILE *saved = stderr;
    stderr = fopen(path, "w");
    ck_assert_ptr_nonnull(stderr);
    const int failed = rs_cli_fail("rnnsearch x", "%s has %d lines", "a.txt", 3);
    const int usage = rs_cli_usage_error("rnnsearch x", "give %s", "-m");
    fclose(stderr);
    stderr = saved;
    ck_assert_int_eq(failed, RS_EXIT_FAIL);
    ck_assert_int_eq(usage, RS_EXIT_USAGE);
    testfile_expect(path, "rnnsearch x: a.txt has 3 lines\n"
                          "rnnsearch x: give -m\nTry 'rnnsearch x --help'.\n");
    testdir_remove(dir);
}
END_TEST

/* -m MODEL: a directory gives best.ckpt, else last.ckpt; a file is itself. */
/* File name endings, as align (".svg") and import (".ckpt", "/") test them. */
START_TEST(file_name_endings)
{
    ck_assert_int_eq(rs_cli_ends_with("out/a.svg", ".svg"), 1);
    ck_assert_int_eq(rs_cli_ends_with("a.svg.txt", ".svg"), 0);
    ck_assert_int_eq(rs_cli_ends_with("svg", ".svg"), 0);
    ck_assert_int_eq(rs_cli_ends_with("models/x/", "/"), 1);
    ck_assert_int_eq(rs_cli_ends_with("", ""), 1);
}
END_TEST

/* A --config file's numbers go through the same table as the command line's
 * (cli/options.c: tests/cli/test_options.c), named with file:line; the
 * commands name option and range. */
START_TEST(numeric_options_from_a_table)
{
    char out[4096], dir[128], yaml[256], cmd[512];
    testdir_make(dir, "rs_numbers");
    snprintf(yaml, sizeof yaml, "%s/serve.yaml", dir);
    static const char body[] = "serve:\n  timeout: 5\n  max_beam: 300\n";
    testfile_write(yaml, (const unsigned char *)body, sizeof body - 1);
    snprintf(cmd, sizeof cmd, "serve -m x --config %s", yaml);
    ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "serve.yaml:3: --max-beam: '300' is not an integer from 1 to 256"),
                  "%s", out);
    testdir_remove(dir);

    /* The commands whose numbers come from such tables name option and range. */
    ck_assert_int_eq(testprog_run_all("align -m x --threshold 0", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "--threshold: '0' is not a number from 1e-09 to 1"), "%s", out);
    ck_assert_int_eq(testprog_run_all("serve -m x --max-beam 257", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "--max-beam: '257' is not an integer from 1 to 256"), "%s", out);
    ck_assert_int_eq(testprog_run_all("bench --data x --steps 0", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "--steps: '0' is not an integer from 1 to 100000"), "%s", out);
    ck_assert_int_eq(testprog_run_all("bench --data x --configs L", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "--configs: 'L' is not one of S, M, S,M or M,S"), "%s", out);
    /* --threads has one range wherever it is taken (model/config.h). */
    static const char *const threads[] = {"translate -m x", "align -m x", "train --train x"};
    for (int i = 0; i < 3; i++) {
        char line[128];
        snprintf(line, sizeof line, "%s --threads %d", threads[i], RS_MAX_THREADS + 1);
        ck_assert_int_eq(testprog_run_all(line, out, sizeof out), 2);
        ck_assert_msg(strstr(out, "--threads: '1025' is not an integer from ") &&
                          strstr(out, " to 1024"),
                      "%s: %s", line, out);
    }
    ck_assert_int_eq(testprog_run_all("bench --data x --threads 1025", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "--threads: '1025' is not a list like 1,2"), "%s", out);
}
END_TEST

/* An option that takes one value, given twice, is refused in the one
 * option parser for every command (the last one silently won: --shortlist
 * twice used the second table); -m and --allow-host add values and may
 * repeat. Numbers are written as numbers: strtol and strtod would take " 5"
 * and "+5", strtod "0x10" as 16. --shortlist FILE,0,0 lists no word and would translate
 * everything to empty lines. */
START_TEST(repeated_options_and_odd_numbers_are_refused)
{
    char out[8192];
    static const struct {
        const char *args, *said;
    } bad[] = {
        {"translate -m x --shortlist a.tsv --shortlist b.tsv", "--shortlist given twice"},
        {"translate -m x --beam 3 --beam=4", "--beam given twice"},
        {"translate -m x -o a.txt --output b.txt", "-o given twice"},
        {"translate -m x --weights 1 --weights 2", "--weights given twice"},
        {"train --train x --out y --lr 0.1 --lr 0.2", "--lr given twice"},
        {"train --train x --train y --out z", "--train given twice"},
        {"lexicon -m x --keep 3 --keep 4 p.tsv", "--keep given twice"},
        {"serve -m x --port 1 --port 2", "--port given twice"},
        {"bleu --format tsv --format json h r", "--format given twice"},
        {"train --train x --out y --warmup ' 5'", "--warmup: ' 5' is not an integer"},
        {"train --train x --out y --warmup +5", "--warmup: '+5' is not an integer"},
        {"train --train x --out y --lr +0.1", "--lr: '+0.1' is not a number"},
        {"translate -m x --length-penalty 0x10", "--length-penalty: '0x10' is not a number"},
        {"translate -m x --beam ' 3'", "--beam: ' 3' is not an integer"},
        {"translate -m x --weights +1,1", "--weights: '+1,1' is not a list"},
        {"translate -m x --shortlist l.tsv,+1", "is not FILE[,FIRST[,BEST]]"},
        {"translate -m x --shortlist l.tsv,0,0", "lists no word (FIRST and BEST both 0)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_int_eq(testprog_run_all(bad[i].args, out, sizeof out), 2);
        ck_assert_msg(strstr(out, bad[i].said), "%s: %s", bad[i].args, out);
    }
    /* Repeatable: two -m are an ensemble (here: two missing models, exit 1). */
    ck_assert_int_eq(testprog_run_all("translate -m /nonexistent/a -m /nonexistent/b < /dev/null",
                                      out, sizeof out),
                     1);
    ck_assert_msg(!strstr(out, "given twice"), "%s", out);
}
END_TEST

/* Every command's numbers go through its table: score's --batch-size and
 * --max-src-len are the search options' (one range each), translate's
 * --threads and --n-best and train's --dev-align-threshold too, from the
 * command line and from a --config file alike; --n-best given as 1 still
 * asks for the n-best format, a file's n_best: 1 does not (Joey NMT's). */
START_TEST(every_command_numbers_from_its_table)
{
    char out[8192], dir[128], path[256], cmd[1024];
    static const struct {
        const char *args, *said;
    } bad[] = {
        {"score -m x --batch-size 0 p.tsv", "--batch-size: '0' is not an integer from 1 to 100000"},
        {"score -m x --max-src-len 100001 p.tsv",
         "--max-src-len: '100001' is not an integer from 1 to 100000"},
        {"translate -m x --max-src-len 0", "--max-src-len: '0' is not an integer from 1 to 100000"},
        {"translate -m x --threads 1025", "--threads: '1025' is not an integer from 1 to 1024"},
        {"translate -m x --n-best 0", "--n-best: '0' is not an integer from 1 to 1000"},
        /* Digits only: strtol alone would take a sign and spaces first. */
        {"translate -m x --beam +2", "--beam: '+2' is not an integer from 1 to 1000"},
        {"translate -m x --beam ' 2'", "--beam: ' 2' is not an integer from 1 to 1000"},
        {"train --train x --out y --warmup ' 5'",
         "--warmup: ' 5' is not an integer from 0 to 2147483647"},
        {"align -m x --max-len 0", "--max-len: '0' is not an integer from 1 to 100000"},
        {"align -m x --remove-bpe=sentencepiece",
         "--remove-bpe: 'sentencepiece' is not a BPE marker; --words joins SentencePiece pieces"},
        {"train --train x --out y --dev-align-threshold 2",
         "--dev-align-threshold: '2' is not a number from 0 to 1"},
        {"train --train x --out y --remove-bpe=xx",
         "--remove-bpe: 'xx': training joins subword-nmt's '@@ ' only"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_int_eq(testprog_run_all(bad[i].args, out, sizeof out), 2);
        ck_assert_msg(strstr(out, bad[i].said), "%s: %s", bad[i].args, out);
    }
    /* train takes fairseq's "--remove-bpe @@" as one option, as translate does:
     * what fails is the missing file, not the word. */
    ck_assert_int_eq(
        testprog_run_all("train --train /nonexistent/x.tsv --out /nonexistent/m --remove-bpe @@",
                         out, sizeof out),
        1);
    ck_assert_msg(!strstr(out, "unexpected argument") && strstr(out, "/nonexistent/x.tsv"), "%s",
                  out);
    testdir_make(dir, "rs_tables");
    snprintf(path, sizeof path, "%s/t.yaml", dir);
    static const char translation[] = "translation:\n  beam: 2\n  n_best: 0\n";
    testfile_write(path, (const unsigned char *)translation, sizeof translation - 1);
    snprintf(cmd, sizeof cmd, "translate -m x --config %s", path);
    ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "t.yaml:3: --n-best: '0' is not an integer from 1 to 1000"), "%s",
                  out);
    static const char training[] = "training:\n  dev_align_threshold: -1\n";
    testfile_write(path, (const unsigned char *)training, sizeof training - 1);
    snprintf(cmd, sizeof cmd, "train --train x --out y --config %s", path);
    ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "t.yaml:2: --dev-align-threshold: '-1' is not a number from 0 to 1"),
                  "%s", out);

    /* --n-best 1, on the command line or in the file: the n-best format. */
    rs_model model;
    rs_error err = {{0}};
    tiny_model_with_words(&model, 4, "haus", 5);
    snprintf(path, sizeof path, "%s/m.ckpt", dir);
    ck_assert_msg(!rs_checkpoint_save(path, &model, NULL, &err), "%s", err.msg);
    rs_model_free(&model);
    snprintf(cmd, sizeof cmd, "translate -m %s --quiet --n-best 1 <<'EOF'\ndas haus\nEOF\n", path);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 0);
    ck_assert_msg(!strncmp(out, "0 ||| ", 6) && strstr(out, " ||| F0= "), "%s", out);
    snprintf(cmd, sizeof cmd, "translate -m %s --quiet <<'EOF'\ndas haus\nEOF\n", path);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 0);
    ck_assert_msg(!strstr(out, "|||"), "%s", out);
    /* A count of one is singular: "1 sentence", as everywhere a count is said. */
    snprintf(cmd, sizeof cmd, "translate -m %s --max-len 1 <<'EOF' 2>&1 >/dev/null\ndas\nEOF\n",
             path);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 0);
    ck_assert_msg(strstr(out, ": 1 sentence, "), "%s", out);
    snprintf(cmd, sizeof cmd,
             "printf 'a\\nb\\n' > %s/ref.txt && echo the | %s bleu %s/ref.txt 2>&1", dir,
             testprog_path(), dir);
    ck_assert_int_eq(testprog_shell(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "standard input has 1 line but "), "%s", out);
    snprintf(path, sizeof path, "%s/t.yaml", dir);
    /* A file's n_best: 1 is Joey NMT's plain output, under our translation:
     * and Joey's testing: alike; a file's n_best: 2 gives the n-best lines. */
    static const struct {
        const char *yaml;
        int lines; /* n-best lines expected; 0: plain output */
    } files[] = {
        {"translation:\n  n_best: 1\n", 0},
        {"testing:\n  beam_size: 2\n  n_best: 1\n", 0},
        {"testing:\n  beam_size: 2\n  n_best: 2\n", 2},
        {"translation:\n  n_best: 2\n", 2},
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        testfile_write(path, (const unsigned char *)files[i].yaml, strlen(files[i].yaml));
        snprintf(cmd, sizeof cmd,
                 "translate -m %s/m.ckpt --quiet --config %s <<'EOF'\ndas haus\nEOF\n", dir, path);
        ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 0);
        int newlines = 0;
        for (const char *p = out; *p; p++)
            newlines += *p == '\n';
        if (files[i].lines) {
            ck_assert_msg(!strncmp(out, "0 ||| ", 6) && newlines == files[i].lines, "%s: %s",
                          files[i].yaml, out);
        } else {
            ck_assert_msg(!strstr(out, "|||") && newlines == 1, "%s: %s", files[i].yaml, out);
        }
    }
    /* --n-best 1 on the command line wins over the file and keeps its form. */
    snprintf(cmd, sizeof cmd,
             "translate -m %s/m.ckpt --quiet --n-best 1 --config %s <<'EOF'\ndas haus\nEOF\n", dir,
             path);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 0);
    ck_assert_msg(!strncmp(out, "0 ||| ", 6) && !strstr(out, "\n1 ||| "), "%s", out);
    /* -i FILE (Marian's) is the input FILE given after the options: the
     * same translations; both at once are two inputs. */
    char by_operand[1024], in[300];
    snprintf(in, sizeof in, "%s/in.txt", dir);
    testfile_write(in, (const unsigned char *)"das haus\nein haus\n", 18);
    snprintf(cmd, sizeof cmd, "translate -m %s/m.ckpt --quiet %s", dir, in);
    ck_assert_int_eq(testprog_run(cmd, by_operand, sizeof by_operand), 0);
    snprintf(cmd, sizeof cmd, "translate -m %s/m.ckpt --quiet -i %s < /dev/null", dir, in);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 0);
    ck_assert_str_eq(out, by_operand);
    ck_assert_int_eq(strlen(out) > 0 && out[strlen(out) - 1] == '\n', 1);
    snprintf(cmd, sizeof cmd, "translate -m %s/m.ckpt --input %s %s", dir, in, in);
    ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "more than one input file given"), "%s", out);
    testdir_remove(dir);
}
END_TEST

START_TEST(model_argument_resolves)
{
    char dir[128], models[256], path[512], got[512];
    rs_error err = {{0}};
    testdir_make(dir, "rs_resolve");
    snprintf(models, sizeof models, "%s/models/x", dir);
    ck_assert_int_eq(rs_model_locate(models, got, sizeof got, &err), -1);
    ck_assert_msg(strstr(err.msg, "no such"), "%s", err.msg);

    snprintf(path, sizeof path, "%s/models", dir);
    ck_assert_int_eq(mkdir(path, 0777), 0);
    ck_assert_int_eq(mkdir(models, 0777), 0);
    ck_assert_int_eq(rs_model_locate(models, got, sizeof got, &err), -1);
    ck_assert_msg(strstr(err.msg, "neither best.ckpt nor last.ckpt"), "%s", err.msg);

    snprintf(path, sizeof path, "%s/last.ckpt", models);
    testfile_write(path, (const unsigned char *)"x", 1);
    ck_assert_msg(!rs_model_locate(models, got, sizeof got, &err), "%s", err.msg);
    ck_assert_str_eq(got, path);

    snprintf(path, sizeof path, "%s/best.ckpt", models);
    testfile_write(path, (const unsigned char *)"x", 1);
    ck_assert_msg(!rs_model_locate(models, got, sizeof got, &err), "%s", err.msg);
    ck_assert_str_eq(got, path);

    /* A file is taken as it is. */
    snprintf(path, sizeof path, "%s/last.ckpt", models);
    ck_assert_msg(!rs_model_locate(path, got, sizeof got, &err), "%s", err.msg);
    ck_assert_str_eq(got, path);

    /* Too small a buffer is an error, not a cut path. */
    ck_assert_int_eq(rs_model_locate(path, got, 8, &err), -1);

    /* Something that exists but is no file nor directory is called what it is. */
    snprintf(path, sizeof path, "%s/fifo", dir);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    ck_assert_int_eq(rs_model_locate(path, got, sizeof got, &err), -1);
    ck_assert_msg(strstr(err.msg, "not a regular file") && !strstr(err.msg, "no such"), "%s",
                  err.msg);
    testdir_remove(dir);
}
END_TEST

Suite *cli_suite(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("program");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, help_version_and_usage_errors);
    tcase_add_test(tc, bad_training_data_is_named);
    tcase_add_test(tc, corrupt_checkpoint_is_refused_and_kept);
    tcase_add_test(tc, file_name_endings);
    tcase_add_test(tc, model_argument_resolves);
    tcase_add_test(tc, numeric_options_from_a_table);
    tcase_add_test(tc, every_command_numbers_from_its_table);
    tcase_add_test(tc, repeated_options_and_odd_numbers_are_refused);
    tcase_add_test(tc, failures_and_usage_errors_are_reported_alike);
    tcase_add_test(tc, one_option_convention);
    suite_add_tcase(s, tc);
    return s;
}
