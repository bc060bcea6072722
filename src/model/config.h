/* The resolved configuration of a model and of its training run. One table
 * (RS_CONFIG_FIELDS: RS_MODEL_CONFIG_FIELDS, then RS_TRAIN_CONFIG_FIELDS)
 * drives the structs (rs_model_config, rs_train_config, both in rs_config), its defaults, the allowed values, the
 * checkpoint's "config" section (key=value lines) and the resolved-configuration
 * printout, so adding an option means adding one line here.
 *
 * Values are typed and checked once, when set (rs_config_set): numbers must be
 * finite and inside their range, a named choice is stored as its index in its
 * table of names and written back by name. */
#ifndef RS_CONFIG_H
#define RS_CONFIG_H

#include <stddef.h>
#include <stdio.h>

#include "common/error.h"

#define RS_STR_MAX 64

/* Named choices. An enum field holds the index of its name in the table. */
extern const char *const rs_attention_names[]; /* rs_attention_kind order (params.h) */
extern const char *const rs_tokenizer_names[];
extern const char *const rs_lr_schedule_names[];
/* The learning-rate schedules (train/train.h rs_train_learning_rate). */
enum { RS_LR_CONSTANT, RS_LR_NOAM, RS_LR_INVERSE_SQRT, RS_LR_PLATEAU, RS_LR_EXPONENTIAL };
/* The optimizers (nn/optimizer.h; docs/model.md "Optimisers"). */
extern const char *const rs_optimizer_names[];
enum { RS_OPT_ADAM, RS_OPT_SGD, RS_OPT_ADADELTA, RS_OPT_ADAGRAD };
/* The learning rate an optimizer trains with when none is given: Adam's our
 * own default, the others OpenNMT-py's recommended rates (sgd 1, adadelta 1,
 * adagrad 0.1); Adadelta at 1 is Zeiler's and Bahdanau et al.'s rule. */
float rs_config_default_lr(int optimizer);
/* text.h's RS_POST_* order: what turns output tokens into text after detokenization. */
extern const char *const rs_post_process_names[];
/* word, char and space are text.h's RS_TOK_* modes (rs_codec_init maps them). */
enum { RS_TOKENIZER_WORD, RS_TOKENIZER_CHAR, RS_TOKENIZER_SPM, RS_TOKENIZER_SPACE };

/* Which ends of a float range are excluded. */
enum { RS_CLOSED = 0, RS_OPEN_LOW = 1, RS_OPEN_HIGH = 2, RS_OPEN = 3 };

#define RS_INT_LIMIT 2147483647
#define RS_SIZE_LIMIT 65536 /* model sizes: the parameter table stays far from int overflow */

/* I(name, default, help, min, max): int in [min, max] (a [0, 1] int is a flag);
 * F(name, default, help, min, max, open): finite float in the range, `open`
 *   saying which ends are excluded;
 * E(name, "default", help, names): a name from `names`, held as its index. */
#define RS_MODEL_CONFIG_FIELDS(I, F, E)                                                            \
    /* model (the sizes of docs/model.md) */                                                       \
    I(src_vocab, 0, "Vs: source vocabulary size (from the data)", 0, 100000000)                    \
    I(tgt_vocab, 0, "Vt: target vocabulary size (from the data)", 0, 100000000)                    \
    I(emb, 64, "m: embedding size", 1, RS_SIZE_LIMIT)                                              \
    I(hidden, 128, "n: GRU hidden size per direction", 1, RS_SIZE_LIMIT)                           \
    I(att, 128, "a: attention size", 1, RS_SIZE_LIMIT)                                             \
    I(maxout, 64, "l: maxout units of the deep output", 1, RS_SIZE_LIMIT)                          \
    E(attention, "additive", "score: additive, general, scaled-dot or none", rs_attention_names)   \
    I(tie_embeddings, 0, "W_out is tgt_emb: tied output layer (needs --maxout = --emb)", 0, 1)     \
    /* text */                                                                                     \
    I(lowercase, 0, "lower-case text before tokenizing", 0, 1)                                     \
    E(tokenizer, "word", "word, char, spm or space (pre-tokenized)", rs_tokenizer_names)           \
    I(subwords, 0, "SentencePiece vocabulary size (0: none)", 0, 10000000)                         \
    I(shared_vocab, 0, "one vocabulary for both sides (source and target tokens together)", 0, 1)  \
    E(post_process, "none",                                                                        \
      "join pre-segmented output for dev BLEU and translate: none, bpe,"                           \
      " sentencepiece or joiner",                                                                  \
      rs_post_process_names)

