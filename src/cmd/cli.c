/* The command layer's shared helpers. Part of the program, not of the
 * library: it prints, and it keeps the option table below. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/checkpoint.h"
#include "cmd/cli.h"
#include "cmd/config_alias.h"
#include "model/locate.h"
#include "common/fileio.h"
#include "search/forced.h"

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

int rs_cli_add_config_options(struct option *opts, int count, int first_val)
{
    build_table();
    for (int i = 0; i < table_size; i++) {
        opts[count++] =
            (struct option){table[i].option, table[i].is_flag ? no_argument : required_argument,
                            NULL, first_val + i};
    }
    opts[count] = (struct option){0};
    return count;
}

int rs_cli_set_config(rs_config *cfg, int val, int first_val, const char *arg, rs_error *err)
{
    build_table();
    int i = val - first_val;
    if (i < 0 || i >= table_size)
        return rs_fail(err, "internal: unknown option value %d", val);
    if (table[i].is_flag)
        return rs_config_set(cfg, table[i].field, "1", err);
    return rs_config_set_option(cfg, table[i].field, arg, err);
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

const char *rs_cli_config_name(int val, int first_val)
{
    build_table();
    int i = val - first_val;
    return i >= 0 && i < table_size ? table[i].field : "";
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

int rs_cli_load_model(const char *model_arg, rs_model *model, rs_codec *codec, rs_error *err)
{
    char path[4096];
    if (rs_model_locate(model_arg, path, sizeof path, err) ||
        rs_checkpoint_load(path, model, NULL, err))
        return -1;
    if (codec && rs_codec_for_model(codec, model, err)) {
        rs_model_free(model);
        return -1;
    }
    return 0;
}

/* "FILE:LINE" while a configuration file's setting is applied: the
 * messages of the option helpers then name where the value came from. */
static char usage_origin[4200];

int rs_cli_usage_error(const char *prog, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: %s%s", prog, usage_origin, usage_origin[0] ? ": " : "");
    vfprintf(stderr, fmt, ap);
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

int rs_cli_cut_sources(const char *prog, rs_tokenized *tok, int max_src_len, const char *name,
                       rs_error *err)
{
    int *cut = rs_calloc((size_t)tok->count + 1, sizeof(int), err);
    if (!cut)
        return -1;
    rs_cut_sources(tok, max_src_len, cut);
    for (int i = 0; i < tok->count; i++)
        if (cut[i])
            fprintf(stderr, "%s: %s: pair %d: source cut to its first %d tokens (%d more)\n", prog,
                    strcmp(name, "-") ? name : "<stdin>", i + 1, max_src_len, cut[i]);
    free(cut);
    return 0;
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

void rs_cli_begin_numbers(rs_cli_args *args, const rs_cli_number *numbers)
{
    args->numbers = numbers;
}

/* 1 after storing arg into the field of option c, -1 after reporting a bad
 * value, 0 when c is not in the table. */
static int number_option(const char *prog, const rs_cli_number *numbers, int c, const char *arg)
{
    for (const rs_cli_number *n = numbers; n->val; n++) {
        if (n->val != c)
            continue;
        if (n->i)
            return rs_cli_int(prog, n->name, arg, (int)n->min, (int)n->max, n->i) ? -1 : 1;
        double v;
        if (rs_cli_double(prog, n->name, arg, n->min, n->max, &v))
            return -1;
        *n->f = (float)v;
        return 1;
    }
    return 0;
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
    const char *near = name[0] ? rs_cli_nearest(name, names, count) : NULL;
    if (near)
        rs_cli_usage_error(args->prog, "unknown option '%.*s' (did you mean '--%s'?)", name_len,
                           arg, near);
    else
        rs_cli_bad_option(args->prog, arg);
}

static int next_option(rs_cli_args *args)
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
    for (int i = 0; args->longopts[i].name; i++)
        if (!args->longopts[i].flag && args->longopts[i].val == c)
            args->seen[i] = 1;
    if (index >= 0 && !strcmp(args->longopts[index].name, "help"))
        return 'h';
    /* The argument being parsed: argv[optind - 1] once getopt has moved past it. */
    const char *arg = optind > 0 && optind <= args->argc ? args->argv[optind - 1] : "";
    int is_long = !strncmp(arg, "--", 2), name_len = (int)strcspn(arg, "=");
    char letter[3] = {'-', (char)optopt, 0};
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
        else if (is_long && !optopt)
            unknown_long_option(args, arg, name_len);
        else
            rs_cli_bad_option(args->prog, !optopt || is_long ? arg : letter);
        return RS_CLI_BAD;
    }
    return c;
}

