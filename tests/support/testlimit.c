#include <check.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlimit.h"

pid_t testlimit_fork(size_t margin)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid)
        return pid;
    FILE *statm = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (!statm || fscanf(statm, "%lu", &pages) != 1)
        _exit(3);
    fclose(statm);
    struct rlimit lim;
    lim.rlim_cur = lim.rlim_max = pages * (rlim_t)sysconf(_SC_PAGESIZE) + margin;
    if (setrlimit(RLIMIT_AS, &lim))
        _exit(4);
    return 0;
}

int testlimit_wait(pid_t pid)
{
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
