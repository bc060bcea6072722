/* What the commands do to files: an output that is an input, a checkpoint or
 * a training run's file is refused before anything is written, special files
 * and links are never replaced, an output is replaced whole or not at all (an
 * error, a signal, a full disk leave the old file), and an output that cannot
 * be opened is an error, not a crash. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "train/output.h"
#include "model/checkpoint.h"
#include "train/rundir.h"
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
    cfg.model.src_vocab = 6;
    cfg.model.tgt_vocab = 6;
    cfg.model.emb = 3;
    cfg.model.hidden = 4;
    cfg.model.att = 4;
    cfg.model.maxout = 2;
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
    /* -o the --config file it read. */
    char yaml[256];
    path_in(yaml, sizeof yaml, "run.yaml");
    testfile_write(yaml, (const unsigned char *)"translation:\n  beam: 2\n", 23);
    snprintf(args, sizeof args, "translate -m %s --config %s -o %s %s", ckpt, yaml, yaml, in);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "is the same file as"), "%s", out);
    testfile_expect(yaml, "translation:\n  beam: 2\n");
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
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "is the same file as"), "%s", out);
    size_t now_size;
    unsigned char *now = testfile_read(ckpt, &now_size);
    ck_assert(now_size == ckpt_size && !memcmp(now, ckpt_bytes, now_size));
    free(now);
    char st[256];
    path_in(st, sizeof st, "model.st");
    snprintf(args, sizeof args, "export -m %s %s", ckpt, st);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    size_t st_size;
    unsigned char *st_bytes = testfile_read(st, &st_size);
    path_in(st, sizeof st, "model.ckpt"); /* a safetensors file with a .ckpt name */
    testfile_write(st, st_bytes, st_size);
    snprintf(args, sizeof args, "import %s -o %s", st, st);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
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

    /* Refused at once (opening a FIFO for writing would wait for a reader),
     * as a usage error: the rule every output follows (train/output.h). */
    snprintf(args, sizeof args, "export -m %s %s", ckpt, fifo);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, fifo) && strstr(out, "FIFO"), "%s", out);
    ck_assert(!lstat(fifo, &st) && S_ISFIFO(st.st_mode));
    snprintf(args, sizeof args, "export -m %s %s", ckpt, link);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, link) && strstr(out, "symbolic link"), "%s", out);
    ck_assert(!lstat(link, &st) && S_ISLNK(st.st_mode));
    testfile_expect(target, "keep");
    snprintf(args, sizeof args, "export -m %s -", ckpt);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_int_ne(access("-", F_OK), 0);
    snprintf(args, sizeof args, "export -m %s /dev/stdout", ckpt);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
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
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, fifo_ckpt) && strstr(out, "FIFO"), "%s", out);
    ck_assert(!lstat(fifo_ckpt, &st) && S_ISFIFO(st.st_mode));
    snprintf(args, sizeof args, "import %s -o %s", good, link_ckpt);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, link_ckpt) && strstr(out, "symbolic link"), "%s", out);
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

/* Names in d other than "." and "..". */
static int entries_in(const char *d)
{
    DIR *dd = opendir(d);
    ck_assert_msg(dd != NULL, "cannot list %s", d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dd)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(dd);
    return n;
}

/* A training run's directory as `train` leaves it: its lock, its log, its
 * watched alignments, and the checkpoint as best.ckpt and last.ckpt. */
static const char run_log[] = "step\tepoch\ttrain_loss\tdev_loss\n1\t1\t2.0\t2.5\n";
static const char run_watch[] = "{\"step\":0,\"sentences\":[]}\n";

static void make_model_dir(const char *d, const unsigned char *ckpt, size_t size)
{
    char path[512];
    ck_assert_int_eq(mkdir(d, 0755), 0);
    snprintf(path, sizeof path, "%s/best.ckpt", d);
    testfile_write(path, ckpt, size);
    snprintf(path, sizeof path, "%s/last.ckpt", d);
    testfile_write(path, ckpt, size);
}

static void make_run_dir(const char *d, const unsigned char *ckpt, size_t size)
{
    char path[512];
    make_model_dir(d, ckpt, size);
    snprintf(path, sizeof path, "%s/lock", d);
    testfile_write(path, (const unsigned char *)"4242\n", 5);
    snprintf(path, sizeof path, "%s/train.log.tsv", d);
    testfile_write(path, (const unsigned char *)run_log, sizeof run_log - 1);
    snprintf(path, sizeof path, "%s/watch.jsonl", d);
    testfile_write(path, (const unsigned char *)run_watch, sizeof run_watch - 1);
}

/* Runs `args`; it must fail, name `target` and leave it as `bytes` (or absent
 * when bytes is NULL). */
static void expect_refused(const char *args, const char *target, const unsigned char *bytes,
                           size_t size, char *out, size_t out_size)
{
    int status = testprog_run_all(args, out, out_size);
    ck_assert_msg(status != 0, "%s: exit 0 (%s)", args, out);
    ck_assert_msg(strstr(out, target), "%s: the message does not name %s: %s", args, target, out);
    if (bytes)
        expect_unchanged(target, bytes, size);
    else
        ck_assert_msg(access(target, F_OK) != 0, "%s: %s was written", args, target);
}

/* One rule for every command that writes: never over one of its inputs, nor
 * over a checkpoint (by its magic number), nor into a training run's
 * directory but for what the command owns there. */
