/* Configuration files: YAML read through libyaml (common/settings.c) and
 * applied by the command-line options' own functions (cli/cli.c): train,
 * translate and serve read their sections, the command line wins, unknown
 * keys get the nearest known one, wrong values name file and line, the older
 * "key = value" files still work, and `info --config` writes a file that
 * trains the same bits again. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/nearest.h"
#include "common/settings.h"
#include "model/checkpoint.h"
#include "model/vocab.h"
#include "testdir.h"
#include "testprog.h"
#include "text/settings_file.h"

static void write_text(const char *path, const char *text)
{
    testfile_write(path, (const unsigned char *)text, strlen(text));
}

START_TEST(settings_are_read_with_their_sections_and_lines)
{
    static const char yaml[] = "# a comment\n"
                               "data:\n"
                               "  train: pairs.tsv\n"
                               "model: {emb: 32, hidden: 64}\n"
                               "serve:\n"
                               "  allow_host: [a.example, b.example]\n";
    rs_settings s;
    rs_error err;
    ck_assert_msg(!rs_settings_parse("c.yaml", (const unsigned char *)yaml, strlen(yaml), &s, &err),
                  "%s", err.msg);
    ck_assert(s.yaml);
    const rs_setting *it = rs_settings_find(&s, "model", "emb");
    ck_assert_ptr_nonnull(it);
    ck_assert_str_eq(it->values[0], "32");
    ck_assert_int_eq(it->line, 4);
    it = rs_settings_find(&s, "data", "train");
    ck_assert(it && it->line == 3 && !strcmp(it->values[0], "pairs.tsv"));
    it = rs_settings_find(&s, "serve", "allow_host");
    ck_assert(it && it->is_list && it->count == 2 && !strcmp(it->values[1], "b.example"));
    ck_assert_ptr_null(rs_settings_find(&s, "training", "emb"));
    rs_settings_free(&s);

    /* The older form: "key = value" items, the printout's line too. */
    static const char pairs[] = "\xEF\xBB\xBF# old\nemb = 8\nconfiguration: hidden=9 lr=0.5\n";
    ck_assert(!rs_settings_parse("c.conf", (const unsigned char *)pairs, strlen(pairs), &s, &err));
    ck_assert(!s.yaml && s.count == 3);
    it = rs_settings_find(&s, NULL, "lr");
    ck_assert(it && it->line == 3 && !strcmp(it->values[0], "0.5"));
    rs_settings_free(&s);

    /* A key given again is read as PyYAML reads it: its last value, with a note. */
    const char *twice = "model:\n  emb: 3\n  emb: 4\n  emb: 5\n  hidden: 6\n";
    ck_assert(!rs_settings_parse("c.yaml", (const unsigned char *)twice, strlen(twice), &s, &err));
    ck_assert(s.count == 2 && !s.items[0].problem && !s.items[1].problem);
    ck_assert(!strcmp(s.items[0].key, "emb") && !strcmp(s.items[0].values[0], "5"));
    ck_assert_int_eq(s.items[0].line, 4);
    ck_assert(!strcmp(s.items[1].key, "hidden"));
    ck_assert_str_eq(s.notes, "c.yaml:4: 'emb' given again in model: (first on line 2): its last "
                              "value is read, as PyYAML reads it\n");
    rs_settings_free(&s);

    static const struct {
        const char *text, *message;
    } bad[] = {
        {"model:\n  emb: [{a: 1}]\n", "c.yaml:2: 'emb': a list of values holds a mapping"},
        {"model: [\n", "c.yaml:2: "},
        {"- a\n- b\n", "c.yaml:1: a configuration is a mapping of sections"},
        {"model:\n  emb: 8\n---\nmodel: {}\n", "c.yaml:4: a second YAML document"},
        {"emb = 8\nhidden\n", "c.yaml:2: 'hidden' is not key = value"},
        /* YAML's "\0" escape is a NUL inside a scalar: it would cut the name short. */
        {"training:\n  \"beam\\0junk\": 3\n", "c.yaml:2: 'beam': a NUL character (\\0) in a key"},
        {"translation:\n  beam: \"7\\0junk\"\n",
         "c.yaml:2: 'beam': a NUL character (\\0) in a value"},
        {"data:\n  src: [a, \"b\\0\"]\n", "c.yaml:2: 'src': a NUL character (\\0) in a value"},
        {"\"model\\0x\":\n  emb: 8\n",
         "c.yaml:1: 'model': a NUL character (\\0) in a section name"},
        /* Invalid UTF-8 is named on its own line (libyaml says line 1). */
        {"translation:\n  beam: 2\n\n\n  length_penalty: \xff\n",
         "c.yaml:5: not UTF-8 (byte 0xff)"},
        /* An empty section given again is a repeat too. */
        {"model: {}\ntraining:\n  lr: 1\nmodel:\n  emb: 8\n",
         "c.yaml:4: section 'model' given twice (first on line 1)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert(rs_settings_parse("c.yaml", (const unsigned char *)bad[i].text,
                                    strlen(bad[i].text), &s, &err) != 0);
        ck_assert_msg(strstr(err.msg, bad[i].message), "%s: %s", bad[i].text, err.msg);
    }
    static const unsigned char nul[] = "model:\n  emb: 8\0\n";
    ck_assert(rs_settings_parse("c.yaml", nul, sizeof nul - 1, &s, &err) != 0);
    ck_assert_msg(strstr(err.msg, "c.yaml:2: a NUL byte"), "%s", err.msg);
    ck_assert(!rs_settings_parse("c.yaml", (const unsigned char *)"", 0, &s, &err) && !s.count);
    rs_settings_free(&s);
    /* A last line without its newline (found by make fuzz under UBSan). */
    static const char comment[] = "\n  # only a comment";
    ck_assert(
        !rs_settings_parse("c.yaml", (const unsigned char *)comment, strlen(comment), &s, &err) &&
        !s.count);
    rs_settings_free(&s);

    /* Joey NMT's nested mappings: dotted keys in their section. */
    static const char nested[] = "model:\n  encoder:\n    embeddings:\n      embedding_dim: 16\n"
                                 "    hidden_size: 30\n";
    ck_assert_msg(
        !rs_settings_parse("c.yaml", (const unsigned char *)nested, strlen(nested), &s, &err), "%s",
        err.msg);
    it = rs_settings_find(&s, "model", "encoder.embeddings.embedding_dim");
    ck_assert(it && it->line == 4 && !strcmp(it->values[0], "16"));
    it = rs_settings_find(&s, "model", "encoder.hidden_size");
    ck_assert(it && it->line == 5 && !strcmp(it->values[0], "30"));
    rs_settings_free(&s);

    /* Dotted keys are bounded: a mapping nested past 511 characters is refused. */
    char deep[2048] = "model:\n";
    for (int level = 0; level < 30; level++) {
        size_t used = strlen(deep);
        snprintf(deep + used, sizeof deep - used, "%*s%s:\n", 2 * level + 2, "",
                 "abcdefghijklmnopqrstuvwxyz");
    }
    ck_assert(rs_settings_parse("c.yaml", (const unsigned char *)deep, strlen(deep), &s, &err));
    ck_assert_msg(strstr(err.msg, "a key nested too deep (511 characters at most)"), "%s", err.msg);

    static const char *const names[] = {"hidden", "emb", "att", "maxout"};
    ck_assert_str_eq(rs_nearest("hiden", names, 4), "hidden");
    ck_assert_str_eq(rs_nearest("maxuot", names, 4), "maxout");
    ck_assert_ptr_null(rs_nearest("learning_rate", names, 4));
}
END_TEST

