/* Fault injection (src/common/fault.c): with RNNSEARCH_FAULT=POINT@N the Nth pass
 * through that point ends the process with RS_FAULT_EXIT; other points and
 * earlier passes go on. The training tests (cmd/test_resume.c) use it to kill at
 * every commit point. */
#include <check.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/fault.h"

/* Runs `passes` passes through `point` in a child with RNNSEARCH_FAULT=spec;
 * returns its exit status (0 when it got through all of them). */
static int passes_through(const char *spec, const char *point, int passes)
{
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        setenv("RNNSEARCH_FAULT", spec, 1);
        for (int k = 0; k < passes; k++) {
            rs_fault_point("rename"); /* another point: never fires here */
            rs_fault_point(point);
        }
        _exit(0);
    }
    int status;
    ck_assert(waitpid(pid, &status, 0) == pid);
    ck_assert(WIFEXITED(status));
    return WEXITSTATUS(status);
}

START_TEST(the_nth_pass_ends_the_process)
{
    ck_assert_int_eq(passes_through("log@3", "log", 2), 0);
    ck_assert_int_eq(passes_through("log@3", "log", 3), RS_FAULT_EXIT);
    ck_assert_int_eq(passes_through("best", "best", 1), RS_FAULT_EXIT);
    ck_assert_int_eq(passes_through("best", "last", 5), 0);
    /* Without the variable nothing happens. */
    unsetenv("RNNSEARCH_FAULT");
    rs_fault_point("log");
}
END_TEST

/* rs_fault_fails: the same counting, returning 1 at the pass instead of
 * ending. In a child, as above: the count is the process's (CK_FORK=no runs
 * every test in one). The child's exit status is the passes that failed, as
 * bits: 1 << k for the kth pass through "enospc". */
START_TEST(the_nth_pass_fails)
{
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        setenv("RNNSEARCH_FAULT", "enospc@2", 1);
        int failed = rs_fault_fails("rename") ? 64 : 0;
        for (int k = 0; k < 3; k++)
            failed |= rs_fault_fails("enospc") << k;
        unsetenv("RNNSEARCH_FAULT");
        failed |= rs_fault_fails("enospc") << 3;
        _exit(failed);
    }
    int status;
    ck_assert(waitpid(pid, &status, 0) == pid);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 1 << 1); /* the second pass only */
}
END_TEST

Suite *fault_suite(void)
{
    Suite *s = suite_create("fault");
    TCase *tc = tcase_create("fault");
    tcase_add_test(tc, the_nth_pass_ends_the_process);
    tcase_add_test(tc, the_nth_pass_fails);
    suite_add_tcase(s, tc);
    return s;
}
