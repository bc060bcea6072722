/* Pairs given to a model (score, lexicon, align --pairs): read from one TSV
 * file or from line-aligned source and target files, tokenized by the
 * model's codec, sources longer than the translation pipeline takes cut to
 * its length (a warning naming each pair cut), and made ids in its
 * vocabularies. */
#ifndef RS_PAIRS_INPUT_H
#define RS_PAIRS_INPUT_H

#include <stdio.h>

#include "data/dataset.h"
#include "model/codec.h"
#include "model/model.h"
#include "text/corpus.h"

/* Where the pairs come from: --src F --tgt F, else the TSV file tsv ("-":
 * standard input); swap exchanges the sides. */
typedef struct {
    const char *tsv, *src, *tgt;
    int swap;
} rs_pairs_input;

/* The pairs' name in messages: the TSV file ("<stdin>" for "-") or the
 * source file. */
const char *rs_pairs_input_name(const rs_pairs_input *in);

/* The pairs read as they come (text/corpus.h's pair reader; empty_target:
 * a target may be empty, as score takes one). */
int rs_pairs_input_open(const rs_pairs_input *in, int empty_target, rs_pair_reader *r,
                        rs_error *err);

/* What the pairs become ids for. */
typedef struct {
    const rs_model *model;
    const rs_codec *codec;
    int max_src_len;
    FILE *warn;       /* "PROG: FILE: pair N: source cut …" for each source cut, or NULL */
    const char *prog; /* PROG in warnings */
} rs_pairs_ids;

/* rs_cut_sources (search/forced.h) with a warning for each pair cut; name
 * is the file ("-": "<stdin>"). */
int rs_pairs_cut_sources(rs_tokenized *tok, const char *name, const rs_pairs_ids *ids,
                         rs_error *err);

/* pairs (read from in) as ids: tokenized, cut, in the model's vocabularies. */
int rs_pairs_input_dataset(const rs_pairs_input *in, const rs_pairs *pairs, const rs_pairs_ids *ids,
                           rs_dataset *data, rs_error *err);

/* The whole input read and made a dataset as rs_pairs_input_dataset makes it. */
int rs_pairs_input_read(const rs_pairs_input *in, const rs_pairs_ids *ids, rs_dataset *data,
                        rs_error *err);

#endif
