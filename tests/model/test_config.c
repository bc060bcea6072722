/* The configuration table: typed values parsed once, every number checked
 * for finiteness and range with a message naming the option and the range,
 * names stored by name in the checkpoint text, conflicts refused. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "model/checkpoint.h"
#include "model/config.h"
#include "model/params.h"
#include "testdir.h"
#include "testprog.h"

START_TEST(values_that_cannot_be_right_are_refused_naming_option_and_range)
{
    static const struct {
        const char *key, *value, *range;
    } bad[] = {
        {"lr", "nan", "(0, 10]"},
        {"lr", "inf", "(0, 10]"},
        {"lr", "0", "(0, 10]"},
        {"lr", "-1", "(0, 10]"},
        {"adam_eps", "0", "(0, 1]"},
        {"beta2", "-1", "[0, 1)"},
        {"beta1", "1", "[0, 1)"},
        {"init_scale", "1e30", "(0, 10]"},
        {"label_smoothing", "nan", "[0, 1)"},
        {"dropout", "1", "[0, 1)"},
        {"clip", "-1", "[0, 1e+06]"},
        {"lr_decay", "0", "(0, 1]"},
        {"max_minutes", "-1", "[0, 1e+07]"},
        {"max_minutes", "inf", "[0, 1e+07]"},
        {"warmup", "-1", "from 0 to"},
        {"patience", "-1", "from 0 to"},
        {"save_every", "-1", "from 0 to"},
        {"eval_every", "-5", "from 0 to"},
        {"threads", "-1", "from 0 to 1024"},
        {"max_vocab", "4", "from 5 to"},
        {"epochs", "0", "from 1 to"},
        {"batch_size", "0", "from 1 to"},
        {"hidden", "715827883", "from 1 to 65536"},
        {"emb", "12x", "from 1 to"},
        {"max_steps", "99999999999", "from 0 to"},
        {"attention", "cosine", "additive, general"},
        {"tokenizer", "bpe", "word, char, spm"},
        {"src_word_dropout", "1", "[0, 1)"},
        {"src_word_dropout", "-0.1", "[0, 1)"},
        {"tgt_word_dropout", "1", "[0, 1)"},
        {"tgt_word_dropout", "-1e-9", "[0, 1)"},
        /* An integer is digits (strtol alone takes a sign and spaces first). */
        {"warmup", "+5", "from 0 to"},
        {"emb", "+8", "from 1 to"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        rs_config cfg, before;
        rs_config_defaults(&cfg);
        before = cfg;
        rs_error err = {{0}};
        ck_assert_msg(rs_config_set_option(&cfg, bad[i].key, bad[i].value, &err) != 0,
                      "%s=%s accepted", bad[i].key, bad[i].value);
        char option[64] = "--";
        for (size_t k = 0; bad[i].key[k]; k++)
            option[k + 2] = bad[i].key[k] == '_' ? '-' : bad[i].key[k];
        ck_assert_msg(strstr(err.msg, option) && strstr(err.msg, bad[i].range),
                      "%s=%s: message '%s' lacks the option or the range %s", bad[i].key,
                      bad[i].value, err.msg, bad[i].range);
        ck_assert_msg(!memcmp(&cfg, &before, sizeof cfg), "%s changed on failure", bad[i].key);
        /* The checkpoint reader refuses them too, naming the key. */
        char text[128];
        snprintf(text, sizeof text, "emb=8\n%s=%s\n", bad[i].key, bad[i].value);
        ck_assert(rs_config_parse(&cfg, text, &err) != 0);
        ck_assert_msg(strstr(err.msg, bad[i].key) != NULL, "%s", err.msg);
    }
    /* The ends of the ranges that are allowed. */
    rs_config cfg;
    rs_config_defaults(&cfg);
    rs_error err;
    ck_assert(rs_config_set_option(&cfg, "warmup", " 5", &err) != 0 && strstr(err.msg, "' 5'"));
    ck_assert(rs_config_set_option(&cfg, "warmup", "5 ", &err) != 0);
    ck_assert(rs_config_set(&cfg, "warmup", "5", &err) == 0 && cfg.train.warmup == 5);
    ck_assert(rs_config_set(&cfg, "lr", "10", &err) == 0);
    ck_assert(rs_config_set(&cfg, "beta1", "0", &err) == 0);
    ck_assert(rs_config_set(&cfg, "clip", "0", &err) == 0);
    ck_assert(rs_config_set(&cfg, "max_vocab", "5", &err) == 0);
    ck_assert(rs_config_set(&cfg, "hidden", "65536", &err) == 0);
    ck_assert(rs_config_set(&cfg, "src_word_dropout", "0", &err) == 0);
    ck_assert(rs_config_set(&cfg, "tgt_word_dropout", "0.99", &err) == 0);
    ck_assert(rs_config_is_flag("dev_bleu") && rs_config_is_flag("lowercase"));
    ck_assert(!rs_config_is_flag("epochs") && !rs_config_is_flag("attention"));
}
END_TEST

