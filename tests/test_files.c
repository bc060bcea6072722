/* What the commands do to files: an output that is an input is refused before
 * anything is written, special files and links are never replaced, and an
 * output that cannot be opened is an error, not a crash. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/checkpoint.h"
#include "testdir.h"
#include "testprog.h"

static char dir[64];

static void path_in(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", dir, name);
}

/* A tiny random model saved as dir/m.ckpt (path in out). */
static void make_checkpoint(char *out, size_t size)
{
    rs_config cfg;
    rs_model m;
    rs_error err = {{0}};
    rs_config_defaults(&cfg);
    cfg.src_vocab = 6;
    cfg.tgt_vocab = 6;
    cfg.emb = 3;
    cfg.hidden = 4;
    cfg.att = 4;
    cfg.maxout = 2;
    ck_assert_msg(!rs_model_alloc(&m, &cfg, &err), "%s", err.msg);
    ck_assert(!rs_vocab_init(&m.src_vocab, &err) && !rs_vocab_init(&m.tgt_vocab, &err));
    ck_assert_int_eq(rs_vocab_add(&m.src_vocab, "a", &err), 4);
    ck_assert_int_eq(rs_vocab_add(&m.src_vocab, "b", &err), 5);
    ck_assert_int_eq(rs_vocab_add(&m.tgt_vocab, "x", &err), 4);
    ck_assert_int_eq(rs_vocab_add(&m.tgt_vocab, "y", &err), 5);
    rs_rng rng;
    rs_rng_seed(&rng, 3);
    rs_model_init_random(&m, &rng);
    path_in(out, size, "m.ckpt");
    ck_assert_msg(!rs_checkpoint_save(out, &m, NULL, &err), "%s", err.msg);
    rs_model_free(&m);
}

START_TEST(test_output_same_as_input_is_refused)
{
    char out[8192], args[2048], ckpt[256], in[256], alias[256], ref[256];
    testdir_make(dir, "rs_files");
    make_checkpoint(ckpt, sizeof ckpt);
    path_in(in, sizeof in, "in.txt");
    path_in(alias, sizeof alias, "alias.txt");
    path_in(ref, sizeof ref, "ref.txt");
    testfile_write(in, (const unsigned char *)"a b\nb a\n", 8);
    testfile_write(ref, (const unsigned char *)"x y\ny x\n", 8);
    ck_assert_int_eq(symlink("in.txt", alias), 0);

    /* translate: -o the input, -o a link to it, -o the references, -o stdin's file. */
    snprintf(args, sizeof args, "translate -m %s -o %s %s", ckpt, in, in);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "is the same file as"), "%s", out);
    testfile_expect(in, "a b\nb a\n");
    snprintf(args, sizeof args, "translate -m %s -o %s %s", ckpt, alias, in);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    testfile_expect(in, "a b\nb a\n");
    snprintf(args, sizeof args, "translate -m %s -o %s --ref %s %s", ckpt, ref, ref, in);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, ref), "%s", out);
    testfile_expect(ref, "x y\ny x\n");
    snprintf(args, sizeof args, "translate -m %s -o %s < %s", ckpt, in, in);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "standard input"), "%s", out);
    testfile_expect(in, "a b\nb a\n");
    /* A different output is fine. */
    char hyp[256];
    path_in(hyp, sizeof hyp, "hyp.txt");
    snprintf(args, sizeof args, "translate -m %s -o %s %s", ckpt, hyp, in);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);

    /* align --out the input. */
    snprintf(args, sizeof args, "align -m %s --format tsv --out %s %s", ckpt, in, in);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "is the same file as"), "%s", out);
    testfile_expect(in, "a b\nb a\n");

    /* export over its own checkpoint; import over its own input. */
    size_t ckpt_size;
    unsigned char *ckpt_bytes = testfile_read(ckpt, &ckpt_size);
    snprintf(args, sizeof args, "export -m %s %s", ckpt, ckpt);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "is the same file as"), "%s", out);
    size_t now_size;
    unsigned char *now = testfile_read(ckpt, &now_size);
    ck_assert(now_size == ckpt_size && !memcmp(now, ckpt_bytes, now_size));
    free(now);
    char st[256];
    path_in(st, sizeof st, "model.ckpt"); /* a safetensors file with a .ckpt name */
    snprintf(args, sizeof args, "export -m %s %s", ckpt, st);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    size_t st_size;
    unsigned char *st_bytes = testfile_read(st, &st_size);
    snprintf(args, sizeof args, "import %s -o %s", st, st);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "is the same file as"), "%s", out);
    now = testfile_read(st, &now_size);
    ck_assert(now_size == st_size && !memcmp(now, st_bytes, now_size));
    free(now);
    free(st_bytes);
    free(ckpt_bytes);

    /* plot -o the log it reads. */
    char log[256];
    static const char tsv[] = "step\tepoch\ttrain_loss\tdev_loss\n1\t1\t2.0\t2.5\n";
    path_in(log, sizeof log, "train.log.tsv");
    testfile_write(log, (const unsigned char *)tsv, sizeof tsv - 1);
    snprintf(args, sizeof args, "plot %s -o %s", dir, log);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "is the same file as"), "%s", out);
    testfile_expect(log, tsv);
    testdir_remove(dir);
}
END_TEST

