/* Raw text to tokens and back.
 *
 * Normalisation: valid UTF-8 only, U+FEFF dropped wherever it is (a byte
 * order mark that concatenated files left inside the text), NFC, optional
 * lower-casing, every run of Unicode white space (Zs, Zl, Zp, tab, newline,
 * CR, VT, FF, NEL) turned into one ASCII space, both ends trimmed.
 *
 * Tokenizers, both exactly invertible on normalised text:
 *   word  Words are maximal runs of characters that are neither white space,
 *         punctuation (P*) nor symbols (S*); each punctuation or symbol code
 *         point is a token of its own. A punctuation/symbol token glued to the
 *         previous token (no space between) starts with the joiner "￭"
 *         (U+FFED), one glued to the next token ends with it, as in OpenNMT:
 *         "Hello, world!" -> Hello ￭, world ￭!     "(yes)" -> (￭ yes ￭)
 *   char  Every code point is a token; a space is the token "▁" (U+2581).
 * The marks themselves may occur in text: a literal "￭" in word mode and a
 * literal "▁" in char mode become the tokens "<￭>" and "<▁>", which no other
 * text produces. Tokens that no text produces (a model's "<unk>") detokenize
 * to themselves, separated by spaces.
 *
 * The space tokenizer is for text tokenized before (Moses, subword-nmt's
 * "hou@@ se", any whitespace-separated tokens) and changes it as little as
 * possible: the text must be valid UTF-8 without NUL; U+FEFF is dropped as
 * above; it is NOT normalised to
 * NFC; with lower-casing each code point is lower-cased on its own
 * (utf8proc_tolower, no composition); tokens are the maximal runs of
 * characters that are not Unicode white space (the set above), so tabs and
 * runs of spaces separate tokens as one space does, and blanks at both ends
 * are dropped. Detokenizing joins the tokens with one space: text whose
 * tokens are separated by single spaces comes back unchanged.
 *
 * Byte offsets in error messages count from 1, like line numbers. */
#ifndef RS_TEXT_H
#define RS_TEXT_H

#include <stddef.h>

#include "common/error.h"

#define RS_JOINER "\xEF\xBF\xAD" /* U+FFED, word mode */
#define RS_SPACE "\xE2\x96\x81"  /* U+2581, char mode */

enum { RS_TOK_WORD, RS_TOK_CHAR, RS_TOK_SPACE };

typedef struct {
    int count;     /* tokens in use */
    int capacity;  /* allocated entries of tokens */
    char **tokens; /* [count] NUL-terminated, owned */
} rs_tokens;

/* Frees the tokens and the array; leaves an empty rs_tokens. */
void rs_tokens_free(rs_tokens *tokens);

/* Frees the tokens but keeps the array for the next sentence. */
void rs_tokens_clear(rs_tokens *tokens);

/* Appends a copy of the first len bytes of token. */
int rs_tokens_push(rs_tokens *tokens, const char *token, size_t len, rs_error *err);

/* RS_TOK_WORD for "word", RS_TOK_CHAR for "char", RS_TOK_SPACE for "space",
 * -1 for anything else. */
int rs_tokenizer_mode_parse(const char *name);

/* Fails, naming the byte, unless s[0..len) is UTF-8 without NUL bytes. */
int rs_utf8_validate(const char *s, size_t len, rs_error *err);

/* 1 when s[0..len) normalises to nothing (empty, or white space only, as
 * defined above), 0 otherwise (also for bytes that are not UTF-8). */
int rs_text_is_blank(const char *s, size_t len);

/* Normalises in[0..len) as above into a new NUL-terminated string *out,
 * which the caller frees. */
int rs_text_normalize(const char *in, size_t len, int lowercase, char **out, rs_error *err);

/* Drops every U+FEFF of s[0..len) in place, as normalising does (and a
 * vocabulary file's reader, whose tokens no tokenizer would otherwise
 * match); the new length, s NUL-terminated when it shrank. */
size_t rs_text_drop_feff(char *s, size_t len);

/* Replaces the contents of out with the tokens of the normalised string.
 * On failure out is left empty. */
int rs_tokenize(const char *normalized, int mode, rs_tokens *out, rs_error *err);

/* The text of the tokens, in a new string *out that the caller frees. */
int rs_detokenize(const rs_tokens *tokens, int mode, char **out, rs_error *err);
int rs_detokenize_array(const char *const *tokens, int count, int mode, char **out, rs_error *err);

/* rs_text_normalize followed by rs_tokenize; for RS_TOK_SPACE the space
 * tokenizer's own, smaller preparation described above instead. */
int rs_text_to_tokens(const char *raw, size_t len, int lowercase, int mode, rs_tokens *out,
                      rs_error *err);

/* Undoes subword-nmt's BPE as fairseq's --remove-bpe does: one space is
 * appended to text, every occurrence of marker (typically "@@ ") removed,
 * then trailing ASCII white space, so "hou@@ se" -> "house" and a marker at
 * the end of the line ("hou@@") goes too. Only the marker's own bytes join:
 * "hou@@\tse" stays as it is. The marker must not be empty. The result is a
 * new string *out that the caller frees. */
#define RS_BPE_MARKER "@@ " /* subword-nmt's continuation mark, fairseq's default */
/* As marker: SentencePiece pieces written as tokens ("▁the ▁hou se"): the
 * spaces go and each "▁" (U+2581) becomes one, the ends trimmed ("the house"),
 * as fairseq's --remove-bpe sentencepiece does. */
#define RS_BPE_SENTENCEPIECE "sentencepiece"
int rs_remove_bpe(const char *text, const char *marker, char **out, rs_error *err);

/* Post-processing of output text whose tokens were made before rnnsearch saw
 * them (--tokenizer space), turning the pieces into the text a reader wants:
 *   RS_POST_BPE     subword-nmt's "hou@@ se" -> "house" (rs_remove_bpe, "@@ ");
 *   RS_POST_SPM     SentencePiece pieces "▁the ▁hou se" -> "the house": every
 *                   ASCII space dropped, each "▁" (U+2581) a space, both ends
 *                   trimmed (spm_decode's rule for pieces);
 *   RS_POST_JOINER  OpenNMT joiners "Hello ￭, world" -> "Hello, world": the
 *                   space-separated tokens detokenized as the word tokenizer's;
 *   RS_POST_NONE    a copy.
 * The order is rs_post_process_names' (model/config.h). *out is new. */
enum { RS_POST_NONE, RS_POST_BPE, RS_POST_SPM, RS_POST_JOINER };
int rs_post_process(const char *text, int kind, char **out, rs_error *err);

#endif
