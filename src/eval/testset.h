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

#endif