START_TEST(test_outputs_never_replace_checkpoints_or_run_files)
{
    char out[8192], args[2048], ckpt[256], in[256], run[256], plain[256], target[512];
    testdir_make(dir, "rs_files");
    make_checkpoint(ckpt, sizeof ckpt);
    path_in(in, sizeof in, "in.txt");
    testfile_write(in, (const unsigned char *)"a b\nb a\n", 8);
    size_t size;
    unsigned char *bytes = testfile_read(ckpt, &size);
    path_in(run, sizeof run, "run");
    path_in(plain, sizeof plain, "plain");
    make_run_dir(run, bytes, size);
    make_model_dir(plain, bytes, size);

    /* align --replay over the run's best.ckpt, and over its own input. */
    snprintf(target, sizeof target, "%s/best.ckpt", run);
    snprintf(args, sizeof args, "align --replay %s -o %s", run, target);
    expect_refused(args, target, bytes, size, out, sizeof out);
    snprintf(target, sizeof target, "%s/watch.jsonl", run);
    snprintf(args, sizeof args, "align --replay %s -o %s", run, target);
    expect_refused(args, target, (const unsigned char *)run_watch, sizeof run_watch - 1, out,
                   sizeof out);
    /* --replay NAME: the run in the models directory, as -m finds it. */
    snprintf(args, sizeof args, "RNNSEARCH_MODELS=%s %s align --replay run -o %s/page.html 2>&1",
             dir, testprog_path(), dir);
    ck_assert_msg(testprog_shell(args, out, sizeof out) == 0, "%s", out);
    snprintf(target, sizeof target, "%s/page.html", dir);
    ck_assert_msg(access(target, F_OK) == 0, "no %s: %s", target, out);
    snprintf(args, sizeof args, "RNNSEARCH_MODELS=%s %s align --replay nope 2>&1", dir,
             testprog_path());
    ck_assert_int_eq(testprog_shell(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "--replay: no run 'nope'") && strstr(out, "/nope"), "%s", out);
    /* plot over the run's last.ckpt. */
    snprintf(target, sizeof target, "%s/last.ckpt", run);
    snprintf(args, sizeof args, "plot %s -o %s", run, target);
    expect_refused(args, target, bytes, size, out, sizeof out);
    ck_assert_msg(!strstr(out, "wrote"), "%s", out);

    /* translate, align, export with -m D/best.ckpt -o D/last.ckpt: in a run's
     * directory and in a plain one, the checkpoint is never replaced. */
    const char *dirs[] = {run, plain};
    for (int k = 0; k < 2; k++) {
        snprintf(target, sizeof target, "%s/last.ckpt", dirs[k]);
        snprintf(args, sizeof args, "translate -m %s/best.ckpt -o %s %s", dirs[k], target, in);
        expect_refused(args, target, bytes, size, out, sizeof out);
        snprintf(args, sizeof args, "align -m %s/best.ckpt --format tsv -o %s %s", dirs[k], target,
                 in);
        expect_refused(args, target, bytes, size, out, sizeof out);
        snprintf(args, sizeof args, "export -m %s/best.ckpt -o %s", dirs[k], target);
        expect_refused(args, target, bytes, size, out, sizeof out);
    }
    snprintf(target, sizeof target, "%s/last.ckpt", plain);
    snprintf(args, sizeof args, "translate -m %s/best.ckpt -o %s %s", plain, target, in);
    ck_assert_int_ne(testprog_run_all(args, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "is a checkpoint"), "%s", out);
    /* Nor a new file under a checkpoint's name, which -m would then try to load. */
    snprintf(target, sizeof target, "%s/new.ckpt", plain);
    snprintf(args, sizeof args, "translate -m %s/best.ckpt -o %s %s", plain, target, in);
    expect_refused(args, target, NULL, 0, out, sizeof out);

    /* Nothing else goes into a run's directory (from any command)... */
    snprintf(target, sizeof target, "%s/hyp.txt", run);
    snprintf(args, sizeof args, "translate -m %s -o %s %s", ckpt, target, in);
    expect_refused(args, target, NULL, 0, out, sizeof out);
    ck_assert_msg(strstr(out, "training run"), "%s", out);
    /* average writes beside the checkpoints it averages, as other toolkits
     * do, under any name but training's own: last.ckpt and best.ckpt (the
     * run's models) and step-N.ckpt (--keep-last would prune it). */
    const char *trainings[] = {"last.ckpt", "best.ckpt"};
    for (int k = 0; k < 2; k++) {
        snprintf(target, sizeof target, "%s/%s", run, trainings[k]);
        snprintf(args, sizeof args, "average -o %s %s", target, ckpt);
        expect_refused(args, target, bytes, size, out, sizeof out);
        ck_assert_msg(strstr(out, "training writes") && strstr(out, "average.ckpt"), "%s", out);
    }
    snprintf(target, sizeof target, "%s/step-7.ckpt", run);
    snprintf(args, sizeof args, "average -o %s %s", target, ckpt);
    expect_refused(args, target, NULL, 0, out, sizeof out);
    snprintf(target, sizeof target, "%s/avg.ckpt", run);
    snprintf(args, sizeof args, "average -o %s %s/best.ckpt %s/last.ckpt", target, run, run);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    ck_assert_msg(strstr(out, "wrote") && strstr(out, target), "%s", out);
    char avg[512];
    snprintf(avg, sizeof avg, "%s", target);
    snprintf(args, sizeof args, "info -m %s", avg);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    /* Again: its own earlier average is replaced, the run's files kept. */
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    snprintf(target, sizeof target, "%s/last.ckpt", run);
    expect_unchanged(target, bytes, size);
    char st[256];
    path_in(st, sizeof st, "m.safetensors");
    snprintf(args, sizeof args, "export -m %s -o %s", ckpt, st);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    snprintf(target, sizeof target, "%s/best.ckpt", run);
    snprintf(args, sizeof args, "import %s -o %s", st, run);
    expect_refused(args, target, bytes, size, out, sizeof out);
    snprintf(target, sizeof target, "%s/x.svg", run);
    snprintf(args, sizeof args, "plot %s -o %s", run, target);
    expect_refused(args, target, NULL, 0, out, sizeof out);
    /* ... but what the command owns there: plot's train.svg, the replay's page. */
    snprintf(args, sizeof args, "plot %s", run);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    snprintf(target, sizeof target, "%s/train.svg", run);
    ck_assert_int_eq(access(target, F_OK), 0);
    snprintf(target, sizeof target, "%s/replay.html", run);
    snprintf(args, sizeof args, "align --replay %s -o %s", run, target);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    ck_assert_int_eq(access(target, F_OK), 0);

    /* average and import write checkpoints: a new one, or over a checkpoint
     * that is none of their inputs and not a run's, but not over another file. */
    snprintf(target, sizeof target, "%s/avg.ckpt", plain);
    snprintf(args, sizeof args, "average -o %s %s", target, ckpt);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    snprintf(args, sizeof args, "average -o %s %s", in, ckpt);
    expect_refused(args, in, (const unsigned char *)"a b\nb a\n", 8, out, sizeof out);
    ck_assert_msg(strstr(out, "not a checkpoint"), "%s", out);
    snprintf(args, sizeof args, "import %s -o %s", st, plain);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    free(bytes);
    testdir_remove(dir);
}
END_TEST

