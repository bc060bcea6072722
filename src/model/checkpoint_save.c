/* Writing a checkpoint (docs/checkpoint-format.md): the sections' lengths
 * first, so that the header can say the file's size, then the header, each
 * section in the order of rs_checkpoint_section_names, and the CRC-32 of
 * everything before it, through one atomic file. What the reader
 * (checkpoint.c) would refuse is not written in the first place. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/byteorder.h"
#include "common/crc32.h"
#include "common/fileio.h"
#include "model/checkpoint.h"
#include "model/checkpoint_sections.h"

typedef struct {
    rs_atomic_file *af;
    uint32_t crc; /* of everything written so far */
} writer;

static void w_bytes(writer *w, const void *p, size_t n)
{
    if (w->af->errnum || n == 0)
        return;
    errno = 0;
    if (fwrite(p, 1, n, w->af->f) != n) {
        w->af->errnum = errno ? errno : -1;
        return;
    }
    w->crc = rs_crc32_update(w->crc, p, n);
}

static void w_u32(writer *w, uint32_t v)
{
    unsigned char b[4];
    rs_put_le32(b, v);
    w_bytes(w, b, 4);
}

static void w_u64(writer *w, uint64_t v)
{
    unsigned char b[8];
    rs_put_le64(b, v);
    w_bytes(w, b, 8);
}

static void w_f32s(writer *w, const float *p, size_t count)
{
    unsigned char chunk[4 * 4096];
    while (count > 0) {
        size_t k = count < 4096 ? count : 4096;
        rs_f32_to_le(chunk, p, k);
        w_bytes(w, chunk, 4 * k);
        p += k;
        count -= k;
    }
}

static uint64_t vocab_bytes(const rs_vocab *v)
{
    uint64_t n = 4;
    for (int i = 0; i < v->size; i++)
        n += 4 + strlen(v->tokens[i]);
    return n;
}

static void w_vocab(writer *w, const rs_vocab *v)
{
    w_u32(w, (uint32_t)v->size);
    for (int i = 0; i < v->size; i++) {
        size_t len = strlen(v->tokens[i]);
        w_u32(w, (uint32_t)len);
        w_bytes(w, v->tokens[i], len);
    }
}

static uint64_t params_bytes(const rs_layout *layout)
{
    uint64_t n = 4;
    for (int i = 0; i < RS_NUM_PARAMS; i++)
        if (layout->info[i].size)
            n += 4 + strlen(layout->info[i].name) + 8;
    return n + 4 * (uint64_t)layout->total;
}

/* The index, then the data of each present tensor in the same order. */
static void w_params(writer *w, const rs_layout *layout, const float *params)
{
    uint32_t present = 0;
    for (int i = 0; i < RS_NUM_PARAMS; i++)
        present += layout->info[i].size != 0;
    w_u32(w, present);
    for (int i = 0; i < RS_NUM_PARAMS; i++) {
        const rs_tensor_info *t = &layout->info[i];
        if (!t->size)
            continue;
        w_u32(w, (uint32_t)strlen(t->name));
        w_bytes(w, t->name, strlen(t->name));
        w_u32(w, (uint32_t)t->rows);
        w_u32(w, (uint32_t)t->cols);
    }
    for (int i = 0; i < RS_NUM_PARAMS; i++)
        if (layout->info[i].size)
            w_f32s(w, params + layout->info[i].offset, layout->info[i].size);
}

/* Adam moments follow the order of the params data, tensor by tensor. */
static void w_moments(writer *w, const rs_layout *layout, const float *moments)
{
    for (int i = 0; i < RS_NUM_PARAMS; i++)
        if (layout->info[i].size)
            w_f32s(w, moments + layout->info[i].offset, layout->info[i].size);
}

