/* A private network for tests of non-loopback addresses: the calling
 * process (a child forked for it) moves into a new user and network
 * namespace (as `unshare -rn` does), where it may add addresses to its own
 * loopback interface and listen on them; no packet leaves the namespace. */
#ifndef RS_TEST_TESTNETNS_H
#define RS_TEST_TESTNETNS_H

#include <stddef.h>

/* Enters the namespaces and runs `ip` with each of the given argument lines
 * (e.g. "addr add 10.9.9.9/32 dev lo") after bringing lo up. 0, or -1 with
 * why[size] saying what is missing (user namespaces disabled, no `ip`). */
int testnetns_enter(const char *const *ip_commands, int n, char *why, size_t size);

#endif
