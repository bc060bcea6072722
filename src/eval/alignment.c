/* Alignment matrices: making and freeing them, word merging and hard links
 * (the output formats are alignment_formats.c). Shapes: rows = target
 * tokens + </s>, cols = source tokens + </s>; w[i·cols + j] row-major. */
#include <stdlib.h>
#include <string.h>

#include "eval/alignment.h"

#define WORD_START "\xE2\x96\x81" /* U+2581, SentencePiece's word-start mark */

void rs_alignment_coverage(const rs_alignment *a, double *cov)
{
    for (int j = 0; j < a->cols; j++)
        cov[j] = 0.0;
    for (int i = 0; i < a->rows; i++)
        for (int j = 0; j < a->cols; j++)
            cov[j] += a->w[(size_t)i * a->cols + j];
}

int rs_coverage_mark(double coverage)
{
    return coverage < RS_COVERAGE_LOW ? -1 : coverage > RS_COVERAGE_HIGH ? 1 : 0;
}

int rs_alignment_coverage_mark(const rs_alignment *a, const double *cov, int j)
{
    return j == a->cols - 1 ? 0 : rs_coverage_mark(cov[j]);
}

void rs_alignment_free_labels(char **labels, int count)
{
    for (int k = 0; labels && k < count; k++)
        free(labels[k]);
    free(labels);
}

void rs_alignment_free(rs_alignment *a)
{
    rs_alignment_free_labels(a->tgt, a->rows);
    rs_alignment_free_labels(a->src, a->cols);
    free(a->w);
    memset(a, 0, sizeof *a);
}

/* Empty alignment of the given size: labels NULL, weights 0. */
static int alignment_alloc(rs_alignment *a, int rows, int cols, rs_error *err)
{
    memset(a, 0, sizeof *a);
    a->rows = rows;
    a->cols = cols;
    a->tgt = rs_calloc((size_t)rows, sizeof(char *), err);
    a->src = rs_calloc((size_t)cols, sizeof(char *), err);
    a->w = rs_calloc((size_t)rows * cols, sizeof(float), err);
    if (!a->tgt || !a->src || !a->w) {
        rs_alignment_free(a);
        return -1;
    }
    return 0;
}

int rs_alignment_make(rs_alignment *a, const char *const *tgt, int tgt_count,
                      const char *const *src, int src_count, const float *w, rs_error *err)
{
    if (tgt_count < 0 || src_count < 0)
        return rs_fail(err, "alignment with a negative length");
    if (alignment_alloc(a, tgt_count + 1, src_count + 1, err))
        return -1;
    for (int i = 0; i < a->rows; i++)
        if (!(a->tgt[i] = rs_strdup(i < tgt_count ? tgt[i] : "</s>", err)))
            goto fail;
    for (int j = 0; j < a->cols; j++)
        if (!(a->src[j] = rs_strdup(j < src_count ? src[j] : "</s>", err)))
            goto fail;
    memcpy(a->w, w, sizeof(float) * (size_t)a->rows * a->cols);
    return 0;
fail:
    rs_alignment_free(a);
    return -1;
}

/* ---- words from SentencePiece pieces or BPE units ---- */

/* The length of label less a BPE continuation mark at its end (bpe: the
 * mark, NULL for SentencePiece pieces, which have none). */
static size_t without_mark(const char *label, const char *bpe)
{
    size_t n = strlen(label), m = bpe ? strlen(bpe) : 0;
    return m && n > m && !strcmp(label + n - m, bpe) ? n - m : n;
}

/* group[k] for each of n labels (the last is </s>, a group of its own): a
 * SentencePiece piece starting with "▁" starts a word, or with bpe, a unit
 * whose predecessor does not end with the mark; returns the number of groups. */
static int word_groups(char *const *labels, int n, const char *bpe, int *group)
{
    int g = -1;
    for (int k = 0; k < n - 1; k++) {
        int starts = k == 0 || (bpe ? without_mark(labels[k - 1], bpe) == strlen(labels[k - 1])
                                    : !strncmp(labels[k], WORD_START, strlen(WORD_START)));
        g += starts;
        group[k] = g;
    }
    group[n - 1] = ++g;
    return g + 1;
}

/* The words' labels: pieces concatenated, less the leading word-start mark
 * (a word of nothing else, a lone "▁", keeps it), or BPE units less their
 * marks. */
