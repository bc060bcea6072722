#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

rs_config rs_model_settings(const rs_model *model)
{
    return (rs_config){model->cfg, model->train};
}

int rs_model_alloc(rs_model *model, const rs_config *cfg, rs_error *err)
{
    memset(model, 0, sizeof *model);
    model->cfg = cfg->model;
    model->train = cfg->train;
    if (rs_layout_init(&model->layout, &cfg->model, err))
        return -1;
    model->params = rs_calloc_large(model->layout.total, sizeof(float), err);
    if (!model->params)
        return rs_fail_memory(err, (double)model->layout.total * sizeof(float),
                              "the model's parameters");
    rs_tensors_bind(&model->w, &model->layout, model->params);
    return 0;
}

void rs_model_free(rs_model *model)
{
    free(model->params);
    rs_vocab_free(&model->src_vocab);
    rs_vocab_free(&model->tgt_vocab);
    free(model->spm_src);
    free(model->spm_tgt);
    memset(model, 0, sizeof *model);
}

void rs_model_init_random(rs_model *model, rs_rng *rng)
{
    float scale = model->train.init_scale;
    for (int i = 0; i < RS_NUM_PARAMS; i++) {
        const rs_tensor_info *t = &model->layout.info[i];
        float *p = model->params + t->offset;
        int is_bias = t->cols == 0 && i != RS_P_att_v;
        for (size_t k = 0; k < t->size; k++)
            p[k] = is_bias ? 0.0f : (float)((2.0 * rs_rng_uniform(rng) - 1.0) * scale);
    }
}

int rs_train_state_alloc(rs_train_state *state, const rs_model *model, rs_error *err)
{
    memset(state, 0, sizeof *state);
    state->adam_m = rs_calloc(model->layout.total, sizeof(float), err);
    state->adam_v = rs_calloc(model->layout.total, sizeof(float), err);
    if (!state->adam_m || !state->adam_v) {
        rs_train_state_free(state);
        return -1;
    }
    state->best_dev_loss = INFINITY;
    state->best_dev_bleu = -1.0f;
    state->lr_scale = 1.0f;
    rs_rng_seed(&state->rng, (uint64_t)model->train.seed);
    return 0;
}

void rs_train_state_free(rs_train_state *state)
{
    free(state->adam_m);
    free(state->adam_v);
    memset(state, 0, sizeof *state);
}
