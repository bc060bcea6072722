#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gradcheck.h"
#include "nn/network.h"
#include "nn/vecmath.h"
#include "model/params.h"
#include "tinymodel.h"

static const int s0[] = {4, 5, 6}, s1[] = {7}, s2[] = {8, 9, 4, 5, 6}, s3[] = {0};
const int *const tiny_srcs[TINY_SENTENCES] = {s0, s1, s2, s3};
const int tiny_src_counts[TINY_SENTENCES] = {3, 1, 5, 0};
const int tiny_kinds[TINY_KINDS] = {RS_ATT_ADDITIVE, RS_ATT_GENERAL, RS_ATT_SCALED_DOT};

void tiny_model_shaped(rs_model *model, const tiny_shape *shape, float scale, unsigned seed)
{
    rs_config cfg;
    rs_error err = {{0}};
    rs_config_defaults(&cfg);
    cfg.model.src_vocab = shape->src_vocab, cfg.model.tgt_vocab = shape->tgt_vocab,
    cfg.model.emb = shape->emb;
    cfg.model.hidden = shape->hidden, cfg.model.att = shape->att, cfg.model.maxout = shape->maxout;
    cfg.model.attention = shape->attention;
    ck_assert_msg(rs_model_alloc(model, &cfg, &err) == 0, "%s", err.msg);
    fill_uniform(model->params, model->layout.total, scale, seed);
}

void tiny_model_with_words(rs_model *model, int hidden, const char *src_token, unsigned seed)
{
    const tiny_shape shape = {6, 5, 3, hidden, 5, 2, RS_ATT_ADDITIVE};
    rs_error err = {{0}};
    tiny_model_shaped(model, &shape, 1.0f, seed);
    ck_assert(!rs_vocab_init(&model->src_vocab, &err));
    ck_assert(!rs_vocab_init(&model->tgt_vocab, &err));
    ck_assert_int_eq(rs_vocab_add(&model->src_vocab, "das", &err), RS_RESERVED);
    ck_assert_int_eq(rs_vocab_add(&model->src_vocab, src_token, &err), RS_RESERVED + 1);
    ck_assert_int_eq(rs_vocab_add(&model->tgt_vocab, "the", &err), RS_RESERVED);
}

void tiny_model_make(rs_model *model, const char *attention, float scale, float eos_bias,
                     unsigned seed)
{
    const tiny_shape shape = {10, 12, 4, 5, 6, 3, rs_attention_kind_parse(attention)};
    tiny_model_shaped(model, &shape, scale, seed);
    model->w.out_bw[RS_EOS] += eos_bias;
}

void tiny_model_of_kind(rs_model *model, int kind)
{
    static const struct {
        unsigned seed;
        float eos_bias;
    } choice[] = {[RS_ATT_ADDITIVE] = {34, 0.8f},
                  [RS_ATT_GENERAL] = {31, 1.0f},
                  [RS_ATT_SCALED_DOT] = {31, 1.0f}};
    tiny_model_make(model, rs_attention_kind_name(kind), 0.5f, choice[kind].eos_bias,
                    choice[kind].seed);
}

void tiny_step_output(const rs_workspace *ws, const rs_readout_weights *out, int rows,
                      float *logits, float *lse)
{
    const rs_readout_acts acts = {.tmax = ws->tmax, .logits = logits};
    rs_readout_logits_forward(&acts, rows, out);
    for (int r = 0; r < rows; r++) {
        const float *row = logits + (size_t)r * out->V, max = rs_vmax(row, (size_t)out->V);
        lse[r] = max + (float)log(rs_vexp_shift_total(row, max, (size_t)out->V));
    }
}

double tiny_forced_logprob(const rs_model *model, const int *src, int src_count, const int *tgt,
                           int tgt_count, float *probs)
{
    rs_error err;
    rs_workspace ws;
    rs_batch batch;
    ck_assert(rs_workspace_alloc(&ws, model, 1, src_count + 1, tgt_count + 1, &err) == 0);
    ck_assert(rs_batch_alloc(&batch, 1, src_count + 1, tgt_count + 1, &err) == 0);
    ck_assert_msg(rs_batch_fill(&batch, 1, &src, &src_count, &tgt, &tgt_count, &err) == 0, "%s",
                  err.msg);
    const rs_network_weights w = rs_network_weights_of(model);
    double nll = rs_network_forward(&ws, &w, &batch);
    if (probs)
        memcpy(probs, ws.probs, sizeof(float) * (size_t)(tgt_count + 1) * model->cfg.tgt_vocab);
    rs_batch_free(&batch);
    rs_workspace_free(&ws);
    return -nll;
}
