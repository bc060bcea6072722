/* OpenNMT-py 3's keys that take more than a new name (src/cli/config/alias.c
 * renames the others):
 *
 *   data: corpus_1: {path_src, path_tgt} -> data: src, tgt (one corpus);
 *         valid: {path_src, path_tgt}    -> data: dev_src, dev_tgt;
 *   encoder_type: brnn, hidden_size: N   -> model: hidden: N/2 — OpenNMT-py's
 *         bidirectional encoder splits N across its two directions, while
 *         rnnsearch's hidden is each direction's (and the decoder's) size;
 *   dropout: [0.1]                       -> training: dropout: 0.1;
 *   and what OpenNMT-py does unless told otherwise, which rnnsearch does not
 *   by default: optim: sgd, (decay_method: none) the exponential decay of
 *   learning_rate_decay, start_decay_steps and decay_steps (opts.py), and
 *   without a tokenizing transform, text split at spaces (tokenizer: space). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/config/edit.h"
#include "cli/config/rules.h"
#include "model/vocab.h"

/* data: NAME.path_src, NAME.path_tgt, NAME.weight, NAME.path_align: every
 * NAME but "valid" is a training corpus, of which rnnsearch reads one. */
static int corpora(rs_settings *s, const char *path, char **given, int *drop, rs_error *err)
{
    char first[256]; /* the training corpus's name (the key is renamed) */
    size_t first_len = 0;
    for (int i = 0; i < s->count; i++) {
        rs_setting *it = &s->items[i];
        if (drop[i] || given[i] || it->problem || !it->section || strcmp(it->section, "data"))
            continue;
        const char *dot = strrchr(it->key, '.');
        if (!dot)
            continue;
        const char *field = dot + 1;
        const size_t name_len = (size_t)(dot - it->key);
        const int src = !strcmp(field, "path_src"), tgt = !strcmp(field, "path_tgt");
        if (!src && !tgt && strcmp(field, "weight") && strcmp(field, "path_align"))
            continue;
        const int valid = name_len == 5 && !strncmp(it->key, "valid", 5);
        if (!valid && !first_len && name_len < sizeof first) {
            memcpy(first, it->key, name_len);
            first_len = name_len;
        }
        int status = 0;
        if (!valid && (name_len != first_len || strncmp(it->key, first, name_len)))
            status = rs_config_refuse(
                it, err,
                "%s:%d: '%s' (OpenNMT-py): rnnsearch trains on one corpus; join '%.*s' and "
                "'%.*s' into one pair of files",
                path, it->line, it->key, (int)name_len, it->key, (int)first_len, first);
        else if (!strcmp(field, "path_align"))
            status = rs_config_refuse(
                it, err,
                "%s:%d: '%s' (OpenNMT-py): rnnsearch's attention learns without alignment "
                "guidance (dev_align: gold links of the dev pairs scores its AER)",
                path, it->line, it->key);
        else if (!strcmp(field, "weight"))
            drop[i] = 1; /* one corpus: its weight is all */
        else
            status = rs_config_rename(s, i, given, "data",
                                      valid ? (src ? "dev_src" : "dev_tgt") : (src ? "src" : "tgt"),
                                      NULL, err);
        if (status)
            return -1;
    }
    return 0;
}

/* encoder_type and the hidden sizes it splits. */
static int encoder(rs_settings *s, const char *path, char **given, int *drop, rs_error *err)
{
    const int type = rs_config_find(s, drop, NULL, "encoder_type");
    const char *t = rs_config_value(s, type);
    const int brnn = t && !strcmp(t, "brnn");
    if (type >= 0 && !brnn &&
        rs_config_refuse(&s->items[type], err,
                         "%s:%d: 'encoder_type: %s' (OpenNMT-py): rnnsearch's encoder is a "
                         "bidirectional GRU (encoder_type: brnn)",
                         path, s->items[type].line, t ? t : ""))
        return -1;
    if (type >= 0 && brnn)
        drop[type] = 1;
    static const char *const sizes[] = {"rnn_size",     "hidden_size",  "enc_rnn_size",
                                        "dec_rnn_size", "enc_hid_size", "dec_hid_size"};
    for (int k = 0; k < (int)(sizeof sizes / sizeof *sizes); k++) {
        const int i = rs_config_find(s, drop, NULL, sizes[k]);
        if (i < 0)
            continue;
        rs_setting *it = &s->items[i];
        const char *v = rs_config_value(s, i);
        char *end;
        const long n = v ? strtol(v, &end, 10) : 0;
        const int even =
            v && *v >= '0' && *v <= '9' && !*end && n >= 2 && n % 2 == 0 && n <= 2 * 65536;
        int status = 0;
        if (type >= 0 && !brnn)
            drop[i] = 1; /* the encoder's refusal says why */
        else if (type < 0)
            status = rs_config_refuse(
                it, err,
                "%s:%d: '%s: %s' (OpenNMT-py) without encoder_type: OpenNMT-py's default "
                "encoder (rnn) runs one direction of %s units; rnnsearch's is bidirectional, "
                "each direction (and the decoder) 'hidden' units: write encoder_type: brnn "
                "(then %s: N gives hidden N/2, as OpenNMT-py splits N), or hidden: N",
                path, it->line, sizes[k], v ? v : "", v ? v : "N", sizes[k]);
        else if (!even)
            status = rs_config_refuse(it, err,
                                      "%s:%d: '%s: %s' (OpenNMT-py) with encoder_type: brnn: "
                                      "an even number from 2 to 131072, split across the two "
                                      "directions (rnnsearch's hidden: N/2)",
                                      path, it->line, sizes[k], v ? v : "");
        else {
            char half[32];
            snprintf(half, sizeof half, "%ld", n / 2);
            status = rs_config_rename(s, i, given, "model", "hidden", half, err);
        }
        if (status)
            return -1;
    }
    return 0;
}

