/* The option table of a command (options.h): getopt's tables, the parse, a
 * row's value stored or only checked, and --help, all read off the rows. */
#include <stdlib.h>
#include <string.h>

#include "cli/options.h"

static const rs_cli_command *const *known;
static int known_count;

void rs_cli_set_commands(const rs_cli_command *const *commands, int count)
{
    known = commands;
    known_count = count;
}

/* A row of the rs_config fields: its key is that of the configuration. */
static rs_cli_option setting_row(const rs_cli_option *marker, int i, const char **key)
{
    const char *option;
    rs_cli_config_option(i, &option, key);
    return (rs_cli_option){option, .kind = RS_CLI_SETTINGS, .at = marker->at,
                           .section = rs_config_section(*key), .label = *key};
}

/* The rows of a table with RS_CLI_SETTINGS expanded, at most max; the count. */
static int expand(const rs_cli_option *table, rs_cli_option *rows, int max)
{
    int n = 0;
    for (const rs_cli_option *o = table; o->kind != RS_CLI_END && n < max; o++) {
        if (o->kind != RS_CLI_SETTINGS) {
            rows[n++] = *o;
            continue;
        }
        for (int i = 0; i < rs_cli_config_option_count() && n < max; i++) {
            const char *key;
            rows[n++] = setting_row(o, i, &key);
        }
    }
    return n;
}

int rs_cli_setting_at(int i, rs_cli_setting *out)
{
    rs_cli_option rows[RS_CLI_MAX_OPTIONS];
    for (int c = 0; c < known_count; c++) {
        const int n = expand(known[c]->options, rows, RS_CLI_MAX_OPTIONS);
        for (int r = 0; r < n; r++) {
            if (!rows[r].section || i-- > 0)
                continue;
            *out = (rs_cli_setting){known[c]->name, rows[r].section, "", rows[r].group,
                                    (rows[r].flags & (RS_CLI_REPEAT | RS_CLI_LIST)) != 0};
            snprintf(out->option, sizeof out->option, "%s", rows[r].name);
            return 1;
        }
    }
    return 0;
}

static int row_val(const rs_cli_option *o, int i)
{
    return o->letter ? o->letter : RS_CLI_OPT + i;
}

static int takes_value(const rs_cli_option *o)
{
    if (o->kind == RS_CLI_SETTINGS)
        return !rs_config_is_flag(o->label);
    return o->kind != RS_CLI_FLAG && o->kind != RS_CLI_HELP &&
           !(o->kind == RS_CLI_CALL && !o->value);
}

/* Stores (or, into a scratch copy, checks) one row's value; -1 to go on,
 * else the exit status after reporting the problem. */
static int store(const char *prog, const rs_cli_option *o, char *rq, const char *arg)
{
    char opt[80];
    snprintf(opt, sizeof opt, "--%s", o->name);
    void *field = rq + o->at;
    double v;
    rs_error err;
    switch (o->kind) {
    case RS_CLI_FLAG: *(int *)field = 1; return -1;
    case RS_CLI_INT:
        return rs_cli_int(prog, opt, arg, (int)o->min, (int)o->max, field) ? RS_EXIT_USAGE : -1;
    case RS_CLI_FLOAT:
        if (rs_cli_double(prog, opt, arg, o->min, o->max, &v))
            return RS_EXIT_USAGE;
        *(float *)field = (float)v;
        return -1;
    case RS_CLI_STRING:
    case RS_CLI_CONFIG_FILE: *(const char **)field = arg; return -1;
    case RS_CLI_CHOICE: {
        int count = 0;
        while (o->names[count])
            count++;
        return rs_cli_choice(prog, opt, arg, o->names, count, field) ? RS_EXIT_USAGE : -1;
    }
    case RS_CLI_CALL: return o->set(rq, arg);
    case RS_CLI_PARSE: return o->parse(prog, opt, arg, field) ? RS_EXIT_USAGE : -1;
    case RS_CLI_MODELS:
        return rs_cli_add_model(prog, *(rs_models **)field, arg) ? RS_EXIT_USAGE : -1;
    case RS_CLI_SETTINGS:
        if (rs_config_is_flag(o->label) ? rs_config_set(field, o->label, "1", &err)
                                        : rs_config_set_option(field, o->label, arg, &err))
            return rs_cli_usage_error(prog, "%s", err.msg);
        return -1;
    default: return RS_EXIT_USAGE;
    }
}

