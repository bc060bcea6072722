/* Running the program from tests, as a user would. */
#ifndef RS_TEST_TESTPROG_H
#define RS_TEST_TESTPROG_H

#include <stddef.h>

/* The program under test: $RNNSEARCH (as `make check` sets it), else
 * ./rnnsearch. Fails the test when it is missing, instead of letting every
 * expected failure pass. */
const char *testprog_path(void);

/* Runs `PROGRAM ARGS` through the shell, so ARGS may redirect; what it prints
 * on standard output goes to out (NUL-terminated, cut at size - 1). Returns
 * the exit status, or -1 when a signal ended it. */
int testprog_run(const char *args, char *out, size_t size);

/* The same with standard error in out too. */
int testprog_run_all(const char *args, char *out, size_t size);

#endif
