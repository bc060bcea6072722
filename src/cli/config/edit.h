/* Editing a configuration file's settings in place (src/cli/config/edit.c):
 * what the table of other toolkits' names (alias.c) and the rules of
 * rules.h share. */
#ifndef RS_CONFIG_EDIT_H
#define RS_CONFIG_EDIT_H

#include "common/error.h"
#include "common/settings.h"

/* Refuses setting it with the formatted reason (the first reason stands). */
int rs_config_refuse(rs_setting *it, rs_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Setting i of s becomes ours: section.key, and its one value `value` when
 * not NULL; given[i] keeps the file's key. */
int rs_config_rename(rs_settings *s, int i, char **given, const char *section, const char *key,
                     const char *value, rs_error *err);

/* The index of section.key in s (section NULL: the top level) that is neither
 * dropped nor refused, or -1. */
int rs_config_find(const rs_settings *s, const int *drop, const char *section, const char *key);

/* The one value of setting i (a list of one value too), or NULL. */
const char *rs_config_value(const rs_settings *s, int i);

/* A notice about the file: what it says that rnnsearch reads otherwise
 * than its toolkit would, without refusing it (use_cuda: True, a key given
 * twice, a default that differs). Kept for rs_config_notice (cli/config/alias.h)
 * in the order given; past RS_CONFIG_NOTICES the last ones are dropped.
 * Returns 0. */
int rs_config_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* *field becomes a copy of text (the old one freed). */
int rs_config_replace(char **field, const char *text, rs_error *err);

#endif
