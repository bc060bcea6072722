/* Configuration files as the command line's options: which sections and keys
 * a file may hold (every command's options in one table, plus the fixed
 * settings of each command), the nearest name for a misspelt key (through
 * nearest.c), and a file's values applied through the same function as the
 * options, the command line winning. Part of the program, as cli.c. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/config/alias.h"
#include "common/nearest.h"
#include "common/fileio.h"
#include "text/settings_file.h"

/* Every section a configuration file may hold, whichever command reads it. */
static const char *const sections[] = {"data", "model", "training", "translation", "serve", NULL};
enum { SECTION_COUNT = 5 };

/* Every command's settings (options.h: the rows with a section), and
 * train's model and training settings among them. */
enum { MAX_SETTINGS = 4 * RS_CLI_MAX_OPTIONS };
static rs_cli_setting all_settings[MAX_SETTINGS];
static int settings_count;

static void build_settings(rs_cli_settings_at settings_at)
{
    while (settings_count < MAX_SETTINGS &&
           settings_at(settings_count, &all_settings[settings_count]))
        settings_count++;
}

/* A key names an option: batch_size (or batch-size) is --batch-size. */
static int key_is(const char *key, const char *option)
{
    for (; *key && *option; key++, option++)
        if (*key != *option && !(*key == '_' && *option == '-'))
            return 0;
    return !*key && !*option;
}

/* The setting of key in section (NULL: any) for command (NULL: any); the
 * count of such settings in *matches. */
static const rs_cli_setting *find_setting(const char *command, const char *section, const char *key,
                                          int *matches)
{
    const rs_cli_setting *found = NULL;
    *matches = 0;
    for (int i = 0; i < settings_count; i++) {
        const rs_cli_setting *s = &all_settings[i];
        if (!key_is(key, s->option) || (section && strcmp(section, s->section)) ||
            (command && strcmp(command, s->command)))
            continue;
        if (!found)
            found = s, *matches = 1;
        else if (strcmp(found->section, s->section))
            ++*matches; /* threads: in training, translation and serve */
    }
    return found;
}

/* "FILE:LINE: unknown key 'hiden' in model: (did you mean 'hidden'?)": the
 * nearest key of the section (or of every section at the top level). */
static int unknown_key(const rs_cli_args *args, const rs_setting *it)
{
    const char *names[sizeof all_settings / sizeof *all_settings];
    static char keys[sizeof all_settings / sizeof *all_settings][RS_STR_MAX];
    int count = 0;
    for (int i = 0; i < settings_count; i++) {
        if (it->section && strcmp(all_settings[i].section, it->section))
            continue;
        snprintf(keys[count], sizeof keys[count], "%s", all_settings[i].option);
        for (char *p = keys[count]; *p; p++)
            *p = *p == '-' ? '_' : *p;
        names[count] = keys[count];
        count++;
    }
    const char *near = rs_nearest(it->key, names, count);
    if (!it->section && !near)
        near = rs_nearest(it->key, sections, SECTION_COUNT);
    return rs_cli_usage_error(args->prog, "%s:%d: unknown key '%s'%s%s%s%s%s%s", args->config_path,
                              it->line, it->key, it->section ? " in " : "",
                              it->section ? it->section : "", it->section ? ":" : "",
                              near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
}

/* "FILE:LINE: 'threads' means one thing in training: and another in
 * translation: or serve:; put it in its section": the sections that hold
 * the key, in the order of sections[]. */
static int ambiguous_key(const rs_cli_args *args, const rs_setting *it)
{
    char list[256] = "";
    int count = 0;
    for (int k = 0; k < SECTION_COUNT; k++) {
        int holds = 0;
        for (int i = 0; i < settings_count && !holds; i++)
            holds = key_is(it->key, all_settings[i].option) &&
                    !strcmp(all_settings[i].section, sections[k]);
        if (holds)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s:",
                     count++ == 0 ? "one thing in "
                     : count == 2 ? " and another in "
                                  : " or ",
                     sections[k]);
    }
    return rs_cli_usage_error(args->prog, "%s:%d: '%s' means %s; put it in its section",
                              args->config_path, it->line, it->key, list);
}

/* A key at the top level of a YAML file (or anywhere in a key = value file):
 * a section left empty, or a setting whose key alone says its section. */
