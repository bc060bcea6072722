/* The machine's bound in `rnnsearch bench`: the best rate the GEMM roads
 * this processor runs reach on a workload's own products.
 *
 * A workload (training, greedy and beam 5 at batch 64, greedy at batch 1)
 * is a list of shares: the FLOPs of each of its products per step, and the
 * product (or the forms of it, of which the faster counts) that computes
 * them. A road's rate on the workload is the FLOPs of all its shares over
 * the time they take at the rates the road reached on each product:
 * Σ f / Σ (f / r). The roads: OpenBLAS as this process runs it, OpenBLAS
 * under each other core type the processor runs (OPENBLAS_CORETYPE is read
 * when the library loads, so each in a child process: the program itself,
 * `bench --bound-only SPEC`), and oneDNN's sgemm when the build has it.
 * At T > 1 threads each road has two forms: one product split over the T
 * threads, and T products side by side, each thread its own copy on one
 * BLAS thread (named "ROAD xT"), as training's T shards and T decoding
 * workers run theirs; the bound is the best of both. Rounds interleave the
 * roads; each keeps its best round and its worst.
 *
 * Shapes: m embedding, n hidden, a attention keys, l maxout units, V
 * target vocabulary; B sentences, ls and lt mean source and target
 * positions (</s> included). */
#ifndef RS_BENCH_BOUND_H
#define RS_BENCH_BOUND_H

#include <stddef.h>
#include <stdio.h>

#include "common/error.h"

/* The workloads, in the table's order. */
enum { RS_BENCH_TRAIN, RS_BENCH_GREEDY64, RS_BENCH_BEAM64, RS_BENCH_GREEDY1, RS_BENCH_WORKLOADS };

/* "train", "greedy, batch 64", "beam 5, batch 64", "greedy, batch 1". */
extern const char *const rs_bench_workload_names[RS_BENCH_WORKLOADS];

/* A model's sizes, as its products take them. */
typedef struct {
    int m, n, a, l, V;
} rs_bench_dims;

/* One product C[M,N] (+)= op(A) op(B) through rs_gemm, by its form:
 * 'f' A Bᵀ (y = x Wᵀ, W [out,in]), 'n' A B (y = x W_t; dx = dy W),
 * 'w' Aᵀ B, accumulated (dW += dyᵀ x). One row (M = 1) is a GEMV. */
typedef struct {
    char form;
    int M, N, K;
} rs_bench_product;

/* A share of a workload: flops done by the faster of products alt[0] and
 * alt[1] (-1: no second form). */
typedef struct {
    double flops;
    int alt[2];
} rs_bench_share;

#define RS_BENCH_MAX_PRODUCTS 128
#define RS_BENCH_MAX_SHARES 48

/* Every workload's shares, over one list of distinct products. */
typedef struct {
    rs_bench_product products[RS_BENCH_MAX_PRODUCTS];
    int count;
    rs_bench_share shares[RS_BENCH_WORKLOADS][RS_BENCH_MAX_SHARES];
    int nshares[RS_BENCH_WORKLOADS];
} rs_bench_shapes;

/* A training step of B sentences of dims `train` (each forward product with
 * its two backward ones, the per-step products at B rows, their weight
 * gradients over all the steps' rows), and a decoder step of dims `decode`
 * at 64, 320 (beam 5 × 64) and 1 rows (its forward products, each in both
 * forms: over W [out,in] and over a transposed copy). Products of more than
 * 512 rows are measured on 512 (a GEMM that large runs at the rate of a
 * larger one), so that a round stays short. */
void rs_bench_shapes_make(rs_bench_shapes *s, const rs_bench_dims *train, int B, double ls,
                          double lt, const rs_bench_dims *decode);

/* A road's rate on workload w, Σ f / Σ (f / r) over its shares, from the
 * rates (GFLOP/s) it reached on s's products; 0 when one is missing. */
double rs_bench_workload_rate(const rs_bench_shapes *s, int w, const double *rates);

