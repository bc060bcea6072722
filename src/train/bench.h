/* What `rnnsearch bench` measures: the speed and memory of training and
 * decoding on real data (Multi30k de→en, word tokens, lower-cased, min-freq
 * 2, as the PyTorch twin's ab-train.sh prepares it; docs/performance.md),
 * beside the machine's bound on the same products (bench_bound.h).
 *
 * Configurations: S = m128 n256 a256 l128, batch 64; M = m256 n512 a512 l256,
 * batch 128. FLOPs are those of model.md's matrix products, 2 a
 * multiply-add. Training's: each pair's on its true lengths (no padding),
 * forward ×3 for a step (backward: two products per forward one).
 * Decoding's: counted where the products are issued (rs_gemm_count), what
 * the decoding did. The attention's per-pair tanh and weighted sums, and
 * every elementwise pass, are not in the count (as in the twin's flops.py
 * "GEMM part"). */
#ifndef RS_BENCH_H
#define RS_BENCH_H

#include "common/error.h"
#include "data/dataset.h"
#include "model/model.h"
#include "search/translate.h"
#include "train/bench_bound.h"

/* A model size of the measurements. */
typedef struct {
    const char *name;
    int m, n, a, l, batch;
} rs_bench_size;

/* S and M. */
extern const rs_bench_size rs_bench_sizes[2];

/* The data and the model of its vocabularies (default sizes). */
typedef struct {
    rs_model model;
    rs_dataset train, test;
    double mean_ls, mean_lt; /* mean source and target positions of a training pair,
                                </s> included */
} rs_bench_data;

/* Multi30k de→en from dir (train.de, train.en, test_2016_flickr.de, each
 * plain or .gz): vocabularies from train (min-freq 2), train and test as ids. */
int rs_bench_data_load(rs_bench_data *d, const char *dir, rs_error *err);
void rs_bench_data_free(rs_bench_data *d);

/* The sizes of c's products over a target vocabulary of V words. */
rs_bench_dims rs_bench_size_dims(const rs_bench_size *c, int V);

/* What one measurement found. */
typedef struct {
    double tokens_per_s, gflops, peak_mb, bound_mb;
    double step_s, optimizer_s; /* seconds per step, and of it the optimizer's */
    /* Each decoding workload (RS_BENCH_GREEDY64, _BEAM64, _GREEDY1; the
     * first entry unused): sentences/s, and GFLOP/s of the products it
     * issued; the decoded model's sizes. */
    double sent_s[RS_BENCH_WORKLOADS], dec_gflops[RS_BENCH_WORKLOADS];
    rs_bench_dims dims;
} rs_bench_measured;

/* One decoding workload (RS_BENCH_GREEDY64, _BEAM64 or _GREEDY1) of
 * sources[count] with ready's model, as `rnnsearch translate` decodes them (its
 * length order, its per-sentence limit 2·k + 10, no scores for greedy), as
 * `translate --threads` does: `threads` workers decoding batches side by
 * side, one BLAS thread each (a lone batch on `threads` BLAS threads): the
 * *seconds it took and the *flops of the
 * products it issued (nn/linalg.h rs_gemm_count: the encoder's, and every
 * decoder step's for each row still in the batch, the output layer over
 * all V words). */
int rs_bench_decode(const rs_ready *ready, const rs_source *sources, int count, int workload,
                    int threads, double *seconds, double *flops, rs_error *err);

/* One measurement: `steps` training steps of config c on `threads` threads;
 * with decode set, then the decoding workloads over `sentences` test
 * sentences on as many threads, with the model at model_path (when not
 * NULL) or the one just trained. */
typedef struct {
    const rs_bench_size *c;
    int threads, steps, decode, sentences;
    const char *model_path;
} rs_bench_job;

/* The measurement job asks for, into out; out->peak_mb is the process's peak
 * RSS so far (`bench` runs each in a process of its own). */
int rs_bench_measure(const rs_bench_data *d, const rs_bench_job *job, rs_bench_measured *out,
                     rs_error *err);

#endif