static const rs_cli_setting *top_level_setting(const rs_cli_args *args, const char *command,
                                               const rs_setting *it, int *status)
{
    if (rs_config_name_index(sections, it->key) >= 0) {
        if (!it->is_list && !it->values[0][0])
            return NULL; /* "model:" with nothing under it */
        *status = rs_cli_usage_error(args->prog,
                                     "%s:%d: section '%s' holds a value; it holds settings "
                                     "('%s:' then indented 'key: value' lines)",
                                     args->config_path, it->line, it->key, it->key);
        return NULL;
    }
    if (!args->config.yaml && (!strcmp(it->key, "src_vocab") || !strcmp(it->key, "tgt_vocab")) &&
        it->count == 1 && it->values[0][strspn(it->values[0], "0123456789")] == 0)
        return NULL; /* a printout's sizes, from the data; a file is --src-vocab's */
    int matches;
    /* A key = value file, without sections, is one command's. */
    const rs_cli_setting *s =
        args->config.yaml ? NULL : find_setting(command, NULL, it->key, &matches);
    if (!s)
        s = find_setting(NULL, NULL, it->key, &matches);
    if (!s)
        *status = unknown_key(args, it);
    else if (matches > 1)
        *status = ambiguous_key(args, it);
    return s;
}

/* The setting of one entry of the file; *status is the exit status after
 * reporting a problem, else -1. */
static const rs_cli_setting *setting_of(const rs_cli_args *args, const char *command,
                                        const rs_setting *it, int *status)
{
    *status = -1;
    if (!it->section)
        return top_level_setting(args, command, it, status);
    if (rs_config_name_index(sections, it->section) < 0) {
        const char *near = rs_nearest(it->section, sections, SECTION_COUNT);
        *status = rs_cli_usage_error(
            args->prog,
            "%s:%d: unknown section '%s'%s%s%s (sections: data, model, training, "
            "translation, serve)",
            args->config_path, it->line, it->section, near ? " (did you mean '" : "",
            near ? near : "", near ? "'?)" : "");
        return NULL;
    }
    int matches;
    const rs_cli_setting *s = find_setting(NULL, it->section, it->key, &matches);
    const rs_cli_setting *elsewhere = s ? NULL : find_setting(NULL, NULL, it->key, &matches);
    if (elsewhere)
        *status = rs_cli_usage_error(args->prog, "%s:%d: '%s' goes in section '%s:', not '%s:'",
                                     args->config_path, it->line, it->key, elsewhere->section,
                                     it->section);
    else if (!s)
        *status = unknown_key(args, it);
    return s;
}

/* Whether the command line gave the option of s, or one of its group. */
static int given_on_command_line(const rs_cli_args *args, const rs_cli_setting *s)
{
    for (int i = 0; args->longopts[i].name; i++) {
        if (!args->seen[i])
            continue;
        for (int k = 0; k < settings_count; k++) {
            const rs_cli_setting *t = &all_settings[k];
            if (!strcmp(t->command, s->command) && !strcmp(t->option, args->longopts[i].name) &&
                (t == s || (s->group && t->group == s->group)))
                return 1;
        }
    }
    return 0;
}

/* Applies one value of the file to option o: a flag takes true or false. */
/* A flag's values in a file. */
static const char *const yes[] = {"true", "yes", "on", "1", "True", "TRUE", NULL};
static const char *const no[] = {"false", "no", "off", "0", "False", "FALSE", NULL};

static int apply_value(rs_cli_args *args, const struct option *o, const rs_setting *it, int k,
                       rs_cli_apply apply, void *ctx)
{
    const char *v = it->values[k];
    rs_cli_set_origin(args->config_path, it->value_lines[k]);
    int status = -1;
    if (o->has_arg != required_argument) {
        if (rs_config_name_index(yes, v) >= 0)
            status = apply(ctx, o->val, NULL);
        else if (rs_config_name_index(no, v) < 0) {
            if (o->has_arg == no_argument)
                status =
                    rs_cli_usage_error(args->prog, "%s: '%s' is not true or false", it->key, v);
            else
                status = apply(ctx, o->val, v); /* --alignment: true, or a value */
        }
    } else {
        status = apply(ctx, o->val, v);
    }
    rs_cli_set_origin(NULL, 0);
    return status;
}

/* A value the command line overrides: reported as apply_value would report
 * it: a flag's value that is not true or false, or what storing the value
 * would refuse (args->check, the option table's: cli/options.h).
 * -1, or RS_EXIT_USAGE. */