/* `PROGRAM ARGS` with VARS set (a shell command line), output in out. */
static int run_with(const char *vars, const char *args, char *out, size_t size)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s %s 2>&1", vars, testprog_path(), args);
    return testprog_shell(cmd, out, size);
}

/* An output is replaced whole or not at all: bad input, a full disk or a file
 * size limit leave the old file byte for byte and no temporary file. */
START_TEST(test_output_is_replaced_whole_or_not_at_all)
{
    char out[8192], args[2048], ckpt[256], in[256], bad[256], big[256], hyp[256], run[256];
    char svg[256], page[256], st[256], avg[256];
    static const char old[] = "the old translations\n";
    testdir_make(dir, "rs_files");
    make_checkpoint(ckpt, sizeof ckpt);
    path_in(in, sizeof in, "in.txt");
    path_in(bad, sizeof bad, "bad.txt");
    path_in(big, sizeof big, "big.txt");
    path_in(hyp, sizeof hyp, "hyp.txt");
    path_in(run, sizeof run, "run");
    testfile_write(in, (const unsigned char *)"a b\nb a\n", 8);
    testfile_write(bad, (const unsigned char *)"a b\n\xff\xfe b\na\n", 11);
    FILE *f = fopen(big, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 3000; i++)
        fputs(i % 2 ? "a b a b\n" : "b a\n", f);
    ck_assert_int_eq(fclose(f), 0);
    size_t size;
    unsigned char *bytes = testfile_read(ckpt, &size);
    make_run_dir(run, bytes, size);
    testfile_write(hyp, (const unsigned char *)old, sizeof old - 1);
    ck_assert_int_eq(chmod(hyp, 0640), 0);
    const int entries = entries_in(dir);

    /* Invalid UTF-8 on line 2: translate and align fail naming it. */
    snprintf(args, sizeof args, "translate -m %s -o %s %s", ckpt, hyp, bad);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "bad.txt:2"), "%s", out);
    testfile_expect(hyp, old);
    snprintf(args, sizeof args, "align -m %s --format tsv -o %s %s", ckpt, hyp, bad);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 1);
    testfile_expect(hyp, old);
    ck_assert_int_eq(entries_in(dir), entries);

    /* A full disk (the temporary file's writes fail with ENOSPC), for every
     * command that writes a file. */
    snprintf(args, sizeof args, "translate -m %s -o %s %s", ckpt, hyp, big);
    ck_assert_int_eq(run_with("RNNSEARCH_FAULT=enospc", args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "hyp.txt") && strstr(out, "No space left on device"), "%s", out);
    testfile_expect(hyp, old);
    snprintf(args, sizeof args, "align -m %s --format json -o %s %s", ckpt, hyp, in);
    ck_assert_int_eq(run_with("RNNSEARCH_FAULT=enospc", args, out, sizeof out), 1);
    testfile_expect(hyp, old);
    snprintf(args, sizeof args, "plot %s -o %s", run, hyp);
    ck_assert_int_eq(run_with("RNNSEARCH_FAULT=enospc", args, out, sizeof out), 1);
    ck_assert_msg(!strstr(out, "wrote"), "%s", out);
    testfile_expect(hyp, old);
    snprintf(args, sizeof args, "align --replay %s -o %s", run, hyp);
    ck_assert_int_eq(run_with("RNNSEARCH_FAULT=enospc", args, out, sizeof out), 1);
    testfile_expect(hyp, old);
    ck_assert_int_eq(entries_in(dir), entries);
    /* Binary outputs over the files a first run made. */
    path_in(st, sizeof st, "m.safetensors");
    path_in(avg, sizeof avg, "avg.ckpt");
    snprintf(args, sizeof args, "export -m %s -o %s", ckpt, st);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    snprintf(args, sizeof args, "average -o %s %s", avg, ckpt);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    size_t st_size, avg_size;
    unsigned char *st_bytes = testfile_read(st, &st_size),
                  *avg_bytes = testfile_read(avg, &avg_size);
    snprintf(args, sizeof args, "export -m %s -o %s", ckpt, st);
    ck_assert_int_eq(run_with("RNNSEARCH_FAULT=enospc", args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "No space left on device"), "%s", out);
    expect_unchanged(st, st_bytes, st_size);
    snprintf(args, sizeof args, "average -o %s %s", avg, ckpt);
    ck_assert_int_eq(run_with("RNNSEARCH_FAULT=enospc", args, out, sizeof out), 1);
    expect_unchanged(avg, avg_bytes, avg_size);
    ck_assert_int_eq(entries_in(dir), entries + 2);
    free(st_bytes);
    free(avg_bytes);

    /* A file size limit: writes fail in the middle of the output (EFBIG),
     * whether SIGXFSZ is ignored by the caller or left to its default (which
     * would end the program before it removes its temporary file). */
    static const char *const limits[] = {"trap '' XFSZ; ulimit -f 1;", "ulimit -f 1;"};
    for (int k = 0; k < 2; k++) {
        snprintf(args, sizeof args, "translate -m %s -o %s %s", ckpt, hyp, big);
        ck_assert_int_eq(run_with(limits[k], args, out, sizeof out), 1);
        ck_assert_msg(strstr(out, "hyp.txt") && strstr(out, "File too large"), "%s", out);
        testfile_expect(hyp, old);
        ck_assert_int_eq(entries_in(dir), entries + 2);
    }

    /* Success replaces it, keeping its mode. */
    snprintf(args, sizeof args, "translate -m %s -o %s %s", ckpt, hyp, in);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    size_t hyp_size;
    unsigned char *now = testfile_read(hyp, &hyp_size);
    ck_assert_msg(hyp_size > 0 && memcmp(now, old, sizeof old - 1) && now[hyp_size - 1] == '\n',
                  "%s", now);
    free(now);
    struct stat sb;
    ck_assert(!stat(hyp, &sb));
    ck_assert_int_eq(sb.st_mode & 07777, 0640);
    path_in(svg, sizeof svg, "new.svg");
    path_in(page, sizeof page, "new.html");
    snprintf(args, sizeof args, "plot %s -o %s", run, svg);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    ck_assert(!stat(svg, &sb));
    const mode_t mask = umask(022);
    umask(mask);
    ck_assert_int_eq(sb.st_mode & 0777, 0666 & ~mask); /* as any new file */
    ck_assert_int_eq(entries_in(dir), entries + 3);
    free(bytes);
    testdir_remove(dir);
}
END_TEST

