/* rnnsearch export: a checkpoint's model as a safetensors file in the
 * interchange format of docs/model.md. */
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

#define PROG "rnnsearch export"

typedef struct {
    const char *model_arg, *out_path;
} export_request;

#define RQ export_request
static const rs_cli_option option_table[] = {
    {"model", 'm', RS_CLI_STRING, RS_AT(RQ, model_arg), .value = "MODEL",
     .help = "a checkpoint file, or a model directory (models/NAME)\n"
             "whose best.ckpt, else last.ckpt, is used (required)"},
    {"output", 'o', RS_CLI_STRING, RS_AT(RQ, out_path), .value = "FILE",
     .help = "the safetensors file to write (required; may also be\n"
             "given as the one operand: export -m MODEL FILE)"},
    {"help", 'h', RS_CLI_HELP, .help = "show this help"},
    {0},
};
#undef RQ

static const rs_cli_command command = {
    "export",
    PROG,
    "usage: rnnsearch export -m MODEL -o OUT.safetensors\n"
    "Writes the model's weights, vocabularies, sizes and text settings in the\n"
    "safetensors interchange format (see docs/model.md, \"Interchange names\").\n"
    "OUT is replaced atomically: it must be a new name or a regular file (not '-',\n"
    "a symbolic link, a device or a FIFO), not the checkpoint itself nor any\n"
    "checkpoint, and not in a training run's directory.\n\n",
    NULL,
    22,
    sizeof(export_request),
    option_table};

int cmd_export(int argc, char **argv)
{
    export_request rq = {0};
    rs_cli_args args;
    const int parsed = rs_cli_parse(&command, &rq, &args, argc, argv);
    rs_cli_end(&args);
    if (parsed >= 0)
        return parsed;
    const char *model_arg = rq.model_arg, *out_path = rq.out_path;
    if (!model_arg)
        return rs_cli_usage_error(PROG, "no model given (-m MODEL)");
    /* The output may also be the one operand, as before -o existed. */
    if (optind < argc && rs_cli_once(PROG, "the output file", &out_path, argv[optind++]))
        return RS_EXIT_USAGE;
    if (optind < argc)
        return rs_cli_usage_error(PROG, "unexpected argument '%s'", argv[optind]);
    if (!out_path)
        return rs_cli_usage_error(PROG, "no output file given (-o OUT.safetensors)");
    if (!strcmp(out_path, "-"))
        return rs_cli_usage_error(
            PROG,
            "the output must be a file name, not '-' (a safetensors file is replaced atomically, never streamed)");

    rs_error err;
    char ckpt[4096];
    rs_model model;
    rs_output_rule rule;
    rs_output_rule_init(&rule, RS_OUTPUT_BINARY, NULL);
    if (rs_model_locate(model_arg, ckpt, sizeof ckpt, &err)) {
        return rs_cli_fail(PROG, "%s", err.msg);
    }
    int refused = rs_output_add_input(&rule, ckpt, &err) || rs_output_check(&rule, out_path, &err);
    rs_output_rule_free(&rule);
    if (refused)
        return rs_cli_usage_error(PROG, "%s", err.msg);
    if (rs_checkpoint_load(ckpt, &model, NULL, &err)) {
        return rs_cli_fail(PROG, "%s", err.msg);
    }
    int rc = rs_safetensors_export(out_path, &model, &err);
    if (rc)
        rs_cli_fail(PROG, "%s", err.msg);
    else
        fprintf(stderr, PROG ": wrote %s from %s (%zu parameters, %d + %d tokens)\n", out_path,
                ckpt, model.layout.total, model.src_vocab.size, model.tgt_vocab.size);
    rs_model_free(&model);
    return rc ? RS_EXIT_FAIL : RS_EXIT_OK;
}