START_TEST(names_are_parsed_once_and_stored_by_name)
{
    rs_config cfg, back;
    rs_error err;
    rs_config_defaults(&cfg);
    ck_assert_int_eq(cfg.model.attention, RS_ATT_ADDITIVE);
    ck_assert_int_eq(cfg.model.tokenizer, RS_TOKENIZER_WORD);
    ck_assert(rs_config_set(&cfg, "attention", "scaled-dot", &err) == 0);
    ck_assert(rs_config_set(&cfg, "tokenizer", "char", &err) == 0);
    ck_assert(rs_config_set(&cfg, "lr", "0.0123", &err) == 0);
    ck_assert_int_eq(cfg.model.attention, RS_ATT_SCALED_DOT);
    ck_assert_int_eq(cfg.model.tokenizer, RS_TOKENIZER_CHAR);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(f);
    rs_config_write(&cfg, f);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(text, "\nattention=scaled-dot\n"));
    ck_assert_ptr_nonnull(strstr(text, "\ntokenizer=char\n"));
    rs_config_defaults(&back);
    ck_assert_msg(rs_config_parse(&back, text, &err) == 0, "%s", err.msg);
    ck_assert(!memcmp(&cfg, &back, sizeof cfg));
    free(text);
    /* A checkpoint written before the run settings were stored still loads,
     * with their defaults. */
    rs_config_defaults(&back);
    ck_assert(rs_config_parse(&back, "attention=dot\ntokenizer=spm\nsubwords=100\n", &err) == 0);
    ck_assert_int_eq(back.model.attention, RS_ATT_DOT);
    ck_assert_int_eq(back.model.tokenizer, RS_TOKENIZER_SPM);
    ck_assert_int_eq(back.train.eval_every, 0);
    char value[RS_STR_MAX];
    ck_assert(rs_config_format(&back, "attention", value, sizeof value) == 0);
    ck_assert_str_eq(value, "dot");
    ck_assert_str_eq(rs_attention_kind_name(back.model.attention), "dot");
    ck_assert_int_eq(rs_attention_kind_parse("general"), RS_ATT_GENERAL);
}
END_TEST

