/* rnnsearch info: what a checkpoint holds, for people: the stored
 * configuration, then model/describe.h's description; or the configuration
 * as a YAML file for train --config. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/checkpoint.h"
#include "model/describe.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "cmd/commands.h"
#include "cli/config/alias.h"
#include "search/translate.h"
#include "train/rundir.h"
#include "text/settings_file.h"

#define PROG "rnnsearch info"

typedef struct {
    const char *model_arg;
    int yaml; /* --config */
} info_request;

#define RQ info_request
static const rs_cli_option option_table[] = {
    {"model", 'm', RS_CLI_STRING, RS_AT(RQ, model_arg), .value = "MODEL",
     .help = "a checkpoint file, or a model directory (models/NAME)\n"
             "whose best.ckpt, else last.ckpt, is used (required)"},
    {"config", .kind = RS_CLI_FLAG, RS_AT(RQ, yaml),
     .help = "print only the configuration, as a YAML file for\n"
             "'rnnsearch train --config FILE' that repeats the run\n"
             "and a translation: section; the data paths are those\n"
             "of the run's DIR/config.yaml (the --config file it was\n"
             "started with), else lines to fill in: the checkpoint\n"
             "holds a fingerprint of the data, not its files' names"},
    {"help", 'h', RS_CLI_HELP, .help = "show this help"},
    {0},
};
#undef RQ

static const rs_cli_command command = {
    "info",
    PROG,
    "usage: rnnsearch info -m MODEL [--config]\n"
    "Prints what a checkpoint holds: its configuration as 'key = value' lines,\n"
    "then, as '#' comment lines, the size of every parameter tensor and their\n"
    "total, the vocabulary sizes, the text settings and the training counters\n"
    "(step, epoch, best dev loss and BLEU) when the checkpoint has them.\n\n",
    NULL,
    22,
    sizeof(info_request),
    option_table};

/* The settings of one section from rs_config_write's "key=value" lines:
 * flags as true/false, floats in their shortest form that reads back the
 * same. */
static void print_section(char *text, const char *section)
{
    for (char *line = text; line && *line;) {
        char *eol = strchr(line, '\n'), *eq = strchr(line, '=');
        if (eol)
            *eol = 0;
        if (eq) {
            *eq = 0;
            const char *v = eq + 1;
            char shortest[32], *end;
            float f;
            if (rs_config_is_flag(line))
                v = !strcmp(v, "1") ? "true" : "false";
            else if (strpbrk(v, ".e") && (f = strtof(v, &end), !*end)) {
                /* 0.002 rather than 0.00200000009 when both are the same float */
                snprintf(shortest, sizeof shortest, "%g", (double)f);
                if (strtof(shortest, NULL) == f)
                    v = shortest;
            }
            if (strcmp(line, "src_vocab") && strcmp(line, "tgt_vocab") &&
                !strcmp(rs_cli_config_section(line), section))
                printf("  %s: %s\n", line, v);
            *eq = '=';
        }
        if (eol)
            *eol = '\n';
        line = eol ? eol + 1 : NULL;
    }
}

/* The settings of section in the copy of the --config file a run was started
 * with, beside its checkpoint (DIR/config.yaml, train/rundir.h), read as
 * train reads it (Joey NMT's names too); none when there is no copy. */
static void read_run_config(const char *ckpt, rs_settings *s)
{
    char path[4200];
    const char *slash = strrchr(ckpt, '/');
    snprintf(path, sizeof path, "%.*s%s", slash ? (int)(slash - ckpt + 1) : 0, ckpt,
             RS_CONFIG_COPY);
    rs_error err;
    memset(s, 0, sizeof *s);
    if (access(path, R_OK) != 0)
        return;
    if (rs_settings_read(path, s, &err) || rs_config_aliases(s, path, &err)) {
        rs_settings_free(s);
        printf("# %s does not read: %s\n", path, err.msg);
        return;
    }
}

/* data: the run's files when the copy of its --config file names them (the
 * paths as training was given them, from the directory it ran in), else
 * lines to fill in. */
