#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fault.h"

void rs_fault_point(const char *point)
{
    const char *spec = getenv("RNNSEARCH_FAULT");
    if (!spec)
        return;
    size_t len = strcspn(spec, "@");
    if (len != strlen(point) || strncmp(spec, point, len))
        return;
    long wanted = spec[len] == '@' ? strtol(spec + len + 1, NULL, 10) : 1;
    /* Passes counted per process: the one test hook that keeps state. */
    static long passes;
    if (++passes == wanted)
        _exit(RS_FAULT_EXIT);
}
