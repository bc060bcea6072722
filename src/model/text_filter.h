/* The text pipeline of training and translation as a filter (`rnnsearch
 * tokenize`): each line of text as tokens (or as ids in a model's vocabulary,
 * </s> appended), or each line of tokens back to text, one output line per
 * input line; with a model's codec, its own settings, else the given ones. */
#ifndef RS_TEXT_FILTER_H
#define RS_TEXT_FILTER_H

#include <stdio.h>

#include "model/codec.h"
#include "text/corpus.h"

typedef struct {
    int detokenize;        /* tokens back to text */
    int side;              /* RS_SIDE_SRC or RS_SIDE_TGT: the codec's and vocabulary's side */
    int lowercase, mode;   /* without a model: text.h's settings (RS_TOK_*) */
    int ids;               /* ids in model's vocabulary instead of tokens */
    const rs_model *model; /* NULL: the settings above */
    const rs_codec *codec; /* model's codec (when model is not NULL) */
} rs_text_filter;

/* Every line of reader, to out. */
int rs_text_filter_run(const rs_text_filter *f, rs_line_reader *reader, FILE *out, rs_error *err);

#endif