/* Repeats are found by sorting, not by scanning the earlier settings for each
 * new one: 200,000 keys (which took minutes that way) read in well under the
 * test's time-out, and the repeat that comes first in the file is named. */
/* A configuration file over RS_SETTINGS_MAX_BYTES is refused at once,
 * naming it; one of exactly that size is read, with or without a last line
 * end. */
START_TEST(an_oversized_file_is_refused)
{
    char dir[64], path[128];
    testdir_make(dir, "rnnsearch-yaml");
    snprintf(path, sizeof path, "%s/big.yaml", dir);
    for (int k = 0; k < 3; k++) {
        /* k 0: the bound with a last line end, 1: without, 2: a byte over */
        const int extra = k == 2, last_end = k == 0;
        FILE *f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        const char *head = "training:\n  epochs: 3\n#";
        fputs(head, f);
        for (long i = (long)strlen(head); i < RS_SETTINGS_MAX_BYTES - last_end + extra; i++)
            fputc('x', f);
        if (last_end)
            fputc('\n', f);
        ck_assert(!fclose(f));
        rs_settings s;
        rs_error err;
        if (!extra) {
            ck_assert_msg(!rs_settings_read(path, &s, &err), "%s", err.msg);
            ck_assert_str_eq(rs_settings_find(&s, "training", "epochs")->values[0], "3");
            rs_settings_free(&s);
        } else {
            ck_assert_int_eq(rs_settings_read(path, &s, &err), -1);
            ck_assert_msg(strstr(err.msg, path) && strstr(err.msg, ":3: more than 1048576 bytes"),
                          "%s", err.msg);
        }
    }
    testdir_remove(dir);
}
END_TEST

START_TEST(a_large_section_reads_in_linear_time)
{
    enum { KEYS = 200000 };
    size_t cap = (size_t)KEYS * 24 + 64, len = 0;
    char *text = malloc(cap);
    ck_assert_ptr_nonnull(text);
    len += (size_t)snprintf(text + len, cap - len, "training:\n");
    for (int i = 0; i < KEYS; i++)
        len += (size_t)snprintf(text + len, cap - len, "  k%d: %d\n", i, i);
    rs_settings s;
    rs_error err;
    ck_assert_msg(!rs_settings_parse("big.yaml", (const unsigned char *)text, len, &s, &err), "%s",
                  err.msg);
    ck_assert_int_eq(s.count, KEYS);
    ck_assert_str_eq(rs_settings_find(&s, "training", "k199999")->values[0], "199999");
    rs_settings_free(&s);
    len += (size_t)snprintf(text + len, cap - len, "  k7: 1\n  k3: 2\n");
    ck_assert_msg(!rs_settings_parse("big.yaml", (const unsigned char *)text, len, &s, &err), "%s",
                  err.msg);
    ck_assert_int_eq(s.count, KEYS);
    ck_assert_str_eq(s.notes, "big.yaml:200002: 'k7' given again in training: (first on line 9): "
                              "its last value is read, as PyYAML reads it\n"
                              "big.yaml:200003: 'k3' given again in training: (first on line 5): "
                              "its last value is read, as PyYAML reads it\n");
    ck_assert_str_eq(rs_settings_find(&s, "training", "k7")->values[0], "1");
    for (int i = 0; i < KEYS; i++)
        ck_assert_ptr_null(s.items[i].problem);
    rs_settings_free(&s);
    free(text);
}
END_TEST

/* Writes into text (of cap bytes) a "billion laughs" section of `levels`
 * mappings of ten: l0 holds ten values, each l<i> ten aliases of l<i-1>, so
 * reading every alias as a copy gives 10^levels settings. */
static void laughs(char *text, size_t cap, int levels)
{
    size_t len = (size_t)snprintf(text, cap,
                                  "model:\n  l0: &a0 {k0: 1, k1: 1, k2: 1, k3: 1, k4: 1, "
                                  "k5: 1, k6: 1, k7: 1, k8: 1, k9: 1}\n");
    for (int i = 1; i < levels; i++) {
        len += (size_t)snprintf(text + len, cap - len, "  l%d: &a%d {", i, i);
        for (int j = 0; j < 10; j++)
            len += (size_t)snprintf(text + len, cap - len, "%sk%d: *a%d", j ? ", " : "", j, i - 1);
        len += (size_t)snprintf(text + len, cap - len, "}\n");
    }
}

/* An alias of a single value is that value; an alias of a mapping or list
 * is refused, naming its key and line, as soon as it is met: 900 bytes of
 * aliases of aliases were read as 10^10 settings (gigabytes, minutes). */
