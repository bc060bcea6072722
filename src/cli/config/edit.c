/* Editing a configuration file's settings in place, for the table and the
 * rules that read other toolkits' keys as ours (alias.c,
 * subword.c, opennmt.c): a setting refused, renamed, found,
 * its one value. Apart from the table so that the rules, which the table's
 * reading runs, need nothing back from it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/config/alias.h"
#include "cli/config/edit.h"

/* The message stays with the setting (rs_setting.problem), for the reader
 * to report in the file's order with the file's other problems. */
int rs_config_refuse(rs_setting *it, rs_error *err, const char *fmt, ...)
{
    if (it->problem)
        return 0;
    char why[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (!(it->problem = strdup(why)))
        return rs_fail(err, "out of memory");
    return 0;
}

/* One file is read per run: its notices, kept for the command to print. */
static char notices[RS_CONFIG_NOTICES][512];
static int notice_count;

int rs_config_note(const char *fmt, ...)
{
    if (notice_count == RS_CONFIG_NOTICES)
        return 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(notices[notice_count++], sizeof notices[0], fmt, ap);
    va_end(ap);
    return 0;
}

const char *rs_config_notice(int i)
{
    return i >= 0 && i < notice_count ? notices[i] : NULL;
}

void rs_config_notices_clear(void)
{
    notice_count = 0;
}

int rs_config_replace(char **field, const char *text, rs_error *err)
{
    char *copy = strdup(text);
    if (!copy)
        return rs_fail(err, "out of memory");
    free(*field);
    *field = copy;
    return 0;
}

int rs_config_rename(rs_settings *s, int i, char **given, const char *section, const char *key,
                     const char *value, rs_error *err)
{
    rs_setting *it = &s->items[i];
    if (!given[i] && !(given[i] = strdup(it->key)))
        return rs_fail(err, "out of memory");
    if (value && (it->count != 1 || rs_config_replace(&it->values[0], value, err)))
        return it->count == 1 ? -1 : rs_fail(err, "internal: '%s' holds no one value", it->key);
    it->is_list = 0;
    return rs_config_replace(&it->key, key, err) || rs_config_replace(&it->section, section, err)
               ? -1
               : 0;
}

int rs_config_find(const rs_settings *s, const int *drop, const char *section, const char *key)
{
    for (int i = 0; i < s->count; i++) {
        const rs_setting *it = &s->items[i];
        if (!drop[i] && !it->problem && !strcmp(it->key, key) &&
            (section ? it->section && !strcmp(it->section, section) : !it->section))
            return i;
    }
    return -1;
}

const char *rs_config_value(const rs_settings *s, int i)
{
    return i >= 0 && s->items[i].count == 1 ? s->items[i].values[0] : NULL;
}
