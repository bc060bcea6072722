#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fault.h"

int rs_fault_fails(const char *point)
{
    const char *spec = getenv("RNNSEARCH_FAULT");
    if (!spec)
        return 0;
    size_t len = strcspn(spec, "@");
    if (len != strlen(point) || strncmp(spec, point, len))
        return 0;
    long wanted = spec[len] == '@' ? strtol(spec + len + 1, NULL, 10) : 1;
    /* Passes counted per process: the one test hook that keeps state. Only
     * the point named counts, so one counter serves every point. */
    static long passes;
    return ++passes == wanted;
}

void rs_fault_point(const char *point)
{
    if (rs_fault_fails(point))
        _exit(RS_FAULT_EXIT);
}
