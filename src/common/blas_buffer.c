/* OpenBLAS's work buffers mapped while they can be (blas_buffer.h). */
#define _DEFAULT_SOURCE /* mmap's MAP_ANONYMOUS and MAP_NORESERVE */
#include <cblas.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "common/blas_buffer.h"

/* OpenBLAS's buffers mapped already: the process's private anonymous
 * read-write mappings of a buffer's size (128 MiB and its page or two;
 * /proc/self/maps, 0 where there is none). Its threads map theirs as they
 * start, at the library's load, and may not have yet. */
static int buffers_mapped(void)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    if (!maps)
        return 0;
    int count = 0;
    char line[512];
    while (fgets(line, sizeof line, maps)) {
        unsigned long lo, hi;
        char perms[8];
        int name_at = 0;
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &lo, &hi, perms, &name_at) < 3)
            continue;
        const size_t size = hi - lo;
        const int anonymous = name_at > 0 && (line[name_at] == '\n' || line[name_at] == 0);
        count += anonymous && !strcmp(perms, "rw-p") && size >= ((size_t)128 << 20) &&
                 size <= RS_BLAS_BUFFER_BYTES;
    }
    fclose(maps);
    return count;
}

/* What a new thread maps before its first product besides its buffer: its
 * stack (8 MiB) and glibc's malloc arena (64 MiB, reserved as 128 MiB to
 * align it). */
#define THREAD_BYTES ((size_t)136 << 20)

/* 0 when `buffers` buffers (each with `beside` bytes more) can be mapped
 * together now (they are mapped and unmapped), else -1 with "out of
 * memory: …" ending with `fewer`, what needs fewer. */
static int room_for(int buffers, size_t beside, const char *fewer, rs_error *err)
{
    enum { MOST = 1024 };
    void *room[MOST];
    const size_t each = RS_BLAS_BUFFER_BYTES + beside;
    int held = 0, ok = 1;
    for (; held < buffers && held < MOST && ok; held++) {
        room[held] = mmap(NULL, each, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        ok = room[held] != MAP_FAILED;
    }
    if (!ok)
        held--;
    for (int k = 0; k < held; k++)
        munmap(room[k], each);
    if (ok)
        return 0;
    struct rlimit lim;
    char limit[96] = "";
    if (!getrlimit(RLIMIT_AS, &lim) && lim.rlim_cur != RLIM_INFINITY)
        snprintf(limit, sizeof limit, " under the address-space limit of %llu MiB (ulimit -v)",
                 (unsigned long long)(lim.rlim_cur >> 20));
    if (buffers == 1)
        return rs_fail(err,
                       "out of memory: OpenBLAS's work buffer (%zu MiB of address space) cannot "
                       "be mapped%s; %s",
                       RS_BLAS_BUFFER_BYTES >> 20, limit, fewer);
    return rs_fail(err,
                   "out of memory: OpenBLAS's work buffers for %d threads (%zu MiB of address "
                   "space each) cannot be mapped%s; %s",
                   buffers, RS_BLAS_BUFFER_BYTES >> 20, limit, fewer);
}

int rs_blas_reserve(rs_error *err)
{
    /* The calling thread's buffer, and those of OpenBLAS's threads that have
     * not mapped theirs yet: one that cannot would spin, and the process with
     * it, at its exit if not before. */
    const int threads = openblas_get_num_threads(), mapped = buffers_mapped();
    const int missing = threads - 1 > mapped ? threads - 1 - mapped : 0;
    if (room_for(1 + missing, 0,
                 "each OpenBLAS thread maps one (OPENBLAS_NUM_THREADS=1 needs the fewest)", err))
        return -1;
    const float a[4] = {0};
    float c[4];
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1.0f, a, 2, a, 2, 0.0f, c, 2);
    return 0;
}

int rs_blas_threads(int threads, rs_error *err)
{
    const int now = openblas_get_num_threads();
    if (threads > now && rs_blas_room(threads - now, err))
        return -1;
    openblas_set_num_threads(threads);
    return 0;
}

int rs_blas_room(int threads, rs_error *err)
{
    return threads > 0
               ? room_for(threads, THREAD_BYTES, "fewer threads (--threads) need fewer", err)
               : 0;
}
