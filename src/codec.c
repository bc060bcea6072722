#include <string.h>

#include "codec.h"

int rs_codec_init(rs_codec *codec, const rs_config *cfg, rs_error *err)
{
    memset(codec, 0, sizeof *codec);
    codec->lowercase = cfg->lowercase;
    codec->mode = rs_tokenizer_mode_parse(cfg->tokenizer);
    if (codec->mode < 0)
        return rs_fail(err, "unknown tokenizer '%s' (word, char)", cfg->tokenizer);
    return 0;
}

int rs_codec_for_model(rs_codec *codec, const rs_model *model, rs_error *err)
{
    return rs_codec_init(codec, &model->cfg, err);
}

void rs_codec_free(rs_codec *codec)
{
    memset(codec, 0, sizeof *codec);
}

int rs_codec_tokens(const rs_codec *codec, int side, const char *raw, rs_tokens *out,
                    rs_error *err)
{
    (void)side;
    return rs_text_to_tokens(raw, strlen(raw), codec->lowercase, codec->mode, out, err);
}

int rs_codec_text(const rs_codec *codec, int side, const char *const *tokens, int count,
                  char **out, rs_error *err)
{
    (void)side;
    return rs_detokenize_array(tokens, count, codec->mode, out, err);
}

void rs_ids_to_tokens(const rs_vocab *vocab, const int *ids, int count, const char **out)
{
    for (int i = 0; i < count; i++)
        out[i] = ids[i] >= 0 && ids[i] < vocab->size ? vocab->tokens[ids[i]] : "<unk>";
}
