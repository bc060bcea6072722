/* Alignment matrices (the attention weights α of Bahdanau et al. 2014, §3.1)
 * as text, data and pictures: forced-decoding alignments of given pairs,
 * subword-to-word merging, hard alignments, and the writers behind
 * `rnnsearch align` and `rnnsearch translate --alignment`.
 *
 * A matrix has one row per target token then </s> and one column per source
 * token then </s>; row i is the distribution α_i· over the source positions
 * that the decoder used to emit target token i, so every row sums to 1.
 * Memory order: row-major, w[i·cols + j] = α_ij.
 *
 * The writers return 0, or -1 when the stream has an error (ferror); the
 * caller names the stream in its message. Formats are in docs/alignment.md. */
#ifndef RS_ALIGNMENT_H
#define RS_ALIGNMENT_H

#include <stdio.h>

#include "data/dataset.h"
#include "model/model.h"

typedef struct {
    int rows, cols; /* target tokens + 1, source tokens + 1 (the last is </s>) */
    char **tgt;     /* [rows] row labels, owned */
    char **src;     /* [cols] column labels, owned */
    float *w;       /* [rows × cols] */
} rs_alignment;

/* Coverage (Tu et al. 2016, "Modeling Coverage for NMT"): how much
 * attention source position j received over the whole output, Σ_i α_ij,
 * into cov[a->cols]. Every row sums to 1, so the coverages sum to the rows;
 * a word attended about once has about 1. */
void rs_alignment_coverage(const rs_alignment *a, double *cov);

/* The marks of every alignment view: below RS_COVERAGE_LOW a word was barely
 * attended (a sign of under-translation), above RS_COVERAGE_HIGH attended
 * past twice (of over-translation); -1, 1, else 0. */
#define RS_COVERAGE_LOW 0.2
#define RS_COVERAGE_HIGH 2.0
int rs_coverage_mark(double coverage);

/* The mark of column j in a view: rs_coverage_mark of its coverage, but
 * never for the last column, </s>, which the decoder attends at every step
 * where nothing is left to translate: its sum says nothing of coverage. */
int rs_alignment_coverage_mark(const rs_alignment *a, const double *cov, int j);

/* Copies labels (without the </s>, which is appended) and weights into a. */
int rs_alignment_make(rs_alignment *a, const char *const *tgt, int tgt_count,
                      const char *const *src, int src_count, const float *w, rs_error *err);
void rs_alignment_free(rs_alignment *a);
/* Frees labels[0..count) and the array (NULL: nothing to free); for the
 * formats' display labels too. */
void rs_alignment_free_labels(char **labels, int count);

/* SentencePiece pieces to words: a piece starting with "▁" (U+2581) starts a
 * word, any other piece continues the previous one; </s> stays on its own.
 * A word's row is the mean of its pieces' rows and a word's column the sum
 * of its pieces' columns, so rows still sum to 1 (the convention of Clark et
 * al. 2019, "What does BERT look at?"). Labels are the pieces joined, less
 * the leading "▁". *out is a new alignment. */
int rs_alignment_to_words(const rs_alignment *in, rs_alignment *out, rs_error *err);

/* The same for BPE units (subword-nmt's "hou@@ se"): a token ending with
 * marker (its trailing spaces dropped: "@@ " marks tokens with "@@")
 * continues into the next one; labels are the units joined, less the marks. */
int rs_alignment_join_bpe(const rs_alignment *in, const char *marker, rs_alignment *out,
                          rs_error *err);

/* Hard alignment links (source index, target index), </s> row and column
 * excluded, in target order then source order. threshold <= 0: for each
 * target token the source token of largest weight (none when that is </s>);
 * otherwise every pair with weight >= threshold. *links is malloc'd (NULL
 * when *count is 0). */
typedef struct {
    int src, tgt;
} rs_link;

int rs_alignment_hard(const float *w, int rows, int cols, float threshold, rs_link **links,
                      int *count, rs_error *err);

