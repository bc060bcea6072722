#include <stdlib.h>
#include <string.h>

#include "model/average.h"
#include "model/checkpoint.h"
#include "model/locate.h"

static int vocabs_match(const rs_vocab *a, const rs_vocab *b, const char *side, rs_error *err)
{
    if (a->size != b->size)
        return rs_fail(err, "the %s vocabulary has %d tokens, not %d", side, b->size, a->size);
    for (int i = 0; i < a->size; i++)
        if (strcmp(a->tokens[i], b->tokens[i]))
            return rs_fail(err, "%s token %d is '%s', not '%s'", side, i, b->tokens[i],
                           a->tokens[i]);
    return 0;
}

static int blobs_match(const char *a, size_t a_len, const char *b, size_t b_len)
{
    return a_len == b_len && (!a_len || !memcmp(a, b, a_len));
}

int rs_models_match(const rs_model *a, const rs_model *b, rs_error *err)
{
#define RS_SAME_INT(field)                                                                         \
    if (a->cfg.field != b->cfg.field)                                                              \
        return rs_fail(err, "%s is %d, not %d", #field, b->cfg.field, a->cfg.field);
#define RS_SAME_STR(field, names)                                                                  \
    if (a->cfg.field != b->cfg.field)                                                              \
        return rs_fail(err, "%s is %s, not %s", #field, names[b->cfg.field], names[a->cfg.field]);
    RS_SAME_INT(src_vocab)
    RS_SAME_INT(tgt_vocab)
    RS_SAME_INT(emb)
    RS_SAME_INT(hidden)
    RS_SAME_INT(att)
    RS_SAME_INT(maxout)
    RS_SAME_STR(attention, rs_attention_names)
    RS_SAME_INT(tie_embeddings)
    RS_SAME_INT(lowercase)
    RS_SAME_STR(tokenizer, rs_tokenizer_names)
    RS_SAME_INT(subwords)
#undef RS_SAME_INT
#undef RS_SAME_STR
    if (a->layout.total != b->layout.total)
        return rs_fail(err, "%zu parameters, not %zu", b->layout.total, a->layout.total);
    if (vocabs_match(&a->src_vocab, &b->src_vocab, "source", err) ||
        vocabs_match(&a->tgt_vocab, &b->tgt_vocab, "target", err))
        return -1;
    if (!blobs_match(a->spm_src, a->spm_src_len, b->spm_src, b->spm_src_len) ||
        !blobs_match(a->spm_tgt, a->spm_tgt_len, b->spm_tgt, b->spm_tgt_len))
        return rs_fail(err, "its SentencePiece models differ");
    return 0;
}

int rs_average_add(rs_average *avg, rs_model *model, rs_error *err)
{
    if (avg->count == 0) {
        double *sum = calloc(model->layout.total ? model->layout.total : 1, sizeof *sum);
        if (!sum)
            return rs_fail(err, "out of memory for %zu parameter sums", model->layout.total);
        avg->mean = *model;
        memset(model, 0, sizeof *model);
        avg->sum = sum;
    } else if (rs_models_match(&avg->mean, model, err)) {
        return -1;
    }
    const float *p = avg->count == 0 ? avg->mean.params : model->params;
    for (size_t i = 0; i < avg->mean.layout.total; i++)
        avg->sum[i] += p[i];
    avg->count++;
    return 0;
}

void rs_average_finish(rs_average *avg)
{
    for (size_t i = 0; avg->count && i < avg->mean.layout.total; i++)
        avg->mean.params[i] = (float)(avg->sum[i] / avg->count);
}

void rs_average_free(rs_average *avg)
{
    rs_model_free(&avg->mean);
    free(avg->sum);
    memset(avg, 0, sizeof *avg);
}

int rs_average_checkpoints(rs_average *avg, const char *const *args, int n, rs_error *err)
{
    char path[4096];
    rs_error why;
    for (int i = 0; i < n; i++) {
        rs_model model;
        if (rs_model_locate(args[i], path, sizeof path, err) ||
            rs_checkpoint_load(path, &model, NULL, err))
            return -1;
        const int rc = rs_average_add(avg, &model, &why);
        rs_model_free(&model);
        if (rc)
            return rs_fail(err, "%s does not match %s: %s", path, args[0], why.msg);
    }
    rs_average_finish(avg);
    return 0;
}
