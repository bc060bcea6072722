/* OpenBLAS's work buffer mapped while it can be (blas_buffer.h). */
#define _DEFAULT_SOURCE /* mmap's MAP_ANONYMOUS and MAP_NORESERVE */
#include <cblas.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "common/blas_buffer.h"

int rs_blas_reserve(rs_error *err)
{
    void *room = mmap(NULL, RS_BLAS_BUFFER_BYTES, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (room == MAP_FAILED) {
        struct rlimit lim;
        char limit[96] = "";
        if (!getrlimit(RLIMIT_AS, &lim) && lim.rlim_cur != RLIM_INFINITY)
            snprintf(limit, sizeof limit, " under the address-space limit of %llu MiB (ulimit -v)",
                     (unsigned long long)(lim.rlim_cur >> 20));
        return rs_fail(err,
                       "out of memory: OpenBLAS's work buffer (%zu MiB of address space) cannot "
                       "be mapped%s; each OpenBLAS thread maps one (OPENBLAS_NUM_THREADS=1 "
                       "needs the fewest)",
                       RS_BLAS_BUFFER_BYTES >> 20, limit);
    }
    munmap(room, RS_BLAS_BUFFER_BYTES);
    const float a[4] = {0};
    float c[4];
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1.0f, a, 2, a, 2, 0.0f, c, 2);
    return 0;
}