static int word_labels(char *const *labels, int n, const int *group, const char *bpe, char **words,
                       rs_error *err)
{
    for (int k = 0; k < n; k++) {
        const char *piece = labels[k];
        char *word = words[group[k]];
        if (!bpe && !word && k < n - 1 && !strncmp(piece, WORD_START, strlen(WORD_START)))
            piece += strlen(WORD_START);
        size_t have = word ? strlen(word) : 0,
               add = k < n - 1 ? without_mark(piece, bpe) : strlen(piece);
        char *grown = realloc(word, have + add + 1);
        if (!grown)
            return rs_fail(err, "out of memory");
        memcpy(grown + have, piece, add);
        grown[have + add] = '\0';
        words[group[k]] = grown;
    }
    for (int g = 0; g <= group[n - 1]; g++)
        if (!words[g][0]) {
            char *mark = realloc(words[g], strlen(WORD_START) + 1);
            if (!mark)
                return rs_fail(err, "out of memory");
            memcpy(mark, WORD_START, strlen(WORD_START) + 1);
            words[g] = mark;
        }
    return 0;
}

static int merge_words(const rs_alignment *in, const char *bpe, rs_alignment *out, rs_error *err)
{
    memset(out, 0, sizeof *out);
    int *rg = rs_calloc((size_t)in->rows, sizeof(int), err);
    int *cg = rs_calloc((size_t)in->cols, sizeof(int), err);
    int *pieces = NULL;
    if (!rg || !cg)
        goto fail;
    const int rows = word_groups(in->tgt, in->rows, bpe, rg);
    const int cols = word_groups(in->src, in->cols, bpe, cg);
    if (alignment_alloc(out, rows, cols, err) ||
        !(pieces = rs_calloc((size_t)rows, sizeof(int), err)) ||
        word_labels(in->tgt, in->rows, rg, bpe, out->tgt, err) ||
        word_labels(in->src, in->cols, cg, bpe, out->src, err))
        goto fail;
    /* A word's row: mean of its pieces' rows; a word's column: sum of its pieces' columns. */
    for (int i = 0; i < in->rows; i++) {
        pieces[rg[i]]++;
        for (int j = 0; j < in->cols; j++)
            out->w[(size_t)rg[i] * cols + cg[j]] += in->w[(size_t)i * in->cols + j];
    }
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            out->w[(size_t)r * cols + c] /= (float)pieces[r];
    free(rg);
    free(cg);
    free(pieces);
    return 0;
fail:
    free(rg);
    free(cg);
    free(pieces);
    rs_alignment_free(out);
    return -1;
}

int rs_alignment_to_words(const rs_alignment *in, rs_alignment *out, rs_error *err)
{
    return merge_words(in, NULL, out, err);
}

int rs_alignment_join_bpe(const rs_alignment *in, const char *marker, rs_alignment *out,
                          rs_error *err)
{
    /* Tokens carry the mark without the space that separates them in text. */
    char mark[64];
    size_t m = strlen(marker);
    while (m > 0 && marker[m - 1] == ' ')
        m--;
    memset(out, 0, sizeof *out);
    if (m == 0 || m >= sizeof mark)
        return rs_fail(err, "the BPE marker '%s' is empty or too long", marker);
    memcpy(mark, marker, m);
    mark[m] = '\0';
    return merge_words(in, mark, out, err);
}

/* ---- hard alignments ---- */

int rs_alignment_hard(const float *w, int rows, int cols, float threshold, rs_link **links,
                      int *count, rs_error *err)
{
    *links = NULL;
    *count = 0;
    const int T = rows - 1, S = cols - 1; /* without </s> */
    if (T <= 0 || S <= 0)
        return 0;
    size_t cap = threshold > 0.0f ? (size_t)T * S : (size_t)T;
    rs_link *l = rs_calloc(cap, sizeof *l, err);
    if (!l)
        return -1;
    int n = 0;
    for (int i = 0; i < T; i++) {
        const float *row = w + (size_t)i * cols;
        if (threshold > 0.0f) {
            for (int j = 0; j < S; j++)
                if (row[j] >= threshold)
                    l[n++] = (rs_link){j, i};
        } else {
            int best = 0;
            for (int j = 1; j < S; j++)
                if (row[j] > row[best])
                    best = j;
            l[n++] = (rs_link){best, i};
        }
    }
    if (n == 0) {
        free(l);
        return 0;
    }
    *links = l;
    *count = n;
    return 0;
}
