/* Telling pre-segmented training text (segmented.h). */
#include "train/segmented.h"

#include <string.h>

#include "text/text.h"

static int has_bpe_mark(const char *line)
{
    const size_t len = strlen(line);
    return strstr(line, RS_BPE_MARKER) || (len >= 2 && !strcmp(line + len - 2, "@@"));
}

rs_segmentation rs_detect_segmentation(char *const *lines, int count)
{
    int with[RS_POST_JOINER + 1] = {0};
    for (int i = 0; i < count; i++) {
        with[RS_POST_BPE] += has_bpe_mark(lines[i]) != 0;
        with[RS_POST_SPM] += strstr(lines[i], RS_SPACE) != NULL;
        with[RS_POST_JOINER] += strstr(lines[i], RS_JOINER) != NULL;
    }
    rs_segmentation seg = {RS_POST_NONE, 0.0};
    for (int kind = RS_POST_BPE; kind <= RS_POST_JOINER && count > 0; kind++) {
        const double share = (double)with[kind] / count;
        if (share >= RS_SEGMENTED_SHARE && share > seg.share)
            seg = (rs_segmentation){kind, share};
    }
    return seg;
}

const char *rs_segmentation_name(int kind)
{
    return kind == RS_POST_BPE ? "BPE" : kind == RS_POST_SPM ? "SentencePiece" : "joiners";
}

const char *rs_segmentation_mark(int kind)
{
    return kind == RS_POST_BPE   ? "'@@ '"
           : kind == RS_POST_SPM ? "'" RS_SPACE "'"
                                 : "'" RS_JOINER "'";
}

const char *rs_segmentation_advice(int kind)
{
    return kind == RS_POST_BPE   ? "--tokenizer space --remove-bpe"
           : kind == RS_POST_SPM ? "--tokenizer space --post-process sentencepiece"
                                 : "--tokenizer space --post-process joiner";
}