/* Whether the translation into `hyp` (old contents `old`) is under way: a
 * file beside it with data, or hyp itself changed. */
static int output_begun(const char *hyp, const char *old)
{
    const char *slash = strrchr(hyp, '/');
    char d[256], name[256], path[512];
    snprintf(d, sizeof d, "%.*s", (int)(slash - hyp), hyp);
    snprintf(name, sizeof name, "%s.", slash + 1);
    DIR *dd = opendir(d);
    ck_assert_ptr_nonnull(dd);
    struct dirent *e;
    struct stat st;
    int begun = 0;
    while (!begun && (e = readdir(dd))) {
        snprintf(path, sizeof path, "%s/%s", d, e->d_name);
        begun = !strncmp(e->d_name, name, strlen(name)) && !stat(path, &st) && st.st_size > 0;
    }
    closedir(dd);
    size_t size;
    unsigned char *now = testfile_read(hyp, &size);
    begun |= size != strlen(old) || memcmp(now, old, size);
    free(now);
    return begun;
}

/* Starts `translate -m ckpt -o hyp` reading a pipe, feeds it lines and keeps
 * the pipe open (so it is mid-way, waiting for more), sends `first` (then
 * `second` when not 0) once its output has begun, and returns how it ended. */
static int interrupt_translation(const char *ckpt, const char *hyp, const char *old, int first,
                                 int second)
{
    const char *prog = testprog_path();
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    signal(SIGPIPE, SIG_IGN);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        /* A background shell may have left SIGINT ignored: the default, as at a terminal. */
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        signal(SIGPIPE, SIG_DFL);
        int null = open("/dev/null", O_WRONLY);
        if (dup2(fds[0], 0) < 0 || null < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
            _exit(127);
        close(fds[0]);
        close(fds[1]);
        execl(prog, prog, "translate", "-m", ckpt, "-o", hyp, "--batch-size", "4", (char *)NULL);
        _exit(127);
    }
    close(fds[0]);
    for (int i = 0; i < 400; i++)
        ck_assert_int_eq(write(fds[1], "a b\n", 4), 4);
    const struct timespec tick = {0, 10 * 1000 * 1000};
    int begun = 0, status = 0, ended = 0;
    for (int t = 0; t < 2000 && !(begun = output_begun(hyp, old)); t++)
        nanosleep(&tick, NULL);
    if (begun) {
        kill(pid, first);
        if (second)
            kill(pid, second);
    }
    for (int t = 0; t < 2000 && !(ended = waitpid(pid, &status, WNOHANG) == pid); t++)
        nanosleep(&tick, NULL);
    if (!ended) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    close(fds[1]);
    ck_assert_msg(begun, "no output began within 20 s");
    ck_assert_msg(ended, "translate did not end within 20 s of the signal");
    return status;
}

