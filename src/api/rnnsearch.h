/* rnnsearch — the public C API of librnnsearch (installed as <rnnsearch.h>).
 *
 * A trained model translates, force-decodes and tokenizes through the same
 * pipeline as the `rnnsearch` program: a call here gives what `rnnsearch
 * translate`, `align`, `score` and `tokenize -m` print for the same model and
 * input. docs/library.md has a complete example.
 *
 * Errors: every function that can fail returns 0 on success or -1 on failure,
 * with the message in the caller's rnnsearch_error (which may be NULL). The
 * library never prints and never exits. Outputs are filled only on success.
 * Every pointer argument may be NULL without a crash: a function that can
 * fail then fails, the others do nothing (or return NULL). What cannot be
 * checked is the caller's to get right: a pointer to freed or too little
 * memory, a count larger than its array, an error struct that is not one.
 *
 * Limits (the command line's): a text (a source, a target, the text to
 * tokenize, the tokens to detokenize together) holds at most
 * RNNSEARCH_MAX_TEXT bytes of UTF-8, as a line the program reads does; the
 * options' ranges are given with rnnsearch_options below.
 *
 * Threads: a model is read-only once loaded (but for its int8 copies, made
 * once under the model's own lock: see the options' int8), so any number of
 * threads may use one model at the same time (rnnsearch_force, rnnsearch_tokenize,
 * rnnsearch_detokenize, and each its own translator). A translator holds
 * decoding workspaces and is used by one thread at a time: make one per
 * thread. Free a model after every translator made from it, and only when
 * no thread uses it any more: freeing a model (or a translator) while a call
 * is using it is the caller's error, which the library cannot see (a binding
 * that shares models between threads, as the Python package does, counts its
 * calls in flight and frees after the last).
 *
 * Versions: the soname's major number (librnnsearch.so.1) changes with
 * RNNSEARCH_VERSION_MAJOR, whenever a function or a structure changes
 * incompatibly. rnnsearch_options is the one structure that grows within a
 * major version; it carries its size (see rnnsearch_options_init). The
 * result structures (rnnsearch_tokens, _translation, _hypothesis, _forced)
 * are filled by the library and change only with the major number.
 *
 * Alignment matrices are row-major float arrays of (target tokens + 1) rows
 * and (source tokens + 1) columns, </s> last on both sides: row i is the
 * attention distribution α_i· the decoder used to emit target token i
 * (Bahdanau et al. 2014, §3.1), so each row sums to 1. */
#ifndef RNNSEARCH_H
#define RNNSEARCH_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1.0.0: rnnsearch_options carries its size (rnnsearch_options_init replaces
 * 0.1's rnnsearch_options_default), so the major number changed.
 * 1.1.0: ensembles (rnnsearch_translator_new_ensemble), batched scoring
 * (rnnsearch_score), and the options' remove_bpe (rnnsearch_options_set_text):
 * functions and a field at the end added, so the minor number.
 * 1.2.0: the options' ensemble weights, int8 decoding and lexical shortlist
 * (fields at the end, rnnsearch_options_set_weights): the minor number. */
#define RNNSEARCH_VERSION_MAJOR 1
#define RNNSEARCH_VERSION_MINOR 2
#define RNNSEARCH_VERSION_PATCH 0
#define RNNSEARCH_VERSION "1.2.0"

/* The library's version ("1.0.0"): the one it was built as, which may differ
 * from the RNNSEARCH_VERSION of the header a program was compiled with. */
const char *rnnsearch_version(void);

/* The limits of this version, the command line's (`rnnsearch translate
 * --beam`, `--batch-size`, `--max-len`, `--max-src-len`, and the bound on a
 * line). */
#define RNNSEARCH_MAX_BEAM 1000          /* beam and n_best */
#define RNNSEARCH_MAX_BATCH 100000       /* batch_size */
#define RNNSEARCH_MAX_LENGTH 100000      /* max_len and max_src_len, in tokens */
#define RNNSEARCH_MAX_LENGTH_PENALTY 100 /* |length_penalty| */
#define RNNSEARCH_MAX_TEXT (1 << 20)     /* bytes of one text (1 MiB) */
#define RNNSEARCH_MAX_MODELS 16          /* models of an ensemble (-m repeated), since 1.1 */
#define RNNSEARCH_MAX_SHORTLIST 10000000 /* shortlist_first and _best, since 1.2 */