START_TEST(an_alias_repeats_a_value_not_a_mapping)
{
    rs_settings s;
    rs_error err;
    static const char value[] = "data:\n  train: &t pairs.tsv\n  dev: *t\n";
    ck_assert_msg(
        !rs_settings_parse("c.yaml", (const unsigned char *)value, strlen(value), &s, &err), "%s",
        err.msg);
    ck_assert_str_eq(rs_settings_find(&s, "data", "dev")->values[0], "pairs.tsv");
    rs_settings_free(&s);
    static const struct {
        const char *text, *message;
    } bad[] = {
        {"model:\n  a: &m {emb: 8}\n  b: *m\n", "c.yaml:3: 'b': an alias of a mapping or list"},
        {"serve:\n  allow_host: &h [a, b]\ntranslation:\n  x: *h\n",
         "c.yaml:4: 'x': an alias of a mapping or list read before"},
        {"data: &d\n  train: x\ntraining: *d\n", "c.yaml:3: 'training': an alias of a mapping"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert(rs_settings_parse("c.yaml", (const unsigned char *)bad[i].text,
                                    strlen(bad[i].text), &s, &err) != 0);
        ck_assert_msg(strstr(err.msg, bad[i].message), "%s: %s", bad[i].text, err.msg);
    }
    char text[2048];
    laughs(text, sizeof text, 3); /* 1,000 settings: read before, without harm */
    ck_assert(rs_settings_parse("c.yaml", (const unsigned char *)text, strlen(text), &s, &err));
    ck_assert_msg(strstr(err.msg, "c.yaml:3: 'k0': an alias of a mapping or list"), "%s", err.msg);
    laughs(text, sizeof text, 10);
    ck_assert(rs_settings_parse("c.yaml", (const unsigned char *)text, strlen(text), &s, &err));
    ck_assert_msg(strstr(err.msg, "c.yaml:3: 'k0': an alias of a mapping or list"), "%s", err.msg);
}
END_TEST

/* libyaml's scanner takes time quadratic in the nesting of flow collections
 * ("[[[[…]]]]": 20,000 levels 3.5 s, 200,000 levels, a 400 kB file, some six
 * minutes): a file nested deeper than a configuration can be is refused,
 * naming the line, before libyaml reads past the limit. */
START_TEST(a_deeply_nested_file_is_refused_at_once)
{
    rs_settings s;
    rs_error err;
    enum { DEEP = 200000 };
    char *text = malloc(2 * DEEP + 64);
    ck_assert_ptr_nonnull(text);
    const int levels[] = {5000, DEEP};
    for (int i = 0; i < 2; i++) {
        size_t len = (size_t)sprintf(text, "model:\n  encoder: ");
        memset(text + len, '{', (size_t)levels[i]);
        len += (size_t)levels[i];
        memset(text + len, '}', (size_t)levels[i]);
        len += (size_t)levels[i];
        text[len++] = '\n';
        ck_assert(rs_settings_parse("c.yaml", (const unsigned char *)text, len, &s, &err));
        ck_assert_msg(strstr(err.msg, "c.yaml:2: nested deeper than 64 levels"), "%s", err.msg);
    }
    free(text);
    /* Joey NMT's deepest (model: encoder: embeddings: embedding_dim) is far from it. */
    static const char joey[] = "model:\n  encoder:\n    embeddings: {embedding_dim: 16}\n";
    ck_assert_msg(!rs_settings_parse("c.yaml", (const unsigned char *)joey, strlen(joey), &s, &err),
                  "%s", err.msg);
    rs_settings_free(&s);
}
END_TEST

/* Runs `rnnsearch ARGS` (stderr too) and checks its status and that it says `says`. */
static void expect_run(const char *args, int status, const char *says)
{
    char out[4096] = "";
    int got = testprog_run_all(args, out, sizeof out);
    ck_assert_msg(got == status, "%s: status %d\n%s", args, got, out);
    ck_assert_msg(!says || strstr(out, says), "%s: no '%s' in\n%s", args, says, out);
}

START_TEST(train_reads_yaml_and_the_command_line_wins)
{
    char dir[64], path[256], cmd[1024], text[1024];
    testdir_make(dir, "rnnsearch-yaml");
    snprintf(cmd, sizeof cmd, "head -n 40 corpora/reorder/train.tsv > %s/t.tsv", dir);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(path, sizeof path, "%s/run.yaml", dir);
    snprintf(text, sizeof text,
             "data:\n  train: %s/t.tsv\n  dev: %s/t.tsv\n"
             "model: {emb: 32, hidden: 8, att: 8, maxout: 4}\n"
             "training:\n  out: %s/m\n  epochs: 3\n  lr: 0.01\n  dev_translate: true\n"
             "  quiet: yes\n"
             "translation:\n  beam: 2\n  n_best: 2\n",
             dir, dir, dir);
    write_text(path, text);
    /* --epochs before --config and --emb after it: both win. */
    snprintf(cmd, sizeof cmd, "train --epochs=1 --config %s --emb 8 2>/dev/null", path);
    expect_run(cmd, 0, NULL);
    snprintf(text, sizeof text, "%s/m/last.ckpt", dir);
    rs_model m;
    rs_error err;
    ck_assert_msg(rs_checkpoint_load(text, &m, NULL, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(m.cfg.emb, 8);
    ck_assert_int_eq(m.cfg.hidden, 8);
    ck_assert_int_eq(m.train.epochs, 1);
    ck_assert_int_eq(m.train.dev_translate, 1);
    ck_assert(m.train.lr == 0.01f);
    rs_model_free(&m);

    /* --resume checks the file's settings against the checkpoint's as it
     * checks options: emb 32 is not what was trained, --emb 8 is. */
    snprintf(cmd, sizeof cmd, "train --config %s --resume --epochs 2", path);
    expect_run(cmd, 2, "trained with emb=8, not 32");
    snprintf(cmd, sizeof cmd, "train --config %s --resume --epochs 2 --emb 8 2>/dev/null", path);
    expect_run(cmd, 0, NULL);

    /* --train on the command line stands for the file's src and tgt too; a
     * byte order mark before a YAML file is skipped. */
    char other[256];
    snprintf(other, sizeof other, "%s/other.yaml", dir);
    snprintf(text, sizeof text,
             "\xEF\xBB\xBF"
             "data: {src: /nonexistent.de, tgt: /nonexistent.en}\n"
             "model: {emb: 8, hidden: 8, att: 8, maxout: 4}\n"
             "training: {out: %s/g, max_steps: 1, quiet: true}\n",
             dir);
    write_text(other, text);
    snprintf(cmd, sizeof cmd, "train --config %s --train %s/t.tsv 2>/dev/null", other, dir);
    expect_run(cmd, 0, NULL);
    snprintf(cmd, sizeof cmd, "translate --config %s --config=%s", path, other);
    expect_run(cmd, 2, "--config given twice");

    /* translate finds the model through training: out and reads translation:;
     * its command line wins there too. */
    snprintf(cmd, sizeof cmd, "translate --config %s --quiet < corpora/reorder/test.tsv", path);
    char out[8192];
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "0 ||| ") && strstr(out, "\n0 ||| "), "no 2-best list:\n%s", out);
    snprintf(cmd, sizeof cmd, "translate --n-best 1 --config %s --quiet < corpora/reorder/test.tsv",
             path);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "0 ||| ") && !strstr(out, "\n0 ||| "), "%s", out);

    /* The shipped example trains (two steps here) and translates with beam 5. */
    snprintf(cmd, sizeof cmd,
             "train --config corpora/dates/config.yaml --out %s/dates --max-steps 2 2>&1", dir);
    expect_run(cmd, 0, "stopped: --max-steps 2 reached");
    snprintf(text, sizeof text, "%s/dates/last.ckpt", dir);
    ck_assert_msg(rs_checkpoint_load(text, &m, NULL, &err) == 0, "%s", err.msg);
    ck_assert(m.cfg.hidden == 128 && m.train.dev_translate == 1 && m.train.threads == 1);
    rs_model_free(&m);
    snprintf(cmd, sizeof cmd,
             "translate --config corpora/dates/config.yaml -m %s/dates --n-best 5 < /dev/null "
             "2>&1",
             dir);
    expect_run(cmd, 0, NULL);
    testdir_remove(dir);
}
END_TEST

