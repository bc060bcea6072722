/* rnnsearch score: log p(target | source) of given pairs under a model. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/checkpoint.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "cmd/commands.h"
#include "data/dataset.h"
#include "search/decode.h"
#include "search/forced.h"
#include "search/translate.h"

#define PROG "rnnsearch score"

/* What the command line asks for. */
typedef struct {
    rs_cli_models *models;
    rs_cli_pairs in;
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

/* One line per pair: the total and, with --per-token, the mean, the tokens
 * and their log-probabilities. */
static void write_scores(const score_request *rq, const rs_dataset *data, const rs_forced *scored)
{
    const rs_vocab *vocab = &rq->models->models[0].model->tgt_vocab;
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
    if (rs_cli_pairs_dataset(PROG, &rq->in, pairs, models->models[0].model, codec, rq->max_src_len,
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
    int status = 0, read = 0;
    for (;;) {
        rs_pairs pairs;
        const int n = rs_pair_reader_chunk(&reader, SCORE_CHUNK, &pairs, err);
        read += n > 0 ? n : 0;
        if (n > 0)
            status = score_chunk(rq, codec, &pairs, err);
        rs_pairs_free(&pairs);
        if (n <= 0 || status) {
            status = n < 0 ? -1 : status;
            break;
        }
    }
    rs_pair_reader_close(&reader);
    if (status == 0 && read == 0)
        rs_cli_note_empty(PROG, rs_cli_pairs_name(&rq->in), "pairs", "scored");
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
