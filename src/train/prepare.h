/* A training run before its first step (train/prepare.c): its model
 * directory claimed, its pairs read and tokenized, its text codec (with
 * SentencePiece models read or trained), its model (new, or the one --resume
 * loaded: train/resume.h), the watched sentences, and the pairs as id
 * sequences for rs_train. As everywhere below cmd/, nothing here prints:
 * what a command should tell comes back to it as text (rs_train_note). */
#ifndef RS_PREPARE_H
#define RS_PREPARE_H

#include <stddef.h>

#include "common/error.h"
#include "data/dataset.h"
#include "model/codec.h"
#include "model/config.h"
#include "model/model.h"
#include "text/corpus.h"
#include "train/watch.h"

/* What a function here returns, besides 0 and -1 (a failure: a file, memory),
 * when the request does not fit what it finds (a directory that holds another
 * model, a checkpoint without training state, other data): the caller's
 * mistake, which a command reports as bad usage. err says why either way. */
enum { RS_TRAIN_REFUSED = -2 };

/* Locks the run's directory dir (rs_train_lock, creating it; *lock is the
 * descriptor to rs_train_unlock) and checks what it holds: without resume, a
 * directory that holds a model is refused unless overwrite, which clears it
 * (rs_train_clear_dir); with resume, a directory whose run stopped before its
 * first save (a model there, but no last.ckpt) is refused. 0, -1 (the lock
 * or the clearing failed) or RS_TRAIN_REFUSED. */
int rs_train_claim_dir(const char *dir, int resume, int overwrite, int *lock, rs_error *err);

/* rs_train_claim_dir by rank 0 alone (under mpirun rank 0 alone writes the
 * model directory), its verdict agreed by every rank (dist.h): 0 on every
 * rank, or rank 0's status and message on every rank, so that a directory
 * rank 0 cannot use stops every rank before any work. *made: rank 0 found no
 * directory there (the run makes it; rs_rundir_forget removes it again). */
int rs_train_claim_dir_agreed(const char *dir, int resume, int overwrite, int *lock, int *made,
                              rs_error *err);

/* The first option of cfg that does nothing without a dev set ("--dev-bleu",
 * "--dev-translate", "--patience", "--lr-decay"), or NULL. */
const char *rs_train_needs_dev_set(const rs_train_config *cfg);

/* A line for the user about work that takes a while, given before the work
 * ("training a 8000-piece SentencePiece model for the source side"), or
 * about the data ("train.tsv: 2 pairs with an empty side left out, ..."); the
 * text has no newline. */
typedef void (*rs_train_note)(void *ctx, const char *text);

/* What a run is given besides its configuration: files as named (a TSV of
 * pairs, or a source and a target file; NULL for what is not given). */
typedef struct {
    const char *train_tsv, *train_src, *train_tgt; /* training pairs: one of the two forms */
    const char *dev_tsv, *dev_src, *dev_tgt;       /* dev pairs, or none */
    int swap;                                      /* exchange source and target */
    const char *spm_src,
        *spm_tgt; /* SentencePiece models to read; NULL: trained (cfg.model.subwords) */
    /* Vocabulary files (rs_vocab_read_file); NULL: the training data's. With
     * cfg.model.shared_vocab the one given (or both, the same file) is both sides'. */
    const char *src_vocab, *tgt_vocab;
    int opennmt_vocabs;     /* vocabulary files as OpenNMT-py reads them: one that does not
                           exist yet is built from the training data and written there, as
                           onmt_build_vocab would, and each is cut to its first
                           cfg.train.max_vocab tokens (OpenNMT-py's src_vocab_size) */
    const char *watch_file; /* watched sentences; NULL: the first dev pairs, unless no_watch */
    int no_watch;
    const char *dev_align;  /* gold links of the dev pairs, or NULL */
    float align_threshold;  /* hard links of the dev alignments: 0 = argmax, else weights >= it */
    int strict;             /* a pair with an empty side is an error (else left out, noted) */
    int tokenizer_given;    /* --tokenizer was given: text that looks pre-segmented is taken
                              as the user says, not refused (train/segmented.h) */
    int post_process_given; /* --post-process or --remove-bpe was given */
    rs_train_note note;     /* may be NULL; also warnings ("… left out") */
    void *note_ctx;
} rs_train_inputs;

/* Everything a run holds, from rs_train_run_init to rs_train_run_free. */
typedef struct {
    int lock; /* the directory's lock (rs_train_claim_dir), or -1 */
    rs_pairs train_pairs, dev_pairs;
    rs_tokenized train_tok, dev_tok; /* until the datasets are built */
    rs_dataset train, dev;
    rs_model model;
    rs_train_state state;
    rs_codec codec;
    rs_watch watch;    /* watched sentences and dev gold links */
    char *spm_blob[2]; /* SentencePiece models until the model owns them */
    size_t spm_len[2];
    int skipped; /* training pairs longer than cfg.train.max_len, left out */
} rs_train_run;

void rs_train_run_init(rs_train_run *run);

/* Frees what the run holds and releases the directory's lock. */
void rs_train_run_free(rs_train_run *run);

/* Reads and tokenizes the training and dev pairs (every rank reads them;
 * a failure on one is a failure on all), makes the text codec, reads the
 * watched sentences and gold links, makes a new model unless resume, and
 * builds the datasets. With resume the codec is the model's, which
 * rs_resume_load has loaded; otherwise it is made from cfg, with
 * SentencePiece models read from in->spm_src/spm_tgt or trained on the
 * normalised training sentences with cfg->model.subwords pieces each (by rank 0,
 * which sends them to the others); the new model's vocabularies are the files
 * in->src_vocab, in->tgt_vocab, else the training data's (cfg->train.min_freq,
 * cfg->train.max_vocab; with cfg->model.shared_vocab one of both sides' tokens, for both);
 * their sizes go into cfg; its weights are drawn from cfg->train.seed. With resume,
 * vocabulary files given must hold the checkpoint's vocabularies
 * (RS_TRAIN_REFUSED otherwise). Training pairs longer than cfg->train.max_len
 * are left out (counted in run->skipped). Pairs with an empty side, training
 * or dev, are left out and noted (in->strict: refused, with file and line);
 * the fingerprint a checkpoint records is of the pairs kept, so a resumed
 * run that skips the same pairs finds its data. A new run on training text
 * that looks pre-segmented (train/segmented.h) is refused unless
 * in->tokenizer_given; with --tokenizer space and no post_process given,
 * cfg->model.post_process becomes the kind found (noted). */
int rs_train_prepare(const rs_train_inputs *in, rs_config *cfg, int resume, rs_train_run *run,
                     rs_error *err);

/* --log FILE, checked by the rule of every output (train/output.h): it is
 * appended to, not replaced, but is never one of the run's inputs (in's
 * files, the --config file config_path), a checkpoint, or a file of another
 * run's directory but its train.log. */
int rs_train_log_check(const rs_train_inputs *in, const char *config_path, const char *log_path,
                       rs_error *err);

/* DIR/config.yaml: a copy of the --config file the run was started with
 * (Joey NMT keeps one too), its text as read (text[size]: gzip
 * decompressed, line ends as '\n'; a pipe cannot be read again), written as
 * every output is (train/output.h); `info -m DIR --config` reads its data
 * paths back. A resumed run given --config again replaces it; the copy
 * itself given is left be. */
int rs_train_copy_config(const char *dir, const char *config_path, const char *text, size_t size,
                         rs_error *err);

#endif
