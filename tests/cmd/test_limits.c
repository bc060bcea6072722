/* The program under the limits a user or a batch system sets: an address
 * space too small for OpenBLAS's work buffer (ulimit -v: OpenBLAS 0.3.21
 * spun for ever) is "out of memory", said at once; a file size limit
 * (ulimit -f) that training's checkpoint passes is "File too large", the
 * temporary file removed and the checkpoint saved before left as it was
 * (it ended by SIGXFSZ, exit 153, without a word). Each run is a child with
 * setrlimit and a time limit. */
#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testdir.h"
#include "testprog.h"
#include "testskip.h"

enum { TIMED_OUT = -2, SIGNALLED = 128 };

/* `sh -c command` with resource limited to `limit`, standard error into
 * err_path; its exit status, SIGNALLED + the signal that ended it, or
 * TIMED_OUT when it ran past `seconds` (then killed). */
static int run_limited(int resource, rlim_t limit, const char *command, const char *err_path,
                       int seconds)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        setpgid(0, 0);
        if (!freopen(err_path, "w", stderr))
            _exit(126);
        struct rlimit lim = {limit, limit};
        if (setrlimit(resource, &lim))
            _exit(125);
        execl("/bin/sh", "sh", "-c", command, (char *)NULL);
        _exit(127);
    }
    for (int waited = 0; waited < 20 * seconds; waited++) {
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : SIGNALLED + WTERMSIG(status);
        struct timespec tick = {0, 50000000L};
        nanosleep(&tick, NULL);
    }
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return TIMED_OUT;
}

static int count_temporaries(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int count = 0;
    for (struct dirent *e; (e = readdir(d));)
        count += strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return count;
}

/* 130,000 kB of address space (the audit's ulimit -v), where OpenBLAS's
 * buffer (129 MiB) cannot be mapped: every command, with or without a
 * model, says so and exits 1 within the time limit. */
START_TEST(an_address_space_too_small_for_openblas_is_out_of_memory)
{
#if defined(__SANITIZE_ADDRESS__)
    test_skip("program limits: ulimit -v under AddressSanitizer (its shadow memory needs "
              "terabytes of address space)");
#else
    char dir[64], cmd[1024], err_path[128];
    testdir_make(dir, "rnnsearch-vlimit");
    snprintf(err_path, sizeof err_path, "%s/stderr", dir);
    snprintf(cmd, sizeof cmd,
             "%s train --train corpora/reorder/dev.tsv --out %s/m --epochs 1 --emb 8 "
             "--hidden 8 --att 8 --maxout 4 --quiet 2> %s/train.err",
             testprog_path(), dir, dir);
    ck_assert_msg(system(cmd) == 0, "%s", cmd);
    const char *const commands[] = {"echo x | %s translate -m %s/m", "%s --version",
                                    "echo x | %s tokenize"};
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
        snprintf(cmd, sizeof cmd, commands[i], testprog_path(), dir);
        const int status = run_limited(RLIMIT_AS, (rlim_t)130000 << 10, cmd, err_path, 30);
        size_t size;
        char *err = (char *)testfile_read(err_path, &size);
        ck_assert_msg(status == 1, "%s: status %d (-2: still running after 30 s): %s", cmd, status,
                      err);
        ck_assert_msg(strstr(err, "rnnsearch: out of memory: OpenBLAS's work buffer") &&
                          strstr(err, "cannot be mapped under the address-space limit of 126 MiB "
                                      "(ulimit -v)"),
                      "%s: %s", cmd, err);
        free(err);
    }
    /* Training's threads each map a buffer (and a stack and malloc arena)
     * at their first product: under a limit too small for them it says it
     * is out of memory, under one large enough it trains; it spun in its
     * threads' first products at 300 MB before the check. Limits between
     * are left out: there the check can pass and OpenBLAS 0.3.21 still
     * fail to map a buffer later and spin (once in 8 runs of this suite
     * at 420 MB under OPENBLAS_CORETYPE=SkylakeX on a loaded machine). */
    static const rlim_t limits_mb[] = {300, 600};
    for (size_t k = 0; k < sizeof limits_mb / sizeof *limits_mb; k++) {
        const rlim_t mb = limits_mb[k];
        snprintf(cmd, sizeof cmd,
                 "%s train --train corpora/reorder/dev.tsv --out %s/v%d --epochs 1 --emb 8 "
                 "--hidden 8 --att 8 --maxout 4 --quiet",
                 testprog_path(), dir, (int)mb);
        const int status = run_limited(RLIMIT_AS, mb << 20, cmd, err_path, 60);
        size_t size;
        char *err = (char *)testfile_read(err_path, &size);
        ck_assert_msg(status == 0 || (status == 1 && strstr(err, "out of memory: OpenBLAS's work")),
                      "%d MB: status %d (-2: still running after 60 s): %s", (int)mb, status, err);
        free(err);
    }
    testdir_remove(dir);