START_TEST(conflicting_options_are_refused)
{
    rs_config cfg;
    rs_error err;
    rs_config_defaults(&cfg);
    ck_assert(rs_config_check(&cfg, &err) == 0);
    cfg.model.tokenizer = RS_TOKENIZER_CHAR;
    cfg.model.subwords = 100;
    ck_assert(rs_config_check(&cfg, &err) != 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "--subwords"));
    ck_assert_ptr_nonnull(strstr(err.msg, "--tokenizer char"));
    ck_assert(rs_config_may_change_on_resume("epochs"));
    ck_assert(!rs_config_may_change_on_resume("eval_every"));
    ck_assert(!rs_config_may_change_on_resume("lr"));
    ck_assert(!rs_config_may_change_on_resume("src_word_dropout"));
    ck_assert(!rs_config_may_change_on_resume("tgt_word_dropout"));

    /* And through the program: exit 2 before any file is read. */
    static const char *const args[] = {
        "--tokenizer char --subwords 100",
        "--lr nan",
        "--adam-eps 0",
        "--epochs 0",
        "--max-vocab 4",
        "--dev-bleu",
        "--patience 3",
        "--lr-decay 0.5",
        "--resume --overwrite",
        "--src-word-dropout 1",
        "--tgt-word-dropout -0.5",
    };
    for (size_t i = 0; i < sizeof args / sizeof *args; i++) {
        char cmd[512], out[1024];
        snprintf(cmd, sizeof cmd, "train --train /nonexistent.tsv --out /nonexistent/m %s",
                 args[i]);
        int status = testprog_run_all(cmd, out, sizeof out);
        ck_assert_msg(status == 2, "train %s: status %d\n%s", args[i], status, out);
    }
}
END_TEST

/* train --config FILE: "key = value" lines or the printed configuration line;
 * the command line wins; errors name FILE:LINE. */
START_TEST(train_reads_settings_from_a_file)
{
    const char *prog = testprog_path();
    char dir[64], cmd[1024], path[256];
    testdir_make(dir, "rnnsearch-config");
    snprintf(path, sizeof path, "%s/run.conf", dir);
    const char *settings = "# a small model\nemb = 8\nhidden=8  att = 8 maxout   =  4\n"
                           "configuration: src_vocab=9 dev-translate=1 epochs=3 lr=0.01\n";
    testfile_write(path, (const unsigned char *)settings, strlen(settings));
    snprintf(cmd, sizeof cmd,
             "head -n 40 corpora/reorder/train.tsv > %s/t.tsv && %s train --train %s/t.tsv "
             "--dev %s/t.tsv --out %s/m --config %s --epochs 1 --quiet 2>/dev/null",
             dir, prog, dir, dir, dir, path);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(path, sizeof path, "%s/m/last.ckpt", dir);
    rs_model m;
    rs_error err;
    ck_assert_msg(rs_checkpoint_load(path, &m, NULL, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(m.cfg.emb, 8);
    ck_assert_int_eq(m.cfg.att, 8);
    ck_assert_int_eq(m.cfg.maxout, 4);
    ck_assert_int_eq(m.train.dev_translate, 1);
    ck_assert_int_eq(m.train.epochs, 1); /* the command line wins */
    ck_assert(m.train.lr == 0.01f);
    rs_model_free(&m);
    /* What `info` prints is a settings file that repeats the run's configuration. */
    snprintf(cmd, sizeof cmd,
             "%s info -m %s/m | grep -v '^#' > %s/info.conf && %s train --train %s/t.tsv "
             "--dev %s/t.tsv --out %s/again --config %s/info.conf --quiet 2>/dev/null && "
             "%s info -m %s/again | grep -v '^#' | cmp -s - %s/info.conf",
             prog, dir, dir, prog, dir, dir, dir, dir, prog, dir, dir);
    ck_assert_msg(system(cmd) == 0, "%s", cmd);
    snprintf(path, sizeof path, "%s/bad.conf", dir);
    const char *bad = "emb = 8\n\nlr = inf\n";
    testfile_write(path, (const unsigned char *)bad, strlen(bad));
    snprintf(cmd, sizeof cmd, "train --train x.tsv --config %s", path);
    char out[512] = "";
    ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 2);
    char where[300];
    snprintf(where, sizeof where, "%s:3: --lr", path);
    ck_assert_msg(strstr(out, where) != NULL, "%s", out);
    testdir_remove(dir);
}
END_TEST

/* A configuration file is text: a NUL byte is an error naming its line, not
 * the silent end of the file; a UTF-8 byte order mark is skipped; a second
 * --config is refused by name. */
START_TEST(config_file_nul_bom_and_a_second_file)
{
    const char *prog = testprog_path();
    char dir[64], cmd[1024], path[256], other[256], out[1024] = "";
    testdir_make(dir, "rnnsearch-config-bytes");
    snprintf(path, sizeof path, "%s/nul.conf", dir);
    static const unsigned char nul[] = "emb = 8\nhidden = 8\0\nlr = inf\n";
    testfile_write(path, nul, sizeof nul - 1);
    snprintf(cmd, sizeof cmd, "train --train x.tsv --config %s", path);
    ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 2);
    char where[300];
    snprintf(where, sizeof where, "%s:2: NUL byte at byte 11", path);
    ck_assert_msg(strstr(out, where) != NULL, "%s", out);

    snprintf(path, sizeof path, "%s/bom.conf", dir);
    static const char bom[] = "\xEF\xBB\xBFseed = 3\nemb = 8\nhidden = 8\natt = 8\nmaxout = 4\n";
    testfile_write(path, (const unsigned char *)bom, strlen(bom));
    snprintf(cmd, sizeof cmd,
             "head -n 16 corpora/reorder/train.tsv > %s/t.tsv && %s train --train %s/t.tsv "
             "--out %s/m --config %s --max-steps 1 --quiet 2>&1",
             dir, prog, dir, dir, path);
    ck_assert_msg(testprog_shell(cmd, out, sizeof out) == 0, "%s", out);
    snprintf(other, sizeof other, "%s/m/last.ckpt", dir);
    rs_model m;
    rs_error err;
    ck_assert_msg(rs_checkpoint_load(other, &m, NULL, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(m.train.seed, 3);
    rs_model_free(&m);

    snprintf(other, sizeof other, "%s/other.conf", dir);
    testfile_write(other, (const unsigned char *)"emb = 16\n", 9);
    snprintf(cmd, sizeof cmd, "train --train x.tsv --config %s --config=%s", path, other);
    ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "--config given twice") && strstr(out, "other.conf"), "%s", out);
    testdir_remove(dir);
}
END_TEST

