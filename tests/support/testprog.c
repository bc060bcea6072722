#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testdir.h"
#include "testprog.h"

const char *testprog_path(void)
{
    const char *program = getenv("RNNSEARCH");
    if (!program || !*program)
        program = "./rnnsearch";
    ck_assert_msg(access(program, X_OK) == 0, "%s: no such program (set RNNSEARCH)", program);
    return program;
}

static int exit_status(int status)
{
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int testprog_shell(const char *command, char *out, size_t size)
{
    FILE *p = popen(command, "r");
    ck_assert_msg(p != NULL, "could not run %s", command);
    size_t n = fread(out, 1, size - 1, p);
    out[n] = 0;
    while (fgetc(p) != EOF) {
    }
    int status = pclose(p);
    ck_assert_msg(status != -1, "could not run %s", command);
    return exit_status(status);
}

static int run(const char *args, const char *redirect, char *out, size_t size)
{
    char cmd[4096];
    ck_assert_int_lt(snprintf(cmd, sizeof cmd, "%s %s%s", testprog_path(), args, redirect),
                     (int)sizeof cmd);
    return testprog_shell(cmd, out, size);
}

int testprog_run(const char *args, char *out, size_t size)
{
    return run(args, "", out, size);
}

int testprog_run_all(const char *args, char *out, size_t size)
{
    return run(args, " 2>&1", out, size);
}

int testprog_run_split(const char *args, char **out, char **errs)
{
    char dir[64], o[96], e[96], cmd[4096];
    testdir_make(dir, "rs_testprog");
    snprintf(o, sizeof o, "%s/stdout", dir);
    snprintf(e, sizeof e, "%s/stderr", dir);
    ck_assert_int_lt(snprintf(cmd, sizeof cmd, "%s %s >'%s' 2>'%s'", testprog_path(), args, o, e),
                     (int)sizeof cmd);
    int status = system(cmd);
    ck_assert_msg(status != -1, "could not run %s", cmd);
    size_t size; /* testfile_read ends what it reads with a NUL */
    *out = (char *)testfile_read(o, &size);
    *errs = (char *)testfile_read(e, &size);
    testdir_remove(dir);
    return exit_status(status);
}
