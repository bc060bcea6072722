/* rnnsearch score: log p(target | source) of given pairs under a model. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/checkpoint.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "data/dataset.h"
#include "search/decode.h"
#include "search/forced.h"
#include "search/translate.h"

#define PROG "rnnsearch score"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: " PROG
            " -m MODEL [-m MODEL ...] (PAIRS.tsv | --src FILE --tgt FILE) [OPTIONS]\n\n"
            "Prints, one line per pair, the natural-log probability of the target given\n"
            "the source (forced decoding; </s> included), as the model computes it.\n"
            "Several -m score as an ensemble (the mean of their log-probabilities at\n"
            "each step, as translate decodes).\n\n"
            "  -m, --model MODEL      checkpoint file or models/NAME directory (required)\n"
            "  --src FILE, --tgt FILE line-aligned source and target files\n"
            "  --swap                 exchange source and target of a TSV file\n"
            "  --per-token            also print the mean per target token and, tab-separated,\n"
            "                         each target token's log-probability (the last is </s>)\n"
            "  --batch-size N         pairs scored together (default: 64)\n"
            "  --max-src-len N        longer sources are cut to their first N tokens, with a\n"
            "                         warning naming the pair (default: %d)\n"
            "  -h, --help             this help\n"
            "Without a file, pairs are read from standard input as TSV.\n",
            RS_MAX_SRC_LEN);
}

int cmd_score(int argc, char **argv)
{
    enum { OPT_SRC = 1000, OPT_TGT, OPT_SWAP, OPT_PER_TOKEN, OPT_BATCH, OPT_MAXSRC };
    static const struct option opts[] = {
        {"model", required_argument, NULL, 'm'},
        {"src", required_argument, NULL, OPT_SRC},
        {"tgt", required_argument, NULL, OPT_TGT},
        {"swap", no_argument, NULL, OPT_SWAP},
        {"per-token", no_argument, NULL, OPT_PER_TOKEN},
        {"batch-size", required_argument, NULL, OPT_BATCH},
        {"max-src-len", required_argument, NULL, OPT_MAXSRC},
        {0},
    };
    static rs_cli_models models;
    const char *src = NULL, *tgt = NULL;
    int swap = 0, per_token = 0, batch_size = 64, max_src_len = RS_MAX_SRC_LEN;
    rs_cli_args args;
    rs_cli_begin(&args, PROG, argc, argv, "m:", opts);
    int c;
    while ((c = rs_cli_next(&args)) != -1) {
        switch (c) {
        case 'm':
            if (rs_cli_add_model(PROG, &models, optarg))
                return RS_EXIT_USAGE;
            break;
        case OPT_SRC: src = optarg; break;
        case OPT_TGT: tgt = optarg; break;
        case OPT_SWAP: swap = 1; break;
        case OPT_PER_TOKEN: per_token = 1; break;
        case OPT_MAXSRC:
            if (rs_cli_int(PROG, "--max-src-len", optarg, 1, 100000, &max_src_len))
                return RS_EXIT_USAGE;
            break;
        case OPT_BATCH:
            if (rs_cli_int(PROG, "--batch-size", optarg, 1, 100000, &batch_size))
                return RS_EXIT_USAGE;
            break;
        case 'h': usage(stdout); return RS_EXIT_OK;
        default: /* RS_CLI_BAD, already reported */ return RS_EXIT_USAGE;
        }
    }
    if (models.count == 0)
        return rs_cli_usage_error(PROG, "no model given (-m MODEL)");
    if (!src != !tgt || (src && optind < argc) || argc - optind > 1) {
        fprintf(stderr, PROG ": give one TSV file, or both --src and --tgt\n");
        return RS_EXIT_USAGE;
    }
    const char *tsv = src ? NULL : optind < argc ? argv[optind] : "-";

    rs_error err;
    rs_codec codec = {0};
    rs_pairs pairs = {0};
    rs_tokenized tok = {0};
    rs_dataset data = {0};
    rs_forced *scored = NULL;
    int status = RS_EXIT_FAIL;
    if (rs_cli_load_models(&models, &codec, &err) ||
        rs_ensemble_check(models.members, models.count, &err))
        goto fail;
    if ((tsv    ? rs_pairs_read_tsv(tsv, swap, &pairs, &err)
         : swap ? rs_pairs_read_parallel(tgt, src, &pairs, &err)
                : rs_pairs_read_parallel(src, tgt, &pairs, &err)) ||
        rs_tokenize_pairs(&tok, &pairs, &codec, tsv ? (strcmp(tsv, "-") ? tsv : "<stdin>") : src,
                          &err) ||
        rs_cli_cut_sources(PROG, &tok, max_src_len, tsv ? tsv : src, &err) ||
        rs_dataset_build(&data, &tok, &models.models[0].src_vocab, &models.models[0].tgt_vocab, 0,
                         NULL, &err))
        goto fail;
    scored = rs_calloc((size_t)(data.count ? data.count : 1), sizeof *scored, &err);
    if (!scored || rs_forced_decode(models.members, models.count, &data, batch_size,
                                    per_token ? RS_FORCED_TOKENS : 0, scored, &err))
        goto fail;
    for (int i = 0; i < data.count; i++) {
        const rs_forced *f = &scored[i];
        printf("%.6f", f->logprob);
        if (per_token) {
            printf("\t%.6f\t", f->logprob / (f->tgt_len + 1));
            for (int t = 0; t <= f->tgt_len; t++)
                printf(t ? " %.6f" : "%.6f", f->token_logprobs[t]);
        }
        putchar('\n');
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
    for (int i = 0; scored && i < data.count; i++)
        rs_forced_free(&scored[i]);
    free(scored);
    rs_dataset_free(&data);
    rs_tokenized_free(&tok);
    rs_pairs_free(&pairs);
    rs_codec_free(&codec);
    rs_cli_models_free(&models);
    return status;
}
