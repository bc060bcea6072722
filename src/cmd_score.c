/* rnnsearch score: log p(target | source) of given pairs under a model. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "cli.h"
#include "commands.h"
#include "dataset.h"
#include "train.h"

#define PROG "rnnsearch score"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: " PROG " -m MODEL (PAIRS.tsv | --src FILE --tgt FILE) [OPTIONS]\n\n"
            "Prints, one line per pair, the natural-log probability of the target given\n"
            "the source (forced decoding; </s> included), as the model computes it.\n\n"
            "  -m, --model MODEL      checkpoint file or models/NAME directory (required)\n"
            "  --src FILE, --tgt FILE line-aligned source and target files\n"
            "  --swap                 exchange source and target of a TSV file\n"
            "  --per-token            also print the log-probability per target token\n"
            "  --batch-size N         pairs scored together (default: 64)\n"
            "  --help                 this help\n"
            "Without a file, pairs are read from standard input as TSV.\n");
}

int cmd_score(int argc, char **argv)
{
    enum { OPT_SRC = 1000, OPT_TGT, OPT_SWAP, OPT_PER_TOKEN, OPT_BATCH, OPT_HELP };
    static const struct option opts[] = {
        {"model", required_argument, NULL, 'm'},
        {"src", required_argument, NULL, OPT_SRC},
        {"tgt", required_argument, NULL, OPT_TGT},
        {"swap", no_argument, NULL, OPT_SWAP},
        {"per-token", no_argument, NULL, OPT_PER_TOKEN},
        {"batch-size", required_argument, NULL, OPT_BATCH},
        {"help", no_argument, NULL, OPT_HELP},
        {0},
    };
    const char *model_arg = NULL, *src = NULL, *tgt = NULL;
    int swap = 0, per_token = 0, batch_size = 64;
    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "m:", opts, NULL)) != -1) {
        switch (c) {
        case 'm': model_arg = optarg; break;
        case OPT_SRC: src = optarg; break;
        case OPT_TGT: tgt = optarg; break;
        case OPT_SWAP: swap = 1; break;
        case OPT_PER_TOKEN: per_token = 1; break;
        case OPT_BATCH:
            if (rs_cli_int(PROG, "--batch-size", optarg, 1, 100000, &batch_size))
                return RS_EXIT_USAGE;
            break;
        case OPT_HELP: usage(stdout); return RS_EXIT_OK;
        default:
            return rs_cli_bad_option(PROG, argv[optind - 1]);
        }
    }
    if (!model_arg) {
        fprintf(stderr, PROG ": no model given (-m MODEL)\n");
        return RS_EXIT_USAGE;
    }
    if (!src != !tgt || (src && optind < argc) || argc - optind > 1) {
        fprintf(stderr, PROG ": give one TSV file, or both --src and --tgt\n");
        return RS_EXIT_USAGE;
    }
    const char *tsv = src ? NULL : optind < argc ? argv[optind] : "-";

    rs_error err;
    rs_model model = {0};
    rs_codec codec = {0};
    rs_pairs pairs = {0};
    rs_tokenized tok = {0};
    rs_dataset data = {0};
    double *logprob = NULL;
    int status = RS_EXIT_FAIL;
    if (rs_cli_load_model(model_arg, &model, &codec, &err))
        goto fail;
    if ((tsv ? rs_pairs_read_tsv(tsv, swap, &pairs, &err)
             : swap ? rs_pairs_read_parallel(tgt, src, &pairs, &err)
                    : rs_pairs_read_parallel(src, tgt, &pairs, &err)) ||
        rs_tokenize_pairs(&tok, &pairs, &codec, tsv ? (strcmp(tsv, "-") ? tsv : "<stdin>") : src, &err) ||
        rs_dataset_build(&data, &tok, &model.src_vocab, &model.tgt_vocab, 0, NULL, &err))
        goto fail;
    logprob = rs_calloc((size_t)(data.count ? data.count : 1), sizeof(double), &err);
    if (!logprob || rs_score_dataset(&model, &data, batch_size, logprob, &err))
        goto fail;
    for (int i = 0; i < data.count; i++) {
        if (per_token)
            printf("%.6f\t%.6f\n", logprob[i], logprob[i] / (data.tgt_len[i] + 1));
        else
            printf("%.6f\n", logprob[i]);
    }
    if (fflush(stdout) || ferror(stdout)) {
        rs_fail(&err, "write to standard output failed");
        goto fail;
    }
    status = RS_EXIT_OK;
    goto done;
fail:
    fprintf(stderr, PROG ": %s\n", err.msg);
done:
    free(logprob);
    rs_dataset_free(&data);
    rs_tokenized_free(&tok);
    rs_pairs_free(&pairs);
    rs_codec_free(&codec);
    rs_model_free(&model);
    return status;
}
