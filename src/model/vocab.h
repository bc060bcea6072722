/* A vocabulary: tokens in id order and a hash index from token to id.
 * Ids 0..3 are reserved: <pad> <unk> <s> </s> (see params.h). */
#ifndef RS_VOCAB_H
#define RS_VOCAB_H

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

#endif
