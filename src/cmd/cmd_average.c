/* rnnsearch average: one checkpoint whose parameters are the element-wise
 * mean of several checkpoints' (checkpoint averaging). */
#include <stdio.h>
#include <string.h>

#include "model/average.h"
#include "model/checkpoint.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "cmd/commands.h"
#include "train/output.h"

#define PROG "rnnsearch average"

static const rs_cli_option option_table[] = {
    {.kind = RS_CLI_TEXT,
     .help = "  CKPT                a checkpoint file, or a model directory (models/NAME)\n"
             "                      whose best.ckpt, else last.ckpt, is used\n"},
    {"output", 'o', RS_CLI_STRING, 0, .value = "FILE",
     .help = "the checkpoint to write (required)"},
    {"help", 'h', RS_CLI_HELP, .help = "show this help"},
    {0},
};

static const rs_cli_command command = {
    "average",
    PROG,
    "usage: rnnsearch average -o OUT.ckpt CKPT CKPT...\n"
    "Writes a checkpoint whose parameters are the element-wise mean of the given\n"
    "checkpoints' parameters, e.g. the last few checkpoints of one training run.\n"
    "The checkpoints must share sizes, attention, text settings (lower-casing,\n"
    "tokenizer, subwords), vocabularies and SentencePiece models; training settings\n"
    "may differ, and the output keeps the first checkpoint's. The output holds\n"
    "weights only (no training state: it cannot be resumed) and is written\n"
    "atomically: a new name, or a checkpoint that is none of those averaged. In a\n"
    "training run's directory (beside the checkpoints averaged) any name but those\n"
    "training writes (last.ckpt, best.ckpt, step-N.ckpt, its logs) may be used.\n\n",
    NULL,
    22,
    sizeof(const char *),
    option_table};

int cmd_average(int argc, char **argv)
{
    const char *out_path = NULL; /* the table's one field */
    rs_cli_args args;
    int status = rs_cli_parse(&command, &out_path, &args, argc, argv);
    rs_cli_end(&args);
    if (status >= 0)
        return status;
    if (!out_path || !*out_path)
        return rs_cli_usage_error(PROG, "no output given (-o OUT.ckpt)");
    if (!strcmp(out_path, "-"))
        return rs_cli_usage_error(
            PROG,
            "-o -: a checkpoint is binary and is not written to standard output; give a file name");
    if (argc - optind < 1)
        return rs_cli_usage_error(PROG, "no checkpoints given");
    /* A new checkpoint, or over one that is none of those averaged; in a
     * run's directory, under a name training does not write. */
    rs_output_rule rule;
    rs_error refused;
    rs_output_rule_init(&rule, RS_OUTPUT_CHECKPOINT, NULL);
    rule.beside_run = 1;
    int bad = 0;
    for (int i = optind; i < argc && !bad; i++)
        bad = rs_output_add_model(&rule, argv[i], &refused);
    bad = bad || rs_output_check(&rule, out_path, &refused);
    rs_output_rule_free(&rule);
    if (bad)
        return rs_cli_usage_error(PROG, "%s", refused.msg);

    rs_average avg = {0};
    rs_error err;
    if (rs_average_checkpoints(&avg, (const char *const *)argv + optind, argc - optind, &err)) {
        rs_average_free(&avg);
        return rs_cli_fail(PROG, "%s", err.msg);
    }
    int rc = rs_checkpoint_save(out_path, &avg.mean, NULL, &err);
    if (rc)
        rs_cli_fail(PROG, "%s", err.msg);
    else
        fprintf(stderr, PROG ": wrote %s, the mean of %d checkpoints (%zu parameters)\n", out_path,
                avg.count, avg.mean.layout.total);
    rs_average_free(&avg);
    return rc ? RS_EXIT_FAIL : RS_EXIT_OK;
}