/* SIGTERM, SIGINT or SIGHUP mid-way, once or twice: the old output stays and no
 * temporary file is left. */
START_TEST(test_a_signal_leaves_the_old_output)
{
    char ckpt[256], hyp[256];
    static const char old[] = "the old translations\n";
    testdir_make(dir, "rs_files");
    make_checkpoint(ckpt, sizeof ckpt);
    path_in(hyp, sizeof hyp, "hyp.txt");
    testfile_write(hyp, (const unsigned char *)old, sizeof old - 1);
    const int entries = entries_in(dir);
    const int signals[][2] = {
        {SIGTERM, 0}, {SIGINT, 0}, {SIGHUP, 0}, {SIGTERM, SIGINT}, {SIGINT, SIGINT}};
    for (int k = 0; k < 5; k++) {
        int status = interrupt_translation(ckpt, hyp, old, signals[k][0], signals[k][1]);
        ck_assert_msg(WIFSIGNALED(status) &&
                          (WTERMSIG(status) == signals[k][0] || WTERMSIG(status) == signals[k][1]),
                      "case %d: status %#x", k, status);
        testfile_expect(hyp, old);
        ck_assert_int_eq(entries_in(dir), entries);
    }
    testdir_remove(dir);
}
END_TEST

/* A careless user: outputs that are directories, links, devices, read-only
 * files and directories, missing directories, empty input. */
