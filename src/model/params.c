#include <math.h>
#include <string.h>

#include "model/params.h"
#include "model/vocab.h"

int rs_attention_kind_parse(const char *name)
{
    return rs_config_name_index(rs_attention_names, name);
}

const char *rs_attention_kind_name(int kind)
{
    return rs_attention_names[kind];
}

int rs_layout_init(rs_layout *layout, const rs_model_config *cfg, rs_error *err)
{
    const int Vs = cfg->src_vocab, Vt = cfg->tgt_vocab, m = cfg->emb, n = cfg->hidden;
    const int a = cfg->att, l = cfg->maxout;
    const int kind = cfg->attention;
    if (kind < RS_ATT_ADDITIVE || kind > RS_ATT_NONE)
        return rs_fail(err, "unknown attention kind %d", kind);
    if (kind == RS_ATT_DOT)
        return rs_fail(err,
                       "attention 'dot' is no longer a kind of model: it was s·(K h) with a "
                       "learned K, the function of 'general' under another name, and a "
                       "parameter-free s·h cannot be formed (s has n=%d entries, h 2n=%d); use "
                       "'general' (the same tensors, the same results)",
                       n, 2 * n);
    const int additive = kind == RS_ATT_ADDITIVE, tied = cfg->tie_embeddings != 0;
    const int keyed = kind == RS_ATT_GENERAL || kind == RS_ATT_SCALED_DOT;
    if (Vs < RS_RESERVED || Vt < RS_RESERVED)
        return rs_fail(err, "vocabularies must hold at least the %d reserved ids", RS_RESERVED);
    if (Vs > RS_MAX_VOCAB || Vt > RS_MAX_VOCAB)
        return rs_fail(err, "vocabularies of %d and %d tokens: at most %d are supported", Vs, Vt,
                       RS_MAX_VOCAB);
    if (m < 1 || n < 1 || l < 1 || (additive && a < 1))
        return rs_fail(err, "model sizes must be positive (m=%d n=%d a=%d l=%d)", m, n, a, l);
    /* Bounded so that every row and column count below (at most 3n, m + 2n)
     * fits an int; a is unused (and unchecked) without additive attention. */
    if (m > RS_MAX_DIM || n > RS_MAX_DIM || l > RS_MAX_DIM || (additive && a > RS_MAX_DIM))
        return rs_fail(err, "model sizes too large (m=%d n=%d a=%d l=%d): each may be at most %d",
                       m, n, a, l, RS_MAX_DIM);
    if (tied && l != m)
        return rs_fail(err,
                       "tied embeddings need l == m (m=%d l=%d): W_out [Vt, l] is tgt_emb "
                       "[Vt, m]",
                       m, l);
    size_t offset = 0;
    int i = 0;
#define RS_PARAM_INFO(field, nm, r, c)                                                             \
    layout->info[i].name = nm;                                                                     \
    layout->info[i].rows = (r);                                                                    \
    layout->info[i].cols = (c);                                                                    \
    layout->info[i].shares = -1;                                                                   \
    i++;
    RS_PARAM_TABLE(RS_PARAM_INFO)
#undef RS_PARAM_INFO
    /* Sizes and offsets in size_t: rows x cols of the bounds above fits, the
     * sum is checked against RS_MAX_PARAMS as it grows. */
    for (i = 0; i < RS_NUM_PARAMS; i++) {
        rs_tensor_info *t = &layout->info[i];
        t->size = t->rows == 0 ? 0 : (size_t)t->rows * (size_t)(t->cols > 0 ? t->cols : 1);
        t->offset = offset;
        if (t->size > RS_MAX_PARAMS - offset)
            return rs_fail(
                err,
                "model too large: tensor %s [%d, %d] would bring the "
                "parameters past %zu floats (m=%d n=%d a=%d l=%d, vocabularies %d and %d)",
                t->name, t->rows, t->cols, (size_t)RS_MAX_PARAMS, m, n, a, l, Vs, Vt);
        offset += t->size;
    }
    layout->total = offset;
    if (tied)
        layout->info[RS_P_out_W].shares = RS_P_tgt_emb;
    return 0;
}

const rs_tensor_info *rs_tensor_storage(const rs_layout *layout, int i)
{
    const rs_tensor_info *t = &layout->info[i];
    if (t->size)
        return t;
    return t->shares >= 0 ? &layout->info[t->shares] : NULL;
}

void rs_tensors_bind(rs_tensors *views, const rs_layout *layout, float *buffer)
{
    const rs_tensor_info *t;
#define RS_PARAM_BIND(field, name, rows, cols)                                                     \
    t = rs_tensor_storage(layout, RS_P_##field);                                                   \
    views->field = t ? buffer + t->offset : NULL;
    RS_PARAM_TABLE(RS_PARAM_BIND)
#undef RS_PARAM_BIND
}

int rs_param_index(const char *name)
{
    static const char *const names[] = {
#define RS_PARAM_NAME(field, nm, rows, cols) nm,
        RS_PARAM_TABLE(RS_PARAM_NAME)
#undef RS_PARAM_NAME
    };
    for (int i = 0; i < RS_NUM_PARAMS; i++)
        if (!strcmp(names[i], name))
            return i;
    return -1;
}

int rs_params_check_bounded(const rs_layout *layout, const float *params, rs_error *err)
{
    for (int i = 0; i < RS_NUM_PARAMS; i++) {
        const rs_tensor_info *t = &layout->info[i];
        if (!t->size || t->shares >= 0)
            continue;
        for (size_t k = 0; k < t->size; k++) {
            const float w = params[t->offset + k];
            if (!isfinite(w))
                return rs_fail(err,
                               "tensor %s holds %s at entry %zu: a model's weights are finite "
                               "numbers",
                               t->name, isnan(w) ? "NaN" : "an infinity", k);
            if (fabsf(w) > RS_PARAM_MAX_ABS)
                return rs_fail(err,
                               "tensor %s holds %g at entry %zu: a model's weights are at most "
                               "%g in magnitude (larger ones make its products overflow into "
                               "NaN scores and empty alignments)",
                               t->name, (double)w, k, (double)RS_PARAM_MAX_ABS);
        }
    }
    return 0;
}