/* --tie-embeddings: refused unless --maxout equals --emb (naming both), stored
 * in the checkpoint, shown by info with the true parameter count, kept on
 * --resume and refused there as a change; export and import give an untied
 * model that scores the same. */
START_TEST(tie_embeddings_is_a_model_setting)
{
    rs_config cfg;
    rs_error err;
    rs_config_defaults(&cfg);
    cfg.model.tie_embeddings = 1;
    cfg.model.emb = cfg.model.maxout = 64;
    ck_assert_msg(rs_config_check(&cfg, &err) == 0, "%s", err.msg);
    cfg.model.maxout = 32;
    ck_assert(rs_config_check(&cfg, &err) != 0);
    ck_assert_msg(strstr(err.msg, "--tie-embeddings") && strstr(err.msg, "--maxout 32") &&
                      strstr(err.msg, "--emb 64"),
                  "%s", err.msg);
    char out[8192], cmd[2048], dir[64];
    ck_assert_int_eq(testprog_run_all("train --train /nonexistent.tsv --out /nonexistent/m "
                                      "--tie-embeddings --emb 16 --maxout 8",
                                      out, sizeof out),
                     2);
    ck_assert_msg(strstr(out, "--maxout 8") && strstr(out, "--emb 16"), "%s", out);

    testdir_make(dir, "rnnsearch-tie");
    const char *small = "--emb 8 --hidden 8 --att 8 --maxout 8 --epochs 1 --quiet";
    snprintf(cmd, sizeof cmd, "head -n 40 corpora/reorder/train.tsv > %s/t.tsv", dir);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "train --train %s/t.tsv --out %s/tied %s --tie-embeddings 2>&1", dir,
             dir, small);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 0);
    snprintf(cmd, sizeof cmd, "train --train %s/t.tsv --out %s/tied --resume --epochs 2 2>&1", dir,
             dir);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 0);
    char path[256];
    snprintf(path, sizeof path, "%s/tied/last.ckpt", dir);
    rs_model m;
    rs_train_state st;
    ck_assert_msg(rs_checkpoint_load(path, &m, &st, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(m.cfg.tie_embeddings, 1);
    ck_assert_int_eq(st.epoch, 2);
    snprintf(cmd, sizeof cmd, "info -m %s", path);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 0);
    char total[128];
    snprintf(total, sizeof total, " %zu (%.1f MB as float32)", m.layout.total,
             (double)m.layout.total * 4 / 1e6);
    ck_assert_msg(strstr(out, "tie_embeddings = 1\n") && strstr(out, "out.W      is tgt_emb") &&
                      strstr(out, total),
                  "%s", out);
    rs_train_state_free(&st);
    rs_model_free(&m);

    /* Export and import: an untied model with the same scores. */
    snprintf(cmd, sizeof cmd,
             "export -m %s/tied -o %s/t.safetensors 2>&1 && %s import "
             "%s/t.safetensors -o %s/untied.ckpt 2>&1",
             dir, dir, testprog_path(), dir, dir);
    ck_assert_msg(testprog_run(cmd, out, sizeof out) == 0, "%s", out);
    char scores[2][4096];
    snprintf(cmd, sizeof cmd, "score -m %s/tied %s/t.tsv", dir, dir);
    ck_assert_int_eq(testprog_run(cmd, scores[0], sizeof scores[0]), 0);
    snprintf(cmd, sizeof cmd, "score -m %s/untied.ckpt %s/t.tsv", dir, dir);
    ck_assert_int_eq(testprog_run(cmd, scores[1], sizeof scores[1]), 0);
    int lines = 0;
    for (char *a = scores[0], *b = scores[1]; *a && *b; lines++) {
        char *ea, *eb;
        double x = strtod(a, &ea), y = strtod(b, &eb);
        ck_assert(ea != a && eb != b && x < 0.0);
        ck_assert_msg(fabs(x - y) <= 1e-5 * fabs(x), "pair %d: %.9g vs %.9g", lines + 1, x, y);
        a = strchr(ea, '\n') ? strchr(ea, '\n') + 1 : ea + strlen(ea);
        b = strchr(eb, '\n') ? strchr(eb, '\n') + 1 : eb + strlen(eb);
    }
    ck_assert_int_eq(lines, 40);

    /* The setting cannot change on --resume. */
    snprintf(cmd, sizeof cmd, "train --train %s/t.tsv --out %s/plain %s 2>&1", dir, dir, small);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 0);
    snprintf(cmd, sizeof cmd,
             "train --train %s/t.tsv --out %s/plain --resume --tie-embeddings 2>&1", dir, dir);
    ck_assert_int_eq(testprog_run(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "tie_embeddings=0, not 1"), "%s", out);
    testdir_remove(dir);
}
END_TEST

