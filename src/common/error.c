#define _DEFAULT_SOURCE /* madvise's MADV_HUGEPAGE */
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/error.h"

int rs_fail(rs_error *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int rs_fail_memory(rs_error *err, double bytes, const char *fmt, ...)
{
    if (!err)
        return -1;
    static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    for (; bytes >= 1024 && u < 4; u++)
        bytes /= 1024;
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    /* 412 MiB, 1.5 GiB: a decimal below 10 of a unit */
    return rs_fail(err, "out of memory allocating %s (%.*f %s)", what, u && bytes < 10 ? 1 : 0,
                   bytes, units[u]);
}

void rs_error_name_file(rs_error *err, const char *path)
{
    size_t n = strlen(path);
    if (!err || (!strncmp(err->msg, path, n) && err->msg[n] == ':'))
        return;
    char inner[sizeof err->msg];
    snprintf(inner, sizeof inner, "%s", err->msg);
    rs_fail(err, "%s: %s", path, inner);
}

void *rs_calloc(size_t count, size_t size, rs_error *err)
{
    if (count == 0 || size == 0)
        count = size = 1;
    if (count > SIZE_MAX / size) {
        rs_fail(err, "out of memory (%zu x %zu bytes does not fit in memory's address range)",
                count, size);
        return NULL;
    }
    void *p = calloc(count, size);
    if (!p)
        rs_fail(err, "out of memory (%zu x %zu bytes)", count, size);
    return p;
}

void *rs_calloc_large(size_t count, size_t size, rs_error *err)
{
    enum { HUGE_PAGE = 2 << 20 };
    if (count == 0 || size == 0)
        count = size = 1;
    if (count > (SIZE_MAX - HUGE_PAGE) / size) {
        rs_fail(err, "out of memory (%zu x %zu bytes does not fit in memory's address range)",
                count, size);
        return NULL;
    }
    /* whole huge pages, so that the advice covers all of it */
    const size_t bytes = (count * size + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    void *p = NULL;
    if (posix_memalign(&p, HUGE_PAGE, bytes)) {
        rs_fail(err, "out of memory (%zu x %zu bytes)", count, size);
        return NULL;
    }
#ifdef MADV_HUGEPAGE
    (void)madvise(p, bytes, MADV_HUGEPAGE); /* advice: small pages if refused */
#endif
    memset(p, 0, bytes);
    return p;
}

char *rs_strdup(const char *s, rs_error *err)
{
    size_t n = strlen(s) + 1;
    char *copy = rs_calloc(n, 1, err);
    if (copy)
        memcpy(copy, s, n);
    return copy;
}