static int row_of(const rs_cli_args *args, int val)
{
    for (int i = 0; i < args->n_rows; i++)
        if (row_val(&args->rows[i], i) == val)
            return i;
    return -1;
}

/* rs_cli_apply for the table: the command line's and the file's values. */
static int apply_row(void *ctx, int val, const char *arg)
{
    rs_cli_args *args = ctx;
    const int i = row_of(args, val);
    if (i < 0)
        return RS_EXIT_USAGE; /* RS_CLI_BAD, already reported */
    const int status = store(args->prog, &args->rows[i], args->rq, arg);
    if (status < 0)
        args->given[i] = arg ? arg : "";
    return status;
}

/* A file's value that the command line overrides, checked as it would be
 * stored: into a scratch copy of the request. */
static int check_row(void *ctx, int val, const char *arg)
{
    rs_cli_args *args = ctx;
    const int i = row_of(args, val);
    char *scratch = malloc(args->cmd->size);
    if (i < 0 || !scratch) {
        free(scratch);
        return i < 0 ? -1 : rs_cli_fail(args->prog, "out of memory");
    }
    memcpy(scratch, args->rq, args->cmd->size);
    const int status = store(args->prog, &args->rows[i], scratch, arg);
    free(scratch);
    return status;
}

const char *rs_cli_given(const rs_cli_args *args, const char *name)
{
    for (int i = 0; i < args->n_rows; i++)
        if (args->rows[i].name && !strcmp(args->rows[i].name, name) && args->given[i])
            return args->given[i];
    return NULL;
}

void rs_cli_set_given(rs_cli_args *args, const char *name, const char *value)
{
    for (int i = 0; i < args->n_rows; i++)
        if (args->rows[i].name && !strcmp(args->rows[i].name, name))
            args->given[i] = value;
}

/* getopt's tables from the rows, then rs_cli_begin. */
static int begin(const rs_cli_command *cmd, rs_cli_args *args, int argc, char **argv)
{
    rs_cli_option *rows = malloc(RS_CLI_MAX_OPTIONS * sizeof *rows);
    struct option *longopts = malloc((RS_CLI_MAX_OPTIONS + 1) * sizeof *longopts);
    if (!rows || !longopts) {
        free(rows);
        free(longopts);
        return rs_cli_fail(cmd->prog, "out of memory");
    }
    const int n = expand(cmd->options, rows, RS_CLI_MAX_OPTIONS);
    char shortopts[64] = "";
    int count = 0;
    for (int i = 0; i < n; i++) {
        const rs_cli_option *o = &rows[i];
        if (!o->name)
            continue;
        const int has = !takes_value(o)              ? no_argument
                        : o->flags & RS_CLI_OPTIONAL ? optional_argument
                                                     : required_argument;
        const int val = o->kind == RS_CLI_CONFIG_FILE ? RS_CLI_CONFIG : row_val(o, i);
        longopts[count++] = (struct option){o->name, has, NULL, val};
        if (o->letter && o->letter != 'h')
            snprintf(shortopts + strlen(shortopts), sizeof shortopts - strlen(shortopts), "%c%s",
                     o->letter, has == required_argument ? ":" : "");
    }
    longopts[count] = (struct option){0};
    rs_cli_begin(args, cmd->prog, argc, argv, shortopts, longopts);
    free(longopts); /* rs_cli_begin copied the table; the names are the rows' */
    args->rows = rows;
    args->n_rows = n;
    args->cmd = cmd;
    return -1;
}

