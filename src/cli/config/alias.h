/* The names Joey NMT and OpenNMT-py give in their YAML files, read as
 * rnnsearch's (src/cli/config/alias.c holds the one table; the list for users
 * is in docs/configuration.md). */
#ifndef RS_CONFIG_ALIAS_H
#define RS_CONFIG_ALIAS_H

#include "common/error.h"
#include "common/settings.h"

/* Rewrites the settings of a file read from `path` in place, before their
 * keys are looked up (first the rules of src/cli/config/rules.h for keys read
 * together, then the table for single keys):
 *   - a key with the same meaning as one of ours gets our section and name
 *     (training: learning_rate is training: lr, testing: is translation:),
 *     its value mapped where the two spell it differently (level: bpe is
 *     tokenizer: space; src.voc_limit N is max_vocab N + the reserved ids);
 *   - a key whose value says what rnnsearch does anyway (rnn_type: gru,
 *     optimizer: adam, use_cuda: false) is dropped;
 *   - a key whose meaning rnnsearch does not have is refused, saying so and
 *     what comes nearest ("FILE:LINE: 'early_stopping_metric: chrf': …"):
 *     the message is the setting's problem (rs_setting.problem), which the
 *     caller reports with the file's other problems, in the file's order;
 *   - several keys that become one of ours (encoder.hidden_size and
 *     decoder.hidden_size) must agree (as text or as numbers), and are kept
 *     once;
 *   - Joey's data files, train: PREFIX with src: LANG and trg: LANG, become
 *     src: PREFIX.LANG and tgt: PREFIX.LANG (dev: likewise).
 * Keys it does not know are left for the caller to report. Returns -1 only
 * for what stops the reading (out of memory). */
int rs_config_aliases(rs_settings *s, const char *path, rs_error *err);

/* The notices of the file read last (rs_config_note: keys read otherwise
 * than the file's toolkit would, defaults that differ from its toolkit's),
 * i from 0; NULL past the last. train prints them at its start. */
#define RS_CONFIG_NOTICES 32
const char *rs_config_notice(int i);
void rs_config_notices_clear(void);

/* Whether the file read last is OpenNMT-py's (cli/config/rules.h): its
 * vocabulary files not built yet are built as onmt_build_vocab would. */
int rs_config_is_opennmt(void);

/* The table, for tests and docs: entry i's source section (NULL: the top
 * level), key, and our key (NULL: no such meaning); 0 past the end. */
int rs_config_alias_entry(int i, const char **section, const char **key, const char **ours);

#endif