static void print_data_paths(const rs_settings *copy)
{
    static const char *const keys[] = {"train", "src", "tgt", "dev", "dev_src", "dev_tgt"};
    int named = 0;
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const rs_setting *it = rs_settings_find(copy, "data", keys[i]);
        if (it && it->count == 1 && !it->is_list) {
            if (!named++)
                printf("  # the files of the --config file this run was started with\n");
            rs_settings_write_pair(stdout, keys[i], it->values[0]);
        }
    }
    if (!named)
        printf("  # train: PAIRS.tsv          (or src: FILE and tgt: FILE)\n"
               "  # dev: DEV.tsv              (or dev_src: FILE and dev_tgt: FILE)\n");
}

/* translation: translate's defaults, or what the run's file set. */
static void print_translation(const rs_settings *copy)
{
    rs_translate_options opt;
    rs_translate_options_default(&opt);
    char values[6][32];
    snprintf(values[0], sizeof values[0], "%d", opt.beam);
    snprintf(values[1], sizeof values[1], "%.1f", (double)opt.length_penalty);
    snprintf(values[2], sizeof values[2], "%d", opt.batch_size);
    snprintf(values[3], sizeof values[3], "%d", opt.max_src_len);
    snprintf(values[4], sizeof values[4], "%s", opt.replace_unk ? "true" : "false");
    snprintf(values[5], sizeof values[5], "%s", opt.remove_bpe ? "true" : "false");
    static const char *const keys[] = {"beam",        "length_penalty", "batch_size",
                                       "max_src_len", "replace_unk",    "remove_bpe"};
    printf("translation:\n");
    for (int i = 0; i < 6; i++) {
        const rs_setting *it = rs_settings_find(copy, "translation", keys[i]);
        rs_settings_write_pair(stdout, keys[i],
                               it && it->count == 1 && !it->is_list ? it->values[0] : values[i]);
    }
}

/* The configuration as the YAML file train --config reads, values written
 * exactly (floats with %.9g) so that training from it gives the same bits. */
static int print_yaml(const char *path, const rs_config *cfg)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem)
        return -1;
    rs_config_write(cfg, mem);
    if (fclose(mem))
        return -1;
    printf("# The configuration of %s: 'rnnsearch train --config FILE' repeats its\n"
           "# training bit for bit, given the data it was trained on and the same\n"
           "# --threads (a checkpoint records its data's fingerprint, not its files).\n",
           path);
    rs_settings copy;
    read_run_config(path, &copy);
    static const char *const order[] = {"data", "model", "training"};
    for (int k = 0; k < 3; k++) {
        printf("%s:\n", order[k]);
        if (k == 0)
            print_data_paths(&copy);
        if (k == 2)
            printf("  # out: DIR                  (or name: NAME)\n");
        print_section(text, order[k]);
    }
    print_translation(&copy);
    rs_settings_free(&copy);
    free(text);
    return 0;
}

int cmd_info(int argc, char **argv)
{
    info_request rq = {0};
    rs_cli_args args;
    const int parsed = rs_cli_parse(&command, &rq, &args, argc, argv);
    rs_cli_end(&args);
    if (parsed >= 0)
        return parsed;
    const char *model_arg = rq.model_arg;
    if (!model_arg)
        return rs_cli_usage_error(PROG, "no model given (-m MODEL)");
    if (optind < argc)
        return rs_cli_usage_error(PROG, "unexpected argument '%s'", argv[optind]);

    rs_error err;
    char path[4096];
    rs_model model;
    rs_train_state state;
    if (rs_model_locate(model_arg, path, sizeof path, &err) ||
        rs_checkpoint_load(path, &model, &state, &err)) {
        return rs_cli_fail(PROG, "%s", err.msg);
    }
    if (rq.yaml) {
        const rs_config settings = rs_model_settings(&model);
        int failed = print_yaml(path, &settings);
        rs_train_state_free(&state);
        rs_model_free(&model);
        if (failed || fflush(stdout))
            return rs_cli_fail(PROG, "cannot write the output");
        return RS_EXIT_OK;
    }
    struct stat st;
    printf("# %s", path);
    if (!stat(path, &st))
        printf(" (%lld bytes)", (long long)st.st_size);
    printf("\n# configuration\n");
    const rs_config settings = rs_model_settings(&model);
    rs_cli_print_config(stdout, &settings);
    rs_model_describe(stdout, &model, &state);
    rs_train_state_free(&state);
    rs_model_free(&model);
    if (fflush(stdout))
        return rs_cli_fail(PROG, "cannot write the output");
    return RS_EXIT_OK;
}