/* The one table is two parts: a model key sets the model's configuration,
 * a training key training's; the config text (the checkpoint's section)
 * lists the model's keys first, then training's, and reads back into both. */
START_TEST(model_and_training_settings_are_apart)
{
    rs_config cfg, back;
    rs_error err;
    rs_config_defaults(&cfg);
    ck_assert(rs_config_set(&cfg, "hidden", "7", &err) == 0);
    ck_assert(rs_config_set(&cfg, "tokenizer", "char", &err) == 0);
    ck_assert(rs_config_set(&cfg, "lr", "0.5", &err) == 0);
    ck_assert(rs_config_set(&cfg, "threads", "3", &err) == 0);
    ck_assert_int_eq(cfg.model.hidden, 7);
    ck_assert_int_eq(cfg.model.tokenizer, RS_TOKENIZER_CHAR);
    ck_assert(cfg.train.lr == 0.5f);
    ck_assert_int_eq(cfg.train.threads, 3);
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    rs_config_write(&cfg, f);
    fclose(f);
    const char *post = strstr(text, "post_process="), *seed = strstr(text, "seed=");
    ck_assert(post && seed && post < seed); /* the model's last key, training's first */
    rs_config_defaults(&back);
    ck_assert(rs_config_parse(&back, text, &err) == 0);
    ck_assert(!memcmp(&back.model, &cfg.model, sizeof cfg.model));
    ck_assert(!memcmp(&back.train, &cfg.train, sizeof cfg.train));
    free(text);
}
END_TEST

