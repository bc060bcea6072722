/* Training text that was segmented into subwords before rnnsearch saw it
 * (train/segmented.c): subword-nmt's "hou@@ se", SentencePiece's
 * "▁hou se", OpenNMT's joiners "Hello ￭,". Such text wants --tokenizer
 * space (the word tokenizer would cut "fin@@" into "fin ￭@￭ ￭@") and a
 * post-processing that joins the pieces for dev BLEU and translate. */
#ifndef RS_SEGMENTED_H
#define RS_SEGMENTED_H

#include "common/error.h"
#include "model/config.h"

/* A side "looks segmented" when at least this share of its lines carries
 * the kind's mark: far above what natural text has (a "@@ " or a "▁" in
 * one line in ten), far below what segmented text has (most lines of more
 * than a few words hold a split word). */
#define RS_SEGMENTED_SHARE 0.10

typedef struct {
    int kind;     /* RS_POST_BPE, _SPM or _JOINER; RS_POST_NONE: not segmented */
    double share; /* of the lines with the kind's mark */
} rs_segmentation;

/* What lines[0..count) look like: the kind whose mark most lines carry, if
 * at least RS_SEGMENTED_SHARE of them do. Marks: "@@ " inside a line or "@@"
 * at its end (BPE), "▁" U+2581 (SentencePiece), "￭" U+FFED (joiner). */
rs_segmentation rs_detect_segmentation(char *const *lines, int count);

/* How the kind is named to a person ("BPE") and its mark ("'@@ '"). */
const char *rs_segmentation_name(int kind);
const char *rs_segmentation_mark(int kind);

/* What a run on such text must be given: "--tokenizer space --remove-bpe". */
const char *rs_segmentation_advice(int kind);

#endif
