#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "testrun.h"

int testrun(const char *args, char *out, size_t size)
{
    const char *p = getenv("RNNSEARCH");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", p && *p ? p : "./rnnsearch", args);
    FILE *f = popen(cmd, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(out, 1, size - 1, f);
    out[n] = 0;
    int status = pclose(f);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
