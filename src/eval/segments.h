/* A segment as sacreBLEU counts it, for BLEU (bleu.c) and chrF (chrf.c):
 * Python's text rules on UTF-8 (str.lower, str.split's whitespace), the
 * mteval-v13a tokenizer, the units of a line (tokens joined by single spaces,
 * or code points without whitespace), and their n-grams as (pointer, length)
 * spans into that one buffer, sorted and counted in runs. */
#ifndef RS_SEGMENTS_H
#define RS_SEGMENTS_H

#include <stddef.h>

#include "common/error.h"
#include "eval/bleu.h"

typedef struct {
    char *text; /* tokens joined by single spaces, or characters without whitespace */
    int n;      /* tokens or code points */
    int *start; /* [n + 1] byte offsets; for tokens, start[i] + len[i] ends token i */
    int *len;   /* [n] token byte lengths (tokens only) */
} rs_units;

void rs_units_free(rs_units *u);

/* BLEU's preprocessing of line: lower-case if asked, rstrip, tokenize, split.
 * `what` names the line in errors ("the hypothesis", "reference 2"). */
int rs_bleu_units(rs_units *u, const char *line, const char *what, const rs_bleu_opts *opts,
                  rs_error *err);

/* chrF's: lower-case if asked, drop whitespace. */
int rs_chrf_units(rs_units *u, const char *line, const char *what, const rs_bleu_opts *opts,
                  rs_error *err);

typedef struct {
    const char *s;
    int len;
    int order; /* 1-based */
    int src;   /* 0 hypothesis, 1.. references */
} rs_span;

/* The number of n-grams of orders 1..max_order in u. */
size_t rs_spans_count(const rs_units *u, int max_order);

/* Appends them to out (room for rs_spans_count); `tokens` says whether the
 * units are tokens (an n-gram then spans n tokens and the spaces between). */
size_t rs_spans_add(rs_span *out, const rs_units *u, int max_order, int tokens, int src);

/* By order, length and bytes; rs_span_cmp (for qsort) then by source, so
 * that the spans of one n-gram are adjacent and each source's in a run. */
int rs_span_cmp_key(const rs_span *a, const rs_span *b);
int rs_span_cmp(const void *a, const void *b);

/* The checks at the start of every segment (a hypothesis, references, one
 * of them non-empty); returns the options to use (opts, or the defaults for
 * NULL), or NULL with err filled. */
const rs_bleu_opts *rs_segment_begin(const void *stats, const char *hyp, const char *const *refs,
                                     int nrefs, const rs_bleu_opts *opts, rs_error *err);

const rs_bleu_opts *rs_bleu_opts_or_default(const rs_bleu_opts *opts);

/* "reference I+1", for errors. */
const char *rs_segment_ref_name(char name[32], int i);

/* The number of words of s as Python's str.split() counts them (s UTF-8). */
int rs_word_count(const char *s, int *words, rs_error *err);

/* A signature's nrefs: "1", "2", … or "var" (RS_NREFS_VAR). */
const char *rs_nrefs_text(int nrefs, char buf[16]);

#endif