/* The most threads any command takes (--threads of train, translate, align
 * and bench): one range for them all. */
#define RS_MAX_THREADS 1024

#define RS_TRAIN_CONFIG_FIELDS(I, F, E)                                                            \
    I(seed, 1, "random seed", 0, RS_INT_LIMIT)                                                     \
    I(batch_size, 32, "sentence pairs per batch", 1, 1000000)                                      \
    I(batch_tokens, 0, "also at most N target tokens per batch, padding included (0: off)", 0,     \
      100000000)                                                                                   \
    I(accumulate, 1, "sum the gradients of N batches into each update", 1, 1024)                   \
    E(optimizer, "adam", "adam, sgd, adadelta or adagrad (docs/model.md)", rs_optimizer_names)     \
    F(lr, 0.002f, "learning rate (not given: adam 0.002, sgd 1, adadelta 1, adagrad 0.1)", 0, 10,  \
      RS_OPEN_LOW)                                                                                 \
    F(beta1, 0.9f, "Adam beta1", 0, 1, RS_OPEN_HIGH)                                               \
    F(beta2, 0.999f, "Adam beta2", 0, 1, RS_OPEN_HIGH)                                             \
    F(adam_eps, 1e-8f, "Adam epsilon", 0, 1, RS_OPEN_LOW)                                          \
    F(rho, 0.95f, "Adadelta's decay rate rho", 0, 1, RS_OPEN)                                      \
    F(adadelta_eps, 1e-6f, "Adadelta epsilon", 0, 1, RS_OPEN_LOW)                                  \
    F(adagrad_init, 0.0f, "Adagrad's sum of squared gradients before the first update", 0, 1e6f,   \
      RS_CLOSED)                                                                                   \
    F(clip, 5.0f, "gradient clipping: maximum global norm (0: off)", 0, 1e6f, RS_CLOSED)           \
    F(init_scale, 0.1f, "uniform initialisation range [-s, s]", 0, 10, RS_OPEN_LOW)                \
    I(epochs, 10, "epochs to train", 1, 1000000)                                                   \
    I(max_steps, 0, "stop after this many updates (0: no limit)", 0, RS_INT_LIMIT)                 \
    I(min_freq, 1, "minimum token count to enter a vocabulary", 1, RS_INT_LIMIT)                   \
    I(max_vocab, 30000, "maximum vocabulary size (reserved ids included)", 5, 100000000)           \
    I(max_len, 80, "skip training pairs longer than this (tokens; 0: no limit)", 0, 1000000)       \
    I(save_every, 0, "also save last.ckpt every N steps (0: each epoch only)", 0, RS_INT_LIMIT)    \
    I(keep_last, 0, "keep N step-STEP.ckpt of the save interval, to average (0: none)", 0,         \
      1000000)                                                                                     \
    I(eval_every, 0, "evaluate on dev every N steps (0: at each epoch's end)", 0, RS_INT_LIMIT)    \
    I(log_every, 10, "write the training loss every N steps to train.loss.tsv (0: off)", 0,        \
      RS_INT_LIMIT)                                                                                \
    I(dev_translate, 0, "also translate dev greedily and report exact matches", 0, 1)              \
    I(dev_bleu, 0, "translate dev greedily, report BLEU and keep best.ckpt by it", 0, 1)           \
    F(dropout, 0.0f, "dropout on embeddings, context and readout (training only)", 0, 1,           \
      RS_OPEN_HIGH)                                                                                \
    F(label_smoothing, 0.0f, "label smoothing (training only)", 0, 1, RS_OPEN_HIGH)                \
    F(src_word_dropout, 0.0f, "drop whole source tokens (training only)", 0, 1, RS_OPEN_HIGH)      \
    F(tgt_word_dropout, 0.0f,                                                                      \
      "drop whole previous target words, the decoder's input (training only)", 0, 1, RS_OPEN_HIGH) \
    I(warmup, 0, "linear learning-rate warm-up over N steps", 0, RS_INT_LIMIT)                     \
    F(lr_decay, 1.0f,                                                                              \
      "multiply the learning rate by this after a dev evaluation without improvement", 0, 1,       \
      RS_OPEN_LOW)                                                                                 \
    E(lr_schedule, "constant",                                                                     \
      "constant, noam, inverse-sqrt, plateau or exponential (docs/configuration.md)",              \
      rs_lr_schedule_names)                                                                        \
    F(decay_rate, 0.5f,                                                                            \
      "exponential schedule: multiply the learning rate by this every decay_steps", 0, 1,          \
      RS_OPEN_LOW)                                                                                 \
    I(decay_start, 50000, "exponential schedule: the step of the first decay", 0, RS_INT_LIMIT)    \
    I(decay_steps, 10000, "exponential schedule: steps from one decay to the next", 1,             \
      RS_INT_LIMIT)                                                                                \
    I(patience, 0, "stop after N dev evaluations without improvement (0: never)", 0, 1000000)      \
    F(max_minutes, 0.0f, "stop before a step would end past these minutes (0: none)", 0, 1e7f,     \
      RS_CLOSED)                                                                                   \
    I(threads, 0, "training threads, one shard of each batch each (0: one per online CPU)", 0,     \
      RS_MAX_THREADS)