/* The Marian-style suffix of `translate --alignment`, appended to the
 * malloc'd string *line: " ||| i-j i-j …" (hard, as rs_alignment_hard) or,
 * when soft, " ||| " and each row's weights comma-separated, rows separated
 * by spaces (</s> row and column included). */
int rs_alignment_append_marian(char **line, const float *w, int rows, int cols, int soft,
                               float threshold, rs_error *err);

enum {
    RS_ALIGN_COLOR = 1,     /* text: 256-colour grey backgrounds instead of blocks */
    RS_ALIGN_NUMBERS = 2,   /* text, html: the weights printed in the cells */
    RS_ALIGN_THRESHOLD = 4, /* pharaoh: links of weight >= a threshold */
};

/* A heatmap for a terminal: source tokens as vertical column heads, target
 * tokens as row labels, each cell shaded with Unicode blocks (or a grey
 * background with RS_ALIGN_COLOR), or its weight with RS_ALIGN_NUMBERS. */
int rs_alignment_write_text(FILE *out, const rs_alignment *a, int flags);

/* The data formats count from 0, sentences as tokens: a sentence's index is
 * the id that translate's n-best lists (as Moses and Marian) and serve give
 * it; pictures, meant for people, number sentences from 1 as line numbers.
 *
 * Long-format TSV, one line per cell: sentence (0-based index), tgt_index,
 * tgt_token, src_index, src_token, weight (tokens with \\, \t, \n escaped).
 * The header line is written once, by rs_alignment_write_tsv_header. */
int rs_alignment_write_tsv_header(FILE *out);
int rs_alignment_write_tsv(FILE *out, const rs_alignment *a, int index);

/* One JSON Lines record: {"id":…,"source":[…],"target":[…],"alignment":[[…],…]}
 * with the 0-based index as id (labels include </s>; weights with 9
 * significant digits, exact for float). */
int rs_alignment_write_json(FILE *out, const rs_alignment *a, int index);

/* One line of Pharaoh links "i-j …" (source-target, 0-based), as rs_alignment_hard. */
int rs_alignment_write_pharaoh(FILE *out, const rs_alignment *a, float threshold);

/* A standalone SVG picture in the style of Bahdanau et al. (2014), figure 3:
 * a grey-scale matrix (white = 1, black = 0), source tokens along the top
 * (rotated), target tokens down the left side; each cell has a <title> with
 * its weight (shown on hover by browsers). */
int rs_alignment_write_svg(FILE *out, const rs_alignment *a, const char *title);

/* One self-contained HTML page: rs_alignment_html_begin, one
 * rs_alignment_write_html per sentence, rs_alignment_html_end. Inline CSS and
 * a small inline script (the weight under the pointer is shown in a bar and
 * in each cell's title), nothing fetched from a network. */
int rs_alignment_html_begin(FILE *out, const char *title);
int rs_alignment_write_html(FILE *out, const rs_alignment *a, int id, int flags);
int rs_alignment_html_end(FILE *out);

/* The output formats, one entry each: a new format is one writer and one
 * line in rs_align_writers. begin and end (NULL: none) frame a stream of
 * sentences; write emits one sentence (id: its 1-based line number; the
 * data formats write id - 1, see above). */
typedef struct {
    int flags;         /* RS_ALIGN_COLOR, RS_ALIGN_NUMBERS */
    float threshold;   /* pharaoh: 0 = argmax links */
    const char *title; /* svg, html; NULL: "alignment" */
} rs_align_style;

typedef struct {
    const char *name;
    int (*begin)(FILE *out, const rs_align_style *style);
    int (*write)(FILE *out, const rs_alignment *a, int id, const rs_align_style *style);
    int (*end)(FILE *out, const rs_align_style *style);
    int options;           /* the RS_ALIGN_* style options this format uses */
    int file_per_sentence; /* a standalone document per sentence (svg) */
} rs_align_writer;

extern const rs_align_writer rs_align_writers[]; /* ends with a NULL name */

/* The writer named name, or NULL. */
const rs_align_writer *rs_align_writer_find(const char *name);

#endif