/* GFLOP/s of each product on the road products take now: with copies 1,
 * one product on the threads OpenBLAS was given; with copies > 1, that many
 * threads side by side, each computing its own copy (its own A, B and C) on
 * one BLAS thread (OpenBLAS's count is 1 while they run, and restored), the
 * FLOPs of all the copies over the time from their shared start to the last
 * one's end. Each copy: one untimed call, then the same number of calls
 * for about 2 ms (one, when one takes that long). */
int rs_bench_products_time(const rs_bench_product *p, int count, int copies, double *rates,
                           rs_error *err);

/* The products as `bench --bound-only`'s argument ("f:64:768:256,…");
 * -1 when cap is too small. */
int rs_bench_spec_format(char *out, size_t cap, const rs_bench_product *p, int count);

/* Such an argument into p[cap]; returns the count, or -1 and err filled. */
int rs_bench_spec_parse(const char *spec, rs_bench_product *p, int cap, rs_error *err);

/* `bench --bound-only`'s output: "kernel NAME", then "FORM M N K GFLOP/s"
 * for each product. */
void rs_bench_rates_print(FILE *out, const char *kernel, const rs_bench_product *p,
                          const double *rates, int count);

/* That output read back: the kernel into kernel[cap] and the rates of p's
 * products, which it must give in p's order; -1 and err filled else. */
int rs_bench_rates_parse(const char *text, const rs_bench_product *p, int count, double *rates,
                         char *kernel, size_t cap, rs_error *err);

/* The processor's instruction sets that tell OpenBLAS's core types apart. */
typedef struct {
    int sse3, avx, avx2, fma, avx512f, avx512bf16;
} rs_bench_cpu;

rs_bench_cpu rs_bench_cpu_now(void);

#define RS_BENCH_CORE_TYPES 6

/* The core types (OPENBLAS_CORETYPE's names) whose kernels cpu runs,
 * widest first, into names[RS_BENCH_CORE_TYPES]; returns their count.
 * Cooperlake needs avx512f and avx512bf16, SkylakeX avx512f, Haswell and
 * Zen avx2 and fma, Sandybridge avx, Prescott sse3. */
int rs_bench_core_types(const rs_bench_cpu *cpu, const char **names);

/* One road of the bound and what its rounds gave on each workload. */
typedef struct {
    char name[48];     /* "openblas-Haswell", "onednn-avx512_core x2" */
    char coretype[16]; /* its child's OPENBLAS_CORETYPE; "" in this process */
    int onednn;
    int copies; /* products side by side, one thread each; 1: one split over the threads */
    int rounds; /* rounds measured (a road far behind stops after one) */
    double best[RS_BENCH_WORKLOADS], worst[RS_BENCH_WORKLOADS];
    char failed[160]; /* why it gave nothing (then rounds is 0), or "" */
} rs_bench_road;

/* Each road in two forms at more than one thread. */
#define RS_BENCH_MAX_ROADS (2 * (RS_BENCH_CORE_TYPES + 2))

typedef struct {
    rs_bench_road roads[RS_BENCH_MAX_ROADS];
    int count;
    int threads; /* the roads' thread count */
} rs_bench_bound;

/* The roads of this process and processor on `threads` threads: OpenBLAS
 * as loaded, children for the other core types of cpu (none when exe is
 * NULL), oneDNN when the build has it; at more than one thread each
 * followed by its side-by-side form (copies = threads, " xT" named). */
void rs_bench_bound_roads(rs_bench_bound *b, const rs_bench_cpu *cpu, const char *exe, int threads);

/* Three rounds over b's roads on b->threads threads (oneDNN's split form
 * on that many OpenMP threads), exe re-run for the children: the split
 * forms on split's products, the side-by-side ones on side's (one stream's:
 * a training shard's B/T sentences; NULL: split's). A road under half the
 * best's rate on every workload after the first round is not measured
 * again. The road chosen before (RNNSEARCH_GEMM) is chosen again after. */
int rs_bench_bound_measure(rs_bench_bound *b, const rs_bench_shapes *split,
                           const rs_bench_shapes *side, const char *exe, rs_error *err);

/* The road with the best rate on workload w, or -1 when none measured:
 * the best of both forms. */
int rs_bench_bound_best(const rs_bench_bound *b, int w);

#endif