/* Every key, the model's then training's: the order of the checkpoint's
 * config section and of the printouts. */
#define RS_CONFIG_FIELDS(I, F, E) RS_MODEL_CONFIG_FIELDS(I, F, E) RS_TRAIN_CONFIG_FIELDS(I, F, E)

#define RS_CFG_I(name, def, help, lo, hi) int name;
#define RS_CFG_F(name, def, help, lo, hi, open) float name;
#define RS_CFG_E(name, def, help, names) int name;
/* What a model is besides its weights and vocabularies: its sizes and how it
 * reads and writes text (rs_model's cfg). */
typedef struct {
    RS_MODEL_CONFIG_FIELDS(RS_CFG_I, RS_CFG_F, RS_CFG_E)
} rs_model_config;

/* How a model is or was trained (rs_model's train: the checkpoint keeps the
 * run's settings, for --resume and for people). */
typedef struct {
    RS_TRAIN_CONFIG_FIELDS(RS_CFG_I, RS_CFG_F, RS_CFG_E)
} rs_train_config;
#undef RS_CFG_I
#undef RS_CFG_F
#undef RS_CFG_E

/* The whole configuration, as options, configuration files and the
 * checkpoint's config section give it: the model's and training's. */
typedef struct {
    rs_model_config model;
    rs_train_config train;
} rs_config;

void rs_config_defaults(rs_config *cfg);

/* Sets one field from text; fails on an unknown key, a malformed value or one
 * outside the field's range (the message names the key and the range). */
int rs_config_set(rs_config *cfg, const char *key, const char *value, rs_error *err);

/* The same, but messages name the command-line option (--batch-size). */
int rs_config_set_option(rs_config *cfg, const char *key, const char *value, rs_error *err);

/* ", from 1 to 65536" or ", in (0, 10]": the allowed values of a numeric field
 * for --help ("" for flags, names and unknown keys). */
void rs_config_range(const char *key, char *buf, size_t size);

/* Whether the field is a flag (an int from 0 to 1). */
int rs_config_is_flag(const char *key);

/* The fields --resume may give a value other than the checkpoint's: only how
 * long and at what pace to train, and what to save, not what is trained
 * (NULL-terminated). */
extern const char *const rs_config_resumable[];
int rs_config_may_change_on_resume(const char *key);

/* Checks what no single field can: options that contradict each other. */
int rs_config_check(const rs_config *cfg, rs_error *err);

/* Writes "key=value\n" lines, one per field (the checkpoint's config section). */
void rs_config_write(const rs_config *cfg, FILE *out);

/* One line "key=value key=value …" for people (floats with %g). */
void rs_config_print(const rs_config *cfg, FILE *out);

/* Formats the value of one field for people (floats with %g); fails for an unknown key. */
int rs_config_format(const rs_config *cfg, const char *key, char *buf, size_t size);

/* Parses text written by rs_config_write (unknown keys are an error). */
int rs_config_parse(rs_config *cfg, const char *text, rs_error *err);

/* The index of name in a NULL-terminated table of names, or -1. */
int rs_config_name_index(const char *const *names, const char *name);

/* The section of a configuration file a key belongs in: "model" (the sizes
 * and the attention), "data" (text and vocabulary settings) or "training". */
const char *rs_config_section(const char *key);

/* 1 when a number's text starts as a number is written (a digit, a '.',
 * or '-' then one of them; not 0x…), 0 otherwise: strtol and strtod skip
 * leading white space and take a '+', so " 5" and "+5" would pass for 5,
 * strtod reads "0x10" as 16, and every
 * numeric option and setting is read through this check first. */
int rs_config_plain_number(const char *text);

#endif
