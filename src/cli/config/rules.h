/* Other toolkits' keys whose meaning depends on other keys of the same file
 * (Joey NMT 2's tokenizer of each side, OpenNMT-py's corpora, transforms and
 * bidirectional encoder): rules run by rs_config_aliases before its one-key
 * table, on the settings as the file has them. A rule renames a setting to
 * ours (given[i]: the file's key, for messages), drops it (drop[i]) when it
 * says what rnnsearch does anyway, or refuses it (its problem, reported with
 * the file's others). Each returns -1 only when out of memory. */
#ifndef RS_CONFIG_RULES_H
#define RS_CONFIG_RULES_H

#include "common/error.h"
#include "common/settings.h"

/* Joey NMT 2's data: src/trg level: bpe with tokenizer_type and
 * tokenizer_cfg, and OpenNMT-py's transforms with its subword models. */
int rs_config_subwords(rs_settings *s, const char *path, char **given, int *drop, rs_error *err);

/* OpenNMT-py 3's data: NAME: path_src/path_tgt corpora, encoder_type with
 * the hidden sizes it splits, and list-valued dropout; *opennmt says whether
 * the file is OpenNMT-py's (a corpus in data:, save_model or train_steps). */
int rs_config_opennmt(rs_settings *s, const char *path, char **given, int *drop, int *opennmt,
                      rs_error *err);

/* After every rename, in an OpenNMT-py file: the settings OpenNMT-py trains
 * with when the file does not give them, where rnnsearch's own differ
 * (optimizer: sgd, lr_schedule: exponential, max_vocab: 32768 and the
 * reserved ids, and without SentencePiece tokenizer: space), added as if the
 * file had them. */
int rs_config_opennmt_defaults(rs_settings *s, rs_error *err);

#endif
