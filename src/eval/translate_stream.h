/* Translating a stream of lines as `translate` prints them: the input read in
 * chunks (a chunk takes lines only while the reader has them ready, so a line
 * typed or piped in is translated at once), each translation printed as one
 * line (with the alignment appended in Marian's form on request), or as n-best
 * lines in the Moses/Marian format "id ||| translation ||| F0= logprob |||
 * score" (id from 0), and the best ones scored against references (BLEU,
 * chrF) when given. */
#ifndef RS_TRANSLATE_STREAM_H
#define RS_TRANSLATE_STREAM_H

#include <stdio.h>

#include "common/error.h"
#include "eval/bleu.h"
#include "eval/chrf.h"
#include "search/translate.h"
#include "text/corpus.h"

/* How each translation is printed. */
typedef struct {
    int alignment;         /* 0 none, 1 hard, 2 soft */
    float align_threshold; /* hard: 0 = argmax, else links of weight >= it */
    int nbest_format;      /* every hypothesis as an n-best line */
} rs_stream_style;

/* An --alignment value, as Marian's: hard, soft or a threshold in (0, 1]
 * (hard links of weight >= it), into st; 0 when arg is none of them. */
int rs_stream_alignment(const char *arg, rs_stream_style *st);

typedef struct {
    rs_stream_style style;
    FILE *out; /* the translations */
    /* Called after each chunk is printed, so that it reaches a pipe's reader
     * at once and a failed write ends the run there; NULL: fflush only. */
    int (*flush)(void *ctx, rs_error *err);
    void *flush_ctx;
    FILE *warn;           /* "PROG: FILE:LINE: source cut …" for each source cut */
    const char *prog;     /* PROG in warnings */
    const char *ref_path; /* references to score against, or NULL */
    const rs_lines *refs; /* their lines, read by the caller */
    rs_bleu_stats bleu;   /* against refs, summed as lines are translated */
    rs_chrf_stats chrf;
    long line_no, tokens_out; /* lines translated, and tokens in their best hypotheses */
} rs_translate_stream;

/* Statistics empty, nothing counted (the caller fills in the rest). */
void rs_translate_stream_init(rs_translate_stream *s);

/* Translates and prints every line of reader, chunks of 16 batches at most. */
int rs_translate_stream_run(rs_translate_stream *s, rs_translator *tr, rs_line_reader *reader,
                            int batch_size, rs_error *err);

/* The references have a line for each input line (check before the output is
 * kept). */
int rs_translate_stream_check_refs(const rs_translate_stream *s, rs_error *err);

/* The BLEU and chrF lines against the references, each ending in '\n'. */
void rs_translate_stream_scores(const rs_translate_stream *s, FILE *f);

#endif
