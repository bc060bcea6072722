/* Running the program from tests, as a user would. */
#ifndef RS_TEST_TESTPROG_H
#define RS_TEST_TESTPROG_H

#include <stddef.h>

/* Runs `$RNNSEARCH ARGS` (default ./rnnsearch) through the shell, so ARGS may
 * redirect (append "2>&1" to capture messages too); what it prints on standard
 * output goes to out (NUL-terminated, cut at size - 1). Returns the exit
 * status, or -1 when a signal ended it. Fails the test when the program is
 * missing, instead of letting every expected failure pass. */
int testprog_run(const char *args, char *out, size_t size);

#endif