/* dropout: [0.1], OpenNMT-py's list (one value per dropout_steps stage). */
static int dropout_list(rs_settings *s, const char *path, char **given, int *drop, rs_error *err)
{
    const int i = rs_config_find(s, drop, NULL, "dropout");
    if (i < 0 || !s->items[i].is_list)
        return 0;
    rs_setting *it = &s->items[i];
    if (it->count == 1)
        return rs_config_rename(s, i, given, "training", "dropout", NULL, err);
    return rs_config_refuse(it, err,
                            "%s:%d: 'dropout' (OpenNMT-py) with %d values: OpenNMT-py changes "
                            "dropout at dropout_steps; rnnsearch has one rate: give one value",
                            path, it->line, it->count);
}

/* Whether the file is OpenNMT-py's: a corpus in data:, or its names for the
 * model directory and the steps. */
static int is_opennmt(const rs_settings *s, const int *drop)
{
    for (int i = 0; i < s->count; i++) {
        const rs_setting *it = &s->items[i];
        const char *dot = it->section ? strrchr(it->key, '.') : NULL;
        if (dot && !strcmp(it->section, "data") && !strncmp(dot, ".path_", 6))
            return 1;
    }
    return rs_config_find(s, drop, NULL, "save_model") >= 0 ||
           rs_config_find(s, drop, NULL, "train_steps") >= 0;
}

int rs_config_opennmt(rs_settings *s, const char *path, char **given, int *drop, int *opennmt,
                      rs_error *err)
{
    *opennmt = is_opennmt(s, drop);
    /* OpenNMT-py's training file holds training's batch size at the top level
     * (its translation options are another file's). */
    const int batch = is_opennmt(s, drop) ? rs_config_find(s, drop, NULL, "batch_size") : -1;
    if (batch >= 0 && rs_config_rename(s, batch, given, "training", "batch_size", NULL, err))
        return -1;
    if (corpora(s, path, given, drop, err) || encoder(s, path, given, drop, err) ||
        dropout_list(s, path, given, drop, err))
        return -1;
    /* share_vocab: OpenNMT-py builds and reads src_vocab alone (both sides' tokens). */
    const int share = rs_config_find(s, drop, NULL, "share_vocab"),
              tgt_vocab = rs_config_find(s, drop, NULL, "tgt_vocab");
    const char *sv = rs_config_value(s, share);
    if (*opennmt && tgt_vocab >= 0 && rs_config_find(s, drop, NULL, "src_vocab") >= 0 && sv &&
        (!strcasecmp(sv, "true") || !strcmp(sv, "1") || !strcasecmp(sv, "yes"))) {
        drop[tgt_vocab] = 1;
        rs_config_note("%s:%d: 'tgt_vocab' with share_vocab: OpenNMT-py reads src_vocab alone, "
                       "for both sides; so does rnnsearch",
                       path, s->items[tgt_vocab].line);
    }
    return 0;
}

/* Whether s sets section.key, at the top level or in its section. */
static int has(const rs_settings *s, const char *section, const char *key)
{
    return rs_settings_find(s, section, key) || rs_settings_find(s, NULL, key);
}

int rs_config_opennmt_defaults(rs_settings *s, rs_error *err)
{
    if (!has(s, "training", "optimizer") &&
        rs_settings_add(s, "training", "optimizer", "sgd", 0, err))
        return -1;
    if (!has(s, "training", "lr_schedule") &&
        rs_settings_add(s, "training", "lr_schedule", "exponential", 0, err))
        return -1;
    /* src_vocab_size/tgt_vocab_size: OpenNMT-py keeps 32768 tokens unless told. */
    char size[32];
    snprintf(size, sizeof size, "%d", 32768 + RS_RESERVED);
    if (!has(s, "data", "max_vocab") && rs_settings_add(s, "data", "max_vocab", size, 0, err))
        return -1;
    /* SentencePiece models (transforms: [sentencepiece]) bring their own. */
    if (!has(s, "data", "tokenizer") && !has(s, "data", "spm_src") && !has(s, "data", "spm_tgt") &&
        rs_settings_add(s, "data", "tokenizer", "space", 0, err))
        return -1;
    return 0;
}
