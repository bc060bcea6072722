#include <string.h>

#include <stdlib.h>

#include "model/codec.h"
#include "text/spm.h"

int rs_codec_init(rs_codec *codec, const rs_model_config *cfg, rs_error *err)
{
    memset(codec, 0, sizeof *codec);
    codec->lowercase = cfg->lowercase;
    codec->post = cfg->post_process;
    (void)err; /* with spm, pieces come from the SentencePiece models */
    codec->mode = cfg->tokenizer == RS_TOKENIZER_CHAR    ? RS_TOK_CHAR
                  : cfg->tokenizer == RS_TOKENIZER_SPACE ? RS_TOK_SPACE
                                                         : RS_TOK_WORD;
    return 0;
}

int rs_codec_set_spm(rs_codec *codec, int side, const char *blob, size_t len, rs_error *err)
{
    rs_spm **slot = side == RS_SIDE_SRC ? &codec->spm_src : &codec->spm_tgt;
    rs_spm *spm;
    if (rs_spm_load(&spm, blob, len, err))
        return -1;
    rs_spm_free(*slot);
    *slot = spm;
    return 0;
}

int rs_codec_for_model(rs_codec *codec, const rs_model *model, rs_error *err)
{
    if (rs_codec_init(codec, &model->cfg, err))
        return -1;
    if (model->cfg.tokenizer != RS_TOKENIZER_SPM)
        return 0;
    if (!model->spm_src || !model->spm_tgt)
        return rs_fail(err, "the model uses SentencePiece but holds no SentencePiece models");
    if (rs_codec_set_spm(codec, RS_SIDE_SRC, model->spm_src, model->spm_src_len, err) ||
        rs_codec_set_spm(codec, RS_SIDE_TGT, model->spm_tgt, model->spm_tgt_len, err)) {
        rs_codec_free(codec);
        return -1;
    }
    return 0;
}

void rs_codec_free(rs_codec *codec)
{
    rs_spm_free(codec->spm_src);
    rs_spm_free(codec->spm_tgt);
    memset(codec, 0, sizeof *codec);
}

int rs_codec_tokens(const rs_codec *codec, int side, const char *raw, rs_tokens *out, rs_error *err)
{
    const rs_spm *spm = side == RS_SIDE_SRC ? codec->spm_src : codec->spm_tgt;
    if (!spm)
        return rs_text_to_tokens(raw, strlen(raw), codec->lowercase, codec->mode, out, err);
    char *normalized;
    if (rs_text_normalize(raw, strlen(raw), codec->lowercase, &normalized, err))
        return -1;
    int rc = rs_spm_encode(spm, normalized, out, err);
    free(normalized);
    return rc;
}

int rs_codec_text(const rs_codec *codec, int side, const char *const *tokens, int count, char **out,
                  rs_error *err)
{
    const rs_spm *spm = side == RS_SIDE_SRC ? codec->spm_src : codec->spm_tgt;
    if (spm)
        return rs_spm_decode(spm, tokens, count, out, err);
    return rs_detokenize_array(tokens, count, codec->mode, out, err);
}

int rs_codec_post_process(const rs_codec *codec, int kind, const char *text, char **out,
                          rs_error *err)
{
    return rs_post_process(text, kind < 0 ? codec->post : kind, out, err);
}

void rs_ids_to_tokens(const rs_vocab *vocab, const int *ids, int count, const char **out)
{
    for (int i = 0; i < count; i++)
        out[i] = ids[i] >= 0 && ids[i] < vocab->size ? vocab->tokens[ids[i]] : "<unk>";
}
