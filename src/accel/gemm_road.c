/* The GEMM roads (gemm_road.h): OpenBLAS, nn/linalg.c's reference, and
 * oneDNN's sgemm behind rs_set_gemm_road, with packed weights (packed.h)
 * or without. */
#include <cblas.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accel/gemm_road.h"
#include "accel/kernels.h"
#include "accel/packed.h"
#include "nn/linalg.h"

#ifdef RS_WITH_ONEDNN
#include <oneapi/dnnl/dnnl.h>
/* OpenMP's runtime, which oneDNN links (libgomp): declared here, not by
 * <omp.h>, which not every compiler ships (clang's comes with libomp-dev). */
int omp_get_max_threads(void);
void omp_set_num_threads(int threads);
#endif

static const char *road_name = "openblas";
static int packing; /* the oneDNN road takes packed weights (packed.h) */

/* The most rows a product takes packed weights for: up to a time step's
 * batch (64 in S, 128 in M) they were 1.1-2.6x faster packed; the products
 * of all a batch's positions at once (M = B·T, 320-1300 rows), 1.01-1.06x
 * (gemm_road.h). */
enum { PACKED_ROWS = 256 };
static char road_kernel[48]; /* rs_gemm_road_kernel's, made by rs_gemm_road_choose */

#ifdef RS_WITH_ONEDNN
/* oneDNN's road computes every product itself, on as many of its OpenMP
 * threads as the command asks for (openblas_set_num_threads: one for each
 * of training's shards and serve's workers; `translate --threads N`), but
 * a product of fewer than SPLIT_ROWS rows on one: split over two threads,
 * batch-1 decoding's one-row products ran 0.9-1.3x one thread's rate, the
 * 64-row ones of batch 64 1.2-1.4x, and OpenBLAS's two threads, which the
 * road handed them to before, 0.6-0.8x (docs/performance.md, "Threads").
 * oneDNN's OpenMP count belongs to each calling thread (a new thread starts
 * at every core): each product sets its thread's. */
enum { SPLIT_ROWS = 16 };
static int onednn_own_threads; /* rs_gemm_road_onednn_threads: every product split */

static void onednn_gemm(const rs_gemm_call *c)
{
    int threads = openblas_get_num_threads();
    if (threads > 1 && c->M < SPLIT_ROWS && !onednn_own_threads)
        threads = 1;
    if (omp_get_max_threads() != threads)
        omp_set_num_threads(threads);
    /* Signals wait until the product is done: a handler run in the middle of
     * oneDNN 2.6's JIT sgemm kernels (AVX2 and AVX-512 alike) puts its frame
     * where their data is, and corrupted the heap within seconds of a 2 ms
     * SIGALRM (tests/accel/test_gemm_road.c; no such fault with the handler
     * on an alternate stack, nor on OpenBLAS's road). */
    sigset_t all, was;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &was);
    /* A weight's packed copy P = Wᵀ [K,N] is op(B) itself, read untransposed:
     * for products of a time step's rows (gemm_road.h). */
    const float *P = packing && c->M <= PACKED_ROWS ? rs_packed_weight(c) : NULL;
    dnnl_status_t status =
        dnnl_sgemm(c->ta ? 'T' : 'N', P || !c->tb ? 'N' : 'T', c->M, c->N, c->K, c->alpha, c->A,
                   c->lda, P ? P : c->B, P ? c->N : c->ldb, c->beta, c->C, c->ldc);
    pthread_sigmask(SIG_SETMASK, &was, NULL);
    /* oneDNN refuses only arguments that disagree, which rs_gemm's callers
     * have checked; the reference computes them all the same. */
    if (status != dnnl_success)
        rs_gemm_openblas(c);
}

/* oneDNN's instruction set as its kernels run, by the names of
 * DNNL_MAX_CPU_ISA. */
static const char *onednn_isa(void)
{
    switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    default: return "other";
    }
}

/* oneDNN's kernels use at least the instruction set `least`. */
static int onednn_has(dnnl_cpu_isa_t least)
{
    return (dnnl_get_effective_cpu_isa() & least) == least;
}

/* AVX2 or more: oneDNN's sgemm is measured faster there (gemm_road.h). */
static int onednn_worth_it(void)
{
    return onednn_has(dnnl_cpu_isa_avx2);
}

/* AVX-512 (avx512_core) or more: packed weights are measured faster there
 * on every shape of a training step; AVX2's kernels were not (gemm_road.h). */
static int packing_worth_it(void)
{
    return onednn_has(dnnl_cpu_isa_avx512_core);
}
#endif

void rs_gemm_road_onednn_threads(int own)
{
#ifdef RS_WITH_ONEDNN
    onednn_own_threads = own;
#else
    (void)own;
#endif
}

int rs_gemm_road_has_onednn(void)
{
#ifdef RS_WITH_ONEDNN
    return 1;
#else
    return 0;
#endif
}

int rs_gemm_road_choose(const char *name, rs_error *err)
{
    if (!name) {
        if (rs_accel_kernels_wanted(err) == -2)
            return -1;
        name = getenv("RNNSEARCH_GEMM");
        if (!name || !*name)
            name = "auto";
    }
    /* onednn: 1 oneDNN's road, 2 without packed weights */
    int onednn;
    if (!strcmp(name, "openblas"))
        onednn = 0;
    else if (!strcmp(name, "onednn") || !strcmp(name, "onednn-sgemm")) {
        if (!rs_gemm_road_has_onednn())
            return rs_fail(err,
                           "RNNSEARCH_GEMM=%s: this rnnsearch was built without oneDNN "
                           "(install libdnnl-dev and build again), use openblas or auto",
                           name);
        onednn = strcmp(name, "onednn") ? 2 : 1;
    } else if (!strcmp(name, "auto")) {
#ifdef RS_WITH_ONEDNN
        onednn = onednn_worth_it();
#else
        onednn = 0;
#endif
    } else
        return rs_fail(
            err, "RNNSEARCH_GEMM=%s: no such road (openblas, onednn, onednn-sgemm or auto)", name);
#ifdef RS_WITH_ONEDNN
    if (onednn) {
        rs_set_gemm_road(onednn_gemm);
        packing = onednn == 1 && packing_worth_it();
        road_name = onednn == 1 ? "onednn" : "onednn-sgemm";
        snprintf(road_kernel, sizeof road_kernel, "onednn-%s%s", onednn_isa(),
                 packing ? "-packed" : "");
        return 0;
    }
#endif
    (void)onednn;
    rs_set_gemm_road(NULL);
    packing = 0;
    road_name = "openblas";
    snprintf(road_kernel, sizeof road_kernel, "%s", openblas_get_corename());
    return 0;
}

const char *rs_gemm_road_name(void)
{
    return road_name;
}

const char *rs_gemm_road_kernel(void)
{
    return road_kernel[0] ? road_kernel : openblas_get_corename();
}
