/* rnnsearch: the program's entry point dispatches to a subcommand. */
#include <stdio.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "train/dist.h"

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"train", cmd_train, "train a model on sentence pairs"},
    {"translate", cmd_translate, "translate sentences (greedy or beam search)"},
    {"score", cmd_score, "log-probability of given translations (forced decoding)"},
    {"align", cmd_align, "alignment matrices as text, TSV, JSON, Pharaoh, SVG or HTML"},
    {"tokenize", cmd_tokenize, "print the tokens of text (or --detokenize them)"},
    {"export", cmd_export, "write a model's weights and vocabularies as safetensors"},
    {"import", cmd_import, "make a model from a safetensors file"},
    {"bleu", cmd_bleu, "corpus BLEU (as sacreBLEU computes it) and chrF of a translation"},
    {"explain", cmd_explain, "walk through one attention step with numbers to check by hand"},
    {"bench", cmd_bench, "measure training and decoding speed and memory"},
    {"plot", cmd_plot, "draw a training run's learning curves as SVG"},
    {"info", cmd_info, "what a checkpoint holds: configuration, sizes, vocabularies, training"},
    {"average", cmd_average, "a checkpoint with the mean parameters of several checkpoints"},
    {"serve", cmd_serve, "a web page and JSON API to explore translations and alignments"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: rnnsearch COMMAND [OPTIONS]\n"
                 "       rnnsearch -h | --help | -V | --version\n\n"
                 "An attentive RNN translator (Bahdanau et al., 2014).\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n'rnnsearch COMMAND --help' describes each command's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return RS_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        printf("rnnsearch %s\n", RS_VERSION);
        return 0;
    }
    if (argv[1][0] == '-')
        return rs_cli_bad_option("rnnsearch", argv[1]);
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
        if (strcmp(argv[1], commands[i].name) || !commands[i].run)
            continue;
        /* Training joins an MPI job when a launcher (mpirun, srun) started it. */
        if (commands[i].run == cmd_train) {
            rs_error err;
            if (rs_dist_init(&err)) {
                fprintf(stderr, "rnnsearch: %s\n", err.msg);
                return RS_EXIT_FAIL;
            }
            int status = cmd_train(argc - 1, argv + 1);
            if (rs_dist_failed_alone(status)) {
                fprintf(stderr, "rnnsearch: rank %d of %d failed; ending the job\n", rs_dist_rank(),
                        rs_dist_size());
                fflush(stderr);
                rs_dist_abort(status);
            }
            rs_dist_finalize();
            return status;
        }
        return commands[i].run(argc - 1, argv + 1);
    }
    fprintf(stderr, "rnnsearch: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return RS_EXIT_USAGE;
}