/* A --config value the command line overrides is checked all the same: the
 * file would be wrong for the next run (and train copies it into the run). */
START_TEST(an_overridden_value_is_checked)
{
    char dir[64], path[256], cmd[1024], out[2048] = "";
    testdir_make(dir, "rnnsearch-config-overridden");
    snprintf(path, sizeof path, "%s/t.yaml", dir);
    static const char translation[] = "translation:\n  beam: abc\n  max_len: 0\n";
    testfile_write(path, (const unsigned char *)translation, sizeof translation - 1);
    snprintf(cmd, sizeof cmd, "translate -m %s/none --config %s --beam 2 --max-len 5", dir, path);
    ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "t.yaml:2: --beam: 'abc'") && strstr(out, "t.yaml:3: --max-len: '0'"),
                  "%s", out);
    snprintf(path, sizeof path, "%s/m.yaml", dir);
    static const char model[] = "model:\n  emb: abc\n  attention: bogus\n";
    testfile_write(path, (const unsigned char *)model, sizeof model - 1);
    snprintf(cmd, sizeof cmd,
             "train --train x.tsv --out %s/run --config %s --emb 8 --attention general", dir, path);
    ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "m.yaml:2: --emb: 'abc'") && strstr(out, "m.yaml:3: --attention"),
                  "%s", out);
    char run[300];
    snprintf(run, sizeof run, "%s/run", dir);
    ck_assert_int_eq(access(run, F_OK), -1);
    testdir_remove(dir);
}
END_TEST

/* Every command checks a file's overridden value through its option's row,
 * as it would store it (issue 48, item 7): translate's choices and its
 * --alignment value, serve's token. */
START_TEST(every_command_checks_overridden_values)
{
    char dir[64], path[256], cmd[1024], out[4096] = "";
    testdir_make(dir, "rnnsearch-config-every-command");
    snprintf(path, sizeof path, "%s/t.yaml", dir);
    static const char translation[] = "translation:\n  post_process: bogus\n  alignment: bogus\n";
    testfile_write(path, (const unsigned char *)translation, sizeof translation - 1);
    snprintf(cmd, sizeof cmd,
             "translate -m %s/none --config %s --post-process none --alignment hard < /dev/null",
             dir, path);
    ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "t.yaml:2: --post-process: 'bogus' is not one of") &&
                      strstr(out, "t.yaml:3: --alignment: 'bogus' is not hard, soft"),
                  "%s", out);
    snprintf(path, sizeof path, "%s/s.yaml", dir);
    static const char serve[] = "serve:\n  token: x\n";
    testfile_write(path, (const unsigned char *)serve, sizeof serve - 1);
    snprintf(cmd, sizeof cmd, "serve -m %s/none --config %s --token abcdefgh12", dir, path);
    ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "s.yaml:2: --token: a token is 8 to 128"), "%s", out);
    testdir_remove(dir);
}
END_TEST

/* serve's host: in a file is checked as the option is, with file:line, before
 * any model is loaded (issue 48, item 9). */
START_TEST(serve_host_in_a_file_names_its_line)
{
    char dir[64], path[256], cmd[1024], out[4096] = "";
    testdir_make(dir, "rnnsearch-config-host");
    snprintf(path, sizeof path, "%s/s.yaml", dir);
    static const char serve[] = "serve:\n  port: 0\n  host: bogus\n";
    testfile_write(path, (const unsigned char *)serve, sizeof serve - 1);
    snprintf(cmd, sizeof cmd, "serve -m %s/none --config %s", dir, path);
    ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "s.yaml:3: --host: 'bogus' is not a numeric IPv4 or IPv6 address"),
                  "%s", out);
    testdir_remove(dir);
}
END_TEST

