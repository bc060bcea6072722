/* Whether a line to be scored is a Moses n-best line rather than a
 * translation: `translate --n-best` (and Marian, Moses, fairseq's converted
 * lists) write "N ||| text ||| features ||| score", and scoring such a file
 * as plain text counts the id, the bars and the feature values as words, a
 * score that looks plausible and is wrong. */
#ifndef RS_NBEST_H
#define RS_NBEST_H

#include "common/error.h"

/* 1 when line has the Moses n-best shape: at least four fields separated by
 * "|||", the first a non-negative integer and the fourth a number (spaces
 * around each allowed), else 0. */
int rs_nbest_line(const char *line);

/* 1 when line is a translation with its alignment as `translate
 * --alignment` writes it (Marian's form): "text ||| links", one "|||", the
 * links "i-j" or soft rows of comma-separated weights (or none), else 0. */
int rs_alignment_line(const char *line);

/* Checks lines[0..count) of the hypotheses `name`: 0, or -1 with err
 * "NAME:LINE: ..." for the first n-best line or line with an alignment,
 * saying what to score instead. */
int rs_nbest_refuse(const char *const *lines, int count, const char *name, rs_error *err);

#endif
