/* The GEMM roads one product at a time: OpenBLAS's cblas_sgemm (sgemv for
 * one row, as rs_gemm calls it) against oneDNN's dnnl_sgemm, on the shapes of
 * a training step of config S and of a decoder step at batch 1, best of 5
 * rounds each, in GFLOP/s, with their largest difference relative to an
 * entry (floor 1e-3) and whether oneDNN gives the same bits twice.
 *   make build/bench-gemm-roads && OPENBLAS_NUM_THREADS=1 build/bench-gemm-roads
 * Both roads take OpenBLAS's thread count. DNNL_MAX_CPU_ISA=AVX2 limits oneDNN's kernels, OPENBLAS_CORETYPE OpenBLAS's
 * (docs/performance.md, "GEMM roads"). */
#include <cblas.h>
#include <math.h>
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void openblas(int ta, int tb, int M, int N, int K, const float *A, int lda, const float *B,
                     int ldb, float *C)
{
    if (M == 1) /* rs_gemm's one-row road */
        cblas_sgemv(CblasRowMajor, tb ? CblasNoTrans : CblasTrans, tb ? N : K, tb ? K : N, 1.0f, B,
                    ldb, A, ta ? lda : 1, 0.0f, C, 1);
    else
        cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                    M, N, K, 1.0f, A, lda, B, ldb, 0.0f, C, N);
}

/* C [M,N] = op(A) op(B), row-major, reps times per round. */
static void compare(const char *name, int ta, int tb, int M, int N, int K, int reps)
{
    float *A = malloc(sizeof(float) * (size_t)M * K), *B = malloc(sizeof(float) * (size_t)K * N);
    float *C0 = calloc((size_t)M * N, sizeof(float)), *C1 = calloc((size_t)M * N, sizeof(float));
    float *C2 = calloc((size_t)M * N, sizeof(float));
    if (!A || !B || !C0 || !C1 || !C2) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    srand(1);
    for (size_t i = 0; i < (size_t)M * K; i++)
        A[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    for (size_t i = 0; i < (size_t)K * N; i++)
        B[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    const int lda = ta ? M : K, ldb = tb ? K : N;
    double best_o = 1e30, best_d = 1e30;
    for (int round = 0; round < 5; round++) {
        double t0 = now();
        for (int r = 0; r < reps; r++)
            openblas(ta, tb, M, N, K, A, lda, B, ldb, C0);
        double t1 = now();
        for (int r = 0; r < reps; r++)
            dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', M, N, K, 1.0f, A, lda, B, ldb, 0.0f, C1, N);
        double t2 = now();
        best_o = t1 - t0 < best_o ? t1 - t0 : best_o;
        best_d = t2 - t1 < best_d ? t2 - t1 : best_d;
    }
    dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', M, N, K, 1.0f, A, lda, B, ldb, 0.0f, C2, N);
    double most = 0.0;
    for (size_t i = 0; i < (size_t)M * N; i++) {
        double d = fabs((double)C0[i] - C1[i]) / (fabs((double)C0[i]) + 1e-3);
        most = d > most ? d : most;
    }
    const double flops = 2.0 * M * N * K * reps;
    printf("%-22s %5d x %5d x %5d  OpenBLAS %6.1f  oneDNN %6.1f GFLOP/s (%.2fx)  differ %.1g  "
           "same bits twice: %s\n",
           name, M, N, K, flops / best_o * 1e-9, flops / best_d * 1e-9, best_o / best_d, most,
           memcmp(C1, C2, sizeof(float) * (size_t)M * N) ? "no" : "yes");
    free(A);
    free(B);
    free(C0);
    free(C1);
    free(C2);
}

int main(void)
{
    const int R = 64 * 20, n = 256, m = 128, V = 5913, l = 128;
    omp_set_num_threads(openblas_get_num_threads()); /* both roads on the same threads */
    printf("OpenBLAS %s; oneDNN's instruction set %d\n", openblas_get_corename(),
           (int)dnnl_get_effective_cpu_isa());
    compare("forward U h", 0, 1, 64, 3 * n, n, 200);
    compare("backward input", 0, 0, 64, n, 3 * n, 200);
    compare("backward weight", 1, 0, 3 * n, n, 64, 200);
    compare("forward W x", 0, 1, R, 3 * n, m, 20);
    compare("output layer", 0, 1, R, V, l, 3);
    compare("its backward input", 0, 0, R, l, V, 3);
    compare("its backward weight", 1, 0, V, l, R, 3);
    compare("one row, U h", 0, 1, 1, 3 * n, n, 500);
    compare("one row, output", 0, 1, 1, V, l, 300);
    compare("one row, M's U h", 0, 1, 1, 3 * 512, 512, 300);
    return 0;
}
