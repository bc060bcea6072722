/* rnnsearch score: log p(target | source) of given pairs under a model. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "cmd/commands.h"
#include "eval/pair_scores.h"
#include "search/decode.h"
#include "search/translate.h"

#define PROG "rnnsearch score"

/* What the command line asks for. */
typedef struct {
    rs_models *models;
    rs_pairs_input in;
    int per_token, batch_size, max_src_len;
} score_request;

#define RQ score_request
static const rs_cli_option option_table[] = {
    {"model", 'm', RS_CLI_MODELS, RS_AT(RQ, models), .value = "MODEL", .flags = RS_CLI_REPEAT,
     .help = "checkpoint file or models/NAME directory (required)"},
    RS_CLI_PAIRS_ROWS(RQ, in),
    {"per-token", .kind = RS_CLI_FLAG, RS_AT(RQ, per_token),
     .help = "four tab-separated columns: the total, the mean per\n"
             "target token, the target tokens as the model sees them\n"
             "(unknown ones as <unk>, </s> last) and each token's\n"
             "log-probability, all natural logs (fairseq's P- lines\n"
             "are base 2: divide by ln 2 = 0.693147 to compare)"},
    /* Two of the search options, with translate's ranges. */
    {"batch-size", .kind = RS_CLI_INT, RS_AT(RQ, batch_size), 1, RS_MAX_BATCH, "N",
     .help = "pairs scored together (default: %D)"},
    {"max-src-len", .kind = RS_CLI_INT, RS_AT(RQ, max_src_len), 1, RS_MAX_LENGTH, "N",
     .help = "longer sources are cut to their first N tokens, with a\n"
             "warning naming the pair (default: %D)"},
    RS_CLI_HELP_ROW,
    {.kind = RS_CLI_TEXT,
     .help = "Without a file, pairs are read from standard input as TSV. A target may be\n"
             "empty (an empty translation): its score is that of </s> alone.\n"},
    {0},
};
#undef RQ

static const rs_cli_command command = {
    "score",
    PROG,
    "usage: " PROG " -m MODEL [-m MODEL ...] (PAIRS.tsv | --src FILE --tgt FILE) [OPTIONS]\n\n"
    "Prints, one line per pair, the natural-log probability of the target given\n"
    "the source (forced decoding; </s> included), as the model computes it.\n"
    "Several -m score as an ensemble (the mean of their log-probabilities at\n"
    "each step, as translate decodes).\n\n",
    NULL,
    25,
    sizeof(score_request),
    option_table};

/* Parses and checks the options into rq; returns -1 to go on, else the exit status. */
static int parse_request(int argc, char **argv, score_request *rq)
{
    rs_cli_args args;
    const int status = rs_cli_parse(&command, rq, &args, argc, argv);
    rs_cli_end(&args);
    if (status >= 0)
        return status;
    if (rq->models->count == 0)
        return rs_cli_usage_error(PROG, "no model given (-m MODEL)");
    return rs_cli_pairs_finish(PROG, &rq->in, argc, argv);
}

int cmd_score(int argc, char **argv)
{
    static rs_models models;
    score_request rq = {.models = &models, .batch_size = 64, .max_src_len = RS_MAX_SRC_LEN};
    int status = parse_request(argc, argv, &rq);
    if (status >= 0)
        return status;

    rs_error err;
    rs_codec codec = {0};
    status = RS_EXIT_FAIL;
    const int failed = rs_models_load(&models, &codec, &err) ||
                       rs_ensemble_check(models.members, models.count, &err);
    const rs_pairs_ids ids = {models.models[0].model, &codec, rq.max_src_len, stderr, PROG};
    const rs_pair_scoring how = {models.members, models.count, rq.batch_size, rq.per_token};
    if (failed || rs_pair_scores_write(stdout, &rq.in, &ids, &how, &err))
        rs_cli_fail(PROG, "%s", err.msg);
    else
        status = RS_EXIT_OK;
    rs_codec_free(&codec);
    rs_models_free(&models);
    return status;
}
