/* rnnsearch tokenize: the text pipeline of training and translation as a
 * filter, one output line per input line. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "cmd/commands.h"
#include "text/corpus.h"
#include "text/text.h"

#define PROG "rnnsearch tokenize"

/* Splits a line of tokens at spaces and tabs; no token contains either. */
static int split_tokens(char *line, rs_tokens *out, rs_error *err)
{
    rs_tokens_clear(out);
    for (char *tok = strtok(line, " \t"); tok; tok = strtok(NULL, " \t"))
        if (rs_tokens_push(out, tok, strlen(tok), err))
            return -1;
    return 0;
}

static void write_tokens(const rs_tokens *tokens)
{
    for (int i = 0; i < tokens->count; i++) {
        if (i)
            putchar(' ');
        fputs(tokens->tokens[i], stdout);
    }
    putchar('\n');
}

/* What the command line asks for. */
typedef struct {
    int lowercase, detokenize, mode, side, ids;
    const char *model_arg, *path;
} tokenize_request;

/* --side's and --tokenizer's values, in the order of RS_SIDE_* and RS_TOK_*. */
static const char *const sides[] = {"source", "target", NULL};
static const char *const tokenizers[] = {"word", "char", "space", NULL};

#define RQ tokenize_request
static const rs_cli_option option_table[] = {
    {"lowercase", .kind = RS_CLI_FLAG, RS_AT(RQ, lowercase),
     .help = "lower-case the text (default: off)"},
    {"tokenizer", .kind = RS_CLI_CHOICE, RS_AT(RQ, mode), .value = "NAME", .names = tokenizers,
     .help = "word, char or space (default: word; space splits\n"
             "pre-tokenized text at white space and does not\n"
             "normalise it, see docs/tokenization.md)"},
    {"detokenize", .kind = RS_CLI_FLAG, RS_AT(RQ, detokenize),
     .help = "read tokens, write text (default: off)"},
    {"model", 'm', RS_CLI_STRING, RS_AT(RQ, model_arg), .value = "MODEL",
     .help = "use a model's own settings instead (lower-casing,\n"
             "tokenizer, SentencePiece models)"},
    {"side", .kind = RS_CLI_CHOICE, RS_AT(RQ, side), .value = "SIDE", .names = sides,
     .help = "with -m: source or target (default: source)"},
    {"ids", .kind = RS_CLI_FLAG, RS_AT(RQ, ids),
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
    if (rq->detokenize && rq->lowercase)
        return rs_cli_usage_error(PROG, "--lowercase has no effect with --detokenize");
    if (rq->model_arg && (rq->lowercase || rq->mode != RS_TOK_WORD))
        return rs_cli_usage_error(
            PROG, "-m takes the model's own text settings; drop --lowercase/--tokenizer");
    if ((rq->ids || rq->side != RS_SIDE_SRC) && !rq->model_arg)
        return rs_cli_usage_error(PROG, "--ids and --side need a model (-m)");
    if (rq->ids && rq->detokenize)
        return rs_cli_usage_error(PROG, "--ids and --detokenize do not go together");
    rq->path = optind < argc ? argv[optind] : "-";
    return -1;
}

/* A model's settings when -m was given, else the options'. */
typedef struct {
    const tokenize_request *rq;
    rs_model model;
    rs_codec codec;
    rs_tokens tokens;
} tokenizer;

/* One line of tokens back to text. */
static int detokenize_line(tokenizer *t, char *line, rs_error *err)
{
    const tokenize_request *rq = t->rq;
    char *text;
    if (split_tokens(line, &t->tokens, err) ||
        (rq->model_arg ? rs_codec_text(&t->codec, rq->side, (const char *const *)t->tokens.tokens,
                                       t->tokens.count, &text, err)
                       : rs_detokenize(&t->tokens, rq->mode, &text, err)))
        return -1;
    puts(text);
    free(text);
    return 0;
}

/* One line of text as tokens, or as ids in the model's vocabulary. */
static int tokenize_line(tokenizer *t, const rs_line_reader *reader, const char *line, size_t len,
                         rs_error *err)
{
    const tokenize_request *rq = t->rq;
    rs_error why;
    if (rq->model_arg ? rs_codec_tokens(&t->codec, rq->side, line, &t->tokens, &why)
                      : rs_text_to_tokens(line, len, rq->lowercase, rq->mode, &t->tokens, &why))
        return rs_fail(err, "%s:%ld: %s", reader->name, reader->line, why.msg);
    if (!rq->ids) {
        write_tokens(&t->tokens);
        return 0;
    }
    const rs_vocab *vocab = rq->side == RS_SIDE_SRC ? &t->model.src_vocab : &t->model.tgt_vocab;
    for (int i = 0; i < t->tokens.count; i++)
        printf("%d ", rs_vocab_id(vocab, t->tokens.tokens[i]));
    printf("%d\n", RS_EOS);
    return 0;
}

/* Every line of the reader, one output line each. */
static int filter_lines(tokenizer *t, rs_line_reader *reader, rs_error *err)
{
    char *line;
    size_t len;
    int rc;
    while ((rc = rs_line_reader_next(reader, &line, &len, err)) == 1) {
        if (t->rq->detokenize ? detokenize_line(t, line, err)
                              : tokenize_line(t, reader, line, len, err))
            return -1;
        if (ferror(stdout))
            return rs_fail(err, "error writing the output");
    }
    if (rc < 0)
        return -1;
    if (fflush(stdout))
        return rs_fail(err, "error writing the output");
    return 0;
}

int cmd_tokenize(int argc, char **argv)
{
    tokenize_request rq = {.mode = RS_TOK_WORD, .side = RS_SIDE_SRC};
    int status = parse_request(argc, argv, &rq);
    if (status >= 0)
        return status;
    rs_error err;
    rs_line_reader reader;
    tokenizer t = {.rq = &rq};
    if ((rq.model_arg && rs_cli_load_model(rq.model_arg, &t.model, &t.codec, &err)) ||
        rs_line_reader_open(&reader, rq.path, &err)) {
        rs_codec_free(&t.codec);
        rs_model_free(&t.model);
        return rs_cli_fail(PROG, "%s", err.msg);
    }
    status = filter_lines(&t, &reader, &err) ? rs_cli_fail(PROG, "%s", err.msg) : RS_EXIT_OK;
    rs_tokens_free(&t.tokens);
    rs_line_reader_close(&reader);
    rs_codec_free(&t.codec);
    rs_model_free(&t.model);
    return status;
}
