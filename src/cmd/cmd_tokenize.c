/* rnnsearch tokenize: the text pipeline of training and translation as a
 * filter, one output line per input line. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "text/corpus.h"
#include "text/text.h"

#define PROG "rnnsearch tokenize"

static void usage(FILE *out)
{
    fputs("usage: rnnsearch tokenize [options] [FILE]\n"
          "Normalises (NFC, white space collapsed) and tokenizes each line of FILE\n"
          "(default: stdin), writing the tokens separated by spaces.\n"
          "\n"
          "  --lowercase         lower-case the text (default: off)\n"
          "  --tokenizer NAME    word, char or space (default: word; space splits\n"
          "                      pre-tokenized text at white space and does not\n"
          "                      normalise it, see docs/tokenization.md)\n"
          "  --detokenize        read tokens, write text (default: off)\n"
          "  -m, --model MODEL   use a model's own settings instead (lower-casing,\n"
          "                      tokenizer, SentencePiece models)\n"
          "  --side SIDE         with -m: source or target (default: source)\n"
          "  --ids               with -m: print token ids in the model's vocabulary,\n"
          "                      </s> appended (as the model sees them)\n"
          "  -h, --help          show this help\n",
          out);
}

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

int cmd_tokenize(int argc, char **argv)
{
    enum { OPT_LOWERCASE = 256, OPT_TOKENIZER, OPT_DETOKENIZE, OPT_SIDE, OPT_IDS };
    static const struct option options[] = {
        {"model", required_argument, NULL, 'm'},
        {"side", required_argument, NULL, OPT_SIDE},
        {"ids", no_argument, NULL, OPT_IDS},
        {"lowercase", no_argument, NULL, OPT_LOWERCASE},
        {"tokenizer", required_argument, NULL, OPT_TOKENIZER},
        {"detokenize", no_argument, NULL, OPT_DETOKENIZE},
        {NULL, 0, NULL, 0},
    };
    int lowercase = 0, detokenize = 0, mode = RS_TOK_WORD, side = RS_SIDE_SRC, ids = 0;
    const char *model_arg = NULL;
    static const char *const sides[] = {"source", "target"}, *const tokenizers[] = {"word", "char",
                                                                                    "space"};
    rs_cli_args args;
    rs_cli_begin(&args, PROG, argc, argv, "m:", options);
    int c;
    while ((c = rs_cli_next(&args)) != -1) {
        switch (c) {
        case 'h': usage(stdout); return RS_EXIT_OK;
        case 'm':
            if (rs_cli_once(PROG, "-m/--model", &model_arg, optarg))
                return RS_EXIT_USAGE;
            break;
        case OPT_SIDE:
            if (rs_cli_choice(PROG, "--side", optarg, sides, 2, &side))
                return RS_EXIT_USAGE;
            side = side ? RS_SIDE_TGT : RS_SIDE_SRC;
            break;
        case OPT_IDS: ids = 1; break;
        case OPT_LOWERCASE: lowercase = 1; break;
        case OPT_TOKENIZER:
            if (rs_cli_choice(PROG, "--tokenizer", optarg, tokenizers, 3, &mode))
                return RS_EXIT_USAGE;
            mode = rs_tokenizer_mode_parse(tokenizers[mode]);
            break;
        case OPT_DETOKENIZE: detokenize = 1; break;
        default: return RS_EXIT_USAGE;
        }
    }
    if (argc - optind > 1)
        return rs_cli_usage_error(PROG, "at most one input file");
    if (detokenize && lowercase)
        return rs_cli_usage_error(PROG, "--lowercase has no effect with --detokenize");
    if (model_arg && (lowercase || mode != RS_TOK_WORD))
        return rs_cli_usage_error(
            PROG, "-m takes the model's own text settings; drop --lowercase/--tokenizer");
    if ((ids || side != RS_SIDE_SRC) && !model_arg)
        return rs_cli_usage_error(PROG, "--ids and --side need a model (-m)");
    if (ids && detokenize)
        return rs_cli_usage_error(PROG, "--ids and --detokenize do not go together");
    const char *path = optind < argc ? argv[optind] : "-";

    rs_error err;
    rs_line_reader reader;
    rs_model model = {0};
    rs_codec codec = {0};
    if ((model_arg && rs_cli_load_model(model_arg, &model, &codec, &err)) ||
        rs_line_reader_open(&reader, path, &err)) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        rs_codec_free(&codec);
        rs_model_free(&model);
        return 1;
    }
    rs_tokens tokens = {0};
    char *line;
    size_t len;
    int rc = 0, status = 0;
    while (!status && (rc = rs_line_reader_next(&reader, &line, &len, &err)) == 1) {
        if (detokenize) {
            char *text;
            if (split_tokens(line, &tokens, &err) ||
                (model_arg ? rs_codec_text(&codec, side, (const char *const *)tokens.tokens,
                                           tokens.count, &text, &err)
                           : rs_detokenize(&tokens, mode, &text, &err))) {
                status = 1;
                break;
            }
            puts(text);
            free(text);
        } else {
            rs_error why;
            if (model_arg ? rs_codec_tokens(&codec, side, line, &tokens, &why)
                          : rs_text_to_tokens(line, len, lowercase, mode, &tokens, &why)) {
                rs_fail(&err, "%s:%ld: %s", reader.name, reader.line, why.msg);
                status = 1;
                break;
            }
            if (ids) {
                const rs_vocab *vocab = side == RS_SIDE_SRC ? &model.src_vocab : &model.tgt_vocab;
                for (int i = 0; i < tokens.count; i++)
                    printf("%d ", rs_vocab_id(vocab, tokens.tokens[i]));
                printf("%d\n", RS_EOS);
            } else {
                write_tokens(&tokens);
            }
        }
        if (ferror(stdout)) {
            rs_fail(&err, "error writing the output");
            status = 1;
        }
    }
    if (!status && rc < 0)
        status = 1;
    if (!status && fflush(stdout)) {
        rs_fail(&err, "error writing the output");
        status = 1;
    }
    if (status)
        fprintf(stderr, PROG ": %s\n", err.msg);
    rs_tokens_free(&tokens);
    rs_line_reader_close(&reader);
    rs_codec_free(&codec);
    rs_model_free(&model);
    return status;
}