#endif
}
END_TEST

/* A file size limit of 40 kB: the first checkpoint (132 kB) of a run cannot
 * be written, and a resumed run's next one cannot replace the last; each
 * says which file and why, exit 1, with no temporary file left and the
 * checkpoint before unchanged. */
START_TEST(a_file_size_limit_is_file_too_large_in_training)
{
    char dir[64], cmd[1024], err_path[128], model[128], ckpt[192];
    testdir_make(dir, "rnnsearch-flimit");
    snprintf(err_path, sizeof err_path, "%s/stderr", dir);
    snprintf(model, sizeof model, "%s/m", dir);
    snprintf(ckpt, sizeof ckpt, "%s/last.ckpt", model);
    const char *train = "%s train --train corpora/reorder/dev.tsv --out %s --emb 16 --hidden 16 "
                        "--att 16 --maxout 8 --quiet %s";
    for (int resumed = 0; resumed < 2; resumed++) {
        unsigned char *before = NULL;
        size_t before_size = 0;
        if (resumed) {
            snprintf(cmd, sizeof cmd, train, testprog_path(), model,
                     "--epochs 1 --overwrite 2> /dev/null");
            ck_assert_msg(system(cmd) == 0, "%s", cmd);
            before = testfile_read(ckpt, &before_size);
            ck_assert_uint_gt(before_size, 40 << 10);
        }
        snprintf(cmd, sizeof cmd, train, testprog_path(), model,
                 resumed ? "--resume --epochs 2" : "--epochs 1");
        const int status = run_limited(RLIMIT_FSIZE, 40 << 10, cmd, err_path, 60);
        size_t size;
        char *err = (char *)testfile_read(err_path, &size);
        ck_assert_msg(status == 1, "status %d (153: SIGXFSZ): %s", status, err);
        ck_assert_msg(strstr(err, "rnnsearch train: cannot write ") &&
                          strstr(err, "/m/last.ckpt: File too large"),
                      "%s", err);
        free(err);
        ck_assert_int_eq(count_temporaries(model), 0);
        if (resumed) {
            size_t after_size;
            unsigned char *after = testfile_read(ckpt, &after_size);
            ck_assert(after_size == before_size && !memcmp(after, before, before_size));
            free(after);
            free(before);
        } else {
            ck_assert_msg(access(ckpt, F_OK) != 0, "a checkpoint was written");
        }
    }
    testdir_remove(dir);
}
END_TEST

Suite *limits_suite(void)
{
    Suite *s = suite_create("limits");
    TCase *tc = tcase_create("limits");
    tcase_set_timeout(tc, 180);
    tcase_add_test(tc, an_address_space_too_small_for_openblas_is_out_of_memory);
    tcase_add_test(tc, a_file_size_limit_is_file_too_large_in_training);
    suite_add_tcase(s, tc);
    return s;
}
