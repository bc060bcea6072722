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
#include "train/rundir.h"
#include "train/run_config.h"
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
        rs_settings copy;
        read_run_config(path, &copy);
        int failed = rs_run_config_write(stdout, path, &settings, &copy);
        rs_settings_free(&copy);
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
