/* The command layer's shared helpers. Part of the program, not of the
 * library: it prints, and it keeps the option table below. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/checkpoint.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "common/nearest.h"
#include "cli/config/alias.h"
#include "model/locate.h"
#include "common/fileio.h"
#include "search/forced.h"
#include "search/ready.h"

typedef struct {
    const char *field; /* config key */
    char option[RS_STR_MAX];
    const char *help;
    int is_flag; /* boolean: takes no argument */
} config_option;

static config_option table[RS_CLI_MAX_CONFIG_OPTIONS];
static int table_size;

static void build_table(void)
{
    if (table_size)
        return;
        /* Booleans are flags (--lowercase); sizes taken from the data are not options. */
#define RS_ENTRY(name, def, hlp, ...)                                                              \
    if (strcmp(#name, "src_vocab") && strcmp(#name, "tgt_vocab")) {                                \
        config_option *o = &table[table_size++];                                                   \
        o->field = #name;                                                                          \
        snprintf(o->option, sizeof o->option, "%s", #name);                                        \
        for (char *p = o->option; *p; p++)                                                         \
            if (*p == '_')                                                                         \
                *p = '-';                                                                          \
        o->help = hlp;                                                                             \
        o->is_flag = rs_config_is_flag(#name);                                                     \
    }
    RS_CONFIG_FIELDS(RS_ENTRY, RS_ENTRY, RS_ENTRY)
#undef RS_ENTRY
}

int rs_cli_config_option_count(void)
{
    build_table();
    return table_size;
}

void rs_cli_config_option(int i, const char **option, const char **field)
{
    build_table();
    *option = table[i].option;
    *field = table[i].field;
}

void rs_cli_print_config(FILE *out, const rs_config *cfg)
{
    char value[RS_STR_MAX + 32];
#define RS_LINE(name, def, hlp, ...)                                                               \
    if (!rs_config_format(cfg, #name, value, sizeof value))                                        \
        fprintf(out, "%s = %s\n", #name, value);
    RS_CONFIG_FIELDS(RS_LINE, RS_LINE, RS_LINE)
#undef RS_LINE
}

void rs_cli_print_config_help(FILE *out, const rs_config *defaults)
{
    build_table();
    for (int i = 0; i < table_size; i++) {
        char text[RS_STR_MAX + 8], value[RS_STR_MAX + 32] = "", range[64];
        rs_config_format(defaults, table[i].field, value, sizeof value);
        rs_config_range(table[i].field, range, sizeof range);
        /* N an integer, X a number, NAME one of the names the help lists. */
        const char *placeholder = !strncmp(range, ", from", 6) ? "N" : range[0] ? "X" : "NAME";
        if (table[i].is_flag)
            snprintf(text, sizeof text, "--%s", table[i].option);
        else
            snprintf(text, sizeof text, "--%s %s", table[i].option, placeholder);
        if (table[i].is_flag)
            fprintf(out, "  %-22s %s\n", text, table[i].help);
        else
            fprintf(out, "  %-22s %s (default: %s%s)\n", text, table[i].help, value, range);
    }
}

int rs_cli_load_model(const char *model_arg, rs_ready *model, rs_codec *codec, rs_error *err)
{
    return rs_ready_load(model, model_arg, NULL, codec, NULL, 0, err);
}

/* "FILE:LINE" while a configuration file's setting is applied: the
 * messages of the option helpers then name where the value came from. */
static char usage_origin[4200];

void rs_cli_set_origin(const char *file, int line)
{
    if (file)
        snprintf(usage_origin, sizeof usage_origin, "%s:%d", file, line);
    else
        usage_origin[0] = 0;
}

/* While a configuration file is checked, its problems are counted and each
 * printed on its own line (the first COLLECT_SHOWN: a file of a hundred
 * thousand repeated keys would print as many); the "Try" line comes once,
 * after the last. */
enum { COLLECT_SHOWN = 100 };
static int collecting, collected;

void rs_cli_collect_begin(void)
{
    collecting = 1;
    collected = 0;
}

int rs_cli_collect_end(const char *prog, const char *file)
{
    collecting = 0;
    if (!collected)
        return -1;
    if (collected > COLLECT_SHOWN)
        fprintf(stderr, "%s: %s: %d problems (the first %d above); nothing was done\n", prog, file,
                collected, COLLECT_SHOWN);
    else if (collected > 1)
        fprintf(stderr, "%s: %s: %d problems (above); nothing was done\n", prog, file, collected);
    fprintf(stderr, "Try '%s --help'.\n", prog);
    return RS_EXIT_USAGE;
}

int rs_cli_usage_error(const char *prog, const char *fmt, ...)
{
    if (collecting && ++collected > COLLECT_SHOWN)
        return RS_EXIT_USAGE;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: %s%s", prog, usage_origin, usage_origin[0] ? ": " : "");
    vfprintf(stderr, fmt, ap);
    if (collecting)
        fputc('\n', stderr);
    else
        fprintf(stderr, "\nTry '%s --help'.\n", prog);
    va_end(ap);
    return RS_EXIT_USAGE;
}

int rs_cli_fail(const char *prog, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return RS_EXIT_FAIL;
}

int rs_cli_bad_option(const char *prog, const char *arg)
{
    return rs_cli_usage_error(prog, "unknown option '%s'", arg);
}

void rs_cli_begin(rs_cli_args *args, const char *prog, int argc, char **argv, const char *shortopts,
                  const struct option *longopts)
{
    memset(args, 0, sizeof *args);
    args->prog = prog;
    args->argc = argc;
    args->argv = argv;
    /* ':' first: a missing value comes back as ':', not as '?'. */
    int n = snprintf(args->shortopts, sizeof args->shortopts, ":%sh", shortopts ? shortopts : "");
    if (n < 0 || (size_t)n >= sizeof args->shortopts)
        args->too_many = 1;
    int count = 0, has_help = 0;
    for (; longopts && longopts[count].name; count++) {
        if (count >= RS_CLI_MAX_OPTIONS) {
            args->too_many = 1;
            break;
        }
        args->longopts[count] = longopts[count];
        has_help |= !strcmp(longopts[count].name, "help");
    }
    if (!has_help)
        args->longopts[count++] = (struct option){"help", no_argument, NULL, 'h'};
    args->longopts[count] = (struct option){0};
    optind = 1;
    opterr = 0;
}

/* The long option whose value is val, or NULL. */
static const struct option *long_option_of(const rs_cli_args *args, int val)
{
    for (const struct option *o = args->longopts; o->name; o++)
        if (!o->flag && o->val == val)
            return o;
    return NULL;
}

/* "unknown option '--hiden' (did you mean '--hidden'?)": the nearest of the
 * command's long options by edit distance, as configuration keys have it. */
static void unknown_long_option(const rs_cli_args *args, const char *arg, int name_len)
{
    const char *names[RS_CLI_MAX_OPTIONS + 2];
    int count = 0;
    for (const struct option *o = args->longopts; o->name && count < RS_CLI_MAX_OPTIONS + 2; o++)
        names[count++] = o->name;
    char name[128];
    snprintf(name, sizeof name, "%.*s", name_len > 2 ? name_len - 2 : 0, arg + 2);
    const char *near = name[0] ? rs_nearest(name, names, count) : NULL;
    if (near)
        rs_cli_usage_error(args->prog, "unknown option '%.*s' (did you mean '--%s'?)", name_len,
                           arg, near);
    else
        rs_cli_bad_option(args->prog, arg);
}

/* Options that may be given more than once, each adding a value: an
 * ensemble's models, serve's allowed hosts and the systems `bleu` compares
 * (-i BASELINE -i SYSTEM …). Any other option with a value given twice is
 * refused here, for every command at once, rather than the last one silently
 * winning. */
static int repeatable(const rs_cli_args *args, const char *name)
{
    for (int i = 0; i < args->n_rows; i++)
        if (args->rows[i].name && !strcmp(args->rows[i].name, name))
            return (args->rows[i].flags & RS_CLI_REPEAT) != 0;
    return !strcmp(name, "model") || !strcmp(name, "allow-host") || !strcmp(name, "input");
}

int rs_cli_next(rs_cli_args *args)
{
    if (args->too_many) {
        rs_cli_fail(args->prog, "internal error: option table too large");
        return RS_CLI_BAD;
    }
    int index = -1;
    int c = getopt_long(args->argc, args->argv, args->shortopts, args->longopts, &index);
    if (c == -1)
        return -1;
    if (c == RS_CLI_CONFIG) {
        if (args->config_path) {
            rs_cli_usage_error(args->prog,
                               "--config given twice (%s and %s): give one configuration file; "
                               "options on the command line add to it",
                               args->config_path, optarg);
            return RS_CLI_BAD;
        }
        args->config_path = optarg;
        return rs_cli_next(args);
    }
    /* The argument being parsed: argv[optind - 1] once getopt has moved past it. */
    const char *arg = optind > 0 && optind <= args->argc ? args->argv[optind - 1] : "";
    int is_long = !strncmp(arg, "--", 2), name_len = (int)strcspn(arg, "=");
    char letter[3] = {'-', (char)optopt, 0};
    for (int i = 0; args->longopts[i].name; i++) {
        const struct option *o = &args->longopts[i];
        if (o->flag || o->val != c)
            continue;
        if (args->seen[i] && o->has_arg != no_argument && !repeatable(args, o->name)) {
            char name[96];
            if (is_long || c >= RS_CLI_OPT)
                snprintf(name, sizeof name, "--%s", o->name);
            else
                snprintf(name, sizeof name, "-%c", (char)c);
            rs_cli_usage_error(args->prog,
                               "%s given twice: it takes one value (the second would replace "
                               "the first)",
                               name);
            return RS_CLI_BAD;
        }
        args->seen[i] = 1;
    }
    if (index >= 0 && !strcmp(args->longopts[index].name, "help"))
        return 'h';
    if (c == ':') {
        if (is_long)
            rs_cli_usage_error(args->prog, "option '%.*s' needs a value", name_len, arg);
        else
            rs_cli_usage_error(args->prog, "option '%s' needs a value", letter);
        return RS_CLI_BAD;
    }
    if (c == '?') {
        /* optopt: 0 for an unknown long option; a long option's value when it
         * was given a value it does not take; else the unknown short letter. */
        if (is_long && optopt && long_option_of(args, optopt))
            rs_cli_usage_error(args->prog, "option '%.*s' takes no value", name_len, arg);
        else if (is_long && !optopt && name_len == 6 && !strncmp(arg, "--int8", 6))
            /* Scores, alignments and training are computed with the exact
             * weights: int8 ones would change their numbers. */
            rs_cli_usage_error(args->prog,
                               "--int8 is translate's option: this command computes with the "
                               "exact float weights");
        else if (is_long && !optopt)
            unknown_long_option(args, arg, name_len);
        else
            rs_cli_bad_option(args->prog, !optopt || is_long ? arg : letter);
        return RS_CLI_BAD;
    }
    return c;
}


int rs_cli_seen(const rs_cli_args *args, const char *name)
{
    for (int i = 0; args->longopts[i].name; i++)
        if (args->seen[i] && !strcmp(args->longopts[i].name, name))
            return 1;
    return 0;
}

int rs_cli_once(const char *prog, const char *opt, const char **slot, const char *value)
{
    if (*slot) {
        rs_cli_usage_error(prog, "%s given twice", opt);
        return -1;
    }
    *slot = value;
    return 0;
}

int rs_cli_int(const char *prog, const char *opt, const char *arg, int min, int max, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (errno || *end || end == arg || !rs_config_plain_number(arg) || v < min || v > max) {
        rs_cli_usage_error(prog, "%s: '%s' is not an integer from %d to %d", opt, arg, min, max);
        return -1;
    }
    *out = (int)v;
    return 0;
}

int rs_cli_double(const char *prog, const char *opt, const char *arg, double min, double max,
                  double *out)
{
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    if (errno || *end || end == arg || !rs_config_plain_number(arg) || !isfinite(v) || v < min ||
        v > max) {
        rs_cli_usage_error(prog, "%s: '%s' is not a number from %g to %g", opt, arg, min, max);
        return -1;
    }
    *out = v == 0.0 ? 0.0 : v; /* "-0" is 0: a run's settings compare and print as the same */
    return 0;
}

int rs_cli_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

int rs_cli_bpe_marker(const char *prog, const char *arg, const char **marker)
{
    if (arg && !*arg) {
        rs_cli_usage_error(prog, "--remove-bpe: the marker is empty");
        return -1;
    }
    /* translate decodes pieces itself; elsewhere the word would be taken as a
     * marker no unit ends with, and nothing would be joined. */
    if (arg && !strcmp(arg, "sentencepiece")) {
        rs_cli_usage_error(prog, "--remove-bpe: 'sentencepiece' is not a BPE marker; --words "
                                 "joins SentencePiece pieces");
        return -1;
    }
    *marker = arg ? arg : RS_BPE_MARKER;
    return 0;
}

int rs_cli_choice(const char *prog, const char *opt, const char *arg, const char *const *names,
                  int count, int *out)
{
    for (int i = 0; i < count; i++)
        if (!strcmp(arg, names[i])) {
            *out = i;
            return 0;
        }
    char list[512] = "";
    size_t used = 0;
    for (int i = 0; i < count && used < sizeof list; i++) {
        int n = snprintf(list + used, sizeof list - used, "%s%s",
                         i == 0           ? ""
                         : i == count - 1 ? " or "
                                          : ", ",
                         names[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    rs_cli_usage_error(prog, "%s: '%s' is not one of %s", opt, arg, list);
    return -1;
}

int rs_cli_add_model(const char *prog, rs_models *m, const char *arg)
{
    if (m->count == RS_MAX_MODELS) {
        rs_cli_usage_error(prog, "-m: at most %d models in an ensemble", RS_MAX_MODELS);
        return -1;
    }
    m->args[m->count++] = arg;
    return 0;
}

void rs_cli_end(rs_cli_args *args)
{
    rs_settings_free(&args->config);
    free((void *)args->rows);
    args->rows = NULL;
    args->n_rows = 0;
}

const char *rs_cli_config_model(const rs_cli_args *args)
{
    /* name: at the top level too, where Joey NMT 2 has it (train reads it there). */
    const rs_setting *out = rs_settings_find(&args->config, "training", "out");
    const rs_setting *name = rs_settings_find(&args->config, "training", "name");
    if (!name)
        name = rs_settings_find(&args->config, NULL, "name");
    const rs_setting *it = out ? out : name;
    return it && it->count == 1 ? it->values[0] : NULL;
}

int rs_cli_pairs_finish(const char *prog, rs_pairs_input *in, int argc, char **argv)
{
    if (!in->src != !in->tgt || (in->src && optind < argc) || argc - optind > 1)
        return rs_cli_usage_error(prog, "give one TSV file, or both --src and --tgt");
    in->tsv = in->src ? NULL : optind < argc ? argv[optind] : "-";
    return -1;
}

int rs_cli_bpe_value(const char *arg)
{
    static const char *const values[] = {"@@", "@@ ", "subword_nmt", "sentencepiece"};
    for (size_t i = 0; i < sizeof values / sizeof *values; i++)
        if (!strcmp(arg, values[i]))
            return 1;
    return 0;
}