typedef struct {
    char message[1024];
} rnnsearch_error;

/* ---- Models ------------------------------------------------------------- */

typedef struct rnnsearch_model rnnsearch_model; /* opaque */

/* Loads a model as `-m MODEL` finds it: a checkpoint file; a model directory
 * (its best.ckpt, else last.ckpt); or a bare NAME, looked up in
 * $RNNSEARCH_MODELS and then ./models. */
int rnnsearch_model_load(const char *path_or_name, rnnsearch_model **model, rnnsearch_error *err);
void rnnsearch_model_free(rnnsearch_model *model); /* NULL is allowed */

/* The checkpoint file the model was read from (NULL for a NULL model). */
const char *rnnsearch_model_checkpoint(const rnnsearch_model *model);

/* ---- Tokens ------------------------------------------------------------- */

enum { RNNSEARCH_SOURCE = 0, RNNSEARCH_TARGET = 1 };

typedef struct {
    int count;
    char **tokens; /* [count] */
} rnnsearch_tokens;

void rnnsearch_tokens_free(rnnsearch_tokens *tokens);

/* Normalises and tokenizes text for one side (RNNSEARCH_SOURCE or _TARGET)
 * with the model's settings (lower-casing, word/char tokenizer or its
 * SentencePiece models), as `rnnsearch tokenize -m` does. */
int rnnsearch_tokenize(const rnnsearch_model *model, int side, const char *text,
                       rnnsearch_tokens *out, rnnsearch_error *err);

/* Tokens of one side back to text (*text: free with rnnsearch_string_free). */
int rnnsearch_detokenize(const rnnsearch_model *model, int side, const char *const *tokens,
                         int count, char **text, rnnsearch_error *err);

void rnnsearch_string_free(char *s);

/* ---- Translation -------------------------------------------------------- */

/* How to translate. The caller owns the structure; fill it with
 * rnnsearch_options_init first, then set fields:
 *
 *     rnnsearch_options opt;
 *     rnnsearch_options_init(&opt, sizeof opt, NULL);
 *     opt.beam = 5;
 *
 * Later versions add fields at the end only, each with 0 as its default, and
 * the structure says how large the caller's copy is: the library reads and
 * writes only the first `size` bytes, so a program built with an older
 * header keeps working with a newer library (the fields it does not know take
 * their defaults), and one built with a newer header fails cleanly on an
 * older library if it set a field that library does not know. */
