/* The alignments `rnnsearch align` shows, sentence by sentence: of each
 * line's translation (greedy, or the best of a beam, through the translation
 * pipeline) or of given pairs (forced decoding), SentencePiece pieces merged
 * into words or BPE units joined on request, each handed to a sink that
 * writes it (in one of alignment.h's formats). */
#ifndef RS_ALIGN_SENTENCES_H
#define RS_ALIGN_SENTENCES_H

#include <stdio.h>

#include "data/dataset.h"
#include "eval/alignment.h"
#include "search/pairs_input.h"
#include "search/translate.h"

typedef struct {
    int words;       /* pieces merged into words (rs_alignment_to_words) */
    const char *bpe; /* BPE units joined at this marker (rs_alignment_join_bpe), or NULL */
    /* Writes one sentence's alignment; id is its 1-based line number. */
    int (*sink)(void *ctx, const rs_alignment *a, int id, rs_error *err);
    void *ctx;
    FILE *warn;       /* "PROG: line N: source cut …" for each source cut, or NULL */
    const char *prog; /* PROG in warnings */
} rs_align_emitter;

/* One sentence: its labels (without </s>) and w, [(tgt_count + 1) ×
 * (src_count + 1)], as an alignment, merged as em asks, to em's sink. */
int rs_align_emit(const rs_align_emitter *em, const char *const *tgt, int tgt_count,
                  const char *const *src, int src_count, const float *w, int id, rs_error *err);

/* Every line translated with opt (want_alignment set by the caller), a batch
 * at a time; an empty line has no alignment and is skipped. */
int rs_align_translations(const rs_ready *model, const rs_codec *codec, const rs_lines *lines,
                          const rs_translate_options *opt, const rs_align_emitter *em,
                          rs_error *err);

/* Every pair of tok force-decoded, batch_size pairs at a time; ids count
 * from tok->first + 1 (a chunk of a file). */
int rs_align_pairs(const rs_ready *model, const rs_tokenized *tok, int batch_size,
                   const rs_align_emitter *em, rs_error *err);

/* align's input: the lines of a file to translate, or (pairs) its
 * source<TAB>target pairs tokenized for forced decoding with their sources
 * cut as ids says (the model's codec and length rule), a chunk of
 * RS_ALIGN_CHUNK pairs at a time (the alignments of a large file are not
 * all held before the first is written) or all of them (a picture per
 * sentence: all their names are checked before the first is written). */
enum { RS_ALIGN_CHUNK = 4096 };
typedef struct {
    const char *path;     /* "-": standard input */
    const rs_ready *used; /* what translates or force-decodes them */
    rs_pairs_ids ids;
    rs_lines lines;
    rs_pair_reader reader;
    int reader_open, chunk;
    rs_pairs pairs;
    rs_tokenized tok;
    int count; /* sentences (with pairs, of the chunk read) */
} rs_align_input;

/* Reads the lines, or opens the pairs (swap: exchanging the sides) and
 * reads the first chunk (all of them with whole); in->count says how many.
 * used (ids's model readied) decodes them. An empty input is zero
 * sentences or pairs, said to ids->warn (rs_note_empty: "nothing aligned"). */
int rs_align_input_open(rs_align_input *in, const char *path, int pairs, int swap, int whole,
                        const rs_ready *used, const rs_pairs_ids *ids, rs_error *err);

/* Every sentence of the input to em: the lines translated with opt, or the
 * pairs force-decoded opt->batch_size at a time, chunk after chunk. */
int rs_align_input_run(rs_align_input *in, const rs_translate_options *opt,
                       const rs_align_emitter *em, rs_error *err);

void rs_align_input_free(rs_align_input *in);

#endif