START_TEST(test_careless_outputs)
{
    char out[8192], args[2048], ckpt[256], in[256], empty[256], hyp[256], sub[256], link[256];
    char target[256];
    struct stat sb;
    testdir_make(dir, "rs_files");
    make_checkpoint(ckpt, sizeof ckpt);
    path_in(in, sizeof in, "in.txt");
    path_in(empty, sizeof empty, "empty.txt");
    path_in(hyp, sizeof hyp, "hyp.txt");
    path_in(sub, sizeof sub, "sub");
    path_in(link, sizeof link, "link.txt");
    path_in(target, sizeof target, "target.txt");
    testfile_write(in, (const unsigned char *)"a b\nb a\n", 8);
    testfile_write(empty, (const unsigned char *)"", 0);
    testfile_write(target, (const unsigned char *)"keep\n", 5);
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    ck_assert_int_eq(symlink("target.txt", link), 0);

    /* A directory is not replaced; neither is a link (nor written through). */
    snprintf(args, sizeof args, "translate -m %s -o %s %s", ckpt, sub, in);
    ck_assert_int_ne(testprog_run_all(args, out, sizeof out), 0);
    ck_assert_msg(strstr(out, sub) && strstr(out, "directory"), "%s", out);
    ck_assert(!lstat(sub, &sb) && S_ISDIR(sb.st_mode));
    snprintf(args, sizeof args, "translate -m %s -o %s %s", ckpt, link, in);
    ck_assert_int_ne(testprog_run_all(args, out, sizeof out), 0);
    ck_assert_msg(strstr(out, link) && strstr(out, "symbolic link"), "%s", out);
    ck_assert(!lstat(link, &sb) && S_ISLNK(sb.st_mode));
    testfile_expect(target, "keep\n");
    /* A device is written to, as by the shell: -o /dev/null works. */
    snprintf(args, sizeof args, "translate -m %s -o /dev/null %s", ckpt, in);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    ck_assert(!stat("/dev/null", &sb) && S_ISCHR(sb.st_mode));
    /* Empty input: an empty output, replacing the old one. */
    testfile_write(hyp, (const unsigned char *)"old\n", 4);
    snprintf(args, sizeof args, "translate -m %s -o %s %s", ckpt, hyp, empty);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    testfile_expect(hyp, "");
    /* No name; standard output's own file (/dev/stdout redirected to a file)
     * is standard output; a name of the longest length allowed is written. */
    snprintf(args, sizeof args, "translate -m %s -o '' %s", ckpt, in);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "name is empty"), "%s", out);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s translate -m %s -o /dev/stdout %s > %s 2>/dev/null",
             testprog_path(), ckpt, in, hyp);
    ck_assert_int_eq(testprog_shell(cmd, out, sizeof out), 0);
    size_t lines_size;
    unsigned char *lines = testfile_read(hyp, &lines_size);
    ck_assert_msg(lines_size > 2 && strchr((char *)lines, '\n') &&
                      strchr((char *)lines, '\n') != (char *)lines + lines_size - 1,
                  "%s", lines);
    free(lines);
    char longest[256 + 64];
    snprintf(longest, sizeof longest, "%s/", dir);
    memset(longest + strlen(longest), 'n', 255);
    longest[strlen(dir) + 1 + 255] = 0;
    snprintf(args, sizeof args, "translate -m %s -o %s %s", ckpt, longest, in);
    ck_assert_msg(testprog_run_all(args, out, sizeof out) == 0, "%s", out);
    ck_assert_int_eq(access(longest, F_OK), 0);
    /* "-o -" is no place for a checkpoint nor for a picture per sentence, and
     * a directory of pictures is checked whole before the first is written. */
    snprintf(args, sizeof args, "import %s -o -", ckpt);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_int_ne(access("-", F_OK), 0);
    snprintf(args, sizeof args, "align -m %s -f svg -o - %s", ckpt, in);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_int_ne(access("-", F_OK), 0);
    char pictures[300], picture[320];
    snprintf(pictures, sizeof pictures, "%s/pictures", dir);
    ck_assert_int_eq(mkdir(pictures, 0755), 0);
    snprintf(picture, sizeof picture, "%s/0002.svg", pictures);
    ck_assert_int_eq(symlink(target, picture), 0);
    snprintf(args, sizeof args, "align -m %s -f svg -o %s %s", ckpt, pictures, in);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "0002.svg is a symbolic link"), "%s", out);
    ck_assert_int_eq(entries_in(pictures), 1);
    testfile_expect(target, "keep\n");
    /* The pipe standard input reads is not written: the command would
     * translate its own output for ever. */
    snprintf(cmd, sizeof cmd, "cat %s | timeout 20 %s translate -m %s -o /dev/stdin 2>&1", in,
             testprog_path(), ckpt);
    ck_assert_int_eq(testprog_shell(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "/dev/stdin is the pipe standard input reads"), "%s", out);
    /* export writes safetensors files, and replaces no other kind of file. */
    testfile_write(hyp, (const unsigned char *)"notes\n", 6);
    snprintf(args, sizeof args, "export -m %s -o %s", ckpt, hyp);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "is not a safetensors file"), "%s", out);
    testfile_expect(hyp, "notes\n");
    /* A file without write permission is not replaced, by root either
     * (whom access(W_OK) always lets through). */
    testfile_write(hyp, (const unsigned char *)"old\n", 4);
    ck_assert_int_eq(chmod(hyp, 0444), 0);
    snprintf(args, sizeof args, "translate -m %s -o %s %s", ckpt, hyp, in);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "read-only"), "%s", out);
    testfile_expect(hyp, "old\n");
    ck_assert_int_eq(chmod(hyp, 0644), 0);
    /* A missing directory is an error naming the output. */
    snprintf(args, sizeof args, "plot %s -o %s/no/such/x.svg", ckpt, dir);
    ck_assert_int_ne(testprog_run_all(args, out, sizeof out), 0);
    snprintf(args, sizeof args, "align -m %s -o %s/no/such/x.txt %s", ckpt, dir, in);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "no/such/x.txt"), "%s", out);
    /* Read-only file and directory. Root may write anyway: as root the
     * program runs as nobody (setpriv), or this part is left out. */
    const char *as_user = geteuid() != 0 ? ""
                          : !access("/usr/bin/setpriv", X_OK)
                              ? "/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups"
                              : NULL;
    /* ... and when nobody can run the program where it is (not under /root). */
    if (as_user && *as_user && run_with(as_user, "--version", out, sizeof out) != 0)
        as_user = NULL;
    if (as_user) {
        ck_assert_int_eq(chmod(dir, 0777), 0);
        testfile_write(hyp, (const unsigned char *)"old\n", 4);
        ck_assert_int_eq(chmod(hyp, 0444), 0);
        snprintf(args, sizeof args, "translate -m %s -o %s %s", ckpt, hyp, in);
        ck_assert_int_eq(run_with(as_user, args, out, sizeof out), 2);
        ck_assert_msg(strstr(out, hyp) && strstr(out, "read-only"), "%s", out);
        testfile_expect(hyp, "old\n");
        ck_assert_int_eq(chmod(sub, 0555), 0);
        snprintf(args, sizeof args, "translate -m %s -o %s/x.txt %s", ckpt, sub, in);
        ck_assert_int_eq(run_with(as_user, args, out, sizeof out), 1);
        ck_assert_msg(strstr(out, "x.txt") && strstr(out, "Permission denied"), "%s", out);
        ck_assert_int_eq(chmod(sub, 0755), 0);
        ck_assert_int_eq(entries_in(sub), 0);
    }
    testdir_remove(dir);
}
END_TEST

/* What makes a run's directory: a lock as training leaves it, or its logs;
 * not another program's file named lock. */
START_TEST(test_run_directory_is_recognised)
{
    char path[256];
    testdir_make(dir, "rs_files");
    ck_assert_int_eq(rs_rundir_is_run(dir), 0);
    path_in(path, sizeof path, "lock");
    testfile_write(path, (const unsigned char *)"held by make\n", 13);
    ck_assert_int_eq(rs_rundir_is_run(dir), 0);
    testfile_write(path, (const unsigned char *)"31337\n", 6);
    ck_assert_int_eq(rs_rundir_is_run(dir), 1);
    testfile_write(path, (const unsigned char *)"", 0); /* made, PID not yet written */
    ck_assert_int_eq(rs_rundir_is_run(dir), 1);
    ck_assert_int_eq(unlink(path), 0);
    const char *logs[] = {"train.log.tsv", "train.loss.tsv", "watch.jsonl"};
    for (int k = 0; k < 3; k++) {
        path_in(path, sizeof path, logs[k]);
        testfile_write(path, (const unsigned char *)"", 0);
        ck_assert_msg(rs_rundir_is_run(dir), "%s", logs[k]);
        ck_assert_int_eq(unlink(path), 0);
    }
    ck_assert_int_eq(rs_rundir_is_run(dir), 0);
    testdir_remove(dir);
}
END_TEST

