/* The resolved configuration of a model and of its training run. One table
 * (RS_CONFIG_FIELDS) drives the struct, its defaults, the checkpoint's
 * "config" section (key=value lines) and the resolved-configuration printout,
 * so adding an option means adding one line here. */
#ifndef RS_CONFIG_H
#define RS_CONFIG_H

#include <stdio.h>

#include "error.h"

#define RS_STR_MAX 64

/* I(name, default, help): int;  F(...): float;  S(...): string (< RS_STR_MAX). */
#define RS_CONFIG_FIELDS(I, F, S)                                                   \
    /* model (the sizes of ../docs/model.md) */                                     \
    I(src_vocab, 0, "Vs: source vocabulary size (from the data)")                   \
    I(tgt_vocab, 0, "Vt: target vocabulary size (from the data)")                   \
    I(emb, 64, "m: embedding size")                                                 \
    I(hidden, 128, "n: GRU hidden size per direction")                              \
    I(att, 128, "a: attention size")                                                \
    I(maxout, 64, "l: maxout units of the deep output")                             \
    S(attention, "additive", "score: additive, general, dot, scaled-dot")           \
    /* text */                                                                      \
    I(lowercase, 0, "lower-case text before tokenizing")                            \
    S(tokenizer, "word", "word, char or spm")                                       \
    I(subwords, 0, "SentencePiece vocabulary size (0: none)")                       \
    /* training */                                                                  \
    I(seed, 1, "random seed")                                                       \
    I(batch_size, 32, "sentence pairs per batch")                                   \
    F(lr, 0.002f, "Adam learning rate")                                             \
    F(beta1, 0.9f, "Adam beta1")                                                    \
    F(beta2, 0.999f, "Adam beta2")                                                  \
    F(adam_eps, 1e-8f, "Adam epsilon")                                              \
    F(clip, 5.0f, "gradient clipping: maximum global norm (0: off)")                \
    F(init_scale, 0.1f, "uniform initialisation range [-s, s]")                     \
    I(epochs, 10, "epochs to train")                                                \
    I(max_steps, 0, "stop after this many updates (0: no limit)")                   \
    I(min_freq, 1, "minimum token count to enter a vocabulary")                     \
    I(max_vocab, 30000, "maximum vocabulary size (reserved ids included)")          \
    I(max_len, 80, "skip training pairs longer than this (tokens)")                 \
    I(save_every, 0, "also save last.ckpt every N steps (0: each epoch only)")      \
    F(dropout, 0.0f, "dropout on embeddings, context and readout (training only)")  \
    F(label_smoothing, 0.0f, "label smoothing (training only)")                     \
    I(warmup, 0, "linear learning-rate warm-up over N steps")                       \
    F(lr_decay, 1.0f, "multiply the learning rate by this after a dev evaluation without improvement") \
    I(patience, 0, "stop after N dev evaluations without improvement (0: never)")  \
    F(max_minutes, 0.0f, "stop training after this much wall time (0: no limit)")  \
    I(threads, 0, "BLAS threads (0: OpenBLAS default)")

typedef struct {
#define RS_CFG_I(name, def, help) int name;
#define RS_CFG_F(name, def, help) float name;
#define RS_CFG_S(name, def, help) char name[RS_STR_MAX];
    RS_CONFIG_FIELDS(RS_CFG_I, RS_CFG_F, RS_CFG_S)
#undef RS_CFG_I
#undef RS_CFG_F
#undef RS_CFG_S
} rs_config;

void rs_config_defaults(rs_config *cfg);

/* Sets one field from text; fails on an unknown key or a malformed value. */
int rs_config_set(rs_config *cfg, const char *key, const char *value, rs_error *err);

/* Writes "key=value\n" lines, one per field (the checkpoint's config section). */
void rs_config_write(const rs_config *cfg, FILE *out);

/* One line "key=value key=value …" for people (floats with %g). */
void rs_config_print(const rs_config *cfg, FILE *out);

/* Formats the value of one field for people (floats with %g); fails for an unknown key. */
int rs_config_format(const rs_config *cfg, const char *key, char *buf, size_t size);

/* Parses text written by rs_config_write (unknown keys are an error). */
int rs_config_parse(rs_config *cfg, const char *text, rs_error *err);

#endif
