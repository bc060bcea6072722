#include <string.h>

#include "params.h"

int rs_attention_kind_parse(const char *name)
{
    return rs_config_name_index(rs_attention_names, name);
}

const char *rs_attention_kind_name(int kind)
{
    return rs_attention_names[kind];
}

int rs_layout_init(rs_layout *layout, const rs_config *cfg, rs_error *err)
{
    const int Vs = cfg->src_vocab, Vt = cfg->tgt_vocab, m = cfg->emb, n = cfg->hidden;
    const int a = cfg->att, l = cfg->maxout;
    const int kind = cfg->attention;
    if (kind < RS_ATT_ADDITIVE || kind > RS_ATT_SCALED_DOT)
        return rs_fail(err, "unknown attention kind %d", kind);
    const int additive = kind == RS_ATT_ADDITIVE;
    if (Vs < RS_RESERVED || Vt < RS_RESERVED)
        return rs_fail(err, "vocabularies must hold at least the %d reserved ids", RS_RESERVED);
    if (m < 1 || n < 1 || l < 1 || (additive && a < 1))
        return rs_fail(err, "model sizes must be positive (m=%d n=%d a=%d l=%d)", m, n, a, l);
    size_t offset = 0;
    int i = 0;
#define RS_PARAM_INFO(field, nm, r, c)                                          \
    layout->info[i].name = nm;                                                 \
    layout->info[i].rows = (r);                                                \
    layout->info[i].cols = (c);                                                \
    layout->info[i].size = (size_t)(r) * (size_t)((c) > 0 ? (c) : 1);          \
    if ((r) == 0) layout->info[i].size = 0;                                    \
    layout->info[i].offset = offset;                                           \
    offset += layout->info[i].size;                                            \
    i++;
    RS_PARAM_TABLE(RS_PARAM_INFO)
#undef RS_PARAM_INFO
    layout->total = offset;
    return 0;
}

void rs_tensors_bind(rs_tensors *views, const rs_layout *layout, float *buffer)
{
#define RS_PARAM_BIND(field, name, rows, cols) \
    views->field = layout->info[RS_P_##field].size ? buffer + layout->info[RS_P_##field].offset : NULL;
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
