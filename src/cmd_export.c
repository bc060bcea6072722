/* rnnsearch export: a checkpoint's model as a safetensors file in the
 * interchange format of ../shared/docs/model.md. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "checkpoint.h"
#include "cli.h"
#include "fileio.h"
#include "commands.h"
#include "safetensors.h"

static void usage(FILE *out)
{
    fputs("usage: rnnsearch export -m MODEL OUT.safetensors\n"
          "Writes the model's weights, vocabularies, sizes and text settings in the\n"
          "safetensors interchange format (see docs/model.md, \"Interchange names\").\n"
          "OUT is replaced atomically: it must be a new name or a regular file (not '-',\n"
          "a symbolic link, a device or a FIFO) and not the checkpoint itself.\n"
          "\n"
          "  -m, --model MODEL   a checkpoint file, or a model directory (models/NAME)\n"
          "                      whose best.ckpt, else last.ckpt, is used (required)\n"
          "  -h, --help          show this help\n",
          out);
}

int cmd_export(int argc, char **argv)
{
    static const struct option options[] = {
        {"model", required_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *model_arg = NULL;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":m:h", options, NULL)) != -1) {
        switch (c) {
        case 'm':
            model_arg = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        case ':':
            return rs_cli_usage_error("rnnsearch export", "option '%s' needs an argument", argv[optind - 1]);
        default:
            /* optopt: the unknown short option's letter, or 0 for a long one. */
            if (optopt == 'h')
                return rs_cli_usage_error("rnnsearch export", "option '%s' takes no argument", argv[optind - 1]);
            if (optopt)
                return rs_cli_usage_error("rnnsearch export", "unknown option '-%c'", optopt);
            return rs_cli_usage_error("rnnsearch export", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (!model_arg)
        return rs_cli_usage_error("rnnsearch export", "no model given (-m MODEL)");
    if (argc - optind != 1)
        return rs_cli_usage_error("rnnsearch export", argc == optind ? "no output file given" : "exactly one output file");
    const char *out_path = argv[optind];
    if (!strcmp(out_path, "-"))
        return rs_cli_usage_error("rnnsearch export", "the output must be a file name, not '-' (a safetensors file is replaced atomically, never streamed)");

    rs_error err;
    char ckpt[4096];
    rs_model model;
    if (rs_checkpoint_resolve(model_arg, ckpt, sizeof ckpt, &err) ||
        rs_check_output_not_input(out_path, ckpt, &err) ||
        rs_checkpoint_load(ckpt, &model, NULL, &err)) {
        fprintf(stderr, "rnnsearch export: %s\n", err.msg);
        return 1;
    }
    int rc = rs_safetensors_export(out_path, &model, &err);
    if (rc)
        fprintf(stderr, "rnnsearch export: %s\n", err.msg);
    else
        fprintf(stderr, "rnnsearch export: wrote %s from %s (%zu parameters, %d + %d tokens)\n",
                out_path, ckpt, model.layout.total, model.src_vocab.size, model.tgt_vocab.size);
    rs_model_free(&model);
    return rc ? 1 : 0;
}