/* A configuration file is read as any text input (issue 48, item 10): gzip
 * and a pipe too. The value read is the file's: its bad beam is named. */
START_TEST(config_files_are_read_as_any_input)
{
    char dir[64], path[256], cmd[1024], out[4096] = "";
    testdir_make(dir, "rnnsearch-config-reader");
    snprintf(path, sizeof path, "%s/t.yaml", dir);
    static const char translation[] = "translation:\n  beam: abc\n";
    testfile_write(path, (const unsigned char *)translation, sizeof translation - 1);
    snprintf(cmd, sizeof cmd, "gzip -k %s", path);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "translate -m %s/none --config %s.gz < /dev/null", dir, path);
    ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "t.yaml.gz:2: --beam: 'abc'"), "%s", out);
    char fifo[300];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    /* The writer waits for the reader (at most 20 s, should it never come). */
    snprintf(cmd, sizeof cmd, "timeout 20 cat %s > %s &", path, fifo);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "translate -m %s/none --config %s < /dev/null", dir, fifo);
    ck_assert_int_eq(testprog_run_all(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "fifo:2: --beam: 'abc'"), "%s", out);
    testdir_remove(dir);
}
END_TEST

/* "-0" is stored as 0: a run given --dropout -0 prints and compares its
 * settings as one given 0, and --resume with 0 is the same run. */
START_TEST(minus_zero_is_zero)
{
    rs_config cfg;
    rs_error err;
    rs_config_defaults(&cfg);
    ck_assert_msg(!rs_config_set(&cfg, "dropout", "-0", &err), "%s", err.msg);
    ck_assert_msg(!rs_config_set(&cfg, "clip", "-0", &err), "%s", err.msg);
    ck_assert(cfg.train.dropout == 0.0f && !signbit(cfg.train.dropout));
    ck_assert(cfg.train.clip == 0.0f && !signbit(cfg.train.clip));
    char buf[64];
    ck_assert(!rs_config_format(&cfg, "dropout", buf, sizeof buf));
    ck_assert_str_eq(buf, "0");
}
END_TEST

START_TEST(every_key_has_its_section_of_a_file)
{
    ck_assert_str_eq(rs_config_section("hidden"), "model");
    ck_assert_str_eq(rs_config_section("attention"), "model");
    ck_assert_str_eq(rs_config_section("tokenizer"), "data");
    ck_assert_str_eq(rs_config_section("max_vocab"), "data");
    ck_assert_str_eq(rs_config_section("lr"), "training");
    ck_assert_str_eq(rs_config_section("batch_size"), "training");
}
END_TEST

Suite *config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("config");
    tcase_add_test(tc, values_that_cannot_be_right_are_refused_naming_option_and_range);
    tcase_add_test(tc, every_key_has_its_section_of_a_file);
    tcase_add_test(tc, names_are_parsed_once_and_stored_by_name);
    tcase_add_test(tc, conflicting_options_are_refused);
    tcase_add_test(tc, train_reads_settings_from_a_file);
    tcase_add_test(tc, config_file_nul_bom_and_a_second_file);
    tcase_add_test(tc, tie_embeddings_is_a_model_setting);
    tcase_add_test(tc, model_and_training_settings_are_apart);
    tcase_add_test(tc, an_overridden_value_is_checked);
    tcase_add_test(tc, every_command_checks_overridden_values);
    tcase_add_test(tc, serve_host_in_a_file_names_its_line);
    tcase_add_test(tc, config_files_are_read_as_any_input);
    tcase_add_test(tc, minus_zero_is_zero);
    suite_add_tcase(s, tc);
    return s;
}
