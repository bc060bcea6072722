/* The GEMM roads (gemm_road.h): OpenBLAS, nn/linalg.c's reference, and
 * oneDNN's sgemm behind rs_set_gemm_road. */
#include <cblas.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accel/gemm_road.h"
#include "accel/kernels.h"
#include "nn/linalg.h"

#ifdef RS_WITH_ONEDNN
#include <oneapi/dnnl/dnnl.h>
/* OpenMP's runtime, which oneDNN links (libgomp): declared here, not by
 * <omp.h>, which not every compiler ships (clang's comes with libomp-dev). */
int omp_get_max_threads(void);
void omp_set_num_threads(int threads);
#endif

static const char *road_name = "openblas";
static char road_kernel[48]; /* rs_gemm_road_kernel's, made by rs_gemm_road_choose */

#ifdef RS_WITH_ONEDNN
/* oneDNN's road computes a product on one thread, where the commands ask
 * for one (each of training's shards, serve's workers, `--threads 1`): on a
 * busy 2-core machine its threads (OpenMP's, which spin at barriers) gave
 * products of a step 0.3-0.5x OpenBLAS's two threads' rate, while one of its
 * threads did 1.05-1.9x OpenBLAS's one (docs/performance.md). A product
 * asked of more threads goes back to OpenBLAS. oneDNN's OpenMP count belongs
 * to each calling thread (a new thread starts at every core): each product
 * makes its thread's 1. */
static void onednn_gemm(const rs_gemm_call *c)
{
    if (openblas_get_num_threads() > 1) {
        rs_gemm_openblas(c);
        return;
    }
    if (omp_get_max_threads() != 1)
        omp_set_num_threads(1);
    /* Signals wait until the product is done: a handler run in the middle of
     * oneDNN 2.6's JIT sgemm kernels (AVX2 and AVX-512 alike) puts its frame
     * where their data is, and corrupted the heap within seconds of a 2 ms
     * SIGALRM (tests/accel/test_gemm_road.c; no such fault with the handler
     * on an alternate stack, nor on OpenBLAS's road). */
    sigset_t all, was;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &was);
    dnnl_status_t status = dnnl_sgemm(c->ta ? 'T' : 'N', c->tb ? 'T' : 'N', c->M, c->N, c->K,
                                      c->alpha, c->A, c->lda, c->B, c->ldb, c->beta, c->C, c->ldc);
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

/* AVX2 or more: oneDNN's sgemm is measured faster there (gemm_road.h). */
static int onednn_worth_it(void)
{
    dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
    return (isa & dnnl_cpu_isa_avx2) == dnnl_cpu_isa_avx2;
}
#endif

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
    int onednn;
    if (!strcmp(name, "openblas"))
        onednn = 0;
    else if (!strcmp(name, "onednn")) {
        if (!rs_gemm_road_has_onednn())
            return rs_fail(err, "RNNSEARCH_GEMM=onednn: this rnnsearch was built without oneDNN "
                                "(install libdnnl-dev and build again), use openblas or auto");
        onednn = 1;
    } else if (!strcmp(name, "auto")) {
#ifdef RS_WITH_ONEDNN
        onednn = onednn_worth_it();
#else
        onednn = 0;
#endif
    } else
        return rs_fail(err, "RNNSEARCH_GEMM=%s: no such road (openblas, onednn or auto)", name);
#ifdef RS_WITH_ONEDNN
    if (onednn) {
        rs_set_gemm_road(onednn_gemm);
        road_name = "onednn";
        snprintf(road_kernel, sizeof road_kernel, "onednn-%s", onednn_isa());
        return 0;
    }
#endif
    (void)onednn;
    rs_set_gemm_road(NULL);
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