static void w_train(writer *w, const rs_train_state *s)
{
    unsigned char b[TRAIN_BYTES];
    rs_put_le64(b + 0, (uint64_t)s->step);
    rs_put_le32(b + 8, (uint32_t)s->epoch);
    rs_put_le64(b + 12, (uint64_t)s->batches_done);
    rs_put_le32(b + 20, rs_f32_bits(s->best_dev_loss));
    rs_put_le32(b + 24, rs_f32_bits(s->best_dev_bleu));
    rs_put_le32(b + 28, (uint32_t)s->bad_evals);
    rs_put_le32(b + 32, rs_f32_bits(s->lr_scale));
    for (int i = 0; i < 4; i++)
        rs_put_le64(b + 36 + 8 * i, s->rng.s[i]);
    w_bytes(w, b, sizeof b);
}

/* Pair counts and CRC-32s of the training and dev data, each side (train.h). */
static void w_data(writer *w, const rs_data_fingerprint *d)
{
    const uint32_t v[DATA_BYTES / 4] = {d->train_pairs, d->train_src_crc, d->train_tgt_crc,
                                        d->dev_pairs,   d->dev_src_crc,   d->dev_tgt_crc};
    for (int i = 0; i < DATA_BYTES / 4; i++)
        w_u32(w, v[i]);
}

/* The current epoch's summed loss (f64) and target tokens (model.h). */
static void w_epoch(writer *w, const rs_train_state *s)
{
    w_u64(w, rs_f64_bits(s->epoch_loss));
    w_u64(w, (uint64_t)s->epoch_tokens);
}

/* What the loader would refuse is not written in the first place. */
static int check_vocab(const rs_vocab *v, int expected, const char *which, rs_error *err)
{
    if (v->size != expected)
        return rs_fail(err, "cannot save: %s has %d tokens but the config says %d", which, v->size,
                       expected);
    rs_vocab fresh;
    if (rs_vocab_init(&fresh, err))
        return -1;
    for (int i = 0; i < RS_RESERVED; i++)
        if (strcmp(v->tokens[i], fresh.tokens[i])) {
            rs_fail(err, "cannot save: %s id %d is '%s', not the reserved '%s'", which, i,
                    v->tokens[i], fresh.tokens[i]);
            rs_vocab_free(&fresh);
            return -1;
        }
    rs_vocab_free(&fresh);
    return 0;
}

static int config_text(const rs_config *cfg, char **text, size_t *len, rs_error *err)
{
    *text = NULL;
    *len = 0;
    FILE *mem = open_memstream(text, len);
    if (!mem)
        return rs_fail(err, "out of memory writing the configuration");
    rs_config_write(cfg, mem);
    int bad = ferror(mem);
    if (fclose(mem) || bad) {
        free(*text);
        *text = NULL;
        return rs_fail(err, "out of memory writing the configuration");
    }
    return 0;
}

/* What the loader would refuse of the model and state, refused here. */
static int check_savable(const rs_model *model, const rs_train_state *state, rs_error *err)
{
    if (check_vocab(&model->src_vocab, model->cfg.src_vocab, "the source vocabulary", err) ||
        check_vocab(&model->tgt_vocab, model->cfg.tgt_vocab, "the target vocabulary", err))
        return -1;
    if (state && (!state->adam_m || !state->adam_v))
        return rs_fail(err, "cannot save: training state without Adam moments");
    rs_error bad;
    if (rs_params_check_bounded(&model->layout, model->params, &bad))
        return rs_fail(err, "cannot save: %s", bad.msg);
    return 0;
}

/* Each section's length and whether it is written, known before the header
 * (which gives the file's size); the configuration's text already made. */
typedef struct {
    uint64_t len[S_COUNT];
    int present[S_COUNT];
    char *cfg_text;
} sections;

