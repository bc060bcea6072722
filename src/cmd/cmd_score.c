/* rnnsearch score: log p(target | source) of given pairs under a model. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/checkpoint.h"
#include "cli/cli.h"
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
            "  --per-token            four tab-separated columns: the total, the mean per\n"
            "                         target token, the target tokens as the model sees them\n"
            "                         (unknown ones as <unk>, </s> last) and each token's\n"
            "                         log-probability, all natural logs (fairseq's P- lines\n"
            "                         are base 2: divide by ln 2 = 0.693147 to compare)\n"
            "  --batch-size N         pairs scored together (default: 64)\n"
            "  --max-src-len N        longer sources are cut to their first N tokens, with a\n"
            "                         warning naming the pair (default: %d)\n"
            "  -h, --help             this help\n"
            "Without a file, pairs are read from standard input as TSV. A target may be\n"
            "empty (an empty translation): its score is that of </s> alone.\n",
            RS_MAX_SRC_LEN);
}

/* What the command line asks for. */
typedef struct {
    rs_cli_models *models;
    rs_cli_pairs in;
    int per_token, batch_size, max_src_len;
} score_request;

/* Parses and checks the options into rq; returns -1 to go on, else the exit status. */
static int parse_request(int argc, char **argv, score_request *rq)
{
    enum { OPT_PER_TOKEN = RS_CLI_OPT };
    static const struct option opts[] = {
        {"model", required_argument, NULL, 'm'},
        RS_CLI_PAIRS_OPTIONS,
        {"per-token", no_argument, NULL, OPT_PER_TOKEN},
        {"batch-size", required_argument, NULL, RS_CLI_BATCH},
        {"max-src-len", required_argument, NULL, RS_CLI_MAX_SRC_LEN},
        {0},
    };
    /* Two of the search options, with translate's ranges. */
    const rs_cli_number numbers[] = {
        RS_CLI_NUMBER_BATCH(&rq->batch_size),
        RS_CLI_NUMBER_MAX_SRC_LEN(&rq->max_src_len),
        {0},
    };
    rs_cli_args args;
    rs_cli_begin(&args, PROG, argc, argv, "m:", opts);
    rs_cli_begin_numbers(&args, numbers);
    int c;
    while ((c = rs_cli_next(&args)) != -1) {
        if (rs_cli_pairs_option(&rq->in, c, optarg))
            continue;
        switch (c) {
        case 'm':
            if (rs_cli_add_model(PROG, rq->models, optarg))
                return RS_EXIT_USAGE;
            break;
        case OPT_PER_TOKEN: rq->per_token = 1; break;
        case 'h': usage(stdout); return RS_EXIT_OK;
        default: /* RS_CLI_BAD, already reported */ return RS_EXIT_USAGE;
        }
    }
    if (rq->models->count == 0)
        return rs_cli_usage_error(PROG, "no model given (-m MODEL)");
    return rs_cli_pairs_finish(PROG, &rq->in, argc, argv);
}

/* One line per pair: the total and, with --per-token, the mean, the tokens
 * and their log-probabilities. */
static void write_scores(const score_request *rq, const rs_dataset *data, const rs_forced *scored)
{
    const rs_vocab *vocab = &rq->models->models[0].tgt_vocab;
    for (int i = 0; i < data->count; i++) {
        const rs_forced *f = &scored[i];
        printf("%.6f", f->logprob);
        if (rq->per_token) {
            printf("\t%.6f\t", f->logprob / (f->tgt_len + 1));
            for (int t = 0; t < data->tgt_len[i]; t++) {
                const char *token;
                rs_ids_to_tokens(vocab, &data->tgt[i][t], 1, &token);
                printf("%s ", token);
            }
            printf("</s>\t");
            for (int t = 0; t <= f->tgt_len; t++)
                printf(t ? " %.6f" : "%.6f", f->token_logprobs[t]);
        }
        putchar('\n');
    }
}

/* Pairs read, scored and written at a time: memory does not grow with the
 * input. Within one, pairs of similar length score together. */
enum { SCORE_CHUNK = 4096 };

/* Scores one chunk of pairs and writes their lines. */
static int score_chunk(const score_request *rq, const rs_codec *codec, const rs_pairs *pairs,
                       rs_error *err)
{
    rs_dataset data = {0};
    rs_forced *scored = NULL;
    const rs_cli_models *models = rq->models;
    int status = -1;
    if (rs_cli_pairs_dataset(PROG, &rq->in, pairs, &models->models[0], codec, rq->max_src_len,
                             &data, err))
        goto done;
    scored = rs_calloc((size_t)(data.count ? data.count : 1), sizeof *scored, err);
    if (!scored || rs_forced_decode(models->members, models->count, &data, rq->batch_size,
                                    rq->per_token ? RS_FORCED_TOKENS : 0, scored, err))
        goto done;
    write_scores(rq, &data, scored);
    status = 0;
    if (fflush(stdout) || ferror(stdout))
        status = rs_fail(err, "write to standard output failed");
done:
    rs_forced_free_all(scored, data.count);
    rs_dataset_free(&data);
    return status;
}

/* Every pair of the input, a chunk at a time. A target may be empty (an
 * empty translation): its score is that of </s> alone. */
static int score_all(const score_request *rq, const rs_codec *codec, rs_error *err)
{
    rs_pair_reader reader;
    if (rs_cli_pairs_open(&rq->in, 1, &reader, err))
        return -1;
    int status = 0;
    for (;;) {
        rs_pairs pairs;
        const int n = rs_pair_reader_chunk(&reader, SCORE_CHUNK, &pairs, err);
        if (n > 0)
            status = score_chunk(rq, codec, &pairs, err);
        rs_pairs_free(&pairs);
        if (n <= 0 || status) {
            status = n < 0 ? -1 : status;
            break;
        }
    }
    rs_pair_reader_close(&reader);
    return status;
}

int cmd_score(int argc, char **argv)
{
    static rs_cli_models models;
    score_request rq = {.models = &models, .batch_size = 64, .max_src_len = RS_MAX_SRC_LEN};
    int status = parse_request(argc, argv, &rq);
    if (status >= 0)
        return status;

    rs_error err;
    rs_codec codec = {0};
    status = RS_EXIT_FAIL;
    if (rs_cli_load_models(&models, &codec, &err) ||
        rs_ensemble_check(models.members, models.count, &err) || score_all(&rq, &codec, &err))
        rs_cli_fail(PROG, "%s", err.msg);
    else
        status = RS_EXIT_OK;
    rs_codec_free(&codec);
    rs_cli_models_free(&models);
    return status;
}
