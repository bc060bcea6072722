/* Where `align` writes alignments: in one of eval/alignment.h's formats to
 * standard output or a file, or (a format of one document per sentence,
 * SVG) one picture per sentence into a directory; every file under the
 * output rule of train/output.h, written whole or not at all. */
#ifndef RS_ALIGN_OUTPUT_H
#define RS_ALIGN_OUTPUT_H

#include <stdio.h>

#include "eval/alignment.h"
#include "train/output.h"

/* What rs_align_output_open refuses, besides failing (-1): an output that
 * cannot hold what is asked (err says why; align exits 2). */
#define RS_ALIGN_OUTPUT_REFUSED 2

typedef struct {
    const rs_align_writer *writer;
    rs_align_style style;
    const char *out_path; /* -o PATH, or NULL: standard output */
    rs_output_rule rule;  /* what -o (or each picture in its directory) may be */
    int svg_dir;          /* one picture per sentence into the directory out_path */
    rs_output output;     /* -o FILE or standard output (not an SVG directory) */
    FILE *out;            /* output.f */
    int written;          /* alignments written */
} rs_align_output;

/* Whether text output is coloured: when 0 (auto), 1 (always) or 2
 * (never); auto: when writing to standard output that is a terminal,
 * NO_COLOR is unset and TERM (or COLORTERM) advertises 256 colours. */
int rs_align_output_color(int when, int to_stdout);

/* Opens where `count` alignments go and writes the format's beginning: for
 * one picture per sentence, a directory unless out_path is one FILE.svg of
 * one sentence (every picture's name checked by the rule before the first
 * is written); refused (RS_ALIGN_OUTPUT_REFUSED) when the sentences do not
 * fit the output. */
int rs_align_output_open(rs_align_output *o, int count, rs_error *err);

/* An emitter's sink (eval/align_sentences.h; ctx: the rs_align_output):
 * one sentence's alignment (id: its 1-based line number) written by the
 * format's writer, to the output or as picture DIR/NNNN.svg. */
int rs_align_output_write(void *ctx, const rs_alignment *a, int id, rs_error *err);

/* Ends the output: the writer's closing, then the file renamed into place
 * (an SVG directory's pictures are each complete already). */
int rs_align_output_close(rs_align_output *o, rs_error *err);

#endif
