/* Corpus chrF as sacreBLEU 2.x computes its default (sacreBLEU `CHRF()`):
 * character n-grams of orders 1-6 with all whitespace removed, beta = 2, no
 * word n-grams; per segment the reference with the best sentence F wins; the
 * corpus score is the F of the summed statistics (average precision and
 * recall over the orders that have both hypothesis and reference n-grams),
 * not an average of sentence scores. References, UTF-8 and whitespace are
 * handled as for BLEU (bleu.h); the statistics are plain sums likewise. */
#ifndef RS_CHRF_H
#define RS_CHRF_H

#include "eval/bleu.h"

#define RS_CHRF_ORDER 6
#define RS_CHRF_BETA 2

typedef struct {
    long long hyp[RS_CHRF_ORDER];   /* hypothesis n-grams (0 where the reference has none) */
    long long ref[RS_CHRF_ORDER];   /* reference n-grams */
    long long match[RS_CHRF_ORDER]; /* clipped matches */
    long long segments;
} rs_chrf_stats;

typedef struct {
    double score;        /* 0..100 */
    double precision;    /* average over the effective orders, 0..1 */
    double recall;       /* likewise */
    int effective_order; /* orders with both hypothesis and reference n-grams */
} rs_chrf_result;

void rs_chrf_stats_init(rs_chrf_stats *stats);

/* Adds one segment; only opts->lowercase is used. */
int rs_chrf_stats_add(rs_chrf_stats *stats, const char *hyp, const char *const *refs, int nrefs,
                      const rs_bleu_opts *opts, rs_error *err);

void rs_chrf_compute(const rs_chrf_stats *stats, rs_chrf_result *result);

/* "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:VERSION", as above. */
int rs_chrf_signature(const rs_bleu_opts *opts, int nrefs, const char *version, char *buf,
                      size_t size);

/* "chrF2 = 59.73". Returns snprintf's count. */
int rs_chrf_format(const rs_chrf_result *result, char *buf, size_t size);

#endif
