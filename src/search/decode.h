/* Step-by-step decoding over one model or an ensemble, and greedy search on
 * top of it. The decoder holds "rows": hypotheses being extended, each tied to
 * a source sentence. Greedy search has one row per sentence, beam search
 * (beam.h) K; rows whose sentence is finished leave the batch.
 *
 * Shapes: rows ≤ max_rows, S the longest source of the batch (with </s>),
 * n hidden, ka key size, V target vocabulary. The source side stays where the
 * encoder wrote it (keys [S,B,ka], annotations [S,B,2n] in each member's
 * workspace); the attention reads row r's sentence through sentence[r]. */
#ifndef RS_DECODE_H
#define RS_DECODE_H

#include "search/ready.h"
#include "nn/network.h"
#include "search/lexicon.h"

/* A hypothesis: the one result type of a translation, from the search
 * (search/decode.c, beam.c: ids, alignment, scores) through the pipeline
 * (search/translate.c adds tokens and text) to every caller; api/ converts
 * it once to the public rnnsearch_hypothesis, whose field names it shares. */
typedef struct {
    int count;        /* output tokens, </s> not included */
    int *ids;         /* [count] target ids (<unk> stays RS_UNK) */
    char **tokens;    /* [count] target tokens (after <unk> replacement); NULL from the search */
    char *text;       /* the detokenized translation; NULL from the search */
    int columns;      /* the alignment's columns: source positions, </s> included */
    float *alignment; /* [(count + 1) × columns] rows: output tokens then </s>; NULL unless asked */
    double logprob;   /* Σ log p of the output and its </s> (or of the last step, if cut off) */
    double score;     /* what ranked it: logprob (greedy), logprob / (count + 1)^α (beam) */
    int finished;     /* 0 when the maximum length stopped it before </s> */
} rs_hypothesis;

void rs_hypothesis_free(rs_hypothesis *h);

/* The output layer's rows a step computes, when not all V: a lexical
 * shortlist (search/lexicon.h), as CTranslate2's Dense layer selects its
 * weights. ids[count] ascending target ids, W [count,l] their rows of W_out
 * (in the form the model's output layer has: accel/) and b [count] their
 * biases, gathered. */
typedef struct {
    int count;
    const int *ids;
    rs_linear W;
    const float *b;
} rs_output_rows;

/* One ensemble member's decoding state. */
typedef struct {
    rs_workspace ws;           /* a translation workspace: the encoder's, one step's */
    rs_accel_step *step;       /* the step's weights (accel/) */
    float *state, *next_state; /* [rows,n] s_{i-1}, s_i */
    float *logits, *lse;       /* [rows,V] W_out t_i + b_out, [rows] their log-normalisers */
    float *alpha;              /* [rows,S] */
    rs_output_rows rows;       /* the batch's shortlist: W, b its rows of W_out, b_out */
    rs_accel_rows *short_W;    /* for max_columns rows (with a shortlist only) */
    float *short_b;            /* [max_columns] (with a shortlist only) */
} rs_member;

typedef struct {
    const rs_ready *const *models; /* [n_models]; models[0] gives the vocabularies */
    int n_models;
    int max_sentences, max_rows, max_S;
    rs_member *member; /* [n_models] */
    rs_batch batch;    /* the sentences being decoded */
    int B, S, rows;    /* sentences, their longest source, live rows */
    int *sentence;     /* [max_rows] the sentence each row decodes */
    int *src_len;      /* [max_rows] */
    /* After a step: log p(word_of(j) | row r) = logits[r·columns + j] − lse[r]
     * (rs_decoder_word). With one model these point into member 0; an
     * ensemble's are the weighted mean Σ_k w_k log p_k of the members'
     * log-probabilities (lse 0), and alpha the alignments' Σ_k w_k α_k. */
    const float *logits, *lse, *alpha;
    /* The step's words: all V (column j is word j), or the batch's lexical
     * shortlist (column j is word shortlist_ids[j]; the reserved ids are
     * columns 0..3 either way). */
    int columns;
    rs_shortlist shortlist;                    /* lex NULL: none (rs_decoder_use_shortlist) */
    int max_columns;                           /* the most words a batch's shortlist can have */
    int *shortlist_ids;                        /* [max_columns] */
    unsigned char *marks;                      /* [V] scratch of rs_shortlist_select */
    float *mean_logprobs, *mean_alpha, *zeros; /* [max_rows,V], [max_rows,max_S], [max_rows] */
    float *weight; /* [n_models] w_k, Σ w_k = 1: 1/K each unless rs_decoder_weigh */
    /* 0: one model's steps leave lse unset (greedy's argmax needs only the
     * logits; rs_greedy then leaves logprob and score 0). 1 (rs_decoder_init's):
     * every step normalises. Ensembles always do (they mix log-probabilities). */
    int scores;
    int *parent_scratch; /* [max_rows] */
} rs_decoder;

