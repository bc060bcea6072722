#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testprog.h"

const char *testprog_path(void)
{
    const char *program = getenv("RNNSEARCH");
    if (!program || !*program)
        program = "./rnnsearch";
    ck_assert_msg(access(program, X_OK) == 0, "%s: no such program (set RNNSEARCH)", program);
    return program;
}

static int run(const char *args, const char *redirect, char *out, size_t size)
{
    char cmd[4096];
    ck_assert_int_lt(snprintf(cmd, sizeof cmd, "%s %s%s", testprog_path(), args, redirect),
                     (int)sizeof cmd);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t n = fread(out, 1, size - 1, p);
    out[n] = 0;
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int testprog_run(const char *args, char *out, size_t size)
{
    return run(args, "", out, size);
}

int testprog_run_all(const char *args, char *out, size_t size)
{
    return run(args, " 2>&1", out, size);
}
