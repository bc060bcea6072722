/* `rnnsearch bench`'s table: for each model size, the GEMM roads' rates on a
 * training step's shapes, then training (tokens/s, GFLOP/s as a share of the
 * best road's, peak memory, time per step and the optimizer's share) and, on
 * the first one-thread run, translation (greedy and beam, batch 1 and 64),
 * per thread count; each measurement in a child process, so that its peak
 * RSS is its own (bench.h measures). */
#ifndef RS_BENCH_TABLE_H
#define RS_BENCH_TABLE_H

#include <stdio.h>

#include "train/bench.h"

/* The numbers of a row; those < 0 (or NaN) print as "-". */
typedef struct {
    double rate, gflops, of_bound, rss_mb, bound_mb;
} rs_bench_values;

typedef struct {
    char work[48], config[8], unit[16];
    int threads;
    rs_bench_values v;
} rs_bench_row;

#define RS_BENCH_MAX_ROWS 64

/* Rows measured so far (a failure keeps them, to be printed too). */
typedef struct {
    rs_bench_row rows[RS_BENCH_MAX_ROWS];
    int count;
    int decoded; /* translation measured already */
} rs_bench_table;

/* What to measure for each size. */
typedef struct {
    int threads[8], nthreads;
    int steps;              /* training steps of S (M runs a third, at least 3) */
    int sentences;          /* test sentences per decoding run */
    const char *model_path; /* translate with this model, or NULL: the one trained */
    FILE *log;              /* "S, 1 thread(s): …" as each starts, and a child's failure */
    const char *prog;       /* the failure's prefix */
} rs_bench_plan;

/* The rows of size rs_bench_sizes[size] appended to t. */
int rs_bench_table_size(rs_bench_table *t, const rs_bench_data *d, const rs_bench_plan *plan,
                        int size, rs_error *err);

/* The header and rows, aligned in columns or as tab-separated values. */
void rs_bench_table_print(FILE *out, const rs_bench_table *t, int tsv);

#endif
