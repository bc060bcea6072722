/* Raw text to tokens and back.
 *
 * Normalisation: valid UTF-8 only, NFC, optional lower-casing, every run of
 * Unicode white space (Zs, Zl, Zp, tab, newline, CR, VT, FF, NEL) turned into
 * one ASCII space, both ends trimmed.
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
 * Byte offsets in error messages count from 1, like line numbers. */
#ifndef RS_TEXT_H
#define RS_TEXT_H

#include <stddef.h>

#include "common/error.h"

#define RS_JOINER "\xEF\xBF\xAD" /* U+FFED, word mode */
#define RS_SPACE "\xE2\x96\x81"  /* U+2581, char mode */

enum { RS_TOK_WORD, RS_TOK_CHAR };

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

/* RS_TOK_WORD for "word", RS_TOK_CHAR for "char", -1 for anything else. */
int rs_tokenizer_mode_parse(const char *name);

/* Fails, naming the byte, unless s[0..len) is UTF-8 without NUL bytes. */
int rs_utf8_validate(const char *s, size_t len, rs_error *err);

/* 1 when s[0..len) normalises to nothing (empty, or white space only, as
 * defined above), 0 otherwise (also for bytes that are not UTF-8). */
int rs_text_is_blank(const char *s, size_t len);

/* Normalises in[0..len) as above into a new NUL-terminated string *out,
 * which the caller frees. */
int rs_text_normalize(const char *in, size_t len, int lowercase, char **out, rs_error *err);

/* Replaces the contents of out with the tokens of the normalised string.
 * On failure out is left empty. */
int rs_tokenize(const char *normalized, int mode, rs_tokens *out, rs_error *err);

/* The text of the tokens, in a new string *out that the caller frees. */
int rs_detokenize(const rs_tokens *tokens, int mode, char **out, rs_error *err);
int rs_detokenize_array(const char *const *tokens, int count, int mode, char **out, rs_error *err);

/* rs_text_normalize followed by rs_tokenize. */
int rs_text_to_tokens(const char *raw, size_t len, int lowercase, int mode, rs_tokens *out,
                      rs_error *err);

#endif
