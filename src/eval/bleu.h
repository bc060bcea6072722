/* Corpus BLEU (and, in chrf.h, chrF), computed as sacreBLEU 2.x computes its
 * defaults, so that a score printed here can be compared with a published one.
 *
 * BLEU (sacreBLEU `BLEU()`): Python's str.lower() if asked, trailing
 * whitespace removed, the mteval-v13a tokenizer (or none), word n-grams of
 * orders 1-4 clipped by the largest count in any one reference, the brevity
 * penalty against the closest reference length (ties go to the shorter one),
 * "exp" smoothing, score = BP * exp(mean log p_n) on the 0-100 scale.
 *
 * chrF: chrf.h.
 *
 * Common to both (sacreBLEU's reference handling): a reference that is the
 * empty string is skipped, as sacreBLEU skips '' to allow a variable number of
 * references; a segment with no non-empty reference is an error. Text must be
 * valid UTF-8; "characters" are Unicode code points and "whitespace" is what
 * Python's str.split() splits on.
 *
 * The statistics are plain sums, so stats from several calls or threads can be
 * added field by field; nothing needs freeing. */
#ifndef RS_BLEU_H
#define RS_BLEU_H

#include <stddef.h>

#include "common/error.h"

#define RS_BLEU_ORDER 4

typedef enum {
    RS_BLEU_TOK_13A = 0,  /* sacreBLEU's default, "13a" */
    RS_BLEU_TOK_NONE = 1, /* split on whitespace only, "none" */
    RS_BLEU_TOK_INTL = 2, /* mteval-v14's international tokenization, "intl": punctuation
                             split off unless between digits, symbols always (Unicode
                             categories P, S and N) */
    RS_BLEU_TOK_CHAR = 3  /* every character but whitespace a token, "char" */
} rs_bleu_tokenizer;

/* Zero-initialised options are sacreBLEU's defaults; NULL means the same. */
typedef struct {
    int lowercase;              /* sacreBLEU -lc / --chrf-lowercase */
    rs_bleu_tokenizer tokenize; /* BLEU only */
} rs_bleu_opts;

typedef struct {
    long long correct[RS_BLEU_ORDER]; /* clipped n-gram matches */
    long long total[RS_BLEU_ORDER];   /* hypothesis n-grams */
    long long hyp_len, ref_len;       /* tokens; ref_len sums the closest lengths */
    long long segments;
} rs_bleu_stats;

typedef struct {
    double score;                     /* 0..100 */
    double precisions[RS_BLEU_ORDER]; /* percent, smoothed as sacreBLEU prints them */
    double bp;                        /* brevity penalty */
    double ratio;                     /* hyp_len / ref_len, 0 when ref_len is 0 */
    long long hyp_len, ref_len;
    long long correct[RS_BLEU_ORDER], total[RS_BLEU_ORDER];
} rs_bleu_result;

void rs_bleu_stats_init(rs_bleu_stats *stats);

/* Adds one segment: hypothesis `hyp` against `nrefs` >= 1 references. */
int rs_bleu_stats_add(rs_bleu_stats *stats, const char *hyp, const char *const *refs, int nrefs,
                      const rs_bleu_opts *opts, rs_error *err);

void rs_bleu_compute(const rs_bleu_stats *stats, rs_bleu_result *result);

/* With effective_order set, the geometric mean runs over the orders that have
 * hypothesis n-grams only (sacreBLEU's effective_order=True, the default of
 * its sentence_bleu): a three-word sentence is not scored 0 for having no
 * 4-grams. rs_bleu_compute is effective_order = 0, sacreBLEU's corpus default. */
void rs_bleu_compute_order(const rs_bleu_stats *stats, int effective_order, rs_bleu_result *result);

/* The settings in sacreBLEU 2.x's signature form, which papers quote:
 * "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:VERSION". sacreBLEU
 * puts its own release there; give the implementation's (rnnsearch's is
 * "rnnsearch-X.Y.Z"), since these are not sacreBLEU's numbers, only computed
 * as it computes them. Returns snprintf's count. */
int rs_bleu_signature(const rs_bleu_opts *opts, int nrefs, int effective_order, const char *version,
                      char *buf, size_t size);

/* The tokenizer's name in signatures and on the command line: "13a", "none",
 * "intl", "char". */
const char *rs_bleu_tokenizer_name(rs_bleu_tokenizer tokenize);

/* nrefs in a signature is sacreBLEU's: the number of non-empty references of
 * each segment when it is the same for all, else "var" (RS_NREFS_VAR). */
#define RS_NREFS_VAR 0

/* The non-empty references among refs[0..nrefs) of one segment. */
int rs_bleu_nonempty_refs(const char *const *refs, int nrefs);

/* "BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)",
 * sacreBLEU's text form without the signature. Returns snprintf's count. */
int rs_bleu_format(const rs_bleu_result *result, char *buf, size_t size);

/* The tokens BLEU counts for one line (lower-cased if asked, right-stripped,
 * tokenized), joined by single spaces, in a malloc'd string *out. */
int rs_bleu_tokenize_line(const char *line, const rs_bleu_opts *opts, char **out, rs_error *err);

/* Length of s without its trailing whitespace, as Python's str.rstrip()
 * (sacreBLEU's command line strips every line so before scoring). */
size_t rs_bleu_rstrip_len(const char *s);

#endif
