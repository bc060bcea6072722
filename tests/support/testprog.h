/* Running the program from tests, as a user would. */
#ifndef RS_TEST_TESTPROG_H
#define RS_TEST_TESTPROG_H

#include <stddef.h>

/* The program under test: $RNNSEARCH (as `make check` sets it), else
 * ./rnnsearch. Fails the test when it is missing, instead of letting every
 * expected failure pass. */
const char *testprog_path(void);

/* Runs `PROGRAM ARGS` through the shell, so ARGS may redirect; what it prints
 * on standard output goes to out (NUL-terminated, cut at size - 1; the rest is
 * read and dropped, so a long output never ends the program by a closed pipe).
 * Returns the exit status, or -1 when a signal ended it. */
int testprog_run(const char *args, char *out, size_t size);

/* The same with standard error in out too. */
int testprog_run_all(const char *args, char *out, size_t size);

/* `PROGRAM ARGS` with standard output and standard error kept apart: each,
 * whole and NUL-terminated, in a buffer the caller frees (*out, *errs). */
int testprog_run_split(const char *args, char **out, char **errs);

/* Any shell command line (a pipeline feeding the program, or a tool such as
 * xmllint), captured as testprog_run captures; tests name the program in it
 * with testprog_path(). */
int testprog_shell(const char *command, char *out, size_t size);

#endif
