/* OpenBLAS's work buffers mapped while they can be (blas_buffer.h). */
#define _DEFAULT_SOURCE /* mmap's MAP_ANONYMOUS and MAP_NORESERVE */
#include <cblas.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#include "common/blas_buffer.h"

/* OpenBLAS's buffers mapped already: the process's private anonymous
 * read-write mappings of a buffer's size (128 MiB and its page or two;
 * /proc/self/maps, 0 where there is none). Its threads map theirs as they
 * start, at the library's load, and may not have yet. */
int rs_blas_buffers_mapped(void)
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
        /* Buffers mapped side by side are one line of the maps: k buffers
         * are k × 128 MiB and at most k pages or two more. */
        const size_t size = hi - lo, k = size / ((size_t)128 << 20);
        const int anonymous = name_at > 0 && (line[name_at] == '\n' || line[name_at] == 0);
        if (anonymous && !strcmp(perms, "rw-p") && k > 0 && size <= k * RS_BLAS_BUFFER_BYTES)
            count += (int)k;
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

/* The process's threads (/proc/self/task; 0 where there is none). */
static int threads_running(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return 0;
    int count = 0;
    for (struct dirent *e; (e = readdir(d));)
        count += e->d_name[0] != '.';
    closedir(d);
    return count;
}

static void pause_a_millisecond(void)
{
    struct timespec tick = {0, 1000000L};
    nanosleep(&tick, NULL);
}

/* One product of 2 × 2 matrices through OpenBLAS's buffer: the calling
 * thread's buffer mapped, or taken again from OpenBLAS's pool. Both sides
 * transposed, on every kernel family: SkylakeX's and Cooperlake's sgemm
 * computes a small untransposed product without a buffer (its direct and
 * small-matrix kernels; they have no form for Aᵀ Bᵀ), so a product of
 * untransposed 2 × 2 matrices mapped nothing there. */
static void small_product(void)
{
    const float a[4] = {0};
    float c[4];
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasTrans, 2, 2, 2, 1.0f, a, 2, a, 2, 0.0f, c, 2);
}

/* OpenBLAS 0.3.21 keeps its buffers in one pool: each of its threads takes
 * a free one as it starts, and the calling thread's goes back to the pool
 * after each product. A thread that starts after the caller's product takes
 * the caller's buffer, and the caller maps another at its next product,
 * when the room checked may be gone: translate, score, align and train spun
 * there under ulimit -v 372000 to 380000 (a thread started late), and every
 * time OPENBLAS_NUM_THREADS=1 met --threads 2. So the caller waits (a second
 * at most) for the threads to start, then takes a buffer again until the
 * `threads` buffers are mapped (a few tries: a build whose threads map
 * theirs at their first product has fewer until then). */
static void hold_buffers(int threads)
{
    for (int ms = 0; ms < 1000 && threads_running() < threads; ms++)
        pause_a_millisecond();
    small_product();
    for (int tries = 0; tries < 10 && rs_blas_buffers_mapped() < threads; tries++) {
        pause_a_millisecond();
        small_product();
    }
}

int rs_blas_reserve(rs_error *err)
{
    /* The calling thread's buffer, and those of OpenBLAS's threads that have
     * not mapped theirs yet: one that cannot would spin, and the process with
     * it, at its exit if not before. */
    const int threads = openblas_get_num_threads(), mapped = rs_blas_buffers_mapped();
    const int missing = threads - 1 > mapped ? threads - 1 - mapped : 0;
    if (room_for(1 + missing, 0,
                 "each OpenBLAS thread maps one (OPENBLAS_NUM_THREADS=1 needs the fewest)", err))
        return -1;
    hold_buffers(threads);
    return 0;
}

int rs_blas_threads(int threads, rs_error *err)
{
    const int now = openblas_get_num_threads();
    if (threads > now && rs_blas_room(threads - now, err))
        return -1;
    openblas_set_num_threads(threads);
    if (threads > now)
        hold_buffers(threads);
    return 0;
}

int rs_blas_room(int threads, rs_error *err)
{
    return threads > 0
               ? room_for(threads, THREAD_BYTES, "fewer threads (--threads) need fewer", err)
               : 0;
}