typedef struct {
    size_t size;          /* sizeof(rnnsearch_options) in the caller's header: set by
                             rnnsearch_options_init, never by hand */
    int beam;             /* hypotheses kept, 1 … RNNSEARCH_MAX_BEAM; 1: greedy (default 1) */
    int n_best;           /* hypotheses returned per sentence, 1 … beam (default 1) */
    float length_penalty; /* α, finite, −100 … 100: beam search ranks by
                             log p / (tokens + 1)^α (default 1) */
    int max_len;          /* output tokens at most, 0 … RNNSEARCH_MAX_LENGTH;
                             0: 2·source + 10 (default 0) */
    int max_src_len;      /* longer sources are cut to this many tokens,
                             0 … RNNSEARCH_MAX_LENGTH; 0: 250 (default 250) */
    int batch_size;       /* sentences decoded together, 1 … RNNSEARCH_MAX_BATCH (default 32) */
    int alignment;        /* 1: fill each hypothesis's alignment; 0 or 1 (default 0);
                             refused for a model with --attention none (no alignment) */
    int replace_unk;      /* 1: <unk> → the source token it attends to most; 0 or 1 (default 0) */
    /* Since 1.1. NULL, or the BPE marker joined in each hypothesis's text as
     * `translate --remove-bpe[=MARKER]` does ("@@ ": 'hou@@ se' → 'house',
     * one at the end of the text dropped too); tokens keep it; not empty.
     * The string is read by rnnsearch_translator_new, which copies it
     * (default NULL). */
    const char *remove_bpe;
    /* Since 1.2. NULL, or an ensemble's weights as `translate --weights
     * W1,W2,...`: one per model, in the order rnnsearch_translator_new_ensemble
     * takes them, each finite and >= 0, not all 0; the step's
     * log-probabilities are Σ_k w_k log p_k / Σ_k w_k (equal weights: the
     * plain mean, bit for bit). Copied by rnnsearch_translator_new (default
     * NULL). */
    const float *weights;
    int n_weights; /* weights' count: 0 with NULL, else the ensemble's model count */
    /* Since 1.2. 1: decode with int8 copies of the decoder step's weights, as
     * `translate --int8` (faster, slightly different scores); 0 or 1 (default
     * 0). Each model makes its copies once, when the first translator asking
     * for them is made (under the model's lock, so translators may be made
     * from one model in several threads at once), and keeps them until it is
     * freed; translators without int8, rnnsearch_force and rnnsearch_score
     * go on using the exact float weights of the same model. */
    int int8;
    /* Since 1.2. NULL, or a lexical table file (made by `rnnsearch lexicon`
     * for the model) giving each batch a shortlist of target words, as
     * `translate --shortlist FILE,FIRST,BEST`: the output layer is computed
     * for the FIRST most frequent words and each source token's BEST most
     * probable translations only. rnnsearch_translator_new reads the file
     * (against the first model's vocabularies; an unknown token or a bad line
     * fails, naming the file and line) and keeps the table; the string need
     * not outlive that call (default NULL). */
    const char *shortlist;
    int shortlist_first; /* FIRST: 0: Marian's 100 (default); -1: none;
                            else 1 … RNNSEARCH_MAX_SHORTLIST */
    int shortlist_best;  /* BEST, likewise: 0: 100 (default); -1: none */
} rnnsearch_options;

/* Fills *opt with the defaults above (the command line's) and sets opt->size
 * to size, writing nothing past size bytes: pass sizeof *opt. Fails, writing
 * nothing, for a NULL opt or a size smaller than the first version's
 * structure. */
int rnnsearch_options_init(rnnsearch_options *opt, size_t size, rnnsearch_error *err);

/* The library's sizeof(rnnsearch_options), for bindings that allocate the
 * structure without the header (the Python package). */
size_t rnnsearch_options_size(void);

/* Sets the field called name ("beam", "n_best", "length_penalty", "max_len",
 * "max_src_len", "batch_size", "alignment", "replace_unk"; since 1.2 "int8",
 * "shortlist_first", "shortlist_best") to value, which
 * must be in the field's range (and whole, for an integer field): for
 * bindings, which then need no copy of the layout, and for callers who want
 * each value checked as it is set. */
int rnnsearch_options_set(rnnsearch_options *opt, const char *name, double value,
                          rnnsearch_error *err);

/* Since 1.1: sets the text field called name ("remove_bpe"; since 1.2
 * "shortlist") to value (NULL: none), which is not copied: it must live until
 * rnnsearch_translator_new has read the options. For bindings, which need no
 * copy of the layout. */
int rnnsearch_options_set_text(rnnsearch_options *opt, const char *name, const char *value,
                               rnnsearch_error *err);

/* Since 1.2: sets weights and n_weights to count weights (NULL and 0: none),
 * checked as the translator checks them (count 1 … RNNSEARCH_MAX_MODELS,
 * each finite and >= 0, not all 0); the array is not copied: it must live
 * until rnnsearch_translator_new has read the options. */
int rnnsearch_options_set_weights(rnnsearch_options *opt, const float *weights, int count,
                                  rnnsearch_error *err);

/* Checks options as rnnsearch_translator_new does: the size, every field's
 * range, n_best <= beam, the weights (but not their count against the
 * models, nor the shortlist's file), and no field set beyond what this
 * library knows. */
int rnnsearch_options_check(const rnnsearch_options *opt, rnnsearch_error *err);

typedef struct {
    char *text;       /* the detokenized translation */
    int count;        /* target tokens, </s> not included */
    char **tokens;    /* [count] */
    double logprob;   /* Σ log p of the tokens and </s> (natural log) */
    double score;     /* what ranked it: logprob / (count + 1)^α in beam search, else logprob */
    int finished;     /* 0 when the length limit ended it before </s> */
    float *alignment; /* [(count + 1) × (source count + 1)], or NULL when not asked for */
} rnnsearch_hypothesis;

