#define _GNU_SOURCE /* unshare, CLONE_NEWUSER, CLONE_NEWNET */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testnetns.h"

static int write_text(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

int testnetns_enter(const char *const *ip_commands, int n, char *why, size_t size)
{
    char map[64];
    const unsigned uid = (unsigned)getuid(), gid = (unsigned)getgid();
    if (unshare(CLONE_NEWUSER | CLONE_NEWNET)) {
        snprintf(why, size, "no private network namespace (unshare: %s)", strerror(errno));
        return -1;
    }
    /* Root inside, so that `ip` may configure the namespace's own interfaces. */
    if (write_text("/proc/self/setgroups", "deny") && errno != ENOENT) {
        snprintf(why, size, "no private network namespace (setgroups: %s)", strerror(errno));
        return -1;
    }
    snprintf(map, sizeof map, "0 %u 1", uid);
    int bad = write_text("/proc/self/uid_map", map);
    snprintf(map, sizeof map, "0 %u 1", gid);
    if (bad || write_text("/proc/self/gid_map", map)) {
        snprintf(why, size, "no private network namespace (id maps: %s)", strerror(errno));
        return -1;
    }
    char cmd[512];
    for (int k = -1; k < n; k++) {
        snprintf(cmd, sizeof cmd, "PATH=\"$PATH:/usr/sbin:/sbin\" ip %s > /dev/null 2>&1",
                 k < 0 ? "link set lo up" : ip_commands[k]);
        if (system(cmd) != 0) {
            snprintf(why, size, "no private network (`ip %s` failed; is iproute2 installed?)",
                     k < 0 ? "link set lo up" : ip_commands[k]);
            return -1;
        }
    }
    return 0;
}
