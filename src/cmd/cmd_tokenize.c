/* rnnsearch tokenize: the text pipeline of training and translation as a
 * filter, one output line per input line. */
#include <getopt.h>
#include <stdio.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "cmd/commands.h"
#include "model/text_filter.h"
#include "text/text.h"

#define PROG "rnnsearch tokenize"

/* What the command line asks for. */
typedef struct {
    rs_text_filter f; /* its model and codec set once loaded */
    const char *model_arg, *path;
} tokenize_request;

/* --side's and --tokenizer's values, in the order of RS_SIDE_* and RS_TOK_*. */
static const char *const sides[] = {"source", "target", NULL};
static const char *const tokenizers[] = {"word", "char", "space", NULL};

#define RQ tokenize_request
static const rs_cli_option option_table[] = {
    {"lowercase", .kind = RS_CLI_FLAG, RS_AT(RQ, f.lowercase),
     .help = "lower-case the text (default: off)"},
    {"tokenizer", .kind = RS_CLI_CHOICE, RS_AT(RQ, f.mode), .value = "NAME", .names = tokenizers,
     .help = "word, char or space (default: word; space splits\n"
             "pre-tokenized text at white space and does not\n"
             "normalise it, see docs/tokenization.md)"},
    {"detokenize", .kind = RS_CLI_FLAG, RS_AT(RQ, f.detokenize),
     .help = "read tokens, write text (default: off)"},
    {"model", 'm', RS_CLI_STRING, RS_AT(RQ, model_arg), .value = "MODEL",
     .help = "use a model's own settings instead (lower-casing,\n"
             "tokenizer, SentencePiece models)"},
    {"side", .kind = RS_CLI_CHOICE, RS_AT(RQ, f.side), .value = "SIDE", .names = sides,
     .help = "with -m: source or target (default: source)"},
    {"ids", .kind = RS_CLI_FLAG, RS_AT(RQ, f.ids),
     .help = "with -m: print token ids in the model's vocabulary,\n"
             "</s> appended (as the model sees them)"},
    {"help", 'h', RS_CLI_HELP, .help = "show this help"},
    {0},
};
#undef RQ

static const rs_cli_command command = {
    "tokenize",
    PROG,
    "usage: rnnsearch tokenize [options] [FILE]\n"
    "Normalises (NFC, white space collapsed) and tokenizes each line of FILE\n"
    "(default: stdin), writing the tokens separated by spaces.\n\n",
    NULL,
    22,
    sizeof(tokenize_request),
    option_table};

/* Parses and checks the options into rq; returns -1 to go on, else the exit status. */
static int parse_request(int argc, char **argv, tokenize_request *rq)
{
    rs_cli_args args;
    const int parsed = rs_cli_parse(&command, rq, &args, argc, argv);
    rs_cli_end(&args);
    if (parsed >= 0)
        return parsed;
    if (argc - optind > 1)
        return rs_cli_usage_error(PROG, "at most one input file");
    if (rq->f.detokenize && rq->f.lowercase)
        return rs_cli_usage_error(PROG, "--lowercase has no effect with --detokenize");
    if (rq->model_arg && (rq->f.lowercase || rq->f.mode != RS_TOK_WORD))
        return rs_cli_usage_error(
            PROG, "-m takes the model's own text settings; drop --lowercase/--tokenizer");
    if ((rq->f.ids || rq->f.side != RS_SIDE_SRC) && !rq->model_arg)
        return rs_cli_usage_error(PROG, "--ids and --side need a model (-m)");
    if (rq->f.ids && rq->f.detokenize)
        return rs_cli_usage_error(PROG, "--ids and --detokenize do not go together");
    rq->path = optind < argc ? argv[optind] : "-";
    return -1;
}

int cmd_tokenize(int argc, char **argv)
{
    tokenize_request rq = {.f = {.mode = RS_TOK_WORD, .side = RS_SIDE_SRC}};
    int status = parse_request(argc, argv, &rq);
    if (status >= 0)
        return status;
    rs_error err;
    rs_line_reader reader;
    rs_ready model = {0};
    rs_codec codec = {0};
    if (rq.model_arg)
        rq.f.codec = &codec;
    if ((rq.model_arg && rs_cli_load_model(rq.model_arg, &model, &codec, &err)) ||
        rs_line_reader_open(&reader, rq.path, &err)) {
        rs_codec_free(&codec);
        rs_ready_free(&model);
        return rs_cli_fail(PROG, "%s", err.msg);
    }
    rq.f.model = model.model; /* NULL without -m */
    status = rs_text_filter_run(&rq.f, &reader, stdout, &err) ? rs_cli_fail(PROG, "%s", err.msg)
                                                              : RS_EXIT_OK;
    rs_line_reader_close(&reader);
    rs_codec_free(&codec);
    rs_ready_free(&model);
    return status;
}
