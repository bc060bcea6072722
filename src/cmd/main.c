/* rnnsearch: the program's entry point dispatches to a subcommand. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "accel/gemm_road.h"
#include "cli/cli.h"
#include "common/nearest.h"
#include "cli/start.h"
#include "cli/options.h"
#include "cmd/commands.h"
#include "model/locate.h"
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
    {"lexicon", cmd_lexicon, "a lexical table of a corpus, for translate --shortlist"},
    {"align", cmd_align, "alignment matrices as text, TSV, JSON, Pharaoh, SVG or HTML"},
    {"tokenize", cmd_tokenize, "print the tokens of text (or --detokenize them)"},
    {"export", cmd_export, "write a model's weights and vocabularies as safetensors"},
    {"import", cmd_import, "make a model from a safetensors file"},
    {"aer", cmd_aer, "alignment error rate of Pharaoh alignments against gold links"},
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
    fprintf(out, "\n'rnnsearch help COMMAND' (or 'rnnsearch COMMAND --help') describes each\n"
                 "command's options; 'rnnsearch help models' says where models are found.\n");
}

static void models_help(FILE *out)
{
    fprintf(out,
            "Where rnnsearch finds and saves models\n\n"
            "-m MODEL (translate, align, score, serve, info, export, average) is, in order:\n"
            "  - a checkpoint file (e.g. runs/x/step-1000.ckpt);\n"
            "  - a model directory: its best.ckpt, else its last.ckpt;\n"
            "  - a bare NAME (no '/'): the directory NAME in $" RS_MODELS_ENV " when that is set,\n"
            "    then in ./models.\n"
            "A model that is not found is reported with every place looked at.\n\n"
            "train --name NAME saves to $" RS_MODELS_ENV "/NAME when " RS_MODELS_ENV
            " is set, else to\n"
            "./models/NAME; train --out DIR saves to DIR. One of them is required: a name\n"
            "made up from the data file (train.tsv → 'train') would put every run on the\n"
            "same corpus in one directory.\n\n"
            "Now: the models directory is %s.\n",
            rs_models_dir());
}

/* `rnnsearch help [COMMAND | models]` */
static int help(int argc, char **argv, const command *table, size_t count)
{
    if (argc < 3) {
        usage(stdout);
        return RS_EXIT_OK;
    }
    if (!strcmp(argv[2], "models")) {
        models_help(stdout);
        return RS_EXIT_OK;
    }
    for (size_t i = 0; i < count; i++)
        if (!strcmp(argv[2], table[i].name)) {
            char *args[] = {argv[2], "--help", NULL};
            return table[i].run(2, args);
        }
    fprintf(stderr,
            "rnnsearch help: no command or topic '%s' (commands: see 'rnnsearch help'; "
            "topics: models)\n",
            argv[2]);
    return RS_EXIT_USAGE;
}

static int run(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return RS_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "help"))
        return help(argc, argv, commands, sizeof commands / sizeof *commands);
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(stdout);
        return RS_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        printf("rnnsearch %s\n", RS_VERSION);
        return RS_EXIT_OK;
    }
    if (argv[1][0] == '-')
        return rs_cli_bad_option("rnnsearch", argv[1]);
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
        if (strcmp(argv[1], commands[i].name) || !commands[i].run)
            continue;
        /* Every command's products take the GEMM road of this processor
         * (or RNNSEARCH_GEMM's), chosen once before any of them runs. */
        rs_error road_err;
        if (rs_gemm_road_choose(NULL, &road_err))
            return rs_cli_fail("rnnsearch", "%s", road_err.msg);
        /* Training joins an MPI job when a launcher (mpirun, srun) started it. */
        if (commands[i].run == cmd_train) {
            rs_error err;
            if (rs_dist_init(&err))
                return rs_cli_fail("rnnsearch", "%s", err.msg);
            int status = cmd_train(argc - 1, argv + 1);
            if (rs_dist_failed_alone(status)) {
                rs_cli_fail("rnnsearch", "rank %d of %d failed; ending the job", rs_dist_rank(),
                            rs_dist_size());
                fflush(stderr);
                rs_dist_abort(status);
            }
            rs_dist_finalize();
            return status;
        }
        return commands[i].run(argc - 1, argv + 1);
    }
    const char *names[sizeof commands / sizeof *commands];
    int count = 0;
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (commands[i].run)
            names[count++] = commands[i].name;
    const char *near = rs_nearest(argv[1], names, count);
    if (near) {
        fprintf(stderr, "rnnsearch: unknown command '%s' (did you mean '%s'?)\n", argv[1], near);
        fprintf(stderr, "Try 'rnnsearch --help'.\n");
    } else {
        fprintf(stderr, "rnnsearch: unknown command '%s'\n", argv[1]);
        usage(stderr);
    }
    return RS_EXIT_USAGE;
}

/* What a command printed must have reached standard output: a full disk is
 * a failure, for --help too (as coreutils' close_stdout has it). */
int main(int argc, char **argv)
{
    static const rs_cli_command *const tables[] = {&rs_train_command, &rs_translate_command,
                                                   &rs_serve_command};
    rs_cli_set_commands(tables, sizeof tables / sizeof *tables);
    rs_cli_start();
    int status = run(argc, argv);
    if ((fflush(stdout) || ferror(stdout)) && status == RS_EXIT_OK) {
        fprintf(stderr, "rnnsearch: cannot write standard output: %s\n", strerror(errno));
        status = RS_EXIT_FAIL;
    }
    return status;
}
