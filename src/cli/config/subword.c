/* Subword settings of Joey NMT 2 and OpenNMT-py files, read as rnnsearch's
 * SentencePiece options or refused with what to write instead: a file that
 * asks for subwords is never trained on as whitespace-split raw text.
 *
 *   Joey NMT 2 (data: src: / trg:, each side's keys dotted):
 *     level: bpe, tokenizer_type: sentencepiece, tokenizer_cfg: model_file: F
 *       -> tokenizer: spm, spm_src: F (spm_tgt: for trg)
 *     tokenizer_type: subword-nmt (codes applied while reading): refused;
 *   OpenNMT-py: transforms: [sentencepiece], src_subword_model: F,
 *     tgt_subword_model: G -> spm_src: F, spm_tgt: G; other transforms refused.
 *
 * Joey NMT 1's flat level: bpe (files already split into BPE pieces) is the
 * table's tokenizer: space (src/cli/config/alias.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/config/edit.h"
#include "cli/config/rules.h"

#define SUBWORD_NMT                                                                                \
    "rnnsearch does not apply BPE codes while reading: apply them to the files first "             \
    "(subword-nmt apply-bpe) and read the pieces with tokenizer: space, or give a "                \
    "SentencePiece model (tokenizer_type: sentencepiece, tokenizer_cfg: model_file: FILE; "        \
    "rnnsearch's spm_src:/spm_tgt:)"

static int is(const char *value, const char *name)
{
    return value && !strcasecmp(value, name);
}

/* Whether a number written in the file is zero ("0", "0.0", "0."). */
static int is_zero(const char *value)
{
    char *end;
    return value && strtod(value, &end) == 0 && end != value && !*end;
}

/* The rest of a side's tokenizer_cfg (data: src.tokenizer_cfg.*): how the
 * SentencePiece model was trained says nothing to rnnsearch; sampling and
 * Moses pre-tokenization it does not do. spm: the side is SentencePiece's;
 * type: its tokenizer_type entry, or -1 (with a tokenizer refused, the
 * reason is given once, there). */
static int joey_tokenizer_cfg(rs_settings *s, const char *path, const char *side, int spm, int type,
                              char **given, int *drop, rs_error *err)
{
    char cfg[64];
    int status = 0;
    snprintf(cfg, sizeof cfg, "%s.tokenizer_cfg.", side);
    for (int i = 0; i < s->count; i++) {
        rs_setting *it = &s->items[i];
        if (drop[i] || given[i] || it->problem || !it->section || strcmp(it->section, "data") ||
            strncmp(it->key, cfg, strlen(cfg)))
            continue;
        const char *name = it->key + strlen(cfg), *v = rs_config_value(s, i);
        if (!spm) {
            if (type >= 0 && s->items[type].problem)
                drop[i] = 1;
            continue; /* else an unknown key, reported so */
        }
        if (!strcmp(name, "model_type") || !strcmp(name, "character_coverage") ||
            !strcmp(name, "vocab_size") || !strcmp(name, "nbest_size") ||
            (!strcmp(name, "pretokenizer") && is(v, "none")) ||
            (!strcmp(name, "alpha") && is_zero(v)))
            drop[i] = 1;
        else if (!strcmp(name, "pretokenizer"))
            status = rs_config_refuse(it, err,
                                      "%s:%d: '%s: %s' (Joey NMT 2): rnnsearch gives SentencePiece "
                                      "the text as it is (pretokenizer: none); tokenize the files "
                                      "first if the model was trained on tokenized text",
                                      path, it->line, it->key, v ? v : "");
        else if (!strcmp(name, "alpha"))
            status = rs_config_refuse(it, err,
                                      "%s:%d: '%s: %s' (Joey NMT 2): rnnsearch segments each "
                                      "sentence one way (no subword sampling): alpha: 0",
                                      path, it->line, it->key, v ? v : "");
        if (status)
            return -1;
    }
    return 0;
}