/* The model a command reads is one of its inputs too: a checkpoint file, or
 * the best.ckpt a model directory resolves to. */
static void expect_unchanged(const char *path, const unsigned char *bytes, size_t size)
{
    size_t now_size;
    unsigned char *now = testfile_read(path, &now_size);
    ck_assert_msg(now_size == size && !memcmp(now, bytes, size), "%s was changed", path);
    free(now);
}

START_TEST(test_output_same_as_model_is_refused)
{
    char out[8192], args[2048], ckpt[256], in[256], model_dir[256], best[256], other[256];
    testdir_make(dir, "rs_files");
    make_checkpoint(ckpt, sizeof ckpt);
    path_in(in, sizeof in, "in.txt");
    testfile_write(in, (const unsigned char *)"a b\nb a\n", 8);
    path_in(model_dir, sizeof model_dir, "run");
    path_in(best, sizeof best, "run/best.ckpt");
    ck_assert_int_eq(mkdir(model_dir, 0755), 0);
    size_t size;
    unsigned char *bytes = testfile_read(ckpt, &size);
    testfile_write(best, bytes, size);

    /* translate and align: -o the checkpoint, or the directory's best.ckpt. */
    snprintf(args, sizeof args, "translate -m %s -o %s %s", ckpt, ckpt, in);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "is the same file as"), "%s", out);
    expect_unchanged(ckpt, bytes, size);
    snprintf(args, sizeof args, "translate -m %s -m %s -o %s %s", ckpt, model_dir, best, in);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "best.ckpt is the same file as"), "%s", out);
    expect_unchanged(best, bytes, size);
    snprintf(args, sizeof args, "align -m %s --format tsv -o %s %s", model_dir, best, in);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "is the same file as"), "%s", out);
    expect_unchanged(best, bytes, size);

    /* average: -o one of the checkpoints it averages; -o - is no file name. */
    snprintf(args, sizeof args, "average -o %s %s %s", ckpt, ckpt, model_dir);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "is the same file as"), "%s", out);
    expect_unchanged(ckpt, bytes, size);
    snprintf(args, sizeof args, "average -o %s %s %s", best, ckpt, model_dir);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    expect_unchanged(best, bytes, size);
    char cmd[2400];
    char cwd[1024];
    const char *program = testprog_path();
    ck_assert(getcwd(cwd, sizeof cwd) != NULL);
    snprintf(cmd, sizeof cmd, "cd %s && %s%s%s average -o - m.ckpt 2>&1", dir,
             program[0] == '/' ? "" : cwd, program[0] == '/' ? "" : "/", program);
    ck_assert_int_eq(testprog_shell(cmd, out, sizeof out), 2);
    path_in(other, sizeof other, "-");
    ck_assert_msg(access(other, F_OK) != 0, "average -o - wrote a file named '-'");
    /* Another output is fine. */
    path_in(other, sizeof other, "avg.ckpt");
    snprintf(args, sizeof args, "average -o %s %s %s", other, ckpt, model_dir);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    free(bytes);
    testdir_remove(dir);
}
END_TEST