/* The rule itself, kind by kind (the commands' tests above run it whole). */
START_TEST(test_output_rule)
{
    char ckpt[256], text[256], link_in[256], empty[256], path[512], run[256];
    rs_error err = {{0}};
    rs_output_rule text_rule, ckpt_rule;
    testdir_make(dir, "rs_files");
    make_checkpoint(ckpt, sizeof ckpt);
    path_in(text, sizeof text, "in.txt");
    path_in(link_in, sizeof link_in, "hard.txt");
    path_in(empty, sizeof empty, "empty");
    path_in(run, sizeof run, "run");
    testfile_write(text, (const unsigned char *)"a\n", 2);
    testfile_write(empty, (const unsigned char *)"", 0);
    ck_assert_int_eq(link(text, link_in), 0);
    size_t size;
    unsigned char *bytes = testfile_read(ckpt, &size);
    make_run_dir(run, bytes, size);
    free(bytes);
    rs_output_rule_init(&text_rule, RS_OUTPUT_TEXT, "train.svg");
    rs_output_rule_init(&ckpt_rule, RS_OUTPUT_CHECKPOINT, NULL);
    ck_assert(!rs_output_add_input(&text_rule, text, &err) &&
              !rs_output_add_input(&text_rule, NULL, &err));
    ck_assert(!rs_output_add_input(&ckpt_rule, ckpt, &err));

    /* Standard output and new names pass; an input under another name does not. */
    ck_assert(!rs_output_check(&text_rule, NULL, &err) && !rs_output_check(&text_rule, "-", &err));
    path_in(path, sizeof path, "new.txt");
    ck_assert_msg(!rs_output_check(&text_rule, path, &err), "%s", err.msg);
    ck_assert_int_eq(rs_output_check(&text_rule, link_in, &err), -1);
    ck_assert_msg(strstr(err.msg, "is the same file as"), "%s", err.msg);
    ck_assert_int_eq(rs_output_check(&text_rule, "", &err), -1);
    /* Text never over a checkpoint nor under a .ckpt name; a checkpoint over a
     * checkpoint (not its input) or an empty file, never over text. */
    ck_assert_int_eq(rs_output_check(&text_rule, ckpt, &err), -1);
    ck_assert_msg(strstr(err.msg, "is a checkpoint"), "%s", err.msg);
    path_in(path, sizeof path, "new.ckpt");
    ck_assert_int_eq(rs_output_check(&text_rule, path, &err), -1);
    ck_assert_msg(!rs_output_check(&ckpt_rule, path, &err), "%s", err.msg);
    ck_assert_int_eq(rs_output_check(&ckpt_rule, ckpt, &err), -1); /* its input */
    snprintf(path, sizeof path, "%s/best.ckpt", run);
    ck_assert_int_eq(rs_output_check(&ckpt_rule, path, &err), -1); /* a run's */
    ck_assert_msg(strstr(err.msg, "training run"), "%s", err.msg);
    ck_assert_msg(!rs_output_check(&ckpt_rule, empty, &err), "%s", err.msg);
    ck_assert_int_eq(rs_output_check(&ckpt_rule, text, &err), -1);
    ck_assert_msg(strstr(err.msg, "not a checkpoint"), "%s", err.msg);
    /* In a run's directory only the name the command owns. */
    snprintf(path, sizeof path, "%s/train.svg", run);
    ck_assert_msg(!rs_output_check(&text_rule, path, &err), "%s", err.msg);
    snprintf(path, sizeof path, "%s/other.svg", run);
    ck_assert_int_eq(rs_output_check(&text_rule, path, &err), -1);
    ck_assert_msg(strstr(err.msg, path) && strstr(err.msg, "train.svg"), "%s", err.msg);
    /* Devices are streamed to, not replaced. */
    ck_assert_msg(!rs_output_check(&text_rule, "/dev/null", &err), "%s", err.msg);
    ck_assert_int_eq(rs_output_check(&ckpt_rule, "/dev/null", &err), -1);
    rs_output_rule_free(&text_rule);
    rs_output_rule_free(&ckpt_rule);
    testdir_remove(dir);
}
END_TEST

/* A copy (train's DIR/config.yaml) is written as every output: the text
 * given, into a run's directory under the name it owns, never over its input
 * nor under another name there. */
