/* The one translation pipeline of rnnsearch: a line of text → source tokens →
 * ids → greedy or beam search, over one model or an ensemble → target tokens
 * (<unk> replaced on request) → text, with the alignment matrix on request.
 * `translate`, `align`, training's dev BLEU and `serve` all call it, so they
 * give the same output for the same input and model.
 *
 * The length rule, the same everywhere:
 *   - a source of more than max_src_len tokens is cut to its first max_src_len
 *     (the result says so: `truncated`), so time and memory stay bounded;
 *   - an output has at most max_len tokens before </s>, or, when max_len is 0,
 *     2·k + 10 for a source of k tokens (after cutting), sentence by sentence,
 *     so a sentence's translation does not depend on the batch it is in.
 * An empty (or all-blank) line translates to an empty line without decoding.
 *
 * An ensemble averages the members' log-probabilities at each step (and their
 * alignments, for the alignment it reports), weighted by opt.weights when given; members must share the target
 * vocabulary and the text settings (checked by rs_translator_init). */
#ifndef RS_TRANSLATE_H
#define RS_TRANSLATE_H

#include "model/codec.h"
#include "model/model.h"
#include "search/decode.h"

#define RS_MAX_SRC_LEN 250 /* default source-length limit, in tokens */

/* The bounds of the translation options, one set for the command line
 * (cli/cli.c's option tables) and the library (api/): within them every size
 * the search computes fits (batch · beam rows ≤ 10^8 < INT_MAX). */
#define RS_MAX_BEAM 1000            /* --beam and --n-best */
#define RS_MAX_BATCH 100000         /* --batch-size */
#define RS_MAX_LENGTH 100000        /* --max-len and --max-src-len, in tokens */
#define RS_MAX_LENGTH_PENALTY 100.0 /* |--length-penalty| */

typedef struct {
    int beam;               /* K hypotheses; 1 is greedy search */
    int n_best;             /* hypotheses returned per sentence (1 ≤ n_best ≤ beam) */
    float length_penalty;   /* beam: rank by log p / (tokens + 1)^α */
    int max_len;            /* output tokens at most; 0: 2·source + 10 */
    int max_src_len;        /* source tokens at most; 0: RS_MAX_SRC_LEN */
    int batch_size;         /* sentences decoded together */
    int want_alignment;     /* keep each hypothesis's alignment matrix */
    int replace_unk;        /* <unk> → the source token it attends to most */
    const char *remove_bpe; /* NULL, or the BPE marker the text drops (rs_remove_bpe);
                               tokens keep it */
    const float *weights;   /* NULL (the plain mean), or one weight per ensemble member
                               (rs_decoder_weigh); not owned, kept for the translator's life */
    int post_process;       /* RS_POST_* applied to the text (before remove_bpe); -1: the
                               codec's, the model's post_process */
    rs_shortlist shortlist; /* lex NULL: every word (exact); else each batch's lexical
                               shortlist (lexicon.h); the table not owned, kept as weights */
    int skip_scores;        /* greedy with one model: no log-probabilities (hypotheses'
                               logprob and score stay 0), only the words; the softmax's
                               normaliser over V is then not computed at all */
    int workers;            /* a call's batches decoded side by side by this many threads
                               (the caller's among them), each product on one BLAS thread;
                               a call of one batch decodes on the caller's thread, BLAS's
                               threads as set. 0 is 1. Each batch is decoded alone, so a
                               sentence's result does not depend on it */
} rs_translate_options;

void rs_translate_options_default(rs_translate_options *opt);

typedef struct {
    int source_count;     /* source tokens as translated (after cutting) */
    char **source_tokens; /* [source_count] */
    int truncated;        /* source tokens cut off by the length limit (0: none) */
    int count;            /* hypotheses, best first (0 only for an empty line: then
                             hyps[0] is still there, empty) */
    rs_hypothesis *hyps;  /* [max(count, 1)], with tokens and text; the alignment's
                             columns are source_count + 1 (with want_alignment) */
} rs_translated;

void rs_translated_free(rs_translated *t);

/* A source sentence as ids, for callers that tokenized it already
 * (training's dev set): ids without </s>. */
typedef struct {
    const int *ids;
    int len;
} rs_source;

typedef struct rs_search rs_search; /* decoding workspaces, grown on demand */

typedef struct {
    const rs_ready *const *models; /* [n_models], not owned; models[0] gives the vocabularies */
    int n_models;
    const rs_codec *codec; /* text settings of models[0], not owned */
    rs_translate_options opt;
    rs_search *searches; /* [opt.workers]: one per worker, each reserved by its batches */
    /* After a failed call: 1 when a batch's workspace could not be had (the
     * message says how much it takes), so a caller can name its own batch
     * size option; 0 otherwise. */
    int batch_too_large;
} rs_translator;

int rs_translator_init(rs_translator *tr, const rs_ready *const *models, int n_models,
                       const rs_codec *codec, const rs_translate_options *opt, rs_error *err);
void rs_translator_free(rs_translator *tr);

/* Translates count lines of raw text into out[count] (free each with
 * rs_translated_free), batch_size sentences at a time, up to opt.workers
 * batches at once. A line that cannot be tokenized fails the call, its index
 * (0-based) named in the message; so does a batch that cannot be decoded
 * (the first to fail, when several run at once). */
int rs_translate_lines(rs_translator *tr, int count, const char *const *lines, rs_translated *out,
                       rs_error *err);

/* The same from ids (src_tokens then hold the source vocabulary's strings). */
int rs_translate_sources(rs_translator *tr, int count, const rs_source *sources, rs_translated *out,
                         rs_error *err);

#endif
