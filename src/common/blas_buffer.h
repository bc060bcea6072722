/* OpenBLAS's work buffer, mapped while it can be. OpenBLAS (0.3.21, as
 * Debian ships it) maps a buffer of BUFFER_SIZE (32 << 22 bytes on x86_64
 * and arm64: 128 MiB, and a page or two) for each of its threads and for the
 * first product of each thread that calls it, and when the mapping fails it
 * tries again for ever (driver/others/memory.c blas_memory_alloc; fixed in
 * later releases): under an address-space limit (ulimit -v) a command spun
 * at 100 % CPU instead of saying it was out of memory. */
#ifndef RS_BLAS_BUFFER_H
#define RS_BLAS_BUFFER_H

#include <stddef.h>

#include "common/error.h"

/* The bytes one buffer takes: BUFFER_SIZE and what OpenBLAS maps beside it
 * (its largest mapping seen under strace, 128 MiB + 1 MiB). */
#define RS_BLAS_BUFFER_BYTES ((size_t)129 << 20)

/* OpenBLAS's buffers mapped now: the process's private anonymous read-write
 * mappings of a buffer's size (/proc/self/maps; 0 where there is none). */
int rs_blas_buffers_mapped(void);

/* Checks that the calling thread's buffer and those OpenBLAS's own threads
 * have not mapped yet can be mapped now, then makes OpenBLAS map the
 * calling thread's (one product of 2 × 2 matrices, once its threads have
 * taken theirs), which it keeps and reuses for every later product of the
 * thread: 0, or -1 with "out of
 * memory: …" naming the limit. Its threads that could not map theirs when
 * they started spin until the process ends: after a failure the caller ends
 * it at once (_exit), since a normal exit waits for them. */
int rs_blas_reserve(rs_error *err);

/* Before threads of the caller's own (training's shards, serve's workers)
 * call OpenBLAS, each mapping a buffer at its first product: 0 when
 * `threads` more buffers, and each thread's stack and malloc arena, can be
 * mapped now, else -1 with "out of memory: …" (where the first product
 * would have spun). */
int rs_blas_room(int threads, rs_error *err);

/* openblas_set_num_threads(threads), once rs_blas_room says the threads it
 * adds to OpenBLAS's (each maps its buffer as it starts) can be had: 0, or
 * -1 with "out of memory: …" and the number unchanged. */
int rs_blas_threads(int threads, rs_error *err);

#endif
