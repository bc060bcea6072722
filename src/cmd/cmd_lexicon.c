/* rnnsearch lexicon: the lexical table p(t | s) of a parallel corpus in a
 * model's tokenization, for translate --shortlist (search/lexicon.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "cmd/commands.h"
#include "train/output.h"
#include "search/lexicon.h"

#define PROG "rnnsearch lexicon"

typedef struct {
    rs_models *models;
    rs_pairs_input in;
    const char *output;
    int iterations, keep;
    float min_prob;
    rs_output_rule rule;
} lexicon_request;

#define RQ lexicon_request
static const rs_cli_option option_table[] = {
    {"model", 'm', RS_CLI_MODELS, RS_AT(RQ, models), .value = "MODEL", .flags = RS_CLI_REPEAT,
     .help = "checkpoint file or models/NAME directory (required)"},
    RS_CLI_PAIRS_ROWS(RQ, in),
    {"output", 'o', RS_CLI_STRING, RS_AT(RQ, output), .value = "FILE",
     .help = "write the table here (default: standard output)"},
    {"iterations", .kind = RS_CLI_INT, RS_AT(RQ, iterations), 1, 100, "N",
     .help = "EM iterations (default: %D)"},
    {"keep", .kind = RS_CLI_INT, RS_AT(RQ, keep), 1, 10000000, "N",
     .help = "targets kept per source token (default: %D)"},
    {"min-prob", .kind = RS_CLI_FLOAT, RS_AT(RQ, min_prob), 0, 1, "P",
     .help = "drop entries with p(target|source) < P (default: 1e-4;\n"
             "entries whose p is 0 in float are never written)"},
    RS_CLI_HELP_ROW,
    {.kind = RS_CLI_TEXT, .help = "Without a file, pairs are read from standard input as TSV.\n"},
    {0},
};
#undef RQ

static const rs_cli_command command = {
    "lexicon",
    PROG,
    "usage: " PROG " -m MODEL (PAIRS.tsv | --src FILE --tgt FILE) [OPTIONS]\n\n"
    "Learns which target tokens translate each source token, from a parallel\n"
    "corpus (usually the model's training data) in the model's own tokenization,\n"
    "by IBM Model 1, and writes the table 'source TAB target TAB p(target|source)'\n"
    "that translate --shortlist reads: each source token's most probable targets\n"
    "first.\n\n",
    NULL,
    25,
    sizeof(lexicon_request),
    option_table};

/* Parses and checks the options into rq; returns -1 to go on, else the exit status. */
static int parse_request(int argc, char **argv, lexicon_request *rq)
{
    rs_cli_args args;
    const int parsed = rs_cli_parse(&command, rq, &args, argc, argv);
    rs_cli_end(&args);
    if (parsed >= 0)
        return parsed;
    if (rq->models->count != 1)
        return rs_cli_usage_error(PROG, "give one model (-m MODEL)");
    const int status = rs_cli_pairs_finish(PROG, &rq->in, argc, argv);
    if (status >= 0)
        return status;
    rs_error refused;
    if (rs_output_add_input(&rq->rule, rq->in.tsv, &refused) ||
        rs_output_add_input(&rq->rule, rq->in.src, &refused) ||
        rs_output_add_input(&rq->rule, rq->in.tgt, &refused) ||
        rs_output_add_model(&rq->rule, rq->models->args[0], &refused) ||
        /* Before any work, as translate checks it: not after learning. */
        rs_output_check(&rq->rule, rq->output, &refused))
        return rs_cli_usage_error(PROG, "%s", refused.msg);
    return -1;
}

int cmd_lexicon(int argc, char **argv)
{
    static rs_models models;
    lexicon_request rq = {.models = &models, .iterations = 5, .keep = 100, .min_prob = 1e-4f};
    rs_output_rule_init(&rq.rule, RS_OUTPUT_TEXT, NULL);
    int status = parse_request(argc, argv, &rq);
    if (status >= 0) {
        rs_output_rule_free(&rq.rule);
        return status;
    }
    rs_error err;
    rs_codec codec = {0};
    rs_dataset data = {0};
    rs_lexicon lex = {0};
    rs_output out = {0};
    status = RS_EXIT_FAIL;
    if (rs_models_load(&models, &codec, &err))
        goto fail;
    const rs_model *model = models.models[0].model;
    const rs_pairs_ids ids = {model, &codec, RS_MAX_LENGTH, stderr, PROG};
    if (rs_pairs_input_read(&rq.in, &ids, &data, &err) ||
        rs_lexicon_learn(&lex, &data, model->src_vocab.size, model->tgt_vocab.size, rq.iterations,
                         rq.keep, rq.min_prob, &err))
        goto fail;
    if (lex.start[lex.src_vocab] == 0) {
        /* An empty table would only be refused later, by translate --shortlist. */
        rs_fail(&err,
                "%s: no entries to write (%d pairs read, no word pair with p(target|source) >= %g)",
                rs_pairs_input_name(&rq.in), data.count, rq.min_prob);
        goto fail;
    }
    if (rs_output_open(&out, &rq.rule, rq.output, &err))
        goto fail;
    int errnum = 0;
    rs_lexicon_write(&lex, &model->src_vocab, &model->tgt_vocab, out.f, &errnum);
    if (errnum) {
        rs_fail(&err, "%s: %s", out.name, strerror(errnum));
        goto fail;
    }
    if (rs_output_commit(&out, &err))
        goto fail;
    status = RS_EXIT_OK;
    goto done;
fail:
    rs_cli_fail(PROG, "%s", err.msg);
done:
    rs_output_abort(&out);
    rs_lexicon_free(&lex);
    rs_dataset_free(&data);
    rs_codec_free(&codec);
    rs_models_free(&models);
    rs_output_rule_free(&rq.rule);
    return status;
}