START_TEST(test_special_targets_are_kept)
{
    char out[8192], args[2048], ckpt[256], fifo[256], link[256], target[256];
    struct stat st;
    testdir_make(dir, "rs_files");
    make_checkpoint(ckpt, sizeof ckpt);
    path_in(fifo, sizeof fifo, "fifo");
    path_in(link, sizeof link, "link.safetensors");
    path_in(target, sizeof target, "target.txt");
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    testfile_write(target, (const unsigned char *)"keep", 4);
    ck_assert_int_eq(symlink("target.txt", link), 0);

    /* Refused at once (opening a FIFO for writing would wait for a reader). */
    snprintf(args, sizeof args, "export -m %s %s", ckpt, fifo);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, fifo) && strstr(out, "FIFO"), "%s", out);
    ck_assert(!lstat(fifo, &st) && S_ISFIFO(st.st_mode));
    snprintf(args, sizeof args, "export -m %s %s", ckpt, link);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, link) && strstr(out, "symbolic link"), "%s", out);
    ck_assert(!lstat(link, &st) && S_ISLNK(st.st_mode));
    testfile_expect(target, "keep");
    snprintf(args, sizeof args, "export -m %s -", ckpt);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_int_ne(access("-", F_OK), 0);
    snprintf(args, sizeof args, "export -m %s /dev/stdout", ckpt);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "/dev/stdout is a symbolic link"), "%s", out);

    /* import into a checkpoint name that is a link or a FIFO. */
    char good[256], fifo_ckpt[256], link_ckpt[256];
    path_in(good, sizeof good, "good.safetensors");
    snprintf(args, sizeof args, "export -m %s %s", ckpt, good);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    path_in(fifo_ckpt, sizeof fifo_ckpt, "f.ckpt");
    path_in(link_ckpt, sizeof link_ckpt, "l.ckpt");
    ck_assert_int_eq(mkfifo(fifo_ckpt, 0600), 0);
    ck_assert_int_eq(symlink("target.txt", link_ckpt), 0);
    snprintf(args, sizeof args, "import %s -o %s", good, fifo_ckpt);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, fifo_ckpt) && strstr(out, "FIFO"), "%s", out);
    ck_assert(!lstat(fifo_ckpt, &st) && S_ISFIFO(st.st_mode));
    snprintf(args, sizeof args, "import %s -o %s", good, link_ckpt);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 1);
    ck_assert(!lstat(link_ckpt, &st) && S_ISLNK(st.st_mode));
    testfile_expect(target, "keep");
    testdir_remove(dir);
}
END_TEST

START_TEST(test_unopenable_output_is_an_error)
{
    char out[8192], args[2048], ckpt[256], in[256];
    testdir_make(dir, "rs_files");
    make_checkpoint(ckpt, sizeof ckpt);
    path_in(in, sizeof in, "in.txt");
    testfile_write(in, (const unsigned char *)"a b\n", 4);
    snprintf(args, sizeof args, "translate -m %s -o %s/no/such/dir/x %s", ckpt, dir, in);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "no/such/dir/x"), "%s", out);
    testdir_remove(dir);
}
END_TEST

/* Sizes that would overflow are refused by name, not undefined behaviour. */
START_TEST(test_oversized_model_is_refused)
{
    char out[8192], args[2048];
    testdir_make(dir, "rs_files");
    snprintf(args, sizeof args,
             "train --train corpora/reorder/dev.tsv --out %s/m --epochs 1 "
             "--hidden 715827883 --quiet",
             dir);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2); /* an option out of range */
    ck_assert_msg(strstr(out, "--hidden: '715827883'") && strstr(out, "to 65536"), "%s", out);
    testdir_remove(dir);
}
END_TEST

Suite *files_suite(void)
{
    Suite *s = suite_create("files");
    TCase *tc = tcase_create("files");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_output_same_as_input_is_refused);
    tcase_add_test(tc, test_output_same_as_model_is_refused);
    tcase_add_test(tc, test_special_targets_are_kept);
    tcase_add_test(tc, test_unopenable_output_is_an_error);
    tcase_add_test(tc, test_oversized_model_is_refused);
    suite_add_tcase(s, tc);
    return s;
}
