/* Vocabulary files: reading one (Joey NMT's one token a line, OpenNMT-py's
 * and fairseq's counts after it; vocab.h says what is refused) through the
 * text layer's line reader, and writing one. Apart from vocab.c, the table of
 * tokens and ids, so that a model's vocabulary needs no file reading (nor
 * gzip, nor UTF-8 checks) to exist. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/vocab.h"
#include "text/text.h"
#include "text/corpus.h"

/* A vocabulary file being read: the line each token came from, for the
 * message of a repeat (lines[id], grown with the vocabulary). */
typedef struct {
    rs_vocab *v;
    const char *path;
    long *lines;
    int cap;
} vocab_reader;

/* Records that token id came from line line_no. */
static int note_line(vocab_reader *r, int id, long line_no, rs_error *err)
{
    if (id >= r->cap) {
        const int cap = r->v->capacity > id ? r->v->capacity : id + 1;
        long *grown = realloc(r->lines, (size_t)cap * sizeof *grown);
        if (!grown)
            return rs_fail(err, "out of memory reading %s", r->path);
        memset(grown + r->cap, 0, (size_t)(cap - r->cap) * sizeof *grown);
        r->lines = grown;
        r->cap = cap;
    }
    r->lines[id] = line_no;
    return 0;
}

/* 1 when the line is a Marian YAML vocabulary's "TOKEN: ID" entry for a
 * reserved token ("</s>: 0", "<unk>: 1"), which every such file has: read as
 * OpenNMT's "token count" it would make "</s>:" a token. */
static int marian_entry(const char *token, const char *count)
{
    const size_t len = strlen(token);
    if (len < 2 || token[len - 1] != ':' || !count)
        return 0;
    for (int id = 0; id < RS_RESERVED; id++)
        if (strlen(rs_vocab_reserved(id)) == len - 1 &&
            !strncmp(token, rs_vocab_reserved(id), len - 1))
            return 1;
    return 0;
}

/* One line of a vocabulary file (len bytes, NUL-terminated, its line end
 * gone; the line reader has refused NUL bytes and invalid UTF-8). */
static int read_vocab_line(vocab_reader *r, char *line, size_t len, long line_no, rs_error *err)
{
    const char *path = r->path;
    /* U+FEFF as sentences lose it (text.h): "may" with a BOM from a
     * concatenated file is "may", and a line of it alone is empty. */
    len = rs_text_drop_feff(line, len);
    if (len == 0)
        return rs_fail(err, "%s:%ld: an empty line (a vocabulary has one token a line)", path,
                       line_no);
    const size_t token_len = strcspn(line, "\t ");
    if (token_len == 0)
        return rs_fail(err, "%s:%ld: the line starts with white space, not a token", path, line_no);
    const char *count = NULL;
    if (token_len < len) {
        /* "token<TAB>count" or "token count": the count is a whole number. */
        count = line + token_len + 1;
        if (!*count || strspn(count, "0123456789") != strlen(count))
            return rs_fail(err,
                           "%s:%ld: '%s' is not a token, nor a token then a tab or space and "
                           "a count",
                           path, line_no, line);
        line[token_len] = 0;
    }
    if (marian_entry(line, count))
        return rs_fail(err,
                       "%s:%ld: '%s %s' is a Marian YAML vocabulary's entry (TOKEN: ID); a "
                       "vocabulary file has one token a line, optionally a tab or space and a "
                       "count",
                       path, line_no, line, count);
    const size_t blank = rs_vocab_white_space_at(line);
    if (line[blank])
        return rs_fail(err,
                       "%s:%ld: the token holds white space (byte 0x%02x at column %zu), which "
                       "no tokenizer makes",
                       path, line_no, (unsigned char)line[blank], blank + 1);
    const int before = r->v->size;
    const int id = rs_vocab_add(r->v, line, err); /* a reserved token keeps its own id */
    if (id < 0)
        return -1;
    if (id < before && (id >= RS_RESERVED || r->lines[id]))
        return rs_fail(err, "%s:%ld: token '%s' is given twice (first on line %ld)", path, line_no,
                       line, r->lines[id]);
    r->v->counts[id] = 0;
    return note_line(r, id, line_no, err);
}

int rs_vocab_read_file(rs_vocab *vocab, const char *path, rs_error *err)
{
    /* The reader of every text input: line ends \n, \r\n and a lone \r, a
     * byte order mark dropped, NUL bytes, invalid UTF-8 and overlong lines
     * refused by file and line, gzip decompressed. */
    rs_line_reader lr;
    if (rs_line_reader_open(&lr, path, err))
        return -1;
    vocab_reader r = {vocab, lr.name, NULL, 0};
    int status = rs_vocab_init(vocab, err);
    if (status == 0)
        status = note_line(&r, RS_RESERVED - 1, 0, err); /* reserved ids not yet seen: line 0 */
    while (status == 0) {
        char *line;
        size_t len;
        const int got = rs_line_reader_next(&lr, &line, &len, err);
        if (got <= 0) {
            status = got;
            break;
        }
        status = read_vocab_line(&r, line, len, lr.line, err);
    }
    if (status == 0 && vocab->size == RS_RESERVED)
        status =
            rs_fail(err, "%s: no token besides the reserved ones (an empty vocabulary)", lr.name);
    free(r.lines);
    rs_line_reader_close(&lr);
    if (status)
        rs_vocab_free(vocab);
    return status;
}

int rs_vocab_write_counts(const rs_vocab *counted, FILE *out, int *errnum, rs_error *err)
{
    rs_vocab sorted;
    if (rs_vocab_select(&sorted, counted, 1, 0, err))
        return -1;
    *errnum = 0;
    for (int id = RS_RESERVED; id < sorted.size; id++)
        if (fprintf(out, "%s\t%ld\n", sorted.tokens[id], sorted.counts[id]) < 0 && !*errnum)
            *errnum = errno ? errno : -1;
    rs_vocab_free(&sorted);
    return 0;
}

void rs_vocab_write(const rs_vocab *vocab, FILE *out, int *errnum)
{
    *errnum = 0;
    for (int id = 0; id < vocab->size; id++)
        if (fprintf(out, "%s\n", vocab->tokens[id]) < 0 && !*errnum)
            *errnum = errno ? errno : -1;
}
