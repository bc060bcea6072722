/* Configuration files as settings: section, key, value(s) and line, nothing
 * more. Two forms are read, told apart by their first setting:
 *
 *   YAML (through libyaml), a mapping of sections, as Joey NMT writes it:
 *       model:
 *         emb: 32
 *       training: {batch_size: 64, epochs: 10}
 *     a value is a scalar or a list of scalars; a mapping inside a section
 *     (Joey's model: encoder: hidden_size: 64) gives dotted keys in that
 *     section ("encoder.hidden_size"); a key at the top level
 *     whose value is a scalar or a list (a section left empty, "model:"
 *     alone, is the scalar "") is kept with no section;
 *
 *   "key = value" lines (several "key=value" items to a line, '#' comments,
 *     a leading "configuration:" skipped), the form rnnsearch wrote before
 *     YAML: every setting with no section.
 *
 * Either way the file is text: a NUL byte is an error naming its line, and a
 * UTF-8 byte order mark is skipped. A key given twice in a YAML section is
 * not an error of the reading: each repeat carries its problem, which the
 * caller reports with the others. What a key means, and whether its value
 * is right, is for the reader's caller (src/cli/cli.c). */
#ifndef RS_SETTINGS_H
#define RS_SETTINGS_H

#include <stdio.h>

#include "common/error.h"

typedef struct {
    char *section; /* NULL at the top level */
    char *key;
    char **values;    /* [count] */
    int *value_lines; /* [count], from 1 */
    int count;
    int capacity;  /* values and value_lines allocated */
    int is_list;   /* a YAML list (count may be 0 or 1 too) */
    int line;      /* the key's, from 1 */
    char *problem; /* why the file's reader refuses this setting ("FILE:LINE: …"), or NULL:
                      kept with the setting so that every problem of a file is reported in
                      one pass, in the file's order */
} rs_setting;

typedef struct {
    rs_setting *items;
    int count;
    int capacity; /* items allocated: grown by doubling, so n keys cost O(n) copies */
    int yaml;     /* 1: YAML; 0: key = value lines */
    char *text;   /* the text read (text/settings_file.h), lines ended by '\n'; else NULL */
    size_t text_size;
    char *notes; /* "FILE:LINE: …\n" lines: what was read otherwise than written (a key given
                    again: its last value, as PyYAML reads it), or NULL */
} rs_settings;

/* The largest configuration file read: far above any real one (Joey NMT's
 * and OpenNMT-py's are a few kB), and small enough that a file of a million
 * keys is refused at once instead of read for seconds into a gigabyte. */
#define RS_SETTINGS_MAX_BYTES (1 << 20)

/* Parses a configuration file's bytes (text/settings_file.h reads one from
 * disk); `name` names them in messages ("run.yaml:3: …"). */
int rs_settings_parse(const char *name, const unsigned char *data, size_t size, rs_settings *out,
                      rs_error *err);

/* Frees what one setting holds (its names, values and line numbers). */
void rs_setting_free(rs_setting *it);

void rs_settings_free(rs_settings *s);

/* A setting with one value added at the end of s, as if the file had it on
 * line `line` (a rule's implied setting: cli/config/opennmt.c). */
int rs_settings_add(rs_settings *s, const char *section, const char *key, const char *value,
                    int line, rs_error *err);

/* The setting section.key (section NULL: top level), or NULL. */
const rs_setting *rs_settings_find(const rs_settings *s, const char *section, const char *key);

/* Writes "  key: value\n", a line of a YAML section, with value as YAML
 * reads it back (`info --config` writes a run's settings so): plain when it
 * is made of letters, digits, non-ASCII characters and "._/+-~,=" (not
 * first: a leading "-" or "." could start something else), else
 * double-quoted with '\\', '"' and control characters escaped. A value may
 * hold anything a quoted scalar held ("a: b #c.tsv", "*d", a marker "#@ "),
 * and written plain that is a YAML error, an alias or a comment. Non-ASCII
 * is escaped inside quotes only where YAML 1.1 reads a line break (U+0085,
 * U+2028, U+2029) or a byte order mark (U+FEFF). */
void rs_settings_write_pair(FILE *out, const char *key, const char *value);

#endif