static int check_value(rs_cli_args *args, const struct option *o, const rs_setting *it, int k,
                       void *ctx)
{
    const char *v = it->values[k];
    rs_cli_set_origin(args->config_path, it->value_lines[k]);
    int status = -1;
    if (o->has_arg == no_argument) {
        if (rs_config_name_index(yes, v) < 0 && rs_config_name_index(no, v) < 0)
            status = rs_cli_usage_error(args->prog, "%s: '%s' is not true or false", it->key, v);
    } else if (o->has_arg == required_argument ||
               (rs_config_name_index(yes, v) < 0 && rs_config_name_index(no, v) < 0)) {
        /* A value (--alignment's too, unless true or false) is checked as it
         * would be stored. */
        if (args->check)
            status = args->check(ctx, o->val, v);
    }
    rs_cli_set_origin(NULL, 0);
    return status;
}

/* The options the file gave (seen[j], from entry at[j]): a key at the top
 * level and in its section ("lr: 0.1", "training: lr: 0.2") names one twice,
 * and the later would win silently. Each option once, so n stays small. */
typedef struct {
    const rs_cli_setting *seen[sizeof all_settings / sizeof *all_settings];
    int at[sizeof all_settings / sizeof *all_settings], n;
} file_options;

/* The exit status when the file gave s before entry i, else -1. */
static int given_twice(const rs_cli_args *args, file_options *f, const rs_cli_setting *s, int i)
{
    int j = 0;
    while (j < f->n &&
           (strcmp(f->seen[j]->section, s->section) || strcmp(f->seen[j]->option, s->option)))
        j++;
    if (j == f->n) {
        f->seen[f->n] = s, f->at[f->n++] = i; /* n <= the settings' count */
        return -1;
    }
    const rs_setting *first = &args->config.items[f->at[j]], *it = &args->config.items[i];
    return rs_cli_usage_error(args->prog, "%s:%d: '%s' given twice (first on line %d, %s%s%s)",
                              args->config_path, it->line, it->key, first->line,
                              first->section ? "in " : "at the top level",
                              first->section ? first->section : "", first->section ? ":" : "");
}

/* Checks every setting of the file and applies those of `command`: a
 * problem is reported and the next setting checked, so that a file's every
 * problem is found in one run. -1 to go on, else the exit status of a failure
 * that is not the file's (out of memory); the problems are counted by
 * rs_cli_collect_end. */
static int check_and_apply(rs_cli_args *args, const char *command, rs_cli_apply apply, void *ctx)
{
    file_options given = {.n = 0};
    const char *unknown_section = NULL; /* reported once, not for each of its keys */
    for (int i = 0; i < args->config.count; i++) {
        const rs_setting *it = &args->config.items[i];
        const int known = !it->section || rs_config_name_index(sections, it->section) >= 0;
        if (!known && unknown_section && !strcmp(unknown_section, it->section))
            continue;
        if (!known)
            unknown_section = it->section;
        if (it->problem) {
            rs_cli_usage_error(args->prog, "%s", it->problem);
            continue;
        }
        int status;
        const rs_cli_setting *s = setting_of(args, command, it, &status);
        if (status < 0 && s)
            status = given_twice(args, &given, s, i);
        if (status >= 0) {
            if (status != RS_EXIT_USAGE)
                return status;
            continue;
        }
        /* Another command's settings are checked, and left to it. */
        if (!s || strcmp(s->command, command))
            continue;
        if (it->is_list && !s->repeatable) {
            rs_cli_usage_error(args->prog, "%s:%d: '%s' takes one value, not a list",
                               args->config_path, it->line, it->key);
            continue;
        }
        const struct option *o = args->longopts;
        while (o->name && strcmp(o->name, s->option))
            o++;
        if (!o->name)
            return rs_cli_fail(args->prog, "internal: no option --%s", s->option);
        /* The command line wins, but the file's value is checked all the same
         * (check_value), so that the file is right for the next run too. */
        const int overridden = given_on_command_line(args, s);
        for (int k = 0; k < it->count; k++) {
            status = overridden ? check_value(args, o, it, k, ctx)
                                : apply_value(args, o, it, k, apply, ctx);
            if (status >= 0 && status != RS_EXIT_USAGE)
                return status;
        }
    }
    return -1;
}

int rs_cli_apply_config(rs_cli_args *args, const char *command, rs_cli_settings_at settings_at,
                        rs_cli_apply apply, void *ctx)
{
    if (!args->config_path)
        return -1;
    build_settings(settings_at);
    rs_error err;
    if (rs_settings_read(args->config_path, &args->config, &err) ||
        rs_config_aliases(&args->config, args->config_path, &err))
        return rs_cli_usage_error(args->prog, "%s", err.msg);
    rs_cli_collect_begin();
    const int status = check_and_apply(args, command, apply, ctx);
    const int problems = rs_cli_collect_end(args->prog, args->config_path);
    return status >= 0 ? status : problems;
}
