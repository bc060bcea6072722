/* A model: its configuration, both vocabularies and its parameters in one
 * buffer, plus what training needs to resume (Adam moments, counters, RNG).
 * Everything here is what a checkpoint holds. */
#ifndef RS_MODEL_H
#define RS_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "model/config.h"
#include "model/params.h"
#include "common/rng.h"
#include "model/vocab.h"

/* A model: its configuration (sizes, text settings), vocabularies and
 * weights; and the settings of the run that trained it, which its checkpoint
 * keeps beside them (for --resume, and for people). */
typedef struct {
    rs_model_config cfg;
    rs_train_config train;
    rs_layout layout;
    rs_vocab src_vocab, tgt_vocab;
    float *params; /* [layout.total] */
    rs_tensors w;  /* named views into params */
    /* SentencePiece models (serialized protobufs), when subwords are used. */
    char *spm_src, *spm_tgt;
    size_t spm_src_len, spm_tgt_len;
} rs_model;

/* The data a run trains on, as training reads it (rs_data_fingerprint_of in
 * train.h says what is hashed and why). known = 0: not recorded (a checkpoint
 * written before fingerprints, or a state never trained). */
typedef struct {
    int known;
    uint32_t train_pairs, train_src_crc, train_tgt_crc;
    uint32_t dev_pairs, dev_src_crc, dev_tgt_crc;
} rs_data_fingerprint;

typedef struct {
    /* [layout.total] each: the optimizer's state (train.optimizer), named
     * for Adam's m and v, which they hold for Adam; Adadelta's E[g²] and
     * E[Δθ²]; Adagrad's Σ g² in adam_v; zero for SGD. */
    float *adam_m, *adam_v;
    int64_t step;         /* updates done */
    int32_t epoch;        /* epochs completed */
    int64_t batches_done; /* batches of the current epoch already trained on */
    float best_dev_loss;  /* per token; INFINITY when none */
    float best_dev_bleu;  /* -1 when none */
    int32_t bad_evals;    /* evaluations without improvement (early stopping) */
    float lr_scale;       /* learning-rate decay factor */
    rs_rng rng;
    rs_data_fingerprint data; /* what step, epoch and batches_done refer to */
    /* The current epoch's updates so far: their summed loss (over target
     * tokens, nats) and tokens, so that a run resumed in mid-epoch logs the
     * epoch's mean train loss, not the mean since the resume. epoch_loss is
     * NaN when not known (a checkpoint written before they were kept, resumed
     * in mid-epoch): that epoch's train loss is then not logged. */
    double epoch_loss;
    int64_t epoch_tokens;
    int from_checkpoint; /* 1: read from a checkpoint's training sections; 0: fresh */
} rs_train_state;

/* Allocates parameters for cfg (vocab sizes taken from cfg) with all-zero
 * weights; vocabularies must be filled by the caller. */
int rs_model_alloc(rs_model *model, const rs_config *cfg, rs_error *err);

/* The model's configuration and its training run's together, as the
 * checkpoint's config section and the printouts give them. */
rs_config rs_model_settings(const rs_model *model);
void rs_model_free(rs_model *model);

/* Uniform in [-cfg.train.init_scale, cfg.train.init_scale], biases 0. */
void rs_model_init_random(rs_model *model, rs_rng *rng);

int rs_train_state_alloc(rs_train_state *state, const rs_model *model, rs_error *err);
void rs_train_state_free(rs_train_state *state);

#endif
