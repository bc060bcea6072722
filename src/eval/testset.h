/* A test set as `rnnsearch bleu` reads it, segment by segment: text[0] the
 * hypotheses and text[1..nrefs] the references, files of as many lines each
 * (text/corpus.h), and what is computed over all its segments at once.
 * refs[nrefs] is room for one segment's references. Errors name the
 * hypotheses' file and the line ("hyp.txt:3: …"). */
#ifndef RS_TESTSET_H
#define RS_TESTSET_H

#include "common/error.h"
#include "eval/bleu.h"
#include "eval/chrf.h"
#include "eval/bylength.h"
#include "eval/significance.h"
#include "text/corpus.h"

/* The references of segment `line`, into refs[nrefs]. */
void rs_testset_refs(const rs_lines *text, int nrefs, int line, const char **refs);

/* sacreBLEU's nrefs for the signature: the non-empty references per
 * segment, or RS_NREFS_VAR when segments differ (an empty reference line is
 * skipped). */
int rs_testset_nrefs(const rs_lines *text, int nrefs, const char **refs);

/* The systems of a paired test and their references: system 0 is text[0]
 * (named name), system s > 0 is sys[s - 1] (named other_names[s - 1]), for s
 * up to `others`; text[1..nrefs] are the references (rs_testset_refs). */
typedef struct {
    const rs_lines *text;
    int nrefs;
    const rs_lines *sys;
    int others;
    const char *name;
    const char *const *other_names;
} rs_testset_systems;

/* --by-length: each segment's statistics of system 0 (in->text[0], named
 * in->name; the other systems are not read) added to the bucket of its
 * source (src, a line per segment) in stats[b->count], which the caller has
 * initialised (rs_bucket_stats_init). */
int rs_testset_by_length(rs_bucket_stats *stats, const rs_length_buckets *b,
                         const rs_testset_systems *in, const rs_lines *src,
                         const rs_bleu_opts *opts, const char **refs, rs_error *err);

/* A paired test's sentence statistics, stats[s * n + line] for n segments
 * and each system s of in. */
int rs_testset_paired_stats(rs_bleu_stats *stats, const rs_testset_systems *in,
                            const rs_bleu_opts *opts, const char **refs, rs_error *err);

/* The same with chrF's sentence statistics (chrf.h). */
int rs_testset_paired_chrf_stats(rs_chrf_stats *stats, const rs_testset_systems *in,
                                 const rs_bleu_opts *opts, const char **refs, rs_error *err);

/* What the readers below refuse, besides failing (-1): input that cannot
 * give a true score (`bleu` exits 2 on it; err says why). */
#define RS_TESTSET_REFUSED 2

/* Reads files[0..nfiles) into text[nfiles], the hypotheses (hyp_name in
 * messages) then the references, each through the shared line reader
 * (UTF-8 checked, gzip decompressed; "-" is standard input) with every
 * line's trailing whitespace stripped, as sacreBLEU rstrip()s it. Returns 0;
 * -1 when a file cannot be read or the hypotheses have no line;
 * RS_TESTSET_REFUSED for hypotheses in the Moses n-best form and for a
 * reference with another number of lines. text[] is the caller's to free. */
int rs_testset_read(rs_lines *text, const char *const *files, int nfiles, const char *hyp_name,
                    rs_error *err);

/* A paired test's other systems: sys[k] read from files[k] for k < count,
 * refused as hypotheses are, and when one has another number of lines than
 * base (the baseline, named base_name). */
int rs_testset_read_systems(rs_lines *sys, const char *const *files, int count,
                            const rs_lines *base, const char *base_name, rs_error *err);

/* --by-length's source sentences from path, refused when they are not one
 * line per hypothesis (hyp, named hyp_name); refused, src holds nothing. */
int rs_testset_read_source(rs_lines *src, const char *path, const rs_lines *hyp,
                           const char *hyp_name, rs_error *err);

/* A paired test as `bleu --paired-bs` / `--paired-ar` asks for it. */
typedef struct {
    rs_paired_test test;
    int samples; /* resamples or trials */
    uint64_t seed;
    int chrf; /* the test's metric: chrF, else BLEU */
} rs_testset_test;

/* Runs the test on the systems of in (each system's sentence statistics,
 * then rs_paired_metric_run) into res[in->others + 1]. */
int rs_testset_paired(rs_paired_result *res, const rs_testset_systems *in,
                      const rs_testset_test *test, const rs_bleu_opts *opts, const char **refs,
                      rs_error *err);

#endif
