/* How a model turns raw text into tokens and tokens back into text, as its
 * configuration says (lower-casing, tokenizer word/char/spm/space). Everything it
 * needs is inside the model, so translation needs nothing but the checkpoint. */
#ifndef RS_CODEC_H
#define RS_CODEC_H

#include "model/model.h"
#include "text/text.h"

typedef struct rs_spm rs_spm;

typedef struct {
    int lowercase;
    int mode;                  /* RS_TOK_WORD, _CHAR or _SPACE when no SentencePiece */
    rs_spm *spm_src, *spm_tgt; /* subword models, or NULL */
    int post;                  /* RS_POST_*: the configuration's post_process, for output text */
} rs_codec;

enum { RS_SIDE_SRC = 0, RS_SIDE_TGT = 1 };

/* From the text settings of a configuration (and the model's SentencePiece
 * models when it has them): before a model exists, and for a loaded one.
 * With tokenizer "spm", rs_codec_set_spm must give both sides' models. */
int rs_codec_init(rs_codec *codec, const rs_model_config *cfg, rs_error *err);
int rs_codec_set_spm(rs_codec *codec, int side, const char *blob, size_t len, rs_error *err);
int rs_codec_for_model(rs_codec *codec, const rs_model *model, rs_error *err);
void rs_codec_free(rs_codec *codec);

/* Normalises and tokenizes raw text for one side. */
int rs_codec_tokens(const rs_codec *codec, int side, const char *raw, rs_tokens *out,
                    rs_error *err);

/* Tokens of one side back to text. */
int rs_codec_text(const rs_codec *codec, int side, const char *const *tokens, int count, char **out,
                  rs_error *err);

/* The text a reader gets from detokenized output text (or from a reference
 * line of the same pre-segmented data): kind (RS_POST_*), or the codec's own
 * post_process when kind < 0. *out is new. */
int rs_codec_post_process(const rs_codec *codec, int kind, const char *text, char **out,
                          rs_error *err);

/* Token ids to their strings (no copies; valid while the vocabulary lives). */
void rs_ids_to_tokens(const rs_vocab *vocab, const int *ids, int count, const char **out);

#endif
