/* A vocabulary: tokens in id order and a hash index from token to id.
 * Ids 0..3 are reserved: <pad> <unk> <s> </s> (see params.h). */
#ifndef RS_VOCAB_H
#define RS_VOCAB_H

#include <stdio.h>

#include "common/error.h"

/* The reserved ids, the same in every vocabulary: padding, unknown word,
 * beginning and end of sentence. */
enum { RS_PAD = 0, RS_UNK = 1, RS_BOS = 2, RS_EOS = 3, RS_RESERVED = 4 };

typedef struct {
    int size;      /* tokens in use */
    int capacity;  /* allocated entries of tokens/counts */
    char **tokens; /* [size], owned */
    long *counts;  /* [size], occurrences while counting a corpus */
    int *slots;    /* [nslots] open-addressing index: id + 1, 0 = empty */
    int nslots;
} rs_vocab;

/* An empty vocabulary holding the four reserved tokens. */
int rs_vocab_init(rs_vocab *vocab, rs_error *err);
void rs_vocab_free(rs_vocab *vocab);

/* Adds the token (or finds it) and counts one occurrence; returns its id, or -1. */
int rs_vocab_add(rs_vocab *vocab, const char *token, rs_error *err);

/* Token `id` of a vocabulary read back in id order (a checkpoint, an
 * interchange file), ids 0, 1, 2, … in turn: a reserved id must hold its
 * reserved token, any other token must be new, and it gets exactly this id;
 * counts stay 0. Fails with "id 2 is 'x', not the reserved '</s>'" or
 * "token 'x' appears twice (ids 5 and 9)", for the caller to prefix with the
 * file and section. */
int rs_vocab_read_token(rs_vocab *vocab, int id, const char *token, rs_error *err);

/* Id of the token, or RS_UNK when it is not in the vocabulary. */
int rs_vocab_id(const rs_vocab *vocab, const char *token);

/* Builds `out` from the counted vocabulary `counted`: tokens seen at least
 * min_freq times, most frequent first (ties in byte order), at most max_size
 * entries in all (reserved ids included; max_size <= 0: no limit). */
int rs_vocab_select(rs_vocab *out, const rs_vocab *counted, int min_freq, int max_size,
                    rs_error *err);

/* The reserved token of id (id < RS_RESERVED), "<pad>" "<unk>" "<s>" "</s>". */
const char *rs_vocab_reserved(int id);

/* A copy of src (tokens, ids and counts). */
int rs_vocab_copy(rs_vocab *dst, const rs_vocab *src, rs_error *err);

/* The white space no token holds (vocab.c says why), as the offset of its
 * first byte in token, or strlen(token): one rule for a vocabulary file and a
 * checkpoint's vocabulary. */
size_t rs_vocab_white_space_at(const char *token);

/* Vocabulary files (vocab_file.c). */

/* Reads a vocabulary file into a new vocabulary: one token a line, as Joey
 * NMT writes its src_vocab.txt (and rs_vocab_write below), optionally followed
 * by a tab or a space and a count, as OpenNMT-py's and fairseq's files have
 * it (the count is not used). The reserved tokens keep their ids wherever
 * they stand and are added when missing; every other token gets the next id
 * (4, 5, …) in the file's order. Lines as every text file's (rs_line_reader:
 * \n, \r\n or a lone \r ends one; a byte order mark dropped; gzip read).
 * Refused with "FILE:LINE: …": an empty line, invalid UTF-8, a NUL byte, a
 * line longer than RS_LINE_MAX_BYTES, a count that is not a whole number, a
 * token holding white space (the rule rs_vocab_read_token applies to a
 * checkpoint's), a Marian YAML entry ("</s>: 0"), a token given twice (naming
 * the line of the first), and a file without a token. Tokens must be those
 * the tokenizer makes. */
int rs_vocab_read_file(rs_vocab *vocab, const char *path, rs_error *err);

/* Writes the tokens one a line in id order (reserved ones first), the form
 * rs_vocab_read_file reads back to the same ids; sets *errnum (0 if none) to
 * the errno of a failed write. */
void rs_vocab_write(const rs_vocab *vocab, FILE *out, int *errnum);

/* Writes "token<TAB>count" lines, as onmt_build_vocab writes a vocabulary:
 * every token counted (the reserved ones left out), most frequent first
 * (ties in byte order: rs_vocab_select's order, so the ids read back are the
 * ones selected); *errnum as rs_vocab_write. */
int rs_vocab_write_counts(const rs_vocab *counted, FILE *out, int *errnum, rs_error *err);

#endif