START_TEST(wrong_keys_and_values_name_file_line_and_the_nearest_key)
{
    char dir[64], path[256], cmd[512], where[512];
    testdir_make(dir, "rnnsearch-yaml-bad");
    snprintf(path, sizeof path, "%s/c.yaml", dir);
    static const struct {
        const char *command, *text, *says;
    } bad[] = {
        {"train", "model:\n  hiden: 8\n",
         ":2: unknown key 'hiden' in model: (did you mean 'hidden'?)"},
        {"train", "model:\n  emb: abc\n", ":2: --emb: 'abc' is not an integer from 1 to 65536"},
        {"train", "model:\n  emb: [8, 16]\n", ":2: 'emb' takes one value, not a list"},
        {"train", "training:\n  emb: 8\n", ":2: 'emb' goes in section 'model:', not 'training:'"},
        {"train", "traning:\n  lr: 0.1\n", "unknown section 'traning' (did you mean 'training'?)"},
        {"train", "training:\n  lr: inf\n", ":2: --lr: 'inf' is not a number in (0, 10]"},
        {"train", "training:\n  dev_bleu: maybe\n", ":2: dev_bleu: 'maybe' is not true or false"},
        {"train", "threads: 2\n", ":1: 'threads' means one thing in training:"},
        {"train", "post_process: bpe\n",
         ":1: 'post_process' means one thing in data: and another in translation:; put it in its "
         "section"},
        {"train", "data:\n  post_process: wordpiece\n",
         ":2: --post-process: 'wordpiece' is not one of"},
        {"translate", "translation:\n  beem: 5\n",
         ":2: unknown key 'beem' in translation: (did you mean 'beam'?)"},
        {"translate", "model:\n  hidden: 8\ntranslation:\n  beam: 0\n", ":4: --beam: '0'"},
        {"translate", "model:\n  hiden: 8\n", ":2: unknown key 'hiden' in model:"},
        {"serve", "serve:\n  max_beam: 0\n", ":2: --max-beam: '0'"},
        {"serve", "serve:\n  port: [1, 2]\n", ":2: 'port' takes one value, not a list"},
        /* A key at the top level and in its section is given twice (the later
         * one won, silently), as a Joey NMT name and ours are. */
        {"train", "lr: 0.1\ntraining:\n  lr: 0.2\n",
         ":3: 'lr' given twice (first on line 1, at the top level)"},
        {"train", "model:\n  emb: 8\nemb: 8\n",
         ":3: 'emb' given twice (first on line 2, in model:)"},
        {"train", "beam: 3\ntranslation:\n  beam: 5\n", ":3: 'beam' given twice (first on line 1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        write_text(path, bad[i].text);
        snprintf(cmd, sizeof cmd, "%s -m x --config %s", bad[i].command, path);
        if (!strcmp(bad[i].command, "train"))
            snprintf(cmd, sizeof cmd, "train --train x.tsv --out %s/m --config %s", dir, path);
        snprintf(where, sizeof where, "%s%s", bad[i].says[0] == ':' ? path : "", bad[i].says);
        expect_run(cmd, 2, where);
    }
    /* Without -m, translate and serve say where a model comes from. */
    write_text(path, "translation: {beam: 2}\n");
    snprintf(cmd, sizeof cmd, "translate --config %s < /dev/null", path);
    expect_run(cmd, 2, "out: or name: in the training: section");
    snprintf(cmd, sizeof cmd, "serve --config %s", path);
    expect_run(cmd, 2, "out: or name: in the training: section");
    testdir_remove(dir);
}
END_TEST

/* A file's problems are all reported in one run, in the file's order, each
 * naming its line, with their count and one "Try" line after them; the
 * keys of an unknown section are not reported one by one. */
START_TEST(every_problem_of_a_file_in_one_run)
{
    char dir[64], path[256], cmd[512];
    testdir_make(dir, "rnnsearch-yaml-all");
    snprintf(path, sizeof path, "%s/c.yaml", dir);
    write_text(path, "model:\n  hiden: 8\n  emb: abc\n"
                     "training:\n  early_stopping_metric: chrf\n  lr: 0.1\n  patience: 5\n"
                     "traning:\n  a: 1\n  b: 2\n"
                     "testing:\n  beem: 2\n");
    snprintf(cmd, sizeof cmd, "train --train x.tsv --out %s/m --config %s", dir, path);
    char out[8192] = "";
    ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 2);
    const char *says[] = {
        ":2: unknown key 'hiden' in model: (did you mean 'hidden'?)\n",
        ":3: --emb: 'abc' is not an integer from 1 to 65536\n",
        ":5: 'early_stopping_metric: chrf' (Joey NMT/OpenNMT-py)",
        ":7: 'patience: 5' (Joey NMT/OpenNMT-py)",
        ":9: unknown section 'traning' (did you mean 'training'?)",
        ":12: unknown key 'beem' in translation: (did you mean 'beam'?)\n",
        ": 6 problems (above); nothing was done\nTry 'rnnsearch train --help'.\n",
    };
    const char *at = out;
    for (size_t i = 0; i < sizeof says / sizeof *says; i++) {
        char want[512];
        snprintf(want, sizeof want, "rnnsearch train: %s%s", path, says[i]);
        const char *found = strstr(at, want);
        ck_assert_msg(found, "no '%s' after the earlier lines in\n%s", want, out);
        at = found + strlen(want);
    }
    ck_assert_msg(!strstr(out, ":10:"), "one line for the unknown section:\n%s", out);
    ck_assert_msg(!strstr(strstr(out, "Try") + 1, "Try"), "one Try line:\n%s", out);

    /* A key given again is no problem (its last value is read, noted at
     * training's start): the file's one problem is the unknown key. */
    write_text(path, "model:\n  emb: 8\n  emb: 9\n  hiden: 8\n");
    ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 2);
    ck_assert_msg(!strstr(out, "'emb' given") && strstr(out, ":4: unknown key 'hiden'") &&
                      !strstr(out, "problems (above)"),
                  "%s", out);
    /* A file of many problems shows the first hundred and counts them all. */
    char many[4096] = "training:\n";
    for (int i = 0; i < 150; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "  x%d: 1\n", i);
    write_text(path, many);
    char *stdout_text, *errs;
    testprog_run_split(cmd, &stdout_text, &errs);
    int lines = 0;
    for (const char *p = errs; (p = strchr(p, '\n')); p++)
        lines++;
    ck_assert_msg(lines == 102 && strstr(errs, ":101: unknown key 'x99'") &&
                      !strstr(errs, "'x100'") &&
                      strstr(errs, ": 150 problems (the first 100 above); nothing was done\n"),
                  "%d lines:\n%s", lines, errs);
    free(stdout_text);
    free(errs);
    testdir_remove(dir);
}
END_TEST