int rs_cli_parse(const rs_cli_command *cmd, void *rq, rs_cli_args *args, int argc, char **argv)
{
    int status = begin(cmd, args, argc, argv);
    if (status >= 0)
        return status;
    args->rq = rq;
    args->check = check_row;
    void *defaults = malloc(cmd->size);
    if (!defaults)
        return rs_cli_fail(cmd->prog, "out of memory");
    memcpy(defaults, rq, cmd->size);
    int c;
    while ((c = rs_cli_next(args)) != -1) {
        if (c == 'h') {
            rs_cli_help(stdout, cmd, defaults);
            free(defaults);
            return RS_EXIT_OK;
        }
        const char *arg = optarg;
        const int i = row_of(args, c);
        if (i >= 0 && args->rows[i].takes && !arg && optind < argc &&
            args->rows[i].takes(argv[optind]))
            arg = argv[optind++];
        if ((status = apply_row(args, c, arg)) >= 0) {
            free(defaults);
            return status;
        }
    }
    free(defaults);
    return rs_cli_apply_config(args, cmd->name, rs_cli_setting_at, apply_row, args);
}

/* ---- --help ---------------------------------------------------------------- */

/* The row's default as "%D" shows it. */
static void default_text(const rs_cli_option *o, const char *defaults, char *text, size_t size)
{
    const void *field = defaults + o->at;
    text[0] = 0;
    if (o->describe)
        o->describe(text, size);
    else if (o->kind == RS_CLI_INT)
        snprintf(text, size, "%d", *(const int *)field);
    else if (o->kind == RS_CLI_FLOAT)
        snprintf(text, size, "%g", (double)*(const float *)field);
    else if (o->kind == RS_CLI_STRING && *(const char *const *)field)
        snprintf(text, size, "%s", *(const char *const *)field);
    else if (o->kind == RS_CLI_CHOICE) {
        /* A default outside the names (translate's post_process -1: the
         * model's) has no name: the help says it in words. */
        const int v = *(const int *)field;
        for (int i = 0; i <= v && o->names[i]; i++)
            if (i == v)
                snprintf(text, size, "%s", o->names[i]);
    }
}

/* One line of help text, "%D" replaced by the default. */
static void help_line(FILE *out, const char *line, size_t len, const char *deflt)
{
    const char *mark;
    while ((mark = memchr(line, '%', len)) && (size_t)(mark - line) + 1 < len && mark[1] == 'D') {
        fprintf(out, "%.*s%s", (int)(mark - line), line, deflt);
        len -= (size_t)(mark - line) + 2;
        line = mark + 2;
    }
    fprintf(out, "%.*s\n", (int)len, line);
}

static void help_row(FILE *out, const rs_cli_command *cmd, const rs_cli_option *o,
                     const char *defaults)
{
    char label[160], deflt[512];
    if (o->label)
        snprintf(label, sizeof label, "%s", o->label);
    else if (o->letter)
        snprintf(label, sizeof label, "-%c, --%s%s%s", o->letter, o->name, o->value ? " " : "",
                 o->value ? o->value : "");
    else
        snprintf(label, sizeof label, "--%s%s%s%s", o->name,
                 !o->value                    ? ""
                 : o->flags & RS_CLI_OPTIONAL ? "[="
                                              : " ",
                 o->value ? o->value : "", o->value && o->flags & RS_CLI_OPTIONAL ? "]" : "");
    deflt[0] = 0;
    if (strstr(o->help, "%D"))
        default_text(o, defaults, deflt, sizeof deflt);
    const char *text = o->help;
    if (*text == '\n') {
        fprintf(out, "  %s\n", label);
        text++;
    } else {
        /* A label too long for the column is followed by two spaces. */
        const int width = cmd->column - 3;
        fprintf(out, "  %-*s %s", width, label, (int)strlen(label) > width ? " " : "");
    }
    for (int first = o->help[0] != '\n';; first = 0) {
        const size_t len = strcspn(text, "\n");
        if (!first)
            fprintf(out, "%*s", cmd->column, "");
        help_line(out, text, len, deflt);
        if (!text[len])
            break;
        text += len + 1;
    }
}

void rs_cli_help(FILE *out, const rs_cli_command *cmd, const void *defaults)
{
    fputs(cmd->synopsis, out);
    for (const rs_cli_option *o = cmd->options; o->kind != RS_CLI_END; o++) {
        if (o->kind == RS_CLI_TEXT && !o->label)
            fputs(o->help, out);
        else if (o->kind == RS_CLI_SETTINGS)
            rs_cli_print_config_help(out, (const rs_config *)((const char *)defaults + o->at));
        else if (o->help)
            help_row(out, cmd, o, defaults);
    }
    if (cmd->epilog)
        fputs(cmd->epilog, out);
}
