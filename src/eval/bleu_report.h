/* What `rnnsearch bleu` prints, as sacreBLEU's text output has it: the
 * score lines of BLEU and chrF (with the signature inside when asked),
 * one line per segment for --sentence, the --by-length table and a paired
 * test's table. Each writes to out; the caller checks the stream. */
#ifndef RS_BLEU_REPORT_H
#define RS_BLEU_REPORT_H

#include <stdio.h>

#include "eval/testset.h"

/* "BLEU = 35.12 67.1/42.3/28.0/19.2 (BP = …)" for bleu and "chrF2 = 61.23"
 * for chrf (NULL: not asked for), separated by sep and ended by a newline;
 * with a signature, "BLEU|SIGNATURE = 35.12 …". effective_order: sentence
 * BLEU's (rs_bleu_compute_order). */
void rs_bleu_report_scores(FILE *out, const rs_bleu_stats *bleu, const rs_chrf_stats *chrf,
                           int effective_order, const char *bleu_sig, const char *chrf_sig,
                           const char *sep);

/* What rs_bleu_report_lines scores and how. */
typedef struct {
    int bleu, chrf;                  /* the metrics asked for */
    int sentence;                    /* a line per segment (tab-separated), else the corpus */
    const char *bleu_sig, *chrf_sig; /* put into the score lines, or NULL */
} rs_bleu_report;

/* Scores system 0 of in (its text[0], named in->name in errors, which give
 * the line) against its references and writes the score lines. */
int rs_bleu_report_lines(FILE *out, const rs_bleu_report *what, const rs_testset_systems *in,
                         const rs_bleu_opts *opts, const char **refs, rs_error *err);

/* --by-length: per bucket its sentences, BLEU and chrF, as a table (an
 * empty bucket's scores "-"; a bucket of few sentences marked, and the mark
 * explained below) or as TSV (bucket, sentences, bleu, chrf; nan when
 * empty), the columns plot and the Python package read. */
void rs_by_length_report(FILE *out, const rs_length_buckets *b, const rs_bucket_stats *stats,
                         int tsv);

/* A paired test's table: one line per system of in (the baseline first),
 * its score, with the bootstrap its mean ± 95% interval, and its p-value
 * against the baseline (* below 0.05). */
void rs_paired_report(FILE *out, const rs_testset_systems *in, const rs_paired_result *res,
                      const rs_testset_test *test);

#endif
