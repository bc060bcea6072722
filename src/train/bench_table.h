/* `rnnsearch bench`'s table: for each model size and thread count, each
 * workload (training: target tokens/s, GFLOP/s, peak memory, time per step
 * and the optimizer's share; greedy and beam 5 at batch 64, greedy at batch
 * 1: sentences/s, GFLOP/s), its GFLOP/s as a share of the machine's bound
 * on its own products, and beneath it the bound: the best road's rate and
 * its spread, every road's on request (bench_bound.h). The workloads run in
 * a child process, so that its peak RSS is its own (bench.h measures). */
#ifndef RS_BENCH_TABLE_H
#define RS_BENCH_TABLE_H

#include <stdio.h>

#include "train/bench.h"

/* The numbers of a row; those < 0 (or NaN) print as "-". */
typedef struct {
    double rate, gflops, of_bound, spread, rss_mb, bound_mb;
} rs_bench_values;

typedef struct {
    char work[64], config[8], unit[16];
    int threads;
    rs_bench_values v;
} rs_bench_row;

#define RS_BENCH_MAX_ROWS 320

/* Rows measured so far (a failure keeps them, to be printed too). */
typedef struct {
    rs_bench_row rows[RS_BENCH_MAX_ROWS];
    int count;
    int decoded; /* the given model (plan's model_path) decoded already */
} rs_bench_table;

/* What to measure for each size. */
typedef struct {
    int threads[8], nthreads;
    int steps;              /* training steps of S (M runs a third, at least 3) */
    int sentences;          /* test sentences per decoding run */
    const char *model_path; /* decode with this model (under the first size only), or
                               NULL: each size's, as trained */
    const char *exe;        /* the program, re-run for the bound's other OpenBLAS core
                               types; NULL: none */
    int roads;              /* a row for every road of the bound, not only the best */
    FILE *log;              /* "S, 1 thread(s): …" as each starts, a child's failure,
                               a road that gave no rates */
    const char *prog;       /* the failure's prefix */
} rs_bench_plan;

/* The rows of size rs_bench_sizes[size] appended to t. */
int rs_bench_table_size(rs_bench_table *t, const rs_bench_data *d, const rs_bench_plan *plan,
                        int size, rs_error *err);

/* The rows of one measurement m of size c on `threads` threads against
 * bound b: each workload (those m decoded when decoded is set; `decoder`
 * names their model's size), its share of the bound's best road, then that
 * road's row (its spread: its worst round as a share of its best) and, with
 * roads set, every other road's (of_bound: its share of the best). */
void rs_bench_rows_add(rs_bench_table *t, const rs_bench_size *c, int threads,
                       const rs_bench_measured *m, int decoded, const char *decoder,
                       const rs_bench_bound *b, int roads);

/* The header and rows, aligned in columns or as tab-separated values. */
void rs_bench_table_print(FILE *out, const rs_bench_table *t, int tsv);

#endif