START_TEST(test_output_copy)
{
    char from[256], run[256], ckpt[256], path[512];
    rs_error err = {{0}};
    testdir_make(dir, "rs_files");
    make_checkpoint(ckpt, sizeof ckpt);
    path_in(from, sizeof from, "run.yaml");
    path_in(run, sizeof run, "run");
    testfile_write(from, (const unsigned char *)"a: 1\n\0b\n", 8);
    size_t size;
    unsigned char *bytes = testfile_read(ckpt, &size);
    make_run_dir(run, bytes, size);
    free(bytes);
    snprintf(path, sizeof path, "%s/config.yaml", run);
    ck_assert_msg(!rs_output_copy("a: 1\n\0b\n", 8, from, path, "config.yaml", &err), "%s",
                  err.msg);
    bytes = testfile_read(path, &size);
    ck_assert_uint_eq(size, 8);
    ck_assert(!memcmp(bytes, "a: 1\n\0b\n", 8));
    free(bytes);
    ck_assert_int_eq(rs_output_copy("a: 1\n", 5, from, from, "run.yaml", &err), -1);
    ck_assert_msg(strstr(err.msg, "is the same file as"), "%s", err.msg);
    snprintf(path, sizeof path, "%s/other.yaml", run);
    ck_assert_int_eq(rs_output_copy("a: 1\n", 5, from, path, "config.yaml", &err), -1);
    ck_assert_int_eq(access(path, F_OK), -1);
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

/* train keeps to its own directory (found by an outside attack): --log is
 * checked as outputs are (an input or a checkpoint refused, the file kept);
 * a lock that is a link or another program's file is not truncated; an empty
 * --out is refused rather than writing into /; a new run does not start
 * among another program's files (nor removes their *.tmp.N); a start that
 * fails leaves no directory; a FIFO for the log does not hang. */
START_TEST(test_train_keeps_to_its_directory)
{
    char out[8192], args[3072], train[256], dev[256], ckpt[256], path[256], target[320];
    testdir_make(dir, "rs_files");
    path_in(train, sizeof train, "train.tsv");
    path_in(dev, sizeof dev, "dev.tsv");
    static const char pairs[] = "a b\tb a\nc d\td c\n";
    testfile_write(train, (const unsigned char *)pairs, sizeof pairs - 1);
    testfile_write(dev, (const unsigned char *)pairs, sizeof pairs - 1);
    make_checkpoint(ckpt, sizeof ckpt);
    const char *small = "--emb 4 --hidden 4 --att 4 --maxout 2 --max-steps 2 --quiet";

    snprintf(args, sizeof args, "train --train %s --dev %s --out %s/r1 %s --log %s", train, dev,
             dir, small, dev);
    ck_assert_int_ne(testprog_run_all(args, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "refusing to overwrite an input"), "%s", out);
    testfile_expect(dev, pairs);
    snprintf(args, sizeof args, "train --train %s --out %s/r2 %s --log %s", train, dir, small,
             ckpt);
    ck_assert_int_ne(testprog_run_all(args, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "is a checkpoint"), "%s", out);
    rs_model m;
    rs_error err;
    ck_assert_msg(!rs_checkpoint_load(ckpt, &m, NULL, &err), "%s", err.msg);
    rs_model_free(&m);
    /* Neither failed start left its directory. */
    path_in(path, sizeof path, "r1");
    ck_assert_int_ne(access(path, F_OK), 0);
    path_in(path, sizeof path, "r2");
    ck_assert_int_ne(access(path, F_OK), 0);

    path_in(path, sizeof path, "linked");
    ck_assert_int_eq(mkdir(path, 0755), 0);
    path_in(target, sizeof target, "target.txt");
    testfile_write(target, (const unsigned char *)"keep\n", 5);
    snprintf(args, sizeof args, "%s/lock", path);
    ck_assert_int_eq(symlink(target, args), 0);
    snprintf(args, sizeof args, "train --train %s --out %s %s", train, path, small);
    ck_assert_int_ne(testprog_run_all(args, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "not a training run's lock (a symbolic link)"), "%s", out);
    testfile_expect(target, "keep\n");

    snprintf(args, sizeof args, "train --train %s --out '' %s", train, small);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "name is empty"), "%s", out);

    path_in(path, sizeof path, "mine");
    ck_assert_int_eq(mkdir(path, 0755), 0);
    snprintf(target, sizeof target, "%s/thesis.tmp.2", path);
    testfile_write(target, (const unsigned char *)"draft\n", 6);
    snprintf(args, sizeof args, "train --train %s --out %s %s", train, path, small);
    ck_assert_int_eq(testprog_run_all(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "holds thesis.tmp.2, which no training writes"), "%s", out);
    testfile_expect(target, "draft\n");
    snprintf(target, sizeof target, "%s/lock", path);
    ck_assert_int_ne(access(target, F_OK), 0);

    path_in(path, sizeof path, "fifo");
    ck_assert_int_eq(mkdir(path, 0755), 0);
    snprintf(target, sizeof target, "%s/train.log", path);
    ck_assert_int_eq(mkfifo(target, 0644), 0);
    snprintf(args, sizeof args, "train --train %s --out %s %s", train, path, small);
    ck_assert_int_eq(run_with("timeout 20", args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "train.log: cannot open the log"), "%s", out);
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
    tcase_add_test(tc, test_outputs_never_replace_checkpoints_or_run_files);
    tcase_add_test(tc, test_output_is_replaced_whole_or_not_at_all);
    tcase_add_test(tc, test_a_signal_leaves_the_old_output);
    tcase_add_test(tc, test_careless_outputs);
    tcase_add_test(tc, test_run_directory_is_recognised);
    tcase_add_test(tc, test_train_keeps_to_its_directory);
    tcase_add_test(tc, test_output_rule);
    tcase_add_test(tc, test_output_copy);
    tcase_add_test(tc, test_oversized_model_is_refused);
    suite_add_tcase(s, tc);
    return s;
}
