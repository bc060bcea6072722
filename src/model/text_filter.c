#include <stdlib.h>
#include <string.h>

#include "model/text_filter.h"

/* Splits a line of tokens at spaces and tabs; no token contains either. */
static int split_tokens(char *line, rs_tokens *out, rs_error *err)
{
    rs_tokens_clear(out);
    for (char *tok = strtok(line, " \t"); tok; tok = strtok(NULL, " \t"))
        if (rs_tokens_push(out, tok, strlen(tok), err))
            return -1;
    return 0;
}

static void write_tokens(const rs_tokens *tokens, FILE *out)
{
    for (int i = 0; i < tokens->count; i++) {
        if (i)
            putc(' ', out);
        fputs(tokens->tokens[i], out);
    }
    putc('\n', out);
}

/* One line of tokens back to text. */
static int detokenize_line(const rs_text_filter *f, rs_tokens *tokens, char *line, FILE *out,
                           rs_error *err)
{
    char *text;
    if (split_tokens(line, tokens, err) ||
        (f->model ? rs_codec_text(f->codec, f->side, (const char *const *)tokens->tokens,
                                  tokens->count, &text, err)
                  : rs_detokenize(tokens, f->mode, &text, err)))
        return -1;
    fputs(text, out);
    putc('\n', out);
    free(text);
    return 0;
}

/* One line of text as tokens, or as ids in the model's vocabulary. */
static int tokenize_line(const rs_text_filter *f, rs_tokens *tokens, const rs_line_reader *reader,
                         const char *line, size_t len, FILE *out, rs_error *err)
{
    rs_error why;
    if (f->model ? rs_codec_tokens(f->codec, f->side, line, tokens, &why)
                 : rs_text_to_tokens(line, len, f->lowercase, f->mode, tokens, &why))
        return rs_fail(err, "%s:%ld: %s", reader->name, reader->line, why.msg);
    if (!f->ids) {
        write_tokens(tokens, out);
        return 0;
    }
    const rs_vocab *vocab = f->side == RS_SIDE_SRC ? &f->model->src_vocab : &f->model->tgt_vocab;
    for (int i = 0; i < tokens->count; i++)
        fprintf(out, "%d ", rs_vocab_id(vocab, tokens->tokens[i]));
    fprintf(out, "%d\n", RS_EOS);
    return 0;
}

int rs_text_filter_run(const rs_text_filter *f, rs_line_reader *reader, FILE *out, rs_error *err)
{
    rs_tokens tokens = {0};
    char *line;
    size_t len;
    int rc;
    while ((rc = rs_line_reader_next(reader, &line, &len, err)) == 1) {
        if (f->detokenize ? detokenize_line(f, &tokens, line, out, err)
                          : tokenize_line(f, &tokens, reader, line, len, out, err)) {
            rc = -1;
            break;
        }
        if (ferror(out)) {
            rc = rs_fail(err, "error writing the output");
            break;
        }
    }
    rs_tokens_free(&tokens);
    if (rc < 0)
        return -1;
    if (fflush(out))
        return rs_fail(err, "error writing the output");
    return 0;
}