int rs_cli_next(rs_cli_args *args)
{
    for (;;) {
        const int c = next_option(args);
        const int number =
            args->numbers && c > 0 ? number_option(args->prog, args->numbers, c, optarg) : 0;
        if (number == 0)
            return c;
        if (number < 0)
            return RS_CLI_BAD;
    }
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
    if (errno || *end || end == arg || v < min || v > max) {
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
    if (errno || *end || end == arg || !isfinite(v) || v < min || v > max) {
        rs_cli_usage_error(prog, "%s: '%s' is not a number from %g to %g", opt, arg, min, max);
        return -1;
    }
    *out = v;
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

int rs_cli_add_model(const char *prog, rs_cli_models *m, const char *arg)
{
    if (m->count == RS_CLI_MAX_MODELS) {
        rs_cli_usage_error(prog, "-m: at most %d models in an ensemble", RS_CLI_MAX_MODELS);
        return -1;
    }
    m->args[m->count++] = arg;
    return 0;
}

int rs_cli_load_models(rs_cli_models *m, rs_codec *codec, rs_error *err)
{
    for (; m->loaded < m->count; m->loaded++) {
        const int k = m->loaded;
        if (rs_cli_load_model(m->args[k], &m->models[k], k ? NULL : codec, err))
            return -1;
        m->members[k] = &m->models[k];
    }
    return 0;
}

void rs_cli_models_free(rs_cli_models *m)
{
    for (int k = 0; k < m->loaded; k++)
        rs_model_free(&m->models[k]);
    m->loaded = 0;
}

int rs_cli_one_option(const char *prog, int argc, char **argv, char letter, const char **value,
                      void (*usage)(FILE *out))
{
    const struct option options[] = {
        {letter == 'o' ? "output" : "model", required_argument, NULL, letter},
        {NULL, 0, NULL, 0},
    };
    const char shortopts[3] = {letter, ':', 0};
    rs_cli_args args;
    rs_cli_begin(&args, prog, argc, argv, shortopts, options);
    *value = NULL;
    int c;
    while ((c = rs_cli_next(&args)) != -1) {
        if (c == 'h') {
            usage(stdout);
            return RS_EXIT_OK;
        }
        if (c != letter ||
            rs_cli_once(prog, letter == 'o' ? "-o/--output" : "-m/--model", value, optarg))
            return RS_EXIT_USAGE;
    }
    return -1;
}

/* ---- Configuration files ------------------------------------------------ */

/* Every section a configuration file may hold, whichever command reads it. */
static const char *const sections[] = {"data", "model", "training", "translation", "serve", NULL};
enum { SECTION_COUNT = 5 };

const char *rs_cli_config_section(const char *key)
{
    static const char *const model[] = {"emb",       "hidden",         "att", "maxout",
                                        "attention", "tie_embeddings", NULL};
    static const char *const data[] = {"lowercase",    "tokenizer",    "subwords",
                                       "min_freq",     "max_vocab",    "max_len",
                                       "post_process", "shared_vocab", NULL};
    return rs_config_name_index(model, key) >= 0  ? "model"
           : rs_config_name_index(data, key) >= 0 ? "data"
                                                  : "training";
}

/* Where a command's option goes in a configuration file. */
typedef struct {
    const char *command; /* "train" */
    const char *option;  /* the long option: "batch-size" */
    const char *section; /* "training" */
    int group;           /* nonzero: options that stand for each other */
    int repeatable;      /* a YAML list gives the option once per item */
} rs_cli_setting;

/* The settings of every command that reads a file: what a file may hold.
 * train's --resume, --overwrite and --new-data say what to do with a
 * directory this time, so only the command line gives them. Groups: options
 * that stand for each other (--train for --src and --tgt). */
static const rs_cli_setting fixed_settings[] = {
    {"train", "train", "data", 1, 0},
    {"train", "src", "data", 1, 0},
    {"train", "tgt", "data", 1, 0},
    {"train", "dev", "data", 2, 0},
    {"train", "dev-src", "data", 2, 0},
    {"train", "dev-tgt", "data", 2, 0},
    {"train", "swap", "data", 0, 0},
    {"train", "spm-src", "data", 0, 0},
    {"train", "spm-tgt", "data", 0, 0},
    {"train", "src-vocab", "data", 0, 0},
    {"train", "tgt-vocab", "data", 0, 0},
    {"train", "name", "training", 3, 0},
    {"train", "out", "training", 3, 0},
    {"train", "quiet", "training", 0, 0},
    {"train", "log", "training", 0, 0},
    {"train", "watch", "data", 5, 0},
    {"train", "no-watch", "training", 5, 0},
    {"train", "dev-align", "data", 0, 0},
    {"train", "dev-align-threshold", "training", 0, 0},
    {"train", "remove-bpe", "data", 0, 0},
    {"train", "strict", "data", 0, 0},
    {"translate", "beam", "translation", 0, 0},
    {"translate", "length-penalty", "translation", 0, 0},
    {"translate", "n-best", "translation", 0, 0},
    {"translate", "batch-size", "translation", 0, 0},
    {"translate", "max-len", "translation", 0, 0},
    {"translate", "max-src-len", "translation", 0, 0},
    {"translate", "replace-unk", "translation", 0, 0},
    {"translate", "alignment", "translation", 0, 0},
    {"translate", "remove-bpe", "translation", 0, 0},
    {"translate", "post-process", "translation", 0, 0},
    {"translate", "threads", "translation", 0, 0},
    {"translate", "weights", "translation", 0, 1},
    {"serve", "host", "serve", 0, 0},
    {"serve", "port", "serve", 0, 0},
    {"serve", "allow-host", "serve", 0, 1},
    {"serve", "token", "serve", 4, 0},
    {"serve", "no-token", "serve", 4, 0},
    {"serve", "threads", "serve", 0, 0},
    {"serve", "queue", "serve", 0, 0},
    {"serve", "connections", "serve", 0, 0},
    {"serve", "max-body", "serve", 0, 0},
    {"serve", "max-chars", "serve", 0, 0},
    {"serve", "max-batch", "serve", 0, 0},
    {"serve", "max-beam", "serve", 0, 0},
    {"serve", "max-answer", "serve", 0, 0},
    {"serve", "timeout", "serve", 0, 0},
    {"serve", "run", "serve", 0, 0},
};
enum { FIXED_SETTINGS = sizeof fixed_settings / sizeof *fixed_settings };

static rs_cli_setting all_settings[FIXED_SETTINGS + RS_CLI_MAX_CONFIG_OPTIONS + 1];
static int settings_count;

/* The fixed settings and train's configuration options, each in its section. */
static void build_settings(void)
{
    if (settings_count)
        return;
    build_table();
    memcpy(all_settings, fixed_settings, sizeof fixed_settings);
    settings_count = FIXED_SETTINGS;
    for (int i = 0; i < table_size; i++)
        all_settings[settings_count++] =
            (rs_cli_setting){"train", table[i].option, rs_cli_config_section(table[i].field), 0, 0};
}

/* Levenshtein distance, for names of a few dozen letters. */
static int edit_distance(const char *a, const char *b)
{
    int row[128];
    const int n = (int)strlen(b);
    if (n >= 127 || strlen(a) >= 127)
        return 1 << 20;
    for (int j = 0; j <= n; j++)
        row[j] = j;
    for (int i = 1; a[i - 1]; i++) {
        int diagonal = row[0];
        row[0] = i;
        for (int j = 1; j <= n; j++) {
            const int up = row[j];
            const int change = diagonal + (a[i - 1] != b[j - 1]);
            row[j] = change < up + 1 ? change : up + 1;
            if (row[j - 1] + 1 < row[j])
                row[j] = row[j - 1] + 1;
            diagonal = up;
        }
    }
    return row[n];
}

const char *rs_cli_nearest(const char *word, const char *const *names, int count)
{
    const char *best = NULL;
    int best_d = 0, limit = (int)strlen(word) / 3;
    if (limit < 2)
        limit = 2;
    for (int i = 0; i < count; i++) {
        const int d = edit_distance(word, names[i]);
        if (d <= limit && (!best || d < best_d))
            best = names[i], best_d = d;
    }
    return best;
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
    const char *near = rs_cli_nearest(it->key, names, count);
    if (!it->section && !near)
        near = rs_cli_nearest(it->key, sections, SECTION_COUNT);
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
        const char *near = rs_cli_nearest(it->section, sections, SECTION_COUNT);
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
static int apply_value(rs_cli_args *args, const struct option *o, const rs_setting *it, int k,
                       rs_cli_apply apply, void *ctx)
{
    const char *v = it->values[k];
    snprintf(usage_origin, sizeof usage_origin, "%s:%d", args->config_path, it->value_lines[k]);
    int status = -1;
    if (o->has_arg != required_argument) {
        static const char *const yes[] = {"true", "yes", "on", "1", "True", "TRUE", NULL};
        static const char *const no[] = {"false", "no", "off", "0", "False", "FALSE", NULL};
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
        /* A numeric option of the command's table is stored as on the command line. */
        const int number = args->numbers ? number_option(args->prog, args->numbers, o->val, v) : 0;
        status = number == 0 ? apply(ctx, o->val, v) : number < 0 ? RS_EXIT_USAGE : -1;
    }
    usage_origin[0] = 0;
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

int rs_cli_apply_config(rs_cli_args *args, const char *command, rs_cli_apply apply, void *ctx)
{
    if (!args->config_path)
        return -1;
    build_settings();
    rs_error err;
    if (rs_settings_read(args->config_path, &args->config, &err) ||
        rs_config_aliases(&args->config, args->config_path, &err))
        return rs_cli_usage_error(args->prog, "%s", err.msg);
    file_options given = {.n = 0};
    for (int i = 0; i < args->config.count; i++) {
        const rs_setting *it = &args->config.items[i];
        int status;
        const rs_cli_setting *s = setting_of(args, command, it, &status);
        if (status >= 0)
            return status;
        if (s && (status = given_twice(args, &given, s, i)) >= 0)
            return status;
        /* Another command's settings are checked, and left to it. */
        if (!s || strcmp(s->command, command) || given_on_command_line(args, s))
            continue;
        if (it->is_list && !s->repeatable)
            return rs_cli_usage_error(args->prog, "%s:%d: '%s' takes one value, not a list",
                                      args->config_path, it->line, it->key);
        const struct option *o = args->longopts;
        while (o->name && strcmp(o->name, s->option))
            o++;
        if (!o->name)
            return rs_cli_usage_error(args->prog, "internal: no option --%s", s->option);
        for (int k = 0; k < it->count; k++)
            if ((status = apply_value(args, o, it, k, apply, ctx)) >= 0)
                return status;
    }
    return -1;
}

void rs_cli_end(rs_cli_args *args)
{
    rs_settings_free(&args->config);
}

const char *rs_cli_config_model(const rs_cli_args *args)
{
    const rs_setting *out = rs_settings_find(&args->config, "training", "out");
    const rs_setting *name = rs_settings_find(&args->config, "training", "name");
    const rs_setting *it = out ? out : name;
    return it && it->count == 1 ? it->values[0] : NULL;
}
