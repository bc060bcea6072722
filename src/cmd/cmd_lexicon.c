/* rnnsearch lexicon: the lexical table p(t | s) of a parallel corpus in a
 * model's tokenization, for translate --shortlist (search/lexicon.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cmd/commands.h"
#include "cli/output.h"
#include "search/lexicon.h"

#define PROG "rnnsearch lexicon"

static void usage(FILE *out)
{
    fprintf(out, "usage: " PROG " -m MODEL (PAIRS.tsv | --src FILE --tgt FILE) [OPTIONS]\n\n"
                 "Learns which target tokens translate each source token, from a parallel\n"
                 "corpus (usually the model's training data) in the model's own tokenization,\n"
                 "by IBM Model 1, and writes the table 'source TAB target TAB p(target|source)'\n"
                 "that translate --shortlist reads: each source token's most probable targets\n"
                 "first.\n\n"
                 "  -m, --model MODEL      checkpoint file or models/NAME directory (required)\n"
                 "  --src FILE, --tgt FILE line-aligned source and target files\n"
                 "  --swap                 exchange source and target of a TSV file\n"
                 "  -o, --output FILE      write the table here (default: standard output)\n"
                 "  --iterations N         EM iterations (default: 5)\n"
                 "  --keep N               targets kept per source token (default: 100)\n"
                 "  --min-prob P           drop entries with p(target|source) < P (default: 1e-4;\n"
                 "                         entries whose p is 0 in float are never written)\n"
                 "  -h, --help             this help\n"
                 "Without a file, pairs are read from standard input as TSV.\n");
}

typedef struct {
    rs_cli_models *models;
    rs_cli_pairs in;
    const char *output;
    int iterations, keep;
    float min_prob;
    rs_output_rule rule;
} lexicon_request;

/* Parses and checks the options into rq; returns -1 to go on, else the exit status. */
static int parse_request(int argc, char **argv, lexicon_request *rq)
{
    enum { OPT_ITER = RS_CLI_OPT, OPT_KEEP, OPT_MIN };
    static const struct option opts[] = {
        {"model", required_argument, NULL, 'm'},
        {"output", required_argument, NULL, 'o'},
        RS_CLI_PAIRS_OPTIONS,
        {"iterations", required_argument, NULL, OPT_ITER},
        {"keep", required_argument, NULL, OPT_KEEP},
        {"min-prob", required_argument, NULL, OPT_MIN},
        {0},
    };
    const rs_cli_number numbers[] = {
        {OPT_ITER, "--iterations", 1, 100, .i = &rq->iterations},
        {OPT_KEEP, "--keep", 1, 10000000, .i = &rq->keep},
        {OPT_MIN, "--min-prob", 0, 1, .f = &rq->min_prob},
        {0},
    };
    rs_cli_args args;
    rs_cli_begin(&args, PROG, argc, argv, "m:o:", opts);
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
        case 'o':
            if (rs_cli_once(PROG, "-o", &rq->output, optarg))
                return RS_EXIT_USAGE;
            break;
        case 'h': usage(stdout); return RS_EXIT_OK;
        default: /* RS_CLI_BAD, already reported */ return RS_EXIT_USAGE;
        }
    }
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
    static rs_cli_models models;
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
    if (rs_cli_load_models(&models, &codec, &err))
        goto fail;
    const rs_model *model = &models.models[0];
    if (rs_cli_read_dataset(PROG, &rq.in, model, &codec, RS_MAX_LENGTH, &data, &err) ||
        rs_lexicon_learn(&lex, &data, model->src_vocab.size, model->tgt_vocab.size, rq.iterations,
                         rq.keep, rq.min_prob, &err))
        goto fail;
    if (lex.start[lex.src_vocab] == 0) {
        /* An empty table would only be refused later, by translate --shortlist. */
        rs_fail(&err,
                "%s: no entries to write (%d pairs read, no word pair with p(target|source) >= %g)",
                rs_cli_pairs_name(&rq.in), data.count, rq.min_prob);
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
    rs_cli_models_free(&models);
    rs_output_rule_free(&rq.rule);
    return status;
}
