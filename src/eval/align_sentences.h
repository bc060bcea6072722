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

#endif
