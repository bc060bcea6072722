/* Paired significance tests of BLEU (or chrF) differences, as sacreBLEU 2.x computes
 * them (sacrebleu/significance.py), so that a p-value printed here is the one
 * sacreBLEU prints for the same files and seed.
 *
 * Both tests work on each sentence's BLEU statistics (clipped matches and
 * n-gram counts per order, hypothesis and closest reference length), the
 * first system being the baseline:
 *
 * - paired bootstrap resampling (sacreBLEU --paired-bs, after Koehn 2004):
 *   `samples` resamples of the sentence indices, drawn as numpy's
 *   default_rng(seed).choice(n, (samples, n)) and shared by all systems; each
 *   resample's corpus BLEU per system; per system the mean over resamples and
 *   half the width of the 95% interval (sorted scores, positions n/40 and
 *   n - n/40 - 1); and for each other system the p-value of its difference
 *   from the baseline: with d_r = |BLEU_sys(r) - BLEU_base(r)| and d its
 *   difference on the whole test set, p = (#{r : d_r - mean(d) > d} + 1) /
 *   (samples + 1).
 * - paired approximate randomization (sacreBLEU --paired-ar, after Riezler and
 *   Maxwell 2005): `samples` trials, each swapping every sentence's two
 *   outputs where default_rng(seed).integers(2, (samples, n), dtype=bool)
 *   says so; p = (#{t : |BLEU_a(t) - BLEU_b(t)| > d} + 1) / (samples + 1).
 *   No confidence interval (sacreBLEU's is off by default there too).
 *
 * Means are numpy's (pairwise summation); sums of statistics are exact
 * integers, which sacreBLEU's float32 arrays equal while every sum stays
 * below 2^24 (16.7 million tokens). */
#ifndef RS_SIGNIFICANCE_H
#define RS_SIGNIFICANCE_H

#include <stdint.h>

#include "common/error.h"
#include <stddef.h>

#include "eval/bleu.h"

#define RS_PAIRED_BS_SAMPLES 1000  /* sacreBLEU's --paired-bs-n default */
#define RS_PAIRED_AR_SAMPLES 10000 /* sacreBLEU's --paired-ar-n default */
#define RS_PAIRED_SEED 12345       /* sacreBLEU's SACREBLEU_SEED default */
#define RS_PAIRED_MAX_SENTENCES 2147483647

typedef enum { RS_PAIRED_BS = 0, RS_PAIRED_AR = 1 } rs_paired_test;

typedef struct {
    double score; /* corpus BLEU of the whole test set */
    double mean;  /* bootstrap: mean BLEU over the resamples; NaN for AR */
    double ci;    /* bootstrap: half the 95% interval around it; NaN for AR */
    double p;     /* against the baseline; NaN for the baseline itself */
} rs_paired_result;

/* A metric the tests resample: one sentence's statistics (`size` bytes),
 * summed (zero, add), and the corpus score of a sum. sacreBLEU's tests work
 * the same way on any metric's sufficient statistics, chrF's included. */
typedef struct {
    const char *name; /* "BLEU", "chrF2" */
    size_t size;
    void (*zero)(void *sum);
    void (*add)(void *sum, const void *sentence);
    double (*score)(const void *sum);
} rs_paired_metric;

extern const rs_paired_metric rs_paired_bleu; /* rs_bleu_stats, rs_bleu_compute */
extern const rs_paired_metric rs_paired_chrf; /* rs_chrf_stats, rs_chrf_compute (chrf.h) */

/* The statistics a test resamples: system s's statistics of sentence i at
 * index s * n + i of stats, each the metric's (from its own rs_bleu_stats_add
 * or rs_chrf_stats_add). */
typedef struct {
    const rs_paired_metric *metric;
    const void *stats;
    int systems, n;
} rs_paired_table;

/* systems >= 2, n >= 1, samples >= 1; out[systems]. */
int rs_paired_metric_run(rs_paired_test test, const rs_paired_table *table, int samples,
                         uint64_t seed, rs_paired_result *out, rs_error *err);

/* rs_paired_metric_run with BLEU. */
int rs_paired_test_run(rs_paired_test test, const rs_bleu_stats *stats, int systems, int n,
                       int samples, uint64_t seed, rs_paired_result *out, rs_error *err);

/* numpy's mean of x[0..n): its pairwise sum divided by n. */
double rs_numpy_mean(const double *x, int n);

#endif