/* Checks that the models can decode together (the same target vocabulary). */
int rs_ensemble_check(const rs_ready *const *models, int n_models, rs_error *err);

/* Checks an ensemble's weights (Marian's --weights): n_models of them, each
 * finite and non-negative, not all zero. */
int rs_ensemble_weights_check(const float *weights, int n_models, rs_error *err);

/* Appends the weights of a list "0.7,0.3" (decimal numbers >= 0 only:
 * strtof would also take 0x1 and inf) to weights[*count], which has room
 * for max. */
int rs_ensemble_weights_parse(const char *arg, float *weights, int *count, int max, rs_error *err);

/* Weighs the members by weights[n_models] (checked as above), normalised to
 * sum 1: w_k = weights[k] / Σ weights. Equal weights give 1/K each, the
 * unweighted mean bit for bit; NULL keeps that mean. */
int rs_decoder_weigh(rs_decoder *dec, const float *weights, rs_error *err);

/* Fails when an alignment is asked of models of which one has --attention
 * none (RS_NO_ALIGNMENT_WHY, after `what`: the option or request that asked).
 * Such a model translates and scores like any other, alone or in an ensemble
 * with attentive ones (it averages in its log-probabilities); only its α
 * would be meaningless (all 0), so nothing shows or uses them. */
int rs_alignment_check(const rs_ready *const *models, int n_models, const char *what,
                       rs_error *err);

int rs_decoder_init(rs_decoder *dec, const rs_ready *const *models, int n_models, int max_sentences,
                    int rows_per_sentence, int max_S, rs_error *err);
void rs_decoder_free(rs_decoder *dec);

/* About how many bytes rs_decoder_init(models, n_models, max_sentences,
 * rows_per_sentence, max_S) allocates (without a shortlist), for a message
 * when it fails. */
double rs_decoder_bytes(const rs_ready *const *models, int n_models, int max_sentences,
                        int rows_per_sentence, int max_S);

/* From the next rs_decoder_start on, each batch's steps compute the output
 * layer for its lexical shortlist only (lexicon.h; the table not owned, kept
 * for the decoder's life). */
int rs_decoder_use_shortlist(rs_decoder *dec, const rs_shortlist *shortlist, rs_error *err);

/* The word of column j of the step's logits. */
static inline int rs_decoder_word(const rs_decoder *dec, int j)
{
    return dec->shortlist.lex ? dec->shortlist_ids[j] : j;
}

/* Encodes B sentences (ids without </s>) and starts rows_per_sentence rows
 * for each (row b·k + j decodes sentence b), all in state s_0; with a
 * shortlist, chooses the batch's words and gathers their output rows. */
int rs_decoder_start(rs_decoder *dec, int B, const int *const *src, const int *src_count,
                     int rows_per_sentence, rs_error *err);

/* One step of every live row, with prev[rows] = y_{i-1}: logits, lse, alpha
 * and each member's next state. */
void rs_decoder_step(rs_decoder *dec, const int *prev);

/* The rows after a step: new row r continues old row parent[r] (r < new_rows;
 * its state s_i and its source side follow); parent NULL keeps every row. */
void rs_decoder_select(rs_decoder *dec, const int *parent, int new_rows);

/* The length rule shared by every search: max_len > 0 is a fixed limit,
 * 0 means 2·src_count + 10 (src_count without </s>). */
int rs_output_limit(int max_len, int src_count);

/* Greedy translation of B sentences (ids without </s>); out[B] receives the
 * results (free each with rs_hypothesis_free). A sentence's output stops at
 * </s> or after rs_output_limit(max_len, its length) tokens. */
int rs_greedy(rs_decoder *dec, int B, const int *const *src, const int *src_count, int max_len,
              int want_alignment, rs_hypothesis *out, rs_error *err);

#endif
