/* How a training run is stopped from outside (src/train/signals.c): the
 * first signal is recorded for the loop, a second ends the program at once
 * with 128 + its number. In a child process, whose handlers these are. */
#include <check.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "train/signals.h"

START_TEST(first_signal_asks_a_second_ends)
{
    const pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (*rs_train_signal() != 0)
            _exit(1);
        rs_train_catch_signals();
        raise(SIGHUP);
        if (*rs_train_signal() != SIGHUP)
            _exit(2);
        raise(SIGTERM); /* ends the child: 128 + SIGTERM */
        _exit(3);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status), "status %d", status);
    ck_assert_int_eq(WEXITSTATUS(status), 128 + SIGTERM);
}
END_TEST

Suite *signals_suite(void)
{
    Suite *s = suite_create("signals");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, first_signal_asks_a_second_ends);
    suite_add_tcase(s, tc);
    return s;
}
