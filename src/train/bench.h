/* What `rnnsearch bench` measures: the speed and memory of training and
 * translation on real data (Multi30k de→en, word tokens, lower-cased, min-freq 2, as the PyTorch
 * twin's ab-train.sh prepares it; docs/performance.md), beside what the
 * machine's sgemm can do on the same shapes.
 *
 * Configurations: S = m128 n256 a256 l128, batch 64; M = m256 n512 a512 l256,
 * batch 128. FLOPs are those of the GEMMs of model.md on each pair's true
 * lengths (no padding), forward ×3 for a training step (backward: two GEMMs per
 * forward GEMM); the attention's per-pair tanh and weighted sums are not in the
 * count (as in the twin's flops.py "GEMM part"). */
#ifndef RS_BENCH_H
#define RS_BENCH_H

#include "common/error.h"
#include "data/dataset.h"
#include "model/model.h"

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
    double mean_lt; /* mean target positions of a training pair, </s> included */
} rs_bench_data;

/* Multi30k de→en from dir (train.de, train.en, test_2016_flickr.de, each
 * plain or .gz): vocabularies from train (min-freq 2), train and test as ids. */
int rs_bench_data_load(rs_bench_data *d, const char *dir, rs_error *err);
void rs_bench_data_free(rs_bench_data *d);

/* The machine's bound on a step's products: the GFLOP/s of one GEMM road
 * (accel/gemm_road.h) over the shapes of a training step of c (output
 * layer, decoder input projection, recurrences), each forward product with
 * its two backward ones, on `threads` threads; best: its best of three
 * rounds, worst: its worst. */
typedef struct {
    const char *road;
    double best, worst;
} rs_bench_gemm_rate;

#define RS_BENCH_ROADS 2

/* Every road this build and processor take, rounds interleaved between
 * them, into rates[RS_BENCH_ROADS]; returns their count (-1 and err filled on
 * failure). The road chosen before (RNNSEARCH_GEMM) is chosen again after. */
int rs_bench_gemm_rates(const rs_bench_size *c, int V, int threads, double mean_lt,
                        rs_bench_gemm_rate *rates, rs_error *err);

/* What one measurement found. */
typedef struct {
    double tokens_per_s, gflops, peak_mb, bound_mb;
    double step_s, optimizer_s; /* seconds per step, and of it the optimizer's */
    double greedy[2], beam[2];  /* sentences/s at batch 1 and 64 */
} rs_bench_measured;

/* One measurement: `steps` training steps of config c on `threads` threads;
 * with decode set, then the translation speeds over `sentences` test
 * sentences, with the model at model_path (when not NULL) or the one just
 * trained. */
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