static void plan_sections(sections *sc, const rs_model *model, const rs_train_state *state)
{
    uint64_t *len = sc->len;
    int *present = sc->present;
    len[S_SRC_VOCAB] = vocab_bytes(&model->src_vocab);
    len[S_TGT_VOCAB] = vocab_bytes(&model->tgt_vocab);
    len[S_SPM_SRC] = model->spm_src_len;
    len[S_SPM_TGT] = model->spm_tgt_len;
    len[S_PARAMS] = params_bytes(&model->layout);
    len[S_ADAM_M] = len[S_ADAM_V] = 4 * (uint64_t)model->layout.total;
    len[S_TRAIN] = TRAIN_BYTES;
    len[S_DATA] = DATA_BYTES;
    len[S_EPOCH] = EPOCH_BYTES;
    present[S_CONFIG] = present[S_SRC_VOCAB] = present[S_TGT_VOCAB] = present[S_PARAMS] = 1;
    present[S_SPM_SRC] = model->spm_src != NULL;
    present[S_SPM_TGT] = model->spm_tgt != NULL;
    present[S_ADAM_M] = present[S_ADAM_V] = present[S_TRAIN] = state != NULL;
    present[S_DATA] = state && state->data.known;
    present[S_EPOCH] = state != NULL;
}

/* The header: magic, version, the sections' count and the file's size. */
static void w_header(writer *w, const sections *sc)
{
    uint32_t count = 0;
    uint64_t file_size = HEADER_BYTES + TRAILER_BYTES;
    for (int s = 0; s < S_COUNT; s++)
        if (sc->present[s]) {
            count++;
            file_size += 4 + strlen(rs_checkpoint_section_names[s]) + 8 + sc->len[s];
        }
    unsigned char header[HEADER_BYTES];
    memcpy(header, RS_CHECKPOINT_MAGIC, 8);
    rs_put_le32(header + 8, RS_CHECKPOINT_VERSION);
    rs_put_le32(header + 12, count);
    rs_put_le64(header + 16, file_size);
    w_bytes(w, header, sizeof header);
}

/* Section s: its name's length, its name, its length, its bytes. */
static void w_section(writer *w, int s, const sections *sc, const rs_model *model,
                      const rs_train_state *state)
{
    w_u32(w, (uint32_t)strlen(rs_checkpoint_section_names[s]));
    w_bytes(w, rs_checkpoint_section_names[s], strlen(rs_checkpoint_section_names[s]));
    w_u64(w, sc->len[s]);
    switch (s) {
    case S_CONFIG: w_bytes(w, sc->cfg_text, sc->len[S_CONFIG]); break;
    case S_SRC_VOCAB: w_vocab(w, &model->src_vocab); break;
    case S_TGT_VOCAB: w_vocab(w, &model->tgt_vocab); break;
    case S_SPM_SRC: w_bytes(w, model->spm_src, model->spm_src_len); break;
    case S_SPM_TGT: w_bytes(w, model->spm_tgt, model->spm_tgt_len); break;
    case S_PARAMS: w_params(w, &model->layout, model->params); break;
    case S_ADAM_M: w_moments(w, &model->layout, state->adam_m); break;
    case S_ADAM_V: w_moments(w, &model->layout, state->adam_v); break;
    case S_TRAIN: w_train(w, state); break;
    case S_DATA: w_data(w, &state->data); break;
    case S_EPOCH: w_epoch(w, state); break;
    }
}

int rs_checkpoint_save(const char *path, const rs_model *model, const rs_train_state *state,
                       rs_error *err)
{
    if (check_savable(model, state, err))
        return -1;
    sections sc = {{0}, {0}, NULL};
    size_t cfg_len;
    const rs_config all = rs_model_settings(model);
    if (config_text(&all, &sc.cfg_text, &cfg_len, err))
        return -1;
    sc.len[S_CONFIG] = cfg_len;
    plan_sections(&sc, model, state);

    rs_atomic_file af;
    if (rs_atomic_open(&af, path, err)) {
        free(sc.cfg_text);
        return -1;
    }
    writer w = {&af, 0};
    w_header(&w, &sc);
    for (int s = 0; s < S_COUNT; s++)
        if (sc.present[s])
            w_section(&w, s, &sc, model, state);
    free(sc.cfg_text);
    unsigned char trailer[TRAILER_BYTES];
    rs_put_le32(trailer, w.crc);
    w_bytes(&w, trailer, sizeof trailer);
    return rs_atomic_commit(&af, err);
}
