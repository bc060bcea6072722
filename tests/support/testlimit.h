/* A child process whose address space may grow by a margin only, for tests
 * that show an allocation is sized by what is asked (not by a bound that
 * would ask the machine for gigabytes). */
#ifndef RS_TEST_TESTLIMIT_H
#define RS_TEST_TESTLIMIT_H

#include <stddef.h>
#include <sys/types.h>

/* fork(): in the child (0 returned) RLIMIT_AS is the child's present size
 * plus margin bytes (it _exits 3 or 4 when that cannot be set); in the
 * parent, the child's pid. */
pid_t testlimit_fork(size_t margin);

/* Waits for pid; its exit status, or -1 when a signal ended it. */
int testlimit_wait(pid_t pid);

#endif