/* The vocabulary files, the shared vocabulary, the learning-rate schedule and
 * the ensemble weights as options and as a file's keys, and the requests
 * they refuse. */
START_TEST(vocabularies_schedules_and_weights)
{
    char dir[64], path[256], cmd[1536], text[1024];
    testdir_make(dir, "rnnsearch-yaml-vocab");
    snprintf(cmd, sizeof cmd, "head -n 40 corpora/reorder/train.tsv > %s/t.tsv", dir);
    ck_assert_int_eq(system(cmd), 0);
    const char *tiny = "--emb 8 --hidden 8 --att 8 --maxout 4 --max-steps 2 --threads 1 --quiet";
    snprintf(cmd, sizeof cmd, "train --train %s/t.tsv --out %s/a %s 2>/dev/null", dir, dir, tiny);
    expect_run(cmd, 0, NULL);
    snprintf(path, sizeof path, "%s/run.yaml", dir);
    snprintf(text, sizeof text,
             "data:\n  train: %s/t.tsv\n  src_vocab: %s/a/src_vocab.txt\n"
             "  tgt_vocab: %s/a/tgt_vocab.txt\n"
             "training: {out: %s/b, lr_schedule: inverse-sqrt, warmup: 2, seed: 5}\n"
             "translation: {weights: [1, 0]}\n",
             dir, dir, dir, dir);
    write_text(path, text);
    snprintf(cmd, sizeof cmd, "train --config %s %s 2>/dev/null", path, tiny);
    expect_run(cmd, 0, NULL);
    rs_model a, b;
    rs_error err;
    snprintf(text, sizeof text, "%s/a/last.ckpt", dir);
    ck_assert_msg(rs_checkpoint_load(text, &a, NULL, &err) == 0, "%s", err.msg);
    snprintf(text, sizeof text, "%s/b/last.ckpt", dir);
    ck_assert_msg(rs_checkpoint_load(text, &b, NULL, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(b.train.lr_schedule, RS_LR_INVERSE_SQRT);
    ck_assert_int_eq(b.src_vocab.size, a.src_vocab.size);
    ck_assert_int_eq(b.tgt_vocab.size, a.tgt_vocab.size);
    for (int id = 0; id < a.src_vocab.size; id++)
        ck_assert_str_eq(b.src_vocab.tokens[id], a.src_vocab.tokens[id]);
    rs_model_free(&a);
    rs_model_free(&b);

    /* weights: [1, 0] makes the ensemble a's translation. */
    char alone[4096], weighted[4096];
    snprintf(cmd, sizeof cmd, "translate -m %s/a --quiet < corpora/reorder/test.tsv", dir);
    ck_assert_int_eq(testprog_run(cmd, alone, sizeof alone), 0);
    snprintf(cmd, sizeof cmd,
             "translate --config %s -m %s/a -m %s/b --quiet < corpora/reorder/test.tsv", path, dir,
             dir);
    ck_assert_int_eq(testprog_run(cmd, weighted, sizeof weighted), 0);
    ck_assert_str_eq(weighted, alone);

    /* Requests refused before any work. */
    snprintf(cmd, sizeof cmd,
             "train --train %s/t.tsv --out %s/c --shared-vocab --src-vocab %s/a/src_vocab.txt "
             "--tgt-vocab %s/a/tgt_vocab.txt",
             dir, dir, dir, dir);
    expect_run(cmd, 2, "--shared-vocab is one vocabulary: give one file");
    snprintf(cmd, sizeof cmd,
             "train --train %s/t.tsv --out %s/c --subwords 50 --src-vocab %s/a/src_vocab.txt", dir,
             dir, dir);
    expect_run(cmd, 2, "do not go with SentencePiece");
    snprintf(cmd, sizeof cmd, "train --train %s/t.tsv --out %s/c --lr-schedule noam", dir, dir);
    expect_run(cmd, 2, "--lr-schedule noam needs --warmup N");
    snprintf(cmd, sizeof cmd, "train --train %s/t.tsv --out %s/c --lr-schedule cosine", dir, dir);
    expect_run(cmd, 2, "'cosine' is not one of constant, noam, inverse-sqrt, plateau");
    snprintf(cmd, sizeof cmd, "train --train %s/t.tsv --out %s/c --src-vocab %s/t.tsv", dir, dir,
             dir);
    expect_run(cmd, 1, "t.tsv:1: '");
    /* A CR inside a line ends it: "\r\r\n" leaves an empty line, refused by line
     * before training starts (read into a token, the run trained and wrote
     * checkpoints every reader refused). */
    char cr_vocab[256];
    snprintf(cr_vocab, sizeof cr_vocab, "%s/cr_vocab.txt", dir);
    write_text(cr_vocab, "das\r\r\nhaus\n");
    snprintf(cmd, sizeof cmd, "train --train %s/t.tsv --out %s/c --src-vocab %s %s", dir, dir,
             cr_vocab, tiny);
    expect_run(cmd, 1, "cr_vocab.txt:2: an empty line");
    snprintf(text, sizeof text, "%s/c", dir);
    ck_assert_msg(access(text, F_OK) != 0, "%s was made", text);
    /* --resume with another schedule is refused, naming the checkpoint's. */
    snprintf(cmd, sizeof cmd, "train --config %s --resume --lr-schedule noam", path);
    expect_run(cmd, 2, "lr_schedule=inverse-sqrt");
    testdir_remove(dir);
}
END_TEST

/* Joey NMT's and OpenNMT-py's names for the vocabulary files, the shared
 * vocabulary and the schedules. */
START_TEST(their_names_for_vocabularies_and_schedules)
{
    char dir[64], cmd[1536], text[1024];
    testdir_make(dir, "rnnsearch-yaml-their-vocab");
    snprintf(cmd, sizeof cmd, "head -n 40 corpora/reorder/train.tsv > %s/t.tsv", dir);
    ck_assert_int_eq(system(cmd), 0);
    const char *tiny = "--emb 8 --hidden 8 --att 8 --maxout 4 --max-steps 2 --threads 1 --quiet";
    snprintf(cmd, sizeof cmd, "train --train %s/t.tsv --out %s/a %s 2>/dev/null", dir, dir, tiny);
    expect_run(cmd, 0, NULL);
    rs_model b;
    rs_error err;
    snprintf(text, sizeof text, "%s/a/last.ckpt", dir);
    ck_assert_msg(rs_checkpoint_load(text, &b, NULL, &err) == 0, "%s", err.msg);
    const int a_tgt_size = b.tgt_vocab.size;
    rs_model_free(&b);
    char joey[256];
    snprintf(joey, sizeof joey, "%s/joey.yaml", dir);
    snprintf(cmd, sizeof cmd, "cut -f1 %s/t.tsv > %s/t.de && cut -f2 %s/t.tsv > %s/t.en", dir, dir,
             dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(text, sizeof text,
             "data:\n  src: de\n  trg: en\n  train: %s/t\n  src_vocab: %s/a/src_vocab.txt\n"
             "  trg_vocab: %s/a/tgt_vocab.txt\n"
             "training:\n  model_dir: %s/j\n  scheduling: noam\n  learning_rate_warmup: 3\n",
             dir, dir, dir, dir);
    write_text(joey, text);
    snprintf(cmd, sizeof cmd, "train --config %s %s 2>/dev/null", joey, tiny);
    expect_run(cmd, 0, NULL);
    snprintf(text, sizeof text, "%s/j/last.ckpt", dir);
    ck_assert_msg(rs_checkpoint_load(text, &b, NULL, &err) == 0, "%s", err.msg);
    ck_assert(b.train.lr_schedule == RS_LR_NOAM && b.train.warmup == 3);
    ck_assert_int_eq(b.tgt_vocab.size, a_tgt_size);
    rs_model_free(&b);
    snprintf(text, sizeof text,
             "train: %s/t.tsv\nshare_vocab: true\ndecay_method: noam\n"
             "warmup_steps: 2\n",
             dir);
    write_text(joey, text);
    snprintf(cmd, sizeof cmd, "train --config %s --out %s/o %s 2>&1", joey, dir, tiny);
    expect_run(cmd, 0, NULL);
    snprintf(text, sizeof text, "%s/o/last.ckpt", dir);
    ck_assert_msg(rs_checkpoint_load(text, &b, NULL, &err) == 0, "%s", err.msg);
    ck_assert(b.train.lr_schedule == RS_LR_NOAM && b.train.warmup == 2 && b.cfg.shared_vocab == 1);
    rs_model_free(&b);
    /* A key = value file: src_vocab = N is a printout's size, skipped; a
     * file name is the vocabulary file. */
    snprintf(text, sizeof text, "src_vocab = 12\ntgt_vocab = %s/missing.txt\n", dir);
    write_text(joey, text);
    snprintf(cmd, sizeof cmd, "train --config %s --train %s/t.tsv --out %s/c", joey, dir, dir);
    expect_run(cmd, 1, "missing.txt");
    write_text(joey, "training:\n  scheduling: exponential\n");
    snprintf(cmd, sizeof cmd, "train --config %s --train %s/t.tsv --out %s/c", joey, dir, dir);
    expect_run(cmd, 2, "'scheduling: exponential' (Joey NMT/OpenNMT-py): rnnsearch's schedules");

    testdir_remove(dir);
}
END_TEST

/* info --config, with the data paths filled in, trains the same parameter
 * bytes again (dropout and two threads: the seeded paths that matter). */
START_TEST(info_config_repeats_the_run_bit_for_bit)
{
    char dir[64], cmd[4096], out[4096];
    testdir_make(dir, "rnnsearch-yaml-bits");
    const char *p = testprog_path();
    snprintf(
        cmd, sizeof cmd,
        "head -n 60 corpora/reorder/train.tsv > %s/t.tsv && "
        "head -n 10 corpora/reorder/dev.tsv > %s/d.tsv && "
        "%s train --train %s/t.tsv --dev %s/d.tsv --out %s/a --emb 8 --hidden 12 --att 8 "
        "--maxout 4 --epochs 2 --lr 0.0123456789 --dropout 0.1 --batch-size 8 --threads 2 "
        "--seed 5 --quiet 2>&1 && "
        "%s info -m %s/a --config > %s/run.yaml && "
        "sed -i 's|# train: PAIRS.tsv.*|train: %s/t.tsv|; s|# dev: DEV.tsv.*|dev: %s/d.tsv|; "
        "s|# out: DIR.*|out: %s/b|' %s/run.yaml && "
        "%s train --config %s/run.yaml --quiet 2>&1 && "
        "%s export -m %s/a/last.ckpt -o %s/a.safetensors 2>&1 && "
        "%s export -m %s/b/last.ckpt -o %s/b.safetensors 2>&1 && "
        "cmp %s/a.safetensors %s/b.safetensors && grep -q 'lr: 0.0123456791' %s/run.yaml && grep -q 'beta1: 0.9$' %s/run.yaml && "
        "grep -q '^translation:' %s/run.yaml && grep -q '^  beam: 1$' %s/run.yaml && "
        "test ! -e %s/a/config.yaml && "
        "cmp %s/run.yaml %s/b/config.yaml",
        dir, dir, p, dir, dir, dir, p, dir, dir, dir, dir, dir, dir, p, dir, p, dir, dir, p, dir,
        dir, dir, dir, dir, dir, dir, dir, dir, dir, dir);
    ck_assert_msg(testprog_shell(cmd, out, sizeof out) == 0, "%s", out);
    testdir_remove(dir);
}
END_TEST


/* info --config writes the run's file names and translation settings as the
 * copy of its --config file gave them: a value that YAML reads only quoted
 * (": ", " #", a leading "*", a trailing space) is written quoted, so the
 * file it prints reads back to the same values (unquoted, "a: b #c.tsv" was
 * a YAML error and "#@ " a comment). */
START_TEST(info_config_quotes_what_yaml_must_read_quoted)
{
    char dir[64], cmd[4096], out[4096], path[256];
    testdir_make(dir, "rnnsearch-yaml-quote");
    snprintf(path, sizeof path, "%s/c.yaml", dir);
    char text[1024];
    snprintf(text, sizeof text,
             "data:\n  train: \"%s/a: b #c.tsv\"\n  dev: '%s/*d'\n"
             "model: {emb: 8, hidden: 12, att: 8, maxout: 4}\n"
             "training: {epochs: 1, threads: 1, out: %s/m}\n"
             "translation:\n  remove_bpe: \"#@ \"\n",
             dir, dir, dir);
    write_text(path, text);
    snprintf(cmd, sizeof cmd,
             "head -n 40 corpora/reorder/train.tsv > '%s/a: b #c.tsv' && "
             "head -n 10 corpora/reorder/dev.tsv > '%s/*d' && "
             "%s train --config %s --quiet 2>&1 && %s info -m %s/m --config > %s/run.yaml",
             dir, dir, testprog_path(), path, testprog_path(), dir, dir);
    ck_assert_msg(testprog_shell(cmd, out, sizeof out) == 0, "%s", out);
    snprintf(path, sizeof path, "%s/run.yaml", dir);
    rs_settings s;
    rs_error err;
    ck_assert_msg(!rs_settings_read(path, &s, &err), "%s", err.msg);
    char want[256];
    snprintf(want, sizeof want, "%s/a: b #c.tsv", dir);
    ck_assert_str_eq(rs_settings_find(&s, "data", "train")->values[0], want);
    snprintf(want, sizeof want, "%s/*d", dir);
    ck_assert_str_eq(rs_settings_find(&s, "data", "dev")->values[0], want);
    ck_assert_str_eq(rs_settings_find(&s, "translation", "remove_bpe")->values[0], "#@ ");
    rs_settings_free(&s);
    testdir_remove(dir);
}
END_TEST

/* A Joey NMT file, as its configs write one: its names read as ours,
 * its data files as PREFIX.LANG, what rnnsearch does anyway accepted, and
 * what it has not refused with what it does instead. */
/* A per-side key given for one side alone (Joey's src.lowercase, trg_voc_limit,
 * OpenNMT-py's src_vocab_size) would set rnnsearch's one setting for both
 * sides, where the toolkit leaves the other side at its default: refused,
 * naming the other side; given for both sides with one value, read. */
START_TEST(a_per_side_key_for_one_side_alone_is_refused)
{
    char dir[64], path[256], cmd[512];
    testdir_make(dir, "rnnsearch-yaml-side");
    snprintf(path, sizeof path, "%s/joey.yaml", dir);
    static const struct {
        const char *keys, *says;
    } one_side[] = {
        {"  src:\n    lang: de\n    lowercase: true\n  trg:\n    lang: en\n",
         "'src.lowercase' is for the source side alone"},
        {"  src: de\n  trg: en\n  trg_voc_limit: 10\n",
         "'trg_voc_limit' is for the target side alone"},
        {"src_vocab_size: 50\n", "'src_vocab_size' is for the source side alone"},
    };
    for (size_t i = 0; i < sizeof one_side / sizeof *one_side; i++) {
        char text[512];
        /* OpenNMT-py's keys stand at the top level, Joey's under data:. */
        if (one_side[i].keys[0] == ' ')
            snprintf(text, sizeof text, "data:\n%s  train: x\n", one_side[i].keys);
        else
            snprintf(text, sizeof text, "%sdata:\n  train: x\n", one_side[i].keys);
        write_text(path, text);
        snprintf(cmd, sizeof cmd, "train --config %s --out %s/o --quiet", path, dir);
        expect_run(cmd, 2, one_side[i].says);
    }
    write_text(path, "data:\n  src: de\n  trg: en\n  src_voc_limit: 10\n  trg_voc_limit: 10\n"
                     "  train: nothing\n");
    snprintf(cmd, sizeof cmd, "train --config %s --out %s/o --quiet", path, dir);
    char out[4096] = "";
    testprog_run_all(cmd, out, sizeof out);
    ck_assert_msg(!strstr(out, "side alone"), "%s", out);
    testdir_remove(dir);
}
END_TEST

START_TEST(joey_nmt_names_are_read_as_ours)
{
    char dir[64], path[256], cmd[2048], text[2048];
    testdir_make(dir, "rnnsearch-yaml-joey");
    snprintf(cmd, sizeof cmd,
             "head -n 40 corpora/reorder/train.tsv | cut -f1 > %s/t.de && "
             "head -n 40 corpora/reorder/train.tsv | cut -f2 > %s/t.en",
             dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(path, sizeof path, "%s/joey.yaml", dir);
    snprintf(text, sizeof text,
             "name: \"reorder_experiment\"\n"
             "data:\n  src: \"de\"\n  trg: \"en\"\n  train: \"%s/t\"\n  dev: \"%s/t\"\n"
             "  level: \"word\"\n  lowercase: False\n  max_sent_length: 50\n"
             "  src_voc_limit: 100\n  trg_voc_limit: 100\n"
             "testing:\n  beam_size: 2\n  alpha: -1\n"
             "training:\n  random_seed: 3\n  optimizer: \"adam\"\n  learning_rate: 0.01\n"
             "  batch_size: 8\n  epochs: 1\n  early_stopping_metric: \"ppl\"\n"
             "  model_dir: \"%s/j\"\n  shuffle: True\n  use_cuda: False\n  overwrite: False\n"
             "model:\n  encoder:\n    rnn_type: \"gru\"\n    embeddings:\n      embedding_dim: 8\n"
             "    hidden_size: 12\n    bidirectional: True\n    dropout: 0.1\n"
             "  decoder:\n    rnn_type: \"gru\"\n    embeddings:\n      embedding_dim: 8\n"
             "    hidden_size: 12\n    dropout: 0.1\n    attention: \"bahdanau\"\n",
             dir, dir, dir);
    write_text(path, text);
    snprintf(cmd, sizeof cmd, "train --config %s --quiet 2>&1", path);
    expect_run(cmd, 0, NULL);
    snprintf(text, sizeof text, "%s/j/last.ckpt", dir);
    rs_model m;
    rs_error err;
    ck_assert_msg(rs_checkpoint_load(text, &m, NULL, &err) == 0, "%s", err.msg);
    ck_assert(m.train.seed == 3 && m.train.lr == 0.01f && m.cfg.emb == 8 && m.cfg.hidden == 12);
    ck_assert(m.train.max_vocab == 100 + RS_RESERVED && m.train.max_len == 50);
    ck_assert(m.train.dropout == 0.1f && m.cfg.attention == RS_ATT_ADDITIVE);
    rs_model_free(&m);
    /* The run keeps its file (as Joey does), and info --config names its
     * data files, and its translation settings, from there. */
    snprintf(cmd, sizeof cmd, "cmp %s %s/j/config.yaml", path, dir);
    ck_assert_int_eq(system(cmd), 0);
    char out[4096];
    snprintf(cmd, sizeof cmd, "info -m %s/j --config", dir);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 0);
    snprintf(text, sizeof text, "\n  src: %s/t.de\n  tgt: %s/t.en\n  dev_src: %s/t.de\n", dir, dir,
             dir);
    ck_assert_msg(strstr(out, text), "no '%s' in\n%s", text, out);
    ck_assert_msg(strstr(out, "\ntranslation:\n  beam: 2\n  length_penalty: 0\n"), "%s", out);
    /* testing: is translation: (beam_size 2 allows --n-best 2). */
    snprintf(cmd, sizeof cmd, "translate --config %s --n-best 2 --quiet < %s/t.de > /dev/null",
             path, dir);
    expect_run(cmd, 0, NULL);

    static const struct {
        const char *text, *says;
    } bad[] = {
        {"training:\n  early_stopping_metric: chrf\n",
         ":2: 'early_stopping_metric: chrf' (Joey NMT/OpenNMT-py): rnnsearch selects best.ckpt "
         "on dev BLEU with dev_bleu: true (--dev-bleu), else on dev loss"},
        {"training:\n  patience: 5\n", ":2: 'patience: 5' (Joey NMT/OpenNMT-py): Joey's patience "
                                       "is the plateau schedule's"},
        {"model:\n  encoder:\n    hidden_size: 8\n  decoder:\n    hidden_size: 16\n",
         ":5: 'decoder.hidden_size' and 'encoder.hidden_size' (line 3) both give rnnsearch's "
         "'hidden', with different values (rnnsearch has one)"},
        {"model:\n  encoder:\n    rnn_type: lstm\n", ":3: 'encoder.rnn_type: lstm' (Joey "
                                                     "NMT/OpenNMT-py): rnnsearch's RNN is a GRU"},
        {"data:\n  level: bpe2\n", ":2: 'level: bpe2' (Joey NMT/OpenNMT-py): levels are word"},
        {"testing:\n  alpha: 0.6\n", ":2: 'alpha: 0.6' (Joey NMT/OpenNMT-py): Joey divides by"},
        {"training:\n  learning_rate: 20\n", ":2: --lr: '20' is not a number in (0, 10]"},
        {"training:\n  lr: 0.1\n  learning_rate: 0.2\n",
         ":3: 'learning_rate' and 'lr' (line 2) both give rnnsearch's 'lr', with different values"},
        /* The advice names an option that exists. */
        {"training:\n  eval_metric: chrf\n",
         ":2: 'eval_metric: chrf' (Joey NMT/OpenNMT-py): rnnsearch's dev metric is BLEU "
         "(dev_bleu: true); chrF is 'rnnsearch bleu --metric chrf'"},
        /* 8 and 0x8 differ whichever comes first: the order of keys decides nothing. */
        {"model:\n  encoder:\n    hidden_size: 8\n  decoder:\n    hidden_size: 0x8\n",
         ":5: 'decoder.hidden_size' and 'encoder.hidden_size' (line 3) both give rnnsearch's "
         "'hidden', with different values"},
        {"model:\n  decoder:\n    hidden_size: 0x8\n  encoder:\n    hidden_size: 8\n",
         ":5: 'encoder.hidden_size' and 'decoder.hidden_size' (line 3) both give rnnsearch's "
         "'hidden', with different values"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        write_text(path, bad[i].text);
        snprintf(cmd, sizeof cmd, "train --train x.tsv --out %s/m --config %s", dir, path);
        snprintf(text, sizeof text, "%s%s", path, bad[i].says);
        expect_run(cmd, 2, text);
    }
    /* The same number written two ways is one value. */
    write_text(path, "training:\n  lr: 0.1\n  learning_rate: 1e-1\n  max_steps: 0.5\n");
    snprintf(cmd, sizeof cmd, "train --train x.tsv --out %s/m --config %s", dir, path);
    char said[2048] = "";
    ck_assert_int_eq(testprog_run_all(cmd, said, sizeof said), 2);
    ck_assert_msg(strstr(said, ":4: --max-steps: '0.5'") && !strstr(said, "different values") &&
                      !strstr(said, "problems"),
                  "%s", said);
    /* OpenNMT-py's flat names; its brnn splits rnn_size across the two
     * directions, rnnsearch's hidden is each direction's. */
    snprintf(text, sizeof text,
             "learning_rate: 0.02\nword_vec_size: 8\nencoder_type: brnn\nrnn_size: 24\n"
             "train_steps: 1\nseed: 4\n"
             "rnn_type: GRU\ntraining: {out: %s/o, quiet: true}\n",
             dir);
    write_text(path, text);
    snprintf(cmd, sizeof cmd, "train --src %s/t.de --tgt %s/t.en --config %s 2>&1", dir, dir, path);
    expect_run(cmd, 0, NULL);
    snprintf(text, sizeof text, "%s/o/last.ckpt", dir);
    ck_assert_msg(rs_checkpoint_load(text, &m, NULL, &err) == 0, "%s", err.msg);
    ck_assert(m.train.lr == 0.02f && m.cfg.emb == 8 && m.cfg.hidden == 12 && m.train.seed == 4);
    rs_model_free(&m);
    testdir_remove(dir);
}
END_TEST

Suite *yaml_suite(void)
{
    Suite *s = suite_create("yaml");
    TCase *tc = tcase_create("yaml");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, settings_are_read_with_their_sections_and_lines);
    tcase_add_test(tc, an_oversized_file_is_refused);
    tcase_add_test(tc, train_reads_yaml_and_the_command_line_wins);
    tcase_add_test(tc, wrong_keys_and_values_name_file_line_and_the_nearest_key);
    tcase_add_test(tc, every_problem_of_a_file_in_one_run);
    tcase_add_test(tc, info_config_repeats_the_run_bit_for_bit);
    tcase_add_test(tc, info_config_quotes_what_yaml_must_read_quoted);
    tcase_add_test(tc, vocabularies_schedules_and_weights);
    tcase_add_test(tc, their_names_for_vocabularies_and_schedules);
    tcase_add_test(tc, joey_nmt_names_are_read_as_ours);
    tcase_add_test(tc, a_per_side_key_for_one_side_alone_is_refused);
    suite_add_tcase(s, tc);
    TCase *large = tcase_create("large");
    tcase_set_timeout(large, 30);
    tcase_add_test(large, a_large_section_reads_in_linear_time);
    tcase_add_test(large, an_alias_repeats_a_value_not_a_mapping);
    tcase_add_test(large, a_deeply_nested_file_is_refused_at_once);
    suite_add_tcase(s, large);
    return s;
}
