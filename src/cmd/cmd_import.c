/* rnnsearch import: a safetensors file in the interchange format of
 * docs/model.md becomes a checkpoint (weights only: no training state). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "model/checkpoint.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "common/fileio.h"
#include "cmd/commands.h"
#include "train/output.h"
#include "model/safetensors.h"

#define PROG "rnnsearch import"

static const rs_cli_option option_table[] = {
    {"output", 'o', RS_CLI_STRING, 0, .value = "MODEL",
     .help = "FILE.ckpt: write that file; anything else is a model\n"
             "directory (e.g. models/NAME, created if missing)\n"
             "that receives best.ckpt (required)"},
    {"help", 'h', RS_CLI_HELP, .help = "show this help"},
    {0},
};

static const rs_cli_command command = {
    "import",
    PROG,
    "usage: rnnsearch import IN.safetensors -o MODEL\n"
    "Reads a model in the safetensors interchange format (see docs/model.md,\n"
    "\"Interchange names\") and writes it as a checkpoint. Training settings in\n"
    "the checkpoint's configuration are the defaults. The checkpoint is replaced\n"
    "atomically: it must be a new name or a checkpoint, not the input itself, and\n"
    "not in a training run's directory.\n\n",
    NULL,
    22,
    sizeof(const char *),
    option_table};

int cmd_import(int argc, char **argv)
{
    const char *out_arg = NULL; /* the table's one field */
    rs_cli_args args;
    const int status = rs_cli_parse(&command, &out_arg, &args, argc, argv);
    rs_cli_end(&args);
    if (status >= 0)
        return status;
    if (argc - optind != 1)
        return rs_cli_usage_error(PROG, argc == optind ? "no input file given"
                                                       : "exactly one input file");
    if (!out_arg || !*out_arg)
        return rs_cli_usage_error(PROG, "no output given (-o MODEL)");
    if (!strcmp(out_arg, "-"))
        return rs_cli_usage_error(PROG, "-o -: a checkpoint is a file, not standard output");
    const char *in_path = argv[optind];

    char out_path[4096];
    int n;
    if (rs_cli_ends_with(out_arg, ".ckpt"))
        n = snprintf(out_path, sizeof out_path, "%s", out_arg);
    else
        n = snprintf(out_path, sizeof out_path, "%s%sbest.ckpt", out_arg,
                     rs_cli_ends_with(out_arg, "/") ? "" : "/");
    if (n < 0 || (size_t)n >= sizeof out_path)
        return rs_cli_usage_error(PROG, "output path too long");

    rs_error err;
    rs_model model;
    rs_output_rule rule;
    rs_output_rule_init(&rule, RS_OUTPUT_CHECKPOINT, NULL);
    int refused =
        rs_output_add_input(&rule, in_path, &err) || rs_output_check(&rule, out_path, &err);
    rs_output_rule_free(&rule);
    if (refused)
        return rs_cli_usage_error(PROG, "%s", err.msg);
    if (rs_safetensors_import(in_path, &model, &err)) {
        return rs_cli_fail(PROG, "%s", err.msg);
    }
    int rc = rs_checkpoint_save(out_path, &model, NULL, &err);
    if (rc)
        rs_cli_fail(PROG, "%s", err.msg);
    else
        fprintf(stderr, PROG ": wrote %s (n=%d m=%d a=%d l=%d, attention %s, %d + %d tokens)\n",
                out_path, model.cfg.hidden, model.cfg.emb, model.cfg.att, model.cfg.maxout,
                rs_attention_names[model.cfg.attention], model.src_vocab.size,
                model.tgt_vocab.size);
    rs_model_free(&model);
    return rc ? RS_EXIT_FAIL : RS_EXIT_OK;
}
