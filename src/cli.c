#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "cli.h"
#include "forced.h"

typedef struct {
    const char *field; /* config key */
    char option[RS_STR_MAX];
    const char *help;
    int is_flag;       /* boolean: takes no argument */
} config_option;

static config_option table[RS_CLI_MAX_CONFIG_OPTIONS];
static int table_size;

static void build_table(void)
{
    if (table_size)
        return;
    /* Booleans are flags (--lowercase); sizes taken from the data are not options. */
#define RS_ENTRY(name, def, hlp, ...)                                                       \
    if (strcmp(#name, "src_vocab") && strcmp(#name, "tgt_vocab")) {                       \
        config_option *o = &table[table_size++];                                          \
        o->field = #name;                                                                 \
        snprintf(o->option, sizeof o->option, "%s", #name);                               \
        for (char *p = o->option; *p; p++)                                                \
            if (*p == '_')                                                                \
                *p = '-';                                                                 \
        o->help = hlp;                                                                    \
        o->is_flag = rs_config_is_flag(#name);                                                \
    }
    RS_CONFIG_FIELDS(RS_ENTRY, RS_ENTRY, RS_ENTRY)
#undef RS_ENTRY
}

int rs_cli_add_config_options(struct option *opts, int count, int first_val)
{
    build_table();
    for (int i = 0; i < table_size; i++) {
        opts[count++] = (struct option){table[i].option, table[i].is_flag ? no_argument : required_argument,
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
        snprintf(text, sizeof text, table[i].is_flag ? "--%s" : "--%s X", table[i].option);
        if (table[i].is_flag)
            fprintf(out, "  %-22s %s\n", text, table[i].help);
        else
            fprintf(out, "  %-22s %s (default: %s%s)\n", text, table[i].help, value, range);
    }
}

int rs_cli_int(const char *prog, const char *opt, const char *arg, int min, int max, int *out)
{
    char *end;
    long v = strtol(arg, &end, 10);
    if (*end || end == arg || v < min || v > max) {
        fprintf(stderr, "%s: %s: '%s' is not an integer from %d to %d\n", prog, opt, arg, min, max);
        return -1;
    }
    *out = (int)v;
    return 0;
}

int rs_cli_load_model(const char *model_arg, rs_model *model, rs_codec *codec, rs_error *err)
{
    char path[4096];
    if (rs_checkpoint_resolve(model_arg, path, sizeof path, err) ||
        rs_checkpoint_load(path, model, NULL, err))
        return -1;
    if (codec && rs_codec_for_model(codec, model, err)) {
        rs_model_free(model);
        return -1;
    }
    return 0;
}

int rs_cli_bad_option(const char *prog, const char *arg)
{
    fprintf(stderr, "%s: unknown option or missing value: %s\ntry '%s --help'\n", prog, arg, prog);
    return RS_EXIT_USAGE;
}

int rs_cli_usage_error(const char *prog, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry '%s --help'.\n", prog);
    va_end(ap);
    return RS_EXIT_USAGE;
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