/* One side of a Joey NMT 2 file: data: src.* or trg.*. */
static int joey_side(rs_settings *s, const char *path, const char *side, char **given, int *drop,
                     rs_error *err)
{
    char key[64];
    const int is_src = !strcmp(side, "src");
    snprintf(key, sizeof key, "%s.level", side);
    const int level = rs_config_find(s, drop, "data", key);
    snprintf(key, sizeof key, "%s.tokenizer_type", side);
    const int type = rs_config_find(s, drop, "data", key);
    snprintf(key, sizeof key, "%s.tokenizer_cfg.model_file", side);
    const int model = rs_config_find(s, drop, "data", key);
    const char *lv = rs_config_value(s, level), *ty = rs_config_value(s, type);
    const int bpe = is(lv, "bpe");
    int spm = 0, status = 0;
    if (type >= 0 && !bpe)
        status = rs_config_refuse(&s->items[type], err,
                                  "%s:%d: '%s.tokenizer_type: %s' (Joey NMT 2): a tokenizer splits "
                                  "level: bpe only; for subwords write level: bpe",
                                  path, s->items[type].line, side, ty ? ty : "");
    else if (bpe && type >= 0 && is(ty, "subword-nmt"))
        status = rs_config_refuse(&s->items[type], err,
                                  "%s:%d: '%s.tokenizer_type: %s' (Joey NMT 2): %s", path,
                                  s->items[type].line, side, ty, SUBWORD_NMT);
    else if (bpe && type >= 0 && !is(ty, "sentencepiece"))
        status = rs_config_refuse(&s->items[type], err,
                                  "%s:%d: '%s.tokenizer_type: %s' (Joey NMT 2): tokenizer_type is "
                                  "sentencepiece (rnnsearch's tokenizer: spm) or subword-nmt",
                                  path, s->items[type].line, side, ty ? ty : "");
    else if (bpe && model < 0)
        /* Joey NMT 2's default tokenizer for bpe is SentencePiece, which needs its model. */
        status = rs_config_refuse(
            &s->items[level], err,
            "%s:%d: '%s.level: bpe' (Joey NMT 2) without tokenizer_cfg: model_file: Joey NMT 2 "
            "splits level: bpe text with a SentencePiece model: give tokenizer_type: "
            "sentencepiece and tokenizer_cfg: model_file: FILE (rnnsearch's %s: FILE), or "
            "subwords: N to train one; text already split into BPE pieces is tokenizer: space",
            path, s->items[level].line, side, is_src ? "spm_src" : "spm_tgt");
    else if (bpe)
        spm = 1;
    if (status)
        return -1;
    if (spm) {
        if (rs_config_rename(s, level, given, "data", "tokenizer", "spm", err) ||
            rs_config_rename(s, model, given, "data", is_src ? "spm_src" : "spm_tgt", NULL, err))
            return -1;
        if (type >= 0)
            drop[type] = 1;
        snprintf(key, sizeof key, "%s.voc_file", side);
        const int voc = rs_config_find(s, drop, "data", key);
        if (voc >= 0 &&
            rs_config_refuse(&s->items[voc], err,
                             "%s:%d: '%s' (Joey NMT 2) with a SentencePiece model: rnnsearch takes "
                             "no vocabulary file then (its vocabulary is the model's pieces "
                             "as the training data uses them); leave voc_file out",
                             path, s->items[voc].line, key))
            return -1;
    } else if (model >= 0 &&
               rs_config_refuse(&s->items[model], err,
                                "%s:%d: '%s' (Joey NMT 2): a SentencePiece model goes with "
                                "level: bpe and tokenizer_type: sentencepiece",
                                path, s->items[model].line, s->items[model].key))
        return -1;
    return joey_tokenizer_cfg(s, path, side, spm, type, given, drop, err);
}

/* OpenNMT-py's transforms (at the top level, or a corpus's in data:) and its
 * subword models. */
static int onmt_transforms(rs_settings *s, const char *path, char **given, int *drop, rs_error *err)
{
    const int src_model = rs_config_find(s, drop, NULL, "src_subword_model"),
              tgt_model = rs_config_find(s, drop, NULL, "tgt_subword_model");
    int sentencepiece = 0;
    for (int i = 0; i < s->count; i++) {
        rs_setting *it = &s->items[i];
        const size_t n = strlen(it->key);
        const int top = !it->section && !strcmp(it->key, "transforms"),
                  corpus = it->section && !strcmp(it->section, "data") && n > 11 &&
                           !strcmp(it->key + n - 11, ".transforms");
        if (drop[i] || it->problem || !(top || corpus))
            continue;
        drop[i] = 1;
        for (int k = 0; k < it->count; k++) {
            const char *t = it->values[k];
            if (!strcmp(t, "sentencepiece") && src_model >= 0 && tgt_model >= 0) {
                sentencepiece = 1;
            } else if (strcmp(t, "filtertoolong")) {
                drop[i] = 0;
                if (rs_config_refuse(
                        it, err, "%s:%d: '%s: %s' (OpenNMT-py): %s", path, it->value_lines[k],
                        it->key, t,
                        !strcmp(t, "sentencepiece")
                            ? "give both src_subword_model: and tgt_subword_model: (rnnsearch's "
                              "spm_src:/spm_tgt:)"
                            : "rnnsearch applies no such transform: apply it to the files first; "
                              "it has sentencepiece (src_subword_model/tgt_subword_model: its "
                              "spm_src/spm_tgt) and filtertoolong (src_seq_length: its max_len)"))
                    return -1;
                break;
            }
        }
    }
    const int models[2] = {src_model, tgt_model};
    for (int side = 0; side < 2; side++) {
        const int i = models[side];
        if (i < 0)
            continue;
        if (sentencepiece) {
            if (rs_config_rename(s, i, given, "data", side == 0 ? "spm_src" : "spm_tgt", NULL, err))
                return -1;
        } else if (rs_config_refuse(
                       &s->items[i], err,
                       "%s:%d: '%s' (OpenNMT-py): a subword model is read with "
                       "transforms: [sentencepiece] and both sides' models (rnnsearch's "
                       "spm_src:/spm_tgt:); BPE codes are applied to the files first",
                       path, s->items[i].line, s->items[i].key)) {
            return -1;
        }
    }
    /* Sampling settings: what rnnsearch does when they say none. */
    static const char *const sampling[] = {"src_subword_nbest", "tgt_subword_nbest",
                                           "src_subword_alpha", "tgt_subword_alpha"};
    for (int k = 0; k < 4; k++) {
        const int i = rs_config_find(s, drop, NULL, sampling[k]);
        const char *v = rs_config_value(s, i);
        if (i < 0)
            continue;
        if (k < 2 ? v && !strcmp(v, "1") : is_zero(v))
            drop[i] = 1;
        else if (rs_config_refuse(&s->items[i], err,
                                  "%s:%d: '%s: %s' (OpenNMT-py): rnnsearch segments each sentence "
                                  "one way (no subword sampling): %s",
                                  path, s->items[i].line, sampling[k], v ? v : "",
                                  k < 2 ? "nbest 1" : "alpha 0"))
            return -1;
    }
    return 0;
}

int rs_config_subwords(rs_settings *s, const char *path, char **given, int *drop, rs_error *err)
{
    if (joey_side(s, path, "src", given, drop, err) || joey_side(s, path, "trg", given, drop, err))
        return -1;
    return onmt_transforms(s, path, given, drop, err);
}
