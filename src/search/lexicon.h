/* A lexical table p(t | s) between the model's source and target tokens, and
 * the shortlist it gives a batch (Marian's --shortlist): the output layer is
 * computed only for the words likely in the batch's translations, instead of
 * all V.
 *
 * The table is learned from the parallel corpus, in the model's own
 * tokenization, by IBM Model 1 (Brown et al. 1993): with a NULL source word
 * s_0 beside the sentence's s_1..s_S, each EM iteration adds, for every
 * target token t of every pair,
 *
 *   c(t | s_i) += p(t | s_i) / Σ_k p(t | s_k)      (k = 0..S)
 *
 * and then sets p(t | s) = c(t | s) / Σ_t' c(t' | s). It starts uniform, so
 * the first iteration is co-occurrence counting. Only pairs (s, t) that occur
 * together in some sentence pair are stored (sparse rows, one per source id).
 *
 * A batch's shortlist is the union of the reserved ids (<pad> <unk> <s> </s>,
 * always ids 0..3, so a search's rules for them stay as they are), the
 * `first` lowest target ids (the vocabulary lists the most frequent tokens
 * first, as Marian's does), and the `best` most probable targets of each of
 * the batch's source tokens, in ascending id order. */
#ifndef RS_LEXICON_H
#define RS_LEXICON_H

#include <stdio.h>

#include "common/error.h"
#include "data/dataset.h"
#include "model/vocab.h"

typedef struct {
    int src_vocab, tgt_vocab;
    int *start;  /* [src_vocab + 1] source s's entries are [start[s], start[s+1]) */
    int *tgt;    /* [entries] target ids, each source's most probable first */
    float *prob; /* [entries] p(t | s) */
} rs_lexicon;

/* Learns the table from data (ids in vocabularies of Vs and Vt tokens) by
 * `iterations` rounds of EM, keeping each source token's `keep` most
 * probable targets with p ≥ min_prob and p > 0 (what rs_lexicon_read
 * accepts: an entry whose p underflowed to 0 is left out). */
int rs_lexicon_learn(rs_lexicon *lex, const rs_dataset *data, int Vs, int Vt, int iterations,
                     int keep, float min_prob, rs_error *err);

/* Writes one line per entry, "source token TAB target token TAB p(t|s)",
 * each source's in order; *errnum gets errno on a write error. */
void rs_lexicon_write(const rs_lexicon *lex, const rs_vocab *src, const rs_vocab *tgt, FILE *out,
                      int *errnum);

/* Reads such a file against the model's vocabularies: a token either
 * vocabulary lacks, a malformed line or a probability outside (0, 1] fails,
 * naming the file and line. */
int rs_lexicon_read(rs_lexicon *lex, const char *path, const rs_vocab *src, const rs_vocab *tgt,
                    rs_error *err);

void rs_lexicon_free(rs_lexicon *lex);

/* How a batch's shortlist is made (see above); lex NULL: no shortlist. */
typedef struct {
    const rs_lexicon *lex;
    int first, best;
} rs_shortlist;

/* A shortlist as Marian's --shortlist gives it, FILE[,FIRST[,BEST]] (FIRST
 * and BEST 100 when not given, whole numbers up to 10000000, not both 0:
 * every translation would be empty): FILE into path[size], the sizes into
 * sl (its lex left to the caller). */
int rs_shortlist_parse(const char *arg, char *path, size_t size, rs_shortlist *sl, rs_error *err);

/* The shortlist of B source sentences src[b][0..src_count[b]) into
 * ids[0..return value), ascending. mark [tgt_vocab] is scratch, all 0 on
 * entry and on return; ids has room for tgt_vocab. */
int rs_shortlist_select(const rs_shortlist *sl, int B, const int *const *src, const int *src_count,
                        unsigned char *mark, int *ids);

#endif
