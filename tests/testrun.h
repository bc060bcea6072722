/* Running the program ($RNNSEARCH, as `make check` sets, else ./rnnsearch). */
#ifndef RS_TEST_TESTRUN_H
#define RS_TEST_TESTRUN_H

#include <stddef.h>

/* Runs `rnnsearch ARGS` through the shell; returns the exit status (-1 when
 * killed) and the combined stdout and stderr in out. */
int testrun(const char *args, char *out, size_t size);

#endif