typedef struct {
    int source_count;           /* source tokens as translated (after cutting) */
    char **source_tokens;       /* [source_count] */
    int truncated;              /* source tokens cut off by max_src_len (0: none) */
    int count;                  /* hypotheses, best first: n_best, or fewer when the beam
                             found fewer; 1 (empty text, no tokens) for an empty line */
    rnnsearch_hypothesis *hyps; /* [count] */
} rnnsearch_translation;

void rnnsearch_translation_free(rnnsearch_translation *t);

typedef struct rnnsearch_translator rnnsearch_translator; /* opaque; one per thread */

/* Decoding workspaces for these options (NULL: the defaults), which
 * rnnsearch_options_check must accept; the options are copied. */
int rnnsearch_translator_new(const rnnsearch_model *model, const rnnsearch_options *opt,
                             rnnsearch_translator **tr, rnnsearch_error *err);
void rnnsearch_translator_free(rnnsearch_translator *tr); /* NULL is allowed */

/* Since 1.1: a translator over an ensemble of count models (1 …
 * RNNSEARCH_MAX_MODELS), as `rnnsearch translate -m A -m B`: their
 * log-probabilities are averaged at each step (and their alignments, for the
 * alignment reported). The models must share vocabularies and text settings
 * (refused, naming the model, otherwise); the first one's settings tokenize.
 * The array is copied; the models must outlive the translator. */
int rnnsearch_translator_new_ensemble(const rnnsearch_model *const *models, int count,
                                      const rnnsearch_options *opt, rnnsearch_translator **tr,
                                      rnnsearch_error *err);

/* Translates count lines of raw text into out[count] (free each with
 * rnnsearch_translation_free), as `rnnsearch translate` does. A line that
 * cannot be tokenized (invalid UTF-8, say) fails the call, the message
 * naming it ("sentence 2: …", counted from 1); nothing is left to free then. */
int rnnsearch_translate(rnnsearch_translator *tr, int count, const char *const *sources,
                        rnnsearch_translation *out, rnnsearch_error *err);

/* ---- Forced decoding ---------------------------------------------------- */

typedef struct {
    int source_count, target_count; /* tokens, </s> not included */
    char **source_tokens;           /* [source_count] */
    char **target_tokens;           /* [target_count] */
    int truncated;                  /* source tokens cut off by the length limit (250) */
    double logprob;                 /* log p(target | source), </s> included: `rnnsearch score` */
    float *token_logprobs;          /* [target_count + 1], the last is </s> */
    float *alignment;               /* [(target_count + 1) × (source_count + 1)]; NULL
                                       for a model trained with --attention none */
} rnnsearch_forced;

void rnnsearch_forced_free(rnnsearch_forced *f);

/* The model's probability of a given translation, token by token, and the
 * alignment it uses on the way (teacher forcing): `rnnsearch score` and
 * `rnnsearch align --pairs` for one pair. The source must not be empty. */
int rnnsearch_force(const rnnsearch_model *model, const char *source, const char *target,
                    rnnsearch_forced *out, rnnsearch_error *err);

/* Since 1.1: log p(targets[i] | sources[i]) of count pairs into
 * logprobs[count], as `rnnsearch score -m A [-m B …]` prints them: the pairs
 * scored in batches of similar length, sources cut to 250 tokens, several
 * models (1 … RNNSEARCH_MAX_MODELS) as an ensemble (the mean of their
 * log-probabilities at each step). An empty target scores log p(</s> |
 * source); an empty source with an empty target scores 0 (its only
 * translation, as the program scores the line "\t"). A pair that cannot be
 * tokenized, or whose source is empty and target not, fails the call,
 * naming it ("pair 2: …", counted from 1); logprobs is then left as it was. */
int rnnsearch_score(const rnnsearch_model *const *models, int n_models, int count,
                    const char *const *sources, const char *const *targets, double *logprobs,
                    rnnsearch_error *err);

#ifdef __cplusplus
}
#endif

#endif
