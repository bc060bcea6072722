/* Translation quality by source length: a test set split into buckets by the
 * number of words of each source sentence (Python's str.split(), so the
 * words of pre-tokenized text), and BLEU and chrF computed per bucket exactly
 * as the corpus scores are (bleu.h, chrf.h: sacreBLEU's rules, each bucket a
 * corpus of its own). The default buckets are compare-mt's: <10, 10-19,
 * 20-29, 30-39, 40-49, 50-59, >=60. This is the measurement behind Bahdanau
 * et al. (2014)'s Figure 2: a fixed-length encoding loses quality as
 * sentences grow, attention much less. */
#ifndef RS_BYLENGTH_H
#define RS_BYLENGTH_H

#include <stddef.h>
#include <stdio.h>

#include "common/error.h"
#include "eval/bleu.h"
#include "eval/chrf.h"

#define RS_LENGTH_BUCKETS_MAX 64

/* Bucket i holds lengths lower[i] .. lower[i + 1] - 1; the last has no upper
 * end. lower[0] is 0. */
typedef struct {
    int count;
    int lower[RS_LENGTH_BUCKETS_MAX];
} rs_length_buckets;

/* compare-mt's: <10, 10-19, 20-29, 30-39, 40-49, 50-59, >=60. */
void rs_length_buckets_default(rs_length_buckets *b);

/* From the bounds between buckets, "10,20,30": <10, 10-19, 20-29, >=30.
 * Strictly increasing positive integers, at most RS_LENGTH_BUCKETS_MAX - 1. */
int rs_length_buckets_parse(rs_length_buckets *b, const char *spec, rs_error *err);

/* The bucket of a sentence of `words` words. */
int rs_length_bucket_of(const rs_length_buckets *b, int words);

/* "<10", "10-19", ">=60" (a bucket of one length: "10"). Returns snprintf's count. */
int rs_length_bucket_name(const rs_length_buckets *b, int i, char *buf, size_t size);

/* One bucket's sentences and their statistics. */
typedef struct {
    long long sentences;
    rs_bleu_stats bleu;
    rs_chrf_stats chrf;
} rs_bucket_stats;

/* stats[b->count], zeroed. */
void rs_bucket_stats_init(rs_bucket_stats *stats, const rs_length_buckets *b);

/* Adds one segment to the bucket of its source. */
int rs_by_length_add(rs_bucket_stats *stats, const rs_length_buckets *b, const char *source,
                     const char *hyp, const char *const *refs, int nrefs, const rs_bleu_opts *opts,
                     rs_error *err);

/* A bucket of fewer sentences than this is marked "few" in the table and
 * the figure: corpus BLEU over a handful of sentences swings by several
 * points with any one of them (a one-sentence bucket is that sentence's
 * BLEU), so its point says little about sentences of its lengths. */
#define RS_LENGTH_FEW 20

/* Whether a bucket of this many sentences is marked as few (not an empty one). */
int rs_length_bucket_is_few(long long sentences);

/* Reads a table that `bleu --by-length --format tsv` wrote (header, then
 * "bucket<TAB>sentences<TAB>bleu<TAB>chrf" rows): its buckets into b, each
 * bucket's BLEU into bleu[RS_LENGTH_BUCKETS_MAX] (NaN: an empty one) and,
 * unless NULL, its sentences into sentences[RS_LENGTH_BUCKETS_MAX]. Errors
 * name the file and line. */
int rs_by_length_read_tsv(const char *path, rs_length_buckets *b, double *bleu,
                          long long *sentences, rs_error *err);

/* One system's line in the figure: its name, BLEU per bucket (NaN where
 * the bucket is empty) and the sentences per bucket (NULL: not known). */
typedef struct {
    const char *name;
    const double *bleu;         /* [buckets->count] */
    const long long *sentences; /* [buckets->count], or NULL */
} rs_length_line;

/* Bahdanau et al.'s Figure 2 as an SVG picture: BLEU against the source
 * length, one line per system over the buckets b, a legend under it. Under
 * each bucket's name its size ("n = 48", from the first line that has
 * sizes; each point's tooltip gives its own line's); a bucket of fewer
 * than RS_LENGTH_FEW sentences has its size marked "few" in red and its
 * points drawn hollow, which a note under the legend explains. */
int rs_by_length_svg(FILE *out, const rs_length_buckets *b, const rs_length_line *lines, int n,
                     const char *title);

#endif
