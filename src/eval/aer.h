/* Alignment error rate (Och & Ney 2003, "A systematic comparison of various
 * statistical alignment models", §5): hypothesis links A against gold sure
 * links S and possible links P, S ⊆ P,
 *
 *   precision = |A ∩ P| / |A|,   recall = |A ∩ S| / |S|,
 *   AER = 1 − (|A ∩ S| + |A ∩ P|) / (|A| + |S|),
 *
 * the counts summed over a corpus before dividing. With every gold link sure
 * (S = P), recall is the share of gold links found, and when |A| = |S| (one
 * argmax link per target word against one gold link each) AER = 1 − recall.
 *
 * Gold and hypotheses are Pharaoh lines, source-target and 0-based: "i-j" a
 * sure link, "i?j" a possible one (hypotheses: every link is what the
 * aligner asserts, "-" or "?" alike). */
#ifndef RS_AER_H
#define RS_AER_H

#include "common/error.h"
#include "eval/alignment.h"

typedef struct {
    int count;      /* links */
    rs_link *links; /* [count], sorted by (tgt, src), no duplicates */
    char *sure;     /* [count] 1: sure, 0: possible */
} rs_gold_links;

/* Parses one Pharaoh line ("" and blanks: no links). A link that is not
 * two indices joined by '-' or '?' fails, its text and position in the line
 * in the message. A link given twice counts once (sure if either is sure). */
int rs_gold_links_parse(const char *line, rs_gold_links *out, rs_error *err);
void rs_gold_links_free(rs_gold_links *g);

typedef struct {
    long hyp, sure, possible;    /* |A|, |S|, |P| (sure links included) */
    long hyp_sure, hyp_possible; /* |A ∩ S|, |A ∩ P| */
    int sentences;
} rs_aer_counts;

/* Adds one sentence: hypothesis links against gold (duplicates in hyp count once). */
int rs_aer_add(rs_aer_counts *c, const rs_link *hyp, int n_hyp, const rs_gold_links *gold,
               rs_error *err);

typedef struct {
    double aer, precision, recall; /* fractions; NAN when the denominator is 0 */
} rs_aer_result;

void rs_aer_compute(const rs_aer_counts *c, rs_aer_result *r);

/* The counts of two Pharaoh files, a line of links per sentence in both:
 * gold (sure "i-j", possible "i?j") and the hypothesis (every link sure).
 * Errors name the file and line; files of different lengths, or a gold file
 * with no sure link (nothing to measure recall and AER on), fail. */
int rs_aer_files(const char *gold_path, const char *hyp_path, rs_aer_counts *counts, rs_error *err);

#endif
